"""Outer-bootstrap CIs of the analysis' own statistics (few-run rank flips, CI-width ratios)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats import reliability as R


def _scores(values: np.ndarray, algs=None) -> xr.DataArray:
    a, n, m = values.shape
    return xr.DataArray(
        values,
        dims=("algorithm", "run", "task"),
        coords={
            "algorithm": algs or [f"a{i}" for i in range(a)],
            "run": np.arange(n),
            "task": [f"t{j}" for j in range(m)],
        },
    )


def test_resample_scores_stays_within_each_cell_and_keeps_ragged_runs():
    rng = np.random.default_rng(0)
    vals = rng.normal(size=(2, 6, 3))
    vals[1, 4:, 2] = np.nan  # algorithm a1 has only 4 runs on task t2
    out = R.resample_scores(_scores(vals), reps=50, rng=np.random.default_rng(1))
    assert out.shape == (50, 2, 6, 3)
    for a in range(2):
        for t in range(3):
            cell = vals[a, :, t]
            got = out[:, a, :, t]
            present = got[~np.isnan(got)]
            assert np.isin(present, cell[~np.isnan(cell)]).all()
    assert np.isnan(out[:, 1, 4:, 2]).all() and not np.isnan(out[:, 1, :4, 2]).any()
    # resampling with replacement: some replicate repeats a run
    assert any(len(np.unique(out[b, 0, :, 0])) < 6 for b in range(50))


def test_resample_scores_seeded_by_algorithm_name_not_position():
    vals = np.random.default_rng(0).normal(size=(2, 5, 3))
    a = R.resample_scores(_scores(vals, ["x", "y"]), reps=10, rng=np.random.default_rng(7))
    b = R.resample_scores(
        _scores(vals[::-1].copy(), ["y", "x"]), reps=10, rng=np.random.default_rng(7)
    )
    np.testing.assert_array_equal(a[:, 0], b[:, 1])
    c = R.resample_scores(_scores(vals, ["x", "y"]), reps=10, rng=np.random.default_rng(8))
    assert not np.array_equal(a, c)


def test_outer_bootstrap_ci_matches_the_standard_error_of_a_mean():
    n, m = 40, 10
    vals = np.random.default_rng(3).normal(size=(1, n, m))
    res = R.outer_bootstrap(
        _scores(vals),
        lambda d, g: np.array(d.values.mean()),
        reps=2000,
        rng=np.random.default_rng(4),
    )
    expected = 2 * 1.959964 * vals.std(ddof=0) / np.sqrt(n * m)
    assert res["point"] == pytest.approx(vals.mean())
    assert res["hi"] - res["lo"] == pytest.approx(expected, rel=0.1)
    assert res["replicates"].shape == (2000,)


@pytest.mark.slow
def test_few_run_variability_separated_vs_identical_algorithms():
    rng = np.random.default_rng(5)
    far = rng.normal(size=(3, 12, 6)) * 0.1 + np.array([0.0, 5.0, 10.0])[:, None, None]
    ds = R.few_run_variability(
        _scores(far),
        n_runs=3,
        draws=200,
        reps=20,
        metrics=("iqm", "mean"),
        rng=np.random.default_rng(6),
    )
    assert ds["estimate"].dims == ("draw", "algorithm", "metric")
    assert ds["estimate"].shape == (200, 3, 2)
    assert ds["full"].dims == ("algorithm", "metric")
    assert list(ds.statistic.values) == list(R.FLIP_STATISTICS)
    for v in ("point", "lo", "hi"):
        np.testing.assert_array_equal(ds[v].values, 0.0)  # never flips
    # two algorithms with the same score distribution: the 3-run order is a coin flip
    same = rng.normal(size=(2, 30, 8))
    ds = R.few_run_variability(
        _scores(same), n_runs=3, draws=2000, reps=50, metrics="mean", rng=np.random.default_rng(7)
    )
    pair = ds["point"].sel(statistic="pair_flip_rate", metric="mean")
    assert 0.25 < float(pair) < 0.75
    assert float(ds["lo"].sel(statistic="pair_flip_rate", metric="mean")) <= float(pair)
    # with two algorithms a pair flip, a winner change and a ranking change are the same event
    np.testing.assert_allclose(ds["point"].values[0], ds["point"].values[1])
    np.testing.assert_allclose(ds["point"].values[1], ds["point"].values[2])


@pytest.mark.slow
def test_few_run_variability_same_seed_same_interval():
    vals = np.random.default_rng(9).normal(size=(3, 8, 4))
    a = R.few_run_variability(
        _scores(vals), n_runs=3, draws=100, reps=20, rng=np.random.default_rng(1)
    )
    b = R.few_run_variability(
        _scores(vals), n_runs=3, draws=100, reps=20, rng=np.random.default_rng(1)
    )
    xr.testing.assert_identical(a, b)


@pytest.mark.slow
def test_ci_width_ratio_of_metrics_with_equal_widths_is_one():
    # all scores < 1 and equal runs per task: optimality gap = 1 - mean exactly, so on the
    # shared resamples both CIs have the same width in every (outer and inner) replicate
    vals = np.random.default_rng(2).uniform(0, 0.9, size=(2, 10, 5))
    ds = R.ci_width_ratio(
        _scores(vals),
        numerator="mean",
        denominator="optimality_gap",
        inner_reps=300,
        reps=20,
        rng=np.random.default_rng(3),
    )
    assert list(ds.algorithm.values) == ["a0", "a1", "(all)"]
    for v in ("point", "lo", "hi"):
        np.testing.assert_allclose(ds[v].values, 1.0, rtol=1e-9)


@pytest.mark.slow
def test_ci_width_ratio_median_wider_than_iqm_on_spread_tasks():
    # 41 tasks with well separated difficulties (offsets 0, 10, ..., 400; noise sd 1): the
    # median of task means is one task's mean (CI width ~ 2*1.96/sqrt(30)), while the IQM
    # averages the middle 21 tasks' runs (width ~ that / sqrt(21)): a ratio near 4.6
    rng = np.random.default_rng(4)
    vals = rng.normal(size=(1, 30, 41)) + 10.0 * np.arange(41)
    ds = R.ci_width_ratio(_scores(vals), inner_reps=1000, reps=40, rng=np.random.default_rng(5))
    assert 3.0 < float(ds["point"].sel(algorithm="(all)")) < 7.0
    assert float(ds["lo"].sel(algorithm="(all)")) > 2.5


def test_run_count_grid():
    vals = np.zeros((2, 25, 3))
    assert R.run_count_grid(_scores(vals)) == [3, 5, 7, 11, 16, 25]
    vals[1, 20:, 0] = np.nan  # algorithm 1 has 20 runs on task 0: its count is 20
    grid = R.run_count_grid(_scores(vals), points=4)
    assert grid[0] == 3 and grid[-1] == 25 and 20 in grid and grid == sorted(set(grid))
    vals[0, 5:, 1] = np.nan  # both short: the grid ends at the larger own count
    assert R.run_count_grid(_scores(vals), points=4)[-1] == 20
    assert R.run_count_grid(_scores(np.zeros((1, 2, 2)))) == [2]


def test_errors():
    one = _scores(np.zeros((1, 4, 2)))
    with pytest.raises(InputError, match="at least 2 algorithms"):
        R.few_run_variability(one, n_runs=2, rng=np.random.default_rng(0))
    with pytest.raises(InputError, match="reps >= 2"):
        R.outer_bootstrap(one, lambda d, g: np.array(0.0), reps=1, rng=np.random.default_rng(0))
