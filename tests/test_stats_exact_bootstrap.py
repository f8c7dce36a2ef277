"""The exact bootstrap over a few groups: every distinct resample, with its probability."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.stats.exact_bootstrap import (
    exact_group_resamples,
    exact_percentile_interval,
    n_distinct_resamples,
)


def test_every_distinct_resample_appears_once_with_its_multinomial_probability():
    for n in (1, 2, 3, 4, 5):
        picks, w = exact_group_resamples(n)
        assert picks.shape == (n_distinct_resamples(n), n)
        assert len({tuple(p) for p in picks}) == len(picks)  # distinct multisets
        assert w.sum() == pytest.approx(1.0)
    picks, w = exact_group_resamples(3)
    by = {tuple(p): x for p, x in zip(picks, w, strict=True)}
    assert by[(0, 0, 0)] == pytest.approx(1 / 27) and by[(0, 1, 2)] == pytest.approx(6 / 27)
    assert by[(0, 0, 1)] == pytest.approx(3 / 27)
    # the frequencies of a large Monte Carlo bootstrap converge to these probabilities
    rng = np.random.default_rng(0)
    draws = np.sort(rng.integers(0, 3, size=(200_000, 3)), axis=1)
    freq = {tuple(p): np.mean((draws == p).all(1)) for p in picks}
    for p, x in by.items():
        assert freq[p] == pytest.approx(x, abs=0.004)


def test_exact_ends_are_the_limit_of_the_monte_carlo_ends_and_need_no_seed():
    x = np.array([0.2, 0.5, 1.4])
    picks, w = exact_group_resamples(3)
    lo, hi = exact_percentile_interval(x[picks].mean(1)[:, None], w, level=0.8)
    # the inverted-CDF ends from a huge Monte Carlo bootstrap are the same values
    mc = x[np.random.default_rng(1).integers(0, 3, size=(400_000, 3))].mean(1)
    assert np.quantile(mc, [0.1, 0.9], method="inverted_cdf") == pytest.approx(
        [lo[0], hi[0]], abs=1e-12
    )


def test_failed_refits_are_dropped_and_bad_shapes_refused():
    picks, w = exact_group_resamples(3)
    v = picks.sum(1).astype(float)[:, None]
    v[0, 0] = np.nan  # (0, 0, 0) failed: the others' weights are renormalised
    lo, hi = exact_percentile_interval(np.hstack([v, np.full_like(v, np.nan)]), w)
    assert np.isfinite(lo[0]) and np.isnan(lo[1]) and np.isnan(hi[1])
    assert lo[0] >= 1  # the failed all-zero resample is not among the ends
    with pytest.raises(ValueError, match="must be"):
        exact_percentile_interval(v[:5], w)
    with pytest.raises(ValueError, match="Monte Carlo"):
        exact_group_resamples(12)
