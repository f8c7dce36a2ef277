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


def test_a_size_without_room_for_the_claimed_gain_is_not_identified():
    from scalinglab.estimate import Estimate
    from scalinglab.studies.tts import analysis as tta

    est = Estimate(0.001, 0.0, 0.002, level=0.95, method="bootstrap over prompts, percentile")
    # pass@1 0.98 over 10 doublings: at most 0.002 per doubling, below LLM-1's 0.005
    out = tta.saturated(est, room=0.02 / 10, need=0.005, what="slope per doubling of k")
    assert not out.identified and "saturated" in out.note
    assert (out.point, out.lo, out.hi) == (est.point, est.lo, est.hi)
    # room enough: untouched, so a small slope there still decides the claim
    assert tta.saturated(est, room=0.05, need=0.005, what="slope").identified


def test_claim_value_reads_the_ledger_threshold():
    from scalinglab.claims_file import read_claims_file
    from scalinglab.paths import notebooks_dir
    from scalinglab.studies.tts import analysis as tta

    specs = {
        s.id: s.raw for s in read_claims_file(notebooks_dir() / "claims" / "test_time_scaling.toml")
    }
    assert tta.claim_value("LLM-1") == float(specs["LLM-1"]["value"])
    assert tta.claim_value("LLM-5") == float(specs["LLM-5"]["value"])
    with pytest.raises(KeyError, match="no claim"):
        tta.claim_value("NOPE-9")
