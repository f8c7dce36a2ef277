"""Which findings moved between two runs, and by how much relative to their intervals.

For every finding name in both runs: point A, point B, ``delta = B - A``, the
CI half-width (mean of both runs' half-widths ``(hi - lo) / 2``; one run's when
only one has an interval), ``delta / half_width``, and ``moved`` when
``|delta| > half_width``. A finding without any interval counts as moved when
its point changed at all. Names only in A are ``removed``, only in B ``added``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from scalinglab.runner import store
from scalinglab.textfmt import fmt_ci, fmt_num, format_table


def _half_width(ci: Any) -> float | None:
    if not ci:
        return None
    lo, hi = float(ci[0]), float(ci[1])
    if math.isnan(lo) or math.isnan(hi):
        return None
    return (hi - lo) / 2


def _nan_to_none(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def diff_findings(a: list[dict], b: list[dict]) -> dict[str, Any]:
    """Compare two ``findings`` lists (as in ``results.json``).

    Returns
    -------
    dict
        ``{"findings": [row, ...], "added": [name, ...], "removed": [name, ...],
        "moved": [name, ...]}`` where each row has ``name, point_a, point_b, ci_a,
        ci_b, delta, half_width, relative, moved`` (NaN written as None).
    """
    by_a = {f["name"]: f for f in a}
    by_b = {f["name"]: f for f in b}
    rows = []
    for name in [n for n in by_a if n in by_b]:
        fa, fb = by_a[name], by_b[name]
        pa, pb = float(fa["point"]), float(fb["point"])
        delta = pb - pa
        widths = [w for w in (_half_width(fa.get("ci")), _half_width(fb.get("ci"))) if w is not None]
        hw = sum(widths) / len(widths) if widths else None
        if math.isnan(delta):
            moved = not (math.isnan(pa) and math.isnan(pb))
            rel = None
        elif hw is None:
            moved, rel = delta != 0, None
        else:
            moved = abs(delta) > hw
            rel = delta / hw if hw > 0 else (0.0 if delta == 0 else math.copysign(math.inf, delta))
        rows.append({
            "name": name, "point_a": _nan_to_none(pa), "point_b": _nan_to_none(pb),
            "ci_a": fa.get("ci"), "ci_b": fb.get("ci"), "delta": _nan_to_none(delta),
            "half_width": hw, "relative": None if rel is None or math.isinf(rel) else rel,
            "moved": bool(moved),
        })
    return {
        "findings": rows,
        "added": [n for n in by_b if n not in by_a],
        "removed": [n for n in by_a if n not in by_b],
        "moved": [r["name"] for r in rows if r["moved"]],
    }


def run_label(run_dir: Path) -> str:
    """``study/variant/run_id`` of a run folder (from its manifest)."""
    m = store.read_manifest(run_dir)
    if m:
        return f"{m.get('study')}/{m.get('variant')}/{m.get('run_id')}"
    return str(run_dir)


def diff_runs(run_a: Path, run_b: Path) -> dict[str, Any]:
    """:func:`diff_findings` of two run folders, labelled with their run keys."""
    fa = store.read_manifest(run_a).get("results", [])
    fb = store.read_manifest(run_b).get("results", [])
    out = diff_findings(fa, fb)
    return {"a": run_label(run_a), "b": run_label(run_b), **out}


def diff_text(d: dict[str, Any]) -> str:
    """The diff as a terminal table plus added/removed lines."""
    rows = [
        [r["name"], fmt_num(r["point_a"]), fmt_num(r["point_b"]), fmt_num(r["delta"]),
         fmt_num(r["half_width"]), fmt_num(r["relative"]), "MOVED" if r["moved"] else ""]
        for r in d["findings"]
    ]
    lines = [f"A: {d['a']}", f"B: {d['b']}",
             format_table(["finding", "A", "B", "delta", "CI half-width", "delta/hw", ""], rows)]
    if d["added"]:
        lines.append("added: " + ", ".join(d["added"]))
    if d["removed"]:
        lines.append("removed: " + ", ".join(d["removed"]))
    lines.append(f"{len(d['moved'])} of {len(d['findings'])} shared findings moved "
                 "beyond their CI half-width")
    return "\n".join(lines)


def diff_html(d: dict[str, Any]) -> str:
    """The diff as an HTML table (used by ``reports/index.html``)."""
    import html

    esc = html.escape
    moved_attr = ' class="sl-moved"'
    body = "".join(
        f"<tr{moved_attr if r['moved'] else ''}><td>{esc(r['name'])}</td>"
        f"<td>{fmt_num(r['point_a'])} {fmt_ci(r['ci_a'])}</td>"
        f"<td>{fmt_num(r['point_b'])} {fmt_ci(r['ci_b'])}</td>"
        f"<td>{fmt_num(r['delta'])}</td><td>{fmt_num(r['relative'])}</td>"
        f"<td>{'moved' if r['moved'] else ''}</td></tr>"
        for r in d["findings"]
    )
    extra = ""
    if d["added"]:
        extra += f"<p>added: {esc(', '.join(d['added']))}</p>"
    if d["removed"]:
        extra += f"<p>removed: {esc(', '.join(d['removed']))}</p>"
    return (
        f'<table class="sl-diff"><thead><tr><th>finding</th><th>A {esc(d["a"].split("/")[-1])}'
        f'</th><th>B {esc(d["b"].split("/")[-1])}</th><th>delta</th><th>delta / CI half-width'
        f"</th><th></th></tr></thead><tbody>{body}</tbody></table>{extra}"
    )
