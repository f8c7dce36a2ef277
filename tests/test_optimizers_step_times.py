"""Side-by-side step timings: the paired ratio, its t interval and its draws."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy import stats as sps

from scalinglab.studies.optimizers import step_times


def _timing(log_ratios: list[float], base: float = 0.1) -> xr.Dataset:
    """One size, AdamW at ``base`` s/step in every round, Muon at ``base * exp(r)``."""
    n = len(log_ratios)
    t = np.array([[np.full(n, base), base * np.exp(log_ratios)]])
    return xr.Dataset(
        {"seconds_per_step": (("model_size", "optimizer", "round"), t)},
        coords={"model_size": ["w32"], "optimizer": ["adamw", "muon"], "round": np.arange(n)},
        attrs={"steps": 50},
    )


def test_the_ratio_is_the_paired_mean_log_ratio_with_a_t_interval():
    x = [0.18, 0.22, 0.20, 0.25, 0.15]
    tab = step_times.ratio_table(_timing(x), level=0.95)
    assert len(tab) == 1 and tab.optimizer[0] == "muon" and tab.rounds[0] == 5
    m, se = np.mean(x), np.std(x, ddof=1) / np.sqrt(5)
    half = sps.t.ppf(0.975, 4) * se
    assert tab.time_ratio[0] == pytest.approx(np.exp(m))
    assert (tab.ratio_lo[0], tab.ratio_hi[0]) == pytest.approx((np.exp(m - half), np.exp(m + half)))
    assert "5 rounds of 50 steps" in tab.method[0]
    # a load shared by both optimizers within a round cancels in the paired ratio
    busy = _timing(x)
    busy["seconds_per_step"] = busy.seconds_per_step * xr.DataArray(
        [1.0, 3.0, 1.0, 2.0, 1.5], dims="round"
    )
    again = step_times.ratio_table(busy)
    assert again.time_ratio[0] == pytest.approx(tab.time_ratio[0])
    assert again.ratio_hi[0] == pytest.approx(tab.ratio_hi[0])


def test_the_draws_follow_the_t_interval():
    timing = _timing([0.18, 0.22, 0.20, 0.25, 0.15])
    tab = step_times.ratio_table(timing, level=0.9)
    d = step_times.ratio_draws(timing, "muon", "w32", n=200_000, rng=np.random.default_rng(0))
    lo, hi = np.quantile(d, [0.05, 0.95])
    assert lo == pytest.approx(tab.ratio_lo[0], rel=5e-3)
    assert hi == pytest.approx(tab.ratio_hi[0], rel=5e-3)


def test_a_timing_needs_two_rounds():
    from scalinglab.studies.optimizers.config import sweep_config

    with pytest.raises(ValueError, match="at least 2 rounds"):
        step_times.measure(sweep_config("tiny"), rounds=1, progress=False)


def test_a_timing_without_the_baseline_names_the_file_and_what_it_has(tmp_path):
    from scalinglab.errors import InputError

    path = tmp_path / "step-times.nc"
    _timing([0.1, 0.2, 0.3]).sel(optimizer=["muon"]).to_netcdf(path, engine="h5netcdf")
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        timing = ds.load()
    with pytest.raises(InputError, match=r"step-times\.nc: coordinate 'optimizer' has no 'adamw'"):
        step_times.ratio_table(timing)
    with pytest.raises(InputError, match=r"coordinate 'model_size' has no 'w64' \(has \['w32'\]\)"):
        step_times.ratio_draws(
            _timing([0.1, 0.2]), "muon", "w64", n=3, rng=np.random.default_rng(0)
        )
