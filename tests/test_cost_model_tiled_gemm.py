"""The tiled-GEMM work counts against hand counts, and the kernel model fit on them."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.cost_model import tiled_gemm_counts
from scalinglab.cost_model.tiled_gemm import COUNTS
from scalinglab.studies.gemm.predictor import calibrate_kernel_model


def test_threaded_counts_by_hand():
    # 100^3, tiles 64x64x32 -> 2x2 output tiles over 2 threads: 2 waves; a tile is
    # 64 rows (72 in 12-row blocks) x 64 columns (two 32-column blocks); 4 k steps.
    c = tiled_gemm_counts(100, 100, 100, 64, 64, 32, n_threads=2, mr=12, nr=32)
    assert c["threaded"] == 1.0
    assert c["critical_flops"] == 2 * 2 * 72 * 64 * 100
    assert c["critical_micro_calls"] == 2 * 6 * 2 * 4
    assert c["critical_k_steps"] == 2 * 4
    # A: 2 row tiles x 72 padded rows x 4 x 32 deep; B: 2 x 64 x 128; 4 bytes; 2 threads.
    assert c["pack_bytes"] == 4 * (2 * 72 * 128 + 2 * 64 * 128) / 2
    assert c["tile_buffer_bytes"] == 2 * 4 * 72 * 64
    assert c["calls"] == 1.0


def test_single_tile_and_small_problems_run_on_one_thread():
    one = tiled_gemm_counts(8, 8, 8, 64, 64, 64, n_threads=4, mr=12, nr=32)
    assert one["threaded"] == 0.0
    assert one["critical_flops"] == 2 * 12 * 32 * 8  # padded to a whole block
    small = tiled_gemm_counts(
        64, 64, 64, 16, 16, 64, n_threads=4, mr=4, nr=4, parallel_min_flops=2**22
    )
    assert small["threaded"] == 0.0
    assert small["critical_flops"] == 16 * 2 * 16 * 16 * 64  # all 16 tiles on one thread


def test_counts_vectorise_and_reject_bad_sizes():
    c = tiled_gemm_counts(np.array([100, 8]), 100, 100, 64, 64, 32, n_threads=2, mr=12, nr=32)
    assert set(c) == set(COUNTS)
    assert all(v.shape == (2,) for v in c.values())
    with pytest.raises(ValueError, match="tile_k"):
        tiled_gemm_counts(10, 10, 10, 4, 4, 0, n_threads=1, mr=4, nr=4)
    with pytest.raises(ValueError, match="n_threads"):
        tiled_gemm_counts(10, 10, 10, 4, 4, 4, n_threads=0, mr=4, nr=4)


def test_calibration_recovers_known_costs():
    rng = np.random.default_rng(0)
    counts = rng.uniform(0.0, 1.0, (200, 3)) * np.array([1.0, 1e9, 1e6])
    cost = np.array([1e-4, 2e-11, 0.0])
    seconds = counts @ cost * np.exp(rng.normal(0.0, 1e-3, 200))
    fit = calibrate_kernel_model(counts, seconds)
    assert np.all(fit >= 0)
    np.testing.assert_allclose(fit[:2], cost[:2], rtol=0.02)
    assert fit[2] < 1e-3 * cost[1] * 1e9 / 1e6
