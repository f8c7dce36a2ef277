"""Aggregate performance metrics over runs and tasks (rliable's definitions).

Every metric takes a float array ``x`` of shape ``(..., runs, tasks)``, where
``x[..., n, m]`` is the (normalized) score of run ``n`` on task ``m``, and returns
an array of shape ``(...)``. The leading dimensions are independent score sets
(bootstrap replicates, subsampling draws), so one call evaluates a whole batch.

NaN marks an *absent* run (ragged run counts per task, or a failed run dropped by
``load_scores(nan="drop")``); it never enters a sum. A task with no present run
makes ``mean`` and ``median`` NaN rather than being silently skipped.

Definitions (N runs, M tasks; with ragged runs, N_m present runs on task m):

- ``mean``: mean over tasks of the per-task means.
- ``median``: median over tasks of the per-task means.
- ``iqm``: pool all present scores (P = sum N_m), sort, drop ``floor(0.25 P)``
  from each end, average the rest (``scipy.stats.trim_mean(x, 0.25, axis=None)``).
- ``optimality_gap``: ``gamma - mean(min(x, gamma))`` over all present scores
  (pooled); lower is better.

These are hand-written rather than calls to ``scipy.stats.trim_mean`` because
they must be NaN-aware and batched over leading axes; a fast path skips the
NaN handling when nothing is absent.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from scalinglab.errors import InputError

__all__ = [
    "AGGREGATES",
    "LOWER_IS_BETTER",
    "iqm",
    "mean",
    "median",
    "optimality_gap",
    "per_task_means",
    "resolve_metrics",
]


def _scores(x: np.ndarray) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim < 2:
        raise ValueError(
            f"scores must have shape (..., runs, tasks), got an array of shape {arr.shape}"
        )
    return arr


def per_task_means(x: np.ndarray) -> np.ndarray:
    """Mean over present runs of each task.

    Parameters
    ----------
    x
        Shape ``(..., runs, tasks)``; NaN = absent run.

    Returns
    -------
    numpy.ndarray
        Shape ``(..., tasks)``; NaN for a task with no present run.
    """
    x = _scores(x)
    absent = np.isnan(x)
    if not absent.any():
        return x.mean(axis=-2)
    count = (~absent).sum(axis=-2)
    total = np.where(absent, 0.0, x).sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def mean(x: np.ndarray) -> np.ndarray:
    """Mean over tasks of per-task mean scores.

    Parameters
    ----------
    x
        Shape ``(..., runs, tasks)``; NaN = absent run.

    Returns
    -------
    numpy.ndarray
        Shape ``(...)``.
    """
    return per_task_means(x).mean(axis=-1)


def median(x: np.ndarray) -> np.ndarray:
    """Median over tasks of per-task mean scores.

    Parameters
    ----------
    x
        Shape ``(..., runs, tasks)``; NaN = absent run.

    Returns
    -------
    numpy.ndarray
        Shape ``(...)``; with an even number of tasks, the average of the two
        middle task means (as ``numpy.median``).
    """
    return np.median(per_task_means(x), axis=-1)


def iqm(x: np.ndarray) -> np.ndarray:
    """Interquartile mean of all present scores pooled over runs and tasks.

    Sorts the P pooled scores, drops ``floor(0.25 * P)`` from each end and
    averages the remaining ``P - 2 floor(0.25 P)``.

    Parameters
    ----------
    x
        Shape ``(..., runs, tasks)``; NaN = absent run.

    Returns
    -------
    numpy.ndarray
        Shape ``(...)``; NaN where no score is present.
    """
    x = _scores(x)
    flat = x.reshape(*x.shape[:-2], x.shape[-2] * x.shape[-1])
    ordered = np.sort(flat, axis=-1)  # NaN (absent) sorts last
    size = flat.shape[-1]
    absent = np.isnan(ordered[..., -1]) if size else np.ones(flat.shape[:-1], bool)
    if not np.any(absent):
        cut = size // 4
        return ordered[..., cut : size - cut].mean(axis=-1)
    present = (~np.isnan(ordered)).sum(axis=-1)
    cut = present // 4
    pos = np.arange(size)
    keep = (pos >= cut[..., None]) & (pos < (present - cut)[..., None])
    total = np.where(keep, ordered, 0.0).sum(axis=-1)
    kept = present - 2 * cut
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(kept > 0, total / np.maximum(kept, 1), np.nan)


def optimality_gap(x: np.ndarray, gamma: float = 1.0) -> np.ndarray:
    """Amount by which scores fall short of ``gamma``: ``gamma - mean(min(x, gamma))``.

    The mean is over all present scores pooled over runs and tasks. Lower is
    better.

    Parameters
    ----------
    x
        Shape ``(..., runs, tasks)``; NaN = absent run.
    gamma
        Threshold; scores above it count as ``gamma``.

    Returns
    -------
    numpy.ndarray
        Shape ``(...)``.
    """
    x = _scores(x)
    clipped = np.minimum(x, gamma)  # NaN stays NaN
    if not np.isnan(clipped).any():
        return gamma - clipped.mean(axis=(-2, -1))
    with np.errstate(invalid="ignore"):
        present = (~np.isnan(clipped)).sum(axis=(-2, -1))
        total = np.nansum(clipped, axis=(-2, -1))
        return np.where(present > 0, gamma - total / np.maximum(present, 1), np.nan)


#: The four aggregate metrics by their public names (CLI and JSON keys).
AGGREGATES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "iqm": iqm,
    "median": median,
    "mean": mean,
    "optimality_gap": optimality_gap,
}

#: Metrics for which a smaller value is better (used when ranking algorithms).
LOWER_IS_BETTER: frozenset[str] = frozenset({"optimality_gap"})


def resolve_metrics(metrics: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Validate metric names (a comma-separated string or a sequence).

    Raises
    ------
    scalinglab.errors.InputError
        Naming the unknown metric and the valid ones.
    """
    names = metrics.split(",") if isinstance(metrics, str) else list(metrics)
    names = [n.strip() for n in names if n.strip()]
    if not names:
        raise InputError(f"no metric given; choose from {list(AGGREGATES)}")
    for name in names:
        if name not in AGGREGATES:
            raise InputError(f"unknown metric {name!r}; choose from {list(AGGREGATES)}")
    if len(set(names)) != len(names):
        raise InputError(f"metric listed twice in {names}")
    return tuple(names)
