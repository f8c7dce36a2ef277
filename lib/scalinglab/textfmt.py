"""Numbers and plain-text tables, formatted one way everywhere.

Used by the findings recorder, the runner's terminal output and the fitting
results' tables. Hand-written (a few lines) rather than adding a table-printing
dependency.
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
