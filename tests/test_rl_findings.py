"""The RL study's analysis results as named estimates (studies/rl/findings.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from scalinglab import record as rec
from scalinglab.claims_file import claims_for
from scalinglab.finding import ZeroWidthInterval
from scalinglab.paths import notebooks_dir
from scalinglab.studies.rl import findings, halfruns, sound_findings
from scalinglab.studies.rl.plots import symlog_threshold, symlog_ticks

CLAIMS = notebooks_dir() / "claims" / "rl_scaling.toml"


def _half_row(size, *, a_ok=True, rmse=0.02, rmse_ci=(0.03, 0.05)):
    return {
        "model_size": size,
        "A_error": 0.01,
        "A_error_lo": -0.02,
        "A_error_hi": 0.04,
        "A_half_identified": a_ok,
        "A_half_note": "" if a_ok else "A at its bound 1 in 40% of refits",
        "final_error": -0.03,
        "final_error_lo": -0.05,
        "final_error_hi": 0.0,
        "rmse": rmse,
        "rmse_lo": rmse_ci[0],
        "rmse_hi": rmse_ci[1],
    }


def test_half_compute_findings_carry_method_headline_and_identification():
    half = pd.DataFrame([_half_row("m", a_ok=False), _half_row("s")])
    extra = pd.DataFrame([{"model_size": "s", "mae": 0.1, "mae_lo": 0.05, "mae_hi": 0.2}])
    out = {
        n.name: n
        for n in findings.half_compute_findings(
            half, extra, largest="m", fit_frac=0.5, level=0.9, pred_reps=7, reps=11
        )
    }
    a_m = out["scalerl/m/A_pred_error"]
    assert a_m.headline and not a_m.estimate.identified and "40%" in a_m.estimate.note
    assert not out["scalerl/s/A_pred_error"].headline  # headlines at the largest size only
    assert out["scalerl/s/A_pred_error"].estimate.note is None
    e = out["scalerl/s/final_pred_error"].estimate
    assert (e.level, e.resamples, e.ci) == (0.9, 7, (-0.05, 0.0))
    assert e.method == findings.OVER_SEEDS
    # the RMSE's resampled interval lies above its point: extended to cover it
    r = out["scalerl/s/rmse"].estimate
    assert r.ci == (0.02, 0.05) and "extended to the point" in r.method
    assert out["extrapolation/s/mae"].estimate.resamples == 11
    assert "50%" in out["extrapolation/s/mae"].description
    # a point outside its own resampled interval (two runs: the point is one of three
    # distinct resamples, refitted to 1e-7) gets no interval, not identified, with why
    two = {**_half_row("xl"), "A_error": 0.0595789178, "A_error_hi": 0.0595787914}
    out = {
        n.name: n.estimate
        for n in findings.half_compute_findings(
            pd.DataFrame([two]),
            extra.iloc[:0],
            largest="xl",
            fit_frac=0.5,
            level=0.95,
            pred_reps=7,
            reps=11,
        )
    }
    bad = out["scalerl/xl/A_pred_error"]
    assert bad.ci is None and not bad.identified and "outside its resampled" in bad.note
    assert out["scalerl/xl/final_pred_error"].ci == (-0.05, 0.0)


def _phase_row(size="s", **kw):
    row = {
        "model_size": size,
        "R0": 0.05,
        "Rmax": 0.8,
        "rise_resolved": True,
        "bend_inside": True,
        "eval_dt": 0.0125,
        "t90_early": 0.5,
        "early_fail_share": 0.0,
        "t90_error": 0.02,
        "t90_error_lo": -0.01,
        "t90_error_hi": 0.05,
        "t90_lo": 0.5,
        "t90_hi": 0.7,
    }
    for name, v in (("t10", 0.1), ("t50", 0.3), ("t90", 0.6)):
        row |= {name: v, f"{name}_lo": v - 0.05, f"{name}_hi": v + 0.05}
    return row | kw


@pytest.mark.parametrize(
    ("change", "unidentified", "why"),
    [
        ({}, set(), None),
        ({"R0": -0.2}, {"t10"}, "R0 = -0.200 < 0"),
        ({"early_fail_share": 0.25}, {"t90_early_error"}, "25% of refits"),
        ({"t90_early": np.nan}, {"t90_early_error"}, "point fit"),
        ({"rise_resolved": False}, {"t10", "t50", "t90"}, "a step"),
        (
            {"bend_inside": False, "R0": -0.2, "t50": 1.7},
            {"t10", "t50", "t90", "t90_early_error"},
            "t50 = 1.70 lies outside training",
        ),
    ],
)
def test_phase_findings_say_which_points_the_data_do_not_pin(change, unidentified, why):
    ph = pd.DataFrame([_phase_row(**change)])
    out = {
        n.name.split("/")[-1]: n
        for n in findings.phase_findings(ph, largest="s", early_frac=0.3, level=0.95, reps=5)
    }
    assert set(out) == {"t10", "t50", "t90", "t90_early_error"}
    bad = {k for k, n in out.items() if not n.estimate.identified}
    assert bad == unidentified
    for k in bad:
        assert why in out[k].estimate.note
    assert out["t90_early_error"].headline


def test_phase_table_flags_absurd_fits_as_not_identified():
    ph = pd.DataFrame(
        [
            _phase_row("s"),
            _phase_row("m", R0=-259.0, Rmax=2.4e4, bend_inside=False, t50=-5.5),
            _phase_row("l", Rmax=1.3),
        ]
    )
    for col in ("rmse_logistic", "rmse_exp"):
        ph[col] = 0.01
    t = findings.phase_table(ph, early_frac=0.3)
    assert t.loc["s", "identified"] == "yes"
    assert t.loc["m", "identified"].startswith("not identified: t10, t50, t90")
    assert "R0/Rmax outside [0, 1]" in t.loc["l", "identified"]
    # the absurd numbers are not printed as results; the identified row keeps its own
    assert t.loc[["m", "l"], ["R0", "Rmax", "t90"]].isna().all().all()
    assert t.loc["s", ["R0", "Rmax", "t90"]].notna().all()
    assert (t["rmse_logistic"] == 0.01).all()


def test_run_phase_findings_without_any_slow_start_leave_the_spread_unidentified():
    def share(v, ci=(0.0, 0.0)):
        return {"value": v, "ci": ci, "n_runs": 9, "by_size": {}}

    shares = {
        "slow_start": share(0.0),
        "plateau": share(0.78, (0.56, 1.0)),
        "three_phases": share(0.0),
        "predicted": share(0.0),
        "t10_seed_sd": share(0.001, (0.0, 0.001)),
        "t10_start_rho": share(0.87, (0.87, 0.87)),
    }
    out = {
        n.name: n
        for n in findings.run_phase_findings(
            shares, base="baseline", early_frac=0.3, level=0.95, reps=9
        )
    }
    assert out["phases/runs/three_phases_share"].headline
    # 0 of 9 runs in every resample: not [0, 0] but Wilson's interval over the 9 runs
    three = out["phases/runs/three_phases_share"].estimate
    assert three.lo == 0.0 and three.hi == pytest.approx(0.2991, abs=1e-3)
    assert "Wilson" in three.method
    assert out["phases/runs/plateau_share"].estimate.ci == (0.56, 1.0)  # kept as it was
    assert "of the 9 baseline runs" in out["phases/runs/plateau_share"].description
    for name in ("t10_seed_sd", "t10_start_rho"):
        e = out[f"phases/runs/{name}"].estimate
        assert not e.identified and "no run has a slow start" in e.note
    shares["slow_start"] = share(0.3, (0.1, 0.5))
    out = findings.run_phase_findings(shares, base="b", early_frac=0.3, level=0.95, reps=9)
    assert all(n.estimate.identified for n in out)
    # runs whose own logistic is not identified (climbing from step 0, or falling) time
    # no phase: every run-level finding is withheld, not decided on fit artefacts
    for k, identified in ((4, False), (8, True)):
        shares["fits"] = {"identified": k, "n_runs": 9}
        out = findings.run_phase_findings(shares, base="b", early_frac=0.3, level=0.95, reps=9)
        assert all(n.estimate.identified is identified for n in out)
        if not identified:
            assert all("in only 4 of 9 runs" in n.estimate.note for n in out)


def test_k_table_prints_intervals_as_rounded_text():
    kn = {
        "sizes": ["s", "m"],
        "n_params": [1e4, 1e5],
        "k_slope": [(0.49, (0.4329525900689018, 0.5385119163012346)), (0.54, (0.46, 0.64))],
        "k_law": [(0.45, None), (0.5, None)],
    }
    t = findings.k_table(kn)
    assert t.loc["s", "k_slope_ci"] == "[0.433, 0.539]"
    assert list(t["k_slope"]) == [0.49, 0.54]


def test_ablation_findings_headline_the_controls_and_flag_a_spread_on_its_bound():
    effects = pd.DataFrame(
        [
            {
                "variant": v,
                "metric": m,
                "delta": -0.5,
                "delta_lo": -0.6,
                "delta_hi": -0.4,
                "identified": True,
                "note": "",
                "sizes": "s, m",
                "n_seeds": 5,
                "mde": 0.1234,
                "p_improve": 0.1,
                "p_lo": 0.0,
                "p_hi": 0.3,
            }
            for v in ("len_cap", "sample_agg")
            for m in ("A", "log10_C_mid")
        ]
    )
    spread = {"sd": 0.1, "ci": (0.05, 0.12), "ci_extended": False, "at_bound": 0.22}
    out = {
        n.name: n
        for n in findings.ablation_findings(effects, spread, base="baseline", level=0.95, reps=100)
    }
    assert out["ablation/len_cap/delta_A"].headline
    assert not out["ablation/sample_agg/delta_A"].headline
    assert "ablation/len_cap/p_improve_A" in out
    assert "ablation/len_cap/p_improve_log10_C_mid" not in out  # no P(X > Y) on C_mid
    assert "minimum detectable effect 0.123" in out["ablation/len_cap/delta_A"].description
    sd = out["scalerl/A_seed_sd"].estimate
    assert not sd.identified and "22%" in sd.note


def test_record_all_records_each_named_estimate_once():
    rec.clear()
    try:
        after = {
            "mean": math.nan,
            "ci": (math.nan, math.nan),
            "n_runs": 0,
            "n_total": 9,
            "n_plateau": 0,
            "share_gaining": math.nan,
        }
        got = findings.record_all(findings.plateau_findings(after, level=0.95))
        assert [f.name for f in got] == ["plateau/gain_after", "plateau/share_gaining"]
        gain = got[0]
        assert gain.ci is None and gain.level == 0.95 and gain.method.startswith("Student t")
        assert not gain.identified and "only 0 of 9 runs" in gain.note
        assert [f.name for f in rec.findings()] == [f.name for f in got]
        # a sensitivity reading is named apart, says which runs, and adds no share
        alt = findings.plateau_findings(
            after | {"mean": 0.1, "ci": (0.0, 0.2), "n_runs": 4},
            level=0.95,
            name="plateau/gain_after/all_variants",
            runs="every variant",
            share=False,
        )
        assert [f.name for f in alt] == ["plateau/gain_after/all_variants"]
        assert "mean over the 4 runs (every variant)" in alt[0].description
    finally:
        rec.clear()


def _recorded(names):
    return {
        n: {"name": n, "point": 0.0, "ci": [-0.01, 0.01], "identified": True, "level": 0.95}
        for n in names
    }


def test_claims_file_decides_scalerl4_on_the_design_ablations_the_sweep_ran():
    sizes = ["s", "m"]
    names = _claim_names(sizes)
    values = findings.claim_values(sizes, ["baseline"], early_frac=0.3)
    got = {c.id: c for c in claims_for(CLAIMS, values, _recorded(names))}
    assert got["SCALERL-4"].untested == "no design ablation in this run"
    assert got["CONTROL-A"].untested and got["TAN-3"].untested == "fewer than 3 sizes"
    assert got["TAN-2"].findings  # a claim over the sizes is expanded per size
    # k > 0 could not fail: TAN-1 is decided by the held-out comparison with the sigmoid
    # and TAN-1-linear by the curvature at every size; SCALERL-2 run by run, SCALERL-3 on
    # the RL-seed spread alone
    assert got["TAN-1"].findings == ("tan/heldout_rmse_delta",)
    assert got["TAN-1-linear"].findings == ("tan/s/curvature", "tan/m/curvature")
    assert got["SCALERL-2"].findings == ("scalerl/half_runs/A_abs_error",)
    assert got["SCALERL-3"].findings == ("spread/A/rl_sd",)
    assert all(c.untested is None for k, c in got.items() if k.startswith(("TAN-1", "SCALERL-2")))
    assert "first 30%" in got["GRPOLAW-1-early"].statement
    values = findings.claim_values(sizes, ["baseline", "batch_norm"], early_frac=0.3)
    got = {
        c.id: c
        for c in claims_for(CLAIMS, values, _recorded([*names, "ablation/batch_norm/delta_A"]))
    }
    assert got["SCALERL-4"].findings == ("ablation/batch_norm/delta_A",)
    for c in got.values():  # every paper claim is tested outside its regime
        if c.id.startswith("CONTROL"):
            assert c.scope == "project" and c.regime.startswith("outside: ")
        else:
            assert c.scope == "paper" and c.regime.startswith("outside: ")
    # a user's own logs: no claim of the file is about them
    values = findings.claim_values(sizes, ["baseline"], early_frac=0.3, user_data=True)
    assert claims_for(CLAIMS, values, _recorded(names)) == []


def _claim_names(sizes):
    names = [f"scalerl/{s}/{p}" for s in sizes for p in ("rmse", "lack_of_fit", "A_pred_error")]
    names += [f"scalerl/{s}/{e}" for s in sizes for e in ("final_pred_error", "final_abs_error")]
    names += [f"tan/k/{s}" for s in sizes] + ["tan/k_rise", "tan/N0", "scalerl/A_seed_sd"]
    names += [f"phases/{s}/{p}" for s in sizes for p in ("t10", "t90", "t90_early_error")]
    names += [f"phases/runs/{p}" for p in ("three_phases_share", "t10_seed_sd", "predicted_share")]
    names += ["plateau/gain_after", "scalerl/half_runs/A_abs_error", "spread/A/rl_sd"]
    return names + ["tan/heldout_rmse_delta"] + [f"tan/{s}/curvature" for s in sizes]


def test_scalerl2s_regime_names_the_runs_its_finding_averages():
    # per-run half fits (halfruns.per_run_half_fits' columns) of three variants: 5 runs
    # pass every rule (3 baseline, 2 half_lr); one baseline run fails each of unstable,
    # A on its bound and a half short of 4x C_mid, a len_cap run has C_mid too early
    ok = {"model_size": "s", "n_params": 1e4, "A_error": 0.01, "multiple": 10.0}
    ok |= {"unstable": False, "A_full_on_bound": False, "took_off": True, "C_mid_inside": True}
    rows = [ok | {"variant": "baseline", "seed": i} for i in range(3)]
    rows += [ok | {"variant": "half_lr", "seed": i, "A_error": -0.03} for i in range(2)]
    rows += [
        ok | {"variant": "baseline", "seed": 3, "unstable": True},
        ok | {"variant": "baseline", "seed": 4, "A_full_on_bound": True},
        ok | {"variant": "baseline", "seed": 5, "multiple": 2.0},
        ok | {"variant": "len_cap", "seed": 0, "C_mid_inside": False},
    ]
    dec = halfruns.half_fit_decision(pd.DataFrame(rows), min_multiple=4.0)
    pop = dec["population"]
    assert dec["n_eligible"] == pop["n_eligible"] == 5 and dec["estimate"].n == 5
    assert pop["by_variant"] == {"baseline": (3, 6), "half_lr": (2, 2), "len_cap": (0, 1)}
    assert [n for _, n in pop["left_out"]] == [1, 1, 0, 1, 1]  # no run without its fits
    enter = "5 of 9 runs enter (baseline 3 of 6, half_lr 2 of 2, len_cap 0 of 1)"
    scope_text = halfruns.scope_text(pop)
    assert enter in scope_text and "1 with A on its bound 1" in scope_text
    sizes = ["s", "m"]
    values = findings.claim_values(
        sizes,
        ["baseline", "half_lr", "len_cap"],
        early_frac=0.3,
        scalerl_scope="stable baseline runs, s 2 of 4",
        half_runs_scope=scope_text,
    )
    got = {c.id: c for c in claims_for(CLAIMS, values, _recorded(_claim_names(sizes)))}
    # SCALERL-2 states the runs its mean is over, not the baseline's stable runs (the
    # pooled fits' scope, which SCALERL-2-final keeps)
    assert enter in got["SCALERL-2"].regime
    assert "stable baseline runs" not in got["SCALERL-2"].regime
    assert "stable baseline runs" in got["SCALERL-2-final"].regime
    assert "every variant" in got["SCALERL-2"].statement
    named = {n.name: n for n in sound_findings.half_run_findings(dec, min_multiple=4.0)}
    desc = named["scalerl/half_runs/A_abs_error"].description
    assert "the 5 of 9 fitted runs (baseline 3 of 6, half_lr 2 of 2, len_cap 0 of 1)" in desc
    assert "stable" in desc and "off its bound" in desc


def test_symlog_threshold_is_the_power_of_ten_below_the_first_evaluation():
    assert symlog_threshold([0.0, 2.3e9, 5e12]) == 1e9
    assert symlog_threshold([0.0, 1e9]) == 1e9
    with pytest.raises(ValueError, match="no positive compute"):
        symlog_threshold([0.0, 0.0])
    # no tick between 0 and the threshold (its label overlapped "0")
    assert symlog_ticks([0.0, 8.5e9, 4e12]) == [0.0, 1e9, 1e10, 1e11, 1e12, 1e13]


def test_tan3_is_not_identified_when_either_fit_puts_n0_on_its_bound():
    def kn(full_ok, held_ok):
        return {
            "Kmax": (0.6, (0.5, 0.7)),
            "N0": (247.0, (247.0, 1.5e4)),
            "sizes": ["s", "m", "l"],
            "n_params": [2.5e4, 8e4, 2e5],
            "k_slope": [(0.5, (0.4, 0.6))] * 3,
            "k_rise": (0.1, (-0.1, 0.3)),
            "N0_identified": (full_ok, "" if full_ok else "N0 = 247 at the lower bound"),
            "holdout": {
                "size": "l",
                "error": 0.33,
                "error_ci": (0.18, 0.65),
                "N0_identified": (held_ok, "" if held_ok else "N0 at the upper bound"),
            },
        }

    def holdout(k, **kw):
        got = {n.name: n for n in findings.kn_findings(k, level=0.95, reps=10, **kw)}
        return got["tan/holdout_k_error"].estimate

    assert holdout(kn(True, True)).identified
    full = holdout(kn(False, True))
    assert not full.identified and "every size" in full.note and "lower bound" in full.note
    held = holdout(kn(True, False))
    assert not held.identified and "smaller sizes" in held.note
    names = [
        n.name for n in findings.kn_findings(kn(True, True), level=0.95, reps=10, per_size=False)
    ]
    assert "tan/k/s" not in names and "tan/k_rise" not in names and "tan/N0" in names


def test_coverage_findings_state_the_coverage_at_the_n_used():
    from scalinglab.stats.calibration import seed_mean_coverage
    from scalinglab.studies.rl import sound_findings

    vals = np.random.default_rng(0).lognormal(0, 0.5, 40)
    cov = seed_mean_coverage(vals, ns=(3, 5), sims=400, resamples=200)
    got = {n.name: n.estimate for n in sound_findings.coverage_findings(cov, n_used=3)}
    t3 = cov[(cov["method"] == "Student t") & (cov["n"] == 3)]["coverage"].iloc[0]
    assert got["coverage/t_at_n"].point == t3
    # the percentile bootstrap under-covers at 3 values; the t interval less so
    assert got["coverage/percentile_at_n"].point < got["coverage/t_at_n"].point


def test_a_zero_width_interval_reaches_record_with_its_reason_and_is_dropped_there():
    """``estimate_of`` does not drop a degenerate interval itself: it hands ``record`` the reason
    (``no_interval``), and ``record`` drops the interval and demotes the headline."""
    flat = findings.estimate_of(
        0.5, (0.5, 0.5 + 1e-15), level=0.95, method=findings.OVER_SEEDS, n=4
    )
    assert flat.ci == (0.5, 0.5) and flat.no_interval == "every resample gave the same value"
    rec.clear()
    try:
        (got,) = findings.record_all([findings.Named("x/flat", flat, "a flat one", headline=True)])
        assert got.ci is None and not got.headline
        assert "zero width" in got.note and "every resample gave the same value" in got.note
        # the same interval without the reason is refused by record (one path for all)
        with pytest.raises(ZeroWidthInterval):
            rec.record("x/bare", flat.replace(no_interval=None))
    finally:
        rec.clear()
    # reinterval goes through the same check (Estimate.replace, then checked)
    again = findings.reinterval(flat.replace(no_interval=None), method="m2")
    assert again.method == "m2" and again.no_interval is not None
    wide = findings.reinterval(findings.estimate_of(0.3, (0.1, 0.5), level=0.95), n=7)
    assert wide.ci == (0.1, 0.5) and wide.n == 7 and wide.no_interval is None


def test_phase_findings_carry_each_sizes_own_number_of_runs():
    """A design whose sizes have different numbers of runs (v3 with its extension) records
    each size's n, not the smallest one everywhere."""
    ph = pd.DataFrame([_phase_row(), _phase_row(model_size="l")])
    out = findings.phase_findings(
        ph, largest="l", early_frac=0.3, level=0.95, reps=5, n={"s": 4, "l": 40}
    )
    got = {n.name: n.estimate.n for n in out}
    assert got["phases/s/t10"] == 4 and got["phases/l/t10"] == 40
    assert got["phases/l/t90_early_error"] == 40
    same = findings.phase_findings(ph, largest="l", early_frac=0.3, level=0.95, reps=5, n=4)
    assert {n.estimate.n for n in same} == {4}


