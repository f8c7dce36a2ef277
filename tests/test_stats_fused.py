"""The fused bootstrap pass gives the generic path's replicates bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from scalinglab.stats.bootstrap import stack_statistics, stratified_replicates
from scalinglab.stats.fused import fused_replicates
from scalinglab.stats.intervals import interval_estimates
from scalinglab.stats.metrics import AGGREGATES
from scalinglab.stats.pairwise import pairwise_plan
from scalinglab.stats.table_intervals import metric_functions

ALL = ("iqm", "median", "mean", "optimality_gap")


def _generic(x, names, *, reps, seed, task_bootstrap=False, gamma=1.0, batch_size=None):
    statistic = stack_statistics(metric_functions(names, gamma))
    return stratified_replicates(
        x,
        statistic,
        reps=reps,
        rng=np.random.default_rng(seed),
        task_bootstrap=task_bootstrap,
        batch_size=batch_size,
    )


@pytest.mark.parametrize("case", range(24))
def test_fused_equals_generic_bit_for_bit(case):
    g = np.random.default_rng(100 + case)
    runs, tasks = int(g.integers(1, 30)), int(g.integers(1, 25))
    x = g.lognormal(size=(runs, tasks)) - 0.5
    if case % 3 == 0:
        x = np.round(x, 1)  # many ties across cells
    task_bootstrap = case % 2 == 1
    gamma = 1.0 if case % 4 else 0.4
    names = ALL if case % 5 else ("optimality_gap", "iqm")
    want = _generic(x, names, reps=257, seed=case, task_bootstrap=task_bootstrap, gamma=gamma)
    got = fused_replicates(
        x,
        names,
        reps=257,
        rng=np.random.default_rng(case),
        task_bootstrap=task_bootstrap,
        gamma=gamma,
        batch_size=int(g.integers(1, 300)),
    )
    assert got.shape == (257, len(names))
    np.testing.assert_array_equal(got, want)


def test_pooled_sum_follows_numpy_pairwise_order():
    # Lengths around numpy's block (128) and its splits: the optimality gap of a
    # one-run resample is gamma - sum/P in numpy's own summation order.
    g = np.random.default_rng(7)
    for pooled in (1, 7, 8, 9, 127, 128, 129, 255, 256, 257, 1000, 2600, 4099):
        x = g.normal(scale=1e3, size=(1, pooled)) ** 3
        want = _generic(x, ("optimality_gap",), reps=5, seed=pooled, gamma=1e12)
        got = fused_replicates(
            x, ("optimality_gap",), reps=5, rng=np.random.default_rng(pooled), gamma=1e12
        )
        np.testing.assert_array_equal(got, want)
    plan = pairwise_plan(2600)
    leaves = plan[plan[:, 0] == 1]
    assert leaves[:, 2].sum() == 2600 and (leaves[:, 2] <= 128).all()
    assert (plan[:, 0] == 0).sum() == len(leaves) - 1


@pytest.mark.slow
def test_batch_size_never_changes_the_replicates():
    x = np.random.default_rng(1).normal(size=(12, 9))
    ref = fused_replicates(x, ALL, reps=300, rng=np.random.default_rng(3))
    for batch in (1, 7, 299, 300):
        got = fused_replicates(x, ALL, reps=300, rng=np.random.default_rng(3), batch_size=batch)
        np.testing.assert_array_equal(got, ref)


def test_rejects_absent_runs_and_unknown_metrics():
    x = np.ones((3, 2))
    x[1, 0] = np.nan
    with pytest.raises(ValueError, match="absent"):
        fused_replicates(x, ALL, reps=3, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="not fused"):
        fused_replicates(np.ones((3, 2)), ("iqm", "auc"), reps=3, rng=np.random.default_rng(0))


def test_interval_estimates_same_with_padding_rows_and_ragged_fallback():
    # An algorithm with fewer runs (absent rows) takes the fused pass on its
    # compacted table, a ragged one the generic path; both must match a
    # direct generic computation of the same streams.
    g = np.random.default_rng(5)
    values = g.normal(size=(2, 10, 6))
    values[1, 6:, :] = np.nan  # algorithm b: 6 runs on every task
    values[0, 8:, 2] = np.nan  # algorithm a: ragged
    scores = xr.DataArray(
        values, dims=("algorithm", "run", "task"), coords={"algorithm": ["a", "b"]}
    )
    ds = interval_estimates(scores, reps=400, rng=np.random.default_rng(9))
    again = interval_estimates(scores, reps=400, rng=np.random.default_rng(9), batch_size=37)
    xr.testing.assert_identical(ds, again)
    b = fused_replicates(values[1, :6], ALL, reps=400, rng=np.random.default_rng(0))
    statistic = stack_statistics([AGGREGATES[m] for m in ALL])
    generic_b = stratified_replicates(values[1], statistic, reps=400, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(b, generic_b)


def test_thread_count_never_changes_the_intervals():
    # Each algorithm draws from its own keyed stream and writes its own row;
    # the pool runs the largest tables first, whatever the count of threads.
    g = np.random.default_rng(8)
    values = g.normal(size=(5, 12, 7))
    values[1, 9:, :] = np.nan  # fewer runs: the fused pass on 9 rows
    values[3, 10:, 4] = np.nan  # ragged: the generic path
    scores = xr.DataArray(
        values, dims=("algorithm", "run", "task"), coords={"algorithm": list("abcde")}
    )
    one = interval_estimates(scores, reps=300, rng=np.random.default_rng(2), workers=1)
    for workers in (2, 3, 5):
        many = interval_estimates(scores, reps=300, rng=np.random.default_rng(2), workers=workers)
        xr.testing.assert_identical(one, many)


def test_other_bit_generators_draw_through_numpy_with_the_same_replicates():
    x = np.random.default_rng(4).normal(size=(9, 5))
    for bits in (np.random.Philox, np.random.MT19937):
        want = stratified_replicates(
            x,
            stack_statistics([AGGREGATES[m] for m in ALL]),
            reps=120,
            rng=np.random.Generator(bits(6)),
        )
        got = fused_replicates(x, ALL, reps=120, rng=np.random.Generator(bits(6)), batch_size=50)
        np.testing.assert_array_equal(got, want)
