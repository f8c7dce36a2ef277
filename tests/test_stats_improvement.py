"""Probability of improvement: hand cases, ties, run counts, vectorized replicates."""

import numpy as np
import pytest
import xarray as xr
from scipy.stats import mannwhitneyu

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import stratified_indices
from scalinglab.stats.improvement import (
    _counts,
    _Pair,
    pairwise_probability_of_improvement,
    probability_of_improvement,
)

NAN = np.nan


def da(values, tasks=None):
    values = np.asarray(values, dtype=float)
    tasks = tasks or [f"t{j}" for j in range(values.shape[1])]
    return xr.DataArray(values, dims=("run", "task"), coords={"task": tasks})


def poi(x, y, **kw):
    kw.setdefault("reps", 500)
    return probability_of_improvement(da(x), da(y), rng=np.random.default_rng(0), **kw)


def test_hand_cases_with_ties():
    # x = {2, 3}, y = {2, 1}: 2v2 tie (1/2), 2>1, 3>2, 3>1 -> 3.5 / 4
    assert poi([[2], [3]], [[2], [1]])["point"] == pytest.approx(0.875)
    # x = {1, 3}, y = {2, 2}: wins 3>2 twice -> 2 / 4
    assert poi([[1], [3]], [[2], [2]])["point"] == pytest.approx(0.5)
    # all ties -> 1/2
    assert poi([[1], [1]], [[1], [1], [1]])["point"] == pytest.approx(0.5)


def test_different_run_counts_mean_over_tasks():
    # task 0: x={1,2,3} vs y={2,4}: 1:0, 2: tie .5, 3: 1 win -> 1.5/6 = 0.25
    # task 1: x={5,5,6} vs y={1,5}: 5:1+.5, 5:1+.5, 6:2 -> 5/6
    x = [[1, 5], [2, 5], [3, 6]]
    y = [[2, 1], [4, 5]]
    assert poi(x, y)["point"] == pytest.approx((0.25 + 5 / 6) / 2)


def test_dominance_and_identity():
    x = np.arange(12.0).reshape(4, 3) + 100
    y = np.arange(15.0).reshape(5, 3)
    res = poi(x, y)
    assert res["point"] == 1.0 and res["ci"] == (1.0, 1.0)
    assert poi(y, x)["point"] == 0.0
    same = poi(y, y, reps=2000)
    assert same["point"] == 0.5
    lo, hi = same["ci"]
    assert lo < 0.5 < hi
    assert 0.5 - lo == pytest.approx(hi - 0.5, abs=0.05)  # symmetric under X <-> Y


def test_matches_scipy_mann_whitney_with_ragged_runs():
    rng = np.random.default_rng(4)
    x = np.round(rng.normal(size=(9, 4)), 1)
    y = np.round(rng.normal(size=(6, 4)), 1)
    x[7:, 2] = NAN
    y[4:, 0] = NAN
    expected = []
    for m in range(4):
        xm, ym = x[~np.isnan(x[:, m]), m], y[~np.isnan(y[:, m]), m]
        u = mannwhitneyu(xm, ym, alternative="greater").statistic
        expected.append(u / (xm.size * ym.size))
    assert poi(x, y)["point"] == pytest.approx(np.mean(expected), rel=1e-12)


def test_vectorized_replicates_equal_brute_force_comparisons():
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(size=(5, 3)), 1)
    y = np.round(rng.normal(size=(7, 3)), 1)
    x[3:, 1] = NAN
    y[2:, 2] = NAN
    pair = _Pair(x, y)
    g = np.random.default_rng(8)
    ix = stratified_indices(g, pair.nx, size=300)
    iy = stratified_indices(g, pair.ny, size=300)
    xs = np.take(pair.tx.ravel(), ix)  # (B, Rx, M), NaN = absent
    ys = np.take(pair.ty.ravel(), iy)
    gt = (xs[:, :, None, :] > ys[:, None, :, :]).sum(axis=(1, 2))
    eq = (xs[:, :, None, :] == ys[:, None, :, :]).sum(axis=(1, 2))
    brute = ((gt + 0.5 * eq) / (pair.nx * pair.ny)).mean(axis=1)
    fast = pair.statistic(_counts(ix, pair.tx.shape), _counts(iy, pair.ty.shape))
    np.testing.assert_allclose(fast, brute, rtol=1e-12)


def test_reproducible_and_task_alignment_by_label():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(6, 3)), rng.normal(size=(4, 3))
    a = poi(x, y)
    assert a == poi(x, y)
    assert a != probability_of_improvement(da(x), da(y), reps=500, rng=np.random.default_rng(1))
    y_swapped = da(y[:, ::-1], tasks=["t2", "t1", "t0"])
    b = probability_of_improvement(da(x), y_swapped, reps=500, rng=np.random.default_rng(0))
    assert b["point"] == a["point"]
    with pytest.raises(InputError, match=r"only in x: \['t2'\], only in y: \['u'\]"):
        probability_of_improvement(
            da(x), da(y, tasks=["t0", "t1", "u"]), rng=np.random.default_rng(0)
        )


def test_pairwise_dataset_and_pair_independence():
    rng = np.random.default_rng(2)
    s = xr.DataArray(
        rng.normal(size=(3, 5, 4)),
        dims=("algorithm", "run", "task"),
        coords={"algorithm": ["a", "b:c", "d"]},
    )
    ds = pairwise_probability_of_improvement(
        s, ["a:b:c", ("d", "a")], reps=400, rng=np.random.default_rng(0)
    )
    assert list(ds.pair.values) == ["a:b:c", "d:a"]
    assert list(ds.x.values) == ["a", "d"] and list(ds.y.values) == ["b:c", "a"]
    alone = pairwise_probability_of_improvement(
        s, [("d", "a")], reps=400, rng=np.random.default_rng(0)
    )
    assert alone.lo.item() == ds.lo.sel(pair="d:a").item()
    direct = probability_of_improvement(
        s.sel(algorithm="d"), s.sel(algorithm="a"), reps=400, rng=np.random.default_rng(0)
    )
    assert direct["point"] == ds.point.sel(pair="d:a").item()
    with pytest.raises(InputError, match="not X:Y"):
        pairwise_probability_of_improvement(s, ["a:zz"], rng=np.random.default_rng(0))
    with pytest.raises(InputError, match="unknown algorithm 'zz'"):
        pairwise_probability_of_improvement(s, [("a", "zz")], rng=np.random.default_rng(0))
