"""The GEMM study's findings as estimates: the analyses' numbers, with their method stated."""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalinglab.studies.gemm import analysis, machine
from scalinglab.studies.gemm import estimates as gest


def test_speed_ratio_estimate_is_the_analysis_with_its_method():
    rng = np.random.default_rng(0)
    a, b = rng.normal(2.0, 0.05, 9), rng.normal(4.0, 0.1, 9)
    point, ci = analysis.speed_ratio(a, b, reps=300, level=0.9, seed=1, between_sigma=0.02)
    est = gest.speed_ratio(a, b, reps=300, level=0.9, seed=1, between_sigma=0.02)
    assert (est.point, est.ci) == (point, ci)
    assert est.level == 0.9 and est.resamples == 300 and "ratio of medians" in est.method


def test_rerun_estimate_names_the_processes():
    per = np.array([0.88, 0.9, 0.93, 0.91])
    est = gest.rerun_estimate(0.9, per, level=0.95, what="FMA peaks")
    assert est.ci == machine.rerun_interval(0.9, per, level=0.95)
    assert est.method.endswith("4 separate processes' FMA peaks") and est.resamples is None


def test_median_over_shapes_estimate():
    v = np.linspace(0.1, 0.4, 12)
    est = gest.median_over_shapes(v, reps=200, level=0.95, seed=0)
    assert est.point == np.median(v) and est.lo <= est.point <= est.hi
    assert est.method == gest.MEDIAN_OVER_SHAPES
    # the report reads the coverage of a median's percentile bootstrap at the shapes counted
    assert gest.median_over_shapes(np.r_[v, np.nan], reps=200, level=0.95, seed=0).n == 12


def test_rerun_estimate_stays_inside_the_physical_range():
    per = np.array([0.3, 0.9, 1.6, 0.5])  # a spread from an overloaded machine
    est = gest.rerun_estimate(0.9, per, level=0.95, upper=1.0)
    assert est.hi == 1.0 and est.lo <= est.point and "physical bound" in est.note
    free = gest.rerun_estimate(0.9, per, level=0.95)
    assert free.hi > 1.0 and free.note is None


def test_shape_bootstraps_carry_the_shapes_they_resample_as_n():
    row = next(
        pd.DataFrame(
            {
                "r2_log": [0.9],
                "r2_lo": [0.8],
                "r2_hi": [0.95],
                "mape": [0.1],
                "mape_lo": [0.05],
                "mape_hi": [0.2],
                "n_shapes": [40],
            }
        ).itertuples()
    )
    assert {k: e.n for k, e in gest.accuracy(row, level=0.95, reps=100).items()} == {
        "r2_log": 40,
        "mape": 40,
    }
    gp = pd.DataFrame(
        {
            "point": [0.9, 0.9],
            "lo": [0.8, 0.7],
            "hi": [0.95, 0.97],
            "n_units": [120, None],
            "interval": ["percentile bootstrap over the test rows", "central 95% of 20 scores"],
        }
    )
    got = [gest.gpperf_accuracy(r, level=0.95, reps=100, n_repeats=20) for r in gp.itertuples()]
    assert [e.n for e in got] == [120, None] and [e.resamples for e in got] == [100, 20]
    summary = pd.Series({"point": 0.5, "lo": 0.3, "hi": 0.7, "n_shapes": 39})
    assert gest.gpperf_tile_summary(summary, level=0.95, reps=100).n == 39
    share = gest.gpperf_tile_summary(
        pd.Series({**summary, "interval": "Wilson score over 39 shapes"}), level=0.95, reps=100
    )
    assert share.method == "Wilson score over 39 shapes" and share.resamples is None
