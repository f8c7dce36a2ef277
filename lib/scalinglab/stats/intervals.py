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
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import (
    bca_interval,
    jackknife_runs,
    keyed_generators,
    percentile_interval,
    progress_bar,
    stack_statistics,
    stratified_replicates,
)
from scalinglab.stats.layout import check_scores
from scalinglab.stats.metrics import AGGREGATES, optimality_gap, resolve_metrics

__all__ = ["METHODS", "interval_estimates", "table_interval"]

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
    point = statistic(np.asarray(values, dtype=float)[None])[0]
    reps_arr = stratified_replicates(
        values,
        statistic,
        reps=reps,
        rng=rng,
        task_bootstrap=task_bootstrap,
        batch_size=batch_size,
        n_stats=len(metrics),
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
    with progress_bar(reps * len(keys), work=work, progress=progress, desc="bootstrap") as bar:
        for s_i, step in enumerate(steps):
            data = checked if step is None else checked.isel(step=s_i)
            for a_i, alg in enumerate(algorithms):
                key = alg if step is None else f"{alg}@{step}"
                p, low, high = table_interval(
                    data.values[a_i],
                    names,
                    reps=int(reps),
                    level=level,
                    method=method,
                    rng=gens[key],
                    task_bootstrap=task_bootstrap,
                    batch_size=batch_size,
                    gamma=gamma,
                    on_batch=bar.update,
                )
                point[a_i, :, s_i], lo[a_i, :, s_i], hi[a_i, :, s_i] = p, low, high
    dims = ("algorithm", "metric", "step")
    coords = {
        "algorithm": checked.coords["algorithm"].values,
        "metric": list(names),
        "step": steps,
    }
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
