"""Speedups over AdamW seed by seed, with Student-t intervals over the evaluation seeds.

A percentile bootstrap of a mean over 3 seeds covers about 75% of the time at a nominal
95% (:mod:`scalinglab.stats.calibration`). The ``matched`` design's findings are
therefore computed once per evaluation seed and their intervals are Student t over those
values:

- :func:`per_seed`: per size and seed ``s``, AdamW's ``L(D) = A D^-alpha + E`` is fitted
  to its seed-``s`` final losses over its budgets (least squares, the ``power_offset``
  law of :mod:`scalinglab.fitting.speedup`), and every run of seed ``s`` at that size
  (each optimizer, each budget, the transfer arm ``<name>@adamw``) is inverted through
  it: ``log D_eff / D``. Runs of one seed share initialisation and data order, so every
  comparison is paired within a seed.
- :func:`summary`: a statistic of one seed's log speedups (a cell; a geometric mean over
  budgets; the matrix family over the scalar one; a slope over sizes; the change of a
  ratio between budgets; the transferred over the tuned speedup), computed per seed;
  its estimate is the mean over seeds with the t interval
  (:func:`scalinglab.stats.calibration.t_interval`), exponentiated for a ratio.
- :func:`coverage`: the simulated coverage at ``n = 3`` of that interval and of the
  percentile bootstrap, resampling the per-seed deviations the data show (each cell's
  seeds centred on their mean and pooled): the table a report shows beside them.

A seed whose loss lies at or below its AdamW fit's asymptote has no finite speedup;
a statistic that needs it is NaN for that seed and its estimate has no interval.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.fitting.speedup import effective_data
from scalinglab.stats import calibration
from scalinglab.studies.optimizers.analysis import family_log_gap

#: How every interval of this module is made.
T_METHOD = "Student t over {n} evaluation seeds (statistic computed per seed)"

#: One seed's log speedups ``{(optimizer, size, multiple): log speedup}`` -> a number.
Statistic = Callable[[Mapping[tuple[str, str, float], float]], float]


def per_seed(table: pd.DataFrame, *, baseline: str = "adamw", min_points: int = 3) -> pd.DataFrame:
    """Every run's log speedup over the baseline fitted to the same seed's losses.

    Parameters
    ----------
    table
        One row per run: ``optimizer, model_size, data_multiple, seed, loss``.
    baseline
        The optimizer whose ``L(D)`` defines the speedup.
    min_points
        Distinct budgets the baseline needs at a size and seed for a fit.

    Returns
    -------
    pandas.DataFrame
        One row per run: ``optimizer, model_size, data_multiple, seed, loss,
        log_speedup`` (NaN at or below the seed's fitted ``E``, or without a fit), ``E``
        (the seed's fitted asymptote, NaN without a fit) and ``E_at_bound`` (True
        where that fit put ``E`` on its bound 0).
    """
    from scalinglab.errors import InputError
    from scalinglab.fitting import fit
    from scalinglab.fitting.identify import RTOL

    need = {"optimizer", "model_size", "data_multiple", "seed", "loss"}
    missing = need - set(table.columns)
    if missing:
        raise ValueError(f"per_seed: the table lacks column(s) {sorted(missing)}")
    rows = []
    for (_size, _seed), g in table.groupby(["model_size", "seed"], sort=False):
        base = g[g.optimizer == baseline]
        A = alpha = E = math.nan
        if base.data_multiple.nunique() >= min_points:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = fit(
                        "power_offset",
                        base.data_multiple.to_numpy(float),
                        base.loss.to_numpy(float),
                        objective="ls",
                    )
                A, alpha, E = (float(res.params[k]) for k in ("A", "alpha", "E"))
            except InputError:
                pass
        d, ok = effective_data(g.loss.to_numpy(float), A=A, alpha=alpha, E=E)
        with np.errstate(divide="ignore", invalid="ignore"):
            ls = np.where(ok, np.log(d / g.data_multiple.to_numpy(float)), np.nan)
        out = g[["optimizer", "model_size", "data_multiple", "seed", "loss"]].copy()
        out["log_speedup"] = ls
        out["E"] = E
        out["E_at_bound"] = bool(np.isfinite(E) and E <= RTOL * max(abs(E), 1.0))
        rows.append(out)
    if not rows:
        return pd.DataFrame(columns=[*sorted(need), "log_speedup", "E", "E_at_bound"])
    return pd.concat(rows, ignore_index=True)


def by_seed(ps: pd.DataFrame) -> dict[int, dict[tuple[str, str, float], float]]:
    """``seed -> {(optimizer, size, multiple): log speedup}`` from :func:`per_seed`."""
    out: dict[int, dict[tuple[str, str, float], float]] = {}
    for r in ps.itertuples():
        out.setdefault(int(r.seed), {})[
            (str(r.optimizer), str(r.model_size), float(r.data_multiple))
        ] = float(r.log_speedup)
    return out


def summary(
    seeds: Mapping[int, Mapping[tuple[str, str, float], float]],
    stat: Statistic,
    *,
    level: float = 0.95,
    ratio: bool = True,
) -> tuple[Estimate | None, np.ndarray]:
    """A statistic per seed, its mean over seeds and the Student-t interval.

    Parameters
    ----------
    seeds
        :func:`by_seed`.
    stat
        One seed's log speedups -> a number (NaN or KeyError: undefined for that seed).
    ratio
        The statistic is a log ratio: the estimate is exponentiated (point and ends).

    Returns
    -------
    estimate, values
        ``values`` ``(n_seeds,)``, NaN where undefined. The estimate is None when no
        seed defines it; a point without interval when fewer than two seeds do, when one
        does not, or when the values do not vary (no spread to scale a t interval).
    """
    vals = []
    for s in sorted(seeds):
        try:
            v = float(stat(seeds[s]))
        except KeyError:
            v = math.nan
        vals.append(v)
    x = np.array(vals, dtype=float)
    ok = x[np.isfinite(x)]
    if not ok.size:
        return None, x
    f = np.exp if ratio else (lambda v: v)
    point = float(f(ok.mean()))
    if ok.size < len(x) or ok.size < 2 or np.ptp(ok) == 0:
        why = (
            "undefined for some seed (at or below the seed's AdamW asymptote)"
            if ok.size < len(x)
            else "too few seeds or no spread for an interval"
        )
        return Estimate(point, note=f"mean over {ok.size} seeds, no interval: {why}"), x
    lo, hi = calibration.t_interval(ok, level=level)
    return (
        Estimate(
            point,
            float(f(lo)),
            float(f(hi)),
            level=level,
            method=T_METHOD.format(n=ok.size),
            df=ok.size - 1,
        ),
        x,
    )


def misstatement(est: Estimate | None) -> Estimate | None:
    """How far a ratio's estimate lies from 1 either way: ``exp|log ratio|`` with the
    image of its interval (``[1, ...]`` when the interval holds 1), so that a claim "the
    ratio is off by more than a factor c" can be decided whichever way it goes."""
    if est is None:
        return None
    p = math.exp(abs(math.log(est.point)))
    if est.lo is None or est.hi is None:
        return Estimate(p, note=est.note)
    a, b = math.log(est.lo), math.log(est.hi)
    lo = 0.0 if a <= 0 <= b else min(abs(a), abs(b))
    return Estimate(
        p,
        math.exp(lo),
        math.exp(max(abs(a), abs(b))),
        level=est.level,
        method=f"{est.method}; exp|log| of the ratio's interval",
        df=est.df,
    )


# ---------------------------------------------------------------------------- statistics
def cell(o: str, size: str, m: float) -> Statistic:
    """One cell's log speedup."""
    return lambda d: d[(o, size, float(m))]


def geomean(o: str, size: str, multiples: Sequence[float]) -> Statistic:
    """Mean log speedup over budgets (a geometric mean once exponentiated)."""
    return lambda d: float(np.mean([d[(o, size, float(m))] for m in multiples]))


def family(
    matrix: Sequence[str],
    scalar: Sequence[str],
    size: str,
    m: float,
    *,
    with_baseline: bool = False,
) -> Statistic:
    """Mean log speedup of the matrix optimizers minus that of the scalar ones;
    ``with_baseline``: the baseline (AdamW, log speedup 0 by definition) is one of the
    scalar family, so the ratio does not rest on one scalar variant alone."""
    return lambda d: float(
        family_log_gap(
            [d[(o, size, float(m))] for o in matrix],
            [d[(o, size, float(m))] for o in scalar],
            with_baseline=with_baseline,
        )
    )


def slope(o: str, cells: Mapping[str, float], n_params: Mapping[str, float]) -> Statistic:
    """Least-squares slope of log speedup against log N over ``cells`` ``{size: multiple}``
    (e.g. 1x at every size, or the matched-steps diagonal)."""
    sizes = list(cells)
    x = np.log([float(n_params[s]) for s in sizes])
    xc = (x - x.mean()) / ((x - x.mean()) ** 2).sum()
    return lambda d: float(xc @ np.array([d[(o, s, float(cells[s]))] for s in sizes]))


def catch_up(follower: str, leader: str, size: str, low: float, high: float) -> Statistic:
    """``log(follower / leader)`` at ``high`` minus the same at ``low`` (above 0: the
    follower catches up with more data)."""

    def stat(d):
        return (d[(follower, size, high)] - d[(leader, size, high)]) - (
            d[(follower, size, low)] - d[(leader, size, low)]
        )

    return stat


def transfer(o: str, size: str, multiples: Sequence[float], suffix: str = "@adamw") -> Statistic:
    """Mean over budgets of ``log speedup with AdamW's settings - log speedup tuned``."""
    return lambda d: float(
        np.mean([d[(o + suffix, size, float(m))] - d[(o, size, float(m))] for m in multiples])
    )


def coverage(
    ps: pd.DataFrame, *, level: float = 0.95, sims: int = 4000, seed: int = 0
) -> pd.DataFrame:
    """Simulated coverage at ``n = 3, 5, 10`` of the t interval (and, to compare, of the
    percentile bootstrap) of a mean over seeds, on the per-seed deviations of the data.

    Each cell's finite log speedups are centred on their mean and scaled by
    ``sqrt(n / (n - 1))`` (so their spread is unbiased); the pooled deviations are the
    generator :func:`scalinglab.stats.calibration.resampled` draws from (truth 0).

    Returns
    -------
    pandas.DataFrame
        :func:`scalinglab.stats.calibration.coverage_table` plus ``deviations`` (how
        many values the generator resamples); empty with fewer than two cells of at
        least two finite seeds.
    """
    cells = [
        g.log_speedup.to_numpy(float)
        for _, g in ps.groupby(["optimizer", "model_size", "data_multiple"], sort=False)
    ]
    return deviation_coverage(cells, level=level, sims=sims, seed=seed)


def deviation_coverage(
    cells: Sequence[np.ndarray], *, level: float = 0.95, sims: int = 4000, seed: int = 0
) -> pd.DataFrame:
    """:func:`coverage` on any per-seed statistic: ``cells`` holds, per cell, the
    statistic's values over seeds ``(n_seeds,)`` (NaN dropped). Each cell with at least
    two finite values is centred on its mean and scaled by ``sqrt(n / (n - 1))``; the
    pooled deviations are the generator. Empty with fewer than 4 deviations."""
    dev: list[float] = []
    for c in cells:
        v = np.asarray(c, dtype=float)
        v = v[np.isfinite(v)]
        if v.size >= 2:
            dev.extend((v - v.mean()) * math.sqrt(v.size / (v.size - 1)))
    if len(dev) < 4:
        return pd.DataFrame()
    sampler, truth = calibration.resampled(np.asarray(dev))
    methods = calibration.seed_mean_methods(level=level, resamples=500, seed=seed)
    out = calibration.coverage_table(methods, sampler, truth, sims=sims, seed=seed)
    out["deviations"] = len(dev)
    return out
