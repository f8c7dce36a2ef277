"""The client side of a batch run: what lands in this checkout.

A worker (:mod:`scalinglab.runner.worker`) sends back a run folder's files and the
experiment results it wrote under ``data/``, as bytes keyed by name and relative path.
:func:`receive` writes them into this checkout; :func:`record_interrupted` keeps a
trace of a study a stopped batch did not finish. Nothing a worker names is trusted: a
data file must resolve inside this checkout's ``data/`` (:func:`confined`: no absolute
path, no ``..`` and no symbolic link that leads out), and the study, variant, run id
and file names must be plain names; anything else is refused before a byte is written.
A run folder is built under ``.tmp-<run_id>/`` and renamed once complete, data files
are replaced atomically, and a full disk removes the half-written folder
(:func:`scalinglab.runner.store.writing_run`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scalinglab import atomic
from scalinglab.errors import StudyError
from scalinglab.paths import data_dir
from scalinglab.runner import store
from scalinglab.runner.pipeline import PreparedRun, RunResult
from scalinglab.runner.store import RunStatus


def _write_atomic(path: Path, data: bytes) -> None:
    if path.is_file() and path.read_bytes() == data:
        return
    atomic.write_bytes(path, data)


def _plain_name(what: str, name: Any) -> str:
    """``name`` if it is one plain path component (no separator, not ``.``/``..``, not hidden)."""
    if (
        not isinstance(name, str)
        or not name
        or name in (".", "..")
        or name.startswith(".")
        or "/" in name
        or "\\" in name
        or "\0" in name
    ):
        raise StudyError(f"worker sent an unsafe {what} {name!r}: refused (nothing written)")
    return name


def confined(base: Path, rel: Any) -> Path:
    """``base / rel`` if it lies inside ``base`` once resolved, else a :class:`StudyError`.

    A worker names the data files it wrote by their path relative to ``data/``; the
    client refuses an absolute path, one that climbs out with ``..``, and one that
    leaves ``base`` through a symbolic link, before anything is written.
    """
    if not isinstance(rel, str) or not rel or "\0" in rel:
        raise StudyError(f"worker sent an invalid path {rel!r}: refused (nothing written)")
    if Path(rel).is_absolute():
        raise StudyError(
            f"worker sent the absolute path {rel!r}; data files must be relative to {base}: "
            "refused (nothing written)"
        )
    root = base.resolve()
    target = (root / rel).resolve()
    if target == root or not target.is_relative_to(root):
        raise StudyError(
            f"worker sent the path {rel!r}, which resolves to {target}, outside {root}: "
            "refused (nothing written)"
        )
    return target


def receive(value: dict[str, Any], *, reports_root: Path | None = None) -> RunResult:
    """Client side: write a task's run folder (atomically, under ``.tmp-`` then renamed)
    and its data files into this checkout; move ``latest`` for a good run.

    Every path a worker sends is checked before anything is written: data files must
    resolve inside this checkout's ``data/`` (see :func:`confined`), and the study,
    variant, run id and run-folder file names must be plain names.

    Raises
    ------
    StudyError
        A path from the worker would land outside the repository (nothing is written).
    StorageError
        The disk refused a write (the run's folder is removed, nothing left unfinished).
    """
    data_root = data_dir()
    data_files = [
        (confined(data_root, rel), data) for rel, data in value.get("data_files", {}).items()
    ]
    run_files = {}
    if value.get("run_id") and value.get("files"):
        for what in ("study", "variant", "run_id"):
            _plain_name(what.replace("_", " "), value[what])
        run_files = {_plain_name("file name", n): d for n, d in value["files"].items()}
    for path, data in data_files:
        try:
            _write_atomic(path, data)
        except OSError as exc:  # a full disk: the file is left as it was
            raise store.storage_error(exc, path.parent, str(value.get("run_id"))) from exc
    run_dir = None
    if run_files:
        run_id = value["run_id"]
        parent = store.variant_dir(value["study"], value["variant"], reports_root=reports_root)
        final = parent / run_id
        if final.exists():
            raise StudyError(f"{final} exists already: not overwriting a run")
        tmp = parent / f"{store.TMP_PREFIX}{run_id}"
        with store.writing_run(tmp, run_id):  # a full disk: nothing of it kept
            parent.mkdir(parents=True, exist_ok=True)
            tmp.mkdir()
            for name, data in run_files.items():
                (tmp / name).write_bytes(data)
            run_dir = store.finalize_run(tmp, run_id)
            if value["status"] == RunStatus.OK:
                store.set_latest(run_dir)
    return RunResult(
        value["study"],
        value["variant"],
        value["status"],
        run_id=value["run_id"],
        run_dir=run_dir,
        error=value["error"],
        findings=value["findings"],
        duration=value["duration"],
    )


def record_interrupted(
    prep: PreparedRun, *, command: str, executor: str, error: str, reports_root: Path | None = None
) -> RunResult:
    """Keep a trace of a study that a stopped batch did not finish: a run folder whose
    manifest says ``interrupted`` (no findings, no HTML); ``latest`` does not move."""
    from datetime import UTC, datetime

    from scalinglab import __version__
    from scalinglab.provenance import environment
    from scalinglab.results_file import write_results
    from scalinglab.runner.manifest import build_manifest, git_state

    git = git_state()
    run_id, tmp = store.allocate_run(
        prep.study.name,
        prep.variant,
        commit=git["commit"],
        dirty=git["dirty"],
        reports_root=reports_root,
    )
    now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    with store.writing_run(tmp, run_id):  # a full disk: nothing of it kept
        write_results(tmp / "results.json", [])
        store.write_json(
            tmp / "manifest.json",
            build_manifest(
                study=prep.study.name,
                title=prep.study.title,
                variant=prep.variant,
                run_id=run_id,
                status=RunStatus.INTERRUPTED,
                error=error,
                started=now,
                finished=now,
                duration=None,
                parameters=prep.parameters,
                hashes=prep.hashes,
                git=git,
                environment=environment(),
                version=__version__,
                compute_mode=executor,
                executor=executor,
                command=command,
                results=[],
                cell_timings=[],
                report_html_sha256=None,
                results_sha256=store.results_sha256(tmp),
            ),
        )
        run_dir = store.finalize_run(tmp, run_id)
    return RunResult(
        prep.study.name,
        prep.variant,
        RunStatus.INTERRUPTED,
        run_id=run_id,
        run_dir=run_dir,
        error=error,
    )
