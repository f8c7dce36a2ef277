"""The GEMM study's findings as :class:`~scalinglab.estimate.Estimate`: the number, its
interval and the words for how the interval was made, in one place.

Each function wraps one analysis of :mod:`.analysis`, :mod:`.machine`, :mod:`.predictor`,
:mod:`.gpperf` or :mod:`.gpperf_predictor` (which keep returning tuples and tables for
their figures and tests) and states its method, level and number of resamples, so the
notebook records each result with one call and never re-types them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.studies.gemm import analysis, gpperf, machine

#: Intervals that resample each (shape, tile) cell's timed repeats.
REPEATS = (
    "percentile bootstrap over repeats within each (shape, tile) cell, each "
    "replicate median times log-normal between-process noise"
)
#: Predictor scores: out-of-fold predictions, shapes resampled.
SHAPES = "percentile bootstrap over shapes (out-of-fold predictions)"
#: The paper's tables: a per-shape statistic, shapes resampled.
SHAPES_RESELECT = "percentile bootstrap over shapes (best and worst tile re-selected per shape)"
MEDIAN_OVER_SHAPES = "median over shapes, percentile bootstrap over shapes"
SPEED_RATIO = (
    "percentile bootstrap over repeats (ratio of medians), each median times "
    "log-normal between-process noise, median-bias shifted"
)


def rerun_estimate(
    point: float,
    per_process: np.ndarray,
    *,
    level: float,
    what: str = "values",
    upper: float | None = None,
    note: str | None = None,
) -> Estimate:
    """A figure measured in one process, with the interval a re-run in a new process falls
    in (:func:`.machine.rerun_interval`); ``per_process`` ``(process,)``. ``upper``: the
    figure's physical bound (1 for a fraction of a true peak); a point past it is an
    error (the figure is not what it claims to be), an interval reaching past it ends
    at it, and the note says so. ``note``: a sentence kept with the estimate."""
    if upper is not None and point > upper:
        raise ValueError(
            f"the point {point:.4g} is past the figure's physical bound {upper:g}: "
            "record it as an unbounded ratio, or bound it by the right roof"
        )
    lo, hi = machine.rerun_interval(point, per_process, level=level)
    n = int(np.asarray(per_process).size)
    if upper is not None and hi > upper:
        clip = f"the re-run interval reached {hi:.3g}, past the physical bound {upper:g}"
        note = f"{note}; {clip}" if note else clip
        hi = float(upper)
    return Estimate(
        float(point),
        lo,
        hi,
        level=level,
        method=f"re-run interval: the record's value times the spread of {n} separate "
        f"processes' {what}",
        note=note,
    )


def max_tile_effect(
    timings: pd.DataFrame,
    *,
    over: str = "max",
    reps: int,
    level: float,
    seed: int,
    between_sigma: float = 0.0,
) -> tuple[Estimate, str]:
    """:func:`.analysis.max_tile_effect` as an estimate, and the shape holding the max."""
    point, (lo, hi), where = analysis.max_tile_effect(
        timings, over=over, reps=reps, level=level, seed=seed, between_sigma=between_sigma
    )
    how = (
        "; best, worst and the max over shapes re-selected per replicate, median-bias shifted"
        if over == "max"
        else "; re-selected per replicate, median over shapes"
    )
    return Estimate(point, lo, hi, level=level, method=REPEATS + how, resamples=reps), where


#: A per-shape worst/best ratio (:func:`.analysis.tile_effects`): re-selected, centred
#: on the bias-corrected ratio (the point-centred interval covered 0.89, :mod:`.coverage`).
PER_SHAPE = (
    REPEATS + "; best and worst re-selected per replicate, replicates shifted by twice "
    "their median selection bias (bias-corrected), widened to hold the point"
)
#: The largest true tile effect over shapes (:func:`.analysis.largest_effect`).
LARGEST = (
    "largest true effect over shapes, no bootstrap of the maximum: upper end the largest "
    "per-shape upper end, lower end the largest per-shape lower end at a Bonferroni-"
    "adjusted level over the shapes, both from the per-shape intervals' own draws "
    "(per-shape intervals: " + PER_SHAPE + ")"
)


def with_coverage(est: Estimate, coverage: dict | None) -> Estimate:
    """``est`` with its method text stating the per-shape intervals' coverage measured by
    :func:`.coverage.tile_effect_coverage` (``coverage``, its dict) at the sweep's
    repeats (:func:`scalinglab.stats.coverage_report.measured_on_data`), so a verdict it
    decides states that coverage when below the target; ``est`` unchanged without one."""
    if coverage is None:
        return est
    from scalinglab.stats.coverage_report import measured_on_data

    said = measured_on_data(coverage["coverage"], coverage["n"], se=coverage["se"])
    return est.replace(method=f"{est.method}; per-shape {said}")


def largest_effect(effects: pd.DataFrame, *, level: float) -> tuple[Estimate, dict, pd.DataFrame]:
    """:func:`.analysis.largest_effect` of ``effects`` (:func:`.analysis.tile_effects`
    with ``simultaneous=True``, at ``level``) as an estimate (the point is the largest
    observed ratio; the interval is for the largest true one), its summary and per-shape
    table."""
    s, table = analysis.largest_effect(effects)
    est = Estimate(
        s["point"],
        s["lo"],
        s["hi"],
        level=level,
        method=LARGEST,
        resamples=s["reps"],
        mc_se=s["mc_se"],
        n=s["shapes"],
        note=f"lower end from {s['lo_shape']} (at {s['adjusted_level']:.4f} per shape), "
        f"upper end from {s['hi_shape']}",
    )
    return est, s, table


def tile_effect(row: Any, *, level: float, reps: int) -> Estimate:
    """One row of :func:`.analysis.tile_effects` (``ratio``, ``ratio_lo``, ``ratio_hi``;
    the resamples drawn, ``reps``, and the ends' Monte Carlo errors, ``mc_se_lo`` and
    ``mc_se_hi``, where the row has them, else ``reps`` as given and no errors)."""
    se = (getattr(row, "mc_se_lo", math.nan), getattr(row, "mc_se_hi", math.nan))
    drawn = getattr(row, "reps", None)
    return Estimate(
        float(row.ratio),
        float(row.ratio_lo),
        float(row.ratio_hi),
        level=level,
        method=PER_SHAPE,
        resamples=int(reps if drawn is None or pd.isna(drawn) else drawn),
        mc_se=None if any(math.isnan(float(v)) for v in se) else (float(se[0]), float(se[1])),
    )


def speed_ratio(
    baseline_seconds: np.ndarray,
    kernel_seconds: np.ndarray,
    *,
    reps: int,
    level: float,
    seed: int,
    between_sigma: float = 0.0,
) -> Estimate:
    """:func:`.analysis.speed_ratio` (the kernel's speed as a fraction of the baseline's)."""
    point, (lo, hi) = analysis.speed_ratio(
        baseline_seconds,
        kernel_seconds,
        reps=reps,
        level=level,
        seed=seed,
        between_sigma=between_sigma,
    )
    return Estimate(point, lo, hi, level=level, method=SPEED_RATIO, resamples=reps)


def _units(row: Any, column: str) -> int | None:
    """A row's count of resampled units (``column``), None where absent or missing."""
    v = getattr(row, column, None)
    return None if v is None or pd.isna(v) else int(v)


