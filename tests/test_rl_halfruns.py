"""ScaleRL's half-compute test run by run, and Tan et al.'s line held out against the
sigmoid, on curves with known laws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from scalinglab.studies.rl import halfruns, sound_findings, tanlaw

STEPS = np.arange(0, 4001, 50)
C = STEPS * 1e9


def _sigmoid(c, r0=0.2, a=0.8, b=1.5, c_mid=1e11):
    out = np.full(c.shape, r0, dtype=float)
    pos = c > 0
    out[pos] = r0 + (a - r0) / (1 + (c_mid / c[pos]) ** b)
    return out


def _power(c, e0=0.3, k=0.25):
    out = np.full(c.shape, 0.2, dtype=float)
    pos = c > 0
    out[pos] = 1 - np.minimum(0.8, 10 ** (e0 - k * np.log10(c[pos] / 1e9) - 0.3))
    return out


def _frame(runs, *, noise=0.003, seed=0):
    """``runs``: (size, n_params, variant, seed, fn) -> one row per evaluation."""
    rng = np.random.default_rng(seed)
    rows = []
    for size, n, var, sd, fn in runs:
        y = np.clip(fn(C) + rng.normal(0, noise, C.size), 0, 1)
        y[0] = fn(C[:1])[0]
        rows += [
            {
                "model_size": size,
                "n_params": n,
                "variant": var,
                "seed": sd,
                "step": int(st),
                "compute": c,
                "pass_rate": v,
            }
            for st, c, v in zip(STEPS, C, y, strict=True)
        ]
    return pd.DataFrame(rows)


def test_a_long_horizon_predicts_a_and_a_short_one_is_not_eligible():
    long_ = [
        ("s", 1e4, "baseline", sd, lambda c, m=m: _sigmoid(c, c_mid=m))
        for sd, m in enumerate((6e10, 8e10, 1e11))
    ]
    # C_mid = 4e12: the run's whole compute (4e12) reaches 1x, its half 0.5x
    short = [("l", 1e5, "baseline", 0, lambda c: _sigmoid(c, a=0.9, c_mid=4e12))]
    r = halfruns.per_run_half_fits(_frame(long_ + short)).set_index(["model_size", "seed"])
    ok = halfruns.eligible(r.reset_index()).to_numpy()
    assert ok.tolist() == [True, True, True, False]
    for sd, m in enumerate((6e10, 8e10, 1e11)):
        row = r.loc[("s", sd)]
        # the multiple is the half's end (2e12) over the fitted C_mid
        assert row["multiple"] == pytest.approx(2e12 / row["C_mid_full"])
        assert row["C_mid_full"] == pytest.approx(m, rel=0.3) and row["multiple"] > 4
        # evaluation noise 0.003: both fits pin A to about 0.01
        assert abs(row["A_error"]) < 0.015 and row["A_full"] == pytest.approx(0.8, abs=0.01)
    assert r.loc[("l", 0), "multiple"] < 1
    dec = halfruns.half_fit_decision(r.reset_index())
    est = dec["estimate"]
    assert dec["n_eligible"] == 3 and est.identified
    assert 0 <= est.point < 0.015 and est.hi < 0.02  # SCALERL-2 would reproduce
    assert est.method.startswith("Student t over 3 runs")
    named = {n.name: n for n in sound_findings.half_run_findings(dec, min_multiple=4.0)}
    assert named["scalerl/half_runs/A_abs_error"].estimate is est
    assert named["scalerl/half_runs/n_eligible"].estimate.point == 3


def test_too_few_runs_past_the_multiple_leave_the_claim_not_identified():
    runs = [
        ("s", 1e4, "baseline", sd, lambda c, m=m: _sigmoid(c, c_mid=m))
        for sd, m in enumerate((1e12, 1.5e12, 2e12))
    ]
    r = halfruns.per_run_half_fits(_frame(runs))
    assert (r["multiple"] < 4).all()
    dec = halfruns.half_fit_decision(r, min_multiple=4.0)
    assert not dec["estimate"].identified and np.isnan(dec["estimate"].point)
    assert "only 0 of 3" in dec["estimate"].note and "20x" in dec["estimate"].note
    assert halfruns.keep_text(4.0) in dec["estimate"].note  # the rules as the code applies them
    # with a lower bar the same runs decide it
    assert halfruns.half_fit_decision(r, min_multiple=1.0)["estimate"].identified


def test_an_unstable_run_is_left_out_and_bins_count_the_rest():
    def falls(c):
        y = _sigmoid(c, c_mid=8e10)
        return np.where(c > 3e12, y - 0.3, y)

    runs = [
        ("s", 1e4, "baseline", 0, lambda c: _sigmoid(c, c_mid=8e10)),
        ("s", 1e4, "baseline", 1, falls),
    ]
    r = halfruns.per_run_half_fits(_frame(runs))
    assert r["unstable"].tolist() == [False, True]
    assert halfruns.eligible(r).tolist() == [True, False]
    b = halfruns.error_by_multiple(r).set_index("bin")
    assert b["runs"].sum() == 1 and b.loc["> 8x", "runs"] == 1
    assert b.loc["> 8x", "share_within_tol"] == 1.0


def test_tan_line_recovers_k_has_no_curvature_and_beats_the_sigmoid_on_its_own_law():
    laws_runs = [("s", 1e4, "baseline", sd, lambda c: _power(c, k=0.25)) for sd in range(3)]
    laws_runs += [("l", 1e5, "baseline", sd, lambda c: _power(c, k=0.4)) for sd in range(3)]
    df = _frame(laws_runs, noise=0.001)
    laws = tanlaw.per_run_power_laws(df)
    kt = tanlaw.k_by_size(laws, ["s", "l"], variant="baseline")
    assert kt.loc["s", "k"] == pytest.approx(0.25, abs=0.02)
    assert kt.loc["l", "k"] == pytest.approx(0.4, abs=0.02)
    assert kt.loc["s", "k_lo"] <= kt.loc["s", "k"] <= kt.loc["s", "k_hi"]
    assert abs(kt.loc["s", "curvature"]) < 0.02 and abs(kt.loc["l", "curvature"]) < 0.02
    comp = tanlaw.heldout_comparison(laws, halfruns.per_run_half_fits(df))
    assert len(comp) == 6
    assert tanlaw.comparison_estimate(comp).hi < 0.01  # TAN-1 would hold


def test_on_sigmoid_runs_the_line_bends_and_loses_held_out():
    # a flat start and a late take-off (as the RL runs from a low R0)
    runs = [
        ("s", 1e4, "baseline", sd, lambda c: _sigmoid(c, r0=0.05, a=0.85, b=3, c_mid=1.4e12))
        for sd in range(5)
    ]
    df = _frame(runs)
    laws = tanlaw.per_run_power_laws(df)
    assert (laws["curvature"] < -0.05).all()  # log L is concave in log C
    comp = tanlaw.heldout_comparison(laws, halfruns.per_run_half_fits(df))
    assert comp["sigmoid_wins"].all()
    assert tanlaw.comparison_estimate(comp).lo > 0.01  # TAN-1 would fail


def test_k_rise_is_welchs_interval_and_needs_two_runs_a_side():
    laws = pd.DataFrame(
        {
            "model_size": ["s"] * 3 + ["l"] * 4,
            "variant": "baseline",
            "k": [0.30, 0.35, 0.28, 0.50, 0.41, 0.62, 0.47],
        }
    )
    est = tanlaw.k_rise(laws, ["s", "l"], variant="baseline")
    a, b = np.array([0.50, 0.41, 0.62, 0.47]), np.array([0.30, 0.35, 0.28])
    ref = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert est.point == pytest.approx(a.mean() - b.mean())
    assert (est.lo, est.hi) == pytest.approx((ref.low, ref.high))
    one = tanlaw.k_rise(
        laws[laws["k"] != 0.30][laws["model_size"] == "l"].pipe(
            lambda t: pd.concat([t, laws.iloc[[0]]])
        ),
        ["s", "l"],
        variant="baseline",
    )
    assert not one.identified and "need 2 each" in one.note


def test_k_rise_takes_the_warm_start_as_its_unit_when_runs_share_one():
    # two base models a size, each with runs that agree closely: the runs are not
    # independent draws of the size, so the interval is over the base models' means
    laws = pd.DataFrame(
        {
            "model_size": ["s"] * 6 + ["l"] * 6,
            "variant": "baseline",
            "warm_start": [0, 0, 0, 1, 1, 1] * 2,
            "k": [0.30, 0.31, 0.29, 0.50, 0.51, 0.49, 0.60, 0.61, 0.59, 0.45, 0.46, 0.44],
        }
    )
    est = tanlaw.k_rise(laws, ["s", "l"], variant="baseline")
    ref = sps.ttest_ind([0.60, 0.45], [0.30, 0.50], equal_var=False).confidence_interval(0.95)
    assert est.point == pytest.approx(0.125)
    assert (est.lo, est.hi) == pytest.approx((ref.low, ref.high))
    assert est.method.startswith("Welch t over 2 and 2 warm starts") and est.n == 2
    runs = tanlaw.k_rise(laws.drop(columns="warm_start"), ["s", "l"], variant="baseline")
    assert runs.hi - runs.lo < (est.hi - est.lo) / 4  # treating runs as units: far narrower


def test_tan_findings_name_every_finding_even_without_a_held_out_comparison():
    runs = [("s", 1e4, "baseline", sd, lambda c: _power(c, k=0.25)) for sd in range(2)]
    runs += [("l", 1e5, "baseline", sd, lambda c: _power(c, k=0.4)) for sd in range(2)]
    laws = tanlaw.per_run_power_laws(_frame(runs))
    kt = tanlaw.k_by_size(laws, ["s", "l"], variant="baseline")
    empty = tanlaw.heldout_comparison(laws, halfruns.per_run_half_fits(_frame(runs)).iloc[:0])
    named = {
        n.name: n.estimate
        for n in sound_findings.tan_findings(
            kt,
            tanlaw.k_rise(laws, ["s", "l"], variant="baseline"),
            empty,
            tanlaw.comparison_estimate(empty),
            level=0.95,
            rise_stable=tanlaw.k_rise(laws.iloc[:3], ["s", "l"], variant="baseline"),
            comp_stable=tanlaw.comparison_estimate(empty),
        )
    }
    assert set(named) == {
        "tan/stable/k_rise",
        "tan/stable/heldout_rmse_delta",
        "tan/k/s",
        "tan/k/l",
        "tan/s/curvature",
        "tan/l/curvature",
        "tan/k_rise",
        "tan/heldout_rmse_delta",
        "tan/sigmoid_wins_share",
    }
    assert not named["tan/heldout_rmse_delta"].identified
    assert not named["tan/sigmoid_wins_share"].identified
    assert not named["tan/stable/k_rise"].identified  # one run left at l: need 2 a size
    assert named["tan/k_rise"].point == pytest.approx(0.15, abs=0.02)
    assert named["tan/k/s"].method == "Student t over 2 runs"


def test_a_fit_with_no_midpoint_gives_no_multiple_rather_than_failing(monkeypatch):
    """A flat fit (B = 0) can put C_mid at 0: the run has no multiple and is not eligible."""

    class Flat:
        params = {"A": 0.3, "B": 0.0, "C_mid": 0.0}

        def predict(self, c):
            return np.full(np.shape(c), 0.3)

    monkeypatch.setattr(halfruns, "_fit", lambda c, y, r0: Flat())
    runs = [("l", 1e5, "baseline", 0, lambda c: _sigmoid(c, a=0.3, b=0.0))]
    r = halfruns.per_run_half_fits(_frame(runs))
    assert np.isnan(r.loc[0, "multiple"]) and not r.loc[0, "C_mid_inside"]
    assert r.loc[0, "error"] == ""
    assert not halfruns.eligible(r).any()


def test_final_error_run_by_run_is_a_t_mean_over_stable_runs_per_size():
    def falls(c):
        y = _sigmoid(c, c_mid=8e10)
        return np.where(c > 3e12, y - 0.3, y)

    bent = [
        ("s", 1e4, "baseline", sd, lambda c, m=m: _sigmoid(c, c_mid=m))
        for sd, m in enumerate((6e10, 8e10, 1e11))
    ]
    # "l" bends after its half (C_mid 3e12 and 3.5e12): its two half fits disagree
    late = [
        ("l", 1e5, "baseline", sd, lambda c, m=m: _sigmoid(c, a=0.9, c_mid=m))
        for sd, m in enumerate((3e12, 3.5e12))
    ]
    other = [("s", 1e4, "half_lr", 0, lambda c: _sigmoid(c, c_mid=2e12))]
    r = halfruns.per_run_half_fits(_frame([*bent, ("s", 1e4, "baseline", 3, falls), *late, *other]))
    tab = halfruns.final_error_by_size(r, variant="baseline")
    assert list(tab.index) == ["s", "l"]
    s, big = tab.loc["s"], tab.loc["l"]
    assert s["runs"] == 3 and s["unstable"] == 1  # the falling run is left out
    assert abs(s["final_error"]) < 0.01 and s["final_error_lo"] < s["final_error_hi"]
    ok = r.loc[
        (r["model_size"] == "s") & (r["variant"] == "baseline") & ~r["unstable"].astype(bool)
    ]
    lo, hi = sps.t.interval(0.95, 2, loc=ok["final_error"].mean(), scale=sps.sem(ok["final_error"]))
    assert (s["final_error_lo"], s["final_error_hi"]) == pytest.approx((lo, hi))
    # two stable runs: no interval (the project's least is 3 runs)
    assert big["runs"] == 2 and np.isnan(big["final_error_lo"]) and np.isnan(big["final_error_hi"])
    two = halfruns.final_error_by_size(r, variant="baseline", min_runs=2).loc["l"]
    assert two["final_error_hi"] - two["final_error_lo"] > 0.1
    named = {n.name: n for n in sound_findings.final_error_findings(tab, level=0.95, fit_frac=0.5)}
    e = named["scalerl/s/final_pred_error"].estimate
    assert e.n == 3 and e.method.startswith("Student t over 3 runs") and e.identified
    # the claim reads the absolute error (signed errors of opposite sign would cancel)
    assert named["scalerl/l/final_abs_error"].headline  # the largest size
    assert not named["scalerl/l/final_pred_error"].headline
    a = named["scalerl/s/final_abs_error"].estimate
    alo, ahi = sps.t.interval(
        0.95, 2, loc=ok["final_error"].abs().mean(), scale=sps.sem(ok["final_error"].abs())
    )
    assert a.point == pytest.approx(ok["final_error"].abs().mean()) and a.point >= abs(e.point)
    assert a.ci == pytest.approx((alo, ahi))
    # fewer than 3 stable runs: no interval, not identified, with the reason
    e2 = named["scalerl/l/final_pred_error"].estimate
    assert e2.ci is None and not e2.identified and "2 stable run(s)" in e2.note
    assert "need 3" in e2.note


def test_the_judged_last_evaluation_is_held_out_of_the_full_fit_and_final_error():
    df = _frame([("l", 1e6, "baseline", 0, _sigmoid)])
    spiked = df.copy()
    spiked.loc[spiked.index[-1], "pass_rate"] += 0.15  # a high swing at the judged point
    held = halfruns.per_run_half_fits(spiked).iloc[0]
    clean = halfruns.per_run_half_fits(df).iloc[0]
    used = halfruns.per_run_half_fits(spiked, hold_out=0).iloc[0]
    # held out: the spike changes nothing the fits or the scores read
    for col in ("A_full", "A_half", "final_error", "rmse_later"):
        assert held[col] == pytest.approx(clean[col], rel=1e-9, abs=1e-12)
    assert held["n_later"] == clean["n_later"]
    # used: the full fit climbs and the half fit's last error turns negative
    assert used["A_full"] > clean["A_full"] + 0.01
    assert used["final_error"] < clean["final_error"] - 0.1
    laws = tanlaw.per_run_power_laws(spiked)
    assert laws["rmse_later_power"].iloc[0] == pytest.approx(
        tanlaw.per_run_power_laws(df)["rmse_later_power"].iloc[0], rel=1e-9
    )
    with pytest.raises(ValueError, match="hold_out"):
        halfruns.per_run_half_fits(df, hold_out=-1)


def test_the_rules_text_and_the_rules_code_are_one_list():
    from scalinglab.studies.rl import findings

    text = halfruns.keep_text(4.0)
    assert text.startswith("stable, have A off its bound 1, took off")
    assert text.endswith("and have a half window reaching >= 4x their C_mid")
    assert "6x their C_mid" in halfruns.keep_text(6.0)
    assert findings.HALF_RUNS_SCOPE.endswith(text)
    # every rule the text states is a rule the code applies, in the same order
    kept = [k for _, k, _ in halfruns._RULES if k]
    assert [text.index(k.format(m=4.0)) for k in kept] == sorted(
        text.index(k.format(m=4.0)) for k in kept
    )
    pop = {"by_variant": {"baseline": (2, 5), "half_lr": (1, 3)}}
    assert halfruns.variants_text(pop) == "baseline 2 of 5, half_lr 1 of 3"
