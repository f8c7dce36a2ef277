"""The work of a packed, tiled, parallel GEMM, counted along its critical path.

A roofline sees only ``2MNK`` FLOPs and the minimum bytes; a tiled kernel does
more, and on the busiest thread. For a kernel that packs ``A`` and ``B`` into
register-block panels, splits ``C`` into ``tile_m x tile_n`` output tiles shared
out over ``n_threads`` threads, and walks each tile in ``tile_k``-deep steps of an
``mr x nr`` register-blocked micro-kernel (as
:func:`scalinglab.kernels.gemm_numba.gemm_tiled` does), :func:`tiled_gemm_counts`
returns, per call:

- ``calls``: 1 (a fixed cost per call: allocation, dispatch);
- ``threaded``: 1 where the kernel wakes its thread pool (more than one output
  tile and at least ``parallel_min_flops``), else 0;
- ``critical_flops``: FLOPs on the busiest thread, counting the zero padding of
  partial register blocks: ``waves * 2 * tile_rows * tile_cols * K`` with
  ``waves = ceil(tiles / threads)`` and the tile's rows and columns rounded up to
  whole blocks;
- ``critical_micro_calls``: micro-kernel invocations on that thread (each loads
  and stores an ``mr x nr`` block of C and sets up its loop);
- ``critical_k_steps``: ``waves * ceil(K / tile_k)`` panel steps;
- ``pack_bytes``: bytes each thread writes while packing ``A`` and ``B`` (padded
  panels), the copies shared over the threads of the threaded path;
- ``tile_buffer_bytes``: bytes of the padded per-tile C buffer zeroed and copied
  out on the busiest thread.

Each count is the quantity a fixed per-unit cost multiplies, so a linear model
``seconds ~ sum_j cost_j * count_j`` with non-negative costs (fit by
:func:`scalinglab.studies.gemm.predictor.calibrate_kernel_model`) extrapolates
to shapes it never saw, which a tree model on the same features cannot.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from scalinglab.cost_model.flops import check_positive

#: Names of the counts :func:`tiled_gemm_counts` returns.
COUNTS = (
    "calls",
    "threaded",
    "critical_flops",
    "critical_micro_calls",
    "critical_k_steps",
    "pack_bytes",
    "tile_buffer_bytes",
)


def _round_up(x: np.ndarray, block: int) -> np.ndarray:
    return np.ceil(x / block) * block


def tiled_gemm_counts(
    m: ArrayLike,
    n: ArrayLike,
    k: ArrayLike,
    tile_m: ArrayLike,
    tile_n: ArrayLike,
    tile_k: ArrayLike,
    *,
    n_threads: int,
    mr: int,
    nr: int,
    parallel_min_flops: float = 0.0,
    dtype_bytes: int = 4,
) -> dict[str, np.ndarray]:
    """Counts of :data:`COUNTS` for each (shape, tile) (module docstring).

    Parameters
    ----------
    m, n, k
        GEMM sizes, ``C[m, n] = A[m, k] @ B[k, n]``; broadcastable arrays.
    tile_m, tile_n, tile_k
        Tile sizes, broadcastable with the sizes.
    n_threads
        Threads of the threaded path.
    mr, nr
        Register block of the micro-kernel.
    parallel_min_flops
        Below this many FLOPs (``2mnk``) the kernel runs on one thread.

    Returns
    -------
    dict of str to numpy.ndarray
        One array per count, the broadcast shape of the inputs.
    """
    m, n, k = check_positive("m", m), check_positive("n", n), check_positive("k", k)
    tm, tn, tk = (
        check_positive("tile_m", tile_m),
        check_positive("tile_n", tile_n),
        check_positive("tile_k", tile_k),
    )
    if n_threads < 1 or mr < 1 or nr < 1:
        raise ValueError(f"n_threads, mr and nr must be >= 1, got {n_threads}, {mr}, {nr}")
    row_tiles, col_tiles, k_steps = np.ceil(m / tm), np.ceil(n / tn), np.ceil(k / tk)
    tiles = row_tiles * col_tiles
    threaded = (tiles > 1) & (2.0 * m * n * k >= parallel_min_flops)
    threads = np.where(threaded, float(n_threads), 1.0)
    waves = np.ceil(tiles / threads)
    rows = _round_up(np.minimum(tm, m), mr)
    cols = _round_up(np.minimum(tn, n), nr)
    # packed buffers are allocated for whole tiles: padded rows (columns) x tile_k per step
    packed = (row_tiles * _round_up(tm, mr) + col_tiles * _round_up(tn, nr)) * k_steps * tk
    counts = {
        "calls": np.ones_like(tiles),
        "threaded": threaded.astype(float),
        "critical_flops": waves * 2.0 * rows * cols * k,
        "critical_micro_calls": waves * (rows / mr) * (cols / nr) * k_steps,
        "critical_k_steps": waves * k_steps,
        "pack_bytes": dtype_bytes * packed / threads,
        "tile_buffer_bytes": waves * dtype_bytes * rows * cols,
    }
    shape = np.broadcast_shapes(*(np.shape(v) for v in counts.values()))
    return {name: np.broadcast_to(v, shape).astype(float) for name, v in counts.items()}
