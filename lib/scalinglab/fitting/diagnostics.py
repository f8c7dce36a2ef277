"""Linearized diagnostics with statsmodels: log-log OLS beside the nonlinear fit.

A power law ``y = A x^(-alpha)`` is a line in log-log space, so ordinary least
squares on ``(log x, log y)`` gives ``-alpha`` and ``log A`` with textbook
standard errors. With an offset or a second term the law is linear only after
the other fitted terms are removed; each law's ``linearize`` says how (e.g.
``log(L - E - B/D^beta)`` against ``log N`` for Chinchilla). If the nonlinear
estimate falls far outside the OLS interval, the fit deserves a second look
(different basin, outliers, a bound). It is a cross-check, not a second
estimate: the OLS errors ignore the uncertainty of the removed terms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import statsmodels.api as sm

from scalinglab.fitting.result import FitResult


@dataclass(frozen=True)
class OLSFit:
    """Line ``v = intercept + slope * u`` fitted by statsmodels OLS."""

    slope: float
    slope_ci: tuple[float, float]
    intercept: float
    intercept_ci: tuple[float, float]
    r2: float
    n: int
    cov_type: str


def ols(
    u: np.ndarray,
    v: np.ndarray,
    *,
    groups: np.ndarray | None = None,
    level: float = 0.95,
    robust: bool = False,
) -> OLSFit:
    """OLS of ``v`` on ``u`` (both ``(n,)``); cluster-robust by ``groups`` when given.

    ``robust=True`` (without ``groups``) uses HC3 heteroskedasticity-robust
    standard errors (MacKinnon & White 1985), the small-sample choice: with a
    handful of points (one per model size) it is the cross-check to set beside
    a bootstrap interval of the same slope.
    """
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    if u.size < 3:
        raise ValueError(f"need at least 3 points for OLS, got {u.size}")
    X = sm.add_constant(u, has_constant="add")
    model = sm.OLS(v, X)
    if groups is not None and len(np.unique(groups)) >= 2:
        codes = pd.factorize(pd.Series(np.asarray(groups, dtype=object)))[0]
        res, cov = model.fit(cov_type="cluster", cov_kwds={"groups": codes}), "cluster"
    elif robust:
        res, cov = model.fit(cov_type="HC3"), "HC3"
    else:
        res, cov = model.fit(), "nonrobust"
    ci = np.asarray(res.conf_int(alpha=1 - level))
    params = np.asarray(res.params)
    return OLSFit(
        slope=float(params[1]),
        slope_ci=(float(ci[1, 0]), float(ci[1, 1])),
        intercept=float(params[0]),
        intercept_ci=(float(ci[0, 0]), float(ci[0, 1])),
        r2=float(res.rsquared),
        n=int(u.size),
        cov_type=cov,
    )


def loglog_ols(
    x: np.ndarray,
    y: np.ndarray,
    *,
    offset: float = 0.0,
    groups: np.ndarray | None = None,
    level: float = 0.95,
    robust: bool = False,
) -> OLSFit:
    """OLS of ``log(y - offset)`` on ``log x``: slope ``-alpha``, intercept ``log A``.

    Parameters
    ----------
    x, y
        Shape ``(n,)``; points with ``x <= 0`` or ``y <= offset`` are dropped.
    offset
        Irreducible term subtracted first (e.g. a fitted ``E``).
    groups
        Labels ``(n,)`` for cluster-robust standard errors (points within a
        run are correlated).
    robust
        HC3 robust standard errors (see :func:`ols`).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = (x > 0) & (y > offset)
    g = None if groups is None else np.asarray(groups, dtype=object)[ok]
    return ols(np.log(x[ok]), np.log(y[ok] - offset), groups=g, level=level, robust=robust)


def cross_check(result: FitResult, *, level: float | None = None) -> pd.DataFrame:
    """Compare the nonlinear fit with the law's linearized OLS fits.

    Returns
    -------
    pandas.DataFrame
        One row per (relation, coefficient): the OLS estimate and CI, the value
        implied by the nonlinear parameters, and whether it lies in the CI.
        Empty if the law declares no linearization.
    """
    if result.problem is None:
        raise ValueError("result has no problem attached")
    law, data = result.problem.law, result.problem.data
    level = result.level if level is None else level
    cols = [
        "relation",
        "coefficient",
        "param",
        "ols",
        "ols_lo",
        "ols_hi",
        "implied",
        "within_ci",
        "n",
        "r2",
    ]
    if law.linearize is None:
        return pd.DataFrame(columns=cols)
    rows = []
    for label, u, v, mapping in law.linearize(result.params, data.x, data.y, data.group_masks()):
        if np.size(u) < 3:
            continue
        fit = ols(u, v, level=level)
        for coef in ("slope", "intercept"):
            if coef not in mapping:
                continue
            name, f = mapping[coef]
            est, (lo, hi) = (
                (fit.slope, fit.slope_ci) if coef == "slope" else (fit.intercept, fit.intercept_ci)
            )
            implied = float(f(result.params))
            rows.append(
                [label, coef, name, est, lo, hi, implied, bool(lo <= implied <= hi), fit.n, fit.r2]
            )
    return pd.DataFrame(rows, columns=cols)
