"""Coverage estimator, majority voting and the prompt bootstrap of the test-time study."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from scalinglab.stats import passk as cv


def brute_pass_at_k(outcomes: list[bool], k: int) -> float:
    """Share of all k-subsets of the samples that contain a correct one (enumerated)."""
    subsets = list(itertools.combinations(range(len(outcomes)), k))
    return sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_pass_at_k_matches_enumeration(n):
    for c in range(n + 1):
        outcomes = [True] * c + [False] * (n - c)
        ks = np.arange(1, n + 1)
        got = cv.pass_at_k(np.array([n]), np.array([c]), ks)[0]
        want = [brute_pass_at_k(outcomes, int(k)) for k in ks]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_pass_at_k_unequal_n_per_problem():
    n, c = np.array([6, 8, 7]), np.array([1, 3, 0])
    got = cv.pass_at_k(n, c, np.array([2, 5]))
    for p in range(3):
        outcomes = [True] * c[p] + [False] * (n[p] - c[p])
        assert got[p, 0] == pytest.approx(brute_pass_at_k(outcomes, 2), abs=1e-12)
        assert got[p, 1] == pytest.approx(brute_pass_at_k(outcomes, 5), abs=1e-12)


def test_pass_at_k_stable_for_large_n():
    # C(10000, 500) overflows floats; the product form stays finite and monotone in k
    n, c = np.array([10000]), np.array([3])
    ks = np.array([1, 10, 100, 1000, 5000])
    p = cv.pass_at_k(n, c, ks)[0]
    assert np.all(np.isfinite(p)) and np.all(np.diff(p) > 0)
    assert p[0] == pytest.approx(3 / 10000, rel=1e-9)
    # exact closed form for c = 3: 1 - prod_{j=0}^{2} (n - k - j) / (n - j)
    k = 1000
    assert p[3] == pytest.approx(
        1 - np.prod([(10000 - k - j) / (10000 - j) for j in range(3)]), rel=1e-10
    )


def test_pass_at_k_rejects_bad_input():
    with pytest.raises(ValueError, match="k must be"):
        cv.pass_at_k(np.array([4]), np.array([1]), np.array([5]))
    with pytest.raises(ValueError, match="0 <= c <= n"):
        cv.pass_at_k(np.array([4]), np.array([5]), 1)


def test_k_grid():
    assert cv.k_grid(256).tolist() == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert cv.k_grid(24).tolist() == [1, 2, 4, 8, 16, 24]


def test_majority_vote_hand_cases():
    # problem 0: the right answer (7) wins every subset of 5 (4 of 5 votes)
    # problem 1: a wrong answer (3) holds 4 of 5; the right one (9) never wins at k = 5
    # problem 2: only invalid answers: no vote, counted wrong
    answers = np.array([[7, 7, 7, 7, 2], [3, 3, 3, 3, 9], [cv.INVALID] * 5])
    correct = answers == np.array([[7], [9], [0]])
    acc = cv.majority_accuracy(answers, correct, np.array([1, 5]), reps=64, seed=0)
    assert acc[0, 1] == 1.0 and acc[1, 1] == 0.0 and acc[2].tolist() == [0.0, 0.0]
    # k = 1 is a single random sample: about 4/5 and 1/5 right
    assert 0.6 < acc[0, 0] < 0.95 and 0.05 < acc[1, 0] < 0.4


def test_majority_vote_ties_broken_by_seeded_draw():
    answers = np.array([[1, 2]])  # k = 2: always a 1-1 tie
    correct = answers == 1
    a = cv.majority_accuracy(answers, correct, np.array([2]), reps=400, seed=3)
    b = cv.majority_accuracy(answers, correct, np.array([2]), reps=400, seed=3)
    assert a[0, 0] == b[0, 0]  # same seed, same result
    assert 0.4 < a[0, 0] < 0.6  # a fair coin


def test_majority_vote_ignores_missing_samples():
    answers = np.array([[5, 5, 1, cv.MISSING, cv.MISSING]])
    acc = cv.majority_accuracy(answers, answers == 5, np.array([3]), reps=8, seed=0)
    assert acc[0, 0] == 1.0
    with pytest.raises(ValueError, match="only 3 samples"):
        cv.majority_accuracy(answers, answers == 5, np.array([4]), reps=8, seed=0)


def test_bootstrap_prompts_interval_contains_mean_and_narrows():
    rng = np.random.default_rng(0)
    x = rng.random((400, 2))
    pt, lo, hi = cv.bootstrap_prompts(x, reps=500, seed=1)
    assert np.all(lo < pt) and np.all(pt < hi)
    _, lo2, hi2 = cv.bootstrap_prompts(x[:40], reps=500, seed=1)
    assert np.all(hi2 - lo2 > hi - lo)


def test_plateau_k():
    ks = np.array([1, 2, 4, 8, 16])
    assert cv.plateau_k(np.array([0.1, 0.3, 0.5, 0.505, 0.51]), ks, tol=0.01) == 4
    assert cv.plateau_k(np.array([0.1, 0.2, 0.3, 0.4, 0.5]), ks, tol=0.01) == 16
