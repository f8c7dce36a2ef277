"""The interval and GEMM studies' findings modules: one call per notebook step records the
findings under the names the reports, prose and claims files use, with the floors and
headlines the notebooks had."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab import record as rec
from scalinglab.stats import coverage_report as cr
from scalinglab.stats import method_coverage as mc
from scalinglab.stats.few_run_flips import few_run_flip_rates
from scalinglab.stats.improvement import pairwise_probability_of_improvement
from scalinglab.studies.gemm import findings as gemm_findings
from scalinglab.studies.intervals import findings as iv_findings
from scalinglab.studies.intervals import orderings


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.delenv(rec.RESULTS_ENV, raising=False)
    rec.clear()
    yield
    rec.clear()


def _scores(rng, gaps=(0.0, 3.0, 6.0), runs=6, tasks=4):
    base = rng.normal(size=(len(gaps), runs, tasks)) + np.asarray(gaps)[:, None, None]
    return xr.DataArray(
        base,
        dims=("algorithm", "run", "task"),
        coords={"algorithm": ["a", "b", "c"], "task": [f"t{i}" for i in range(tasks)]},
    )


def test_few_run_rates_are_recorded_with_a_wilson_floor_where_every_replicate_gave_zero():
    # algorithms far apart: no few-run draw changes the winner, so its rate is 0 everywhere
    few = few_run_flip_rates(
        _scores(np.random.default_rng(0), gaps=(0.0, 30.0, 60.0)),
        n_runs=3,
        draws=50,
        reps=20,
        inner_draws=10,
        metrics=("iqm", "median"),
        rng=np.random.default_rng(1),
    )
    iv_findings.record_few_run_rates(few, few_runs=3, few_draws=50)
    got = {f.name: f for f in rec.findings()}
    for stem in ("rank_flip_rate", "winner_change_rate", "pair_flip_rate"):
        assert f"{stem}/few_runs" in got and f"{stem}/few_runs/median" in got
    winner = got["winner_change_rate/few_runs"]
    assert winner.point == 0.0 and winner.ci is not None and winner.ci[1] > 0  # never [0, 0]
    assert "Wilson score over 50" in winner.method and winner.n == 50
    assert "Monte Carlo standard error" in winner.note
    assert {f"few_run_spread/{a}/median" for a in "abc"} <= set(got)


def test_stratified_intervals_record_the_fewest_runs_per_task_as_n():
    # a, b: 6 runs per task; c loses two runs on one task (NaN = absent run)
    data = _scores(np.random.default_rng(4), gaps=(0.0, 0.3, 0.6))
    data[2, 4:, 1] = np.nan
    assert orderings.fewest_runs(data) == 4 and orderings.fewest_runs(data, ["a", "b"]) == 6
    diff = orderings.metric_difference(
        data, [("c", "b"), ("b", "a")], reps=50, rng=np.random.default_rng(5)
    )
    iv_findings.record_iqm_differences(diff)
    share = orderings.top_task_share(data, k=1, reps=30, rng=np.random.default_rng(6))
    ci = xr.Dataset(
        {"point": (("algorithm", "metric"), np.ones((3, 1)))},
        coords={"algorithm": ["a", "b", "c"], "metric": ["mean"]},
    )
    iv_findings.record_top_share(share, ci, ["a", "b", "c"])
    few = few_run_flip_rates(
        data,
        n_runs=3,
        draws=20,
        reps=10,
        inner_draws=5,
        metrics=("iqm", "median"),
        rng=np.random.default_rng(7),
    )
    iv_findings.record_few_run_rates(few, few_runs=3, few_draws=20, scores=data)
    poi = pairwise_probability_of_improvement(
        data, [("c", "b"), ("b", "a")], reps=30, rng=np.random.default_rng(8)
    )
    iv_findings.record_poi(poi, adjacent=2, runs=6, scores=data)
    got = {f.name: f for f in rec.findings()}
    assert got["iqm_diff/c_vs_b"].n == 4 and got["iqm_diff/b_vs_a"].n == 6
    for pair, n in (("c_vs_b", 4), ("b_vs_a", 6)):  # Wilson's floor counts the 6 runs
        poi_n = got[f"poi/{pair}"]
        assert poi_n.n == (6 if "Wilson" in poi_n.method else n)
    assert [got[f"mean_top_share/{a}"].n for a in "abc"] == [6, 6, 4]
    rate = got["rank_flip_rate/few_runs"]
    # the outer bootstrap's n: the fewest runs of the algorithms it kept, unless the
    # Wilson floor over the draws replaced its interval
    assert rate.n == (20 if "Wilson" in rate.method else 4)
    # a stratified bootstrap's coverage is read at that n
    f = {"ci": [0.0, 1.0], "level": 0.95, "method": got["iqm_diff/c_vs_b"].method, "n": 4}
    assert mc.match_method(f["method"]).key == "stratified-bootstrap"
    assert cr.coverage_note(f).startswith("its interval's simulated coverage is 0.")


def test_poi_headlines_are_the_adjacent_pairs_and_a_certain_pair_keeps_an_interval():
    data = _scores(np.random.default_rng(2), gaps=(0.0, 50.0, 100.0))
    poi = pairwise_probability_of_improvement(
        data, [("c", "b"), ("b", "a"), ("c", "a")], reps=50, rng=np.random.default_rng(3)
    )
    iv_findings.record_poi(poi, adjacent=2, runs=6)
    got = {f.name: f for f in rec.findings()}
    assert [got[n].headline for n in ("poi/c_vs_b", "poi/b_vs_a", "poi/c_vs_a")] == [
        True,
        True,
        False,
    ]
    certain = got["poi/c_vs_a"]
    assert certain.point == 1.0 and certain.ci[0] < 1.0  # Wilson's end over 6 runs, not [1, 1]


def test_coverage_findings_carry_their_interval_count_and_none_is_a_no_op():
    iv_findings.record_coverage(None, method="percentile", confidence=0.95)
    assert rec.findings() == []
    table = pd.DataFrame(
        {"coverage": [0.9], "wilson_lo": [0.85], "wilson_hi": [0.94], "covered": [180],
         "intervals": [200]},
        index=pd.MultiIndex.from_tuples([(3, "iqm")], names=["n", "metric"]),
    )  # fmt: skip
    iv_findings.record_coverage(table, method="percentile", confidence=0.95)
    (f,) = rec.findings()
    assert f.name == "few_run_coverage/iqm/n=3" and f.n == 200 and f.ci == (0.85, 0.94)
    assert "180 of 200 percentile intervals at 95%" in f.note


def test_tile_choice_maximum_has_no_interval_and_the_median_does():
    regret = pd.DataFrame({"regret": [1.0, 1.05, 1.2, 1.1, 1.0, 1.3]})
    within = pd.DataFrame(
        {"r2_within": [0.4], "within_share": [0.03], "oracle_r2": [0.97]},
        index=pd.Index(["kernel_model"], name="model"),
    )
    gemm_findings.record_tile_choice(regret, within, level=0.95, reps=200, seed=0)
    got = {f.name: f for f in rec.findings()}
    med = got["predictor/unseen_shapes/tile_choice_regret_median"]
    worst = got["predictor/unseen_shapes/tile_choice_regret_max"]
    assert med.ci is not None and med.n == 6 and med.point == pytest.approx(1.075)
    assert worst.ci is None and worst.point == 1.3 and "without an interval" in worst.note
    within_r2 = got["predictor/unseen_shapes/kernel_model/r2_within_shape"]
    assert "3% of the variance" in within_r2.description and within_r2.ci is None
