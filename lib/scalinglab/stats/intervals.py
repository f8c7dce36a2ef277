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

The engine, on plain ``(run, task)`` tables, is
:mod:`scalinglab.stats.table_intervals` (its names are re-exported here): a
table without absent runs is bootstrapped by the fused compiled pass of
:mod:`scalinglab.stats.fused` (same draws, same replicates bit for bit, no
resampled tables in memory), a ragged one by the generic
:func:`~scalinglab.stats.bootstrap.stratified_replicates`; algorithms run on
threads without changing any number.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from scalinglab.stats.layout import check_scores
from scalinglab.stats.metrics import resolve_metrics
from scalinglab.stats.table_intervals import (
    DEFAULT_METRICS,
    METHODS,
    check_options,
    table_interval,
    table_replicates,
    tables_intervals,
)

__all__ = ["DEFAULT_METRICS", "METHODS", "interval_estimates", "table_interval", "table_replicates"]


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
        ``"percentile"``, ``"bca"`` (jackknife over runs, see
        :func:`scalinglab.stats.bootstrap.jackknife_runs`), or rliable's
        ``"basic"`` (reverse percentile) and ``"bc"`` (bias-corrected percentile).
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
        (plus ``step`` if present); attrs ``reps``, ``level``, ``method`` (in words,
        e.g. ``"stratified bootstrap, percentile"``: a cell is an
        :meth:`~scalinglab.estimate.Estimate.from_cell`),
        ``task_bootstrap``.
    """
    names = resolve_metrics(metrics)
    check_options(method=method, reps=reps, level=level)
    checked = check_scores(scores, optional=("step",))
    has_step = "step" in checked.dims
    steps = list(checked.coords["step"].values) if has_step else [None]
    algorithms = [str(a) for a in checked.coords["algorithm"].values]
    keys, tables = [], []
    for s_i, step in enumerate(steps):
        values = (checked if step is None else checked.isel(step=s_i)).values
        for a_i, alg in enumerate(algorithms):
            keys.append(alg if step is None else f"{alg}@{step}")
            tables.append(values[a_i])
    flat = tables_intervals(
        tables,
        keys,
        metrics=names,
        reps=int(reps),
        level=level,
        method=method,
        rng=rng,
        task_bootstrap=task_bootstrap,
        batch_size=batch_size,
        gamma=gamma,
        progress=progress,
        workers=workers,
    )
    # (step, algorithm, metric) -> (algorithm, metric, step)
    point, lo, hi = (
        np.moveaxis(a.reshape(len(steps), len(algorithms), len(names)), 0, -1) for a in flat
    )
    dims = ("algorithm", "metric", "step")
    coords = {"algorithm": checked.coords["algorithm"].values, "metric": list(names), "step": steps}
    ds = xr.Dataset(
        {"point": (dims, point), "lo": (dims, lo), "hi": (dims, hi)},
        coords=coords,
        attrs={
            "reps": int(reps),
            "level": float(level),
            "method": f"stratified bootstrap, {method}",
            "task_bootstrap": int(bool(task_bootstrap)),
            "streams": "per algorithm: keyed_generators(rng, algorithm name)",
        },
    )
    if not has_step:
        ds = ds.isel(step=0, drop=True)
    return ds
