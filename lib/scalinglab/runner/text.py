"""The runner's terminal view of findings (number and table formatting: :mod:`scalinglab.textfmt`)."""

from __future__ import annotations

from collections.abc import Sequence

from scalinglab.textfmt import fmt_ci, fmt_num, format_table


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
