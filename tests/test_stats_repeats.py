"""Intervals over separate sessions: coverage of re-run variance, paired ratios, re-selection."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.stats.bootstrap import percentile_interval
from scalinglab.stats.repeats import (
    ratio_interval,
    rerun_stability,
    reselect_interval,
    session_interval,
)


def _timings(rng, sessions=8, repeats=20, mu=10.0, between=0.5, within=0.05):
    offsets = between * rng.standard_normal((sessions, 1))
    return mu + offsets + within * rng.standard_normal((sessions, repeats))


@pytest.mark.slow
def test_two_level_interval_covers_the_session_variance_a_pooled_one_misses():
    rng = np.random.default_rng(0)
    covered, naive_covered = 0, 0
    for i in range(60):
        v = _timings(rng)
        _, lo, hi = session_interval(v, reps=400, seed=i)
        covered += lo <= 10.0 <= hi
        flat = v.ravel()  # pooled repeats, sessions ignored: the too-narrow interval
        boot = np.median(flat[rng.integers(0, flat.size, (400, flat.size))], axis=1)
        nlo, nhi = percentile_interval(boot)
        naive_covered += nlo <= 10.0 <= nhi
    assert covered / 60 >= 0.8
    assert naive_covered / 60 <= 0.5 and covered - naive_covered >= 20


def test_same_seed_same_interval_and_shapes_are_checked():
    v = _timings(np.random.default_rng(1))
    assert session_interval(v, seed=3) == session_interval(v, seed=3)
    with pytest.raises(ValueError, match="at least 2 sessions"):
        session_interval(v[:1])
    bad = v.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match="no finite measurement"):
        session_interval(bad)


def test_paired_ratio_interval_is_tight_when_sessions_move_both():
    rng = np.random.default_rng(2)
    load = 1 + 0.3 * rng.random((6, 1))  # a busy session slows both optimizers alike
    a = 2.0 * load * (1 + 0.01 * rng.standard_normal((6, 15)))
    b = 1.0 * load * (1 + 0.01 * rng.standard_normal((6, 15)))
    p, lo, hi = ratio_interval(a, b, seed=0)
    assert lo <= p <= hi and lo <= 2.0 <= hi and hi - lo < 0.1
    with pytest.raises(ValueError, match="same sessions"):
        ratio_interval(a, b[:4])


def test_reselected_worst_over_best_can_never_fall_below_one():
    rng = np.random.default_rng(3)
    cells = 1.0 + 0.05 * rng.standard_normal((30, 5))  # 30 equally fast tiles, noisy
    ratio = lambda t: t.max(-1) / t.min(-1)  # noqa: E731
    p, lo, hi = reselect_interval(cells, ratio, seed=0, floor=1.0)
    assert 1.0 <= lo <= p <= hi
    # uncorrected, the re-selected replicates sit above the point (selection bias)
    C, R = cells.shape
    idx = np.random.default_rng(0).integers(0, R, size=(2000, C, R))
    raw = ratio(np.median(cells[np.arange(C)[None, :, None], idx], axis=-1))
    assert np.quantile(raw, 0.025) > p
    cells[0] += 1.0  # one truly slow tile: the ratio is about 2 and its interval says so
    p2, lo2, hi2 = reselect_interval(cells, ratio, seed=0, floor=1.0)
    assert 1.8 < lo2 <= p2 <= hi2 < 2.3


def test_rerun_stability_counts_moves_within_the_interval():
    assert rerun_stability([1.0, 1.05, 1.5], [[0.9, 1.1], [0.95, 1.15], [1.4, 1.6]]) == 0.5
    with pytest.raises(ValueError, match="at least 2 runs"):
        rerun_stability([1.0], [[0.9, 1.1]])
