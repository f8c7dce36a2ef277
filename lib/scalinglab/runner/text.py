"""Plain-text tables for the terminal (findings, listings, diffs, summaries).

Hand-written (a dozen lines) rather than adding a table-printing dependency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def fmt_num(x: Any) -> str:
    """A number in 4 significant digits (scientific when very large or small); '' for None."""
    if x is None:
        return ""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return "nan"
    a = abs(v)
    if a != 0 and (a >= 1e5 or a < 1e-3):
        return f"{v:.3e}"
    return f"{v:.4g}"


def fmt_ci(ci: Sequence[float] | None) -> str:
    """``[lo, hi]`` or '' when there is no interval."""
    return f"[{fmt_num(ci[0])}, {fmt_num(ci[1])}]" if ci else ""


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned columns separated by two spaces, with a dashed rule under the header."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def findings_text(findings: Sequence[dict]) -> str:
    """The findings table of a run (name, point, interval, level/method)."""
    rows = []
    for f in findings:
        how = []
        if f.get("level") is not None:
            how.append(f"{100 * f['level']:g}%")
        if f.get("method"):
            how.append(f["method"])
        rows.append([f["name"], fmt_num(f["point"]), fmt_ci(f.get("ci")), ", ".join(how)])
    if not rows:
        return "(no findings recorded)"
    return format_table(["finding", "point", "interval", "how"], rows)


def headline(findings: Sequence[dict], *, n: int = 3) -> list[dict]:
    """Findings marked ``headline``; if none are, the first ``n``."""
    marked = [f for f in findings if f.get("headline")]
    return marked or list(findings[:n])
