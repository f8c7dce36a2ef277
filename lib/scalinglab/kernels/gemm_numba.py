"""Float32 GEMM in numba: a packed, register-blocked, tiled kernel and a textbook one.

``gemm_tiled(a, b, tile_m=, tile_n=, tile_k=)`` computes ``a @ b`` the way
BLAS libraries do, in plain numba so that its tile sizes can be swept:

1. **Packing.** ``a`` is cut into ``tile_m x tile_k`` tiles and ``b`` into
   ``tile_k x tile_n`` tiles; each tile is copied into one contiguous buffer, rows
   of ``a`` and columns of ``b`` laid out along ``k`` (``b`` is transposed while
   packed), padded with zeros to whole register blocks. Packing costs ``O(mk + kn)``
   and makes every inner loop a unit-stride stream.
2. **Parallel over output tiles.** ``prange`` over the ``ceil(m / tile_m) *
   ceil(n / tile_n)`` tiles of ``C``; each thread owns its tile, so no two threads
   write the same element. Few large tiles leave cores idle: one of the effects the
   tile sweep measures. Problems under :data:`PARALLEL_MIN_FLOPS` or with a single
   output tile run the same loops on one thread (waking the pool costs more).
3. **Register-blocked micro-kernel.** A ``4 x 4`` block of ``C`` is 16 dot products
   of length ``tile_k``, accumulated in 16 scalars that LLVM keeps in vector
   registers (vectorised along ``k``, 512-bit wide via
   :func:`~scalinglab.kernels.simd.prefer_wide_vectors`): each step loads 4 rows of
   ``a`` and 4 columns of ``b`` and issues 16 FMAs. The 4 rows of ``a`` stay in L1
   while the block walks across the tile's columns, so a ``tile_n x tile_k`` panel
   of ``b`` that fits in L1 (e.g. 16 x 512 floats = 32 KiB) is read from L1 too.

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

from scalinglab.kernels.simd import prefer_wide_vectors

#: Register block of the micro-kernel (rows of ``a`` x columns of ``b``).
MR = 4
NR = 4


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
DEFAULT_TILE = Tile(128, 16, 512)


@njit(cache=True, fastmath=True, inline="always")
def _micro_4x4(ap, ia, bp, jb, kc, c, ci, cj, mr, nr):  # pragma: no cover - jitted
    # Slices (not ap[ia + p]) so that every index is provably non-negative: a
    # possibly negative index makes numba emit wrap-around code that turns the
    # vector loads into gathers (7x slower).
    a0 = ap[ia:ia + kc]
    a1 = ap[ia + kc:ia + 2 * kc]
    a2 = ap[ia + 2 * kc:ia + 3 * kc]
    a3 = ap[ia + 3 * kc:ia + 4 * kc]
    b0 = bp[jb:jb + kc]
    b1 = bp[jb + kc:jb + 2 * kc]
    b2 = bp[jb + 2 * kc:jb + 3 * kc]
    b3 = bp[jb + 3 * kc:jb + 4 * kc]
    z = np.float32(0.0)
    c00 = c01 = c02 = c03 = z
    c10 = c11 = c12 = c13 = z
    c20 = c21 = c22 = c23 = z
    c30 = c31 = c32 = c33 = z
    for p in range(kc):
        x0 = a0[p]
        x1 = a1[p]
        x2 = a2[p]
        x3 = a3[p]
        y0 = b0[p]
        y1 = b1[p]
        y2 = b2[p]
        y3 = b3[p]
        c00 += x0 * y0
        c01 += x0 * y1
        c02 += x0 * y2
        c03 += x0 * y3
        c10 += x1 * y0
        c11 += x1 * y1
        c12 += x1 * y2
        c13 += x1 * y3
        c20 += x2 * y0
        c21 += x2 * y1
        c22 += x2 * y2
        c23 += x2 * y3
        c30 += x3 * y0
        c31 += x3 * y1
        c32 += x3 * y2
        c33 += x3 * y3
    if mr == 4 and nr == 4:
        c[ci, cj] += c00
        c[ci, cj + 1] += c01
        c[ci, cj + 2] += c02
        c[ci, cj + 3] += c03
        c[ci + 1, cj] += c10
        c[ci + 1, cj + 1] += c11
        c[ci + 1, cj + 2] += c12
        c[ci + 1, cj + 3] += c13
        c[ci + 2, cj] += c20
        c[ci + 2, cj + 1] += c21
        c[ci + 2, cj + 2] += c22
        c[ci + 2, cj + 3] += c23
        c[ci + 3, cj] += c30
        c[ci + 3, cj + 1] += c31
        c[ci + 3, cj + 2] += c32
        c[ci + 3, cj + 3] += c33
    else:  # edge block: padded rows/columns were computed on zeros; store the valid part
        acc = ((c00, c01, c02, c03), (c10, c11, c12, c13),
               (c20, c21, c22, c23), (c30, c31, c32, c33))
        for i in range(mr):
            row = acc[i]
            for j in range(nr):
                c[ci + i, cj + j] += row[j]


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
    for i in range(mb):
        for p in range(kb):
            out[base + i * kb + p] = a[i0 + i, p0 + p]


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
    for p in range(kb):
        for j in range(nb):
            out[base + j * kb + p] = b[p0 + p, j0 + j]


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
    for tp in range(tk):
        kb = min(tile_k, k - tp * tile_k)
        abase = (ti * tk + tp) * mp * tile_k
        bbase = (tj * tk + tp) * np_ * tile_k
        for i in range(0, mb, MR):
            for j in range(0, nb, NR):
                _micro_4x4(ap, abase + i * kb, bp, bbase + j * kb, kb, c,
                           i0 + i, j0 + j, min(MR, mb - i), min(NR, nb - j))


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
    tile's depth. Rows are padded with zeros to a multiple of ``MR``.

    Returns
    -------
    numpy.ndarray
        1-D float32.
    """
    m, k = a.shape
    mp = -(-tile_m // MR) * MR
    n = _n_tiles(m, k, tile_m, tile_k)
    out = np.zeros(n * mp * tile_k, dtype=np.float32)
    (_pack_rows_par if parallel else _pack_rows_one)(a, out, n, tile_m, tile_k)
    return out


def pack_cols(b: np.ndarray, tile_n: int, tile_k: int, *, parallel: bool = True) -> np.ndarray:
    """Pack ``b (k, n)`` into contiguous ``tile_k x tile_n`` tiles, columns along ``k``.

    The layout of :func:`pack_rows` applied to ``b.T``; columns padded to ``NR``.
    """
    k, n = b.shape
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
    tm, tn, tk = int(tile.m), int(tile.n), int(tile.k)
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
