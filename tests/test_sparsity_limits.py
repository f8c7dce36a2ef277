"""Both ratios, trend sizes calibrated on half the paper's curves, limits across sizes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from scalinglab.fitting import fit
from scalinglab.studies.sparsity import limits as lm
from scalinglab.studies.sparsity import published as pub
from scalinglab.studies.sparsity import trends as strd


def _curves(slopes: dict[str, float], *, level: float = 0.5, noise: float = 0.0, seed: int = 0):
    """Runs whose ratio moves ``slope`` per decade of tokens from ``level`` at 1e6 tokens;
    the nonzero ratio falls twice as fast."""
    rng = np.random.default_rng(seed)
    rows = []
    tokens = np.geomspace(1e6, 1e8, 7)
    for model, slope in slopes.items():
        for s in range(3):
            for t in tokens:
                d = np.log10(t / 1e6)
                rows.append(
                    {
                        "activation": "relu",
                        "model": model,
                        "seed": s,
                        "run": f"relu/{model}/{s}",
                        "tokens": t,
                        "tokens_per_param": t / 1e4,
                        "n_params": 1e4,
                        "activation_ratio": level + slope * d + noise * rng.normal(),
                        "natural_ratio": 0.9 - 2 * abs(slope) * d,
                        "loss": 2.0,
                        "usable": True,
                    }
                )
    return pd.DataFrame(rows)


def test_both_ratios_and_their_trends_per_size():
    df = _curves({"s": 0.02, "m": -0.01})
    both = strd.both_ratios(df)
    assert len(both) == 2 * 7 and (both["n_seeds"] == 3).all()
    s = both[both["model"] == "s"]
    np.testing.assert_allclose(s["ppl1_ratio"].iloc[[0, -1]], [0.5, 0.54])
    np.testing.assert_allclose(s["nonzero_ratio"].iloc[[0, -1]], [0.9, 0.82])
    tr = strd.metric_trends(df).set_index(["model", "metric"])
    assert tr.loc[("s", "PPL-1% ratio"), "slope"] == pytest.approx(0.02)
    assert tr.loc[("m", "nonzero ratio"), "slope"] == pytest.approx(-0.02)
    assert tr.loc[("s", "PPL-1% ratio"), "relative"] == pytest.approx(0.02 / 0.52)


def test_relative_trend_is_the_slope_over_the_level_and_flat_is_flat():
    est = strd.relative_trend(_curves({"s": -0.05}))
    assert est.point == pytest.approx(-0.05 / 0.45)  # the level over the window: 0.5 .. 0.4
    flat = strd.relative_trend(_curves({"s": 0.0}, noise=1e-3))
    # a flat curve's interval sits well inside a minimum effect of 5% per decade
    assert -0.05 < flat.lo <= flat.point <= flat.hi < 0.05
    with pytest.raises(ValueError, match="no run has 3 usable"):
        strd.relative_trend(_curves({"s": 0.0}), min_x=1e9)


def test_calibration_uses_one_half_of_the_sizes():
    cal, test = strd.calibration_halves(["2.4b", "0.1b", "0.4b", "0.2b", "1.2b", "0.8b"])
    assert cal == ["0.1b", "0.4b", "1.2b"] and test == ["0.2b", "0.8b", "2.4b"]
    late = pd.DataFrame(
        {
            "activation": ["relu"] * 4,
            "model": ["0.1b", "0.2b", "0.4b", "0.8b"],
            "n_params": [1e8, 2e8, 4e8, 8e8],
            "slope": [-0.02, -0.5, -0.01, -0.5],
            "end_ratio": [0.1, 0.1, 0.1, 0.1],
        }
    )
    # half the weakest calibration trend (0.4b: 10% of the level per decade); the test
    # half's much steeper curves do not enter
    got = strd.min_trend_effect(late, activation="relu", models=["0.1b", "0.4b"])
    assert got == pytest.approx(0.05)
    late["end_ratio"] = [0.1, 0.5, 0.1 * (1 + 0.2 * np.log10(4)), 0.5]
    tol = strd.scale_tolerance(late, activation="relu", models=["0.1b", "0.4b"])
    assert tol == pytest.approx(0.2 / (1 + 0.1 * np.log10(4)), rel=1e-6)
    with pytest.raises(ValueError, match="no calibration curves"):
        strd.min_trend_effect(late, activation="silu", models=["0.1b"])


def test_limit_scale_slope_from_paired_draws():
    def res(a0, draws):
        return SimpleNamespace(
            params={"c": 1.0, "A0": a0}, draws=np.column_stack([np.ones_like(draws), draws])
        )

    small = (res(0.10, np.array([0.09, 0.10, 0.11])), 1e4)
    large = (res(0.12, np.array([0.12, 0.12, 0.12])), 1e5)
    est = lm.limit_scale_slope(small, large, level=0.9)
    point, (lo, hi) = est.point, est.ci
    assert point == pytest.approx(0.02 / 0.11)
    assert "covers below its nominal level" in est.method
    # the draws' relative slopes are 0.03/0.105, 0.02/0.11 and 0.01/0.115
    assert 0.01 / 0.115 <= lo < point < hi <= 0.03 / 0.105
    with pytest.raises(ValueError, match="more parameters"):
        lm.limit_scale_slope(large, small)


def test_residual_block_bootstrap_covers_the_limit_of_a_noisy_relu_curve():
    rng = np.random.default_rng(1)
    D = np.geomspace(1.0, 300.0, 30)
    true = np.exp(-2.0 * D**0.5 - 2.0) + 0.07
    y = true + 0.001 * rng.normal(size=D.size)
    res = fit("relu_sparsity", D, y)
    draws, est = pub.residual_block_bootstrap(res, D[::-1], y[::-1], reps=60, seed=2)
    lo, hi = est.ci
    assert est.point == res.params["A0"]
    assert est.method == pub.RESIDUAL_CI.format(L=pub.block_length(D.size))
    assert draws.shape == (60,) and np.isfinite(draws).mean() > 0.5
    assert lo <= res.params["A0"] <= hi and hi - lo < 0.01
    assert abs(0.5 * (lo + hi) - 0.07) < 0.003


def _group(slope: float, *, level: float = 0.2, noise: float = 1e-3, seeds: int = 5, end=1e8):
    """One ReLU size whose ratio moves ``slope`` per decade of tokens (7 checkpoints from
    1e6 to ``end``), with independent noise per seed and checkpoint."""
    rng = np.random.default_rng(3)
    rows = []
    for s in range(seeds):
        for t in np.geomspace(1e6, end, 7):
            rows.append(
                {
                    "activation": "relu",
                    "model": "s",
                    "seed": s,
                    "run": f"s/relu/{s}",
                    "tokens": t,
                    "tokens_per_param": t / 1e4,
                    "n_params": 1e4,
                    "activation_ratio": level + slope * np.log10(t / 1e6) + noise * rng.normal(),
                    "loss": 2.0 - 0.1 * np.log10(t / 1e6),
                    "usable": True,
                }
            )
    return pd.DataFrame(rows)


def test_each_size_keeps_its_own_last_decade():
    a = _group(0.0, end=1e8)
    b = _group(0.0, end=1e7).assign(model="m")
    late = lm.own_last_decade(pd.concat([a, b]))
    got = late.groupby("model")["tokens"].agg(["min", "max"])
    assert got.loc["s", "min"] == pytest.approx(1e7) and got.loc["s", "max"] == pytest.approx(1e8)
    # size m ends a decade earlier: its window is 1e6..1e7, not size s's
    assert got.loc["m", "min"] == pytest.approx(1e6) and got.loc["m", "max"] == pytest.approx(1e7)


def test_a_flat_curve_gets_a_plateau_limit():
    g = _group(0.0)
    est, route = lm.decide_limit(None, g, delta=0.05, level=0.95)
    levels = lm.plateau_levels(g)
    assert route == "plateau" and est.identified and est.note.startswith("route: plateau")
    assert lm.PLATEAU_METHOD in est.method and "Student t over 5 seeds" in est.method
    assert est.point == pytest.approx(levels.mean()) and est.n == 5
    assert est.lo < 0.2 < est.hi and est.hi - est.lo < 0.01


def test_a_rising_curve_gets_no_limit_even_with_a_law_a0_on_its_bound():
    g = _group(0.02)  # +0.02 per decade at a level near 0.2: about +10% per decade
    res = fit(
        "relu_sparsity",
        g["tokens"].to_numpy(float),
        g["activation_ratio"].to_numpy(float),
        groups=g["run"].to_numpy(),
        bootstrap=20,
        seed=0,
    )
    est, route = lm.decide_limit(res, g, delta=0.05)
    assert route == "none" and not est.identified
    assert "still rising" in est.note and "not inside +-0.05" in est.note
    # the same curve passes once the minimum effect is wider than its trend
    _, loose = lm.decide_limit(res, g, delta=0.5)
    assert loose == "plateau"
    with pytest.raises(ValueError, match="delta"):
        lm.decide_limit(res, g, delta=0.0)


def test_a_second_look_corrects_the_equivalence_test_over_both_looks():
    g = _group(0.001, noise=4e-3)
    t90 = lm.last_decade_trend(g, level=0.90)
    t95 = lm.last_decade_trend(g, level=0.95)
    reach90, reach95 = max(map(abs, t90.ci)), max(map(abs, t95.ci))
    assert reach90 < reach95
    delta = 0.5 * (reach90 + reach95)  # the 90% interval is inside, the 95% is not
    est, route = lm.decide_limit(None, g, delta=delta)
    assert route == "plateau" and "(90% t over seeds)" in est.note
    assert "look" not in est.note
    est, route = lm.decide_limit(None, g, delta=delta, looks=2)
    assert route == "none" and not est.identified
    assert "read at look 2 of 2" in est.note
    assert "(95% t over seeds, Bonferroni over 2 looks)" in est.note
    with pytest.raises(ValueError, match="looks"):
        lm.decide_limit(None, g, delta=delta, looks=0)


def test_a_law_identified_limit_keeps_the_laws_a0():
    rng = np.random.default_rng(0)
    D = np.tile(np.geomspace(1e5, 1e8, 12), 3)
    runs = np.repeat(["a", "b", "c"], 12)
    y = np.exp(-0.5 * (D / 1e5) ** 0.4 - 1.0) + 0.07 + 0.002 * rng.normal(size=D.size)
    res = fit("relu_sparsity", D, y, groups=runs, bootstrap=40, seed=0)
    g = pd.DataFrame(
        {
            "activation": "relu",
            "model": "s",
            "seed": runs,
            "run": runs,
            "tokens": D,
            "tokens_per_param": D / 1e4,
            "activation_ratio": y,
            "usable": True,
        }
    )
    est, route = lm.decide_limit(res, g, delta=0.05)
    assert route == "law" and est.identified and est.note.startswith("route: law")
    assert est.point == res.params["A0"] and est.ci == tuple(res.ci["A0"])
    # a law limit read at a later look says so (the law route has no test to correct)
    second, again = lm.decide_limit(res, g, delta=0.05, looks=2)
    assert again == "law" and second.point == est.point and "look 2 of 2" in second.note


def test_plateau_scale_slope_is_welch_t_over_the_sizes_seeds():
    small, large = ([0.20, 0.21, 0.22], 1e4), ([0.24, 0.25, 0.26, 0.25], 1e5)
    est = lm.plateau_scale_slope(small, large, level=0.9)
    assert est.point == pytest.approx((0.25 - 0.21) / 0.23)
    assert est.lo < est.point < est.hi and est.method.startswith(lm.PLATEAU_SCALE_CI) and est.n == 3
    # two sizes whose plateaus differ by noise only: the interval holds zero
    same = lm.plateau_scale_slope(([0.2, 0.22, 0.21], 1e4), ([0.21, 0.2, 0.22], 1e5))
    assert same.lo < 0 < same.hi
    with pytest.raises(ValueError, match="more parameters"):
        lm.plateau_scale_slope(large, small)
