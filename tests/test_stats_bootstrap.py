"""The stratified resampling engine: index layout, streams, batching, BCa and jackknife."""

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats as sps

from scalinglab.stats import bootstrap as B
from scalinglab.stats.metrics import mean

NAN = np.nan


def test_compact_runs_moves_present_runs_up_in_order():
    x = np.array([[NAN, 1.0], [2.0, NAN], [3.0, 4.0]])
    table, n = B.compact_runs(x)
    np.testing.assert_array_equal(n, [2, 2])
    np.testing.assert_array_equal(table, [[2.0, 1.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="task column 1 has no present run"):
        B.compact_runs(np.array([[1.0, NAN]]))


def test_indices_stay_within_each_task():
    rng = np.random.default_rng(0)
    idx = B.stratified_indices(rng, np.array([4, 4, 4]), size=500)
    assert idx.shape == (500, 4, 3)
    np.testing.assert_array_equal(idx % 3, np.broadcast_to(np.arange(3), idx.shape))
    assert (idx // 3 < 4).all() and (idx >= 0).all()


def test_ragged_indices_resample_within_own_run_count_and_pad_absent_cells():
    rng = np.random.default_rng(1)
    n = np.array([3, 1, 2])
    idx = B.stratified_indices(rng, n, size=4000)
    assert idx.shape == (4000, 3, 3)
    rows, task = idx // 3, idx % 3
    np.testing.assert_array_equal(task, np.broadcast_to(np.arange(3), idx.shape))
    for m, n_m in enumerate(n):
        drawn = rows[:, :n_m, m]
        assert drawn.max() == n_m - 1 and drawn.min() == 0
        # uniform over the task's own runs
        freq = np.bincount(drawn.ravel(), minlength=n_m) / drawn.size
        np.testing.assert_allclose(freq, 1 / n_m, atol=0.02)
        # rows beyond the run count point at the task's absent cell (r, m)
        for r in range(n_m, 3):
            assert (rows[:, r, m] == r).all()


def test_task_bootstrap_resamples_task_slots():
    rng = np.random.default_rng(2)
    n = np.array([2, 3, 3])
    idx = B.stratified_indices(rng, n, size=3000, task_bootstrap=True)
    task = idx % 3
    # every row of a slot comes from the same task
    assert (task == task[:, :1, :]).all()
    slot_tasks = task[:, 0, :]
    assert not (slot_tasks == np.arange(3)).all(axis=1).all()
    np.testing.assert_allclose(np.bincount(slot_tasks.ravel()) / slot_tasks.size, 1 / 3, atol=0.02)
    # a slot holding task 0 (two runs) has its third row padded to the absent cell (2, 0)
    is0 = slot_tasks == 0
    assert (idx[:, 2, :][is0] == 2 * 3 + 0).all()
    assert (idx[:, :2, :][np.broadcast_to(is0[:, None, :], (3000, 2, 3))] // 3 < 2).all()


def test_batch_size_never_changes_the_replicates():
    x = np.random.default_rng(5).normal(size=(6, 4))
    x[4:, 1] = NAN
    stat = B.stack_statistics([mean])
    one = B.stratified_replicates(x, stat, reps=1000, rng=np.random.default_rng(9))
    many = B.stratified_replicates(x, stat, reps=1000, rng=np.random.default_rng(9), batch_size=7)
    np.testing.assert_array_equal(one, many)


def test_bootstrap_variance_of_mean_matches_theory_with_ragged_tasks():
    # Var*(mean of task means) = sum_m s_m^2 / n_m / M^2 with the biased variance s_m^2
    rng = np.random.default_rng(11)
    x = rng.normal(size=(8, 3)) * np.array([1.0, 3.0, 0.5])
    x[5:, 0] = NAN
    x[3:, 2] = NAN
    reps = B.stratified_replicates(
        x, B.stack_statistics([mean]), reps=40_000, rng=np.random.default_rng(0)
    )[:, 0]
    s2 = np.nanvar(x, axis=0)
    n = (~np.isnan(x)).sum(axis=0)
    assert reps.var() == pytest.approx((s2 / n).sum() / 9, rel=0.05)
    assert reps.mean() == pytest.approx(mean(x), abs=0.02)


def test_keyed_generators_depend_on_name_not_order_or_company():
    a = B.keyed_generators(np.random.default_rng(4), ["alpha", "beta", "gamma"])
    b = B.keyed_generators(np.random.default_rng(4), ["gamma", "alpha"])
    np.testing.assert_array_equal(a["alpha"].random(5), b["alpha"].random(5))
    np.testing.assert_array_equal(a["gamma"].random(5), b["gamma"].random(5))
    c = B.keyed_generators(np.random.default_rng(4), ["alpha", "beta"])
    assert not np.array_equal(c["alpha"].random(5), c["beta"].random(5))
    d = B.keyed_generators(np.random.default_rng(5), ["alpha"])
    assert not np.array_equal(
        d["alpha"].random(5),
        B.keyed_generators(np.random.default_rng(4), ["alpha"])["alpha"].random(5),
    )


def test_jackknife_removes_one_run_across_tasks():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    jk = B.jackknife_runs(x, B.stack_statistics([mean]))
    # leave out row 0: task means (4, 5) -> 4.5; row 1: (3, 4) -> 3.5; row 2: (2, 3) -> 2.5
    np.testing.assert_allclose(jk[:, 0], [4.5, 3.5, 2.5])
    # a task with a single run keeps it
    y = np.array([[1.0, 10.0], [3.0, NAN]])
    np.testing.assert_allclose(B.jackknife_runs(y, B.stack_statistics([mean]))[:, 0], [6.5, 5.5])


def test_bca_matches_scipy_on_a_single_task():
    # with one task the run jackknife is scipy's one-sample jackknife, so BCa must agree
    data = np.random.default_rng(7).lognormal(size=25)
    x = data[:, None]
    stat = B.stack_statistics([mean])
    reps = B.stratified_replicates(x, stat, reps=4000, rng=np.random.default_rng(1))
    point = stat(x[None])[0]
    lo, hi = B.bca_interval(reps, point, B.jackknife_runs(x, stat), level=0.9)
    ref = sps.bootstrap(
        (data,),
        np.mean,
        method="BCa",
        n_resamples=0,
        confidence_level=0.9,
        bootstrap_result=SimpleNamespace(bootstrap_distribution=reps[:, 0]),
    ).confidence_interval
    assert lo[0] == pytest.approx(ref.low, rel=1e-9)
    assert hi[0] == pytest.approx(ref.high, rel=1e-9)
    plo, phi = B.percentile_interval(reps, level=0.9)
    assert (lo[0], hi[0]) != pytest.approx((plo[0], phi[0]))  # skewed data: BCa shifts


def test_bca_degenerate_cases():
    reps = np.ones((50, 1))
    lo, hi = B.bca_interval(reps, np.array([1.0]), np.ones((3, 1)))
    assert (lo[0], hi[0]) == (1.0, 1.0)
    with pytest.warns(RuntimeWarning, match="bias cannot be estimated"):
        lo, hi = B.bca_interval(np.arange(10.0)[:, None], np.array([-1.0]), np.ones((3, 1)))
    assert np.isnan(lo[0]) and np.isnan(hi[0])


def test_percentile_interval_and_batches():
    lo, hi = B.percentile_interval(np.arange(101.0), level=0.9)
    assert (lo, hi) == pytest.approx((5.0, 95.0))
    assert list(B.batches(10, 4)) == [4, 4, 2]
    assert B.auto_batch_size(1000, 10**9, budget=10**6) == 1000
    assert B.auto_batch_size(10**9, 50) == 1
    with pytest.raises(ValueError):
        list(B.batches(0, 4))


def test_resample_groups_unchanged_contract():
    idx = B.resample_groups(np.random.default_rng(0), 5, 7)
    assert idx.shape == (7, 5) and idx.min() >= 0 and idx.max() < 5


def test_jackknife_in_batches_bounds_memory_and_keeps_the_result(monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(9, 4))
    x[7:, 1] = np.nan  # ragged
    stat = B.stack_statistics(
        [lambda a: np.nanmean(a, axis=(-2, -1)), lambda a: np.nanmedian(a, axis=(-2, -1))]
    )
    whole = B.jackknife_runs(x, stat, batch_size=9)
    for size in (1, 2, 4):
        np.testing.assert_array_equal(B.jackknife_runs(x, stat, batch_size=size), whole)
    seen = []

    def spy(a):
        seen.append(a.shape[0])
        return stat(a)

    monkeypatch.setattr(B, "BATCH_BYTES", 9 * 4 * 48 * 2)  # two leave-one-out tables per batch
    np.testing.assert_array_equal(B.jackknife_runs(x, spy), whole)
    assert max(seen) == 2 and sum(seen) == 9


def test_basic_matches_scipy_and_reflects_the_percentile_interval():
    data = np.random.default_rng(7).lognormal(size=25)
    x = data[:, None]
    stat = B.stack_statistics([mean])
    reps = B.stratified_replicates(x, stat, reps=4000, rng=np.random.default_rng(1))
    point = stat(x[None])[0]
    lo, hi = B.basic_interval(reps, point, level=0.9)
    ref = sps.bootstrap(
        (data,),
        np.mean,
        method="basic",
        n_resamples=0,
        confidence_level=0.9,
        bootstrap_result=SimpleNamespace(bootstrap_distribution=reps[:, 0]),
    ).confidence_interval
    assert lo[0] == pytest.approx(ref.low, rel=1e-9)
    assert hi[0] == pytest.approx(ref.high, rel=1e-9)
    plo, phi = B.percentile_interval(reps, level=0.9)
    # right-skewed replicates: the basic interval is the percentile one mirrored at the point
    assert hi[0] - point[0] == pytest.approx(point[0] - plo[0])
    assert lo[0] < plo[0] and hi[0] < phi[0]


def test_bc_is_the_bias_corrected_percentile_interval():
    rng = np.random.default_rng(3)
    reps = rng.normal(1.0, 1.0, size=(20_000, 1))
    point = np.array([0.8])  # 42% of replicates lie below it: z0 < 0, the interval shifts down
    lo, hi = B.bc_interval(reps, point, level=0.9)
    z0 = sps.norm.ppf(np.mean(reps[:, 0] < 0.8))
    q = sps.norm.cdf(2 * z0 + sps.norm.ppf([0.05, 0.95]))
    assert (lo[0], hi[0]) == pytest.approx(tuple(np.quantile(reps[:, 0], q)), rel=1e-12)
    plo, phi = B.percentile_interval(reps, level=0.9)
    assert lo[0] < plo[0] and hi[0] < phi[0]
    # unbiased point (the replicates' median): bc equals the percentile interval
    mid = np.array([float(np.median(reps[:, 0]))])
    mlo, mhi = B.bc_interval(reps, mid, level=0.9)
    assert (mlo[0], mhi[0]) == pytest.approx((plo[0], phi[0]), rel=1e-3)


def test_an_all_nan_column_has_no_interval_and_no_warning():
    import warnings

    reps = np.column_stack([np.arange(101.0), np.full(101, np.nan)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would print into a report
        lo, hi = B.percentile_interval(reps, level=0.9)
    assert lo[0] == pytest.approx(5.0) and np.isnan(lo[1]) and np.isnan(hi[1])
    # refits run to infinity: an end between two infinite replicates, silently
    inf = np.concatenate([np.arange(10.0), np.full(91, np.inf)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = B.percentile_interval(inf, level=0.9)
    assert lo == pytest.approx(5.0) and not np.isfinite(hi)