def accuracy(row: Any, *, level: float, reps: int) -> dict[str, Estimate]:
    """``{"r2_log": ..., "mape": ...}`` of one row of :func:`.predictor.accuracy`; ``n``
    is the number of shapes resampled."""
    n = _units(row, "n_shapes")
    return {
        "r2_log": Estimate(
            float(row.r2_log),
            float(row.r2_lo),
            float(row.r2_hi),
            level=level,
            method=SHAPES,
            resamples=reps,
            n=n,
        ),
        "mape": Estimate(
            float(row.mape),
            float(row.mape_lo),
            float(row.mape_hi),
            level=level,
            method=SHAPES,
            resamples=reps,
            n=n,
        ),
    }


def gpperf_accuracy(row: Any, *, level: float, reps: int, n_repeats: int) -> Estimate:
    """One row of :func:`.gpperf_predictor.predictor_accuracy` (its ``interval`` says how):
    ``reps`` resamples for a bootstrap, else ``n_repeats`` random splits; the ends' Monte
    Carlo errors (``mc_se_lo``, ``mc_se_hi``) where the row has them, so a verdict within
    their reach of its threshold reads inconclusive (Monte Carlo); the row's own
    ``level`` where it has one (the exact coverage of a range of split scores), else
    ``level``."""
    se = (getattr(row, "mc_se_lo", math.nan), getattr(row, "mc_se_hi", math.nan))
    own = getattr(row, "level", None)
    return Estimate(
        float(row.point),
        float(row.lo),
        float(row.hi),
        level=level if own is None or pd.isna(own) else float(own),
        method=str(row.interval),
        resamples=reps if "bootstrap" in str(row.interval) else n_repeats,
        n=_units(row, "n_units"),
        mc_se=None if all(math.isnan(float(v)) for v in se) else (float(se[0]), float(se[1])),
    )


