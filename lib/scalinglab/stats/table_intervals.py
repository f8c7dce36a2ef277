"""Interval estimates of aggregate metrics for plain ``(run, task)`` tables.

The engine under :func:`scalinglab.stats.intervals.interval_estimates`, on numpy
arrays only (no xarray, no pandas: ``scalinglab intervals`` on plain score files
starts without them). One table per unit (an algorithm, or an algorithm at a
step), each bootstrapped from its own generator keyed by the unit's name
(:func:`scalinglab.stats.bootstrap.keyed_generators`), so that the same seed
gives the same intervals bit for bit whatever the set or order of units, the
batch size, the set of metrics or the number of threads.

A table without absent runs is bootstrapped by the fused compiled pass of
:mod:`scalinglab.stats.fused` (same draws, same replicates bit for bit, no
resampled tables in memory, the GIL released); a ragged one by the generic
:func:`~scalinglab.stats.bootstrap.stratified_replicates`. Units run on a
thread pool, largest first; each writes only its own row of the result, so the
schedule never changes a number.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from types import SimpleNamespace

import numpy as np

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import (
    basic_interval,
    bc_interval,
    bca_interval,
    compact_runs,
    jackknife_runs,
    keyed_generators,
    percentile_interval,
    stack_statistics,
    stratified_replicates,
)
from scalinglab.stats.fused import fused_replicates
from scalinglab.stats.metrics import AGGREGATES, optimality_gap

__all__ = [
    "DEFAULT_METRICS",
    "METHODS",
    "check_options",
    "metric_functions",
    "table_interval",
    "table_replicates",
    "tables_intervals",
]

#: Interval methods.
#: ``basic`` and ``bc`` are rliable's (arch's) reverse-percentile and bias-corrected methods.
METHODS = ("percentile", "bca", "basic", "bc")

#: Default metric names, in output order.
DEFAULT_METRICS = ("iqm", "median", "mean", "optimality_gap")


def metric_functions(names: Sequence[str], gamma: float) -> list[Callable]:
    """The metric functions named ``names`` (the optimality gap with threshold ``gamma``)."""
    fns: list[Callable] = []
    for name in names:
        if name == "optimality_gap" and gamma != 1.0:
            fns.append(lambda x, g=gamma: optimality_gap(x, g))
        else:
            fns.append(AGGREGATES[name])
    return fns


def check_options(*, method: str, reps: int, level: float) -> None:
    """Raise :class:`~scalinglab.errors.InputError` on a bad method, count or level."""
    if method not in METHODS:
        raise InputError(f"unknown interval method {method!r}; choose from {list(METHODS)}")
    if int(reps) < 1:
        raise InputError(f"reps must be >= 1, got {reps}")
    if not 0 < level < 1:
        raise InputError(f"confidence level must be in (0, 1), got {level}")


def progress_bar(total: int, *, work: float, progress: bool | None, desc: str):
    """A tqdm bar (stderr) for ``total`` replicates, or a no-op one.

    ``progress=None`` shows it only for long jobs (``work``, the number of
    resampled cells, above ~1e8, a second or more) on a terminal; tqdm, which
    would disable itself otherwise, is then not even imported.
    """
    if progress is None:
        isatty = getattr(sys.stderr, "isatty", None)
        if work <= 1e8 or (isatty is not None and not isatty()):
            return nullcontext(SimpleNamespace(update=lambda n=1: None))  # a disabled bar
        disable = None
    else:
        disable = not progress
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="rep", unit_scale=True, disable=disable, leave=False)


def table_replicates(
    values: np.ndarray,
    metrics: Sequence[str],
    *,
    reps: int,
    rng: np.random.Generator,
    task_bootstrap: bool = False,
    batch_size: int | None = None,
    gamma: float = 1.0,
    on_batch: Callable[[int], object] | None = None,
) -> np.ndarray:
    """Bootstrap replicates of the metrics of one algorithm's ``(run, task)`` table.

    The fused pass when every task has the same run count, else the generic
    path (same draws, same replicates).

    Parameters
    ----------
    values
        Shape ``(runs, tasks)``; NaN = absent run.
    metrics
        Metric names (keys of :data:`scalinglab.stats.metrics.AGGREGATES`).

    Returns
    -------
    numpy.ndarray
        Shape ``(reps, len(metrics))``.
    """
    table = np.asarray(values, dtype=float)
    compact, n_runs = compact_runs(table)
    if (n_runs == compact.shape[0]).all():
        # Every task has the same run count (absent rows aside): the fused pass
        # gives the same replicates bit for bit without the resampled tables.
        return fused_replicates(
            compact,
            metrics,
            reps=reps,
            rng=rng,
            task_bootstrap=task_bootstrap,
            batch_size=batch_size,
            gamma=gamma,
            on_batch=on_batch,
        )
    return stratified_replicates(
        table,
        stack_statistics(metric_functions(metrics, gamma)),
        reps=reps,
        rng=rng,
        task_bootstrap=task_bootstrap,
        batch_size=batch_size,
        n_stats=len(metrics),
        on_batch=on_batch,
    )


def table_interval(
    values: np.ndarray,
    metrics: Sequence[str],
    *,
    reps: int,
    level: float,
    method: str,
    rng: np.random.Generator,
    task_bootstrap: bool = False,
    batch_size: int | None = None,
    gamma: float = 1.0,
    on_batch: Callable[[int], object] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point estimates and intervals for one algorithm's ``(run, task)`` table.

    Parameters
    ----------
    values
        Shape ``(runs, tasks)``; NaN = absent run.
    metrics
        Metric names (keys of :data:`scalinglab.stats.metrics.AGGREGATES`).

    Returns
    -------
    point, lo, hi
        Shape ``(len(metrics),)`` each.
    """
    if method not in METHODS:
        raise InputError(f"unknown interval method {method!r}; choose from {list(METHODS)}")
    statistic = stack_statistics(metric_functions(metrics, gamma))
    table = np.asarray(values, dtype=float)
    point = statistic(table[None])[0]
    reps_arr = table_replicates(
        table,
        metrics,
        reps=reps,
        rng=rng,
        task_bootstrap=task_bootstrap,
        batch_size=batch_size,
        gamma=gamma,
        on_batch=on_batch,
    )
    if method == "percentile":
        lo, hi = percentile_interval(reps_arr, level=level, axis=0)
    elif method == "basic":
        lo, hi = basic_interval(reps_arr, point, level=level)
    elif method == "bc":
        lo, hi = bc_interval(reps_arr, point, level=level)
    else:
        jk = jackknife_runs(values, statistic)
        lo, hi = bca_interval(reps_arr, point, jk, level=level)
    return point, np.asarray(lo), np.asarray(hi)


