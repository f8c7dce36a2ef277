"""The worker side of a batch run (:mod:`scalinglab.runner.batch`).

What runs on a Dask worker: :func:`run_task` runs one study from the worker's own
checkout of the repository (at the client's path, or where ``SCALINGLAB_WORKER_ROOT``
says) into a private temporary reports folder, and returns the run folder's files and
the experiment results it wrote under ``data/`` as bytes; :func:`guarded` wraps it so a
failure comes back as a reason instead of an exception. :func:`check_workers` is the
client's question, before any task is sent, whether every worker has the repository.

A stopped batch (Ctrl-C, ``SIGTERM``) stops its runs on every worker before the cluster
closes: :func:`stop_runs` terminates the kernels of that batch's runs, lets each run
wind down and removes its private folder (``scalinglab-run-<batch>-*``, the kernel's
connection file inside). Workers of a ``LocalCluster`` share the terminal's process
group, so they ignore ``SIGINT`` (:func:`ignore_interrupts`): Ctrl-C reaches the client,
which stops the runs, instead of killing the workers mid-run.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from scalinglab.errors import StudyError
from scalinglab.runner.pipeline import prepare_run, run_study

#: Set on a worker whose checkout is not at the client's path.
WORKER_ROOT_ENV = "SCALINGLAB_WORKER_ROOT"
#: Name prefix of a run's private folder on a worker (then the batch token, then random).
RUN_TMP_PREFIX = "scalinglab-run-"

#: Private folders of the runs this process is running now, by batch token.
_ACTIVE: dict[str, set[Path]] = {}
_ACTIVE_LOCK = threading.Lock()


def _track(token: str, folder: Path, *, add: bool) -> None:
    with _ACTIVE_LOCK:
        if add:
            _ACTIVE.setdefault(token, set()).add(folder)
        else:
            _ACTIVE.get(token, set()).discard(folder)


def ignore_interrupts() -> bool:
    """Worker side (``client.run``): ignore ``SIGINT`` in this worker process; True if set.

    Only possible from the process's main thread, where Dask runs such functions.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return True


async def stop_runs(token: str, wait_s: float = 20.0) -> list[str]:
    """Worker side (``client.run``): stop batch ``token``'s runs in this worker process.

    Terminates their notebook kernels (the child processes whose connection file lies in
    one of the runs' folders), waits up to ``wait_s`` seconds for the runs to wind down
    and remove their folders, then removes what is left. Returns the folders handled.
    """
    import psutil

    with _ACTIVE_LOCK:
        folders = sorted(_ACTIVE.get(token, set()))
    if not folders:
        return []
    marks = [str(f) for f in folders]
    kernels = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if any(m in arg for arg in proc.cmdline() for m in marks):
                kernels.append(proc)
        except psutil.Error:
            continue
    for proc in kernels:
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(kernels, timeout=3)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        with _ACTIVE_LOCK:
            if not _ACTIVE.get(token):
                break
        await asyncio.sleep(0.2)
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return marks


def remove_leftovers(token: str) -> list[Path]:
    """Client side, after a local cluster closed: remove batch ``token``'s run folders
    left in this machine's temporary folder by workers that were killed."""
    pattern = f"{RUN_TMP_PREFIX}{token}-*"
    found = sorted(Path(tempfile.gettempdir()).glob(pattern)) if token else []
    for folder in found:
        shutil.rmtree(folder, ignore_errors=True)
    return found


def _worker_root(client_root: str) -> Path:
    return Path(os.environ.get(WORKER_ROOT_ENV) or client_root)


def _probe(client_root: str) -> dict[str, Any]:
    """Worker side: does this worker have the repository?"""
    root = _worker_root(client_root)
    return {
        "host": socket.gethostname(),
        "root": str(root),
        "has_repo": (root / "notebooks").is_dir(),
    }


def check_workers(client: Any, root: str) -> None:
    """Fail at once, naming them, when some worker has no checkout of the repository.

    Raises
    ------
    StudyError
        A worker sees no ``notebooks/`` folder at the repository path.
    """
    answers = client.run(_probe, root)
    missing = [
        f"{addr} ({a['host']}: {a['root']})"
        for addr, a in sorted(answers.items())
        if not a["has_repo"]
    ]
    if missing:
        raise StudyError(
            "worker(s) without the repository: " + ", ".join(missing) + ". Every worker needs "
            "a checkout at the same commit, at the same path or where its "
            f"{WORKER_ROOT_ENV} says; reports and data come back to this machine"
        )


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if not f.startswith("."):
                p = Path(dirpath) / f
                st = p.stat()
                out[str(p.relative_to(folder))] = (st.st_mtime_ns, st.st_size)
    return out


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Worker side: run one study from this worker's checkout into a private folder and
    return the result with the run folder's files and the data files it wrote (bytes)."""
    root = _worker_root(task["root"])
    saved = os.environ.get("SCALINGLAB_ROOT")
    os.environ["SCALINGLAB_ROOT"] = str(root)
    try:
        prep = prepare_run(task["study"], variant=task["variant"], overrides=task["parameters"])
        differs = [
            what
            for key, what in (("source_hash", "notebook"), ("input_hashes", "inputs"))
            if prep.hashes[key] != task["hashes"][key]
        ]
        if differs:
            raise StudyError(
                f"worker {socket.gethostname()}: its checkout at {root} differs from the "
                f"client's ({', '.join(differs)}: another commit or other data); bring it to "
                "the same commit and data"
            )
        data = root / "data"
        before = _snapshot(data) if data.is_dir() else {}
        token = str(task.get("batch", ""))
        with tempfile.TemporaryDirectory(prefix=f"{RUN_TMP_PREFIX}{token}-") as tmp:
            _track(token, Path(tmp), add=True)
            try:
                res = run_study(
                    task["study"],
                    variant=task["variant"],
                    prepared=prep,
                    cell_timeout=task["cell_timeout"],
                    force=True,
                    command=task["command"],
                    executor=task["executor"],
                    reports_root=Path(tmp),
                )
            finally:
                _track(token, Path(tmp), add=False)
            files = (
                {
                    p.name: p.read_bytes()
                    for p in res.run_dir.iterdir()
                    if p.is_file() and not p.name.startswith(".")
                }
                if res.run_dir is not None
                else {}
            )
        after = _snapshot(data) if data.is_dir() else {}
        written = {
            rel: (data / rel).read_bytes() for rel, stat in after.items() if before.get(rel) != stat
        }
        return {
            **res.to_json(),
            "files": files,
            "data_files": written,
            "host": socket.gethostname(),
        }
    finally:
        if saved is None:
            os.environ.pop("SCALINGLAB_ROOT", None)
        else:
            os.environ["SCALINGLAB_ROOT"] = saved


def guarded(task: dict[str, Any]) -> tuple[bool, Any]:
    """Worker side: ``(True, run_task(task))``, or ``(False, reason)`` when it raised (a
    :class:`StudyError`'s one-line message, else the traceback), so no failure is lost."""
    import traceback

    try:
        return True, run_task(task)
    except StudyError as exc:  # a clear one-line reason (no traceback)
        return False, str(exc)
    except Exception:
        return False, traceback.format_exc()
