"""One study run, end to end: validate, execute, export, record, publish.

:func:`run_study` is what ``scalinglab run STUDY`` does:

1. load the study and merge its parameters (defaults, variant, ``-p``
   overrides); bad names or types raise :class:`~scalinglab.errors.ParameterError`
   here, before any folder is made or kernel started;
2. hash code cells, parameters, inputs, the imported library modules and the
   lock into the execution key, and the markdown into the prose hash; unless
   ``force``, stop with status ``up-to-date`` when the latest good run has both;
3. reserve ``reports/<study>/<variant>/.tmp-<run_id>/`` and execute the
   notebook there (papermill), findings going to ``results.json``; unless
   ``force``, when only the prose changed, reuse the latest good run's executed
   notebook and findings instead, no kernel started (:mod:`scalinglab.runner.render`);
4. export ``report.html`` (code cells folded in it; its stylesheet shared by every report,
   ``reports/report-<sha12>.css``, linked relatively);
5. write ``manifest.json``, rename the folder to ``<run_id>/`` and, only on
   success, move ``latest``. A failed, timed-out or interrupted run keeps its
   folder, marked in the manifest, and leaves ``latest`` alone.
"""

from __future__ import annotations

import re
import time
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scalinglab.compute import compute_mode
from scalinglab.paths import repo_root
from scalinglab.provenance import environment
from scalinglab.results_file import load_results, write_results
from scalinglab.runner import store
from scalinglab.runner.execute import cell_timings, execute_study, read_executed
from scalinglab.runner.folders import declared_variant, run_folder
from scalinglab.runner.html import write_report
from scalinglab.runner.manifest import (
    build_manifest,
    git_state,
    input_hashes,
    source_info,
    with_inputs,
)
from scalinglab.runner.render import RenderSource, render_source
from scalinglab.runner.store import RunStatus
from scalinglab.runner.study import DEFAULT_VARIANT, Study, load_study, resolve_parameters

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class PreparedRun:
    """A validated run request: the study, merged parameters and their hashes."""

    study: Study
    variant: str
    parameters: dict[str, Any]
    hashes: dict[str, Any]

    @property
    def cache_key(self) -> str:
        return self.hashes["cache_key"]


@dataclass
class RunResult:
    """What a run produced (or why it did not run)."""

    study: str
    variant: str
    status: str  # ok | failed | interrupted | up-to-date
    run_id: str | None = None
    run_dir: Path | None = None
    error: str | None = None
    findings: list[dict] = field(default_factory=list)
    duration: float | None = None
    rendered_from: str | None = None  # render-only: the run whose outputs were reused

    @property
    def ok(self) -> bool:
        return self.status in (RunStatus.OK, RunStatus.UP_TO_DATE)

    def to_json(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "variant": self.variant,
            "status": self.status,
            "run_id": self.run_id,
            "run_dir": None if self.run_dir is None else str(self.run_dir),
            "error": self.error,
            "findings": self.findings,
            "duration": self.duration,
            "rendered_from": self.rendered_from,
        }


def prepare_run(
    study_name: str,
    *,
    variant: str = DEFAULT_VARIANT,
    overrides: dict[str, Any] | list[tuple[str, Any]] | None = None,
) -> PreparedRun:
    """Load and validate a run request; no folder is made and no kernel starts."""
    study = load_study(study_name)
    items = list(overrides.items()) if isinstance(overrides, dict) else list(overrides or [])
    declared = declared_variant(study, variant, dict(items))
    params = resolve_parameters(study, variant=declared, overrides=overrides)
    folder = run_folder(study, declared, params)  # user data: its own folder, not `latest`'s
    inputs = input_hashes(params, study.inputs, root=repo_root())
    hashes = source_info(study.path, study.cell_sources(), params, inputs)
    return PreparedRun(study, folder, params, hashes)


def up_to_date_run(prep: PreparedRun, *, reports_root: Path | None = None) -> Path | None:
    """The latest good run of this study/variant if its cache key matches, else None."""
    latest = store.latest_run(prep.study.name, prep.variant, reports_root=reports_root)
    if latest is None:
        return None
    if store.check_run(latest).corrupt:  # never skip a run whose files are damaged
        return None
    manifest = store.read_manifest(latest)
    if manifest.get("status") == RunStatus.OK and manifest.get("cache_key") == prep.cache_key:
        return latest
    return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if not isinstance(exc, KeyboardInterrupt) and type(exc).__name__ != "PapermillExecutionError":
        text = f"{type(exc).__name__}: {text}"
    return _ANSI.sub("", text)


