"""Micro-benchmarks that measure a machine's roofs: FMA throughput, BLAS, memory copy.

- :func:`fma_flop_per_s`: independent fused multiply-add chains held in vector
  registers (no memory traffic), on all numba threads: the arithmetic peak the
  cores reach in practice.
- :func:`blas_sgemm_flop_per_s`: NumPy's float32 matmul on a large square matrix,
  the best a tuned library reaches.
- :func:`copy_bytes_per_s`: a parallel streaming copy of arrays far larger than
  the caches; bytes counted as read + written (STREAM's convention; the
  write-allocate read is not counted).

Each reports the best of ``repeats`` runs (the machine's capability, not its
typical state under other load). Hand-written because no library in the stack
measures these; the designs follow the usual ones (e.g. STREAM, likwid-bench).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, prange

from scalinglab.kernels.simd import prefer_wide_vectors

#: Dependent FMAs per element per pass (written out so the lane loop is innermost).
_DEPTH = 16


@njit(cache=True, parallel=True, fastmath={"contract"})
def _fma_chains(x, passes):  # pragma: no cover - jitted
    # The j loop is innermost and vectorised; every element carries a chain of
    # _DEPTH dependent FMAs per pass, and the out-of-order core overlaps the chains
    # of neighbouring vectors, so the FMA pipes stay busy with one load and one
    # store per _DEPTH FMAs.
    a = np.float32(0.999999)
    b = np.float32(1e-7)
    for blk in prange(x.shape[0]):
        prefer_wide_vectors()
        row = x[blk]
        for _ in range(passes):
            for j in range(row.shape[0]):
                v = row[j]
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                v = v * a + b
                row[j] = v


@njit(cache=True, parallel=True)
def _copy(src, dst):  # pragma: no cover - jitted
    n = src.shape[0]
    chunk = 1 << 16
    for c in prange((n + chunk - 1) // chunk):
        lo = c * chunk
        hi = min(n, lo + chunk)
        for i in range(lo, hi):
            dst[i] = src[i]


def _best(fn, repeats: int) -> float:
    fn()  # compile / warm
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def fma_flop_per_s(
    *, passes: int = 2_000, width: int = 256, repeats: int = 5, threads: int | None = None
) -> float:
    """Peak float32 FMA throughput in FLOP/s (an FMA counts 2 FLOPs).

    Parameters
    ----------
    passes
        Passes over each block (each pass: 16 FMAs per element).
    width
        Elements per block (256 float32 = 1 KiB, in L1).
    repeats
        Timed runs; the fastest is reported.
    threads
        numba threads to run on (default: all of numba's threads). On a shared
        machine one thread's rate is the steadier measure of what a core can do:
        a parallel run is as slow as its most-interrupted thread.
    """
    import numba

    previous = numba.get_num_threads()
    n = previous if threads is None else int(threads)
    numba.set_num_threads(n)
    try:
        n_blocks = 4 * n
        x = np.ones((n_blocks, width), dtype=np.float32)
        seconds = _best(lambda: _fma_chains(x, passes), repeats)
    finally:
        numba.set_num_threads(previous)
    return 2.0 * _DEPTH * passes * n_blocks * width / seconds


def blas_sgemm_flop_per_s(*, n: int = 2048, repeats: int = 5, seed: int = 0) -> float:
    """Float32 matmul throughput of NumPy's BLAS on ``n x n`` matrices, in FLOP/s."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return 2.0 * n**3 / _best(lambda: a @ b, repeats)


def copy_bytes_per_s(*, nbytes: int = 1 << 29, repeats: int = 5) -> float:
    """Streaming copy bandwidth on all numba threads, in bytes/s (read + write).

    ``nbytes`` per array (default 512 MiB) should exceed the last-level cache.
    """
    n = nbytes // 4
    src = np.ones(n, dtype=np.float32)
    dst = np.zeros(n, dtype=np.float32)
    return 2.0 * n * 4 / _best(lambda: _copy(src, dst), repeats)
