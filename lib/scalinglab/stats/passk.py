"""Coverage (pass@k) and majority-vote accuracy from repeated samples, with intervals.

Shared by the test-time scaling study and ``scalinglab coverage``.

Shapes: ``P`` problems, ``n`` samples per problem (problems may have different
``n_i``), ``K`` values of ``k``, ``R`` bootstrap replicates.

- :func:`pass_at_k`: the unbiased estimator of Chen et al. (2021),
  ``1 - C(n - c, k) / C(n, k)``, in the product form
  ``1 - prod_{i=n-c+1}^{n} (1 - k / i)`` summed as logs (``log1p``), so no binomial
  coefficient is ever formed (they overflow for n in the thousands).
- :func:`majority_accuracy`: the accuracy of the most frequent valid answer among
  ``k`` samples, averaged over ``reps`` random subsets per problem (nested prefixes of
  one seeded permutation per replicate) with ties broken by a seeded draw.
- :func:`bootstrap_prompts`: percentile intervals of per-problem means by resampling
  problems (the unit the study generalises over).
"""

from __future__ import annotations

import numpy as np

#: Answer code of a sample with no valid answer (no EOS, empty, or not a number).
INVALID = -1
#: Answer code of a missing sample (a problem with fewer than ``n`` samples).
MISSING = -2