def run_study(
    study_name: str,
    *,
    variant: str = DEFAULT_VARIANT,
    overrides: dict[str, Any] | list[tuple[str, Any]] | None = None,
    cell_timeout: float | None = None,
    force: bool = True,
    reports_root: Path | None = None,
    command: str = "",
    executor: str = "local",
    prepared: PreparedRun | None = None,
    progress: bool = False,
) -> RunResult:
    """Run one study into a new versioned report folder.

    Parameters
    ----------
    study_name
        ``notebooks/<study_name>.py``.
    variant
        Header variant (``default``, ``tiny`` or a declared one); also the folder name.
    overrides
        Parameter overrides (``-p NAME VALUE``; strings are converted by type).
    cell_timeout
        Seconds any one cell may run before the run fails.
    force
        Run even when the latest good run has the same cache key, and execute even
        when only the prose changed (otherwise re-rendered without a kernel).
    reports_root
        Where run folders go (default ``reports/``); ``verify`` uses a temporary one.
    command
        The command as typed, for the manifest.
    executor
        Where the notebook ran (``local`` or the batch's Dask scheduler), for the manifest.
    progress
        Show the cells' progress and the notebook's own progress bars on stderr.

    Returns
    -------
    RunResult
        ``status`` is ``ok``, ``failed``, ``interrupted`` or ``up-to-date``.

    Raises
    ------
    ParameterError, StudyError
        Bad request (before anything runs).
    StorageError
        The run's folder could not be written (a full disk): it is removed, earlier
        reports and ``latest`` are untouched. A write that fails after the notebook
        ran, when the manifest can still be written, is a ``failed`` run instead.
    """
    from scalinglab import __version__

    prep = prepared or prepare_run(study_name, variant=variant, overrides=overrides)
    study, params = prep.study, prep.parameters
    reuse: RenderSource | None = None
    if not force:
        current = up_to_date_run(prep, reports_root=reports_root)
        if current is not None:
            return RunResult(
                study.name,
                prep.variant,
                RunStatus.UP_TO_DATE,
                run_id=current.name,
                run_dir=current,
                findings=store.read_manifest(current).get("results", []),
            )
        reuse = render_source(prep, reports_root=reports_root)

    git = git_state()
    run_id, tmp = store.allocate_run(
        study.name,
        prep.variant,
        commit=git["commit"],
        dirty=git["dirty"],
        reports_root=reports_root,
    )
    results_path = tmp / "results.json"
    executed_path = tmp / f"{study.name}.ipynb"
    started, t0 = _now(), time.perf_counter()
    hashes = prep.hashes

    def manifest(
        status: str,
        error: str | None,
        findings: list[dict],
        nb: Any,
        html_sha: str | None,
        finished: str | None,
    ) -> dict:
        return build_manifest(
            study=study.name,
            title=study.title,
            variant=prep.variant,
            run_id=run_id,
            status=status,
            error=error,
            started=started,
            finished=finished,
            duration=None if finished is None else round(time.perf_counter() - t0, 3),
            parameters=params,
            hashes=hashes,
            git=git,
            environment=environment(),
            version=__version__,
            compute_mode=compute_mode(str(params.get("scheduler", ""))),
            executor=executor,
            command=command,
            results=findings,
            cell_timings=cell_timings(nb),
            report_html_sha256=html_sha,
            rendered_from=None if reuse is None else reuse.run_id,
            results_sha256=store.results_sha256(tmp),
        )

    with store.writing_run(tmp, run_id):  # a full disk: nothing kept, a one-line error
        store.write_json(
            tmp / "manifest.json", manifest(RunStatus.RUNNING, None, [], None, None, None)
        )
    status, error = RunStatus.OK, None
    findings: list[dict] = []
    nb = None
    html_sha = None
    try:
        try:
            # only the prose changed: the earlier run's outputs and findings, no kernel
            (execute_study if reuse is None else reuse.execute)(
                study.path,
                executed_path,
                params,
                results_path=results_path,
                cell_timeout=cell_timeout,
                progress=progress,
            )
        except KeyboardInterrupt as exc:
            status, error = RunStatus.INTERRUPTED, _error_text(exc) or "interrupted"
        except Exception as exc:  # a failed run is recorded, never raised
            status, error = RunStatus.FAILED, _error_text(exc)
        nb = read_executed(executed_path)
        if status == RunStatus.OK and reuse is None:
            hashes = with_inputs(
                hashes,
                study.cell_sources(),
                params,
                input_hashes(params, study.inputs, root=repo_root()),
            )
        if results_path.is_file():
            findings = load_results(results_path)
        else:
            write_results(results_path, [])
        if nb is not None:
            try:
                html_sha = write_report(
                    tmp,
                    nb,
                    title=study.title,
                    description=study.description,
                    study=study.name,
                    variant=prep.variant,
                    parameters=params,
                    git=git,
                    version=__version__,
                    findings=findings,
                    status=status,
                    error=error,
                    reports_root=tmp.parent.parent.parent,  # <root>/<study>/<variant>/.tmp-id
                )
            except Exception as exc:
                if status == RunStatus.OK:
                    status = RunStatus.FAILED
                    error = f"HTML export failed: {_error_text(exc)}"
    except OSError as exc:  # writing the run's files (a full disk): recorded as failed
        status, error = RunStatus.FAILED, error or f"writing the run: {_error_text(exc)}"
    except BaseException as exc:  # noqa: B036 - record anything that escapes, then re-raise
        status = RunStatus.INTERRUPTED if isinstance(exc, KeyboardInterrupt) else RunStatus.FAILED
        error = error or _error_text(exc) or traceback.format_exc()
        raise
    finally:
        # if even the manifest cannot be written, the run is removed (StorageError)
        with store.writing_run(tmp, run_id):
            store.write_json(
                tmp / "manifest.json", manifest(status, error, findings, nb, html_sha, _now())
            )
            run_dir = store.finalize_run(tmp, run_id)
            if status == RunStatus.OK:
                store.set_latest(run_dir)
    return RunResult(
        study.name,
        prep.variant,
        status,
        run_id=run_id,
        run_dir=run_dir,
        error=error,
        findings=findings,
        duration=round(time.perf_counter() - t0, 3),
        rendered_from=None if reuse is None else reuse.run_id,
    )
