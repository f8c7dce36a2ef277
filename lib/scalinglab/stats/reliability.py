"""How reliable are the analysis' own conclusions: CIs for rank flips and relative CI widths.

Two statistics of the interval-estimates study are not aggregate scores but
properties of the *analysis*: how often a few-run study orders algorithms unlike
the full data (claim 1), and how much wider the median's CI is than the IQM's
(claim 3). Their uncertainty comes from the finite set of runs we have, so their
intervals come from an **outer stratified bootstrap over runs**
(:func:`resample_scores`): every outer replicate resamples, for each algorithm
and task independently, the task's runs with replacement (the same scheme as
the inner bootstrap, :func:`scalinglab.stats.bootstrap.stratified_indices`),
and recomputes the whole statistic (subsampling draws or inner bootstrap) on
it. The point estimate is the statistic on the data itself.

Caveat (documented in findings): in an outer replicate, a few-run subsample
drawn without replacement may contain copies of one original run, which makes
few-run estimates look slightly *less* variable; the interval is thus, if
anything, conservative about how often rankings flip.

Streams: the outer resamples of an algorithm are keyed by its name
(:func:`scalinglab.stats.bootstrap.keyed_generators`); inner computations use
one generator per outer replicate spawned from a separate child of ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import xarray as xr

from scalinglab.estimate import quantile_mc_se
from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import (
    compact_runs,
    keyed_generators,
    percentile_interval,
    stratified_indices,
)
from scalinglab.stats.intervals import interval_estimates
from scalinglab.stats.layout import algorithm_tables, check_scores
from scalinglab.stats.metrics import AGGREGATES, resolve_metrics
from scalinglab.stats.variability import rank_flip_probability, subsample_point_estimates

__all__ = [
    "ci_width_ratio",
    "few_run_variability",
    "outer_bootstrap",
    "resample_scores",
    "run_count_grid",
]

#: Summaries of rank agreement reported by :func:`few_run_variability`.
FLIP_STATISTICS = ("pair_flip_rate", "winner_change_rate", "ranking_change_rate")


def resample_scores(scores: xr.DataArray, *, reps: int, rng: np.random.Generator) -> np.ndarray:
    """Outer stratified bootstrap resamples of a whole score array.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)`` (any order); NaN = absent run.

    Returns
    -------
    numpy.ndarray
        Shape ``(reps, algorithm, run, task)``: in each replicate every
        (algorithm, task) cell's present runs are resampled with replacement;
        absent runs stay NaN (ragged counts are kept).
    """
    checked = check_scores(scores)
    tables = algorithm_tables(checked)
    gens = keyed_generators(rng, list(tables))
    runs = checked.sizes["run"]
    out = np.full((int(reps), len(tables), runs, checked.sizes["task"]), np.nan)
    for a_i, (name, values) in enumerate(tables.items()):
        table, n_runs = compact_runs(values)
        idx = stratified_indices(gens[name], n_runs, size=int(reps))
        out[:, a_i, : table.shape[0]] = np.take(table.ravel(), idx)
    return out


def run_count_grid(scores: xr.DataArray, *, smallest: int = 3, points: int = 6) -> list[int]:
    """Roughly log-spaced run counts from ``smallest`` up to the most runs any algorithm has.

    An algorithm's own count is the fewest present runs over its tasks; the grid
    ends at the largest such count, so each algorithm's curve in
    :func:`scalinglab.stats.variability.ci_width_vs_runs` goes up to its own
    count (an algorithm with 5 runs does not cut the curve of one with 100).

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``; NaN = absent run.

    Returns
    -------
    list of int
        Increasing; ends at the largest per-algorithm count and holds every
        algorithm's own count that is at least ``smallest``.
    """
    checked = check_scores(scores).transpose("algorithm", "run", "task")
    own = (~np.isnan(checked.values)).sum(axis=1).min(axis=1)  # (A,)
    most = int(own.max())
    if most <= smallest:
        return [most]
    grid = np.round(np.geomspace(smallest, most, max(2, points))).astype(int)
    return sorted({int(n) for n in grid} | {int(n) for n in own if n >= smallest})


def outer_bootstrap(
    scores: xr.DataArray,
    statistic: Callable[[xr.DataArray, np.random.Generator], np.ndarray],
    *,
    reps: int,
    level: float = 0.95,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Percentile CI of any statistic of a score array, by resampling runs.

    Parameters
    ----------
    statistic
        ``f(scores, generator) -> array of shape S`` (scores with the dims and
        coords of ``scores``; the generator is for any randomness inside ``f``).
    reps
        Outer replicates (each calls ``statistic`` once).

    Returns
    -------
    dict
        ``point``, ``lo``, ``hi`` (shape S), ``replicates`` (shape ``(reps, *S)``) and
        ``mc_se_lo``, ``mc_se_hi`` (shape S): the Monte Carlo standard errors of the ends
        (:func:`scalinglab.estimate.quantile_mc_se`).
    """
    if int(reps) < 2:
        raise InputError(f"outer bootstrap needs reps >= 2, got {reps}")
    checked = check_scores(scores)
    resample_rng, point_rng, inner_rng = rng.spawn(3)
    point = np.asarray(statistic(checked, point_rng), dtype=float)
    data = resample_scores(checked, reps=reps, rng=resample_rng)
    inner = inner_rng.spawn(int(reps))
    template = checked.copy(deep=True)
    reps_arr = np.empty((int(reps), *point.shape))
    for b in range(int(reps)):
        template.values[...] = data[b]
        reps_arr[b] = statistic(template, inner[b])
    lo, hi = percentile_interval(reps_arr, level=level, axis=0)
    se_lo, se_hi = (
        np.apply_along_axis(lambda d, q=q: quantile_mc_se(d[np.isfinite(d)], q), 0, reps_arr)
        for q in ((1 - level) / 2, (1 + level) / 2)
    )
    return {
        "point": point,
        "lo": np.asarray(lo),
        "hi": np.asarray(hi),
        "replicates": reps_arr,
        "mc_se_lo": np.asarray(se_lo, dtype=float),
        "mc_se_hi": np.asarray(se_hi, dtype=float),
    }


