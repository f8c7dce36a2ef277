"""Phases run by run: runs that take off at different times, on curves with known laws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from scalinglab.studies.rl import phases as rph

STEPS = np.arange(0, 2001, 25)
T = STEPS / STEPS[-1]


def _logistic(t, *, r0=0.04, rmax=0.85, kappa=20.0, t0=0.4):
    return r0 + (rmax - r0) / (1 + np.exp(-kappa * (t - t0)))


def _saturation(t, *, r0=0.04, rmax=0.85, tau=0.12):
    return r0 + (rmax - r0) * (1 - np.exp(-t / tau))


def _frame(curves: dict[str, list], *, noise=0.004, seed=0) -> pd.DataFrame:
    """``curves``: size -> one pass-rate curve over ``T`` per seed."""
    rng = np.random.default_rng(seed)
    rows = []
    for n, (size, per_seed) in enumerate(curves.items()):
        for sd, y in enumerate(per_seed):
            y = np.clip(y + rng.normal(0, noise, y.size), 0, 1)
            rows += [
                {
                    "variant": "baseline",
                    "model_size": size,
                    "seed": sd,
                    "n_params": 1e4 * 10**n,
                    "step": int(st),
                    "pass_rate": v,
                }
                for st, v in zip(STEPS, y, strict=True)
            ]
    return pd.DataFrame(rows)


def test_a_slow_start_is_found_in_the_runs_that_have_one():
    df = _frame(
        {
            "s": [_logistic(T, t0=0.25), _logistic(T, t0=0.7)],
            "m": [_saturation(T), _saturation(T, tau=0.2)],
        }
    )
    pr = rph.run_phases(df, early_frac=0.3).set_index(["model_size", "seed"])
    s0 = pr.loc[("s", 0)]
    assert s0["t10"] == pytest.approx(0.25 - np.log(9) / 20, abs=0.02)
    assert s0["t90"] == pytest.approx(0.25 + np.log(9) / 20, abs=0.02)
    assert pr.loc[("s", 1), "t50"] == pytest.approx(0.7, abs=0.02)
    assert pr.loc["s", "slow_start"].all() and pr.loc["s", "three_phases"].all()
    # an exponential saturation climbs from its first step: no slow start in the data
    assert not pr.loc["m", "slow_start"].any() and pr.loc["m", "plateau"].all()
    # a logistic that rises within [0, 1] is identified; its phases time something
    assert pr.loc["s", "identified"].all()
    assert (pr.loc["m", "rmse_exp"] < pr.loc["m", "rmse_logistic"]).all()
    # s0 is past its bend by t = 0.3 and its plateau is predicted; s1 is still flat
    assert abs(s0["t90_error"]) < 0.1
    assert not abs(pr.loc[("s", 1), "t90_error"]) <= 0.1


def test_a_run_still_climbing_at_the_end_has_no_plateau():
    df = _frame({"s": [_logistic(T, t0=0.95, kappa=12.0)]})
    r = rph.run_phases(df).iloc[0]
    assert r["slow_start"] and not r["plateau"] and not r["three_phases"]
    assert np.isnan(r["t90_error"])


def test_shares_count_runs_and_the_seed_spread_of_the_slow_start():
    same = _frame({"s": [_logistic(T, t0=0.4)] * 4, "m": [_logistic(T, t0=0.5)] * 4})
    spread = _frame(
        {
            # the later a run takes off, the lower it started
            "s": [_logistic(T, t0=t0, r0=0.1 - t0 / 10) for t0 in (0.2, 0.4, 0.6, 0.8)],
            "m": [_saturation(T)] * 2 + [_logistic(T, t0=0.5)] * 2,
        }
    )
    a = rph.phase_shares(rph.run_phases(same), reps=200, seed=0)
    b = rph.phase_shares(rph.run_phases(spread), reps=200, seed=0)
    assert a["slow_start"]["value"] == 1.0 and a["slow_start"]["ci"][1] == 1.0
    # 8 of 8 runs (sizes as strata, df 6): Clopper-Pearson on the df-adjusted 8 runs
    n_eff = 8 * (sps.t.ppf(0.025, 7) / sps.t.ppf(0.025, 6)) ** 2
    assert a["slow_start"]["ci"][0] == pytest.approx(0.025 ** (1 / n_eff))
    assert "Korn-Graubard interval over 8 runs in 2 sizes" in a["slow_start"]["method"]
    assert "simulated on these data" in a["slow_start"]["method"]
    assert a["t10_seed_sd"]["value"] < 0.01 and "t10_base_sd" not in a
    assert b["slow_start"]["value"] == pytest.approx(6 / 8)
    assert b["slow_start"]["by_size"] == {"s": 1.0, "m": 0.5}
    lo, hi = b["slow_start"]["ci"]
    assert lo < 0.75 <= hi <= 1.0 and b["slow_start"]["n_runs"] == 8
    # the s seeds' t10 spread over 0.6 of the run
    sd_s = np.std(np.array([0.2, 0.4, 0.6, 0.8]) - np.log(9) / 20, ddof=1)
    assert b["t10_seed_sd"]["by_size"]["s"] == pytest.approx(sd_s, abs=0.02)
    assert b["t10_seed_sd"]["value"] > 0.1 > a["t10_seed_sd"]["ci"][1]
    assert b["t10_seed_sd"]["method"] == (
        "pooled SD within the 2 sizes (m, s) where a run takes off after step 0, "
        "chi-square interval (df 6)"
    )
    assert b["t10_seed_sd_all"]["method"].startswith("pooled SD within every size")
    assert b["t10_start_rho"]["by_size"]["s"] == pytest.approx(-1.0)
    lo, hi = b["t10_start_rho"]["ci"]
    assert -1.0 <= lo <= hi <= 1.0
    # same seed, same intervals
    assert rph.phase_shares(rph.run_phases(spread), reps=200, seed=0) == b


def test_runs_nested_in_warm_starts_are_judged_over_base_models():
    """Two warm starts a size, two RL seeds each: one base model takes off late, its
    RL seeds together; shares are over the base models, t10's SD splits in two."""
    curves = {
        "s": [_logistic(T, t0=0.3), _logistic(T, t0=0.32)]
        + [_logistic(T, t0=0.7), _logistic(T, t0=0.72)],
        "m": [_logistic(T, t0=0.4), _logistic(T, t0=0.42)] + [_saturation(T)] * 2,
    }
    df = _frame(curves)
    df["warm_start"], df["rl_seed"] = df["seed"] // 2, df["seed"] % 2
    pr = rph.run_phases(df)
    assert {"warm_start", "rl_seed"} <= set(pr.columns)
    sh = rph.phase_shares(pr, reps=100, seed=0)
    assert sh["fits"]["n_runs"] == 8 and sh["fits"]["identified"] >= 6
    assert sh["slow_start"]["n"] == 4 and sh["slow_start"]["value"] == pytest.approx(0.75)
    assert "4 warm starts in 2 sizes" in sh["slow_start"]["method"]
    # RL seeds of one base model take off within 0.02 of each other; base models do not
    assert sh["t10_seed_sd"]["value"] < 0.05 < sh["t10_base_sd"]["value"]
    # m's second base model climbs from step 0 (no take-off to time): 3 warm starts, df 3
    assert sh["t10_seed_sd"]["method"] == (
        "pooled SD within the 3 warm starts (m warm start 0, s warm start 0, s warm start 1) "
        "where a run takes off after step 0, chi-square interval (df 3)"
    )
    # every warm start pooled (df 4): what the base models' SD is read beyond
    assert sh["t10_seed_sd_all"]["n"] == 4
    assert sh["t10_base_sd"]["method"].startswith("nested ANOVA, Graybill-Wang")


def test_a_run_that_rises_then_falls_has_no_identified_logistic():
    """Its logistic runs from a high R0 down to a lower Rmax: t10 and t90 time a decline."""
    df = _frame({"l": [_logistic(T, r0=0.7, rmax=0.3, kappa=15.0, t0=0.5)]})
    r = rph.run_phases(df).iloc[0]
    assert r["R0"] > r["Rmax"] and not r["identified"]
