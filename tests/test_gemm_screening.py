"""The disturbed-cell rule applied everywhere the GEMM report reads timings (issue 28
referee items): the BLAS and textbook references are screened like the tiled cells, and a
median over a few shapes gets an interval that covers at that count."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab import record as rec
from scalinglab.studies.gemm import estimates as gest
from scalinglab.studies.gemm import findings as gemm_findings
from scalinglab.studies.gemm import timings as gtimes


@pytest.fixture(autouse=True)
def _clean():
    rec.clear()
    yield
    rec.clear()


def _ds(*, blas_disturbed: str | None = None, tile_disturbed: tuple[str, str] | None = None):
    """Three shapes x two tiles x 5 repeats; references BLAS and the textbook loop."""
    rng = np.random.default_rng(0)
    shapes = [(64, 64, 64), (128, 128, 128), (256, 256, 256)]
    names = ["x".join(map(str, s)) for s in shapes]
    tiles = ["24x32x64", "96x32x256"]
    base = np.array([2.0 * m * n * k / 1e11 for m, n, k in shapes])
    tiled = base[:, None, None] * np.array([1.0, 1.5])[None, :, None]
    tiled = tiled * np.exp(rng.normal(0, 0.02, (3, 2, 5)))
    ref = np.stack([base[:, None] * 0.8, base[:, None] * 50.0]) * np.exp(
        rng.normal(0, 0.02, (2, 3, 5))
    )
    if blas_disturbed:
        ref[0, names.index(blas_disturbed), :2] *= 5.0
    if tile_disturbed:
        s, t = tile_disturbed
        tiled[names.index(s), tiles.index(t), :2] *= 0.2  # disturbed fast: would win
    return xr.Dataset(
        {
            "tiled_seconds": (("shape", "tile", "repeat"), tiled),
            "ref_seconds": (("impl", "shape", "repeat"), ref),
        },
        coords={
            "shape": names,
            "tile": tiles,
            "impl": ["blas", "numba_naive"],
            "repeat": np.arange(5),
            "M": ("shape", [s[0] for s in shapes]),
            "N": ("shape", [s[1] for s in shapes]),
            "K": ("shape", [s[2] for s in shapes]),
        },
    )


def test_disturbed_reference_cells_are_screened_like_tiled_cells():
    assert gtimes.unstable_references(_ds()).empty
    ds = _ds(blas_disturbed="256x256x256")
    bad = gtimes.unstable_references(ds)
    assert bad[["impl", "shape"]].values.tolist() == [["blas", "256x256x256"]]
    assert bad["spread"].iloc[0] > 2.0
    ref = gtimes.reference_table(ds, hw_peak_flop_per_s=1e11).set_index("shape")
    assert np.isnan(ref.loc["256x256x256", "blas_gflops"])
    assert np.isfinite(ref.loc["128x128x128", "blas_gflops"])
    pts = gtimes.roofline_points(ds)
    assert not ((pts["impl"] == "blas") & (pts["shape"] == "256x256x256")).any()
    # a looser rule keeps it
    assert np.isfinite(
        gtimes.reference_table(ds, hw_peak_flop_per_s=1e11, max_spread=10.0)
        .set_index("shape")
        .loc["256x256x256", "blas_gflops"]
    )


def test_the_fraction_of_blas_reads_only_undisturbed_cells():
    gemm_findings.record_reference(
        _ds(blas_disturbed="256x256x256"), between_sigma=0.0, level=0.95, reps=200, seed=0
    )
    got = {f.name: f for f in rec.findings()}
    assert got["reference/unstable_cells"].point == 1.0
    frac = got["kernel/tiled_fraction_of_blas"]
    assert "128x128x128" in frac.description  # the largest shape with a clean BLAS cell
    assert frac.point == pytest.approx(0.8, rel=0.05)
    rec.clear()
    # a disturbed tiled cell that ran fast would be picked as the best tile: it is not
    gemm_findings.record_reference(
        _ds(tile_disturbed=("256x256x256", "96x32x256")),
        between_sigma=0.0,
        level=0.95,
        reps=200,
        seed=0,
    )
    frac = {f.name: f for f in rec.findings()}["kernel/tiled_fraction_of_blas"]
    assert "(24x32x64)" in frac.description and "256x256x256" in frac.description
    assert frac.point == pytest.approx(0.8, rel=0.05)


def test_median_over_few_shapes_covers_where_the_percentile_bootstrap_does_not():
    x = np.array([1.003, 1.008, 1.037, 1.038, 1.19, 1.396, 1.424])
    est = gest.median_exact(x, level=0.95)
    assert est.point == pytest.approx(1.038) and est.ci == pytest.approx((1.003, 1.424))
    assert est.n == 7
    few = gest.median_exact(x[:5], level=0.95)
    assert few.lo is None and "too few" in few.note
    # coverage of the true median (0) at 7 shapes: the order-statistic interval holds its
    # level, the percentile bootstrap of the median does not
    rng = np.random.default_rng(1)
    sims = rng.standard_normal((400, 7))
    exact = [gest.median_exact(s, level=0.95) for s in sims]
    hit_exact = np.mean([e.lo <= 0.0 <= e.hi for e in exact])
    boot = [gest.median_over_shapes(s, reps=400, level=0.95, seed=i) for i, s in enumerate(sims)]
    hit_boot = np.mean([b.lo <= 0.0 <= b.hi for b in boot])
    assert hit_exact >= 0.95 and hit_boot < 0.93 < hit_exact
    # ties (most unseen shapes at a regret of exactly 1): the bounding order statistics
    # coincide, and the zero-width interval is dropped with the reason, not refused
    import scalinglab.record as rec_mod

    tied = gest.median_exact(np.array([1.0] * 11 + [1.3]), level=0.95)
    f = rec_mod.record("m", tied).to_json()
    assert f["ci"] is None and "tied" in f["note"] and f["n"] == 12


def test_all_cells_accuracy_is_recorded_for_the_forest_only():
    acc = pd.DataFrame(
        [
            {
                "protocol": p,
                "model": m,
                "r2_log": 0.9,
                "r2_lo": 0.8,
                "r2_hi": 0.95,
                "mape": 0.1,
                "mape_lo": 0.08,
                "mape_hi": 0.12,
                "n_cells": 40,
                "n_shapes": 8,
            }
            for p in ("cv", "unseen_shapes")
            for m in ("random_forest", "kernel_model")
        ]
    )
    gemm_findings.record_accuracy_all_cells(acc, level=0.95, reps=100)
    names = sorted(f.name for f in rec.findings())
    assert names == [
        f"predictor/all_cells/{p}/random_forest/{m}"
        for p in ("cv", "unseen_shapes")
        for m in ("mape", "r2_log")
    ]
