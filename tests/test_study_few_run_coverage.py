import numpy as np
import pytest
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.studies.intervals.few_run_coverage import bootstrap_interval, coverage_table


def scores(runs=(60, 60, 4), tasks=6, seed=0):
    rng = np.random.default_rng(seed)
    x = np.full((len(runs), max(runs), tasks), np.nan)
    for i, r in enumerate(runs):
        x[i, :r] = rng.normal(loc=i, size=(r, tasks))
    return xr.DataArray(
        x,
        dims=("algorithm", "run", "task"),
        coords={"algorithm": ["a", "b", "short"], "task": [f"t{i}" for i in range(tasks)]},
    )


def test_bootstrap_coverage_is_counted_and_short_algorithms_are_skipped():
    table, skipped = coverage_table(
        scores(),
        run_counts=(3, 10),
        min_runs=50,
        subsamples=60,
        metrics=("mean",),
        interval=bootstrap_interval(reps=400, level=0.95, method="percentile"),
        rng=np.random.default_rng(1),
    )
    assert list(skipped) == ["short"] and "4 runs" in skipped["short"]
    row = table.loc[(10, "mean")]
    assert row["intervals"] == 120 and row["algorithms"] == 2
    # the mean of 10 x 6 normal runs: the percentile interval covers near its level
    assert 0.8 < row["coverage"] <= 1.0
    assert row["wilson_lo"] < row["coverage"] < row["wilson_hi"]


def test_an_interval_that_ignores_the_data_is_caught():
    def too_narrow(table, metrics, rng):
        point = np.array([np.nanmean(table)] * len(metrics))
        return point - 1e-9, point + 1e-9

    table, _ = coverage_table(
        scores(),
        run_counts=(5,),
        subsamples=30,
        metrics=("mean",),
        interval=too_narrow,
        rng=np.random.default_rng(0),
    )
    assert table.loc[(5, "mean"), "coverage"] == pytest.approx(0.0)
    with pytest.raises(InputError, match="no algorithm has 100 runs"):
        coverage_table(scores(), min_runs=100, interval=too_narrow, rng=np.random.default_rng(0))
