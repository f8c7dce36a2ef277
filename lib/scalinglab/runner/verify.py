"""Reproduce a run: execute its study again with the manifest's parameters and compare.

The re-run goes into a temporary reports root, so the real ``reports/`` and
its ``latest`` links are never touched. Every finding must match exactly
(point and both interval ends; NaN matches NaN): on CPU the same seed gives
bit-identical results, so any difference means the science changed (or the
code did: the source and library hashes are compared too and reported).
Before anything runs, the recorded run is checked (:func:`scalinglab.runner.store.check_run`):
a corrupt ``manifest.json`` or ``results.json`` (unreadable, or not the SHA-256 the
manifest recorded) is refused as corrupt, naming the file.

A re-run never runs an experiment (:func:`experiments_refused`): it reads the committed
results under ``data/`` or fails. A dataset that is not there for the re-run's parameters
(deleted, or keyed by a parameter the re-run changed) is refused with
:class:`~scalinglab.errors.ExperimentRefused` before anything is computed, and
:func:`verify_run` reports it as a :class:`~scalinglab.errors.StudyError` naming the
dataset, instead of re-timing or re-training into ``data/``.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scalinglab.compute import NO_EXPERIMENTS_ENV
from scalinglab.errors import StudyError
from scalinglab.runner import store
from scalinglab.runner.pipeline import run_study
from scalinglab.runner.store import RunStatus
from scalinglab.textfmt import fmt_ci, fmt_num, format_table

#: The message of :func:`scalinglab.compute.refuse_experiment`, as a re-run's error holds it.
_REFUSED = re.compile(r"ExperimentRefused: (refused to run an experiment: [^\n]*)")


@contextlib.contextmanager
def experiments_refused() -> Iterator[None]:
    """While inside, computing or saving an experiment's dataset raises
    :class:`~scalinglab.errors.ExperimentRefused` (in this process and in the kernels it
    starts, which inherit the environment): a re-run reads committed results only."""
    before = os.environ.get(NO_EXPERIMENTS_ENV)
    os.environ[NO_EXPERIMENTS_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(NO_EXPERIMENTS_ENV, None)
        else:
            os.environ[NO_EXPERIMENTS_ENV] = before


def refused_experiment(error: str | None) -> str | None:
    """The refusal in a failed re-run's error text (``"refused to run an experiment:
    data/<study>/<name>-<hash>.nc (...) ..."``), or None when it failed otherwise."""
    found = _REFUSED.findall(error or "")  # the last: the traceback may quote the code
    return found[-1].strip() if found else None


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    fa, fb = float(a), float(b)
    return fa == fb or (math.isnan(fa) and math.isnan(fb))


@dataclass
class VerifyResult:
    """Outcome of :func:`verify_run`."""

    run: str
    rerun_status: str
    rerun_error: str | None
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return self.rerun_status == RunStatus.OK and all(r["same"] for r in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "reproduced": self.reproduced,
            "rerun_status": self.rerun_status,
            "rerun_error": self.rerun_error,
            "findings": self.rows,
            "notes": self.notes,
        }

    def text(self) -> str:
        rows = [
            [
                r["name"],
                fmt_num(r["point_a"]),
                fmt_ci(r["ci_a"]),
                fmt_num(r["point_b"]),
                fmt_ci(r["ci_b"]),
                "yes" if r["same"] else "NO",
            ]
            for r in self.rows
        ]
        lines = [
            f"run: {self.run}",
            format_table(["finding", "recorded", "CI", "re-run", "CI", "identical"], rows),
        ]
        lines += [f"note: {n}" for n in self.notes]
        if self.rerun_status != RunStatus.OK:
            lines.append(f"re-run {self.rerun_status}: {self.rerun_error}")
        lines.append("REPRODUCED" if self.reproduced else "NOT REPRODUCED")
        return "\n".join(lines)


