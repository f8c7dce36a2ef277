"""Regenerate many studies at once: one Dask task per notebook.

Papermill changes the process's working directory, so notebooks run one per
process: a ``LocalCluster`` of single-threaded worker processes by default
(:func:`scalinglab.compute.get_client`), or a real cluster given its scheduler
address (``--scheduler`` or ``SCALINGLAB_SCHEDULER``). Every request is
validated and checked against the cache in the calling process first, so bad
parameters fail before any work is sent and unchanged studies are skipped.
A task carries only plain data (study name, variant, parameters, repository
root), so a worker needs nothing but the installed package and the repository
at the same path; each run writes its own folder atomically, so a task that
Dask re-runs after a worker died is harmless.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalinglab.compute import compute_mode, get_client, map_tasks
from scalinglab.paths import repo_root
from scalinglab.runner.pipeline import RunResult, prepare_run, run_study, up_to_date_run
from scalinglab.runner.store import RunStatus
from scalinglab.runner.study import discover_studies, load_study
from scalinglab.textfmt import format_table



@dataclass
class BatchResult:
    """Results of :func:`run_all`, one per study, in study order."""

    results: list[RunResult]

    @property
    def ok(self) -> bool:
        return all(r.ok or r.status in (RunStatus.NO_VARIANT, RunStatus.DRAFT) for r in self.results)

    def summary(self) -> str:
        rows = []
        for r in self.results:
            detail = (r.error or "").strip().splitlines()[-1:] if r.error else []
            rows.append([r.study, r.variant, r.status, r.run_id or "",
                         "" if r.duration is None else f"{r.duration:.1f}",
                         detail[0][:80] if detail else ""])
        return format_table(["study", "variant", "status", "run", "seconds", "error"], rows)


def _run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Worker side: run one study with plain-data arguments; return a plain dict."""
    saved = os.environ.get("SCALINGLAB_ROOT")
    os.environ["SCALINGLAB_ROOT"] = task["root"]
    try:
        res = run_study(
            task["study"], variant=task["variant"], overrides=task["parameters"],
            cell_timeout=task["cell_timeout"], force=True, command=task["command"],
            executor=task["executor"],
        )
        return res.to_json()
    finally:
        if saved is None:
            os.environ.pop("SCALINGLAB_ROOT", None)
        else:
            os.environ["SCALINGLAB_ROOT"] = saved


def run_all(
    *,
    studies: list[str] | None = None,
    variant: str = "default",
    overrides: dict[str, Any] | list[tuple[str, Any]] | None = None,
    scheduler: str = "",
    force: bool = False,
    cell_timeout: float | None = None,
    command: str = "",
    n_workers: int | None = None,
    progress: bool = True,
    include_drafts: bool = False,
) -> BatchResult:
    """Run every study (or ``studies``) at ``variant`` in parallel.

    Parameters
    ----------
    studies
        Study names; default: every study in ``notebooks/``.
    variant
        Variant to run; a study without it is reported as ``no-variant``.
    overrides
        ``-p`` overrides applied to every study (validated for each first).
    scheduler
        ``""``: a LocalCluster of processes; ``"sync"``: in this process, one
        after another; else a Dask scheduler address.
    force
        Run even studies whose latest good run has the same cache key.
    n_workers
        LocalCluster size (default: CPU count, at most the number of studies).
    include_drafts
        Also run studies marked ``draft: true`` in their header (always run when
        named in ``studies``).

    Raises
    ------
    ParameterError, StudyError
        A bad request for any study (nothing has run yet).
    """
    names = studies or discover_studies()
    executor = compute_mode(scheduler)
    results: dict[str, RunResult] = {}
    tasks: list[dict[str, Any]] = []
    for name in names:
        study = load_study(name)
        if study.draft and not include_drafts and studies is None:
            results[name] = RunResult(name, variant, RunStatus.DRAFT,
                                      error=f"draft study: run it with 'scalinglab run {name}'")
            continue
        if variant not in study.variants:
            results[name] = RunResult(name, variant, RunStatus.NO_VARIANT,
                                      error=f"variants: {', '.join(study.variants)}")
            continue
        prep = prepare_run(name, variant=variant, overrides=overrides)
        current = None if force else up_to_date_run(prep)
        if current is not None:
            results[name] = RunResult(name, variant, RunStatus.UP_TO_DATE, run_id=current.name,
                                      run_dir=current)
            continue
        tasks.append({
            "study": name, "variant": variant, "parameters": prep.parameters,
            "root": str(repo_root()), "cell_timeout": cell_timeout, "command": command,
            "executor": executor,
        })
    if tasks:
        workers = n_workers or min(len(tasks), os.cpu_count() or 1)
        with get_client(scheduler, n_workers=workers) as client:
            values, failures = map_tasks(_run_task, tasks, client=client, scheduler=scheduler,
                                         desc="studies", progress=progress)
        for task, value in zip(tasks, values, strict=True):
            if value is not None:
                rd = value["run_dir"]
                results[task["study"]] = RunResult(
                    value["study"], value["variant"], value["status"], run_id=value["run_id"],
                    run_dir=None if rd is None else Path(rd), error=value["error"],
                    findings=value["findings"], duration=value["duration"],
                )
        for f in failures:
            name = tasks[f.index]["study"]
            results[name] = RunResult(name, variant, RunStatus.FAILED, error=f.error)
    return BatchResult([results[n] for n in names])
