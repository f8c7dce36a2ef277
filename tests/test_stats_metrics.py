"""Aggregate metric definitions on hand-computed cases (x[n, m]: run n, task m)."""

import numpy as np
import pytest
from scipy import stats as sps

from scalinglab.errors import InputError
from scalinglab.stats import metrics as M

NAN = np.nan


def test_hand_computed_rectangular():
    x = np.array([[1.0, 2.0], [3.0, 10.0]])  # task means 2 and 6
    assert M.mean(x) == pytest.approx(4.0)
    assert M.median(x) == pytest.approx(4.0)  # even number of tasks: average of 2 and 6
    assert M.iqm(x) == pytest.approx(2.5)  # pooled [1,2,3,10], drop 1 each end -> (2+3)/2
    y = np.array([[0.2, 0.5], [0.8, 3.0]])  # min(y, 1) = [.2, .5, .8, 1] -> mean .625
    assert M.optimality_gap(y) == pytest.approx(0.375)
    assert M.optimality_gap(y, gamma=0.5) == pytest.approx(0.5 - (0.2 + 0.5 + 0.5 + 0.5) / 4)


def test_median_odd_number_of_tasks():
    x = np.array([[1.0, 5.0, 9.0], [3.0, 7.0, 100.0]])  # task means 2, 6, 54.5
    assert M.median(x) == pytest.approx(6.0)
    assert M.mean(x) == pytest.approx((2 + 6 + 54.5) / 3)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # P = 6: floor(1.5) = 1 dropped each end of [1,2,4,5,6,100] -> (2+4+5+6)/4
        ([[5.0, 1.0], [4.0, 2.0], [6.0, 100.0]], 17 / 4),
        # P = 7 (7 runs, 1 task): drop 1 each end of 1..7 -> mean(2..6) = 4
        ([[7.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0]], 4.0),
        # P = 9: drop 2 each end of 1..8,50 -> mean(3..7) = 5
        ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 50.0]], 5.0),
        # P = 3: floor(0.75) = 0, nothing dropped
        ([[1.0, 2.0, 9.0]], 4.0),
    ],
)
def test_iqm_trimming_not_divisible_by_four(values, expected):
    x = np.array(values)
    assert M.iqm(x) == pytest.approx(expected)
    assert M.iqm(x) == pytest.approx(sps.trim_mean(x, 0.25, axis=None))


def test_iqm_matches_scipy_trim_mean_on_random_shapes():
    rng = np.random.default_rng(3)
    for shape in [(3, 5), (10, 10), (7, 3), (1, 13), (4, 1)]:
        x = rng.standard_t(3, size=shape)
        assert M.iqm(x) == pytest.approx(sps.trim_mean(x, 0.25, axis=None), rel=1e-12)


def test_ragged_runs_are_absent_not_zero():
    x = np.array([[1.0, 4.0], [3.0, NAN], [8.0, NAN]])  # task means 4 and 4
    assert M.mean(x) == pytest.approx(4.0)
    assert M.median(x) == pytest.approx(4.0)
    assert M.iqm(x) == pytest.approx(3.5)  # pooled [1,3,4,8] -> (3+4)/2
    assert M.optimality_gap(x, gamma=5.0) == pytest.approx(5.0 - (1 + 3 + 4 + 5) / 4)
    np.testing.assert_allclose(M.per_task_means(x), [4.0, 4.0])


def test_task_without_runs_gives_nan_not_a_silent_skip():
    x = np.array([[1.0, NAN], [3.0, NAN]])
    assert np.isnan(M.mean(x))
    assert np.isnan(M.median(x))


def test_batched_leading_dims_equal_one_by_one():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 5, 4))
    x[0, 1, 3:, 2] = NAN  # one ragged set in the batch
    for name, f in M.AGGREGATES.items():
        batched = f(x)
        assert batched.shape == (2, 3), name
        for i in range(2):
            for j in range(3):
                assert batched[i, j] == pytest.approx(f(x[i, j]), rel=1e-12), name


def test_aggregates_keys_and_direction():
    assert list(M.AGGREGATES) == ["iqm", "median", "mean", "optimality_gap"]
    assert M.LOWER_IS_BETTER == {"optimality_gap"}


def test_scores_must_be_two_dimensional():
    with pytest.raises(ValueError, match=r"\(\.\.\., runs, tasks\)"):
        M.iqm(np.ones(4))


def test_resolve_metrics():
    assert M.resolve_metrics("iqm, mean") == ("iqm", "mean")
    with pytest.raises(InputError, match="unknown metric 'IQM'"):
        M.resolve_metrics("IQM")
    with pytest.raises(InputError, match="twice"):
        M.resolve_metrics(["iqm", "iqm"])
    with pytest.raises(InputError, match="no metric"):
        M.resolve_metrics("")
