"""The shared-asymptote estimator: its law, its recovery of A where the pooled fit fails,
its coverage simulation and its findings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalinglab.fitting import fit, identification
from scalinglab.studies.rl import shared_asymptote as sa

STEPS = np.arange(0, 4001, 50, dtype=float)


def _runs(
    seed: int, *, n: int, A: float = 0.85, sd: float = 0.5, med: float = 800.0, sd_A: float = 0.02
) -> pd.DataFrame:
    return sa.simulate_runs(
        np.random.default_rng(seed),
        n_runs=n,
        A=A,
        B=2.0,
        log_C_mid=float(np.log(med)),
        sd_log_C_mid=sd,
        R0=0.2,
        steps=STEPS,
        sd_A=sd_A,
    )


def test_jacobian_matches_finite_differences():
    rng = np.random.default_rng(0)
    G, n = 3, 12
    C = rng.uniform(10, 1000, n)
    group = np.repeat(np.arange(G), n // G)
    A, B = np.array([[0.8]]), np.array([[1.7]])
    lc = rng.normal(5.0, 0.5, (1, G))
    R0 = rng.uniform(0.1, 0.3, (1, G))
    val, jac = sa._jac(C, A, B, lc, R0, group)
    np.testing.assert_allclose(val, sa._fn(C, A, B, lc, R0, group))
    h = 1e-6
    np.testing.assert_allclose(
        jac["A"], (sa._fn(C, A + h, B, lc, R0, group) - val) / h, rtol=1e-4, atol=1e-7
    )
    np.testing.assert_allclose(
        jac["B"], (sa._fn(C, A, B + h, lc, R0, group) - val) / h, rtol=1e-4, atol=1e-7
    )
    for g in range(G):
        e = np.zeros((1, G))
        e[0, g] = h
        np.testing.assert_allclose(
            jac["log_C_mid"][0, :, g],
            ((sa._fn(C, A, B, lc + e, R0, group) - val) / h)[0],
            rtol=1e-4,
            atol=1e-7,
        )
        np.testing.assert_allclose(
            jac["R0"][0, :, g],
            ((sa._fn(C, A, B, lc, R0 + e, group) - val) / h)[0],
            rtol=1e-4,
            atol=1e-7,
        )


def test_recovers_a_where_take_offs_spread_and_the_pooled_fit_drifts():
    """Runs whose take-offs spread over more than a decade, late ones near the horizon:
    the pooled sigmoid fits their mean curve and misses A by several hundredths, the
    shared fit (each run its own C_mid) finds it within about 0.01."""
    err_shared, err_pooled = [], []
    for seed in range(4):
        df = _runs(seed, n=12, A=0.85, sd=1.2, med=1500.0)
        shared = sa.fit_shared(df, reps=0)
        pts = df[df["compute"] >= 400]
        pooled = fit(
            "scalerl", pts["compute"].to_numpy(), pts["pass_rate"].to_numpy(), fixed={"R0": 0.2}
        )
        err_shared.append(abs(shared.params["A"] - 0.85))
        err_pooled.append(abs(pooled.params["A"] - 0.85))
        if seed == 0:  # each run's own C_mid is found (log scale, within 0.5 of its draw)
            rng = np.random.default_rng(seed)
            rng.standard_normal(12)  # the runs' A
            lc_true = np.log(1500.0) + 1.2 * rng.standard_normal(12)
            lc_fit = np.log([shared.params[f"C_mid[{g}]"] for g in range(12)])
            assert np.max(np.abs(lc_fit - lc_true)) < 0.5
    assert np.mean(err_shared) < 0.012
    assert np.mean(err_pooled) > 3 * np.mean(err_shared)


def test_interval_and_identification_on_spread_runs():
    res = sa.fit_shared(_runs(3, n=12, A=0.85, sd=1.2), reps=100, seed=0)
    assert identification(res, "A").identified
    lo, hi = res.ci["A"]
    assert lo < 0.85 < hi and hi - lo < 0.05


def test_fit_is_reproducible_bit_for_bit():
    df = _runs(5, n=5)
    a = sa.fit_shared(df, reps=50, seed=2)
    b = sa.fit_shared(df, reps=50, seed=2)
    assert a.params == b.params
    np.testing.assert_array_equal(a.draws, b.draws)


def test_each_run_keeps_its_own_r0():
    df = _runs(1, n=4)
    df.loc[(df["seed"] == 2) & (df["compute"] == 0), "pass_rate"] = 0.31
    res = sa.fit_shared(df, reps=0)
    assert res.params["R0[2]"] == pytest.approx(0.31)
    assert "R0[2]" in res.fixed


def test_a_at_the_ceiling_is_not_identified():
    df = _runs(4, n=5, A=1.0, sd=0.3, sd_A=0.0)
    res = sa.fit_shared(df, reps=100, seed=0)
    assert not identification(res, "A").identified


def test_coverage_counts_hits_and_is_seeded():
    kw = dict(n_runs=4, A=0.85, B=2.0, log_C_mid=float(np.log(800.0)), sd_log_C_mid=0.5, R0=0.2)
    a = sa.coverage(**kw, steps=STEPS, sims=6, reps=40, seed=1)
    b = sa.coverage(**kw, steps=STEPS, sims=6, reps=40, seed=1)
    assert a == b
    assert a.sims == 6 and a.n_runs == 4
    assert a.coverage * 6 == pytest.approx(round(a.coverage * 6))
    assert 0.0 < a.se < 0.25
    assert a.identified == 1.0  # A = 0.85 well below its bound, take-offs mid-horizon


def _frame(df: pd.DataFrame, size: str, variant: str = "baseline") -> pd.DataFrame:
    return df.assign(model_size=size, variant=variant)


def test_table_and_findings():
    curves = pd.concat(
        [_frame(_runs(1, n=4), "s"), _frame(_runs(2, n=5, A=1.0, sd=0.3, sd_A=0.0), "m")],
        ignore_index=True,
    )
    scope = pd.DataFrame(
        {"fitted": [True, True, False], "why": [None, None, "too few stable runs (2 of 4)"]},
        index=pd.MultiIndex.from_tuples(
            [("baseline", "s"), ("baseline", "m"), ("baseline", "l")],
            names=["variant", "model_size"],
        ),
    )
    tab, fits = sa.shared_table(
        curves, scope, base="baseline", sizes=["s", "m", "l"], reps=60, sims=4, seed=0
    )
    assert list(tab.index) == ["s", "m", "l"]
    assert bool(tab.loc["s", "identified"]) and not bool(tab.loc["m", "identified"])
    assert tab.loc["l", "why"] == "too few stable runs (2 of 4)" and "l" not in fits
    assert np.isfinite(tab.loc["s", "coverage"]) and tab.loc["s", "runs"] == 4
    assert np.isnan(tab.loc["m", "coverage"])  # A at the ceiling: no truth to cover
    found = {f.name: f for f in sa.shared_findings(tab, fits, base="baseline")}
    count = found["scalerl/shared/A_identified_sizes"].estimate
    assert count.point == 1.0
    assert "m:" in count.note and "l: too few stable runs" in count.note
    s_a = found["scalerl/shared/s/A"].estimate
    assert s_a.n == 4 and "simulated on these data" in s_a.method
    assert not found["scalerl/shared/m/A"].estimate.identified


def test_t_interval_is_wider_than_percentile_at_few_runs_and_capped_at_one():
    res = sa.fit_shared(_runs(6, n=4), reps=200, seed=0)
    lo, hi = sa.a_interval(res)
    plo, phi = res.ci["A"]
    assert lo < res.params["A"] < hi <= 1.0
    assert hi - lo > phi - plo  # t on 3 df and the n/(n-1) correction widen it
    near = sa.fit_shared(_runs(6, n=4, A=0.985, sd_A=0.0), reps=200, seed=0)
    assert sa.a_interval(near)[1] <= 1.0
    assert np.isnan(sa.a_interval(sa.fit_shared(_runs(6, n=4), reps=0))[0])
