"""The unit of an interval over RL runs: the base model (warm start), not the run.

The v3 design warms 2 base models a size (``warm_start``) and trains several RL seeds
from each (``rl_seed``). Runs from one warm start share their base model, and what the
claims are about (a model size trained with RL) varies between base models far more than
between RL seeds of one. On the committed runs, ``k`` of Tan's line at l is -0.19 on the
20 runs of warm start 0 and 0.43 on the 20 of warm start 1 (within-warm-start SDs 0.13
and 0.06). A Student t over runs takes those 40 runs as 40 draws of size l, and its
interval is far too narrow: it describes these two base models, not the size.

Here an interval over runs is taken over the **warm starts' means** (each the mean of its
runs' values): Student t on ``units - 1`` degrees of freedom, or Welch's t for a
difference of two sizes. With 2 warm starts a size that is 1 degree of freedom: as wide as
two base models allow, which is what the design can tell about a size. A pooled statistic
(over sizes) has one unit per (size, warm start) and is the mean of those units, each
size weighing by its number of units; the sizes are fixed strata, so its standard error
comes from the units' spread *within* their sizes (pooled) and has ``units - sizes``
degrees of freedom (Cochran, *Sampling Techniques*, ch. 5). A design without
``warm_start`` (each seed warmed on its own: ``small``, ``medium``) keeps the run as its
unit, with the same strata.

Hand-written because it is a two-stage mean and a t quantile. A mixed model
(statsmodels' ``MixedLM``) would pool the between-model variance over sizes under an
equal-variance assumption these data do not support (the between-warm-start spread of
``k`` ranges over 0.09-0.44 across sizes) and its degrees of freedom are approximate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats as sps

from scalinglab.stats.calibration import clopper_pearson, t_interval, welch_interval

#: The columns that name a base model: a warm start is one model of one size.
UNIT_KEYS = ("model_size", "warm_start")


@dataclass(frozen=True)
class UnitValues:
    """One value per unit of ``column``.

    Attributes
    ----------
    values
        ``(n_units,)``: each warm start's mean over its runs, or each run's value.
    strata
        ``(n_units,)``: each unit's model size (its stratum); None: one stratum.
    n_runs
        Runs behind them (finite values only).
    clustered
        Whether the units are warm starts (else runs).
    runs
        ``(n_units,)``: runs behind each unit (all 1 when the units are runs); None
        when not recorded.
    within
        ``(n_units,)``: the variance (ddof 1) of each unit's runs, 0 for a unit of one
        run; None when not recorded.
    """

    values: np.ndarray
    n_runs: int
    clustered: bool
    strata: np.ndarray | None = None
    runs: np.ndarray | None = None
    within: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of units."""
        return int(self.values.size)

    @property
    def label(self) -> str:
        """``"warm starts"`` or ``"runs"``."""
        return "warm starts" if self.clustered else "runs"

    @property
    def n_strata(self) -> int:
        """Number of sizes (strata) among the units."""
        return 1 if self.strata is None else int(np.unique(self.strata).size)

    @property
    def df(self) -> int | None:
        """Degrees of freedom of :func:`t_over_units`' interval (``n - sizes``), or None
        below 1."""
        df = self.n - self.n_strata
        return df if df >= 1 else None

    def describe(self) -> str:
        """How the units were formed, for a method text."""
        h = self.n_strata
        strata = f" in {h} sizes" if h > 1 else ""
        df = f"; sizes as strata, df {self.n - h}" if h > 1 else ""
        if not self.clustered:
            return f"{self.n} runs{strata}" + (
                f" (sizes as strata, df {self.n - h})" if h > 1 else ""
            )
        return f"{self.n} warm starts{strata} (each the mean of its runs; {self.n_runs} runs{df})"


def unit_values(frame: pd.DataFrame, column: str) -> UnitValues:
    """The units' values of ``column`` in ``frame`` (one row per run, NaN rows dropped).

    With a ``warm_start`` column the unit is ``(model_size, warm_start)`` and its value
    the mean over its runs; otherwise each run is a unit. The units' strata are their
    model sizes (when ``frame`` has ``model_size``).

    Raises
    ------
    ValueError
        When some runs have a ``warm_start`` and others do not (runs of two designs).
    """
    rows = frame[np.isfinite(frame[column].to_numpy(float))]
    clustered = "warm_start" in rows and bool(rows["warm_start"].notna().any())
    if clustered and rows["warm_start"].isna().any():
        raise ValueError(
            f"{column}: {int(rows['warm_start'].isna().sum())} run(s) without a warm_start "
            "among runs that have one: one design's runs only"
        )
    strata = None
    if clustered:
        keys = list(UNIT_KEYS) if "model_size" in rows else ["warm_start"]
        agg = rows.groupby(keys, sort=True)[column].agg(["mean", "size", "var"])
        values, runs = agg["mean"].to_numpy(float), agg["size"].to_numpy(int)
        within = agg["var"].fillna(0.0).to_numpy(float)
        if "model_size" in rows:
            strata = agg.index.get_level_values("model_size").to_numpy()
    else:
        values, runs = rows[column].to_numpy(float), np.ones(len(rows), dtype=int)
        within = np.zeros(len(rows))
        strata = rows["model_size"].to_numpy() if "model_size" in rows else None
    return UnitValues(values, int(len(rows)), clustered, strata, runs, within)


