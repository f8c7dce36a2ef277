"""``results.json``: a report's findings and claims, written atomically and read back.

:func:`scalinglab.record.record` rewrites the file after every finding it records
(:func:`write_results`); the runner reads it back (:func:`load_results`,
:func:`load_claims`).

``results.json`` is strict JSON: a NaN or infinite point or interval end is written as
``null`` and the finding's ``note`` says why; :func:`load_results` reads it back as NaN
(and still reads older files that contain ``NaN``).

``results.json`` layout::

    {"findings": [{"name": str, "point": float, "ci": [lo, hi] | null,
                   "level": float | null, "method": str | null,
                   "resamples": int | null, "unit": str | null,
                   "description": str | null, "headline": bool,
                   "identified": bool, "note": str | null,
                   "bound": float | null, "side": "lower" | "upper" | null,
                   "n": int | null, "room": float | null, "df": float | null}, ...],
     "claims": [{"id": str, "paper": str, "statement": str, "findings": [str],
                 "expect": str | null, "value": ..., "tolerance": float,
                 "rule": str, "untested": str | null, "verdict": str,
                 "reason": str, "evidence": [...], "mde": float | null}, ...]}
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from scalinglab import atomic
from scalinglab.claims import Verdict
from scalinglab.finding import Finding
from scalinglab.textfmt import json_safe
from scalinglab.verdict_scope import summary_by_scope


def write_results(
    path: Path, items: Sequence[Finding], verdicts: Sequence[Verdict] = (), *, durable: bool = True
) -> None:
    """Write findings and claims to ``path`` atomically (:func:`scalinglab.atomic.write_text`);
    strict JSON (non-finite numbers as ``null``). ``durable=False`` skips the fsyncs: the
    notebook rewrites its results on every recorded finding, and the runner re-hashes the
    file after the kernel has stopped."""
    claims_json = [v.to_json() for v in verdicts]
    payload = {
        "findings": [f.to_json() for f in items],
        "claims": claims_json,
        "claims_by_scope": summary_by_scope(claims_json),
    }
    atomic.write_text(
        path, json.dumps(json_safe(payload), indent=2, allow_nan=False) + "\n", durable=durable
    )


def _nan_for_null(f: dict) -> dict:
    """A finding read back: a ``null`` point or interval end is NaN again."""
    if "point" in f and f["point"] is None:
        f["point"] = math.nan
    if f.get("ci") is not None:
        f["ci"] = [math.nan if c is None else c for c in f["ci"]]
    return f


def load_results(path: Path) -> list[dict]:
    """Read the ``findings`` list of a ``results.json``.

    A ``null`` point or interval end (strict JSON for a non-finite number) is read as
    NaN; older files that contain ``NaN`` literally are read as they are.
    """
    return [_nan_for_null(f) for f in json.loads(Path(path).read_text())["findings"]]


def load_claims(path: Path) -> list[dict]:
    """Read the ``claims`` list of a ``results.json`` (``[]`` for files written before it)."""
    return json.loads(Path(path).read_text()).get("claims", [])
