"""Few-run variability of point estimates (claim 1) and CI width vs runs (claim 3)."""

import numpy as np
import pytest
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats import metrics as M
from scalinglab.stats.variability import (
    ci_width_vs_runs,
    rank_flip_probability,
    subsample_point_estimates,
    subsample_runs,
)


def scores(runs=10, tasks=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, runs, tasks)) + np.array([0.0, 0.3])[:, None, None]
    return xr.DataArray(
        x,
        dims=("algorithm", "run", "task"),
        coords={"algorithm": ["a", "b"], "task": [f"t{i}" for i in range(tasks)]},
    )


def test_subsamples_are_without_replacement_and_skip_absent_runs():
    x = np.arange(30.0).reshape(6, 5)
    x[4:, 2] = np.nan
    sub = subsample_runs(x, n_runs=4, draws=200, rng=np.random.default_rng(0))
    assert sub.shape == (200, 4, 5)
    assert not np.isnan(sub).any()
    for m in range(5):
        for d in range(200):
            picked = sub[d, :, m]
            assert len(set(picked)) == 4
            assert set(picked) <= set(x[~np.isnan(x[:, m]), m])


def test_all_runs_reproduce_the_full_point_estimate():
    s = scores()
    est = subsample_point_estimates(s, n_runs=10, draws=5, rng=np.random.default_rng(0))
    assert est.dims == ("draw", "algorithm", "metric")
    for m, f in M.AGGREGATES.items():
        full = f(s.sel(algorithm="b").values)
        np.testing.assert_allclose(est.sel(algorithm="b", metric=m).values, full, rtol=1e-12)


def test_few_runs_spread_and_errors():
    s = scores()
    est = subsample_point_estimates(
        s, n_runs=3, draws=300, metrics=("iqm",), rng=np.random.default_rng(0)
    )
    assert est.sel(metric="iqm").std("draw").min() > 0.05
    again = subsample_point_estimates(
        s, n_runs=3, draws=300, metrics=("iqm",), rng=np.random.default_rng(0)
    )
    xr.testing.assert_identical(est, again)
    with pytest.raises(InputError, match="n_runs must be >= 1"):
        subsample_point_estimates(s, n_runs=0, draws=2, rng=np.random.default_rng(0))


def test_ragged_task_with_fewer_runs_contributes_all_of_them():
    # ragged run counts are fine for intervals; the few-run study accepts them too
    x = np.arange(30.0).reshape(6, 5)
    x[2:, 1] = np.nan  # task 1 has only 2 runs, fewer than n_runs=3
    sub = subsample_runs(x, n_runs=3, draws=50, rng=np.random.default_rng(0))
    assert sub.shape == (50, 3, 5)
    for d in range(50):
        assert set(sub[d, :2, 1]) == {x[0, 1], x[1, 1]} and np.isnan(sub[d, 2, 1])
        assert not np.isnan(sub[d, :, [0, 2, 3, 4]]).any()
    one = np.array([[1.0, 2.0]])  # a single run per task, n_runs above it
    assert subsample_runs(one, n_runs=3, draws=4, rng=np.random.default_rng(0)).shape == (4, 3, 2)


def test_rank_flip_probability_hand_case():
    # reference: b > a on both metrics; draw 1 of 4 reverses them
    est = xr.DataArray(
        np.array(
            [
                [[0.0, 2.0], [1.0, 1.0]],
                [[0.0, 2.0], [1.0, 1.0]],
                [[0.0, 2.0], [1.0, 1.0]],
                [[1.0, 1.0], [0.0, 2.0]],
            ]
        ),
        dims=("draw", "algorithm", "metric"),
        coords={"algorithm": ["a", "b"], "metric": ["iqm", "optimality_gap"]},
    )
    ref = xr.DataArray(
        [[0.0, 2.0], [1.0, 1.0]],
        dims=("algorithm", "metric"),
        coords={"algorithm": ["a", "b"], "metric": ["iqm", "optimality_gap"]},
    )
    out = rank_flip_probability(est, ref)
    assert out.pair_flip.sel(algorithm="a", other="b", metric="iqm") == 0.25
    assert np.isnan(out.pair_flip.sel(algorithm="a", other="a", metric="iqm"))
    np.testing.assert_allclose(out.ranking_changed.values, [0.25, 0.25])
    np.testing.assert_allclose(out.winner_changed.values, [0.25, 0.25])


def test_ci_width_shrinks_with_runs():
    s = scores(runs=20, tasks=5)
    ds = ci_width_vs_runs(s, [3, 20], reps=300, draws=3, rng=np.random.default_rng(0))
    assert ds.width.dims == ("n_runs", "algorithm", "metric")
    assert list(ds.metric.values) == ["iqm", "median"]
    assert (ds.width.sel(n_runs=3) > ds.width.sel(n_runs=20)).all()
    assert np.isfinite(ds.width_std).all()
    with pytest.raises(InputError, match="run_counts"):
        ci_width_vs_runs(s, [0], rng=np.random.default_rng(0))


def test_ci_width_curve_stops_at_each_algorithms_own_run_count():
    s = scores(runs=20, tasks=5).copy()
    short = str(s.algorithm.values[0])
    s.loc[{"algorithm": short}] = s.sel(algorithm=short).where(s.run < 5)
    ds = ci_width_vs_runs(s, [3, 5, 10], reps=200, draws=2, rng=np.random.default_rng(0))
    assert int(ds.own_runs.sel(algorithm=short)) == 5
    assert np.isnan(ds.width.sel(algorithm=short, n_runs=10)).all()
    assert np.isfinite(ds.width.sel(algorithm=short, n_runs=5)).all()
    others = ds.width.drop_sel(algorithm=short)
    assert np.isfinite(others).all()
