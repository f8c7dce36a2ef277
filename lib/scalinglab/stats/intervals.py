"""Interval estimates of aggregate metrics: stratified bootstrap CIs (rliable's method).

For each algorithm, the runs of every task are resampled with replacement
(tasks are strata; optionally tasks too), every requested metric is computed on
the same resamples as array operations over a batch of replicates, and the
interval is the percentile or BCa interval of the replicates. The point
estimate is the metric on the data itself.

Reproducibility rule: each algorithm draws from its own generator, seeded by one
draw of ``rng`` plus a hash of the algorithm's name
(:func:`scalinglab.stats.bootstrap.keyed_generators`). So the same seed gives the
same intervals bit for bit, whatever the order or the set of algorithms, the
batch size or the set of metrics requested (all metrics share the resamples).
With a ``step`` dim, each step gets its own stream keyed by ``"<algorithm>@<step>"``.

A table without absent runs is bootstrapped by the fused pass of
:mod:`scalinglab.stats.fused` (same draws, same replicates bit for bit, no
resampled tables in memory); a ragged one by the generic
:func:`~scalinglab.stats.bootstrap.stratified_replicates`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import (
    bca_interval,
    compact_runs,
    jackknife_runs,
    keyed_generators,
    percentile_interval,
    progress_bar,
    stack_statistics,
    stratified_replicates,
)
from scalinglab.stats.fused import fused_replicates
from scalinglab.stats.layout import check_scores
from scalinglab.stats.metrics import AGGREGATES, optimality_gap, resolve_metrics

__all__ = ["METHODS", "interval_estimates", "table_interval", "table_replicates"]

#: Interval methods.
METHODS = ("percentile", "bca")

#: Default metric names, in output order.
DEFAULT_METRICS = ("iqm", "median", "mean", "optimality_gap")


def _metric_functions(names: Sequence[str], gamma: float):
    fns = []
    for name in names:
        if name == "optimality_gap" and gamma != 1.0:
            fns.append(lambda x, g=gamma: optimality_gap(x, g))
        else:
            fns.append(AGGREGATES[name])
    return fns


def table_replicates(
    values: np.ndarray,
    metrics: Sequence[str],
    *,
    reps: int,
    rng: np.random.Generator,
    task_bootstrap: bool = False,
    batch_size: int | None = None,
    gamma: float = 1.0,
    on_batch=None,
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
        stack_statistics(_metric_functions(metrics, gamma)),
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
    on_batch=None,
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
    statistic = stack_statistics(_metric_functions(metrics, gamma))
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
    else:
        jk = jackknife_runs(values, statistic)
        lo, hi = bca_interval(reps_arr, point, jk, level=level)
    return point, np.asarray(lo), np.asarray(hi)


def interval_estimates(
    scores: xr.DataArray,
    *,
    metrics: Sequence[str] | str = DEFAULT_METRICS,
    reps: int = 50_000,
    level: float = 0.95,
    method: str = "percentile",
    rng: np.random.Generator,
    task_bootstrap: bool = False,
    batch_size: int | None = None,
    gamma: float = 1.0,
    progress: bool | None = None,
    workers: int | None = None,
) -> xr.Dataset:
    """Stratified-bootstrap interval estimates of aggregate metrics per algorithm.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)`` in any order, optionally ``step``;
        NaN = absent run (ragged run counts per task are fine).
    metrics
        Names among ``iqm``, ``median``, ``mean``, ``optimality_gap``.
    reps
        Bootstrap replicates (paper default 50,000).
    level
        Confidence level of the two-sided interval.
    method
        ``"percentile"`` or ``"bca"`` (jackknife over runs, see
        :func:`scalinglab.stats.bootstrap.jackknife_runs`).
    rng
        Source of randomness (see the module docstring for the stream rule).
    task_bootstrap
        Resample tasks as well as runs (uncertainty over the task population).
    batch_size
        Replicates per batch; default keeps a batch below ~256 MB. Never
        changes the result.
    gamma
        Threshold of the optimality gap.
    progress
        Progress bar on stderr: None = only for long jobs.
    workers
        Threads bootstrapping algorithms (and steps) concurrently; default: the
        CPU count. Never changes the result.

    Returns
    -------
    xarray.Dataset
        Variables ``point``, ``lo``, ``hi`` with dims ``(algorithm, metric)``
        (plus ``step`` if present); attrs ``reps``, ``level``, ``method``,
        ``task_bootstrap``.
    """
    names = resolve_metrics(metrics)
    if method not in METHODS:
        raise InputError(f"unknown interval method {method!r}; choose from {list(METHODS)}")
    if int(reps) < 1:
        raise InputError(f"reps must be >= 1, got {reps}")
    if not 0 < level < 1:
        raise InputError(f"confidence level must be in (0, 1), got {level}")
    checked = check_scores(scores, optional=("step",))
    has_step = "step" in checked.dims
    steps = list(checked.coords["step"].values) if has_step else [None]
    algorithms = [str(a) for a in checked.coords["algorithm"].values]
    keys = [a if s is None else f"{a}@{s}" for s in steps for a in algorithms]
    gens = keyed_generators(rng, keys)
    shape = (len(algorithms), len(names), len(steps))
    point, lo, hi = (np.empty(shape) for _ in range(3))
    work = float(reps) * len(keys) * checked.sizes["run"] * checked.sizes["task"]
    jobs = []
    for s_i, step in enumerate(steps):
        values = (checked if step is None else checked.isel(step=s_i)).values
        for a_i, alg in enumerate(algorithms):
            jobs.append((a_i, s_i, values[a_i], gens[alg if step is None else f"{alg}@{step}"]))
    n_workers = min(len(jobs), workers if workers is not None else os.cpu_count() or 1)
    if n_workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    with progress_bar(reps * len(keys), work=work, progress=progress, desc="bootstrap") as bar:

        def one(job):
            a_i, s_i, table, gen = job
            return (
                a_i,
                s_i,
                table_interval(
                    table,
                    names,
                    reps=int(reps),
                    level=level,
                    method=method,
                    rng=gen,
                    task_bootstrap=task_bootstrap,
                    batch_size=batch_size,
                    gamma=gamma,
                    on_batch=bar.update,
                ),
            )

        # Each job draws from its own generator, so threads (the bootstrap
        # releases the GIL) never change a result.
        if n_workers == 1:
            results = [one(job) for job in jobs]
        else:
            with ThreadPoolExecutor(max_workers=n_workers) as pool:
                results = list(pool.map(one, jobs))
    for a_i, s_i, (p, low, high) in results:
        point[a_i, :, s_i], lo[a_i, :, s_i], hi[a_i, :, s_i] = p, low, high
    dims = ("algorithm", "metric", "step")
    coords = {"algorithm": checked.coords["algorithm"].values, "metric": list(names), "step": steps}
    ds = xr.Dataset(
        {"point": (dims, point), "lo": (dims, lo), "hi": (dims, hi)},
        coords=coords,
        attrs={
            "reps": int(reps),
            "level": float(level),
            "method": method,
            "task_bootstrap": int(bool(task_bootstrap)),
            "streams": "per algorithm: keyed_generators(rng, algorithm name)",
        },
    )
    if not has_step:
        ds = ds.isel(step=0, drop=True)
    return ds
