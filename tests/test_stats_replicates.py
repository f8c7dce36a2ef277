"""Bootstrap replicates as ArviZ data: same draws as interval_estimates, HDI cross-check."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.intervals import interval_estimates
from scalinglab.stats.replicates import interval_crosscheck, metric_replicates, to_inference_data


def _scores(seed: int = 0) -> xr.DataArray:
    g = np.random.default_rng(seed)
    values = g.lognormal(size=(3, 8, 5)) - 0.5
    values[2, 5:, 1] = np.nan  # a ragged algorithm takes the generic path
    return xr.DataArray(
        values, dims=("algorithm", "run", "task"), coords={"algorithm": ["a", "b", "c"]}
    )


def _shortest(draws: np.ndarray, level: float) -> tuple[float, float]:
    """The HDI by its definition, written out: the narrowest window of sorted draws
    spanning floor(level * n) + 1 of them."""
    s = np.sort(draws)
    k = int(np.floor(level * s.size))
    widths = s[k:] - s[: s.size - k]
    i = int(np.argmin(widths))
    return float(s[i]), float(s[i + k])


@pytest.mark.slow
def test_replicates_are_those_behind_the_reported_intervals():
    scores = _scores()
    ci = interval_estimates(scores, reps=600, rng=np.random.default_rng(4), level=0.9)
    reps = metric_replicates(scores, reps=600, rng=np.random.default_rng(4), workers=1)
    assert reps.dims == ("algorithm", "replicate", "metric")
    assert reps.shape == (3, 600, 4)
    check = interval_crosscheck(reps, level=0.9)
    np.testing.assert_array_equal(check["percentile_lo"].values, ci["lo"].values)
    np.testing.assert_array_equal(check["percentile_hi"].values, ci["hi"].values)
    # threads never change the replicates
    again = metric_replicates(scores, reps=600, rng=np.random.default_rng(4), workers=3)
    xr.testing.assert_identical(reps, again)


def test_hdi_is_the_shortest_interval_and_flags_skew():
    g = np.random.default_rng(1)
    n = 4000
    draws = np.stack(
        [g.normal(size=n), g.lognormal(sigma=1.0, size=n)], axis=0
    )  # symmetric, skewed
    reps = xr.DataArray(
        np.stack([draws, draws * 2], axis=-1),
        dims=("algorithm", "replicate", "metric"),
        coords={"algorithm": ["sym", "skew"], "metric": ["iqm", "mean"]},
    )
    check = interval_crosscheck(reps, level=0.9)
    for a in range(2):
        for m in range(2):
            lo, hi = _shortest(reps.values[a, :, m], 0.9)
            assert check["hdi_lo"].values[a, m] == pytest.approx(lo, rel=1e-12)
            assert check["hdi_hi"].values[a, m] == pytest.approx(hi, rel=1e-12)
    ratio = check["width_ratio"].sel(metric="iqm")
    assert (check["width_ratio"].values <= 1 + 1e-9).all()
    assert float(ratio.sel(algorithm="sym")) > 0.97  # symmetric: HDI ~ percentile interval
    assert float(ratio.sel(algorithm="skew")) < 0.9  # skewed: HDI clearly shorter
    # on the skewed draws the HDI sits lower than the percentile interval
    skew = check.sel(algorithm="skew", metric="iqm")
    assert float(skew["hdi_lo"]) < float(skew["percentile_lo"])


def test_inference_data_layout_and_errors():
    reps = metric_replicates(_scores(), metrics="iqm,mean", reps=50, rng=np.random.default_rng(0))
    idata = to_inference_data(reps)
    post = idata.posterior
    assert set(post.data_vars) == {"iqm", "mean"}
    assert dict(post["iqm"].sizes) == {"chain": 1, "draw": 50, "algorithm": 3}
    np.testing.assert_array_equal(
        post["mean"].values[0], reps.sel(metric="mean").transpose("replicate", "algorithm")
    )
    with pytest.raises(InputError, match="reps"):
        metric_replicates(_scores(), reps=0, rng=np.random.default_rng(0))
    with pytest.raises(InputError, match="level"):
        interval_crosscheck(reps, level=1.0)
