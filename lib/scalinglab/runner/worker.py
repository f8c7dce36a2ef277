"""The worker side of a batch run (:mod:`scalinglab.runner.batch`).

What runs on a Dask worker: :func:`run_task` runs one study from the worker's own
checkout of the repository (at the client's path, or where ``SCALINGLAB_WORKER_ROOT``
says) into a private temporary reports folder, and returns the run folder's files and
the experiment results it wrote under ``data/`` as bytes; :func:`guarded` wraps it so a
failure comes back as a reason instead of an exception. :func:`check_workers` is the
client's question, before any task is sent, whether every worker has the repository.
"""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path
from typing import Any

from scalinglab.errors import StudyError
from scalinglab.runner.pipeline import prepare_run, run_study

#: Set on a worker whose checkout is not at the client's path.
WORKER_ROOT_ENV = "SCALINGLAB_WORKER_ROOT"


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
        with tempfile.TemporaryDirectory(prefix="scalinglab-run-") as tmp:
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