def test_a_point_fit_outside_its_refits_keeps_no_interval_and_is_not_identified():
    from scalinglab.estimate import Estimate
    from scalinglab.studies.rl.findings_fits import point_outside_refits

    inside = Estimate(5.0e7, 4.9e7, 6.0e7, level=0.95)
    assert point_outside_refits(inside) is inside
    at_edge = Estimate(4.9e7 * (1 - 1e-7), 4.9e7, 6.0e7, level=0.95)  # optimizer tolerance
    assert point_outside_refits(at_edge) is at_edge
    out = point_outside_refits(Estimate(4.7676e7, 4.7677e7, 6.26e7, level=0.95))
    assert out.lo is None and out.hi is None and out.identified is False
    assert "outside its refits" in out.note


def test_n0_on_a_bound_is_shown_as_the_bound_not_a_value():
    from scalinglab.studies.rl import findings_fits, kn

    assert kn.n0_bound_side(247.36, (247.36, 8.0e7)) == (247.36, "lower")
    assert kn.n0_bound_side(8.0e7 * (1 - 1e-6), (247.36, 8.0e7)) == (8.0e7, "upper")
    assert kn.n0_bound_side(5.0e4, (247.36, 8.0e7)) is None
    fit = {
        "Kmax": (0.3, (0.2, 0.4)),
        "N0": (247.36, (247.36, 247.36)),
        "N0_bounds": (247.36, 8.0e7),
        "N0_identified": (False, "N0 = 247.4 at the lower bound 247.4 of its range"),
        "sizes": ["s", "xl"],
        "n_params": [2.5e4, 8.0e5],
        "k_slope": [(0.5, (0.4, 0.6)), (0.2, (0.1, 0.3))],
        "k_rise": (-0.3, (-0.5, -0.1)),
    }
    named = {f.name: f.estimate for f in findings_fits.kn_findings(fit, level=0.95, reps=10, n=4)}
    n0 = named["tan/N0"]
    assert not n0.identified and (n0.bound, n0.side) == (247.36, "lower")
