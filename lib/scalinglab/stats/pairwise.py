"""numpy's pairwise summation, in compiled code, in numpy's own order.

``numpy.add.reduce`` over a contiguous axis of ``n`` float64 items (and so
``mean``) does not add left to right: ``pairwise_sum`` in numpy's
``loops_utils.h`` splits the items recursively (the left part a multiple of 8
items) down to blocks of at most 128 (``PW_BLOCKSIZE``), sums each block with
eight interleaved accumulators combined as ``((r0 + r1) + (r2 + r3)) + ((r4 +
r5) + (r6 + r7))`` plus a left-to-right tail, and adds the two parts' sums. The
compiled bootstrap passes must reproduce numpy's replicates bit for bit, so they
sum the same way: :func:`pairwise_plan` unrolls the recursion once per length
(numba's disk cache does not keep recursive functions safely) and
:func:`pairwise_sum` follows the plan.

Indices inside :func:`pairwise_sum` are unsigned: numba then drops the
negative-index wraparound test on every load, which halves the cost of a sum.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["PW_BLOCK", "pairwise_plan", "pairwise_sum"]

#: numpy's pairwise-summation block (``PW_BLOCKSIZE`` in ``loops_utils.h``).
PW_BLOCK = 128

_1 = np.uint64(1)
_2 = np.uint64(2)
_3 = np.uint64(3)
_4 = np.uint64(4)
_5 = np.uint64(5)
_6 = np.uint64(6)
_7 = np.uint64(7)
_8 = np.uint64(8)


def pairwise_plan(n: int) -> np.ndarray:
    """numpy's pairwise-summation tree over ``n`` items, in post-order.

    Parameters
    ----------
    n
        Number of items summed.

    Returns
    -------
    numpy.ndarray
        Shape ``(steps, 3)``, int64. Rows ``(1, lo, m)``: push the block sum of
        items ``[lo, lo + m)`` (``m <= 128``); rows ``(0, 0, 0)``: replace the top
        two sums by their sum (left + right).
    """
    rows: list[tuple[int, int, int]] = []

    def walk(lo: int, m: int) -> None:
        if m <= PW_BLOCK:
            rows.append((1, lo, m))
            return
        half = m // 2
        half -= half % 8
        walk(lo, half)
        walk(lo + half, m - half)
        rows.append((0, 0, 0))

    walk(0, n)
    return np.asarray(rows, dtype=np.int64).reshape(-1, 3)


@njit(cache=True, nogil=True)
def pairwise_sum(a, plan, stack):  # pragma: no cover - compiled
    """numpy's ``pairwise_sum`` of ``a`` following ``plan``.

    Parameters
    ----------
    a
        Shape ``(n,)``, float64, contiguous.
    plan
        :func:`pairwise_plan` of ``n``, shape ``(steps, 3)``.
    stack
        Scratch, float64, at least ``steps + 1`` items.

    Returns
    -------
    float
        The sum, bit for bit ``numpy.add.reduce(a)``.
    """
    top = 0
    for p in range(plan.shape[0]):
        if plan[p, 0] == 1:
            lo = np.uint64(plan[p, 1])
            n = np.uint64(plan[p, 2])
            end = lo + n
            if n < _8:
                res = 0.0
                i = lo
                while i < end:
                    res += a[i]
                    i += _1
            else:
                r0 = a[lo]
                r1 = a[lo + _1]
                r2 = a[lo + _2]
                r3 = a[lo + _3]
                r4 = a[lo + _4]
                r5 = a[lo + _5]
                r6 = a[lo + _6]
                r7 = a[lo + _7]
                stop = end - (n & _7)
                i = lo + _8
                while i < stop:
                    r0 += a[i]
                    r1 += a[i + _1]
                    r2 += a[i + _2]
                    r3 += a[i + _3]
                    r4 += a[i + _4]
                    r5 += a[i + _5]
                    r6 += a[i + _6]
                    r7 += a[i + _7]
                    i += _8
                res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
                while i < end:
                    res += a[i]
                    i += _1
            stack[top] = res
            top += 1
        else:
            stack[top - 2] = stack[top - 2] + stack[top - 1]
            top -= 1
    return stack[0]
