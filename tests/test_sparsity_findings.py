"""The sparsity study's findings as data: t intervals over seeds that cover at 3 seeds,
steps that return estimates, and the claims' values (studies.sparsity.findings,
studies.sparsity.seed_means)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.stats import calibration
from scalinglab.stats import coverage_report as cr
from scalinglab.studies.sparsity import findings as sf
from scalinglab.studies.sparsity import seed_means


def _per_run(values: dict[str, list[float]], x: dict[str, float] | None = None) -> pd.DataFrame:
    rows = [
        {"model": m, "seed": k, "v": v, "x": (x or {}).get(m, 1.0)}
        for m, vs in values.items()
        for k, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def test_welch_t_of_one_model_is_the_one_sample_t_interval():
    v = [0.1, 0.4, 0.25]
    est = seed_means.stratified_mean(_per_run({"a": v}), "v", level=0.9)
    lo, hi = calibration.t_interval(np.array(v), level=0.9)
    assert est.ci == pytest.approx((float(lo), float(hi)))
    assert est.method.startswith(seed_means.WELCH_T) and "3 seeds per model" in est.method
    assert est.n == 3  # where the verdict reads the Student t interval's coverage
    mixed = seed_means.stratified_mean(_per_run({"a": v, "b": [0.2, 0.3, 0.1, 0.4, 0.2]}), "v")
    assert "3-5 seeds per model" in mixed.method and mixed.n == 3  # the fewest seeds


def test_a_model_with_one_seed_or_no_spread_gets_no_interval():
    one = seed_means.stratified_mean(_per_run({"a": [0.1, 0.2], "b": [0.3]}), "v")
    assert one.ci is None and "fewer than 2 seeds" in one.note
    flat = seed_means.stratified_mean(_per_run({"a": [0.1, 0.1], "b": [0.3, 0.3]}), "v")
    assert flat.ci is None and "no spread" in flat.note


def test_relative_slope_is_the_delta_method_around_the_slope_over_the_mean():
    per_run = _per_run(
        {"s": [0.10, 0.11, 0.09], "m": [0.12, 0.13, 0.11], "l": [0.14, 0.16, 0.12]},
        {"s": 1e4, "m": 1e5, "l": 1e6},
    )
    rel = seed_means.slope_vs_log(per_run, "v", "x", relative=True)
    assert rel.point == pytest.approx(0.02 / 0.12)
    assert rel.lo < 0.02 / 0.12 < rel.hi
    # wider seed noise, wider interval
    wide = per_run.assign(v=per_run["v"] + np.tile([0.0, 0.02, -0.02], 3))
    rel_wide = seed_means.slope_vs_log(wide, "v", "x", relative=True)
    assert rel_wide.hi - rel_wide.lo > rel.hi - rel.lo


def test_the_t_interval_covers_at_3_seeds_and_the_percentile_bootstrap_does_not():
    rng = np.random.default_rng(0)
    # three models, each with its own level; seed noise normal
    per_run = pd.DataFrame(
        {
            "model": np.repeat(["a", "b", "c"], 30),
            "v": np.repeat([0.1, 0.2, 0.4], 30) + 0.05 * rng.normal(size=90),
        }
    )
    tab = seed_means.coverage_at_seeds(per_run, "v", ns=(3,), sims=3000, resamples=300, seed=1)
    got = tab.set_index("method")["coverage"]
    # resampled from 90 values: close to normal; t covers its level within Monte Carlo error
    assert got["Student t"] >= 0.93
    assert got["percentile bootstrap"] < 0.85


def _curves(seeds: int = 3) -> pd.DataFrame:
    rows = []
    for act, slope in (("relu", -0.02), ("silu", 0.05)):
        for model, base in (("s", 0.3), ("m", 0.2)):
            for s in range(seeds):
                for t in (1e4, 1e5, 1e6):
                    rows.append(
                        {
                            "activation": act,
                            "model": model,
                            "seed": s,
                            "run": f"{model}/{act}/{s}",
                            "tokens": t,
                            "usable": True,
                            "activation_ratio": base
                            + (slope + 0.002 * (s - 1)) * np.log10(t / 1e4),
                        }
                    )
    return pd.DataFrame(rows)


def test_trend_step_records_t_estimates_over_models():
    step = sf.trends(_curves(), level=0.95)
    names = [n.name for n in step.findings]
    assert names == ["trend/relu/slope_per_decade", "trend/silu/slope_per_decade"]
    relu = step.findings[0].estimate
    assert isinstance(relu, Estimate) and relu.point == pytest.approx(-0.02)
    assert relu.lo < -0.02 < relu.hi and relu.method.startswith(seed_means.WELCH_T)
    assert set(step.extra["by_model"]) == {
        ("relu", "s"),
        ("relu", "m"),
        ("silu", "s"),
        ("silu", "m"),
    }
    cov = sf.coverage(step.extra["slopes"], level=0.95, seed=0, sims=200)
    assert {n.name for n in cov.findings} == {
        "coverage/student_t/n3",
        "coverage/student_t/n5",
        "coverage/percentile/n3",
        "coverage/percentile/n5",
    }
    assert all(0 <= n.estimate.point <= 1 and n.estimate.ci is None for n in cov.findings)


def _timings(n_runs: int) -> list[xr.Dataset]:
    out = []
    for k in range(n_runs):
        case = np.arange(2)
        ds = xr.Dataset(
            {
                "median_s": (
                    ("d_ff", "impl", "case"),
                    np.array([[[1.0, 1.0], [0.2 + 0.01 * k, 0.5], [0.3, 0.6]]]),
                ),
                "batch": (("d_ff", "case"), np.array([[1, 1]])),
                "ratio": (("d_ff", "case"), np.array([[0.065, 0.5]])),
                "union_ratio": (("d_ff", "case"), np.array([[0.065, 0.5]])),
                "bytes_speedup": (("d_ff", "case"), np.array([[15.0, 2.0]])),
            },
            coords={
                "d_ff": [2048],
                "impl": ["dense", "sparse_numba", "sparse_torch"],
                "case": case,
            },
            attrs={
                "load_before": 0.1,
                "load_after": 0.2,
                "started_utc": f"2026-11-26T0{k}:00Z",
                "machine": "test",
                "cpu_model": "cpu",
                "cores": "0",
            },
        )
        out.append(ds)
    return out


def test_committed_timings_give_the_median_and_range_at_their_stated_level():
    step = sf.kernel_offline(_timings(3))
    est = {n.name: n.estimate for n in step.findings}
    numba = est["kernel/offline/sparse_numba/F2048/speedup_at_0.065"]
    assert numba.point == pytest.approx(1 / 0.21)
    assert numba.ci == pytest.approx((1 / 0.22, 1 / 0.2))
    assert numba.level == pytest.approx(0.75)  # [min, max] of 3 covers the median w.p. 3/4
    # n = 3 runs: the verdict states that coverage (the range's closed-form 0.75)
    assert numba.n == 3
    finding = {"ci": list(numba.ci), "level": numba.level, "method": numba.method, "n": numba.n}
    assert cr.coverage_note(finding) == "its interval's simulated coverage is 0.75 at n = 3"
    assert step.extra["deciding"] == ["kernel/offline/sparse_numba/F2048/speedup_at_0.065"]
    one = sf.kernel_offline(_timings(1))
    assert one.extra["deciding"] == [] and all(n.estimate.ci is None for n in one.findings)
    none = sf.kernel_offline([])
    assert none.findings == [] and "time_kernel" in none.messages[0]


def test_sweep_claim_values_use_the_longest_runs_there_are():
    cal = sf.Step(extra={"values": {"relu_min": 0.1}})
    kernel = sf.Step(extra={"deciding": []})
    got = sf.sweep_claim_values(cal, kernel, recorded=["horizon/relu/trend/relative_last_decade"])
    assert got["trend"] == "horizon" and got["kernel"] == ["kernel/offline/none"]
    assert got["relu_trends"] == ["horizon/relu/trend/relative_last_decade"]
    got = sf.sweep_claim_values(
        cal, sf.Step(extra={"deciding": ["k"]}), recorded=["long/relu/trend/relative_last_decade"]
    )
    assert got["trend"] == "long" and got["kernel"] == ["k"] and got["relu_min"] == 0.1
    # a trend claim is decided at every size read, each over its own last decade
    assert got["silu_trends"] == [
        f"long/silu/{m}/trend/relative_last_decade" for m in ("xs", "s", "m")
    ]
    # without runs, each size's horizon and seeds come from the design's configs
    assert got["horizons"] == (
        "xs to 8000 tokens per parameter (5 seeds), s to 8000 (5 seeds), m to 2000 (3 seeds)"
    )
    assert got["horizons"] in got["trend_runs"] and "own last decade" in got["trend_runs"]
    assert got["sizes"] == ["xs", "s", "m"] and got["trend_params"] == "3.4k-83k"
    # no size pair recorded: a name that no finding has, so the size claims are untested
    assert got["relu_pairs"] == got["silu_pairs"] == ["none"]


def test_horizons_are_read_from_the_runs_per_size():
    rows = [
        {"model": m, "seed": s, "tokens_per_param": t, "n_params": n}
        for m, n, tpp, seeds in (("m", 8e4, 40.0, 2), ("s", 2.5e4, 80.0, 4))
        for s in range(seeds)
        for t in (2.0, tpp)
    ]
    ldf = pd.DataFrame(rows)
    # smallest size first, whatever the rows' order; the runs win over the configs
    got = sf.horizons_text(ldf, {"s": (2000.0, 5)})
    assert got == "s to 80 tokens per parameter (4 seeds), m to 40 (2 seeds)"
    # a size read at the horizon its design extends says so
    got = sf.horizons_text(ldf, {}, design={"s": (80.0, 4), "m": (160.0, 3)})
    assert got == (
        "s to 80 tokens per parameter (4 seeds), m to 40 (2 seeds; the design's 160 not yet trained)"
    )
    # the passes over the corpus, where the runs record them (repetition is a regime)
    got = sf.horizons_text(ldf.assign(passes=ldf["tokens_per_param"] / 20.0), {})
    assert got == (
        "s to 80 tokens per parameter (4 seeds, 4.0 passes over the corpus), m to 40 (2 seeds, "
        "2.0 passes)"
    )


def test_live_timings_give_the_median_and_range_over_processes():
    speed = pd.DataFrame(
        {
            "batch": 1,
            "impl": ["sparse_numba"] * 2 + ["sparse_torch"] * 2,
            "ratio": [1.0, 0.02] * 2,
            "speedup": [0.8, 12.0, 0.7, 5.0],
            "min": [0.7, 10.0, 0.6, 4.0],
            "max": [0.9, 13.0, 0.8, 6.0],
            "ideal": [1.0, 40.0] * 2,
            "fraction_of_ideal": [0.8, 0.3, 0.7, 0.125],
        }
    )
    step = sf.kernel_live(speed, final=None, processes=4)
    est = {n.name: n.estimate for n in step.findings}
    numba = est["kernel/sparse_numba/speedup_at_0.02"]
    assert numba.ci == (10.0, 13.0) and numba.level == pytest.approx(1 - 2.0**-3)
    assert "4 separate processes" in numba.method and numba.n == 4
    # dense and sparse break even between the two ratios timed
    assert 0.02 < est["kernel/sparse_numba/crossover_ratio"].point < 1.0


def test_a_law_limit_carries_its_bootstrap_and_identification():
    from scalinglab.fitting import fit
    from scalinglab.studies.sparsity import analysis as sa

    rng = np.random.default_rng(0)
    D = np.tile(np.geomspace(1e5, 1e8, 12), 3)
    runs = np.repeat(["a", "b", "c"], 12)
    y = np.exp(-0.5 * (D / 1e5) ** 0.4 - 1.0) + 0.07 + 0.002 * rng.normal(size=D.size)
    res = fit("relu_sparsity", D, y, groups=runs, bootstrap=40, seed=0)
    est = sa.law_limit(res)
    assert est.method == sa.LAW_CI and "covers below its nominal level" in est.method
    assert est.lo <= est.point <= est.hi and est.resamples == 40
    # the same fit against data that rise: the ReLU law cannot express that trend
    rising = Estimate(0.03, 0.02, 0.04, level=0.95)
    bad = sa.law_limit(res, trend=rising)
    assert not bad.identified and "sign" in bad.note
