"""ScaleRL's half-compute test, the early plateau, data reuse and seed spread, on curves
with known laws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalinglab.studies.rl import ablations as rab
from scalinglab.studies.rl import findings_ablations as rfa
from scalinglab.studies.rl import predict as rlp

STEPS = np.arange(0, 1001, 25)
C = STEPS * 1e9


def _sigmoid(c, r0=0.03, a=0.7, b=2.0, c_mid=3e11):
    out = np.full(c.shape, r0)
    pos = c > 0
    out[pos] = r0 + (a - r0) / (1 + (c_mid / c[pos]) ** b)
    return out


def _frame(curves: dict, *, seeds=5, noise=0.005, seed=0, variant="baseline"):
    rng = np.random.default_rng(seed)
    rows = []
    for size, (n, fn) in curves.items():
        for sd in range(seeds):
            y = np.clip(fn(C) + rng.normal(0, noise, C.size), 0, 1)
            y[0] = fn(C[:1])[0]
            rows += [
                {
                    "model_size": size,
                    "n_params": n,
                    "variant": variant,
                    "seed": sd,
                    "step": int(st),
                    "compute": c,
                    "pass_rate": v,
                }
                for st, c, v in zip(STEPS, C, y, strict=True)
            ]
    return pd.DataFrame(rows)


def test_the_seed_sd_bound_share_counts_only_the_runs_that_enter_it():
    def rows(variant, size, a_values):
        return [
            {"variant": variant, "model_size": size, "seed": i, "A": a, "B": 2.0, "C_mid": 1e11}
            for i, a in enumerate(a_values)
        ]

    ps = pd.DataFrame(
        rows("cap", "s", [1.0] * 4)  # another variant, listed first, every run on the bound
        + rows("baseline", "s", [0.70, 0.72, 0.68, 0.71, np.nan])  # a failed fit
        + rows("baseline", "m", [0.80, 0.82, 0.79, 1.0])
        + rows("baseline", "xs", [1.0])  # a size's only run: no SD, does not enter
    )
    # every baseline run with a value: 2 of 9 on the bound (22%); of the 8 that enter the
    # SD, 1 (12%)
    sp = rlp.seed_spread(ps, variant="baseline", reps=200)
    assert sp["n_bound"] == 8 and sp["at_bound"] == pytest.approx(1 / 8)
    assert sp["n_runs"] == {"s": 4, "m": 4} and sp["variant"] == "baseline"
    empty = pd.DataFrame(columns=["variant", "metric"])
    (named,) = rfa.ablation_findings(empty, sp, base="baseline", level=0.95, reps=200)
    assert named.name == "scalerl/A_seed_sd" and named.estimate.identified
    # past the share among the runs that enter it: not identified, and the note says so
    ps.loc[(ps["variant"] == "baseline") & (ps["model_size"] == "s") & (ps["seed"] < 2), "A"] = 1
    sp = rlp.seed_spread(ps, variant="baseline", reps=200)
    (named,) = rfa.ablation_findings(empty, sp, base="baseline", level=0.95, reps=200)
    assert not named.estimate.identified
    assert named.estimate.note == "A on its bound 1 in 38% of the 8 baseline runs that enter it"


@pytest.mark.slow
def test_half_compute_predicts_a_bent_curve_and_flags_an_unbent_one():
    df = _frame(
        {
            "s": (1e4, lambda c: _sigmoid(c, c_mid=2e11)),
            "l": (1e5, lambda c: _sigmoid(c, a=0.9, b=1.2, c_mid=2e12)),
            # bends at 0.8 in the first half, then climbs on to 1: the half fit finds an A,
            # the full run's A sits on its bound, so there is no asymptote to compare with
            "m": (
                3e4,
                lambda c: np.minimum(
                    _sigmoid(c, a=0.8, c_mid=1e11) + 0.6 * np.clip(c / C[-1] - 0.5, 0, None), 1.0
                ),
            ),
        }
    )
    h = rlp.half_compute(df, reps=20, seed=0).set_index("model_size")
    s, big = h.loc["s"], h.loc["l"]
    assert h.loc["m", "A_half"] < 0.9 and h.loc["m", "A_full"] == pytest.approx(1.0)
    assert not bool(h.loc["m", "A_half_identified"])
    assert "full fit" in h.loc["m", "A_half_note"]
    assert s["A_full"] == pytest.approx(0.7, abs=0.02)
    assert abs(s["A_error"]) < 0.03 and abs(s["final_error"]) < 0.03
    assert s["A_error_lo"] <= s["A_error"] <= s["A_error_hi"]
    assert bool(s["A_half_identified"]) and s["rmse"] < 0.01
    # C_mid = 2x the run's compute: the first half is nowhere near the bend
    assert not bool(big["A_half_identified"]) and "bound 1" in big["A_half_note"]


def _logistic(t, r0=0.03, rmax=0.7, kappa=12.0, t0=0.4):
    return r0 + (rmax - r0) / (1 + np.exp(-kappa * (t - t0)))


@pytest.mark.slow
def test_phase_predictions_recover_the_logistic_and_its_early_plateau():
    df = _frame(
        {
            "s": (1e4, lambda c: _logistic(c / C[-1])),
            "m": (1e5, lambda c: _logistic(c / C[-1], t0=0.8)),
        },
        noise=0.003,
    )
    ph = rlp.phase_predictions(df, early_frac=0.3, reps=20, seed=0).set_index("model_size")
    s = ph.loc["s"]
    t90 = 0.4 + np.log(9) / 12
    assert s["t90"] == pytest.approx(t90, abs=0.02) and s["t50"] == pytest.approx(0.4, abs=0.02)
    assert s["t10"] == pytest.approx(0.4 - np.log(9) / 12, abs=0.02) and s["t10"] > 0
    assert s["R0"] == pytest.approx(0.03, abs=0.02)
    assert s["t10_lo"] <= s["t10"] <= s["t10_hi"]
    assert s["rise_resolved"] and s["eval_dt"] == pytest.approx(0.025) and s["bend_inside"]
    # the first 30% holds the slow start and the start of the climb: the plateau is there
    # for s (t0 = 0.4), but for m (t0 = 0.8) the first 30% is flat and sees no plateau
    assert abs(s["t90_error"]) < 0.2
    m = ph.loc["m"]
    assert (
        not np.isfinite(m["t90_early"]) or m["early_fail_share"] >= 0.2 or abs(m["t90_error"]) > 0.1
    )


def test_matched_compute_delta_pairs_runs_at_the_shorter_end():
    base = _frame({"s": (1e4, lambda c: _sigmoid(c))}, noise=0.0)
    var = _frame({"s": (1e4, lambda c: _sigmoid(c) - 0.05)}, noise=0.0, variant="reuse")
    var = var[var["step"] <= 600]  # stopped early: compared over the compute both reached
    d = rlp.matched_compute_delta(pd.concat([base, var]), "reuse")
    assert d["delta"] == pytest.approx(-0.05, abs=1e-9) and d["sizes"] == ["s"]
    assert d["ci"][0] <= d["delta"] <= d["ci"][1] and d["n_seeds"] == 5
    with pytest.raises(ValueError, match="no run paired"):
        rlp.matched_compute_delta(base, "reuse")


def test_seed_spread_and_ablations_on_a_variant_run_at_some_sizes():
    rng = np.random.default_rng(1)
    rows = [
        {
            "variant": v,
            "model_size": s,
            "seed": sd,
            "n_params": 1.0,
            "A": 0.7 + (0.1 if v == "cap" else 0.0) * -1 + rng.normal(0, 0.01),
            "B": 2.0,
            "C_mid": 1e11 * (2 if v == "cap" else 1),
        }
        for v in ("baseline", "cap")
        for s in ("s", "m")
        for sd in range(5)
        if not (v == "cap" and s == "m")
    ]
    ps = pd.DataFrame(rows)
    sp = rlp.seed_spread(ps, reps=200)
    assert sp["sd"] == pytest.approx(0.01, abs=0.006) and sp["at_bound"] == 0
    eff = rab.ablation_effects(ps, baseline="baseline", reps=200).set_index("metric")
    assert eff.loc["A", "delta"] == pytest.approx(-0.1, abs=0.02)
    assert eff.loc["A", "delta_hi"] < -0.05 and eff.loc["A", "sizes"] == "s"
    assert eff.loc["log10_C_mid", "delta"] == pytest.approx(np.log10(2))
    assert eff.loc["A", "mde"] > 0 and bool(eff.loc["A", "identified"])
    # baseline runs without a variant pair (another block's seeds) do not count in the
    # bound share, even when every one of them sits on the bound
    extra = pd.DataFrame(
        [{"variant": "baseline", "model_size": "s", "seed": 20 + i, "A": 1.0, "B": 2.0,
          "C_mid": 1e11} for i in range(6)]
    )  # fmt: skip
    more = rab.ablation_effects(pd.concat([ps, extra]), baseline="baseline", reps=200)
    assert bool(more.set_index("metric").loc["A", "identified"])


@pytest.mark.slow
def test_a_bend_after_training_is_not_placed():
    # still accelerating at the end: the logistic's midpoint lies beyond the run
    df = _frame({"s": (1e4, lambda c: _logistic(c / C[-1], kappa=4.0, t0=1.6))}, noise=0.001)
    ph = rlp.phase_predictions(df, early_frac=0.3, reps=5, seed=0).iloc[0]
    assert ph["t50"] > 1.0 and not ph["bend_inside"]


@pytest.mark.slow
def test_a_rise_within_one_evaluation_interval_is_not_resolved():
    df = _frame({"s": (1e4, lambda c: _logistic(c / C[-1], kappa=2000.0, t0=0.51))}, noise=0.001)
    ph = rlp.phase_predictions(df, early_frac=0.3, reps=5, seed=0).iloc[0]
    assert not ph["rise_resolved"]


@pytest.mark.slow
def test_phases_over_three_runs_use_the_exact_bootstrap_whatever_the_seed():
    # 3 runs have 10 distinct resamples: a Monte Carlo bootstrap's ends moved with the
    # analysis seed (a verdict flipped); the exact one has no seed
    df = _frame({"s": (1e4, lambda c: _logistic(c / C[-1]))}, seeds=3, noise=0.01)
    a = rlp.phase_predictions(df, early_frac=0.3, reps=200, seed=0).iloc[0]
    b = rlp.phase_predictions(df, early_frac=0.3, reps=200, seed=7).iloc[0]
    assert a["bootstrap"] == "exact"
    for name in ("t10", "t90", "t90_error"):
        assert a[f"{name}_lo"] == b[f"{name}_lo"] and a[f"{name}_hi"] == b[f"{name}_hi"]
        assert a[f"{name}_lo"] <= a[f"{name}_hi"]
    # more distinct resamples than reps: Monte Carlo, as before
    many = rlp.phase_predictions(df, early_frac=0.3, reps=5, seed=0).iloc[0]
    assert many["bootstrap"] == "Monte Carlo (5)"