def _flip_summary(estimates: xr.DataArray, reference: xr.DataArray) -> np.ndarray:
    """``(3, K)``: mean pairwise flip rate, winner-change rate, ranking-change rate."""
    flips = rank_flip_probability(estimates, reference)
    pair = flips["pair_flip"].values  # (A, A, K), NaN on diagonal / tied references
    with np.errstate(invalid="ignore"):
        pair_mean = np.nanmean(pair.reshape(-1, pair.shape[-1]), axis=0)
    return np.stack([pair_mean, flips["winner_changed"].values, flips["ranking_changed"].values])


def _full_points(scores: xr.DataArray, names: Sequence[str]) -> xr.DataArray:
    vals = np.stack([AGGREGATES[m](scores.values) for m in names], axis=-1)  # (A, K)
    return xr.DataArray(
        vals,
        dims=("algorithm", "metric"),
        coords={"algorithm": scores.coords["algorithm"].values, "metric": list(names)},
    )


def few_run_variability(
    scores: xr.DataArray,
    *,
    n_runs: int,
    draws: int = 1000,
    metrics: Sequence[str] | str = tuple(AGGREGATES),
    reps: int = 200,
    level: float = 0.95,
    rng: np.random.Generator,
) -> xr.Dataset:
    """Few-run point estimates, and how often they rank algorithms unlike all runs (claim 1).

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``; needs at least 2 algorithms.
    n_runs
        Runs per task a "few-run study" has (e.g. 3).
    draws
        Few-run subsamples (without replacement) per algorithm.
    reps
        Outer bootstrap replicates for the CIs of the flip rates.

    Returns
    -------
    xarray.Dataset
        ``estimate`` dims ``(draw, algorithm, metric)`` (few-run point
        estimates); ``full`` dims ``(algorithm, metric)`` (all runs);
        ``point``, ``lo``, ``hi`` dims ``(statistic, metric)`` with statistic in
        :data:`FLIP_STATISTICS`: ``pair_flip_rate`` = mean over algorithm pairs
        of the fraction of draws ordering the pair unlike all runs;
        ``winner_change_rate`` = fraction of draws with another best algorithm;
        ``ranking_change_rate`` = fraction of draws with any change of order.
    """
    names = resolve_metrics(metrics)
    checked = check_scores(scores)
    if checked.sizes["algorithm"] < 2:
        raise InputError("few-run rank flips need at least 2 algorithms")
    est_rng, boot_rng = rng.spawn(2)
    estimates = subsample_point_estimates(
        checked, n_runs=n_runs, draws=draws, metrics=names, rng=est_rng
    )
    full = _full_points(checked, names)

    def statistic(data: xr.DataArray, g: np.random.Generator) -> np.ndarray:
        if data is checked:
            return _flip_summary(estimates, full)
        est = subsample_point_estimates(data, n_runs=n_runs, draws=draws, metrics=names, rng=g)
        return _flip_summary(est, _full_points(data, names))

    res = outer_bootstrap(checked, statistic, reps=reps, level=level, rng=boot_rng)
    dims = ("statistic", "metric")
    return xr.Dataset(
        {
            "estimate": estimates,
            "full": full,
            "point": (dims, res["point"]),
            "lo": (dims, res["lo"]),
            "hi": (dims, res["hi"]),
            "mc_se_lo": (dims, res["mc_se_lo"]),
            "mc_se_hi": (dims, res["mc_se_hi"]),
        },
        coords={"statistic": list(FLIP_STATISTICS), "metric": list(names)},
        attrs={
            "n_runs": int(n_runs),
            "draws": int(draws),
            "reps": int(reps),
            "level": float(level),
            "method": "outer stratified bootstrap over runs, percentile",
        },
    )