def gpperf_tile_summary(row: Any, *, level: float, reps: int) -> Estimate:
    """One row (``point, lo, hi``, ``n_shapes``, ``interval``) of
    :func:`.gpperf.tile_effect_summary`: its method is the row's ``interval``
    (:data:`SHAPES_RESELECT` without one); ``n`` is the number of shapes."""
    how = getattr(row, "interval", None)
    method = SHAPES_RESELECT if how is None or pd.isna(how) else str(how)
    return Estimate(
        float(row.point),
        float(row.lo),
        float(row.hi),
        level=level,
        method=method,
        resamples=reps if "bootstrap" in method else None,
        n=_units(row, "n_shapes"),
    )


#: A median over a few shapes: the distribution-free interval from order statistics.
MEDIAN_ORDER_STATS = (
    "median over shapes, distribution-free order-statistic interval (binomial, "
    "scipy.stats.quantile_test; covers at least its level at any number of shapes)"
)


def median_exact(values: np.ndarray, *, level: float) -> Estimate:
    """The median of per-shape values ``(shapes,)`` with the distribution-free interval of
    a median (order statistics ``x_(j) .. x_(n+1-j)``, coverage at least ``level`` for any
    continuous distribution). A percentile bootstrap of a median over 7 shapes spans about
    ``x_(2) .. x_(6)``, which covers 0.875 at a nominal 0.95. Too few shapes for any such
    interval at ``level`` (5 or fewer at 0.95): the median without one, and why."""
    from scipy.stats import quantile_test

    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        raise ValueError("no finite per-shape values")
    point = float(np.median(v))
    ci = quantile_test(v, q=point, p=0.5).confidence_interval(level)
    if not (np.isfinite(ci.low) and np.isfinite(ci.high)):
        return Estimate(
            point,
            method="median over shapes",
            n=int(v.size),
            note=f"{v.size} shapes are too few for a distribution-free {level:.0%} interval "
            "of a median",
        )
    return Estimate(
        point,
        float(ci.low),
        float(ci.high),
        level=level,
        method=MEDIAN_ORDER_STATS,
        n=v.size,
        no_interval="the order statistics that bound it are tied (e.g. many shapes at a "
        "regret of exactly 1)",
    )


def median_over_shapes(values: np.ndarray, *, reps: int, level: float, seed: int) -> Estimate:
    """:func:`.gpperf.median_over_shapes` as an estimate; ``n`` is the number of shapes
    with a finite value (where the report reads the method's coverage)."""
    point, (lo, hi) = gpperf.median_over_shapes(values, reps=reps, level=level, seed=seed)
    n = int(np.isfinite(np.asarray(values, float)).sum())
    return Estimate(point, lo, hi, level=level, method=MEDIAN_OVER_SHAPES, resamples=reps, n=n)
