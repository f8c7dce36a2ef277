"""The exponentiated power law of coverage: registration, recovery, extrapolation."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.fitting import coverage_law as law
from scalinglab.fitting import get_law
from scalinglab.stats import passk as cv


def test_law_is_registered_with_the_engine():
    reg = get_law("exp_power")
    assert reg.name == "exp_power" and [p.name for p in reg.params] == ["a", "b"]
    law.ensure_registered()  # idempotent


@pytest.mark.parametrize(("a", "b"), [(-1.2, -0.4), (-3.0, -0.15), (-0.5, -0.8)])
def test_fit_recovers_known_parameters(a, b):
    ks = cv.k_grid(1024)
    res = law.fit_coverage(ks, np.exp(a * ks.astype(float) ** b))
    assert res.params["a"] == pytest.approx(a, rel=1e-5)
    assert res.params["b"] == pytest.approx(b, rel=1e-5)


def test_fit_recovers_parameters_from_simulated_problems():
    # per-problem success rates p ~ Beta(0.3, 3): coverage is exp-power-like; the fit on
    # simulated samples lands close to the fit on the exact coverage of the same problems
    rng = np.random.default_rng(0)
    p = rng.beta(0.3, 3.0, size=3000)
    n = 512
    c = rng.binomial(n, p)
    ks = cv.k_grid(128)
    est = law.fit_coverage(ks, cv.coverage(np.full(len(p), n), c, ks))
    exact = law.fit_coverage(ks, (1 - (1 - p[:, None]) ** ks[None, :]).mean(axis=0))
    assert est.params["b"] == pytest.approx(exact.params["b"], abs=0.03)
    assert est.params["a"] == pytest.approx(exact.params["a"], abs=0.1)
    assert est.params["b"] < 0 and est.params["a"] < 0


@pytest.mark.slow
def test_extrapolation_error_is_small_on_law_data_and_bootstrap_brackets():
    a, b = -2.0, -0.3
    ks = cv.k_grid(256)
    cov = np.exp(a * ks.astype(float) ** b)
    # problems that each have pass@k = cov exactly: prompt resampling leaves it unchanged
    per = np.tile(cov, (20, 1))
    draws = cv.prompt_draws(20, reps=5, seed=0)
    err, err_draws = law.extrapolate(ks, per, draws, k_fit=32)
    assert abs(err) < 1e-6 and np.allclose(err_draws, err, atol=1e-6)
    fitted = law.fit_bootstrap(ks, per, draws)
    lo, hi = fitted.ci("b")
    assert lo <= b + 1e-6 and hi >= b - 1e-6


def test_fit_needs_three_informative_points():
    with pytest.raises(ValueError, match=">= 3 points"):
        law.fit_coverage(np.array([1, 2, 4]), np.array([0.5, 1.0, 1.0]))
