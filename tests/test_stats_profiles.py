"""Performance profiles: strict thresholds, average kind, bands from the stratified bootstrap."""

import numpy as np
import pytest
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import compact_runs, stratified_indices
from scalinglab.stats.profiles import performance_profile, profile_replicates

NAN = np.nan


def one(values, name="A"):
    return xr.DataArray(
        np.asarray(values, dtype=float)[None],
        dims=("algorithm", "run", "task"),
        coords={"algorithm": [name]},
    )


def test_score_distribution_is_strict_at_a_score():
    s = one([[0.5, 1.0], [1.0, 2.0]])
    ds = performance_profile(
        s, np.array([0.0, 0.5, 1.0, 2.0]), reps=200, rng=np.random.default_rng(0)
    )
    # > 0: all 4; > 0.5: three; > 1.0: only 2.0; > 2.0: none
    np.testing.assert_allclose(ds.point.sel(algorithm="A").values, [1.0, 0.75, 0.25, 0.0])
    assert ds.point.dims == ("algorithm", "tau")
    assert ds.attrs["kind"] == "score"


def test_average_score_distribution_uses_task_means():
    s = one([[0.5, 1.0], [1.0, 2.0]])  # task means 0.75 and 1.5
    ds = performance_profile(
        s, np.array([0.7, 0.75, 1.5]), reps=200, kind="average", rng=np.random.default_rng(0)
    )
    np.testing.assert_allclose(ds.point.values[0], [1.0, 0.5, 0.0])


def test_absent_runs_are_not_counted():
    s = one([[0.2, 3.0], [0.4, NAN], [0.6, NAN]])
    ds = performance_profile(s, np.array([0.3]), reps=100, rng=np.random.default_rng(0))
    assert ds.point.item() == pytest.approx(3 / 4)  # 0.4, 0.6, 3.0 of the 4 present


@pytest.mark.parametrize("kind", ["score", "average"])
def test_replicates_equal_profile_of_explicit_resamples(kind):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(6, 4))
    x[4:, 1] = NAN
    taus = np.linspace(-1.5, 1.5, 7)
    fast = profile_replicates(
        x, taus, kind=kind, reps=300, rng=np.random.default_rng(5), batch_size=64
    )
    # the same draws, spelled out as resampled arrays
    tab, n = compact_runs(x)
    g = np.random.default_rng(5)
    rows = []
    for size in [64] * 4 + [44]:
        xs = np.take(tab.ravel(), stratified_indices(g, n, size=size))  # (b, R, M)
        if kind == "score":
            present = ~np.isnan(xs)
            above = (xs[..., None] > taus) & present[..., None]
            rows.append(above.sum(axis=(1, 2)) / present.sum(axis=(1, 2))[:, None])
        else:
            means = np.nanmean(xs, axis=1)
            rows.append((means[:, :, None] > taus).mean(axis=1))
    np.testing.assert_allclose(fast, np.concatenate(rows), rtol=1e-12)


def test_bands_bracket_the_profile_and_are_reproducible():
    rng = np.random.default_rng(0)
    s = xr.DataArray(
        rng.normal(size=(2, 10, 5)),
        dims=("algorithm", "run", "task"),
        coords={"algorithm": ["p", "q"]},
    )
    taus = np.linspace(-2, 2, 21)
    a = performance_profile(s, taus, reps=500, rng=np.random.default_rng(1))
    b = performance_profile(s, taus, reps=500, rng=np.random.default_rng(1))
    xr.testing.assert_identical(a, b)
    assert (a.lo <= a.point + 1e-12).all() and (a.point <= a.hi + 1e-12).all()
    assert (np.diff(a.point.values, axis=1) <= 0).all()
    assert ((a.hi - a.lo).sel(tau=0.0) > 0).all()


def test_bad_arguments():
    s = one([[1.0, 2.0]])
    with pytest.raises(InputError, match="unknown profile kind"):
        performance_profile(s, np.array([0.0]), rng=np.random.default_rng(0), kind="cdf")
    with pytest.raises(InputError, match="taus"):
        performance_profile(s, np.array([]), rng=np.random.default_rng(0))
