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
                "test_time_scaling",
                sizes=["s", "l"],
                steps=["l_vs_s"],
                data="user",
                policy_params="",
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
            v.claim.id: v
            for v in rec.claims_from(
                "test_time_scaling", sizes=["s"], data="user", policy_params=""
            )
        }
        assert alone["LLM-1"].verdict == "reproduces" and alone["LLM-5"].verdict == "reproduces"
    finally:
        rec.clear()


def test_a_ceiling_never_lies_below_a_coverage_the_policy_reached():
    """The fit leaves out points at coverage 1; without the floor it could put c under
    them (the medium report's ceiling/l/c [0.99965, 1] while coverage reached 1)."""
    rng = np.random.default_rng(3)
    p = rng.beta(8.0, 1.0, size=300)  # an almost saturated policy: every prompt solvable
    n = 256
    c = rng.binomial(n, p)
    c[c == 0] = 1  # every prompt solved at least once: coverage reaches 1 at k = n
    ks = cv.k_grid(n)
    per = cv.pass_at_k(np.full(len(p), n), c, ks)
    assert per.mean(axis=0)[-1] == 1.0
    fit = tceil.fit_ceiling_bootstrap(ks, per, cv.prompt_draws(len(p), reps=40, seed=0))
    assert fit.top == 1.0 and fit.top_draws.shape == (40,)
    assert np.all(fit.ceilings()[np.isfinite(fit.ceilings())] >= fit.top_draws - 1e-15)
    est = fit.ceiling(level=0.95, method="refits")
    assert est.point == 1.0 and not est.identified
    assert est.lo is None or est.lo >= float(np.min(fit.top_draws)) - 1e-15
    # a fit that put c below the coverage reached (as at the medium report's size l)
    from types import SimpleNamespace

    draws = np.column_stack([np.full(5, -1.0), np.full(5, -0.5), np.linspace(0.9995, 0.9999, 5)])
    low = tceil.CeilingFit(SimpleNamespace(params={"c": 0.9997}), draws, 1.0, np.ones(5))
    e = low.ceiling(level=0.95, method="refits")
    assert e.point == 1.0 and not e.identified and "reaches 1" in e.note
    assert low.share_at_bound() == 1.0 and e.lo >= 1.0 - 1e-12
    # a ceiling above the coverage reached is left as fitted
    high = tceil.CeilingFit(
        SimpleNamespace(params={"c": 0.97}), draws * [1, 1, 0.97], 0.95, np.full(5, 0.95)
    )
    assert high.ceiling(level=0.95, method="refits").point == 0.97


def test_extrapolation_and_majority_gain_carry_their_room_and_round_float_noise():
    from scalinglab.studies.tts import analysis as tta

    ds = _rates({"s": 0.05, "l": 0.95}, prompts=200, n=64)
    curves = tta.coverage_curves(ds, k_max=64, reps=40, seed=0)
    maj = tta.majority(ds, k_max=64, reps=4)
    extra = tta.extrapolation(curves, reps=40)
    k_fit = tta.extrapolation_k(64)
    for s, est in extra.items():
        assert est.room >= 1 - curves.cov[s][k_fit - 1] - 1e-12
        assert abs(est.point) <= est.room + 1e-12  # the bound the room states
    # l is solved within a few samples: its majority gain cannot rise by LLM-4's 0.02
    g = tta.plateau(maj, curves, "l")["maj_gain"]
    assert g.room < 0.02 and g.point <= g.room + 1e-12
    assert tta.plateau(maj, curves, "s")["maj_gain"].room > 0.5
    x = tta._denoise(np.array([-2.5e-12, 3e-10, 1e-6, np.nan]))
    assert x[0] == 0.0 and x[1] == 0.0 and x[2] == 1e-6 and np.isnan(x[3])


def test_the_ledger_reads_llm3_and_llm4_not_identified_on_a_saturated_size():
    """An equivalence band (LLM-3 within 0.03, LLM-4 within 0.02) that a size's bound
    keeps its finding inside cannot be failed there: not identified (saturated)."""
    import scalinglab.record as rec
    from scalinglab.estimate import Estimate

    rec.clear()
    try:
        pinned = Estimate(-6e-7, -1e-4, 0.0, level=0.95, method="b", n=256, room=2e-4)
        other = Estimate(0.5, 0.4, 0.6, level=0.95, method="b", n=256)  # LLM-1, LLM-5

        def record_all(extra: Estimate) -> None:
            rec.record("loglinear/l/slope", other)
            rec.record("majority/l/cov_gain", other)
            rec.record("extrapolation/l/error", extra)
            rec.record("majority/l/maj_gain", pinned.replace(point=5e-4, lo=0.0, hi=1.5e-3))

        record_all(pinned)
        got = {
            v.claim.id: v
            for v in rec.claims_from(
                "test_time_scaling", sizes=["l"], steps=[], data="user", policy_params=""
            )
        }
        for cid in ("LLM-3", "LLM-4"):
            assert got[cid].verdict == "not identified", got[cid].reason
            assert "saturated: room 0.0002 < the band's half-width" in got[cid].reason
        rec.clear()  # with room to leave the band the same interval reproduces
        record_all(pinned.replace(room=0.5))
        got = {
            v.claim.id: v
            for v in rec.claims_from(
                "test_time_scaling", sizes=["l"], steps=[], data="user", policy_params=""
            )
        }
        assert got["LLM-3"].verdict == "reproduces", got["LLM-3"].reason
    finally:
        rec.clear()
