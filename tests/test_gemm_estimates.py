"""The GEMM study's findings as estimates: the analyses' numbers, with their method stated."""

from __future__ import annotations

import numpy as np

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