def ci_width_ratio(
    scores: xr.DataArray,
    *,
    numerator: str = "median",
    denominator: str = "iqm",
    inner_reps: int = 2000,
    reps: int = 200,
    level: float = 0.95,
    rng: np.random.Generator,
) -> xr.Dataset:
    """Width of the ``numerator`` metric's CI over the ``denominator``'s, with a CI (claim 3).

    Widths are those of the stratified-bootstrap percentile CIs at ``level``
    with ``inner_reps`` replicates; the ratio's own interval comes from
    ``reps`` outer bootstrap replicates (:func:`outer_bootstrap`).

    Returns
    -------
    xarray.Dataset
        ``point``, ``lo``, ``hi`` with dim ``algorithm``: per-algorithm ratios,
        plus the label ``"(all)"`` for the ratio of widths averaged over algorithms.
    """
    names = resolve_metrics([numerator, denominator])
    checked = check_scores(scores)

    def statistic(data: xr.DataArray, g: np.random.Generator) -> np.ndarray:
        ci = interval_estimates(
            data, metrics=names, reps=inner_reps, level=level, rng=g, progress=False
        )
        width = (ci["hi"] - ci["lo"]).transpose("metric", "algorithm").values  # (2, A)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_alg = width[0] / width[1]
            overall = width[0].mean() / width[1].mean()
        return np.append(per_alg, overall)

    res = outer_bootstrap(checked, statistic, reps=reps, level=level, rng=rng)
    labels = [*map(str, checked.coords["algorithm"].values), "(all)"]
    return xr.Dataset(
        {v: ("algorithm", res[v]) for v in ("point", "lo", "hi", "mc_se_lo", "mc_se_hi")},
        coords={"algorithm": labels},
        attrs={
            "numerator": numerator,
            "denominator": denominator,
            "inner_reps": int(inner_reps),
            "reps": int(reps),
            "level": float(level),
            "method": "outer stratified bootstrap over runs of the CI-width ratio, percentile",
        },
    )
