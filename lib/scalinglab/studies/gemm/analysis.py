"""Statistics of GEMM timings: how much the tile matters, and speed ratios, with CIs.

Input: the long table of timed calls (one row per call: ``M, N, K, tile_m, tile_n,
tile_k, seconds``; :func:`scalinglab.studies.gemm.timings.timings_table` or a user's
file via :func:`~scalinglab.studies.gemm.timings.load_timings`). Every interval is a
percentile bootstrap that resamples the repeats of each (shape, tile) cell
independently (:func:`scalinglab.stats.bootstrap.resample_groups`) and, with
``between_sigma > 0``, multiplies each replicate cell median by a log-normal factor
of that standard deviation: the cell-to-cell noise that a new process adds and that
repeats inside one process do not show
(:func:`scalinglab.studies.gemm.machine.between_process_sigma`).

- :func:`tile_effects`: per shape, the best and worst tile and the ratio of their
  median times. Best and worst are **re-selected in every replicate** (the
  statistic is a selection, so its bootstrap must select too); the interval is the
  replicates' percentile interval shifted by twice their median selection bias (on the
  log scale: centred on the bias-corrected ratio), widened to hold the point, and never
  below 1 (a worst/best ratio cannot). Its coverage at the sweep's repeats is measured
  by :mod:`scalinglab.studies.gemm.coverage`.
- :func:`max_tile_effect`: the largest (the paper's "up to") or median such ratio
  over shapes, re-selected per shape and per replicate in the same way.
- :func:`largest_effect`: an interval for the largest *true* tile effect over shapes
  without a bootstrap of a maximum: the largest per-shape upper end, and the largest
  per-shape lower end at a Bonferroni-adjusted level (simultaneous over shapes), read
  from :func:`tile_effects`'s table with ``simultaneous=True``, so that the per-shape
  intervals and the largest's come from one set of draws.
- :func:`tile_effect_change`: per shape, the tile effect of one sweep over another's
  (e.g. the kernel before and after a change), both re-selected in every replicate.
- :func:`speed_ratio`: one kernel's speed as a fraction of a baseline's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalinglab.estimate import quantile_mc_se
from scalinglab.stats.bootstrap import percentile_interval, resample_groups
from scalinglab.stats.group_means import ratio_of_medians
from scalinglab.studies.gemm.timings import SHAPE, TILE


def _bootstrap_cells(
    timings: pd.DataFrame, *, reps: int, seed: int, between_sigma: float = 0.0
) -> list[tuple]:
    """Per shape: (shape, tile labels, cell medians, replicate medians ``(reps, tiles)``).

    Every (shape, tile) cell's repeats are resampled with replacement, independently,
    and each replicate median is multiplied by ``exp(N(0, between_sigma))``.
    """
    rng = np.random.default_rng(seed)
    out = []
    for shape, df in timings.groupby(SHAPE, sort=False):
        groups = list(df.groupby(TILE, sort=True))
        cells = [g["seconds"].to_numpy() for _, g in groups]
        labels = ["x".join(map(str, t)) for t, _ in groups]
        med = np.array([np.median(c) for c in cells])
        boot = np.stack(
            [np.median(c[resample_groups(rng, len(c), reps)], axis=1) for c in cells], axis=1
        )
        if between_sigma > 0:
            boot = boot * np.exp(rng.normal(0.0, between_sigma, size=boot.shape))
        out.append((shape, labels, med, boot))
    return out


def _shift(bias: float, debias: bool) -> float:
    """How far to move log replicates whose median lies ``bias`` above the log point: to
    the point, and with ``debias`` on by the bias again where it is positive (a selection
    only biases upward; a negative median bias is the coarseness of a median of a few
    repeats, not a selection, and is not doubled)."""
    return bias + (max(bias, 0.0) if debias else 0.0)


def _shifted_logs(point: float, replicates: np.ndarray, debias: bool) -> np.ndarray:
    """``(reps,)`` log replicates shifted as :func:`selection_interval` shifts them."""
    logs = np.log(np.asarray(replicates, float))
    return logs - _shift(np.nanmedian(logs) - np.log(point), debias)


def simultaneous_reps(n_shapes: int, *, reps: int, level: float, tail_draws: int) -> int:
    """Resamples for a lower end at the Bonferroni-adjusted level over ``n_shapes``
    (its tail ``(1 - level) / (2 n_shapes)``) to hold at least ``tail_draws``
    replicates, and never fewer than ``reps``."""
    q_lo = (1.0 - level) / (2 * n_shapes)
    return max(int(reps), int(np.ceil(tail_draws / q_lo)))


def selection_interval(
    point: float,
    replicates: np.ndarray,
    *,
    level: float = 0.95,
    floor: float | None = None,
    debias: bool = False,
) -> tuple[float, float]:
    """Percentile interval of a selected statistic's replicates, bias-shifted.

    Selecting the largest of noisy values (a worst tile, a maximum over shapes) in
    every replicate biases the replicates upward. The replicates are shifted on the
    log scale so that their median equals ``point`` before taking percentiles (the
    bootstrap's own estimate of the selection bias is removed), so the interval
    always holds the point; ``floor`` clips the lower end (1 for a worst/best ratio).

    With ``debias`` the replicates are shifted on by the bootstrap's selection bias (where
    positive), to a median of the point less that bias (the bias-corrected estimate), and
    the interval is then widened to hold the point. The point itself is biased by the selection (the
    slowest of 27 noisy tiles is slower than the slowest true one), so an interval
    centred on it misses the truth from above: on simulated sweeps resampled from the
    committed sweep's repeats, a worst/best ratio's 95% interval covers about 0.89
    centred on the point and 0.94 bias-corrected (:mod:`.coverage`).

    Parameters
    ----------
    point
        The statistic on the data (> 0).
    replicates
        ``(reps,)`` the statistic re-selected in each replicate (> 0).
    """
    lo, hi = percentile_interval(_shifted_logs(point, replicates, debias), level=level)
    # the point is held: inside up to rounding in exp(log(.)), or by widening (debias)
    lo, hi = min(float(np.exp(lo)), point), max(float(np.exp(hi)), point)
    if floor is not None:
        lo, hi = max(lo, floor), max(hi, floor)
    return lo, hi


def tile_effects(
    timings: pd.DataFrame,
    *,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    between_sigma: float = 0.0,
    debias: bool = True,
    simultaneous: bool = False,
    tail_draws: int = 25,
) -> pd.DataFrame:
    """Per shape: the best and worst tile and how much the choice matters.

    ``ratio = max over tiles of the median time / min over tiles``, best and worst
    picked from the medians of all repeats and picked again in every replicate
    (:func:`selection_interval`, bias-corrected with ``debias``: the point-centred
    interval covers about 0.89 at the sweep's 5 repeats, :mod:`.coverage`).
    ``best_share`` is how often the best tile stays best.

    With ``simultaneous``, the same replicates also give each shape's lower end at the
    Bonferroni-adjusted level over the shapes (``lo_adjusted``: the tail
    ``(1 - level) / (2 S)`` of ``S`` shapes), which :func:`largest_effect` reads; the
    resamples are raised so that tail holds at least ``tail_draws`` replicates
    (:func:`simultaneous_reps`), and every shape's interval comes from those draws. One
    set of draws for both: a shape's upper end is then never above the largest's (it
    is one of those it is the largest of), and its adjusted lower end never above the
    largest's lower end nor above its own ``ratio_lo``.

    Parameters
    ----------
    timings
        One row per timed call (:data:`~.timings.TIMING_COLUMNS`), e.g. the stable cells.

    Returns
    -------
    pandas.DataFrame
        One row per shape: ``M, N, K, best_tile, worst_tile, best_s, worst_s, ratio,
        ratio_lo, ratio_hi, best_share``, ``mc_se_lo, mc_se_hi`` (Monte Carlo errors of
        ``ratio_lo`` and ``ratio_hi``) and ``reps`` (resamples drawn); with
        ``simultaneous`` also ``lo_adjusted``, ``mc_se_lo_adjusted`` and
        ``adjusted_level`` (the two-sided level of each ``lo_adjusted``). Sorted by
        ``ratio`` descending.
    """
    n_shapes = timings.groupby(SHAPE).ngroups
    if n_shapes < 1:
        raise ValueError("no shapes to take the tile effect of")
    alpha = 1.0 - level
    if simultaneous:
        reps = simultaneous_reps(n_shapes, reps=reps, level=level, tail_draws=tail_draws)
    adjusted = 1.0 - alpha / n_shapes
    rows = []
    for shape, labels, med, boot in _bootstrap_cells(
        timings, reps=reps, seed=seed, between_sigma=between_sigma
    ):
        b, w = int(np.argmin(med)), int(np.argmax(med))
        ratio = med[w] / med[b]
        rep = boot.max(axis=1) / boot.min(axis=1)
        lo, hi = selection_interval(ratio, rep, level=level, floor=1.0, debias=debias)
        draws = np.exp(_shifted_logs(ratio, rep, debias))
        row = {
            "M": shape[0],
            "N": shape[1],
            "K": shape[2],
            "best_tile": labels[b],
            "worst_tile": labels[w],
            "best_s": med[b],
            "worst_s": med[w],
            "ratio": ratio,
            "ratio_lo": lo,
            "ratio_hi": hi,
            "best_share": float(np.mean(np.argmin(boot, axis=1) == b)),
            "mc_se_lo": quantile_mc_se(draws, alpha / 2),
            "mc_se_hi": quantile_mc_se(draws, 1.0 - alpha / 2),
            "reps": int(reps),
        }
        if simultaneous:
            # the same shifted draws at the adjusted level (its upper end is unused)
            row["lo_adjusted"] = selection_interval(
                ratio, rep, level=adjusted, floor=1.0, debias=debias
            )[0]
            row["mc_se_lo_adjusted"] = quantile_mc_se(draws, alpha / (2 * n_shapes))
            row["adjusted_level"] = adjusted
        rows.append(row)
    return pd.DataFrame(rows).sort_values("ratio", ascending=False).reset_index(drop=True)


def max_tile_effect(
    timings: pd.DataFrame,
    *,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    over: str = "max",
    between_sigma: float = 0.0,
) -> tuple[float, tuple[float, float], str]:
    """The largest (or median) worst/best ratio over shapes, its CI, and where the max is.

    Per shape and per replicate, best and worst are re-selected; the maximum (median)
    over shapes is recomputed in every replicate (which shape holds the maximum may
    change); the interval is :func:`selection_interval`'s.
    """
    if over not in ("max", "median"):
        raise ValueError(f"over must be 'max' or 'median', got {over!r}")
    cells = _bootstrap_cells(timings, reps=reps, seed=seed, between_sigma=between_sigma)
    points = np.array([med.max() / med.min() for _, _, med, _ in cells])
    boot = np.stack([bt.max(axis=1) / bt.min(axis=1) for _, _, _, bt in cells], axis=1)
    reduce = np.max if over == "max" else np.median
    point = float(reduce(points))
    lo, hi = selection_interval(point, reduce(boot, axis=1), level=level, floor=1.0)
    k = int(np.argmax(points))
    return point, (lo, hi), "x".join(map(str, cells[k][0]))


def largest_effect(effects: pd.DataFrame) -> tuple[dict, pd.DataFrame]:
    """An interval for ``max_s theta_s``, the largest true worst/best ratio over shapes.

    No bootstrap of the maximum (its upper end cannot pass the observed one, and its lower
    end can fall below one shape's own interval). Instead, from each shape's own
    bias-shifted replicates (:func:`selection_interval`'s, best and worst re-selected),
    read from ``effects``, :func:`tile_effects`'s table with ``simultaneous=True`` (one
    set of draws for the per-shape intervals and this one):

    - upper end: the largest per-shape upper end ``ratio_hi`` (at ``1 - a/2``,
      ``a = 1 - level``). The shape holding the true maximum is one of them, and its own
      upper end lies above its true ratio with probability ``1 - a/2``, so no adjustment
      is needed; no shape's upper end is above it;
    - lower end: the largest per-shape lower end at ``a / (2 S)`` over ``S`` shapes
      (``lo_adjusted``; Bonferroni: every shape's lower end holds at once with
      probability ``1 - a/2``, whichever shape's is the largest). It is at most the
      ``ratio_lo`` of the shape it comes from (a lower quantile of the same draws).

    The interval then covers the largest true ratio with probability at least ``level``
    whenever the per-shape intervals cover (bias-corrected, as in :func:`tile_effects`;
    their coverage at the sweep's repeats: :mod:`.coverage`). Its ends' Monte Carlo
    errors are the quantile errors of the draws they come from.

    Parameters
    ----------
    effects
        :func:`tile_effects` with ``simultaneous=True`` (columns ``lo_adjusted``,
        ``mc_se_lo_adjusted``, ``adjusted_level``, ``ratio_hi``, ``mc_se_hi``, ``reps``).

    Returns
    -------
    (dict, pandas.DataFrame)
        ``point`` (the largest observed ratio: a description), ``lo``, ``hi``,
        ``lo_shape``, ``hi_shape``, ``mc_se`` (of ``lo`` and ``hi``), ``shapes``,
        ``reps`` (used), ``adjusted_level`` (two-sided level of each lower end); and one
        row per shape: ``M, N, K, ratio, lo_adjusted, hi`` (its ``ratio_hi``), sorted by
        ``hi`` descending.

    Raises
    ------
    ValueError
        ``effects`` is empty or not simultaneous.
    """
    need = {"lo_adjusted", "mc_se_lo_adjusted", "adjusted_level", "mc_se_hi", "reps"}
    missing = sorted(need - set(effects.columns))
    if missing:
        raise ValueError(
            f"largest_effect needs tile_effects(..., simultaneous=True); columns {missing} "
            "are missing"
        )
    if effects.empty:
        raise ValueError("no shapes to take the largest tile effect over")
    table = effects.reset_index(drop=True)
    i_lo, i_hi = int(table["lo_adjusted"].idxmax()), int(table["ratio_hi"].idxmax())
    name = lambda i: "x".join(str(int(table.loc[i, c])) for c in SHAPE)  # noqa: E731
    summary = {
        "point": float(table["ratio"].max()),
        "lo": float(table.loc[i_lo, "lo_adjusted"]),
        "hi": float(table.loc[i_hi, "ratio_hi"]),
        "lo_shape": name(i_lo),
        "hi_shape": name(i_hi),
        "mc_se": (float(table.loc[i_lo, "mc_se_lo_adjusted"]), float(table.loc[i_hi, "mc_se_hi"])),
        "shapes": len(table),
        "reps": int(table["reps"].max()),
        "adjusted_level": float(table["adjusted_level"].iloc[0]),
    }
    out = table[[*SHAPE, "ratio", "lo_adjusted", "ratio_hi"]].rename(columns={"ratio_hi": "hi"})
    return summary, out.sort_values("hi", ascending=False).reset_index(drop=True)


def tile_effect_change(
    timings: pd.DataFrame,
    before: pd.DataFrame,
    *,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    between_sigma: float = 0.0,
) -> pd.DataFrame:
    """Per shape: the tile effect of ``timings`` over that of ``before`` (an earlier sweep).

    Only the (shape, tile) cells present in both are used, so both ratios pick their
    best and worst tile from the same tiles. Each sweep's repeats are resampled on
    their own (independent replicates, each with its between-process noise), the
    best and worst tile re-selected in both, and the change is ``ratio / ratio_before``
    with :func:`selection_interval` (no floor: a change can go either way).

    Parameters
    ----------
    timings, before
        Timed calls, one row per call (:data:`~.timings.TIMING_COLUMNS`).

    Returns
    -------
    pandas.DataFrame
        One row per shape in both: ``M, N, K, tiles, max_tile_k_over_K`` (how many times
        the deepest tile exceeds ``K``), ``worst_tile, ratio, ratio_lo, ratio_hi``,
        ``worst_tile_before, ratio_before, before_lo, before_hi``, ``change, change_lo,
        change_hi``; sorted by ``K``.
    """
    keys = SHAPE + TILE
    common = timings[keys].drop_duplicates().merge(before[keys].drop_duplicates(), on=keys)
    if common.empty:
        raise ValueError("the two sweeps share no (shape, tile) cell")
    now = _bootstrap_cells(
        timings.merge(common, on=keys), reps=reps, seed=seed, between_sigma=between_sigma
    )
    then = {
        c[0]: c
        for c in _bootstrap_cells(
            before.merge(common, on=keys), reps=reps, seed=seed + 1, between_sigma=between_sigma
        )
    }
    rows = []
    for shape, labels, med, boot in now:
        _, labels_b, med_b, boot_b = then[shape]
        if len(labels) < 2:
            continue
        r, rb = med.max() / med.min(), med_b.max() / med_b.min()
        rep, rep_b = boot.max(axis=1) / boot.min(axis=1), boot_b.max(axis=1) / boot_b.min(axis=1)
        lo, hi = selection_interval(r, rep, level=level, floor=1.0)
        blo, bhi = selection_interval(rb, rep_b, level=level, floor=1.0)
        clo, chi = selection_interval(r / rb, rep / rep_b, level=level)
        rows.append(
            {
                "M": shape[0],
                "N": shape[1],
                "K": shape[2],
                "tiles": len(labels),
                "max_tile_k_over_K": max(int(t.split("x")[2]) for t in labels) / shape[2],
                "worst_tile": labels[int(np.argmax(med))],
                "ratio": r,
                "ratio_lo": lo,
                "ratio_hi": hi,
                "worst_tile_before": labels_b[int(np.argmax(med_b))],
                "ratio_before": rb,
                "before_lo": blo,
                "before_hi": bhi,
                "change": r / rb,
                "change_lo": clo,
                "change_hi": chi,
            }
        )
    return pd.DataFrame(rows).sort_values(["K", "M", "N"]).reset_index(drop=True)


def speed_ratio(
    baseline_seconds: np.ndarray,
    kernel_seconds: np.ndarray,
    *,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    between_sigma: float = 0.0,
) -> tuple[float, tuple[float, float]]:
    """``median(baseline) / median(kernel)`` (the kernel's speed as a fraction of the
    baseline's) with a percentile bootstrap CI resampling each set of repeats,
    shifted to the point like :func:`selection_interval` (a ratio of medians of a
    few repeats has a skewed, discrete bootstrap distribution whose percentiles can
    miss the point).

    Parameters
    ----------
    baseline_seconds, kernel_seconds
        Repeated timings, shape ``(repeats,)`` each (NaN ignored).
    between_sigma
        Between-process noise of each median (log scale), added to both in every
        replicate (see the module docstring).
    """
    rng = np.random.default_rng(seed)
    est, boot = ratio_of_medians(baseline_seconds, kernel_seconds, rng=rng, reps=reps)
    if between_sigma > 0:
        boot = boot * np.exp(rng.normal(0.0, between_sigma * np.sqrt(2.0), size=reps))
    return est.point, selection_interval(est.point, boot, level=level)