def compare_findings(recorded: list[dict], rerun: list[dict]) -> list[dict]:
    """Row per finding name in either list: both values and whether they are identical."""
    a = {f["name"]: f for f in recorded}
    b = {f["name"]: f for f in rerun}
    rows = []
    for name in list(a) + [n for n in b if n not in a]:
        fa, fb = a.get(name), b.get(name)
        same = (
            fa is not None
            and fb is not None
            and _same(fa["point"], fb["point"])
            and _same(fa.get("ci"), fb.get("ci"))
        )
        rows.append(
            {
                "name": name,
                "point_a": None if fa is None else fa["point"],
                "ci_a": None if fa is None else fa.get("ci"),
                "point_b": None if fb is None else fb["point"],
                "ci_b": None if fb is None else fb.get("ci"),
                "same": bool(same),
            }
        )
    return rows


def unverifiable(run_dir: Path, manifest: dict) -> str | None:
    """Why ``run_dir`` cannot be verified (it never finished well), or None.

    Only a finished run with status ``ok`` has findings to reproduce; a killed,
    running, failed or interrupted one is refused at once instead of re-running
    the study only to report "NOT REPRODUCED".
    """
    if run_dir.name.startswith(store.TMP_PREFIX):
        state = store.unfinished_state(run_dir)
        return (
            f"{run_dir} is an unfinished run ({state}): there is nothing to verify; "
            "'scalinglab reports prune' removes killed ones"
        )
    status = manifest.get("status")
    if status != RunStatus.OK:
        return (
            f"{run_dir} has status {status!r}"
            + (f" ({manifest.get('error')})" if manifest.get("error") else "")
            + ": only a good run can be verified"
        )
    return None


def verify_run(
    run_dir: Path, *, cell_timeout: float | None = None, command: str = ""
) -> VerifyResult:
    """Re-run ``run_dir``'s study/variant with its recorded parameters and compare findings.

    Raises
    ------
    StudyError
        A corrupt run (an unreadable ``manifest.json`` or ``results.json``, or a
        ``results.json`` that differs from the SHA-256 in the manifest), no readable
        manifest, or a run that did not finish with status ``ok``
        (:func:`unverifiable`): refused before anything runs. Also a re-run that would
        have run an experiment (a committed dataset is missing; nothing is computed).
    """
    integrity = store.check_run(Path(run_dir))
    if integrity.corrupt:
        raise StudyError(
            "corrupt report: "
            + "; ".join(integrity.problems)
            + " (regenerate it with 'scalinglab run STUDY --force')"
        )
    manifest = store.read_manifest(run_dir)
    if not manifest.get("study"):
        raise StudyError(f"{run_dir}: no readable manifest.json")
    refusal = unverifiable(Path(run_dir), manifest)
    if refusal:
        raise StudyError(refusal)
    label = f"{manifest['study']}/{manifest['variant']}/{manifest['run_id']}"
    with tempfile.TemporaryDirectory(prefix="scalinglab-verify-") as tmp, experiments_refused():
        result = run_study(
            manifest["study"],
            variant=manifest["variant"],
            overrides=manifest["parameters"],
            cell_timeout=cell_timeout,
            force=True,
            reports_root=Path(tmp),
            command=command,
        )
        rerun = store.read_manifest(result.run_dir) if result.run_dir else {}
    refusal = refused_experiment(result.error)
    if refusal:
        raise StudyError(
            f"cannot verify {label}: its re-run with the recorded parameters would run an "
            f"experiment ({refusal}); restore the committed data (git checkout data/) first"
        )
    out = VerifyResult(
        label,
        result.status,
        result.error,
        rows=compare_findings(manifest.get("results", []), result.findings),
        notes=list(integrity.notes),
    )
    for key, what in (
        ("source_hash", "notebook source"),
        ("lib_hash", "library code"),
        ("input_hashes", "inputs"),
        ("lock_hash", "lock file"),
    ):
        if rerun and rerun.get(key) != manifest.get(key):
            out.notes.append(f"{what} changed since the recorded run")
    return out
