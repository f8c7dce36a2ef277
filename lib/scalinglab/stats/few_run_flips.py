"""The paper's few-run quantities (IE-1), vectorised over draws and outer replicates.

Agarwal et al. 2021 show that with 3-5 runs per task the point estimate moves so
much that rankings change. This module measures exactly that, on scores with
dims ``(algorithm, run, task)``:

- the **ranking-change rate**: the fraction of ``n_runs``-run evaluations whose
  ranking of all algorithms (by a metric's point estimate) differs from the
  all-runs ranking;
- the **winner-change rate**: the fraction whose best algorithm differs;
- the **pair-flip rate**: the mean over algorithm pairs of the fraction ordering
  the pair unlike all runs;
- the **spread** of the few-run point estimates: per algorithm, the width of
  their central 95% range relative to the all-runs estimate.

A few-run evaluation draws ``n_runs`` of each task's runs without replacement
(positions drawn i.i.d. and rows with a repeated position redrawn, which is
uniform over ordered tuples of distinct runs). The interval of each rate comes
from an **outer stratified bootstrap over runs**: replicate ``b`` resamples each
(algorithm, task) cell's runs with replacement and the few-run draws of that
replicate pick positions in the resampled cell, so one gather per replicate
replaces a per-replicate Python loop; the reference ranking of replicate ``b``
is its own all-runs ranking. The interval's ends are Harrell-Davis quantiles of the
replicates' rates (which move in steps of ``1 / inner_draws``: an order statistic would
jump a step between seeds), with jackknife Monte Carlo errors. The Monte Carlo standard
error of each point rate is the standard deviation of its per-draw values over
``sqrt(draws)`` (draws are independent).

Only algorithms with more runs than ``n_runs`` in every task take part
(:func:`few_run_eligible`): with ``n_runs`` or fewer, a "few-run subsample" is
the algorithm's full data and does not vary.

Streams: one child of ``rng`` for the point draws, one for the outer resamples,
each keyed by algorithm name (:func:`scalinglab.stats.bootstrap.keyed_generators`),
so an algorithm's draws do not depend on which others are present.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy.stats.mstats import hdquantiles, hdquantiles_sd

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import (
    compact_runs,
    keyed_generators,
    stack_statistics,
    stratified_indices,
)
from scalinglab.stats.layout import algorithm_tables, check_scores
from scalinglab.stats.metrics import AGGREGATES, LOWER_IS_BETTER, resolve_metrics

__all__ = [
    "FLIP_RATES",
    "distinct_positions",
    "few_run_eligible",
    "few_run_flip_rates",
    "smooth_quantiles",
]

#: Rates reported by :func:`few_run_flip_rates`, in output order.
FLIP_RATES = ("ranking_change_rate", "winner_change_rate", "pair_flip_rate")
#: Outer replicates whose few-run draws are made and ranked together (part of the draw
#: order: each batch's positions come from one call per algorithm).
_BATCH = 50


def few_run_eligible(scores: xr.DataArray, n_runs: int) -> tuple[list[str], dict[str, str]]:
    """Algorithms with more than ``n_runs`` runs in every task, and why the others are not.

    Returns
    -------
    kept, skipped
        ``kept`` algorithm names in input order; ``skipped`` maps each other
        algorithm to a reason in words (its smallest run count).
    """
    checked = check_scores(scores)
    counts = (~np.isnan(checked.transpose("algorithm", "run", "task").values)).sum(axis=1)
    kept, skipped = [], {}
    for name, row in zip(checked.coords["algorithm"].values, counts, strict=True):
        if int(row.min()) > n_runs:
            kept.append(str(name))
        else:
            skipped[str(name)] = (
                f"{int(row.min())} runs on some task, not more than {n_runs}: its "
                f"{n_runs}-run subsamples would be (nearly) its full data"
            )
    return kept, skipped


def distinct_positions(
    rng: np.random.Generator, counts: np.ndarray, *, size: tuple[int, ...], k: int
) -> np.ndarray:
    """``k`` distinct positions per task, uniformly, for a batch of draws.

    Parameters
    ----------
    counts
        Shape ``(M,)``: available runs per task, each ``>= k``.
    size
        Leading batch shape ``S``.

    Returns
    -------
    numpy.ndarray
        Shape ``(*S, k, M)``, int64, entry ``[..., j, m]`` in ``[0, counts[m])``,
        the ``k`` entries of a draw and task distinct.
    """
    counts = np.asarray(counts, dtype=np.int64)
    if np.any(counts < k):
        raise InputError(f"need at least {k} runs per task to draw {k} distinct ones")
    shape = (*size, k, counts.size)
    pos = np.floor(rng.random(shape) * counts).astype(np.int64)
    if k == 1:
        return pos
    moved = np.moveaxis(pos, -2, -1)  # (*S, M, k) view: one row per (draw, task)
    limit = np.broadcast_to(counts, moved.shape[:-1])
    rows = np.flatnonzero(_repeats(moved))  # C order over (*S, M), as a full rescan gives
    while rows.size:
        # only rows just redrawn can still repeat, and they keep their C order, so the
        # redraw order (and every draw) equals redrawing from a rescan of the whole array
        where = np.unravel_index(rows, limit.shape)
        fresh = np.floor(rng.random((rows.size, k)) * limit[where][:, None]).astype(np.int64)
        moved[where] = fresh
        rows = rows[_repeats(fresh)]
    return pos


def _repeats(rows: np.ndarray) -> np.ndarray:
    """Shape ``(..., )``: whether row ``[..., :]`` of ``rows`` ``(..., k)`` repeats a value
    (pairwise comparisons: k is a few runs, and a sort along a short axis is slower)."""
    k = rows.shape[-1]
    out = np.zeros(rows.shape[:-1], dtype=bool)
    for i in range(k - 1):
        for j in range(i + 1, k):
            out |= rows[..., i] == rows[..., j]
    return out


def _rates(est: np.ndarray, ref: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """Per-draw indicators ``(3, ..., D, K)`` of the three rates.

    ``est`` ``(..., D, A, K)`` few-run estimates, ``ref`` ``(..., A, K)`` all-runs
    ones, ``sign`` ``(K,)`` (+1 higher is better, -1 lower).
    """
    e = est * sign
    r = (ref * sign)[..., None, :, :]  # (..., 1, A, K)
    ref_rank = np.argsort(-r, axis=-2, kind="stable")
    draw_rank = np.argsort(-e, axis=-2, kind="stable")
    changed = (draw_rank != ref_rank).any(axis=-2)
    winner = draw_rank[..., 0, :] != ref_rank[..., 0, :]
    a = est.shape[-2]
    iu, ju = np.triu_indices(a, 1)
    ref_sign = np.sign(r[..., iu, :] - r[..., ju, :])  # (..., 1, P, K)
    draw_sign = np.sign(e[..., iu, :] - e[..., ju, :])  # (..., D, P, K)
    counted = ref_sign != 0
    with np.errstate(invalid="ignore", divide="ignore"):
        pair = ((draw_sign == -ref_sign) & counted).sum(axis=-2) / counted.sum(axis=-2)
    return np.stack([changed.astype(float), winner.astype(float), pair])


def smooth_quantiles(draws: Sequence[float] | np.ndarray, qs: Sequence[float]) -> tuple:
    """Harrell-Davis quantiles of ``R`` bootstrap draws and their Monte Carlo errors.

    For draws that take few distinct values (rates on a grid of ``1 / n``): an order
    statistic then jumps a whole grid step between resampling seeds, and its
    order-statistic error (:func:`scalinglab.estimate.quantile_mc_se`) reads 0 inside a run of ties and a
    step across one. The Harrell-Davis estimate weighs the order statistics around the
    quantile with Beta weights, so it moves smoothly off the grid; its standard error is
    the jackknife's (Harrell and Davis 1982). Both from ``scipy.stats.mstats``
    (``hdquantiles``, ``hdquantiles_sd``). Here rather than beside
    :func:`scalinglab.estimate.quantile_mc_se` because the flip rates are the draws on a
    grid that need it.

    Parameters
    ----------
    draws
        Shape ``(R,)``; non-finite draws are left out.
    qs
        Probabilities in ``(0, 1)``, shape ``(Q,)``.

    Returns
    -------
    ends, mc_se
        Each shape ``(Q,)``; NaN for fewer than 2 finite draws.
    """
    x = np.asarray(draws, dtype=float).ravel()
    x = x[np.isfinite(x)]
    probs = [float(q) for q in qs]
    if x.size < 2:
        return np.full(len(probs), np.nan), np.full(len(probs), np.nan)
    ends = np.asarray(np.ma.filled(hdquantiles(x, probs), np.nan), dtype=float)
    se = np.asarray(np.ma.filled(hdquantiles_sd(x, probs), np.nan), dtype=float)
    return ends, se


def few_run_flip_rates(
    scores: xr.DataArray,
    *,
    n_runs: int,
    draws: int = 1000,
    reps: int = 1000,
    inner_draws: int = 100,
    metrics: tuple[str, ...] | list[str] | str = ("iqm", "median", "mean"),
    level: float = 0.95,
    rng: np.random.Generator,
) -> xr.Dataset:
    """IE-1's rates with outer-bootstrap intervals and Monte Carlo errors, and the spread.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``; NaN = absent run. Algorithms with
        ``n_runs`` or fewer runs on some task are left out (attrs ``skipped``).
    n_runs
        Runs per task of a few-run evaluation (e.g. 3).
    draws
        Few-run evaluations behind the point rates (their Monte Carlo error is
        ``mc_se``).
    reps
        Outer bootstrap replicates behind the intervals.
    inner_draws
        Few-run evaluations per outer replicate. Their Monte Carlo noise adds to
        the outer spread, so the interval errs wide (on both sides).
    metrics
        Point estimates ranked (``optimality_gap``: lower is better).

    Returns
    -------
    xarray.Dataset
        ``point``, ``lo``, ``hi`` (Harrell-Davis quantiles of the ``reps`` outer
        replicates' rates), ``mc_se`` (of the point), ``mc_se_lo``, ``mc_se_hi`` (of
        the ends: jackknife, :func:`smooth_quantiles`) dims
        ``(statistic, metric)`` with
        statistic in :data:`FLIP_RATES`; ``estimate`` dims ``(draw, algorithm,
        metric)`` (the few-run point estimates), ``full`` dims ``(algorithm,
        metric)``, ``spread`` dims ``(algorithm, metric)``: (97.5% - 2.5%
        quantile of the few-run estimates) / |all-runs estimate|. Attrs
        ``n_runs``, ``draws``, ``reps``, ``inner_draws``, ``level``, ``method``,
        ``skipped`` (``"name: reason; ..."`` or ``""``).
    """
    names = resolve_metrics(metrics)
    if draws < 1 or inner_draws < 1 or reps < 2:
        raise InputError(
            f"need draws >= 1, inner_draws >= 1 and reps >= 2, got {draws}, {inner_draws}, {reps}"
        )
    kept, skipped = few_run_eligible(scores, n_runs)
    if len(kept) < 2:
        raise InputError(
            f"few-run rank flips need at least 2 algorithms with more than {n_runs} runs per "
            f"task; have {kept} (skipped: {skipped})"
        )
    checked = check_scores(scores).sel(algorithm=kept)
    tables = algorithm_tables(checked)
    statistic = stack_statistics([AGGREGATES[m] for m in names])
    sign = np.array([-1.0 if m in LOWER_IS_BETTER else 1.0 for m in names])
    point_rng, outer_rng = rng.spawn(2)
    point_gens = keyed_generators(point_rng, kept)
    outer_gens = keyed_generators(outer_rng, kept)
    a_n, k_n = len(kept), len(names)
    est = np.empty((draws, a_n, k_n))
    full = np.empty((a_n, k_n))
    outer_full = np.empty((reps, a_n, k_n))
    cells = []  # per algorithm: its table's values, run counts, task count, resamples, stream
    for a_i, (name, values) in enumerate(tables.items()):
        table, counts = compact_runs(values)
        m = table.shape[1]
        flat = table.ravel()
        full[a_i] = statistic(table[None])[0]
        pos = distinct_positions(point_gens[name], counts, size=(draws,), k=n_runs)
        est[:, a_i] = statistic(np.take(flat, pos * m + np.arange(m)))
        g = outer_gens[name]
        boot = stratified_indices(g, counts, size=reps)  # (B, R, M) flat indices
        outer_full[:, a_i] = statistic(np.take(flat, boot))
        # kept until the last batch: the smallest integer type that holds a flat index
        cells.append((flat, counts, m, boot.astype(np.min_scalar_type(flat.size - 1)), g))
    per_draw = _rates(est, full, sign)  # (3, D, K)
    point = np.nanmean(per_draw, axis=1)
    mc_se = np.nanstd(per_draw, axis=1, ddof=1) / np.sqrt(draws) if draws > 1 else point * np.nan
    # the outer replicates' rates, a batch of _BATCH replicates at a time (memory: the
    # few-run estimates of all replicates at once, and the pairwise signs of their rates,
    # take gigabytes at 10,000 replicates); each algorithm's stream still draws its
    # resamples first and then its batches in order, so the draws do not depend on the
    # loop's order
    outer = np.empty((len(FLIP_RATES), reps, k_n))  # (3, B, K)
    for b0 in range(0, reps, _BATCH):
        b1 = min(reps, b0 + _BATCH)
        batch = np.empty((b1 - b0, inner_draws, a_n, k_n))
        for a_i, (flat, counts, m, boot, g) in enumerate(cells):
            p = distinct_positions(g, counts, size=(b1 - b0, inner_draws), k=n_runs)
            # replicate b's resampled run at position p of task j: boot[b, p, j]
            idx = np.take_along_axis(boot[b0:b1, None], p, axis=-2)  # (b, D, k, M)
            sub = np.take(flat, idx).reshape(-1, n_runs, m)
            batch[:, :, a_i] = statistic(sub).reshape(b1 - b0, inner_draws, k_n)
        outer[:, b0:b1] = np.nanmean(_rates(batch, outer_full[b0:b1], sign), axis=2)
    # the ends and their Monte Carlo errors: Harrell-Davis quantiles of the outer rates,
    # which move in steps of 1 / inner_draws. An order statistic on that grid jumps a
    # whole step between resampling seeds, and its order-statistic error reads 0 inside a
    # run of ties and a step across one, so an end two steps from a verdict's threshold
    # cleared 2 errors under one seed and not under the next. The smooth estimate's
    # jackknife error does not jump (:func:`smooth_quantiles`)
    tail = (1.0 - level) / 2.0
    smooth = [
        [smooth_quantiles(outer[s_i, :, k_i], (tail, 1.0 - tail)) for k_i in range(k_n)]
        for s_i in range(len(FLIP_RATES))
    ]
    ends = np.array([[e for e, _ in row] for row in smooth])  # (3, K, 2)
    errors = np.array([[se for _, se in row] for row in smooth])  # (3, K, 2)
    lo, hi = ends[..., 0], ends[..., 1]
    se_lo, se_hi = errors[..., 0], errors[..., 1]
    q_lo, q_hi = np.quantile(est, [0.025, 0.975], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = (q_hi - q_lo) / np.abs(full)
    dims = ("statistic", "metric")
    return xr.Dataset(
        {
            "point": (dims, point),
            "lo": (dims, np.asarray(lo)),
            "hi": (dims, np.asarray(hi)),
            "mc_se": (dims, mc_se),
            "mc_se_lo": (dims, np.asarray(se_lo, dtype=float)),
            "mc_se_hi": (dims, np.asarray(se_hi, dtype=float)),
            "estimate": (("draw", "algorithm", "metric"), est, {"n_runs": int(n_runs)}),
            "full": (("algorithm", "metric"), full),
            "spread": (("algorithm", "metric"), spread),
        },
        coords={"statistic": list(FLIP_RATES), "metric": list(names), "algorithm": kept},
        attrs={
            "n_runs": int(n_runs),
            "draws": int(draws),
            "reps": int(reps),
            "inner_draws": int(inner_draws),
            "level": float(level),
            "method": (
                f"outer stratified bootstrap over runs ({inner_draws} few-run draws per "
                "replicate), percentile (Harrell-Davis quantiles)"
            ),
            "skipped": "; ".join(f"{k}: {v}" for k, v in skipped.items()),
        },
    )
