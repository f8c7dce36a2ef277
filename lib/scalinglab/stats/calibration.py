"""Intervals that cover at the sample sizes used, and the simulation that shows it.

With 3 seeds a nominal 95% percentile bootstrap of a mean covers about 75% of the time
(the bootstrap spread is the plug-in standard deviation, too small by ``sqrt((n-1)/n)``,
and ignores that the standard deviation is itself estimated); with 5 about 85%. This
module holds the methods that cover at small ``n`` and the check:

- :func:`t_interval` / :func:`mean_estimate`: Student-t interval of a mean over seeds
  (exact for normal data, close for moderately skewed data at ``n >= 3``);
  :func:`welch_interval`, Welch's t interval of a difference of two means;
- :func:`wilson` / :func:`clopper_pearson` / :func:`proportion_estimate`: intervals of a
  proportion that never collapse to ``[0, 0]`` or ``[1, 1]`` at 0 or ``n`` successes
  (``statsmodels`` ``proportion_confint``); :func:`wilson_upper_at_zero`, the bound
  :func:`share_with_floor` and :func:`change_with_floor` put on a share or a change that
  every resample gives as exactly 0;
- :func:`percentile_bootstrap_mean`: the percentile bootstrap, kept as the method to
  compare against (do not use it for 3-10 seeds);
- :func:`coverage` / :func:`coverage_table`: simulated coverage of any interval method at
  ``n = 3, 5, 10`` on a generator: :func:`resampled` (draws from given data, e.g. a
  study's committed per-seed values; the truth is their mean), :func:`normal`,
  :func:`lognormal` or :func:`bernoulli`. A report shows the table next to the intervals
  that decide its claims.

A percentile bootstrap of a *maximum* (or of any selected extreme) is not offered: its
upper end equals the point (the maximum of resamples cannot exceed the sample's), so it
cannot cover; compare the candidates pairwise instead.

Each simulated coverage carries its own standard error ``sqrt(c (1 - c) / sims)``, so a
test or a report can say whether a shortfall is real.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from scalinglab.estimate import Estimate

#: An interval method: values ``(sims, n)`` -> ``(lo, hi)``, each ``(sims,)``.
Method = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
#: A generator: ``(rng, sims, n)`` -> values ``(sims, n)``.
Sampler = Callable[[np.random.Generator, int, int], np.ndarray]


def t_interval(x: np.ndarray, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Student-t interval of the mean along the last axis.

    Parameters
    ----------
    x
        Shape ``(..., n)`` with ``n >= 2``.

    Returns
    -------
    (lo, hi)
        Each of shape ``(...)``.
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    if n < 2:
        raise ValueError(f"t_interval: needs at least 2 values, got {n}")
    m = x.mean(axis=-1)
    half = sps.t.ppf(0.5 + level / 2, n - 1) * x.std(axis=-1, ddof=1) / np.sqrt(n)
    return m - half, m + half


def t_mean_draws(x: np.ndarray, *, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of the mean of ``x`` from its Student-t sampling distribution,
    ``mean + SE t`` with ``t`` on ``len(x) - 1`` degrees of freedom: the distribution
    whose quantiles are :func:`t_interval`'s ends, as draws to pair with another
    quantity's bootstrap replicates (a percentile bootstrap of a 3-5 value mean is too
    narrow).

    Parameters
    ----------
    x
        Shape ``(k,)``, ``k >= 2`` finite values.
    n
        How many draws.
    rng
        The source of the t variates.

    Returns
    -------
    np.ndarray
        Shape ``(n,)``.
    """
    x = np.asarray(x, dtype=float).ravel()
    if x.size < 2:
        raise ValueError(f"t_mean_draws: needs at least 2 values, got {x.size}")
    se = x.std(ddof=1) / np.sqrt(x.size)
    return x.mean() + se * rng.standard_t(x.size - 1, size=n)


