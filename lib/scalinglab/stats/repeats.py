"""Intervals for timings and other repeated measurements that cover the real variance.

Timings repeated back to back in one process share the process's state (its
memory layout, thread placement, turbo state, the neighbours on a shared
machine), so their spread understates how much a re-run moves: an interval from
them alone is too narrow. These helpers take measurements laid out as
``(sessions, repeats)`` (a *session* is a separate process or a separate time;
``repeats`` are the calls within it; NaN = missing) and resample at both levels
(sessions with replacement, then repeats within each drawn session), so the
interval carries the between-session variance.

- :func:`session_interval`: a per-session summary (median by default), averaged
  over sessions, with a two-level bootstrap interval;
- :func:`ratio_interval`: the ratio of two such measurements paired by session
  (e.g. a step-time ratio, a speedup, a fraction of peak), resampled jointly;
- :func:`reselect_interval`: a statistic that *selects* among cells (the best or
  worst tile, the max over shapes) re-selects inside every resample, so its
  interval includes the selection's own noise (and is corrected for its bias);
- :func:`rerun_stability`: how often re-running moved a point by less than its
  interval (the check a benchmark reports).

Every function draws from an ``np.random.Generator`` seeded by ``seed``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from scalinglab.stats.bootstrap import percentile_interval

Summary = Callable[..., np.ndarray]


def _as_sessions(values: np.ndarray, what: str) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[:, None]
    if v.ndim != 2 or v.shape[0] < 2:
        raise ValueError(
            f"{what} must be (sessions, repeats) with at least 2 sessions; "
            f"got shape {np.shape(values)}"
        )
    if np.isnan(v).all(axis=1).any():
        raise ValueError(f"{what}: a session has no finite measurement")
    return v


def _two_level(rng: np.random.Generator, v: np.ndarray, reps: int) -> np.ndarray:
    """Resampled copies ``(reps, sessions, repeats)``: sessions, then repeats within each."""
    S, R = v.shape
    s_idx = rng.integers(0, S, size=(reps, S))
    r_idx = rng.integers(0, R, size=(reps, S, R))
    return v[s_idx[:, :, None], r_idx]


def session_interval(
    values: np.ndarray,
    *,
    summary: Summary = np.nanmedian,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean over sessions of a per-session summary, with a two-level bootstrap interval.

    Parameters
    ----------
    values
        Shape ``(sessions, repeats)`` (or ``(sessions,)``: one value per session).
    summary
        Per-session summary over repeats, called as ``summary(x, axis=-1)``.

    Returns
    -------
    (point, lo, hi)
    """
    v = _as_sessions(values, "values")
    rng = np.random.default_rng(seed)
    point = float(np.mean(summary(v, axis=-1)))
    boot = np.mean(summary(_two_level(rng, v, reps), axis=-1), axis=-1)
    lo, hi = percentile_interval(boot, level=level)
    return point, float(lo), float(hi)


def ratio_interval(
    num: np.ndarray,
    den: np.ndarray,
    *,
    summary: Summary = np.nanmedian,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``mean_s summary(num_s) / mean_s summary(den_s)`` with a paired two-level interval.

    Parameters
    ----------
    num, den
        Shape ``(sessions, repeats)`` each, the same sessions in the same order
        (e.g. the two optimizers' step times measured in one process per row).

    Returns
    -------
    (point, lo, hi)
    """
    a, b = _as_sessions(num, "num"), _as_sessions(den, "den")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"num and den need the same sessions; got {a.shape[0]} and {b.shape[0]}")
    rng = np.random.default_rng(seed)
    S = a.shape[0]
    s_idx = rng.integers(0, S, size=(reps, S))
    ra = rng.integers(0, a.shape[1], size=(reps, S, a.shape[1]))
    rb = rng.integers(0, b.shape[1], size=(reps, S, b.shape[1]))
    boot = np.mean(summary(a[s_idx[:, :, None], ra], axis=-1), axis=-1) / np.mean(
        summary(b[s_idx[:, :, None], rb], axis=-1), axis=-1
    )
    point = float(np.mean(summary(a, axis=-1)) / np.mean(summary(b, axis=-1)))
    lo, hi = percentile_interval(boot, level=level)
    return point, float(lo), float(hi)


def reselect_interval(
    values: np.ndarray,
    select: Callable[[np.ndarray], np.ndarray],
    *,
    summary: Summary = np.nanmedian,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    floor: float | None = None,
) -> tuple[float, float, float]:
    """A selecting statistic over cells, re-selected inside every resample.

    A max (or a max over min) of noisy cell summaries is biased upward, and more
    so in a resample (its summaries are noisier still): a plain percentile
    interval then lies above the point estimate. The interval here is the
    percentile interval of the re-selected replicates shifted by the bootstrap
    estimate of that bias (``mean(replicates) - point``), then clipped at
    ``floor`` where the statistic cannot go below it (1 for worst over best).

    Parameters
    ----------
    values
        Shape ``(cells, repeats)``: e.g. one row per tile shape, its timings.
    select
        Maps per-cell summaries ``(..., cells)`` to the statistic ``(...)``, e.g.
        ``lambda t: t.max(-1) / t.min(-1)`` (worst over best tile). It is applied
        to each resample's own summaries, so which cell is best may change.
    floor
        The statistic's lowest possible value, if any.

    Returns
    -------
    (point, lo, hi)
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[1] < 2:
        raise ValueError(f"values must be (cells, repeats) with >= 2 repeats; got {v.shape}")
    rng = np.random.default_rng(seed)
    C, R = v.shape
    r_idx = rng.integers(0, R, size=(reps, C, R))
    boot = np.asarray(select(summary(v[np.arange(C)[None, :, None], r_idx], axis=-1)), float)
    point = float(select(summary(v, axis=-1)))
    lo, hi = percentile_interval(boot - (np.nanmean(boot) - point), level=level)
    lo, hi = float(lo), float(hi)
    if floor is not None:
        lo, hi = max(lo, floor), max(hi, floor)
    return point, lo, hi


def rerun_stability(points: Sequence[float], intervals: Sequence[Sequence[float]]) -> float:
    """Share of consecutive re-runs whose point moved by less than the interval's half-width.

    Parameters
    ----------
    points
        Shape ``(runs,)``: the same finding from re-runs of identical code.
    intervals
        Shape ``(runs, 2)``: each run's ``(lo, hi)``; the half-width of a pair is
        the mean of both runs' half-widths (as ``scalinglab reports diff`` uses).

    Returns
    -------
    float
        In ``[0, 1]``; about ``level`` or more for an interval that covers the
        re-run variance.
    """
    p = np.asarray(points, dtype=float)
    ci = np.asarray(intervals, dtype=float)
    if p.ndim != 1 or p.size < 2 or ci.shape != (p.size, 2):
        raise ValueError("need points (runs,) and intervals (runs, 2) for at least 2 runs")
    hw = (ci[:, 1] - ci[:, 0]) / 2
    pair_hw = (hw[1:] + hw[:-1]) / 2
    return float(np.mean(np.abs(np.diff(p)) <= pair_hw))
