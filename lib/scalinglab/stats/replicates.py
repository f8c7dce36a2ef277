"""The bootstrap replicates behind interval estimates, as ArviZ data: HDI next to percentile.

:func:`scalinglab.stats.intervals.interval_estimates` keeps only the ends of each
percentile interval (rliable's default). A reader who asks *what the bootstrap
distribution looks like* (is it skewed? would the shortest interval holding the
same mass sit elsewhere?) needs the replicates themselves.
:func:`metric_replicates` returns them, drawn from the same name-keyed streams, so
for the same ``rng`` state they are exactly the replicates behind
``interval_estimates``'s percentile intervals.

Why arviz: it is the standard container and toolbox for a set of draws. Once the
replicates are an :class:`arviz.InferenceData` (:func:`to_inference_data`), the
highest-density interval (``az.hdi``: the shortest interval holding ``level`` of
the draws), ``az.summary`` and ``az.plot_forest`` (the rliable-style interval
plot, :func:`scalinglab.plots.intervals.plot_bootstrap_forest`) come from a
tested library instead of code written here. ArviZ files draws under the group
named ``posterior``; here they are bootstrap replicates, not a Bayesian posterior
(one "chain", the replicates as "draws").

:func:`interval_crosscheck` puts the percentile interval (ours) and the HDI (arviz)
side by side. For a symmetric, unimodal replicate distribution they coincide
(up to the discreteness of the draws); where they differ the distribution is
skewed (few runs, the median of few tasks), and the report's percentile interval
should be read as "the middle ``level`` of the replicates", not as the most
plausible values. arviz is imported only by the functions that use it (its
import takes seconds; the ``scalinglab intervals`` command never needs it).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import keyed_generators, percentile_interval
from scalinglab.stats.intervals import DEFAULT_METRICS, table_replicates
from scalinglab.stats.layout import check_scores
from scalinglab.stats.metrics import resolve_metrics

__all__ = ["interval_crosscheck", "metric_replicates", "to_inference_data"]


def metric_replicates(
    scores: xr.DataArray,
    *,
    metrics: str | tuple[str, ...] | list[str] = DEFAULT_METRICS,
    reps: int = 50_000,
    rng: np.random.Generator,
    task_bootstrap: bool = False,
    gamma: float = 1.0,
    workers: int | None = None,
) -> xr.DataArray:
    """Stratified-bootstrap replicates of aggregate metrics, per algorithm.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)`` in any order; NaN = absent run.
    metrics
        Names among ``iqm``, ``median``, ``mean``, ``optimality_gap``.
    reps
        Replicates per algorithm.
    rng
        Source of randomness: each algorithm draws from
        ``keyed_generators(rng, algorithms)[name]``, as in
        :func:`~scalinglab.stats.intervals.interval_estimates`.
    task_bootstrap, gamma
        As in :func:`~scalinglab.stats.intervals.interval_estimates`.
    workers
        Threads bootstrapping algorithms concurrently (default: the CPU count);
        never changes the result.

    Returns
    -------
    xarray.DataArray
        Dims ``(algorithm, replicate, metric)``, float64; attrs ``reps``,
        ``task_bootstrap``.
    """
    names = resolve_metrics(metrics)
    if int(reps) < 1:
        raise InputError(f"reps must be >= 1, got {reps}")
    checked = check_scores(scores)
    algorithms = [str(a) for a in checked.coords["algorithm"].values]
    gens = keyed_generators(rng, algorithms)
    values = checked.values

    def one(i: int) -> np.ndarray:
        return table_replicates(
            values[i],
            names,
            reps=int(reps),
            rng=gens[algorithms[i]],
            task_bootstrap=task_bootstrap,
            gamma=gamma,
        )

    n_workers = max(1, min(len(algorithms), workers or os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=n_workers) as pool:
        out = np.stack(list(pool.map(one, range(len(algorithms)))))
    return xr.DataArray(
        out,
        dims=("algorithm", "replicate", "metric"),
        coords={"algorithm": checked.coords["algorithm"].values, "metric": list(names)},
        name="replicates",
        attrs={"reps": int(reps), "task_bootstrap": int(bool(task_bootstrap))},
    )


def to_inference_data(replicates: xr.DataArray) -> Any:
    """The replicates as an :class:`arviz.InferenceData`.

    Parameters
    ----------
    replicates
        Dims ``(algorithm, replicate, metric)`` (:func:`metric_replicates`).

    Returns
    -------
    arviz.InferenceData
        Group ``posterior``: one variable per metric, dims ``(chain, draw,
        algorithm)`` with a single chain and the replicates as draws.
    """
    import arviz as az

    da = replicates.transpose("replicate", "algorithm", "metric")
    algorithms = [str(a) for a in da.coords["algorithm"].values]
    posterior = {str(m): da.sel(metric=m).values[None] for m in da.coords["metric"].values}
    return az.from_dict(
        posterior=posterior,
        coords={"algorithm": algorithms},
        dims={name: ["algorithm"] for name in posterior},
    )


def interval_crosscheck(replicates: xr.DataArray, *, level: float = 0.95) -> xr.Dataset:
    """Percentile interval (ours) and highest-density interval (arviz) of each replicate set.

    Parameters
    ----------
    replicates
        Dims ``(algorithm, replicate, metric)`` (:func:`metric_replicates`).
    level
        Probability mass of both intervals.

    Returns
    -------
    xarray.Dataset
        Dims ``(algorithm, metric)``; variables ``percentile_lo``,
        ``percentile_hi`` (:func:`~scalinglab.stats.bootstrap.percentile_interval`,
        the intervals the study reports), ``hdi_lo``, ``hdi_hi`` (``az.hdi``: the
        shortest interval holding ``level`` of the replicates) and ``width_ratio``
        (HDI width / percentile width: 1 for a symmetric distribution, lower as it
        grows skewed).
    """
    import arviz as az

    if not 0 < level < 1:
        raise InputError(f"level must be in (0, 1), got {level}")
    da = replicates.transpose("algorithm", "metric", "replicate")
    lo, hi = percentile_interval(da.values, level=level, axis=-1)
    hdi = az.hdi(to_inference_data(replicates), hdi_prob=level)
    metrics = [str(m) for m in da.coords["metric"].values]
    hdi_lo = np.stack([hdi[m].sel(hdi="lower").values for m in metrics], axis=-1)
    hdi_hi = np.stack([hdi[m].sel(hdi="higher").values for m in metrics], axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = (hdi_hi - hdi_lo) / (hi - lo)
    dims = ("algorithm", "metric")
    return xr.Dataset(
        {
            "percentile_lo": (dims, lo),
            "percentile_hi": (dims, hi),
            "hdi_lo": (dims, hdi_lo),
            "hdi_hi": (dims, hdi_hi),
            "width_ratio": (dims, ratio),
        },
        coords={"algorithm": da.coords["algorithm"].values, "metric": metrics},
        attrs={"level": float(level), "reps": int(da.sizes["replicate"])},
    )