def _check_nc(n: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if n.shape != c.shape:
        raise ValueError(f"n {n.shape} and c {c.shape} must have the same shape")
    if np.any(n < 1) or np.any(c < 0) or np.any(c > n):
        raise ValueError("need n >= 1 and 0 <= c <= n for every problem")
    return n, c


def pass_at_k(n: np.ndarray, c: np.ndarray, k: np.ndarray | int) -> np.ndarray:
    """Unbiased pass@k per problem and k.

    Parameters
    ----------
    n
        (P,) samples drawn per problem.
    c
        (P,) correct samples per problem.
    k
        (K,) or scalar; every ``k <= min(n)``.

    Returns
    -------
    numpy.ndarray
        (P, K) pass@k in [0, 1] (``(P,)`` for a scalar ``k``).
    """
    n, c = _check_nc(n, c)
    scalar = np.ndim(k) == 0
    ks = np.atleast_1d(np.asarray(k, dtype=np.int64))
    if np.any(ks < 1) or np.any(ks > n.min(initial=np.iinfo(np.int64).max)):
        raise ValueError(f"every k must be in [1, min(n) = {int(n.min())}], got {ks.tolist()}")
    n_max = int(n.max())
    i = np.arange(1, n_max + 1, dtype=float)
    out = np.empty((len(n), len(ks)))
    for j, kk in enumerate(ks):
        terms = np.zeros(n_max)
        above = i > kk
        terms[above] = np.log1p(-kk / i[above])
        cum = np.concatenate([[0.0], np.cumsum(terms)])  # cum[m] = sum_{i<=m} terms
        log_prod = cum[n] - cum[n - c]
        fail = np.exp(log_prod)
        out[:, j] = np.where(n - c < kk, 1.0, 1.0 - fail)
    return out[:, 0] if scalar else out


def coverage(n: np.ndarray, c: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Coverage(k): mean pass@k over problems, shape (K,)."""
    return pass_at_k(n, c, np.asarray(k)).mean(axis=0)


def k_grid(k_max: int, *, base: float = 2.0) -> np.ndarray:
    """Powers of ``base`` from 1 up to ``k_max`` (``k_max`` included), int64 (K,)."""
    if k_max < 1:
        raise ValueError(f"k_max must be >= 1, got {k_max}")
    ks = {1, int(k_max)}
    v = 1.0
    while v * base <= k_max:
        v *= base
        ks.add(int(round(v)))
    return np.array(sorted(ks), dtype=np.int64)


def majority_accuracy(
    answers: np.ndarray, truth_correct: np.ndarray, k: np.ndarray, *, reps: int = 32, seed: int = 0
) -> np.ndarray:
    """Majority-vote accuracy per problem at each k.

    Parameters
    ----------
    answers
        (P, n) integer answer codes; :data:`INVALID` samples cast no vote and
        :data:`MISSING` ones do not exist (each problem keeps its first ``n_i``).
    truth_correct
        (P, n) bool, whether each sample is correct (equal codes have equal
        correctness).
    k
        (K,) subset sizes, each ``<= n_i`` of every problem.
    reps
        Random subsets per problem and k (nested prefixes of ``reps`` permutations).
    seed
        Seeds the permutations and the tie-breaking draws.

    Returns
    -------
    numpy.ndarray
        (P, K) in [0, 1]: the share of the ``reps`` subsets whose vote is correct (a
        subset with no valid answer counts as wrong).
    """
    answers = np.asarray(answers)
    correct = np.asarray(truth_correct, dtype=bool)
    ks = np.asarray(k, dtype=np.int64)
    rng = np.random.default_rng(seed)
    out = np.zeros((answers.shape[0], len(ks)))
    for p in range(answers.shape[0]):
        row = answers[p]
        keep = row != MISSING
        row, ok = row[keep], correct[p][keep]
        if ks.max() > len(row):
            raise ValueError(f"problem {p}: k up to {int(ks.max())} but only {len(row)} samples")
        codes, cat = np.unique(row, return_inverse=True)
        valid_cat = codes != INVALID
        cat_correct = np.zeros(len(codes), dtype=bool)
        np.logical_or.at(cat_correct, cat, ok)
        if not valid_cat.any():
            continue
        perm = np.argsort(rng.random((reps, len(row))), axis=1)[:, : ks.max()]
        onehot = np.zeros((reps, perm.shape[1], len(codes)), dtype=np.int32)
        np.put_along_axis(onehot, cat[perm][..., None], 1, axis=2)
        counts = np.cumsum(onehot, axis=1)  # (reps, k_max, C)
        noise = rng.random((reps, len(ks), len(codes))) * 0.5  # seeded tie-break
        for j, kk in enumerate(ks):
            cnt = counts[:, kk - 1, :] * valid_cat
            score = np.where(valid_cat, cnt + noise[:, j, :], -1.0)
            win = score.argmax(axis=1)
            has_vote = cnt.sum(axis=1) > 0
            out[p, j] = np.mean(cat_correct[win] & has_vote)
    return out


def bootstrap_prompts(
    per_problem: np.ndarray, *, reps: int, seed: int, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over problems with a percentile interval from resampling problems.

    Parameters
    ----------
    per_problem
        (P, ...) per-problem values.

    Returns
    -------
    point, lo, hi
        Each of shape ``per_problem.shape[1:]``.
    """
    x = np.asarray(per_problem, dtype=float)
    idx = prompt_draws(x.shape[0], reps=reps, seed=seed)
    means = np.stack([x[i].mean(axis=0) for i in idx])
    a = (1.0 - level) / 2.0
    return x.mean(axis=0), np.quantile(means, a, axis=0), np.quantile(means, 1.0 - a, axis=0)


def prompt_draws(n_problems: int, *, reps: int, seed: int) -> np.ndarray:
    """(reps, P) indices of problems drawn with replacement (one replicate per row)."""
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    return np.random.default_rng(seed).integers(0, n_problems, size=(reps, n_problems))


def plateau_k(curve: np.ndarray, ks: np.ndarray, *, tol: float = 0.01) -> float:
    """The smallest k whose value is within ``tol`` of the curve's value at the largest k.

    ``curve`` (K,) over ``ks`` (K,): where majority voting stops improving (by ``tol``).
    """
    curve = np.asarray(curve, dtype=float)
    reached = curve >= curve[-1] - tol
    return float(np.asarray(ks)[np.argmax(reached)])
