"""How a finding is shown: its point and interval as text, and a table of findings as
HTML (the notebooks' findings tables and the report's header).

Input is a finding as :class:`scalinglab.record.Finding` or its JSON dict (a
``results.json`` entry). A parameter on a bound is shown one-sided ("at lower bound
0", "<= 0.0164 (one-sided)"); a NaN point or interval is a dash with a footnote saying
why. ``None`` (``null`` in a strict-JSON ``results.json``) is shown as NaN is.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from scalinglab.textfmt import fmt_ci, fmt_num


def _nan(x: object) -> bool:
    """NaN, or None (a non-finite number as strict JSON writes it)."""
    if x is None:
        return True
    try:
        return math.isnan(float(x))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def point_text(d: dict) -> str:
    """The point as shown: ``"at lower bound 0"`` for a parameter pinned there, a dash for NaN."""
    if not d.get("identified", True) and d.get("bound") is not None and d.get("side"):
        return f"at {d['side']} bound {fmt_num(d['bound'])}"
    return "—" if _nan(d.get("point")) else fmt_num(d.get("point"))


def interval_text(d: dict) -> str:
    """The interval as shown: one-sided (``"<= 0.0164"``) when not identified, a dash when none."""
    ci = d.get("ci")
    if not ci or any(c is None or _nan(c) for c in ci):
        return "—"
    if not d.get("identified", True):
        if d.get("side") == "lower":
            return f"≤ {fmt_num(ci[1])} (one-sided)"
        if d.get("side") == "upper":
            return f"≥ {fmt_num(ci[0])} (one-sided)"
        return f"{fmt_ci(ci)} (not identified)"
    return fmt_ci(ci)


def findings_html(items: Sequence[Any]) -> str:
    """Render findings as an HTML table (used by notebooks and by the report header).

    A NaN point or interval is shown as a dash with a footnote saying why; a
    finding that is not identified is shown one-sided and flagged.
    """
    esc = html.escape
    rows, notes = [], []
    for f in items:
        d = f.to_json() if hasattr(f, "to_json") else f
        how = []
        if d.get("level") is not None:
            how.append(f"{100 * d['level']:g}%")
        if d.get("method"):
            how.append(d["method"])
        if d.get("resamples"):
            how.append(f"{d['resamples']:,} resamples")
        point, mark = point_text(d), ""
        ci = d.get("ci")
        if _nan(d.get("point")) or (ci and any(c is None or _nan(c) for c in ci)):
            notes.append(
                d.get("note")
                or "the statistic is undefined on these data "
                "(e.g. too few points or resamples, or a failed fit)"
            )
            mark = f"<sup>{len(notes)}</sup>"
        meaning = esc(d.get("description") or "")
        if not d.get("identified", True):
            meaning += (
                f' <span class="sl-unident">not identified: {esc(d.get("note") or "")}</span>'
            )
        elif d.get("note") and not mark:
            meaning += f" <small>({esc(d['note'])})</small>"
        unit = (" " + esc(d["unit"])) if d.get("unit") and point != "—" else ""
        cls = "" if d.get("identified", True) else ' class="sl-unident-row"'
        rows.append(
            f"<tr{cls}><td>{esc(d['name'])}</td><td>{esc(point)}{unit}{mark}</td>"
            f"<td>{esc(interval_text(d))}</td><td>{esc(', '.join(how))}</td>"
            f"<td>{meaning}</td></tr>"
        )
    foot = "".join(
        f'<p class="sl-foot"><sup>{i}</sup> — : {esc(n)}</p>' for i, n in enumerate(notes, 1)
    )
    return (
        '<div class="sl-scroll"><table class="sl-findings"><thead><tr><th>finding</th>'
        "<th>point</th><th>interval</th><th>how</th><th>meaning</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + foot
    )