def tables_intervals(
    tables: Sequence[np.ndarray],
    keys: Sequence[str],
    *,
    metrics: Sequence[str],
    reps: int,
    level: float,
    method: str,
    rng: np.random.Generator,
    task_bootstrap: bool = False,
    batch_size: int | None = None,
    gamma: float = 1.0,
    progress: bool | None = None,
    workers: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point estimates and intervals of several tables, each with its own keyed stream.

    Parameters
    ----------
    tables
        ``U`` tables of shape ``(runs, tasks)`` (NaN = absent run).
    keys
        ``U`` distinct names; table ``u`` draws from ``keyed_generators(rng,
        keys)[keys[u]]``.
    metrics
        Resolved metric names (:func:`scalinglab.stats.metrics.resolve_metrics`).
    reps, level, method, task_bootstrap, batch_size, gamma, progress
        As in :func:`scalinglab.stats.intervals.interval_estimates`.
    rng
        Source of the keyed streams (one draw of it).
    workers
        Threads bootstrapping tables concurrently; default: the CPU count.
        Never changes the result.

    Returns
    -------
    point, lo, hi
        Shape ``(U, len(metrics))`` each.
    """
    check_options(method=method, reps=reps, level=level)
    if len(tables) != len(keys) or len(set(keys)) != len(keys):
        raise InputError(f"need one distinct key per table, got {len(keys)} for {len(tables)}")
    gens = keyed_generators(rng, keys)
    if workers is not None and workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    n_workers = min(len(tables), workers if workers is not None else os.cpu_count() or 1)
    shape = (len(tables), len(metrics))
    point, lo, hi = (np.empty(shape) for _ in range(3))
    work = float(reps) * sum(np.asarray(t).size for t in tables)
    # Largest tables first: the pool then ends with the small ones (better balance).
    order = sorted(range(len(tables)), key=lambda u: -np.asarray(tables[u]).size)
    with progress_bar(reps * len(tables), work=work, progress=progress, desc="bootstrap") as bar:

        def one(u: int) -> None:
            point[u], lo[u], hi[u] = table_interval(
                tables[u],
                metrics,
                reps=int(reps),
                level=level,
                method=method,
                rng=gens[keys[u]],
                task_bootstrap=task_bootstrap,
                batch_size=batch_size,
                gamma=gamma,
                on_batch=bar.update,
            )

        # Each table draws from its own generator and writes its own row, so
        # threads (the fused pass releases the GIL) never change a result.
        if n_workers <= 1:
            for u in order:
                one(u)
        else:
            with ThreadPoolExecutor(max_workers=n_workers) as pool:
                list(pool.map(one, order))
    return point, lo, hi
