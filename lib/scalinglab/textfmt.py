"""Numbers and plain-text tables, formatted one way everywhere.

Used by the findings recorder, the runner's terminal output and index, the CLI's JSON
and the fitting results' tables. JSON has no NaN or infinity: :func:`json_number` and
:func:`json_safe` write a non-finite number as ``null`` (the CLI, the fitting results and
the runner's index share them). Hand-written (a few lines) rather than adding a
table-printing dependency.
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


def json_number(x: Any) -> float | None:
    """A number for JSON: ``float(x)``, or None when ``x`` is None, NaN or infinite.

    Parameters
    ----------
    x
        None, or anything ``float()`` accepts (Python or NumPy scalar, 0-d array).
    """
    if x is None:
        return None
    v = float(x)
    return v if math.isfinite(v) else None


def json_safe(obj: Any) -> Any:
    """``obj`` with every non-finite float inside dicts, lists and tuples replaced by None.

    Tuples become lists; keys and non-float values are returned unchanged.
    """
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    return obj
