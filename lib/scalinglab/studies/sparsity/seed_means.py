"""Intervals over seeds that cover at 3 seeds: Welch t for functions of per-model means.

The sparsity study's statistics are smooth functions of per-model seed means: the mean
over models of each model's seed mean (a trend averaged over sizes), the OLS slope of the
model means against ``log10`` of a design variable (width/depth, parameters), or that
slope over the mean level. A percentile bootstrap that resamples 3 seeds within each
model covers about 75% at a nominal 95% (:mod:`scalinglab.stats.calibration`); here every
interval is Student t:

``f(m_1, ..., m_G) +- t_{nu, (1 + level)/2} * se``, with
``se^2 = sum_g (df/dm_g)^2 s_g^2 / n_g`` (the delta method; exact for the linear
statistics, the mean and the slope) and ``nu`` the Welch-Satterthwaite degrees of
freedom ``se^4 / sum_g (c_g^2 / (n_g - 1))``, ``c_g = (df/dm_g)^2 s_g^2 / n_g``. With one
model this is the one-sample t interval of
:func:`scalinglab.stats.calibration.t_interval`.

:func:`coverage_at_seeds` simulates how often this interval (and the percentile
bootstrap, for comparison) covers at the numbers of seeds the study uses, on values
resampled from its own committed per-seed values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from scalinglab.estimate import Estimate
from scalinglab.stats import calibration

#: The method text of every interval made here.
WELCH_T = "Student t over seeds (Welch-Satterthwaite df across models)"


def welch_estimate(
    groups: Sequence[np.ndarray],
    f: Callable[[np.ndarray], float],
    *,
    level: float = 0.95,
    method: str = WELCH_T,
) -> Estimate:
    """``f`` of the group means, with its delta-method Welch t interval.

    Parameters
    ----------
    groups
        One 1-d array of per-seed values per model (``n_g`` values each).
    f
        The statistic: group means ``(G,)`` -> float; differentiated numerically (central
        differences), so a linear ``f`` is exact.
    level
        Two-sided level.

    Returns
    -------
    Estimate
        ``n``: the fewest seeds of any model (where a report reads the Student t
        interval's coverage). With no interval (and a note) when a model has fewer than
        2 seeds or the
        seeds do not vary at all (a zero-width interval does not cover).
    """
    arrs = [np.asarray(g, dtype=float).ravel() for g in groups]
    arrs = [a[np.isfinite(a)] for a in arrs]
    if not arrs or any(a.size == 0 for a in arrs):
        raise ValueError("welch_estimate: need at least one value in every group")
    means = np.array([a.mean() for a in arrs])
    point = float(f(means))
    n = np.array([a.size for a in arrs], dtype=float)
    if (n < 2).any():
        return Estimate(point, method=method, note="a model with fewer than 2 seeds: no interval")
    var = np.array([a.var(ddof=1) for a in arrs])
    scale = np.maximum(np.abs(means), 1e-3) * 1e-5
    grad = np.empty_like(means)
    for g in range(means.size):
        e = np.zeros_like(means)
        e[g] = scale[g]
        grad[g] = (f(means + e) - f(means - e)) / (2 * scale[g])
    c = grad**2 * var / n
    se2 = float(c.sum())
    if not np.isfinite(point) or not se2 > 0:
        return Estimate(point, method=method, note="no spread over seeds: no interval")
    nu = se2**2 / float((c**2 / (n - 1)).sum())
    half = float(sps.t.ppf(0.5 + level / 2, nu)) * np.sqrt(se2)
    return Estimate(
        point,
        point - half,
        point + half,
        level=level,
        method=f"{method}, {int(n.min())}-{int(n.max())} seeds per model"
        if n.min() != n.max()
        else f"{method}, {int(n[0])} seeds per model",
        n=int(n.min()),
        df=float(nu),
    )


def _groups(per_run: pd.DataFrame, value: str, strata: str) -> list[np.ndarray]:
    return [g[value].to_numpy(float) for _, g in per_run.groupby(strata, sort=False)]


def stratified_mean(
    per_run: pd.DataFrame, value: str, *, strata: str = "model", level: float = 0.95
) -> Estimate:
    """Mean over strata (models) of each stratum's seed mean, every model weighing the
    same; Welch t interval.

    Parameters
    ----------
    per_run
        One row per (model, seed) with columns ``strata`` and ``value``.
    """
    return welch_estimate(_groups(per_run, value, strata), np.mean, level=level)


def slope_vs_log(
    per_run: pd.DataFrame, value: str, x: str, *, relative: bool = False, level: float = 0.95
) -> Estimate:
    """OLS slope of the per-model seed means of ``value`` against ``log10(x)``.

    Parameters
    ----------
    per_run
        One row per (model, seed) with columns ``model``, ``x`` (constant within a
        model) and ``value``.
    relative
        Divide the slope by the mean of the model means: a fraction of the level per
        10x of ``x``.

    Raises
    ------
    ValueError
        Fewer than 2 models.
    """
    parts = list(per_run.groupby("model", sort=False))
    if len(parts) < 2:
        raise ValueError(f"a slope needs at least 2 models, got {len(parts)}")
    lx = np.log10([float(g[x].iloc[0]) for _, g in parts])
    xc = lx - lx.mean()
    w = xc / (xc @ xc)

    def slope(m: np.ndarray) -> float:
        s = float(m @ w)
        return s / float(m.mean()) if relative else s

    return welch_estimate([g[value].to_numpy(float) for _, g in parts], slope, level=level)


def group_means(
    per_run: pd.DataFrame, value: str, *, by: Sequence[str], level: float = 0.95
) -> pd.DataFrame:
    """Each group's seed mean with its t interval, for tables and figures.

    Returns
    -------
    pandas.DataFrame
        One row per group: the ``by`` columns, ``mean``, ``lo``, ``hi`` (NaN with fewer
        than 2 seeds), ``n_seeds``.
    """
    rows = []
    for key, g in per_run.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        est = welch_estimate([g[value].to_numpy(float)], np.mean, level=level)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "mean": est.point,
                "lo": np.nan if est.lo is None else est.lo,
                "hi": np.nan if est.hi is None else est.hi,
                "n_seeds": len(g),
            }
        )
    return pd.DataFrame(rows)


def coverage_at_seeds(
    per_run: pd.DataFrame,
    value: str,
    *,
    strata: str = "model",
    ns: Sequence[int] = (3, 5),
    sims: int = 2000,
    level: float = 0.95,
    resamples: int = 500,
    seed: int = 0,
) -> pd.DataFrame:
    """Simulated coverage of the t interval and the percentile bootstrap of a seed mean.

    The generator draws ``n`` values with replacement from the study's own per-seed values,
    centred within each model (so it is the seed-to-seed spread, not the spread across
    models, that the intervals must cover); the truth is their mean.

    Parameters
    ----------
    per_run
        One row per (model, seed) with ``strata`` and ``value``.
    ns
        Numbers of seeds to simulate (the study uses 3 and 5).

    Returns
    -------
    pandas.DataFrame
        :func:`scalinglab.stats.calibration.coverage_table`'s columns (``method, n,
        coverage, se, sims``).
    """
    centred = per_run[value] - per_run.groupby(strata)[value].transform("mean")
    pooled = centred.to_numpy(float) + float(per_run[value].mean())
    return calibration.seed_mean_coverage(
        pooled, ns=ns, sims=sims, level=level, resamples=resamples, seed=seed
    )


__all__ = [
    "WELCH_T",
    "coverage_at_seeds",
    "group_means",
    "slope_vs_log",
    "stratified_mean",
    "welch_estimate",
]
