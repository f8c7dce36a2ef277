"""Cached sweeps: a list of runs, each cached on its own, combined into one Dataset.

Every study's experiment is a sweep: a list of run configs mapped over workers
(:func:`scalinglab.compute.map_tasks`, a progress bar with an estimate of the time
left), then one xarray Dataset assembled from the runs. :func:`cached_sweep` is the
one place that caches it:

- the combined Dataset is stored with provenance as
  ``data/<study>/<name>-<confighash>.nc`` (:func:`scalinglab.compute.dataset_path`)
  and reused, without computing anything, while the sweep's config is unchanged;
- while it is being computed, every finished run is pickled on its own in
  ``data/<study>/.runs/<name>-<confighash>/<runhash>.pkl`` (git-ignored), keyed
  by the hash of the run's key, so a sweep that is killed resumes run by run: the
  next call computes only the runs that had not finished (failed runs are retried).
  The provenance taken when the sweep first started is kept there too, so a resumed
  sweep is credited to the code it started from, as an uninterrupted one is. Once the
  combined Dataset is saved the run folder is removed.

A sweep's ``execute(runs)`` receives the :class:`RunCache` and maps its runs with
:func:`map_runs` (the cache-aware :func:`~scalinglab.compute.map_tasks`). With
``runs`` a disabled cache (``RunCache(None)``) the same code runs with no caching.

:func:`makespan` is the one runtime estimator: the wall clock of a list of run
durations packed longest-first onto some workers (the studies' ``estimate_*`` and
the benchmarks' ``--estimate-small`` build on it).
"""

from __future__ import annotations

import contextlib
import json
import pickle
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import xarray as xr

from scalinglab import atomic
from scalinglab.compute import (
    TaskFailure,
    dataset_path,
    load_dataset,
    map_tasks,
    refuse_experiment,
    save_dataset,
)
from scalinglab.provenance import config_hash, provenance_attrs

#: Folder (under ``data/<study>/``) of the per-run caches of unfinished sweeps.
RUNS_DIR = ".runs"
_PROVENANCE = "provenance.json"


