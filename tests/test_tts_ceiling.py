"""The coverage law with a ceiling: recovery, identification on its bound, never-solved share."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.stats import passk as cv
from scalinglab.studies.tts import ceiling as tceil


def test_fit_recovers_a_ceiling_below_one():
    ks = cv.k_grid(256).astype(float)
    res = tceil.fit_ceiling(ks, 0.97 * np.exp(-1.5 * ks**-0.5))
    assert res.params["c"] == pytest.approx(0.97, rel=1e-4)
    assert res.params["a"] == pytest.approx(-1.5, rel=1e-3)
    assert res.params["b"] == pytest.approx(-0.5, rel=1e-3)


def test_no_ceiling_lands_on_the_bound_and_is_not_identified():
    ks = cv.k_grid(256)
    cov = np.exp(-1.5 * ks.astype(float) ** -0.5)  # tends to 1: no ceiling
    per = np.tile(cov, (30, 1))
    fit = tceil.fit_ceiling_bootstrap(ks, per, cv.prompt_draws(30, reps=5, seed=0))
    assert bool(tceil.on_ceiling_bound(fit.point.params["c"]))
    est = fit.ceiling(level=0.95, method="refits")
    assert not est.identified and est.bound == 1.0 and "bound 1" in est.note


def test_ceiling_identified_from_simulated_problems_with_unsolvable_ones():
    # 10% of problems are never solved; the rest have success rates ~ Beta(1, 3):
    # coverage levels off near 0.9 within k = 256 and the ceiling is identified
    rng = np.random.default_rng(0)
    p = rng.beta(1.0, 3.0, size=400)
    p[:40] = 0.0
    n = 1024
    c = rng.binomial(n, p)
    ks = cv.k_grid(256)
    per = cv.pass_at_k(np.full(len(p), n), c, ks)
    fit = tceil.fit_ceiling_bootstrap(ks, per, cv.prompt_draws(len(p), reps=30, seed=1))
    est = fit.ceiling(level=0.95, method="refits")
    assert est.identified, est.note
    assert est.lo <= 0.9 + 0.02 and est.hi >= 0.9 - 0.01 and est.point < 0.95
    never = tceil.never_solved((np.arange(n)[None, :] < c[:, None]).astype(int))
    assert never == pytest.approx(np.mean(c == 0)) and never >= 0.1


def test_fit_needs_four_informative_points():
    with pytest.raises(ValueError, match=">= 4 points"):
        tceil.fit_ceiling(np.array([1, 2, 4, 8]), np.array([0.5, 0.7, 0.8, 1.0]))
