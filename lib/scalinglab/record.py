"""Findings: every claim a report makes, with its point estimate and interval.

A study notebook calls :func:`record` once per finding. Findings are kept in
memory (so an interactive JupyterLab session can show them with
:func:`findings_table`) and, when the runner executes the notebook, also written
atomically to the ``results.json`` named by the ``SCALINGLAB_RESULTS``
environment variable after every call, so a run that dies half-way still leaves
the findings it reached.

``results.json`` layout::

    {"findings": [{"name": str, "point": float, "ci": [lo, hi] | null,
                   "level": float | null, "method": str | null,
                   "resamples": int | null, "unit": str | null,
                   "description": str | null, "headline": bool}, ...]}
"""

from __future__ import annotations

import html
import json
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from scalinglab.textfmt import fmt_ci, fmt_num

RESULTS_ENV = "SCALINGLAB_RESULTS"


@dataclass(frozen=True)
class Finding:
    """One recorded finding: a named number with its interval and how it was made."""

    name: str
    point: float
    ci: tuple[float, float] | None = None
    level: float | None = None
    method: str | None = None
    resamples: int | None = None
    unit: str | None = None
    description: str | None = None
    headline: bool = False

    def to_json(self) -> dict:
        d = asdict(self)
        d["ci"] = None if self.ci is None else [self.ci[0], self.ci[1]]
        return d

    def _repr_html_(self) -> str:
        return findings_html([self])


_FINDINGS: dict[str, Finding] = {}


def _as_float(x: object, what: str, name: str) -> float:
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise TypeError(f"record({name!r}): {what} must be a number, got {x!r}") from exc
    return v


def record(
    name: str,
    point: float,
    *,
    ci: Sequence[float] | None = None,
    method: str | None = None,
    level: float | None = None,
    resamples: int | None = None,
    unit: str | None = None,
    description: str | None = None,
    headline: bool = False,
) -> Finding:
    """Record a finding (re-recording a name replaces it).

    Parameters
    ----------
    name
        Stable identifier, e.g. ``"iqm/adam"``; reports are diffed by name.
    point
        The point estimate.
    ci
        ``(lo, hi)`` interval; ``lo <= point <= hi`` is not required (a
        bootstrap percentile interval need not contain the point estimate).
    method, level, resamples
        How the interval was made, e.g. ``"stratified bootstrap, percentile"``,
        ``0.95`` and ``50000``. A finding with a CI must say its level.
    unit, description
        Free text shown in the findings table.
    headline
        Shown in ``reports/index.html`` next to the study.

    Returns
    -------
    Finding
        Displays as a one-row findings table in a notebook.
    """
    if not isinstance(name, str) or not name:
        raise TypeError("record(): name must be a non-empty string")
    p = _as_float(point, "point", name)
    interval = None
    if ci is not None:
        if len(ci) != 2:
            raise ValueError(f"record({name!r}): ci must be (lo, hi), got {ci!r}")
        lo, hi = (_as_float(c, "ci", name) for c in ci)
        if not (math.isnan(lo) or math.isnan(hi)) and lo > hi:
            raise ValueError(f"record({name!r}): ci lower bound {lo} exceeds upper bound {hi}")
        if level is None:
            raise ValueError(f"record({name!r}): a finding with a ci must state its level")
        interval = (lo, hi)
    f = Finding(
        name=name,
        point=p,
        ci=interval,
        level=None if level is None else float(level),
        method=method,
        resamples=None if resamples is None else int(resamples),
        unit=unit,
        description=description,
        headline=bool(headline),
    )
    _FINDINGS[name] = f
    _flush()
    return f


def findings() -> list[Finding]:
    """All findings recorded in this process, in recording order."""
    return list(_FINDINGS.values())


def clear() -> None:
    """Forget recorded findings (tests, or a fresh interactive run)."""
    _FINDINGS.clear()
    _flush()


def _flush() -> None:
    target = os.environ.get(RESULTS_ENV)
    if not target:
        return
    write_results(Path(target), findings())


def write_results(path: Path, items: Sequence[Finding]) -> None:
    """Write findings to ``path`` atomically (temporary file, then ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"findings": [f.to_json() for f in items]}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-results-")
    with os.fdopen(fd, "w") as fh:
        json.dump(payload, fh, indent=2, allow_nan=True)
        fh.write("\n")
    os.replace(tmp, path)


def load_results(path: Path) -> list[dict]:
    """Read the ``findings`` list of a ``results.json``."""
    return json.loads(Path(path).read_text())["findings"]


def findings_html(items: Sequence[Finding | dict]) -> str:
    """Render findings as an HTML table (used by notebooks and by the report header)."""
    rows = []
    for f in items:
        d = f.to_json() if isinstance(f, Finding) else f
        ci = d.get("ci")
        ci_txt = fmt_ci(ci) or "—"
        how = []
        if d.get("level") is not None:
            how.append(f"{100 * d['level']:g}%")
        if d.get("method"):
            how.append(d["method"])
        if d.get("resamples"):
            how.append(f"{d['resamples']:,} resamples")
        rows.append(
            "<tr>"
            f"<td>{html.escape(d['name'])}</td>"
            f"<td>{fmt_num(d['point'])}{(' ' + html.escape(d['unit'])) if d.get('unit') else ''}</td>"
            f"<td>{ci_txt}</td>"
            f"<td>{html.escape(', '.join(how))}</td>"
            f"<td>{html.escape(d.get('description') or '')}</td>"
            "</tr>"
        )
    return (
        '<table class="sl-findings"><thead><tr><th>finding</th><th>point</th>'
        "<th>interval</th><th>how</th><th>meaning</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


class _Table:
    def __init__(self, items: Sequence[Finding]) -> None:
        self.items = list(items)

    def _repr_html_(self) -> str:
        return findings_html(self.items)

    def __repr__(self) -> str:
        lines = []
        for f in self.items:
            ci = fmt_ci(f.ci)
            lines.append(f"{f.name:40s} {fmt_num(f.point):>12s} {ci}")
        return "\n".join(lines)


def findings_table() -> _Table:
    """Every finding recorded so far, displayed as a table in a notebook."""
    return _Table(findings())
