"""The studies' repeated small bootstraps, written once (scalinglab.stats.group_means)."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.stats.bootstrap import percentile_interval, resample_groups
from scalinglab.stats.group_means import group_mean_draws, mean_of_group_means, ratio_of_medians


def _groups():
    rng = np.random.default_rng(3)
    return [rng.normal(m, 1.0, n) for m, n in ((0.0, 3), (1.0, 5), (4.0, 4))]


def test_mean_of_group_means_weighs_groups_equally_and_matches_the_inline_bootstrap():
    g = _groups()
    est, draws = mean_of_group_means(g, rng=np.random.default_rng(0), reps=500, level=0.9)
    assert est.point == pytest.approx(np.mean([x.mean() for x in g]))
    assert est.point != pytest.approx(np.concatenate(g).mean())  # not the pooled mean
    rng = np.random.default_rng(0)  # the six studies' inline form, bit for bit
    inline = np.mean([x[resample_groups(rng, x.size, 500)].mean(axis=1) for x in g], axis=0)
    np.testing.assert_array_equal(draws, inline)
    assert est.ci == tuple(float(v) for v in percentile_interval(inline, level=0.9))
    assert est.level == 0.9 and est.resamples == 500 and "within each group" in est.method


def test_group_mean_draws_shape_and_stream():
    g = _groups()
    d = group_mean_draws(g, rng=np.random.default_rng(1), reps=200)
    assert d.shape == (200, 3)
    assert np.allclose(d.mean(0), [x.mean() for x in g], atol=0.5)
    with pytest.raises(ValueError, match="non-empty"):
        group_mean_draws([np.array([])], rng=np.random.default_rng(0), reps=2)


def test_ratio_of_medians_resamples_each_side_and_ignores_nan():
    a = np.array([2.0, 2.1, 1.9, np.nan, 2.05])
    b = np.array([1.0, 1.02, 0.98, 1.01])
    est, draws = ratio_of_medians(a, b, rng=np.random.default_rng(0), reps=400, level=0.95)
    assert est.point == pytest.approx(np.median(a[~np.isnan(a)]) / np.median(b))
    assert est.lo <= est.point <= est.hi and draws.shape == (400,)
    point_only, _ = ratio_of_medians(a, b, rng=np.random.default_rng(0), reps=10)
    assert point_only.ci is None
    with pytest.raises(ValueError, match="finite repeat"):
        ratio_of_medians([np.nan], b, rng=np.random.default_rng(0), reps=10)
