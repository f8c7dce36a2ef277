"""The horizon stage's sizing (studies/rl/horizon.py): truths fitted from runs, simulated
stages, the stated rule, and the swing measured between evaluations."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from scalinglab.studies.rl import horizon
from scalinglab.studies.rl.shared_asymptote import simulate_runs, swing_sd

GRID = np.arange(0, 4001, 50)
PER_STEP = 2.5e9


def _runs(*, A=0.9, swing=0.0, n=6, seed=0):
    rng = np.random.default_rng(seed)
    df = simulate_runs(
        rng,
        n_runs=n,
        A=A,
        B=1.2,
        log_C_mid=np.log(1.5e12),
        sd_log_C_mid=0.3,
        R0=0.2,
        steps=GRID * PER_STEP,
        swing=swing,
    )
    return df.assign(step=np.tile(GRID, n))


def test_swing_sd_recovers_the_noise_between_evaluations():
    quiet, loud = swing_sd(_runs(swing=0.0)), swing_sd(_runs(swing=0.06))
    # binomial noise on 512 prompts alone is about 0.015 at these pass rates
    assert quiet < 0.025
    assert loud == pytest.approx(np.hypot(0.06, quiet), rel=0.15)
    assert swing_sd(_runs().iloc[:0]) == 0.0


def test_truths_favour_the_runs_own_asymptote_and_carry_their_noise():
    tr = horizon.truths(_runs(A=0.85, swing=0.03), a_values=(0.8, 0.85, 0.95))
    assert tr["objective_rise"].idxmin() == 0.85
    assert tr.loc[0.95, "objective_rise"] > tr.loc[0.85, "objective_rise"]
    assert tr["compute_per_step"].iloc[0] == pytest.approx(PER_STEP)
    assert tr["swing"].iloc[0] == pytest.approx(0.03, rel=0.3)
    assert tr.loc[0.85, "B"] == pytest.approx(1.2, rel=0.25)


def test_a_simulated_stage_has_the_horizon_and_the_measured_r0():
    tr = horizon.truths(_runs(), a_values=(0.9,))
    df = horizon.simulate_stage(np.random.default_rng(0), tr.loc[0.9], n_runs=3, steps=8000)
    assert df["seed"].nunique() == 3 and df["step"].max() == 8000
    assert len(df) == 3 * (8000 // horizon.EVAL_EVERY + 1)
    assert (df.loc[df["step"] == 0, "pass_rate"] == tr.loc[0.9, "R0"]).all()
    assert df["compute"].max() == pytest.approx(8000 * PER_STEP)
    got = horizon.identification_rate(tr.loc[0.9], n_runs=4, steps=4000, sims=2, reps=20)
    assert 0 <= got["pooled"] <= 2 and 0 <= got["shared"] <= 2 and got["sims"] == 2


def _table(counts):
    c = np.asarray(counts)
    ds = xr.Dataset(
        {"identified_pooled": (("A", "horizon"), c), "identified_shared": (("A", "horizon"), c)},
        coords={"A": [0.85, 0.9, 0.95], "horizon": [4000, 8000, 16000]},
    )
    ds.attrs.update(sims=100, n_runs=7, target=0.8)
    return ds


def test_the_stated_rule_runs_the_stage_only_where_it_identifies_a_at_every_truth():
    # 8,000 steps reach 0.8 at A = 0.85 and 0.9 (0.95 is not asked)
    assert horizon.decision(_table([[40, 85, 95], [30, 80, 90], [10, 20, 30]])) == {
        "run": True,
        "shortest": 8000,
    }
    # 8,000 misses at A = 0.9: only 16,000 would do
    assert horizon.decision(_table([[40, 85, 95], [30, 79, 90], [10, 20, 30]])) == {
        "run": False,
        "shortest": 16000,
    }
    assert horizon.decision(_table([[40, 50, 60], [30, 40, 50], [0, 0, 0]]))["shortest"] is None
    f = {x.name: x.estimate for x in horizon.sizing_findings(_table(np.full((3, 3), 50)))}
    e = f["horizon/pooled/A0.9/steps8000/p_identified"]
    assert e.point == 0.5 and e.lo < 0.5 < e.hi
    assert len(f) == 2 * 9


def test_the_decision_reads_from_the_table():
    ds = _table([[40, 85, 95], [30, 79, 90], [10, 20, 30]])
    for c in ("B", "objective_rise", "swing"):
        ds[c] = ("A", [0.5, 0.6, 0.7])
    text = horizon.decision_text(ds)
    assert "85/100 at A 0.85, 79/100 at A 0.9" in text and "16,000 steps" in text
    tab = horizon.sizing_table(ds)
    assert tab.loc[0.9, "pooled 8000"] == 0.79 and list(tab.index) == [0.85, 0.9, 0.95]
    assert "is run" in horizon.decision_text(
        _table(np.full((3, 3), 90)).assign(
            B=("A", [1, 1, 1]), objective_rise=("A", [0, 0, 0]), swing=("A", [0, 0, 0])
        )
    )
