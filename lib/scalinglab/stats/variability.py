"""How much few-run point estimates vary (claim 1) and how CI width shrinks with runs (claim 3).

:func:`subsample_point_estimates` draws, many times, ``n_runs`` runs per task
*without* replacement from the runs available and computes each metric on the
subsample: the spread of those point estimates is what a lab with only
``n_runs`` seeds would see, and why rankings flip.
:func:`rank_flip_probability` summarises how often they flip.
:func:`ci_width_vs_runs` averages the bootstrap CI width over such subsamples
for several run counts (the IQM's interval is narrower than the median's).

Streams: keyed by algorithm name (``subsample_point_estimates``) or by
``"<algorithm>/n=<n_runs>"`` (``ci_width_vs_runs``), as in
:mod:`scalinglab.stats.intervals`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import (
    auto_batch_size,
    batches,
    compact_runs,
    keyed_generators,
    percentile_interval,
    stack_statistics,
    stratified_replicates,
)
from scalinglab.stats.layout import algorithm_tables, check_scores
from scalinglab.stats.metrics import AGGREGATES, LOWER_IS_BETTER, resolve_metrics

__all__ = [
    "ci_width_vs_runs",
    "rank_flip_probability",
    "subsample_point_estimates",
    "subsample_runs",
]


def subsample_runs(
    values: np.ndarray,
    *,
    n_runs: int,
    draws: int,
    rng: np.random.Generator,
    name: str = "",
    tasks: Sequence | None = None,
) -> np.ndarray:
    """Subsamples of ``n_runs`` runs per task, drawn without replacement.

    Parameters
    ----------
    values
        Shape ``(runs, tasks)``; NaN = absent. Run counts may be ragged: a task
        with fewer than ``n_runs`` runs contributes all of its runs to every
        subsample (NaN = absent fills the rest), as the aggregate metrics and
        ``scalinglab intervals`` accept ragged runs.
    name, tasks
        Algorithm name and task labels (kept for callers' error messages).

    Returns
    -------
    numpy.ndarray
        Shape ``(draws, n_runs, tasks)``; NaN where a task has fewer runs.
    """
    table, _available = compact_runs(values)
    if n_runs < 1:
        raise InputError(f"n_runs must be >= 1, got {n_runs}")
    if table.shape[0] < n_runs:  # every task has fewer runs: pad with absent rows
        pad = np.full((n_runs - table.shape[0], table.shape[1]), np.nan)
        table = np.vstack([table, pad])
    rows, tasks = table.shape
    keys = rng.random((draws, rows, tasks))
    keys[:, np.isnan(table)] = np.inf  # absent runs are never picked
    pick = np.argsort(keys, axis=1)[:, :n_runs, :]
    return np.take(table.ravel(), pick * tasks + np.arange(tasks))


def subsample_point_estimates(
    scores: xr.DataArray,
    *,
    n_runs: int,
    draws: int,
    metrics: Sequence[str] | str = tuple(AGGREGATES),
    rng: np.random.Generator,
) -> xr.DataArray:
    """Point estimates from random ``n_runs``-run subsamples (claim 1).

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``, any order.
    n_runs
        Runs per task in each subsample (e.g. 3 or 5).
    draws
        Number of subsamples per algorithm.

    Returns
    -------
    xarray.DataArray
        Dims ``(draw, algorithm, metric)``.
    """
    names = resolve_metrics(metrics)
    checked = check_scores(scores)
    tables = algorithm_tables(checked)
    task_labels = checked.coords["task"].values.tolist()
    gens = keyed_generators(rng, list(tables))
    statistic = stack_statistics([AGGREGATES[m] for m in names])
    out = np.empty((draws, len(tables), len(names)))
    for a_i, (name, values) in enumerate(tables.items()):
        per_draw = 64 * n_runs * values.shape[1] + 8 * values.size
        start = 0
        for size in batches(draws, auto_batch_size(per_draw, draws)):
            sub = subsample_runs(
                values, n_runs=n_runs, draws=size, rng=gens[name], name=name, tasks=task_labels
            )
            out[start : start + size, a_i] = statistic(sub)
            start += size
    return xr.DataArray(
        out,
        dims=("draw", "algorithm", "metric"),
        coords={"algorithm": checked.coords["algorithm"].values, "metric": list(names)},
        attrs={"n_runs": int(n_runs)},
        name="point_estimate",
    )


def rank_flip_probability(estimates: xr.DataArray, reference: xr.DataArray) -> xr.Dataset:
    """How often subsampled point estimates order algorithms unlike the full data.

    Parameters
    ----------
    estimates
        Dims ``(draw, algorithm, metric)`` from :func:`subsample_point_estimates`.
    reference
        Dims ``(algorithm, metric)``: point estimates on all runs (e.g.
        ``interval_estimates(...).point``).

    Returns
    -------
    xarray.Dataset
        ``pair_flip`` dims ``(algorithm, other, metric)``: fraction of draws where
        the pair's order is the reverse of the reference order (NaN on the
        diagonal and for tied references); ``ranking_changed`` dims ``(metric,)``:
        fraction of draws whose full ranking differs from the reference one;
        ``winner_changed`` dims ``(metric,)``: fraction of draws whose best
        algorithm differs (lower is better for ``optimality_gap``).
    """
    est = estimates.transpose("draw", "algorithm", "metric")
    ref = reference.transpose("algorithm", "metric").sel(
        algorithm=est.coords["algorithm"], metric=est.coords["metric"]
    )
    e = est.values  # (D, A, K)
    r = ref.values  # (A, K)
    ref_sign = np.sign(r[:, None, :] - r[None, :, :])  # (A, A, K)
    draw_sign = np.sign(e[:, :, None, :] - e[:, None, :, :])  # (D, A, A, K)
    flips = (draw_sign == -ref_sign[None]).mean(axis=0)
    flips = np.where(ref_sign == 0, np.nan, flips)
    metrics = [str(m) for m in est.coords["metric"].values]
    flip_sign = np.array([-1.0 if m in LOWER_IS_BETTER else 1.0 for m in metrics])
    ref_rank = np.argsort(-flip_sign * r, axis=0, kind="stable")  # (A, K)
    draw_rank = np.argsort(-flip_sign * e, axis=1, kind="stable")  # (D, A, K)
    changed = (draw_rank != ref_rank[None]).any(axis=1).mean(axis=0)
    winner = (draw_rank[:, 0, :] != ref_rank[None, 0, :]).mean(axis=0)
    algs = est.coords["algorithm"].values
    return xr.Dataset(
        {
            "pair_flip": (("algorithm", "other", "metric"), flips),
            "ranking_changed": (("metric",), changed),
            "winner_changed": (("metric",), winner),
        },
        coords={"algorithm": algs, "other": algs, "metric": est.coords["metric"].values},
        attrs={"draws": int(e.shape[0])},
    )


def ci_width_vs_runs(
    scores: xr.DataArray,
    run_counts: Sequence[int],
    *,
    metrics: Sequence[str] | str = ("iqm", "median"),
    reps: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator,
    draws: int = 10,
    task_bootstrap: bool = False,
) -> xr.Dataset:
    """Mean width of percentile bootstrap CIs when only ``n`` runs per task exist (claim 3).

    For each ``n`` in ``run_counts`` and each algorithm, ``draws`` subsamples of
    ``n`` runs per task are drawn without replacement; each gets a stratified
    bootstrap CI with ``reps`` replicates; widths are averaged over subsamples.
    An algorithm with fewer than ``n`` runs on some task gets NaN at ``n`` (its
    curve stops at its own run count: padding it with its full data would
    show its all-runs width as an ``n``-run width).

    Returns
    -------
    xarray.Dataset
        ``width`` (mean) and ``width_std`` (over subsamples), dims
        ``(n_runs, algorithm, metric)`` (NaN past an algorithm's run count);
        ``own_runs`` dim ``algorithm`` (fewest present runs over its tasks);
        attrs ``reps``, ``level``, ``draws``.
    """
    names = resolve_metrics(metrics)
    counts = [int(n) for n in run_counts]
    if not counts or min(counts) < 1:
        raise InputError(f"run_counts must be positive integers, got {list(run_counts)}")
    checked = check_scores(scores)
    tables = algorithm_tables(checked)
    task_labels = checked.coords["task"].values.tolist()
    keys = [f"{a}/n={n}" for n in counts for a in tables]
    gens = keyed_generators(rng, keys)
    statistic = stack_statistics([AGGREGATES[m] for m in names])
    width = np.empty((len(counts), len(tables), len(names)))
    spread = np.empty_like(width)
    own = np.array([int((~np.isnan(v)).sum(axis=0).min()) for v in tables.values()])
    for n_i, n in enumerate(counts):
        for a_i, (name, values) in enumerate(tables.items()):
            if n > own[a_i]:
                width[n_i, a_i] = spread[n_i, a_i] = np.nan
                continue
            g = gens[f"{name}/n={n}"]
            subs = subsample_runs(
                values, n_runs=n, draws=draws, rng=g, name=name, tasks=task_labels
            )
            w = np.empty((draws, len(names)))
            for d in range(draws):
                reps_arr = stratified_replicates(
                    subs[d],
                    statistic,
                    reps=int(reps),
                    rng=g,
                    task_bootstrap=task_bootstrap,
                    n_stats=len(names),
                )
                lo, hi = percentile_interval(reps_arr, level=level, axis=0)
                w[d] = hi - lo
            width[n_i, a_i] = w.mean(axis=0)
            spread[n_i, a_i] = w.std(axis=0, ddof=1) if draws > 1 else 0.0
    dims = ("n_runs", "algorithm", "metric")
    return xr.Dataset(
        {"width": (dims, width), "width_std": (dims, spread), "own_runs": ("algorithm", own)},
        coords={
            "n_runs": counts,
            "algorithm": checked.coords["algorithm"].values,
            "metric": list(names),
        },
        attrs={"reps": int(reps), "level": float(level), "draws": int(draws)},
    )
