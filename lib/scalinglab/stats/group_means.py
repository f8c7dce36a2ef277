"""The repeated small bootstraps of the studies, each written once.

A study's design fixes its groups (model sizes, optimizer cells, kernels) and repeats
within each (seeds, timed repeats); the intervals resample the repeats **within** each
group, never across them. Two statistics recur:

- :func:`mean_of_group_means`: the mean over groups of each group's mean (every group
  weighs the same, whatever its number of seeds), with :func:`group_mean_draws` for
  statistics built on the per-group resampled means (slopes across sizes), and its
  Student-t twin :func:`mean_of_group_means_t` for few repeats per group (a percentile
  bootstrap of 3-5 seeds covers 0.77-0.85; the t interval with Welch-Satterthwaite
  degrees of freedom about 0.93-0.95, ``stats.method_coverage``);
- :func:`ratio_of_medians`: ``median(a) / median(b)`` of two sets of repeats (a speed
  ratio from timings), each resampled on its own.

Draws come from one ``np.random.Generator`` in a fixed order (group by group, ``a``
before ``b``), so a study that called the same resampling inline gets the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.stats as sps

from scalinglab.estimate import Estimate
from scalinglab.stats.bootstrap import resample_groups

#: How :func:`mean_of_group_means` makes its interval.
MEAN_OF_MEANS = "bootstrap of repeats within each group, percentile"
#: How :func:`mean_of_group_means_t` makes its interval.
MEAN_OF_MEANS_T = "Student t over repeats within groups (Welch-Satterthwaite df)"
#: How :func:`ratio_of_medians` makes its interval.
RATIO_OF_MEDIANS = "bootstrap of each side's repeats, percentile"


def group_mean_draws(
    groups: Sequence[np.ndarray], *, rng: np.random.Generator, reps: int
) -> np.ndarray:
    """Each group's mean on ``reps`` resamples of its own repeats.

    Parameters
    ----------
    groups
        One 1-d array of repeats per group (sizes may differ; at least one each).
    rng
        Drawn from group by group, in order.

    Returns
    -------
    numpy.ndarray
        Shape ``(reps, G)``.
    """
    return np.stack([g[resample_groups(rng, g.size, reps)].mean(1) for g in _arrays(groups)], 1)


def mean_of_group_means(
    groups: Sequence[np.ndarray],
    *,
    rng: np.random.Generator,
    reps: int,
    level: float,
    method: str = MEAN_OF_MEANS,
) -> tuple[Estimate, np.ndarray]:
    """The mean over groups of the group means, with its percentile interval.

    Returns
    -------
    estimate, draws
        The estimate and its ``(reps,)`` bootstrap draws (for paired comparisons).
    """
    arrs = _arrays(groups)
    point = float(np.mean([g.mean() for g in arrs]))
    draws = np.mean([g[resample_groups(rng, g.size, reps)].mean(axis=1) for g in arrs], axis=0)
    n = min(g.size for g in arrs)  # the fewest repeats a group mean rests on
    est = Estimate.from_draws(point, draws, level=level, method=method, resamples=reps, n=n)
    return est, draws


def mean_of_group_means_t(
    groups: Sequence[np.ndarray], *, level: float, method: str = MEAN_OF_MEANS_T
) -> tuple[Estimate, float]:
    """The mean over groups of the group means, with a Student-t interval.

    Its standard error is ``sqrt(sum_i s_i^2 / n_i) / S`` over the ``S`` groups and its
    degrees of freedom Welch-Satterthwaite's. Groups with fewer than 2 repeats have no
    variance and are left out (point and interval alike).

    Parameters
    ----------
    groups
        One 1-d array of repeats per group.

    Returns
    -------
    estimate, df
        The estimate (``n``: the fewest repeats of a group used) and the degrees of
        freedom.

    Raises
    ------
    ValueError
        When no group has 2 repeats.
    """
    arrs = [g for g in _arrays(groups) if g.size >= 2]
    if not arrs:
        raise ValueError("a Student-t interval needs a group with at least 2 repeats")
    v = np.array([g.var(ddof=1) / g.size for g in arrs])
    dfs = np.array([g.size - 1 for g in arrs], dtype=float)
    df = float(v.sum() ** 2 / np.sum(v**2 / dfs)) if v.sum() > 0 else float(dfs.sum())
    se = float(np.sqrt(v.sum()) / len(arrs))
    half = float(sps.t.ppf(0.5 + level / 2, df)) * se
    point = float(np.mean([g.mean() for g in arrs]))
    n = min(g.size for g in arrs)
    return Estimate(point, point - half, point + half, level=level, method=method, n=n), df


def ratio_of_medians(
    a: np.ndarray,
    b: np.ndarray,
    *,
    rng: np.random.Generator,
    reps: int,
    level: float | None = None,
    method: str = RATIO_OF_MEDIANS,
) -> tuple[Estimate, np.ndarray]:
    """``median(a) / median(b)`` with each side's repeats resampled on its own.

    Parameters
    ----------
    a, b
        Repeats, shape ``(n_a,)`` and ``(n_b,)`` (non-finite values left out).
    level
        Of the percentile interval; None: a point estimate, the draws for the caller's
        own interval (e.g. one shifted to the point).

    Returns
    -------
    estimate, draws
        The estimate and the ``(reps,)`` ratio draws (``a`` resampled first).
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if a.size == 0 or b.size == 0:
        raise ValueError("ratio_of_medians needs at least one finite repeat on each side")
    draws = np.median(a[resample_groups(rng, a.size, reps)], axis=1) / np.median(
        b[resample_groups(rng, b.size, reps)], axis=1
    )
    point = float(np.median(a) / np.median(b))
    if level is None:
        return Estimate(point, method=method), draws
    return Estimate.from_draws(point, draws, level=level, method=method, resamples=reps), draws


def _arrays(groups: Sequence[np.ndarray]) -> list[np.ndarray]:
    arrs = [np.asarray(g, dtype=float) for g in groups]
    if not arrs or any(g.ndim != 1 or g.size == 0 for g in arrs):
        raise ValueError("need at least one group, each a non-empty 1-d array of repeats")
    return arrs
