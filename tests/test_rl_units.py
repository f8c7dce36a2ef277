"""The RL intervals' unit: the warm start (base model), or the run where there is none."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from scalinglab.studies.rl import halfruns, units


def _runs(values, warm):
    return pd.DataFrame(
        {
            "model_size": ["s"] * 4 + ["l"] * 4,
            "variant": "baseline",
            "seed": list(range(4)) * 2,
            "warm_start": warm,
            "x": values,
        }
    )


def test_a_pooled_statistic_has_one_unit_per_size_and_warm_start():
    df = _runs([0.1, 0.3, 0.5, np.nan, 1.0, 1.2, 2.0, 2.2], [0, 0, 1, 1] * 2)
    u = units.unit_values(df, "x")
    assert u.clustered and u.n == 4 and u.n_runs == 7  # the NaN run is dropped
    np.testing.assert_allclose(sorted(u.values), [0.2, 0.5, 1.1, 2.1])
    assert u.describe() == (
        "4 warm starts in 2 sizes (each the mean of its runs; 7 runs; sizes as strata, df 2)"
    )
    mean, lo, hi = units.t_over_units(u, level=0.95)
    # sizes are strata: the spread of the units within their own size, on 4 - 2 df
    dev = np.array([0.5, -0.5, 0.15, -0.15])  # l: 1.1, 2.1; s: 0.2, 0.5
    half = sps.t.ppf(0.975, 2) * np.sqrt(np.sum(dev**2) / 2 / 4)
    assert (mean, lo, hi) == pytest.approx((u.values.mean(), mean - half, mean + half))
    plain = units.unit_values(df.drop(columns="warm_start"), "x")
    assert not plain.clustered and plain.n == 7
    assert plain.describe() == "7 runs in 2 sizes (sizes as strata, df 5)"
    mixed = df.assign(warm_start=[0, 0, 1, 1, 0, 0, 1, np.nan])
    with pytest.raises(ValueError, match="1 run\\(s\\) without a warm_start"):
        units.unit_values(mixed, "x")
    one = units.unit_values(df[(df["model_size"] == "s") & (df["warm_start"] == 0)], "x")
    assert one.n == 1 and np.isnan(units.t_over_units(one, level=0.95)[1])


def test_final_error_by_size_reads_its_interval_over_warm_starts():
    rows = []
    for size in ("s", "l"):
        for w, err in ((0, -0.1), (1, 0.1)):
            for r in range(3):  # three RL seeds a warm start, nearly the same error
                rows.append(
                    {
                        "model_size": size,
                        "n_params": 1e4 if size == "s" else 1e5,
                        "variant": "baseline",
                        "seed": 3 * w + r,
                        "warm_start": w,
                        "final_error": err + 0.001 * r,
                        "unstable": False,
                    }
                )
    tab = halfruns.final_error_by_size(pd.DataFrame(rows), variant="baseline")
    assert tab.loc["s", "runs"] == 6 and tab.loc["s", "units"] == 2
    assert tab.loc["s", "unit_method"].startswith("Student t over 2 warm starts")
    # two base models 0.2 apart: the interval spans both, not the RL seeds' 0.002
    assert tab.loc["s", "final_error_lo"] < -0.1 and tab.loc["s", "final_error_hi"] > 0.1
