"""Where sweeps run, and how their results are cached.

One place decides how work is spread: :func:`get_client` gives a Dask client on
a ``LocalCluster`` of processes by default, or on a real cluster when a scheduler
address is given (parameter, or the ``SCALINGLAB_SCHEDULER`` environment
variable). ``scheduler="sync"`` runs tasks in-process with no Dask at all, which
is what ``compute_class=tiny`` uses in tests.

:func:`map_tasks` maps a function over task configs with a progress bar and a
time estimate, and reports failed tasks instead of dropping them.
:func:`save_dataset` and :func:`load_dataset` store an experiment's xarray result as
netCDF with provenance under ``data/``, keyed by a hash of its config; the caching itself
is :mod:`scalinglab.sweeps` (:func:`~scalinglab.sweeps.cached_sweep`, which also caches
each run on its own, and :func:`~scalinglab.sweeps.cached_dataset` for a single run).
:func:`resolve_device` is the one place that turns ``"auto"`` into a torch device.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xarray as xr
from tqdm import tqdm

from scalinglab import atomic
from scalinglab.paths import data_dir
from scalinglab.provenance import config_hash, provenance_attrs

SCHEDULER_ENV = "SCALINGLAB_SCHEDULER"


def resolve_scheduler(scheduler: str = "") -> str:
    """The scheduler to use: the argument, else ``$SCALINGLAB_SCHEDULER``, else ``""`` (local)."""
    return scheduler or os.environ.get(SCHEDULER_ENV, "")


def compute_mode(scheduler: str = "") -> str:
    """Human-readable compute mode for manifests: ``sync``, ``LocalCluster`` or the address."""
    s = resolve_scheduler(scheduler)
    return {"": "LocalCluster", "sync": "sync"}.get(s, s)


def resolve_device(device: str) -> str:
    """The torch device a run uses: ``"auto"`` is ``"cuda"`` when available, else ``"cpu"``.

    Anything else (``"cpu"``, ``"cuda"``, ``"cuda:1"``) is returned unchanged.
    """
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@contextlib.contextmanager
def get_client(
    scheduler: str = "",
    *,
    n_workers: int | None = None,
    host: str = "127.0.0.1",
    close_timeout: float = 30.0,
) -> Iterator[Any]:
    """Yield a Dask client (or None for ``"sync"``), closing what it started.

    Parameters
    ----------
    scheduler
        ``""``: a ``LocalCluster(processes=True, threads_per_worker=1)`` with
        ``n_workers`` (default: CPU count); ``"sync"``: no Dask, yields None;
        anything else: the address of a running scheduler (``tcp://host:8786``).
    n_workers
        LocalCluster worker processes (default: CPU count).
    host
        Interface the LocalCluster's scheduler, workers and dashboard listen on.
        Default loopback: the dashboard has no authentication, so nothing is
        reachable from other machines unless asked (``host="0.0.0.0"`` or an
        address opts in).
    close_timeout
        Seconds a LocalCluster's graceful shutdown may take before what is left of
        its workers is killed (:func:`close_local_cluster`).
    """
    s = resolve_scheduler(scheduler)
    if s == "sync":
        yield None
        return
    from dask.distributed import Client, LocalCluster

    if s == "":
        import dask

        n = n_workers or os.cpu_count() or 1
        bind = f"[{host}]" if ":" in host else host  # an IPv6 literal needs brackets
        # Dask's nannies set MALLOC_TRIM_THRESHOLD_=65536 in every worker: glibc then hands
        # freed memory back to the kernel after each step and maps it again on the next,
        # which slows a training step of the larger models; the workers keep glibc's
        # defaults here (the rest of Dask's pre-spawn environment stays; a variable the
        # user exported is inherited as set).
        env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})
        env.pop("MALLOC_TRIM_THRESHOLD_", None)
        with dask.config.set({"distributed.nanny.pre-spawn-environ": env}):
            cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                host=host,
                dashboard_address=f"{bind}:0",
            )
        client = None
        try:
            client = Client(cluster)
            yield client
        finally:
            close_local_cluster(cluster, client, timeout=close_timeout)
    else:
        with Client(s, timeout="30s") as client:
            yield client


def close_local_cluster(cluster: Any, client: Any = None, *, timeout: float = 30.0) -> None:
    """Close ``client`` and ``cluster`` within about ``2 * timeout`` seconds, whatever state
    the workers are in.

    Dask's own ``close()`` has no bound by default. After Ctrl-C the workers got the
    terminal's SIGINT too, and on a loaded machine their nannies may still be restarting
    them when the cluster closes; the close then waited for minutes. So: close gracefully
    with a bound, then kill each worker process left and its children (notebook kernels).
    Written here because dask offers no bounded "close, else kill" for a LocalCluster.
    """
    import psutil

    procs: list[psutil.Process] = []
    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(nanny, "pid", None)
        if pid:
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                procs += [proc, *proc.children(recursive=True)]
    for part in (client, cluster):
        if part is not None:
            with contextlib.suppress(Exception):  # a timeout: what is left is killed below
                part.close(timeout=timeout)
    alive = [p for p in procs if p.is_running()]
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=timeout)


@dataclass
class TaskFailure:
    """A task that raised: its index, config and the formatted traceback."""

    index: int
    config: Any
    error: str


def _guarded(fn: Callable[[Any], Any], item: Any) -> tuple[bool, Any]:
    try:
        return True, fn(item)
    except Exception:  # reported to the caller, never dropped
        return False, traceback.format_exc()


def map_tasks(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    scheduler: str = "",
    client: Any = None,
    desc: str = "tasks",
    progress: bool = True,
    on_result: Callable[[int, Any], None] | None = None,
) -> tuple[list[Any], list[TaskFailure]]:
    """Run ``fn(item)`` for every item; return results in order and the failures.

    Parameters
    ----------
    fn
        A picklable, module-level function (it runs in worker processes).
    items
        Task configs, each picklable.
    scheduler, client
        Where to run (see :func:`get_client`); an existing ``client`` wins.
    desc
        Progress-bar label; the bar shows elapsed time and an estimate of the rest.
    on_result
        Called in this process as ``on_result(i, result)`` as soon as task ``i``
        succeeds (e.g. to store it, so an interrupted map loses no finished task).

    Returns
    -------
    results, failures
        ``results[i]`` is ``fn(items[i])`` or None where it failed; ``failures``
        lists each failed task with its traceback.
    """
    results: list[Any] = [None] * len(items)
    failures: list[TaskFailure] = []
    bar = tqdm(total=len(items), desc=desc, disable=not progress, unit="task")

    def _store(i: int, ok: bool, value: Any) -> None:
        if ok:
            results[i] = value
            if on_result is not None:
                on_result(i, value)
        else:
            failures.append(TaskFailure(i, items[i], value))
        bar.update(1)

    try:
        if client is None and resolve_scheduler(scheduler) == "sync":
            for i, item in enumerate(items):
                _store(i, *_guarded(fn, item))
        else:
            with contextlib.ExitStack() as stack:
                if client is None:
                    client = stack.enter_context(get_client(scheduler))
                from dask.distributed import as_completed

                futures = [client.submit(_guarded, fn, item, pure=False) for item in items]
                index = {f.key: i for i, f in enumerate(futures)}
                for fut in as_completed(futures):
                    _store(index[fut.key], *fut.result())
    finally:
        bar.close()
    failures.sort(key=lambda f: f.index)
    return results, failures


#: Where results of ``tiny`` compute classes go (git-ignored, never a report's input).
TINY_CACHE = ".cache"
#: Set (to ``1``) by the runner for a run at a ``tiny`` compute class.
TINY_ENV = "SCALINGLAB_TINY_DATA"


#: Set (to ``1``) by ``scalinglab verify`` for its re-runs: computing or saving an
#: experiment's dataset is then refused (:func:`refuse_experiment`), so a re-run reads the
#: committed results or fails, and never writes new data under ``data/``.
NO_EXPERIMENTS_ENV = "SCALINGLAB_NO_EXPERIMENTS"


def refuse_experiment(path: Path, config: dict) -> None:
    """Raise :class:`~scalinglab.errors.ExperimentRefused` when experiments are refused
    (``$SCALINGLAB_NO_EXPERIMENTS`` is ``1``) and ``path`` would now be computed.

    Parameters
    ----------
    path
        The dataset that is not there for ``config`` (``data/<study>/<name>-<hash>.nc``).
    config
        The experiment's config (its hash is the cache key); the seed-like entries are
        named in the message, since a changed seed is the usual cause.
    """
    if os.environ.get(NO_EXPERIMENTS_ENV) != "1":
        return
    from scalinglab.errors import ExperimentRefused

    seeds = {k: v for k, v in config.items() if "seed" in str(k).lower()}
    try:
        shown = path.relative_to(data_dir().parent)
    except ValueError:
        shown = path
    raise ExperimentRefused(
        f"refused to run an experiment: {shown} (config {config_hash(config)}"
        + (f", {', '.join(f'{k}={v!r}' for k, v in seeds.items())}" if seeds else "")
        + ") is not committed, so this run would compute it; a verify re-run only reads "
        "committed results (a parameter it changed is part of the experiment's key)"
    )


def dataset_path(study: str, name: str, config: dict) -> Path:
    """``data/<study>/<name>-<confighash>.nc``; a ``tiny*`` compute class (in the config, or
    a notebook run with ``$SCALINGLAB_TINY_DATA`` set) goes to the git-ignored
    ``data/.cache/<study>/`` instead, out of every study's input globs."""
    folder = data_dir()
    if str(config.get("compute_class", "")).startswith("tiny") or os.environ.get(TINY_ENV) == "1":
        folder = folder / TINY_CACHE
    return folder / study / f"{name}-{config_hash(config)}.nc"


def compressed_encoding(ds: xr.Dataset, *, level: int = 4) -> dict[str, dict]:
    """gzip (zlib) encoding for every numeric or boolean array variable of ``ds``.

    Sweeps store per-step traces padded with NaN where a run stopped early or a
    variant skipped a size; compressed, they cost a fraction of their raw bytes.
    Values are unchanged (lossless).
    """
    return {
        name: {"zlib": True, "complevel": level}
        for name, var in ds.data_vars.items()
        if var.ndim and var.dtype.kind in "fiub"
    }


def save_dataset(
    ds: xr.Dataset, path: Path, *, config: dict, provenance: dict[str, str] | None = None
) -> Path:
    """Write ``ds`` with provenance attrs to ``path`` atomically (idempotent for Dask reruns).

    ``provenance``: attrs taken when the computation started
    (:func:`scalinglab.provenance.provenance_attrs`), so a commit made while a long
    sweep runs is not credited with its results; default: taken now.
    """
    refuse_experiment(path, config)
    ds = ds.copy()
    ds.attrs.update(provenance or provenance_attrs(config))
    with atomic.replacing(path, suffix=".nc") as tmp:
        ds.to_netcdf(tmp, engine="h5netcdf", encoding=compressed_encoding(ds))
    return path


def load_dataset(path: Path, config: dict) -> xr.Dataset | None:
    """The dataset saved at ``path`` for ``config`` (printing "reusing ..."), or None.

    None when there is no file or its ``config_hash`` attr is not ``config``'s.
    """
    if not path.exists():
        return None
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        loaded = ds.load()
    if loaded.attrs.get("config_hash") != config_hash(config):
        return None
    print(
        f"reusing {path.relative_to(data_dir().parent)} (config {config_hash(config)})",
        file=sys.stderr,
    )  # a run note, like progress: not part of the report
    return loaded