def _stratified_se(x: np.ndarray, strata: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Standard error of the mean of ``x`` over its last axis, sizes as strata, and its
    degrees of freedom (``units - strata``).

    ``x``: shape ``(..., n_units)``; ``strata``: ``(n_units,)`` or None (one stratum).
    """
    if strata is None:
        dev, h = x - x.mean(axis=-1, keepdims=True), 1
    else:
        codes, h = np.unique(strata, return_inverse=True)[1], int(np.unique(strata).size)
        onehot = np.eye(h)[codes]  # (n_units, h)
        means = (x @ onehot) / onehot.sum(axis=0)
        dev = x - means @ onehot.T
    df = x.shape[-1] - h
    with np.errstate(all="ignore"):
        se = np.sqrt(np.sum(dev**2, axis=-1) / df / x.shape[-1])
    return se, df


def t_over_units(units: UnitValues, *, level: float) -> tuple[float, float, float]:
    """Mean of the units and its Student-t interval, sizes as strata.

    One stratum: the plain t interval on ``n - 1`` df. Several: the standard error of
    the mean from the units' deviations from their own size's mean (pooled), on
    ``n - sizes`` df. NaN ends without a degree of freedom.
    """
    x = units.values
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    df = x.size - units.n_strata
    if df < 1:
        return float(x.mean()), float("nan"), float("nan")
    if units.n_strata == 1:
        lo, hi = t_interval(x, level=level)
        return float(x.mean()), float(lo), float(hi)
    se = float(_stratified_se(x, units.strata)[0])
    half = float(sps.t.ppf(0.5 + level / 2, df)) * se
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def welch_over_units(a: UnitValues, b: UnitValues, *, level: float) -> tuple[float, float, float]:
    """``mean(a) - mean(b)`` over units with Welch's t interval (Welch-Satterthwaite df).

    Both need at least 2 units; the caller checks.
    """
    d, lo, hi = welch_interval(a.values, b.values, level=level)
    return float(d), float(lo), float(hi)


def kish_size(runs: np.ndarray) -> float:
    """Kish's effective number of runs of a mean over units that weighs every unit the
    same, unit ``j`` holding ``runs[j]`` runs: ``(sum w)^2 / sum w^2`` with per-run
    weights ``1 / runs[j]``, i.e. ``n_units^2 / sum(1 / runs)`` (the number of runs when
    every unit is one run)."""
    m = np.asarray(runs, dtype=float)
    return float(m.size**2 / np.sum(1.0 / m))


def _korn_graubard(
    x: np.ndarray, strata: np.ndarray | None, *, runs: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean of unit shares ``x`` (shape ``(..., n_units)``, unit ``j`` the share of its
    ``runs[j]`` runs) with its Korn-Graubard ends."""
    p = x.mean(axis=-1)
    se, df = _stratified_se(x, strata)
    if df < 1:
        nan = np.full_like(p, np.nan)
        return p, nan, nan
    n_cap, n_runs = kish_size(runs), int(np.sum(runs))
    with np.errstate(all="ignore"):
        n_eff = np.where(se > 0, p * (1 - p) / se**2, n_cap)
    n_eff = np.minimum(n_eff, n_cap)
    a = (1 - level) / 2
    q_runs = sps.t.ppf(a, n_runs - 1) if n_runs > 1 else sps.norm.ppf(a)
    n_eff = n_eff * (q_runs / sps.t.ppf(a, df)) ** 2
    lo, hi = clopper_pearson(p * n_eff, n_eff, level=level)
    return p, np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def share_over_units(units: UnitValues, *, level: float) -> tuple[float, float, float]:
    """A share over units (each unit's value a share of its runs, in ``[0, 1]``) with the
    Korn-Graubard interval: Clopper-Pearson on the effective sample size.

    The effective size is ``p (1 - p) / se^2`` (``se`` as in :func:`t_over_units`:
    sizes as strata), scaled by ``(t_{runs-1} / t_{df})^2`` for the ``units - sizes``
    degrees of freedom the standard error has (Korn & Graubard 1998, *Survey
    Methodology* 24; the "beta" method of R's ``survey::svyciprop``). It is capped at,
    and where ``se`` is 0 (every unit of a size alike) taken as, Kish's effective number
    of runs of an equal-weight mean over units (:func:`kish_size`): a base model of 2 runs
    weighs as much as one of 20, so 56 runs in 8 such units count as about 25. The
    nominal ``units - sizes`` df assume the sizes' units spread alike; where one size
    carries all the spread the effective df are fewer, which the coverage simulated on
    the design (:func:`share_coverage`) takes into account. Unlike a t interval it stays
    in ``[0, 1]`` and, at a share of 0 or 1, still has width (never ``[0, 0]``).

    Returns
    -------
    tuple
        ``(share, lo, hi)``; NaN ends without a degree of freedom.
    """
    if units.n == 0:
        return float("nan"), float("nan"), float("nan")
    p, lo, hi = _korn_graubard(units.values, units.strata, runs=_runs(units), level=level)
    return float(p), float(lo), float(hi)


def _runs(units: UnitValues) -> np.ndarray:
    if units.runs is None:
        raise ValueError("share intervals need the runs behind each unit (UnitValues.runs)")
    return units.runs


@dataclass(frozen=True)
class ShareCoverage:
    """Simulated coverage of :func:`share_over_units` on one design, the worst over the
    generators tried (:func:`share_coverage`).

    Attributes
    ----------
    coverage, se
        Share of simulated data sets whose interval covers the truth, and its Monte
        Carlo standard error, at the worst generator.
    miss_high
        At that generator, the share whose interval lies wholly below the truth (the
        miss that matters for a claim of a share above a value).
    truth, icc
        That generator's share and within-size intra-unit correlation.
    sims
        Simulated data sets per generator.
    """

    coverage: float
    se: float
    miss_high: float
    truth: float
    icc: float
    sims: int


def unit_icc(frame: pd.DataFrame, column: str) -> float:
    """One-way ANOVA estimate of the intra-unit correlation of ``column`` over the warm
    starts of ``frame``, within sizes (each size's mean removed first, so a difference
    between sizes is not read as one between base models), clipped to ``[0, 0.95]``; 0
    when runs are the units."""
    u = unit_values(frame, column)
    if not u.clustered or u.runs is None or u.within is None or u.n < 2:
        return 0.0
    m, n = u.runs.astype(float), float(u.runs.sum())
    # each unit's mean less its size's mean over runs (one stratum: the grand mean)
    codes = np.zeros(u.n, int) if u.strata is None else np.unique(u.strata, return_inverse=True)[1]
    size_mean = np.bincount(codes, m * u.values) / np.bincount(codes, m)
    means, within = u.values - size_mean[codes], u.within
    df_w = float(np.sum(m - 1))
    df_b = u.n - u.n_strata
    if df_w < 1 or df_b < 1:
        return 0.95
    msw = float(np.sum((m - 1) * within) / df_w)
    msb = float(np.sum(m * means**2) / df_b)
    m0 = (n - float(np.sum(m**2)) / n) / (u.n - 1)
    denom = msb + (m0 - 1) * msw
    icc = (msb - msw) / denom if denom > 0 else 0.0
    return float(np.clip(icc, 0.0, 0.95))


#: Intra-unit correlations every coverage simulation tries beside the data's own.
ICC_GRID = (0.05, 0.3, 0.6)


def share_coverage(
    units: UnitValues, *, icc: float, level: float, sims: int = 2000, rng: np.random.Generator
) -> ShareCoverage:
    """Coverage of :func:`share_over_units` on ``units``' own design, the worst over a
    few generators.

    Each generator keeps the design (strata, runs per unit); a unit's share is drawn from
    a beta distribution whose mean is its size's (the observed mean of that size's units,
    kept within ``[0.02, 0.98]``), or one mean for every size (the observed overall
    share), with intra-unit correlation ``icc`` (the data's, within sizes:
    :func:`unit_icc`) or one of :data:`ICC_GRID`; its runs are binomial on that share.
    The truth is the mean of the units' beta means. Reported: the lowest coverage over
    these ``2 x 4`` generators, with its high-side miss rate.
    """
    m = _runs(units).astype(int)
    strata = units.strata if units.strata is not None else np.zeros(units.n)
    levels = pd.Series(units.values).groupby(strata).transform("mean").to_numpy(float)
    worst: ShareCoverage | None = None
    for means in (levels, np.full(units.n, units.values.mean())):
        mu = np.clip(means, 0.02, 0.98)
        truth = float(mu.mean())
        for rho in (float(icc), *ICC_GRID):
            if rho > 0:
                a, b = mu * (1 - rho) / rho, (1 - mu) * (1 - rho) / rho
                p = rng.beta(a, b, size=(sims, m.size))
            else:
                p = np.broadcast_to(mu, (sims, m.size))
            shares = rng.binomial(m, p) / m
            _, lo, hi = _korn_graubard(shares, units.strata, runs=m, level=level)
            c = float(((lo <= truth) & (truth <= hi)).mean())
            if worst is None or c < worst.coverage:
                se = float(np.sqrt(c * (1 - c) / sims))
                worst = ShareCoverage(c, se, float((hi < truth).mean()), truth, rho, sims)
    assert worst is not None
    return worst
