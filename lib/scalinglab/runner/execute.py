"""Execute a study notebook: jupytext -> papermill, in the run's own folder.

Papermill cannot read jupytext ``.py`` files, so the study is converted into
the run folder first and that copy is executed with the merged parameters
injected after the ``parameters`` cell. The kernel (``python3``) starts in the
repository's ``notebooks/`` folder and inherits two environment variables:
``SCALINGLAB_RESULTS`` (where :func:`scalinglab.record.record` writes findings)
and ``SCALINGLAB_ROOT`` (the repository root). Papermill changes the process
working directory, so one process runs one notebook at a time; the variables
are set for the duration of the run and restored afterwards.

A ``SIGTERM`` received while a notebook runs in the main thread is turned into
:class:`RunInterrupted` (a ``KeyboardInterrupt``), so a killed run is marked
``interrupted`` instead of vanishing (:func:`sigterm_as_interrupt`; ``scalinglab run``
installs it for the whole command, batches included). The kernel's connection file
(its ports and key) is written inside the run's own folder, as
``.kernel-<hex>.json``, and removed when the kernel stops: a run stopped hard leaves it
only inside its unfinished run folder, which ``reports prune`` removes, never in the
system's temporary folder.

With ``progress=True`` (``scalinglab run STUDY`` in a terminal) papermill's bar
counts cells on stderr and what the notebook writes to stderr (an experiment's
own tqdm bar with its time estimate, warnings) is forwarded there live; the
kernel's start-up warning about unencrypted local TCP is silenced either way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jupytext
import nbformat

from scalinglab.compute import TINY_ENV
from scalinglab.paths import notebooks_dir, repo_root
from scalinglab.record import RESULTS_ENV

KERNEL = "python3"
#: Kernel options: its own log at CRITICAL. It warns on every start that a local kernel's
#: TCP sockets are unencrypted (expected on localhost), and a kernel stopped by Ctrl-C or
#: SIGTERM while a cell runs logs a teardown race ("Exception in message handler ...
#: Socket operation on non-socket") with a traceback; a cell's own error reaches the
#: runner as the cell's output, not through this log.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL"]


#: Name prefix of a kernel's connection file, kept in the run's own folder.
KERNEL_FILE_PREFIX = ".kernel-"


def _kernel_config(connection: Path) -> Any:
    """Kernel-manager configuration: the connection file at ``connection``."""
    from traitlets.config import Config

    return Config({"KernelManager": {"connection_file": str(connection)}})


class RunInterrupted(KeyboardInterrupt):
    """The run was stopped by ``SIGTERM`` (or Ctrl-C)."""


@contextlib.contextmanager
def _environ(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _quiet_papermill() -> Iterator[None]:
    # papermill re-parses the parameters cell with a regex that trips on quotes in
    # comments and then warns about "unknown" parameters; the runner has already
    # validated every parameter against the cell, so those warnings are noise.
    logger = logging.getLogger("papermill")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, ``SIGTERM`` (what ``kill`` and cluster schedulers send) raises
    :class:`RunInterrupted`, a ``KeyboardInterrupt``: the same clean stop as Ctrl-C.

    Outside the main thread (a Dask worker's task) it does nothing: signal handlers
    can only be installed there. The previous handler is restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be installed from the main thread (Dask workers)
        return

    def handler(signum: int, frame: Any) -> None:
        raise RunInterrupted(f"received signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _StoppedKernelFilter(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" for a kernel the stop killed.

    When Ctrl-C or ``SIGTERM`` stops a run, the runner shuts the kernel down while
    nbclient still awaits the running cell; that task ends in ``DeadKernelError``, which
    nobody retrieves any more (the run is already recorded ``interrupted``), and asyncio
    would print its traceback when the task is collected, which can be at interpreter
    exit: so the filter is installed once, for the process, when the runner loads.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None:
            exc = getattr(record, "exception", None)
        return type(exc).__name__ != "DeadKernelError" and "Kernel died" not in str(
            record.getMessage()
        )


logging.getLogger("asyncio").addFilter(_StoppedKernelFilter())


def execute_study(
    source: Path,
    output: Path,
    parameters: dict[str, Any],
    *,
    results_path: Path,
    cell_timeout: float | None = None,
    start_timeout: float = 120,
    progress: bool = False,
) -> Any:
    """Convert ``source`` with jupytext and execute it with papermill into ``output``.

    Parameters
    ----------
    source
        The study's jupytext ``.py`` file.
    output
        Where the executed ``.ipynb`` goes; papermill saves it after every cell,
        so it holds the partial notebook when a cell raises or times out.
    parameters
        Merged, validated parameters to inject.
    results_path
        Exported to the kernel as ``SCALINGLAB_RESULTS``.
    cell_timeout
        Seconds a single cell may run (None: no limit).
    progress
        Show a bar of executed cells and forward the notebook's stderr (its own
        progress bars, with their ETA) to this process's stderr, live.

    Returns
    -------
    nbformat.NotebookNode
        The executed notebook.

    Raises
    ------
    papermill.PapermillExecutionError
        A cell raised (the notebook is saved first).
    RunInterrupted, KeyboardInterrupt
        The run was stopped.
    Exception
        A cell timed out, or the kernel died or did not start.
    """
    import papermill

    nb = jupytext.read(source, fmt="py:percent")
    nb.metadata.setdefault(
        "kernelspec", {"display_name": "Python 3", "language": "python", "name": KERNEL}
    )
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    staged = output.with_name(f".input-{output.name}")
    connection = output.with_name(f"{KERNEL_FILE_PREFIX}{secrets.token_hex(6)}.json")
    nbformat.write(nb, staged)
    env = {
        RESULTS_ENV: str(results_path),
        "SCALINGLAB_ROOT": str(repo_root()),
        # a tiny run's experiment results go to the git-ignored data/.cache/
        TINY_ENV: "1" if str(parameters.get("compute_class", "")).startswith("tiny") else "0",
    }
    try:
        with _environ(**env), _quiet_papermill(), sigterm_as_interrupt():
            return papermill.execute_notebook(
                str(staged),
                str(output),
                parameters=parameters,
                kernel_name=KERNEL,
                cwd=str(notebooks_dir()),
                progress_bar=progress,
                log_output=False,
                stderr_file=sys.stderr if progress else None,
                extra_arguments=KERNEL_ARGUMENTS,
                execution_timeout=cell_timeout,
                start_timeout=start_timeout,
                config=_kernel_config(connection),
            )
    finally:
        staged.unlink(missing_ok=True)
        connection.unlink(missing_ok=True)  # the kernel has stopped: its ports are free


def cell_timings(nb: Any) -> list[dict[str, Any]]:
    """Per-cell start, end, duration and status from papermill's cell metadata.

    Returns
    -------
    list of dict
        One entry per code cell that papermill touched: ``index`` (position in
        the executed notebook, the injected-parameters cell included), ``tags``,
        ``start``, ``end``, ``duration`` (seconds) and ``status``.
    """
    out = []
    for i, cell in enumerate(nb.cells if nb is not None else []):
        pm = cell.get("metadata", {}).get("papermill")
        if not pm or cell.cell_type != "code":
            continue
        out.append(
            {
                "index": i,
                "tags": list(cell.metadata.get("tags") or []),
                "start": pm.get("start_time"),
                "end": pm.get("end_time"),
                "duration": pm.get("duration"),
                "status": pm.get("status"),
            }
        )
    return out


def read_executed(output: Path) -> Any:
    """The executed notebook as saved by papermill, or None if it was never written."""
    try:
        return nbformat.read(output, as_version=4)
    except (OSError, ValueError):
        return None
