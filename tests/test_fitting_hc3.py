"""HC3 robust standard errors of a log-log slope (statsmodels) against the sandwich by hand."""

from __future__ import annotations

import numpy as np
from scipy import stats

from scalinglab.fitting.diagnostics import loglog_ols


def test_hc3_slope_interval_is_the_hc3_sandwich():
    g = np.random.default_rng(3)
    x = np.geomspace(1e3, 1e6, 9)
    # Noise growing with size: the robust and textbook errors differ.
    y = 2.0 * x**-0.3 * np.exp(g.normal(scale=0.02 * np.arange(1, 10)))
    fit = loglog_ols(x, y, robust=True)
    plain = loglog_ols(x, y)

    X = np.column_stack([np.ones(x.size), np.log(x)])
    v = np.log(y)
    bread = np.linalg.inv(X.T @ X)
    beta = bread @ X.T @ v
    e = v - X @ beta
    h = np.einsum("ij,jk,ik->i", X, bread, X)
    meat = (X * (e**2 / (1 - h) ** 2)[:, None]).T @ X
    se = np.sqrt((bread @ meat @ bread)[1, 1])
    z = stats.norm.ppf(0.975)

    assert fit.cov_type == "HC3" and plain.cov_type == "nonrobust"
    assert np.isclose(fit.slope, beta[1], rtol=1e-12) and fit.slope == plain.slope
    np.testing.assert_allclose(fit.slope_ci, (beta[1] - z * se, beta[1] + z * se), rtol=1e-10)
    assert not np.allclose(fit.slope_ci, plain.slope_ci, rtol=1e-3)
