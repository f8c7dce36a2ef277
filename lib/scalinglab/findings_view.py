"""How a finding is shown: its point and interval as text, and a table of findings as
HTML (the notebooks' findings tables and the report's header).

Input is a finding as :class:`scalinglab.finding.Finding` or its JSON dict (a
``results.json`` entry). A parameter on a bound is shown one-sided ("at lower bound
0", "<= 0.0164 (one-sided)"); a NaN point or interval is a dash with a footnote saying
why. ``None`` (``null`` in a strict-JSON ``results.json``) is shown as NaN is.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
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


#: The note :func:`scalinglab.record.record` writes when it refuses a zero-width interval.
_ZERO_WIDTH = re.compile(
    r"interval (\[[^\]]*\]) refused: zero width(?:, so none is shown: ([^;]+))?"
)


def no_interval_reason(d: Mapping[str, Any]) -> str | None:
    """Why a finding that was made with an interval method has none, in a few words
    (``"[0, 0] refused: zero width, does not cover"``), or None (it has one, or it is a
    point estimate by design). When the caller stated why there is none
    (``record(..., no_interval=...)``), that reason is shown instead."""
    if d.get("ci"):
        return None
    m = _ZERO_WIDTH.search(str(d.get("note") or ""))
    if m and m.group(2):
        return m.group(2).strip()
    if m:
        return f"{m.group(1)} refused: zero width, does not cover"
    return None


def interval_text(d: dict) -> str:
    """The interval as shown: one-sided (``"<= 0.0164"``) when not identified, ``"no
    interval: <reason>"`` when one was refused (:func:`no_interval_reason`), a dash when
    none."""
    ci = d.get("ci")
    why = no_interval_reason(d)
    if why:
        return f"no interval: {why}"
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


def coverage_html(rows: Sequence[Any]) -> str:
    """The report's "Interval coverage" table: each interval method the findings use, its
    sample size, and its simulated coverage there with the Monte Carlo standard error, or
    "coverage not measured" with the reason.

    Parameters
    ----------
    rows
        :class:`scalinglab.stats.coverage_report.CoverageRow` items.
    """
    esc = html.escape
    out = []
    for r in rows:
        level = "—" if r.level is None else f"{100 * r.level:g}%"
        n = "not recorded" if r.n is None else f"{r.n:,}"
        c = r.coverage
        if c is None:
            cov = f'<span class="sl-unmeasured">{esc(r.reason or "coverage not measured")}</span>'
            ref = getattr(r, "reference", ())
            if ref:
                at = ", ".join(f"{x.coverage:.3f} at n = {x.n}" for x in ref)
                cov += f"<br><small>{esc(r.registered or '')} covers {at} (MC s.e. at most {max(x.se for x in ref):.3f})</small>"
        else:
            at = f" ({esc(r.at)})" if getattr(r, "at", None) else ""
            short = " sl-undercover" if c.coverage + 2 * c.se < c.level else ""
            if c.key == "on-data":  # a study's own simulation (coverage_report.ON_DATA)
                cov = (
                    f'<span class="sl-cov{short}">{c.coverage:.3f} ± {c.se:.3f}</span>{at}'
                    f"<br><small>{esc(r.registered or '')}: {esc(r.simulated_as or '')}</small>"
                )
            elif c.sims:
                cov = (
                    f'<span class="sl-cov{short}">{c.coverage:.3f} ± {c.se:.3f}</span>{at}'
                    f"<br><small>{esc(r.registered or '')}, simulated for "
                    f"{esc(r.simulated_as or '')}; lowest over generators: "
                    f"{esc(c.generator)}, {c.sims:,} data sets</small>"
                )
            else:  # a closed-form coverage: no simulation, no Monte Carlo error
                cov = (
                    f'<span class="sl-cov{short}">{c.coverage:.3f} (exact)</span>{at}'
                    f"<br><small>{esc(r.registered or '')}: {esc(c.generator)}</small>"
                )
        out.append(
            f"<tr><td>{esc(r.method)}</td><td>{level}</td><td>{n}</td>"
            f"<td>{r.findings}</td><td>{cov}</td></tr>"
        )
    return (
        '<div class="sl-scroll"><table class="sl-findings sl-coverage"><thead><tr>'
        "<th>interval method</th><th>level</th><th>n</th><th>findings</th>"
        "<th>simulated coverage ± MC s.e.</th></tr></thead><tbody>"
        + "".join(out)
        + "</tbody></table></div>"
    )
