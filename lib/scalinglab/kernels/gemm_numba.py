"""Float32 GEMM in numba: a packed, register-blocked, tiled kernel and a textbook one.

``gemm_tiled(a, b, tile_m=, tile_n=, tile_k=)`` computes ``a @ b`` the way
BLAS libraries do, in plain numba so that its tile sizes can be swept:

1. **Packing.** ``a`` is cut into ``tile_m x tile_k`` tiles and ``b`` into
   ``tile_k x tile_n`` tiles; each tile is copied into one contiguous buffer of
   micro-panels: ``MR`` rows of ``a`` stored column by column, ``NR`` columns of
   ``b`` stored row by row, zero-padded to whole panels. Packing costs
   ``O(mk + kn)`` and turns every access of the inner loop into a unit-stride stream.
2. **Parallel over output tiles.** ``prange`` over the ``ceil(m / tile_m) *
   ceil(n / tile_n)`` tiles of ``C``; each thread owns its tile, so no two threads
   write the same element. Few large tiles leave cores idle: one of the effects the
   tile sweep measures. Problems under :data:`PARALLEL_MIN_FLOPS` or with a single
   output tile run the same loops on one thread (waking the pool costs more).
3. **Register-blocked micro-kernel.** Inside a tile, an ``NR``-column panel of ``b``
   stays in L1 while ``MR``-row panels of ``a`` stream past it; each pair updates an
   ``MR x NR`` block of C held in vector registers by outer products
   (:mod:`scalinglab.kernels.microkernel`: ``12 x 32`` with AVX-512, ``6 x 16``
   with AVX2). The tile accumulates in a padded buffer that is copied to ``C`` once.

Hand-written (BLAS is the library for real work) because the study needs a kernel
whose tile sizes are parameters. ``gemm_naive`` is the textbook triple loop
(``i, j, p``, scalar, serial, strict IEEE order): the baseline that shows what
the packing and blocking buy.

Shapes: ``a`` is ``(m, k)``, ``b`` is ``(k, n)``, the result ``(m, n)``, float32.
Accumulation is in float32 in a different order from BLAS: expect agreement to a
relative ~1e-6 * sqrt(k).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from scalinglab.kernels.microkernel import MR, NR, micro_kernel
from scalinglab.kernels.simd import prefer_wide_vectors


@dataclass(frozen=True)
class Tile:
    """Tile sizes of :func:`gemm_tiled`, in elements."""

    m: int
    n: int
    k: int

    def __post_init__(self) -> None:
        for name in ("m", "n", "k"):
            v = getattr(self, name)
            if not isinstance(v, int | np.integer) or v < 1:
                raise ValueError(f"tile_{name} must be a positive integer, got {v!r}")

    @property
    def label(self) -> str:
        """``"{m}x{n}x{k}"``, e.g. ``"128x16x512"``."""
        return f"{self.m}x{self.n}x{self.k}"


#: Tile sizes that did well on the 2-core AVX-512 development machine at 1024-2048.
DEFAULT_TILE = Tile(96, 128, 256)


@njit(cache=True, inline="always")
def _pack_rows_tile(a, out, t, tile_m, tile_k):  # pragma: no cover - jitted
    m, k = a.shape
    tk = (k + tile_k - 1) // tile_k
    mp = (tile_m + MR - 1) // MR * MR
    i0 = (t // tk) * tile_m
    p0 = (t % tk) * tile_k
    mb = min(tile_m, m - i0)
    kb = min(tile_k, k - p0)
    base = t * mp * tile_k
    for ib in range(0, mb, MR):
        blk = base + ib * kb
        rows = min(MR, mb - ib)
        for p in range(kb):
            for i in range(rows):
                out[blk + p * MR + i] = a[i0 + ib + i, p0 + p]


@njit(cache=True, inline="always")
def _pack_cols_tile(b, out, t, tile_n, tile_k):  # pragma: no cover - jitted
    k, n = b.shape
    tk = (k + tile_k - 1) // tile_k
    np_ = (tile_n + NR - 1) // NR * NR
    j0 = (t // tk) * tile_n
    p0 = (t % tk) * tile_k
    nb = min(tile_n, n - j0)
    kb = min(tile_k, k - p0)
    base = t * np_ * tile_k
    for jb in range(0, nb, NR):
        blk = base + jb * kb
        cols = min(NR, nb - jb)
        for p in range(kb):
            for j in range(cols):
                out[blk + p * NR + j] = b[p0 + p, j0 + jb + j]


@njit(cache=True, inline="always")
def _output_tile(ap, bp, c, t, k, tile_m, tile_n, tile_k):  # pragma: no cover - jitted
    prefer_wide_vectors()  # lands in whichever function this body is inlined into
    m, n = c.shape
    tn = (n + tile_n - 1) // tile_n
    tk = (k + tile_k - 1) // tile_k
    mp = (tile_m + MR - 1) // MR * MR
    np_ = (tile_n + NR - 1) // NR * NR
    ti = t // tn
    tj = t % tn
    i0 = ti * tile_m
    j0 = tj * tile_n
    mb = min(tile_m, m - i0)
    nb = min(tile_n, n - j0)
    cb = np.zeros(mp * np_, dtype=np.float32)  # the tile of C, padded to whole blocks
    for tp in range(tk):
        kb = min(tile_k, k - tp * tile_k)
        abase = (ti * tk + tp) * mp * tile_k
        bbase = (tj * tk + tp) * np_ * tile_k
        for j in range(0, nb, NR):  # one NR-wide panel of B stays in L1 ...
            for i in range(0, mb, MR):  # ... while MR-row panels of A stream past it
                micro_kernel(ap, abase + i * kb, bp, bbase + j * kb, kb, cb, i * np_ + j, np_)
    for i in range(mb):
        for j in range(nb):
            c[i0 + i, j0 + j] = cb[i * np_ + j]


def _n_tiles(rows: int, cols: int, tile_r: int, tile_c: int) -> int:
    return -(-rows // tile_r) * -(-cols // tile_c)


# Each step has a threaded (prange) and a one-thread (range) driver around the same
# per-tile body: problems too small to pay for waking the thread pool run on one
# thread (BLAS libraries do the same below a size threshold). They are separate
# Python functions because numba's disk cache does not tell apart two compilations
# of one function with different flags.
@njit(cache=True, parallel=True)
def _pack_rows_par(a, out, n_tiles, tile_m, tile_k):  # pragma: no cover - jitted
    for t in prange(n_tiles):
        _pack_rows_tile(a, out, t, tile_m, tile_k)


@njit(cache=True)
def _pack_rows_one(a, out, n_tiles, tile_m, tile_k):  # pragma: no cover - jitted
    for t in range(n_tiles):
        _pack_rows_tile(a, out, t, tile_m, tile_k)


@njit(cache=True, parallel=True)
def _pack_cols_par(b, out, n_tiles, tile_n, tile_k):  # pragma: no cover - jitted
    for t in prange(n_tiles):
        _pack_cols_tile(b, out, t, tile_n, tile_k)


@njit(cache=True)
def _pack_cols_one(b, out, n_tiles, tile_n, tile_k):  # pragma: no cover - jitted
    for t in range(n_tiles):
        _pack_cols_tile(b, out, t, tile_n, tile_k)


@njit(cache=True, parallel=True, fastmath=True)
def _gemm_par(ap, bp, c, n_tiles, k, tile_m, tile_n, tile_k):  # pragma: no cover - jitted
    for t in prange(n_tiles):
        _output_tile(ap, bp, c, t, k, tile_m, tile_n, tile_k)


@njit(cache=True, fastmath=True)
def _gemm_one(ap, bp, c, n_tiles, k, tile_m, tile_n, tile_k):  # pragma: no cover - jitted
    for t in range(n_tiles):
        _output_tile(ap, bp, c, t, k, tile_m, tile_n, tile_k)


def pack_rows(a: np.ndarray, tile_m: int, tile_k: int, *, parallel: bool = True) -> np.ndarray:
    """Pack ``a (m, k)`` into contiguous ``tile_m x tile_k`` tiles, rows along ``k``.

    Tile ``(ti, tp)`` starts at ``(ti * ceil(k / tile_k) + tp) * tile_m_padded * tile_k``;
    inside it row ``i`` occupies ``[i * kb, (i + 1) * kb)`` where ``kb`` is the
    tile's depth: its rows come in panels of ``MR`` (the last zero-padded), each
    stored column by column, ``(i, p)`` of panel ``ib`` at ``ib * kb + p * MR + i``.

    A ``tile_k`` deeper than ``k`` is cut to ``k`` (one tile of depth ``k``:
    the same layout, without zero-filling ``tile_k - k`` unused rows per tile).

    Returns
    -------
    numpy.ndarray
        1-D float32 of ``tiles * tile_m_padded * min(tile_k, k)`` elements.
    """
    m, k = a.shape
    tile_k = max(1, min(tile_k, k))
    mp = -(-tile_m // MR) * MR
    n = _n_tiles(m, k, tile_m, tile_k)
    out = np.zeros(n * mp * tile_k, dtype=np.float32)
    (_pack_rows_par if parallel else _pack_rows_one)(a, out, n, tile_m, tile_k)
    return out


def pack_cols(b: np.ndarray, tile_n: int, tile_k: int, *, parallel: bool = True) -> np.ndarray:
    """Pack ``b (k, n)`` into contiguous ``tile_k x tile_n`` tiles, columns along ``k``.

    The layout of :func:`pack_rows` applied to ``b.T``: panels of ``NR`` columns
    (the last zero-padded), each stored row by row; ``tile_k`` is cut to ``k``
    as there.
    """
    k, n = b.shape
    tile_k = max(1, min(tile_k, k))
    np_ = -(-tile_n // NR) * NR
    count = _n_tiles(n, k, tile_n, tile_k)
    out = np.zeros(count * np_ * tile_k, dtype=np.float32)
    (_pack_cols_par if parallel else _pack_cols_one)(b, out, count, tile_n, tile_k)
    return out


#: GEMMs below this many FLOPs (2mnk), or with a single output tile, run on one thread.
PARALLEL_MIN_FLOPS = 2**22


@njit(cache=True)
def _naive(a, b, c):  # pragma: no cover - jitted
    m, k = a.shape
    n = b.shape[1]
    for i in range(m):
        for j in range(n):
            s = np.float32(0.0)
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s


def _as_f32(x: np.ndarray, name: str) -> np.ndarray:
    arr = np.ascontiguousarray(x, dtype=np.float32)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {arr.shape}")
    return arr


def _check(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = _as_f32(a, "a")
    b = _as_f32(b, "b")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner sizes differ: a is {a.shape}, b is {b.shape}")
    return a, b


def gemm_tiled(
    a: np.ndarray,
    b: np.ndarray,
    *,
    tile_m: int = DEFAULT_TILE.m,
    tile_n: int = DEFAULT_TILE.n,
    tile_k: int = DEFAULT_TILE.k,
) -> np.ndarray:
    """``a @ b`` in float32 by the packed, tiled, parallel kernel (module docstring).

    Parameters
    ----------
    a, b
        ``(m, k)`` and ``(k, n)``; converted to C-contiguous float32.
    tile_m, tile_n, tile_k
        Output tile rows and columns, and the depth of the packed panels.

    Returns
    -------
    numpy.ndarray
        ``(m, n)`` float32. Timing it includes packing (as BLAS's time does).
    """
    tile = Tile(tile_m, tile_n, tile_k)
    a, b = _check(a, b)
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), dtype=np.float32)
    if m == 0 or n == 0 or k == 0:
        return c
    n_tiles = _n_tiles(m, n, tile.m, tile.n)
    parallel = n_tiles > 1 and 2 * m * n * k >= PARALLEL_MIN_FLOPS
    # a tile deeper than k is one tile of depth k: buffers sized by min(tile_k, k)
    tm, tn, tk = int(tile.m), int(tile.n), min(int(tile.k), k)
    ap = pack_rows(a, tm, tk, parallel=parallel)
    bp = pack_cols(b, tn, tk, parallel=parallel)
    (_gemm_par if parallel else _gemm_one)(ap, bp, c, n_tiles, k, tm, tn, tk)
    return c


def gemm_naive(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in float32 by the textbook triple loop (serial, no blocking).

    Returns
    -------
    numpy.ndarray
        ``(m, n)`` float32.
    """
    a, b = _check(a, b)
    c = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    if c.size and a.shape[1]:
        _naive(a, b, c)
    return c


def gemm_blas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in float32 by NumPy's BLAS (OpenBLAS sgemm in the pinned wheels)."""
    a, b = _check(a, b)
    return a @ b


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel, so no timing includes the JIT."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((9, 7), dtype=np.float32)
    b = rng.standard_normal((7, 6), dtype=np.float32)
    gemm_tiled(a, b, tile_m=4, tile_n=4, tile_k=4)  # serial path
    big = rng.standard_normal((128, 128), dtype=np.float32)
    gemm_tiled(big, big, tile_m=64, tile_n=64, tile_k=64)  # parallel path
    gemm_naive(a, b)
