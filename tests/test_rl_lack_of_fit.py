"""SCALERL-1's lack of fit: the sigmoid's distance from the expected curve, net of noise."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalinglab.studies.rl import lack_of_fit as lf
from scalinglab.studies.rl.shared_asymptote import simulate_runs

STEPS = np.arange(0, 4001, 50, dtype=float)


def _runs(seed: int, n: int, *, sd: float, sd_A: float = 0.02) -> pd.DataFrame:
    return simulate_runs(
        np.random.default_rng(seed),
        n_runs=n,
        A=0.85,
        B=1.5,
        log_C_mid=float(np.log(800.0)),
        sd_log_C_mid=sd,
        R0=0.2,
        steps=STEPS,
        sd_A=sd_A,
    )


def test_signed_root():
    assert lf.signed_root(0.0004) == pytest.approx(0.02)
    assert lf.signed_root(-0.0004) == pytest.approx(-0.02)


def test_noise_is_taken_out_when_the_curve_is_a_sigmoid():
    """Every run follows the same sigmoid (no spread of take-off or A): the RMSE against
    the 4-run mean is the evaluation noise, the lack of fit is about 0."""
    lofs, rmses = [], []
    for seed in range(6):
        out = lf.lack_of_fit(_runs(seed, 4, sd=0.0, sd_A=0.0))
        lofs.append(out["lof2"])
        rmses.append(out["rmse"])
        assert out["lof_lo"] < out["lof"] < out["lof_hi"]
        assert out["noise"] == pytest.approx(out["rmse"], rel=0.5)
    assert abs(np.mean(lofs)) < 0.25 * np.mean(np.square(rmses))
    assert np.mean(rmses) > 0.004  # binomial noise of 512 prompts over 4 runs


def test_wiggle():
    w = lf.wiggle(STEPS, 0.03)
    assert (w[STEPS < 400] == 0).all() and abs(w[-1]) < 1e-12
    assert w.max() == pytest.approx(0.03, abs=1e-3) and w.min() == pytest.approx(-0.03, abs=1e-3)


def test_a_shape_the_sigmoid_cannot_follow_is_found_and_covered():
    kw = dict(A=0.85, B=1.5, log_C_mid=float(np.log(800.0)), sd_log_C_mid=0.8, R0=0.2, steps=STEPS)
    flat = lf.coverage(n_runs=4, **kw, sims=2, seed=0)
    assert abs(flat.truth) < 0.002  # a spread of take-offs alone: nearly a sigmoid
    cov = lf.coverage(n_runs=8, **kw, amplitude=0.03, sims=5, seed=0)
    assert 0.01 < cov.truth < 0.03
    assert cov.coverage >= 0.6  # 3 of 5 intervals at least (a sanity check, not the rate)
    rng = np.random.default_rng(4)
    df = simulate_runs(rng, n_runs=8, **kw, deviation=lf.wiggle(STEPS, 0.03))
    out = lf.lack_of_fit(df)
    assert out["lof_lo"] < cov.truth < out["lof_hi"] and out["rmse"] > out["lof"]


def test_interval_is_deterministic_and_wider_with_fewer_runs():
    a = lf.lack_of_fit(_runs(2, 4, sd=0.5))
    assert a == lf.lack_of_fit(_runs(2, 4, sd=0.5))
    b = lf.lack_of_fit(_runs(2, 16, sd=0.5))
    assert a["lof2_se"] > b["lof2_se"] and a["n"] == 4.0


def test_refuses_too_few_runs_and_misaligned_evaluations():
    with pytest.raises(ValueError, match="at least 3 runs"):
        lf.lack_of_fit(_runs(0, 2, sd=0.3))
    df = _runs(0, 4, sd=0.3)
    one = lf.lack_of_fit(df.drop(df.index[(df["seed"] == 3) & (df["compute"] == 2000)]))
    assert np.isfinite(one["lof"])  # one evaluation missing from one run: left out
    sparse = df.drop(df.index[(df["seed"] == 3) & (df["compute"] % 100 == 50)])
    with pytest.raises(ValueError, match=r"runs \[3\] miss"):
        lf.lack_of_fit(sparse)  # evaluated half as often


def test_evaluations_line_up_by_step_when_compute_differs_between_runs():
    df = _runs(1, 4, sd=0.3)
    df["step"] = df["compute"]
    jitter = 1.0 + 0.01 * df["seed"]  # each run's compute per step a little different
    shifted = df.assign(compute=df["compute"] * jitter)
    out = lf.lack_of_fit(shifted)
    assert np.isfinite(out["lof"]) and out["n"] == 4.0
    assert out["rmse"] == pytest.approx(lf.lack_of_fit(df)["rmse"], abs=0.01)


def test_smooth_run_to_run_deviations_are_not_taken_for_a_better_fit():
    """Take-offs spread widely (each run's deviation is smooth over its evaluations) and
    no shape beyond the sigmoid: the whole between-run variance, subtracted, would push
    LOF2 far below 0; with the part the fit follows projected out it stays near 0."""
    for seed in range(3):
        c, y, r0 = lf._grid(_runs(seed, 17, sd=1.0), 0.1)
        lof2, rmse, noise, _ = lf._lof2(c, y, r0)
        whole = float(np.mean(y.var(axis=0, ddof=1))) / y.shape[0]
        assert noise < 0.6 * whole  # the fit follows much of the mean curve's noise
        assert rmse**2 - whole < -abs(lof2)  # the unprojected estimate: far below 0
        out = lf.lack_of_fit(_runs(seed, 17, sd=1.0))
        assert out["lof_lo"] < 0.001 < out["lof_hi"]


def test_table_reports_every_size_asked_for():
    df = pd.concat(
        [_runs(0, 4, sd=0.3).assign(model_size="s"), _runs(1, 2, sd=0.3).assign(model_size="m")]
    ).assign(variant="baseline", n_params=1.0)
    tab = lf.lof_table(df, sims=0, sizes=["s", "m", "l"])
    assert list(tab.index) == ["s", "m", "l"]
    assert np.isfinite(tab.loc["s", "lof"]) and np.isnan(tab.loc["m", "lof"])
    assert tab.loc["m", "n"] == 2 and tab.loc["l", "n"] == 0
    named = {n.name: n.estimate for n in lf.lof_findings(tab, level=0.95)}
    assert not named["scalerl/l/lack_of_fit"].identified
    assert "fewer than 3 stable runs" in named["scalerl/l/lack_of_fit"].note
    assert "(0 fitted here" in named["scalerl/l/lack_of_fit"].note
    assert named["scalerl/s/lack_of_fit"].n == 4


def test_table_says_why_runs_of_unequal_length_have_no_estimate():
    full = _runs(0, 4, sd=0.3)
    stopped = full[~((full["seed"] == 1) & (full["compute"] > 2000))]  # one run stopped
    df = stopped.assign(model_size="s", variant="baseline", n_params=1.0)
    tab = lf.lof_table(df, sims=0)
    assert np.isnan(tab.loc["s", "lof"]) and "miss" in tab.loc["s", "why"]
    (named,) = lf.lof_findings(tab, level=0.95)
    assert not named.estimate.identified and "evaluated at the same" in named.estimate.note