def welch_interval(
    a: np.ndarray, b: np.ndarray, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``mean(a) - mean(b)`` along the last axis and Welch's t interval of it
    (Welch-Satterthwaite degrees of freedom; :func:`scipy.stats.ttest_ind` with
    ``equal_var=False``).

    Parameters
    ----------
    a, b
        Shapes ``(..., n_a)`` and ``(..., n_b)``, leading shapes equal, ``n_a, n_b >= 2``.

    Returns
    -------
    (d, lo, hi)
        Each of shape ``(...)``. Two constant samples give ``lo = hi = d``.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if min(a.shape[-1], b.shape[-1]) < 2:
        raise ValueError(
            f"welch_interval: needs at least 2 values a side, got {a.shape[-1]} and {b.shape[-1]}"
        )
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant samples: se 0
        ci = sps.ttest_ind(a, b, equal_var=False, axis=-1).confidence_interval(level)
    d = a.mean(axis=-1) - b.mean(axis=-1)
    lo, hi = np.asarray(ci.low, dtype=float), np.asarray(ci.high, dtype=float)
    return d, np.where(np.isnan(lo), d, lo), np.where(np.isnan(hi), d, hi)


def percentile_bootstrap_mean(
    x: np.ndarray, *, level: float = 0.95, resamples: int = 1000, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the mean along the last axis (for comparison:
    it under-covers at small ``n``).

    Parameters
    ----------
    x
        Shape ``(sims, n)``.
    resamples
        Bootstrap resamples per row.

    Returns
    -------
    (lo, hi)
        Each ``(sims,)``.
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    sims, n = x.shape
    lo, hi = np.empty(sims), np.empty(sims)
    step = max(1, 2_000_000 // max(1, resamples * n))  # rows per chunk: bounded memory
    for a in range(0, sims, step):
        rows = x[a : a + step]
        idx = rng.integers(0, n, size=(rows.shape[0], resamples, n))
        means = np.take_along_axis(rows[:, None, :], idx, axis=2).mean(axis=2)
        lo[a : a + step], hi[a : a + step] = np.quantile(
            means, [(1 - level) / 2, (1 + level) / 2], axis=1
        )
    return lo, hi


def _proportion(k: np.ndarray, n: int | np.ndarray, level: float, method: str) -> tuple:
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=1 - level, method=method)
    # round-off (Wilson's lower end at k = 0 comes out as 5e-17): clip to [0, 1]
    lo = np.where(np.asarray(k) == 0, 0.0, np.clip(np.asarray(lo, dtype=float), 0.0, 1.0))
    hi = np.where(np.asarray(k) == n, 1.0, np.clip(np.asarray(hi, dtype=float), 0.0, 1.0))
    return lo, hi


def wilson(k: np.ndarray | int, n: np.ndarray | int, *, level: float = 0.95) -> tuple:
    """Wilson score interval of ``k`` successes out of ``n`` (arrays broadcast);
    ``hi > 0`` at ``k = 0`` and ``lo < 1`` at ``k = n``."""
    return _proportion(np.asarray(k), n, level, "wilson")


def clopper_pearson(k: np.ndarray | int, n: np.ndarray | int, *, level: float = 0.95) -> tuple:
    """Clopper-Pearson (exact, conservative) interval of ``k`` successes out of ``n``."""
    return _proportion(np.asarray(k), n, level, "beta")


def mean_estimate(values: Sequence[float] | np.ndarray, *, level: float = 0.95) -> Estimate:
    """The mean of per-seed values with its Student-t interval.

    Parameters
    ----------
    values
        Shape ``(n,)``, one value per seed (or run), ``n >= 2``.
    """
    x = np.asarray(values, dtype=float).ravel()
    lo, hi = t_interval(x, level=level)
    return Estimate(
        float(x.mean()),
        float(lo),
        float(hi),
        level=level,
        method=f"Student t over {x.size} seeds",
        n=x.size,
        df=x.size - 1,
    )


def proportion_estimate(k: int, n: int, *, level: float = 0.95, method: str = "wilson") -> Estimate:
    """A share ``k / n`` with its Wilson (default) or Clopper-Pearson (``"beta"``) interval."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"proportion_estimate: need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    lo, hi = _proportion(np.asarray(k), n, level, method)
    name = {"wilson": "Wilson score", "beta": "Clopper-Pearson"}.get(method, method)
    return Estimate(k / n, float(lo), float(hi), level=level, method=f"{name} over {n}", n=n)


def wilson_upper_at_zero(n: int, *, level: float = 0.95) -> float:
    """The Wilson score upper end of 0 successes out of ``n``: the honest bound on a share
    (or on a mean change per unit) when no unit of ``n`` shows it.

    In closed form ``z^2 / (n + z^2)`` with ``z`` the normal quantile at ``(1 + level) / 2``
    (about ``3.84 / n`` at 95%); by symmetry ``1 -`` it is Wilson's lower end at ``n`` of
    ``n``. The one helper :func:`share_with_floor` and :func:`change_with_floor` build
    their floors from.

    Parameters
    ----------
    n
        Draws (units), ``n >= 1``.
    level
        Two-sided level, in ``(0, 1)``.
    """
    if int(n) < 1:
        raise ValueError(f"wilson_upper_at_zero: needs n >= 1, got {n}")
    if not 0 < level < 1:
        raise ValueError(f"wilson_upper_at_zero: level must be in (0, 1), got {level}")
    z2 = float(sps.norm.ppf(0.5 + level / 2)) ** 2
    return z2 / (int(n) + z2)


def share_with_floor(est: Estimate, *, n: int) -> Estimate:
    """A resampled interval of a share, or the Wilson interval of the share over ``n``
    draws where the resampled one has zero width.

    An outer bootstrap of a rate that is 0 (or 1) in every replicate gives ``[0, 0]``,
    which cannot cover; the Wilson interval of ``round(point * n)`` successes out of the
    ``n`` draws the rate was counted over keeps an honest upper (lower) end: at 0 (or
    ``n``) successes that is :func:`wilson_upper_at_zero` (or one minus it). An interval
    of positive width is returned unchanged.

    Parameters
    ----------
    est
        The share's estimate (``point`` in ``[0, 1]``).
    n
        Draws the share was counted over (e.g. few-run subsamples).
    """
    if est.lo is None or est.hi is None or est.lo != est.hi or not 0 <= est.point <= 1:
        return est
    level = float(est.level or 0.95)
    k = int(round(est.point * n))
    if k in (0, int(n)):
        w = wilson_upper_at_zero(int(n), level=level)
        lo, hi = (0.0, w) if k == 0 else (1.0 - w, 1.0)
        how = f"Wilson score over {int(n)}"
    else:
        p = proportion_estimate(k, int(n), level=level)
        lo, hi, how = float(p.lo), float(p.hi), str(p.method)  # type: ignore[arg-type]
    return est.replace(
        lo=min(est.lo, lo),
        hi=max(est.hi, hi),
        method=f"{est.method}; every replicate gave {est.point:g}, so {how}",
        mc_se=None,
        n=int(n),
    )


def change_with_floor(est: Estimate, *, n: int, signed: bool = True) -> Estimate:
    """A resampled interval of a mean change over ``n`` units, each change in ``[-1, 1]``
    (a gain in a share or a rate per unit), or, where every resample gives exactly 0 (no
    unit changed), the interval ``[-w, w]`` (``[0, w]`` when the change cannot be
    negative) with ``w`` the Wilson upper end of 0 changing units out of ``n``.

    The mean change is at most the share of units that change, so a bound on that share
    bounds it; an interval of positive width (or a nonzero point) is returned unchanged.

    Parameters
    ----------
    est
        The change's estimate.
    n
        Units the mean is over (e.g. prompts).
    signed
        Whether the change can be negative.
    """
    if est.lo is None or est.hi is None or est.lo != est.hi or est.point != 0:
        return est
    hi = wilson_upper_at_zero(int(n), level=float(est.level or 0.95))
    return est.replace(
        lo=-hi if signed else 0.0,
        hi=hi,
        method=f"{est.method}; every replicate gave 0, so {'+/-' if signed else 'up to'} "
        f"the Wilson score over {int(n)} upper end for units that change",
        mc_se=None,
        n=int(n),
    )


# --- generators --------------------------------------------------------------------------


def resampled(data: Sequence[float] | np.ndarray) -> tuple[Sampler, float]:
    """A generator drawing ``n`` values with replacement from ``data`` (e.g. a study's
    committed per-seed values), and its truth (the mean of ``data``)."""
    d = np.asarray(data, dtype=float).ravel()
    if d.size < 2:
        raise ValueError("resampled: needs at least 2 values")

    def draw(rng: np.random.Generator, sims: int, n: int) -> np.ndarray:
        return d[rng.integers(0, d.size, size=(sims, n))]

    return draw, float(d.mean())


def normal(mu: float = 0.0, sd: float = 1.0) -> tuple[Sampler, float]:
    """Normal values; truth ``mu``."""
    return (lambda rng, sims, n: rng.normal(mu, sd, size=(sims, n))), float(mu)


def lognormal(sigma: float = 0.5) -> tuple[Sampler, float]:
    """Log-normal values (right-skewed); truth its mean ``exp(sigma^2 / 2)``."""
    return (lambda rng, sims, n: rng.lognormal(0.0, sigma, size=(sims, n))), float(
        np.exp(sigma**2 / 2)
    )


def bernoulli(p: float) -> tuple[Sampler, float]:
    """0/1 values with success probability ``p``; truth ``p``."""
    return (lambda rng, sims, n: (rng.random((sims, n)) < p).astype(float)), float(p)


# --- coverage ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Coverage:
    """Simulated coverage of one interval method at one ``n``."""

    method: str
    n: int
    coverage: float
    se: float
    sims: int


def coverage(
    method: Method,
    sampler: Sampler,
    truth: float,
    *,
    n: int,
    sims: int = 2000,
    rng: np.random.Generator,
    name: str = "",
) -> Coverage:
    """Share of ``sims`` simulated data sets whose interval contains ``truth``.

    Parameters
    ----------
    method
        Values ``(sims, n)`` -> ``(lo, hi)``, each ``(sims,)``.
    sampler, truth
        A generator (:func:`resampled`, :func:`normal`, ...) and the value the intervals
        should contain.
    n
        Sample size of each simulated data set (seeds, runs).
    sims
        Simulated data sets; the standard error of the coverage is
        ``sqrt(c (1 - c) / sims)``.
    """
    x = sampler(rng, sims, n)
    lo, hi = method(x)
    hit = (np.asarray(lo) <= truth) & (truth <= np.asarray(hi))
    c = float(hit.mean())
    return Coverage(name, n, c, float(np.sqrt(max(c * (1 - c), 1e-12) / sims)), sims)


def coverage_table(
    methods: Mapping[str, Method],
    sampler: Sampler,
    truth: float,
    *,
    ns: Sequence[int] = (3, 5, 10),
    sims: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Simulated coverage of each method at each ``n``: a table a report can show.

    Returns
    -------
    pandas.DataFrame
        Columns ``method, n, coverage, se, sims``; one row per (method, n).
    """
    rows = []
    for i, (name, m) in enumerate(methods.items()):
        for j, n in enumerate(ns):
            rng = np.random.default_rng([seed, i, j])
            rows.append(coverage(m, sampler, truth, n=int(n), sims=sims, rng=rng, name=name))
    columns = ["method", "n", "coverage", "se", "sims"]
    return pd.DataFrame([r.__dict__ for r in rows], columns=columns)


def seed_mean_methods(
    *, level: float = 0.95, resamples: int = 1000, seed: int = 0
) -> dict[str, Method]:
    """The methods for a mean over seeds to compare: Student t and the percentile
    bootstrap (``resamples`` per simulated data set)."""
    rng = np.random.default_rng(seed)
    return {
        "Student t": lambda x: t_interval(x, level=level),
        "percentile bootstrap": lambda x: percentile_bootstrap_mean(
            x, level=level, resamples=resamples, rng=rng
        ),
    }


def seed_mean_coverage(
    values: Sequence[float] | np.ndarray,
    *,
    ns: Sequence[int] = (3, 5, 10),
    sims: int = 2000,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Coverage of the Student-t and percentile-bootstrap intervals of a mean of ``n``
    values drawn from ``values`` (e.g. a study's per-run or per-seed scores), at each
    ``n`` in ``ns``: the table a report shows next to intervals over few runs.

    Parameters
    ----------
    values
        Shape ``(m,)``; NaN left out; at least 2 finite values.

    Returns
    -------
    pandas.DataFrame
        As :func:`coverage_table`.
    """
    v = np.asarray(values, dtype=float).ravel()
    sampler, truth = resampled(v[np.isfinite(v)])
    methods = seed_mean_methods(level=level, resamples=resamples, seed=seed)
    return coverage_table(methods, sampler, truth, ns=ns, sims=sims, seed=seed)


def proportion_methods(*, level: float = 0.95) -> dict[str, Method]:
    """Wilson and Clopper-Pearson on 0/1 values ``(sims, n)``."""
    return {
        "Wilson": lambda x: wilson(x.sum(axis=-1), x.shape[-1], level=level),
        "Clopper-Pearson": lambda x: clopper_pearson(x.sum(axis=-1), x.shape[-1], level=level),
    }
