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


def test_the_t_interval_of_a_mean_of_group_means_is_welch_satterthwaite_and_covers():
    import scipy.stats as sps

    from scalinglab.stats.group_means import mean_of_group_means_t

    a, b = np.array([1.0, 2.0, 4.0]), np.array([0.0, 0.5, 0.7, 1.3, 2.0])
    est, df = mean_of_group_means_t([a, b, np.array([9.0])], level=0.9)  # 1 repeat: left out
    va, vb = a.var(ddof=1) / 3, b.var(ddof=1) / 5
    want_df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 4)
    half = sps.t.ppf(0.95, want_df) * np.sqrt(va + vb) / 2
    assert df == pytest.approx(want_df) and est.n == 3
    assert est.point == pytest.approx((a.mean() + b.mean()) / 2)
    assert est.ci == pytest.approx((est.point - half, est.point + half))
    # 2 groups x 4 normal repeats: it covers about 95% where a percentile bootstrap would not
    rng = np.random.default_rng(3)
    hits = [
        (lambda e: e.ci[0] <= 0.0 <= e.ci[1])(
            mean_of_group_means_t([rng.normal(size=4), rng.normal(size=4)], level=0.95)[0]
        )
        for _ in range(2000)
    ]
    assert 0.93 <= np.mean(hits) <= 0.97  # MC standard error about 0.005
    with pytest.raises(ValueError, match="at least 2 repeats"):
        mean_of_group_means_t([np.array([1.0])], level=0.95)