class RunCache:
    """Finished runs of one sweep, one pickle per run, keyed by the hash of the run's key.

    Parameters
    ----------
    folder
        Where the runs live; None disables the cache (nothing is read or written).
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._provenance: dict[str, str] | None = None  # written with the first run

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def path(self, key: Any) -> Path:
        """The file of the run ``key`` (any JSON-able value; hashed canonically)."""
        if self.folder is None:
            raise ValueError("this run cache is disabled")
        return self.folder / f"{config_hash({'run': key})}.pkl"

    def load(self, key: Any) -> tuple[bool, Any]:
        """``(True, result)`` when the run ``key`` finished earlier, else ``(False, None)``."""
        if self.folder is None:
            return False, None
        path = self.path(key)
        try:
            with open(path, "rb") as fh:
                stored_key, value = pickle.load(fh)
        except FileNotFoundError:
            return False, None
        except Exception:  # torn, or unreadable (a class since renamed): run it again
            return False, None
        if stored_key != json.loads(json.dumps(key, default=str)):
            return False, None  # a hash collision would be astronomically rare; be safe
        return True, value

    def save(self, key: Any, value: Any) -> None:
        """Store the result of run ``key`` atomically (a killed write leaves no file)."""
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        if self._provenance is not None and not (self.folder / _PROVENANCE).exists():
            atomic.write_text(
                self.folder / _PROVENANCE, json.dumps(self._provenance, sort_keys=True)
            )
        with atomic.replacing(self.path(key)) as tmp, open(tmp, "wb") as fh:
            pickle.dump(
                (json.loads(json.dumps(key, default=str)), value),
                fh,
                protocol=pickle.HIGHEST_PROTOCOL,
            )

    def count(self) -> int:
        """Number of runs stored."""
        if self.folder is None or not self.folder.is_dir():
            return 0
        return sum(1 for p in self.folder.glob("*.pkl") if not p.name.startswith(".tmp-"))

    def provenance(self, config: dict) -> dict[str, str]:
        """Provenance attrs of the sweep's start: kept from an interrupted start whose runs
        are reused, else taken now (and kept for a later resume)."""
        if self.folder is None:
            return provenance_attrs(config)
        path = self.folder / _PROVENANCE
        if path.exists() and self.count():  # resuming: credit the start of the sweep
            stored = json.loads(path.read_text())
            if stored.get("config_hash") == config_hash(config):
                return stored
        if path.exists():
            path.unlink()
        self._provenance = provenance_attrs(config)  # written beside the first stored run
        return self._provenance

    def clear(self) -> None:
        """Remove every stored run (the sweep's combined Dataset now holds them)."""
        if self.folder is not None and self.folder.is_dir():
            shutil.rmtree(self.folder)
            with contextlib.suppress(OSError):  # the .runs folder too, once empty
                self.folder.parent.rmdir()


def map_runs(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    keys: Sequence[Any],
    runs: RunCache | None,
    scheduler: str = "",
    client: Any = None,
    desc: str = "runs",
    progress: bool = True,
) -> tuple[list[Any], list[TaskFailure]]:
    """:func:`~scalinglab.compute.map_tasks` over the runs not already in ``runs``.

    Parameters
    ----------
    fn, items
        As for :func:`~scalinglab.compute.map_tasks`.
    keys
        One JSON-able key per item: what identifies the run within its sweep.
    runs
        The sweep's run cache (None or disabled: run everything, store nothing).
        Each run is stored as soon as it finishes, in this process.

    Returns
    -------
    results, failures
        As :func:`~scalinglab.compute.map_tasks` returns them, for every item
        (cached ones included); failures index into ``items``.
    """
    if len(keys) != len(items):
        raise ValueError(f"{len(keys)} keys for {len(items)} items")
    runs = runs or RunCache(None)
    results: list[Any] = [None] * len(items)
    todo = []
    for i, key in enumerate(keys):
        hit, value = runs.load(key)
        if hit:
            results[i] = value
        else:
            todo.append(i)
    if progress and len(todo) < len(items):
        print(
            f"{desc}: {len(items) - len(todo)} of {len(items)} runs reused from "
            f"{runs.folder}, {len(todo)} to run",
            file=sys.stderr,
            flush=True,
        )
    if not todo:
        return results, []
    if runs.folder is not None:  # under ``verify``: runs not stored are not computed
        refuse_experiment(runs.folder, {"runs_to_compute": len(todo)})
    res, fails = map_tasks(
        fn,
        [items[i] for i in todo],
        scheduler=scheduler,
        client=client,
        desc=desc,
        progress=progress,
        on_result=lambda j, value: runs.save(keys[todo[j]], value),
    )
    for j, value in enumerate(res):
        results[todo[j]] = value
    return results, [TaskFailure(todo[f.index], f.config, f.error) for f in fails]


def cached_sweep(
    study: str,
    name: str,
    config: dict,
    execute: Callable[[RunCache], xr.Dataset],
    *,
    rerun: bool = False,
) -> xr.Dataset:
    """The sweep's Dataset from ``data/<study>/<name>-<confighash>.nc``, or computed and saved.

    Parameters
    ----------
    study, name
        Where the Dataset is stored: ``data/<study>/<name>-<confighash>.nc``.
    config
        Everything that determines the result (sizes, seeds, engine versions); its
        hash is the cache key of the Dataset and of its run folder, and is stored in
        the Dataset's attrs with the rest of the provenance.
    execute
        ``execute(runs)`` computes the Dataset, mapping its runs with :func:`map_runs`
        over ``runs`` (``data/<study>/.runs/<name>-<confighash>/``), so runs that
        finished in an earlier, interrupted call are not computed again.
    rerun
        Recompute even if the Dataset exists (the explicit choice to re-run). Runs
        left by an interrupted call with the same config are still reused.

    Returns
    -------
    xarray.Dataset
        What ``execute`` returned, as saved (loaded back from the netCDF file).
    """
    path = dataset_path(study, name, config)
    if not rerun:
        cached = load_dataset(path, config)
        if cached is not None:
            return cached
    refuse_experiment(path, config)  # under ``verify``: read committed results only
    runs = RunCache(path.parent / RUNS_DIR / path.stem)
    provenance = runs.provenance(config)  # the code and commit the computation started from
    ds = execute(runs)
    save_dataset(ds, path, config=config, provenance=provenance)
    runs.clear()
    with xr.open_dataset(path, engine="h5netcdf") as saved:
        return saved.load()


def cached_dataset(
    study: str, name: str, config: dict, compute: Callable[[], xr.Dataset], *, rerun: bool = False
) -> xr.Dataset:
    """Load the dataset for ``config`` from ``data/``, or compute and save it.

    A sweep of one run: :func:`cached_sweep` with no per-run cache.

    Parameters
    ----------
    study, name
        Where it is stored: ``data/<study>/<name>-<confighash>.nc``.
    config
        Everything that determines the result (sizes, seeds, versions of the
        experiment code); its hash is the cache key and is stored in the attrs.
    compute
        Called with no arguments when there is no cached result (or ``rerun``).
    rerun
        Recompute even if a cached result exists (the explicit choice to re-run).
    """
    return cached_sweep(study, name, config, lambda runs: compute(), rerun=rerun)


def makespan(durations: Sequence[float], *, workers: int) -> float:
    """Wall clock of running ``durations`` (seconds, one per run) on ``workers`` workers.

    Longest-first onto the least-loaded worker (LPT), which is how a Dask cluster
    fed longest-first behaves; for one worker it is the sum.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    loads = [0.0] * workers
    for d in sorted(durations, reverse=True):
        loads[loads.index(min(loads))] += d
    return max(loads)


def join_seed_blocks(
    blocks: Mapping[str, xr.Dataset], *, info: Callable[[str, xr.Dataset], dict], **concat: Any
) -> xr.Dataset:
    """One design's seed blocks as one Dataset along ``seed``.

    A design may be trained in blocks of seeds (a first block, then later ones, each
    with its own cache key and provenance); this joins them.

    Parameters
    ----------
    blocks
        ``{block name: Dataset}`` in order, each with a ``seed`` dimension; the first
        block's attrs are kept.
    info
        ``(name, block) -> dict``: what ``seed_blocks`` records of each block (its
        seeds, config hash, machine...), so each seed's provenance stays readable.
    **concat
        Further keyword arguments of :func:`xarray.concat` (how to align the blocks).

    Returns
    -------
    xarray.Dataset
        The blocks concatenated along ``seed``; attrs ``seed_blocks`` (JSON list of
        ``info`` per block) and ``n_failed`` (summed over blocks).

    Raises
    ------
    ValueError
        When a block repeats another block's seeds (named).
    """
    seen: dict[int, str] = {}
    for name, ds in blocks.items():
        dup = sorted(int(s) for s in ds["seed"].values if int(s) in seen)
        if dup:
            raise ValueError(
                f"seed blocks overlap: {name} repeats seeds {dup} of "
                f"{sorted({seen[d] for d in dup})}"
            )
        seen.update({int(s): name for s in ds["seed"].values})
    parts = list(blocks.values())
    out = xr.concat(parts, dim="seed", combine_attrs="override", **concat)
    out.attrs["seed_blocks"] = json.dumps([info(n, b) for n, b in blocks.items()], sort_keys=True)
    out.attrs["n_failed"] = sum(int(b.attrs.get("n_failed", 0)) for b in parts)
    return out
