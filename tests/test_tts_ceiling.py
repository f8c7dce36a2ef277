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


def _rates(rates, *, prompts=200, n=32, seed=0):
    import xarray as xr

    rng = np.random.default_rng(seed)
    corr = np.stack([(rng.random((prompts, n)) < r).astype(np.int8) for r in rates.values()])
    return xr.Dataset(
        {
            "correct": (("size", "prompt", "sample"), corr),
            "answer": (("size", "prompt", "sample"), np.where(corr == 1, 1, 2)),
        },
        coords={"size": list(rates)},
    )


def test_slope_and_coverage_gain_carry_the_room_coverage_leaves_below_1():
    from scalinglab.studies.tts import analysis as tta

    ds = _rates({"s": 0.02, "l": 0.9})
    curves = tta.coverage_curves(ds, k_max=32, reps=50, seed=0)
    for s in ("s", "l"):
        slope = tta.loglinear_slope(curves, s)
        assert slope.room == pytest.approx((1 - curves.cov[s][0]) / 5)  # log2 32 doublings
        assert slope.point <= slope.room + 1e-12  # the bound the room states
        gain = tta.plateau(tta.majority(ds, k_max=32, reps=4), curves, s)["cov_gain"]
        assert gain.room == pytest.approx(1 - curves.cov[s][3])  # coverage at k_max / 8 = 4
        assert gain.point <= gain.room + 1e-12
    # l solves 90% of tries: coverage 1 by k = 4, no room for LLM-5's 0.02 gain
    assert tta.plateau(tta.majority(ds, k_max=32, reps=4), curves, "l")["cov_gain"].room < 0.02
    # coverage 1 on every prompt: no [1, 1] interval, the Wilson one of 200 of 200 prompts
    assert curves.cov["l"][31] == 1.0
    full = curves.estimate("l", 32)
    assert full.hi == pytest.approx(1.0) and 0.97 < full.lo < 1.0
    assert "Wilson score over 200" in full.method and full.n == 200


def test_the_ledger_reads_a_saturated_size_not_identified_and_decides_the_others(tmp_path):
    """LLM-1 and LLM-5 from the study's claims file on two sizes: one with room to grow
    (decided), one saturated (not identified, naming the room and the minimum effect)."""
    import scalinglab.record as rec
    from scalinglab.claims_file import claim_value
    from scalinglab.studies.tts import analysis as tta

    ds = _rates({"s": 0.02, "l": 0.99})
    curves = tta.coverage_curves(ds, k_max=32, reps=50, seed=0)
    maj = tta.majority(ds, k_max=32, reps=4)
    rec.clear()
    try:
        for s in ("s", "l"):
            rec.record(f"loglinear/{s}/slope", tta.loglinear_slope(curves, s))
            for what, est in tta.plateau(maj, curves, s).items():
                rec.record(f"majority/{s}/{what}", est)
        got = {
            v.claim.id: v
            for v in rec.claims_from(
                "test_time_scaling", sizes=["s", "l"], steps=["l_vs_s"], data="user"
            )
        }
        need = claim_value("test_time_scaling", "LLM-1")
        for cid, name in (("LLM-1", "loglinear/l/slope"), ("LLM-5", "majority/l/cov_gain")):
            v = got[cid]
            assert v.verdict == "not identified", v.reason
            assert f"{name} = " in v.reason and "saturated: room" in v.reason
            assert "loglinear/s" not in v.reason and "majority/s" not in v.reason
        assert f"minimum effect {need:g}" in got["LLM-1"].reason
        # the small size alone has room and is decided by its interval
        rec.clear()
        rec.record("loglinear/s/slope", tta.loglinear_slope(curves, "s"))
        for what, est in tta.plateau(maj, curves, "s").items():
            rec.record(f"majority/s/{what}", est)
        alone = {
            v.claim.id: v for v in rec.claims_from("test_time_scaling", sizes=["s"], data="user")
        }
        assert alone["LLM-1"].verdict == "reproduces" and alone["LLM-5"].verdict == "reproduces"
    finally:
        rec.clear()
