"""Regenerate many studies at once: one Dask task per notebook.

Papermill changes the process's working directory, so notebooks run one per
process: a ``LocalCluster`` of single-threaded worker processes by default
(:func:`scalinglab.compute.get_client`), or a real cluster given its scheduler
address (``--scheduler`` or ``SCALINGLAB_SCHEDULER``). Every request is
validated and checked against the cache in the calling process first, so bad
parameters fail before any work is sent and unchanged studies are skipped.

No shared filesystem is assumed. A task carries only plain data (study name,
variant, parameters, repository root, expected source and input hashes); the
worker (:mod:`scalinglab.runner.worker`) runs the study from its own copy of the
repository (at the same path, or where its ``SCALINGLAB_WORKER_ROOT`` says) into a
private temporary reports folder and sends back the run folder's files and any
experiment results it wrote under ``data/``. The client alone writes ``reports/``
(:mod:`scalinglab.runner.landing`, which refuses any path that would leave the
checkout): each run folder is built under
``.tmp-<run_id>/`` and renamed, ``latest`` moves only for a good run, and data
files are replaced atomically. Before any task is sent, every worker is asked
whether it has the repository; one that has not fails the batch at once with a
clear error, and a task whose worker's copy has another notebook or other inputs
fails naming what differs instead of reporting other science. (The manifest
records the worker's own library and lock hashes and git commit.)

Ctrl-C or ``SIGTERM`` (what ``kill`` and cluster schedulers send) stops the batch:
studies still queued or running are recorded as ``interrupted`` run folders
(manifest, no findings), finished ones are kept, their kernels are stopped and their
private ``scalinglab-run-*`` folders removed on every worker, and the caller still
rewrites the index.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from typing import Any

from scalinglab.compute import compute_mode, get_client
from scalinglab.errors import StudyError
from scalinglab.paths import repo_root
from scalinglab.runner.execute import RunInterrupted, sigterm_as_interrupt
from scalinglab.runner.landing import receive, record_interrupted
from scalinglab.runner.pipeline import (
    PreparedRun,
    RunResult,
    prepare_run,
    run_study,
    up_to_date_run,
)
from scalinglab.runner.render import render_source
from scalinglab.runner.store import RunStatus
from scalinglab.runner.study import discover_studies, load_study
from scalinglab.runner.worker import (
    check_workers,
    guarded,
    ignore_interrupts,
    remove_leftovers,
    stop_runs,
)
from scalinglab.textfmt import format_table


@dataclass
class BatchResult:
    """Results of :func:`run_all`, one per study, in study order."""

    results: list[RunResult]
    interrupted: bool = False
    stopped_by: str = ""  # "Ctrl-C" or "SIGTERM" when interrupted

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(
            r.ok or r.status in (RunStatus.NO_VARIANT, RunStatus.DRAFT) for r in self.results
        )

    def summary(self) -> str:
        rows = []
        for r in self.results:
            detail = (r.error or "").strip().splitlines()[-1:] if r.error else []
            rows.append(
                [
                    r.study,
                    r.variant,
                    r.status,
                    r.run_id or "",
                    "" if r.duration is None else f"{r.duration:.1f}",
                    detail[0][:80] if detail else "",
                ]
            )
        return format_table(["study", "variant", "status", "run", "seconds", "error"], rows)


def _execute(
    tasks: list[dict[str, Any]],
    preps: dict[str, PreparedRun],
    *,
    scheduler: str,
    n_workers: int | None,
    progress: bool,
    command: str,
) -> tuple[dict[str, RunResult], str]:
    """Run the tasks; on Ctrl-C or ``SIGTERM`` record the unfinished ones as interrupted,
    stop their runs on the workers and remove their private folders.

    Returns
    -------
    results, stopped_by
        One result per task that ended or was recorded; ``stopped_by`` is ``""``, or
        ``"Ctrl-C"`` / ``"SIGTERM"`` when the batch was stopped.
    """
    from tqdm import tqdm

    results: dict[str, RunResult] = {}
    token = secrets.token_hex(4)  # names this batch's private run folders on the workers
    tasks = [{**t, "batch": token} for t in tasks]
    stop_reason = ""
    bar = tqdm(total=len(tasks), desc="studies", unit="study", disable=not progress)

    def done(task: dict[str, Any], ok: bool, value: Any) -> None:
        name = task["study"]
        # the report folder the run goes to: <variant>-custom/ for non-default parameters
        folder = preps[name].variant if name in preps else task["variant"]
        if ok and (value.get("study"), value.get("variant")) != (name, folder):
            ok, value = (
                False,
                (
                    f"worker answered for {value.get('study')!r}/{value.get('variant')!r} "
                    f"instead of {name}/{folder}: refused (nothing written)"
                ),
            )
        if ok:
            try:
                results[name] = receive(value)
            except StudyError as exc:  # an unsafe path: this study fails, the batch goes on
                results[name] = RunResult(name, task["variant"], RunStatus.FAILED, error=str(exc))
        else:
            results[name] = RunResult(name, task["variant"], RunStatus.FAILED, error=value)
        bar.update(1)

    def record_unfinished() -> None:
        for task in tasks:
            if task["study"] not in results:
                why = f"interrupted ({stop_reason}) before it finished; run it again"
                try:
                    results[task["study"]] = record_interrupted(
                        preps[task["study"]], command=command, executor=task["executor"], error=why
                    )
                except StudyError as exc:  # a full disk: say so, keep stopping
                    results[task["study"]] = RunResult(
                        task["study"], task["variant"], RunStatus.INTERRUPTED, error=f"{why}; {exc}"
                    )

    def stopped(exc: BaseException) -> None:
        nonlocal stop_reason
        stop_reason = stop_reason or ("SIGTERM" if isinstance(exc, RunInterrupted) else "Ctrl-C")

    mode = compute_mode(scheduler)
    try:
        with sigterm_as_interrupt():
            if mode == "sync":
                for task in tasks:
                    done(task, *guarded(task))
                    res = results[task["study"]]
                    if res.status == RunStatus.INTERRUPTED:
                        stop_reason = "SIGTERM" if "SIGTERM" in (res.error or "") else "Ctrl-C"
                        break
            else:
                workers = n_workers or min(len(tasks), os.cpu_count() or 1)
                try:
                    with get_client(scheduler, n_workers=workers) as client:
                        if mode == "LocalCluster":  # Ctrl-C is the client's to handle
                            with contextlib.suppress(Exception):
                                client.run(ignore_interrupts)
                        check_workers(client, tasks[0]["root"])
                        from dask.distributed import as_completed

                        futures = {client.submit(guarded, t, pure=False): t for t in tasks}
                        try:
                            for fut in as_completed(list(futures)):
                                done(futures[fut], *fut.result())
                        except KeyboardInterrupt as exc:
                            stopped(exc)
                            # Recorded before the cluster shuts down, so a shutdown that is
                            # slow (or killed by a second Ctrl-C) loses nothing.
                            record_unfinished()
                            _stop_workers(client, list(futures), token)
                finally:
                    if mode == "LocalCluster":  # workers killed on close left these
                        remove_leftovers(token)
    except KeyboardInterrupt as exc:
        stopped(exc)
    finally:
        bar.close()
    if stop_reason:
        record_unfinished()
    return results, stop_reason


def _stop_workers(client: Any, futures: list[Any], token: str) -> None:
    """Stop batch ``token``'s runs on every worker (kernels, private folders), then cancel
    the tasks; a worker already gone is skipped."""
    with contextlib.suppress(Exception):
        client.run(stop_runs, token, on_error="ignore")
    with contextlib.suppress(Exception):
        client.cancel(futures)  # a real cluster stops them too


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

    Returns
    -------
    BatchResult
        One result per study; ``interrupted`` is True after Ctrl-C or ``SIGTERM``
        (``stopped_by`` says which).

    Raises
    ------
    ParameterError, StudyError
        A bad request for any study, or a worker without the repository
        (nothing has run yet).
    """
    names = studies or discover_studies()
    executor = compute_mode(scheduler)
    results: dict[str, RunResult] = {}
    tasks: list[dict[str, Any]] = []
    preps: dict[str, PreparedRun] = {}
    for name in names:
        study = load_study(name)
        if study.draft and not include_drafts and studies is None:
            results[name] = RunResult(
                name,
                variant,
                RunStatus.DRAFT,
                error=f"draft study: run it with 'scalinglab run {name}'",
            )
            continue
        if variant not in study.variants:
            results[name] = RunResult(
                name, variant, RunStatus.NO_VARIANT, error=f"variants: {', '.join(study.variants)}"
            )
            continue
        prep = prepare_run(name, variant=variant, overrides=overrides)
        current = None if force else up_to_date_run(prep)
        if current is not None:
            results[name] = RunResult(
                name, variant, RunStatus.UP_TO_DATE, run_id=current.name, run_dir=current
            )
            continue
        if not force and render_source(prep) is not None:  # only prose changed: re-render here
            results[name] = run_study(
                name,
                variant=variant,
                prepared=prep,
                force=False,
                command=command,
                executor=executor,
            )
            continue
        preps[name] = prep
        tasks.append(
            {
                "study": name,
                "variant": variant,
                "parameters": prep.parameters,
                "root": str(repo_root()),
                "cell_timeout": cell_timeout,
                "command": command,
                "executor": executor,
                "hashes": {k: prep.hashes[k] for k in ("source_hash", "input_hashes")},
            }
        )
    stopped_by = ""
    if tasks:
        done, stopped_by = _execute(
            tasks,
            preps,
            scheduler=scheduler,
            n_workers=n_workers,
            progress=progress,
            command=command,
        )
        results.update(done)
    return BatchResult(
        [results[n] for n in names], interrupted=bool(stopped_by), stopped_by=stopped_by
    )
