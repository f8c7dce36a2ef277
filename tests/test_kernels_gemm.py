"""The numba GEMM kernels against NumPy, on odd shapes and odd tiles."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.kernels import gemm_numba as G
from scalinglab.kernels import triton_available
from scalinglab.kernels.gemm_numba import Tile, gemm_blas, gemm_naive, gemm_tiled

SHAPES = [(1, 1, 1), (17, 33, 5), (129, 65, 257), (4, 4, 4), (5, 3, 9)]
TILES = [(4, 4, 4), (7, 5, 3), (16, 16, 64), (128, 16, 512), (1, 1, 1)]


def _operands(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((m, k), dtype=np.float32),
        rng.standard_normal((k, n), dtype=np.float32),
    )


def _close(c, a, b):
    ref = a.astype(np.float64) @ b.astype(np.float64)
    k = a.shape[1]
    # float32 accumulation error grows like sqrt(k) * eps * |a||b|
    tol = 8 * np.sqrt(k) * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b)).max()
    np.testing.assert_allclose(c, ref, rtol=0, atol=tol)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("tile", TILES)
def test_tiled_matches_numpy(shape, tile):
    a, b = _operands(*[shape[0], shape[1], shape[2]])
    c = gemm_tiled(a, b, tile_m=tile[0], tile_n=tile[1], tile_k=tile[2])
    assert c.shape == (shape[0], shape[1]) and c.dtype == np.float32
    _close(c, a, b)


@pytest.mark.parametrize("shape", SHAPES)
def test_naive_and_blas_match_numpy(shape):
    a, b = _operands(*shape)
    _close(gemm_naive(a, b), a, b)
    _close(gemm_blas(a, b), a, b)


def test_non_contiguous_and_float64_inputs_are_converted():
    a, b = _operands(40, 30, 20)
    c = gemm_tiled(
        np.asfortranarray(a.astype(np.float64)), b[:, ::-1], tile_m=8, tile_n=8, tile_k=8
    )
    _close(c, a, b[:, ::-1].copy())


def test_empty_inner_dimension_gives_zeros():
    c = gemm_tiled(np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32))
    np.testing.assert_array_equal(c, np.zeros((3, 2), np.float32))


def test_shape_and_tile_errors():
    a, b = _operands(3, 4, 5)
    with pytest.raises(ValueError, match="inner sizes differ"):
        gemm_tiled(a, a)
    with pytest.raises(ValueError, match="tile_k must be a positive integer"):
        gemm_tiled(a, b, tile_k=0)
    with pytest.raises(ValueError, match="2-D"):
        gemm_naive(a.ravel(), b)
    assert Tile(128, 16, 512).label == "128x16x512"


@pytest.mark.skipif(not triton_available(), reason="needs Triton and a CUDA device")
def test_triton_matches_torch():  # pragma: no cover - GPU only
    import torch

    from scalinglab.kernels.gemm_triton import gemm_triton

    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(129, 257, device="cuda", generator=g)
    b = torch.randn(257, 65, device="cuda", generator=g)
    c = gemm_triton(a, b, block_m=32, block_n=32, block_k=32)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("width", ["4", "8"])
def test_narrower_vector_kernels_match_numpy(tmp_path, width):
    """The micro-kernel as compiled for AVX2 (8 floats) and SSE/NEON (4), on this CPU."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from scalinglab.kernels.microkernel import MR, NR, VECTOR_WIDTH\n"
        "from scalinglab.kernels.gemm_numba import gemm_tiled\n"
        "rng = np.random.default_rng(0)\n"
        "for (m, n, k), t in [((17, 33, 5), (7, 5, 3)), ((129, 65, 257), (16, 16, 64)),\n"
        "                     ((200, 150, 300), (96, 64, 128))]:\n"
        "    a = rng.standard_normal((m, k), dtype=np.float32)\n"
        "    b = rng.standard_normal((k, n), dtype=np.float32)\n"
        "    c = gemm_tiled(a, b, tile_m=t[0], tile_n=t[1], tile_k=t[2])\n"
        "    err = np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max()\n"
        "    assert err < 1e-3, (m, n, k, t, err)\n"
        "print(VECTOR_WIDTH, MR, NR)\n"
    )
    env = {**os.environ, "SCALINGLAB_VECTOR_WIDTH": width, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    w, mr, nr = map(int, out.stdout.split())
    assert w == int(width) and nr == 2 * w and mr == {"8": 6, "4": 4}[width]


def test_pack_buffers_are_sized_by_the_inner_dimension_not_the_tile_depth():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((100, 48), dtype=np.float32)
    b = rng.standard_normal((48, 70), dtype=np.float32)
    mp = -(-96 // G.MR) * G.MR
    np_ = -(-64 // G.NR) * G.NR
    # K = 48 with tile_k = 256: one tile of depth 48 per row block, not 256 zero-filled
    assert G.pack_rows(a, 96, 256).size == 2 * mp * 48
    assert G.pack_cols(b, 64, 256).size == 2 * np_ * 48
    np.testing.assert_array_equal(G.pack_rows(a, 96, 256), G.pack_rows(a, 96, 48))
    deep = G.gemm_tiled(a, b, tile_m=96, tile_n=64, tile_k=256)
    np.testing.assert_array_equal(deep, G.gemm_tiled(a, b, tile_m=96, tile_n=64, tile_k=48))
    np.testing.assert_allclose(deep, a @ b, rtol=1e-4, atol=1e-4)
