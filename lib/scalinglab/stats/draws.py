"""Bounded integer draws in compiled code, equal to numpy's ``Generator.integers`` stream.

``rng.integers(0, bound, size=n, dtype=np.int32)`` on a PCG64 generator costs a
call through numpy's bit-generator interface per draw; on the Atari 100k data
(130 million run indices per algorithm at 50,000 replicates) that is a third of
the bootstrap's time. :class:`BoundedDraws` gives the *same* integers, in the
same order, and leaves the generator in the same state, from raw 64-bit words
(``bit_generator.random_raw``, one C loop) mapped in compiled code:

- numpy draws a bounded ``int32`` from ``next_uint32``, which for PCG64 returns
  the low half of a fresh 64-bit word and keeps the high half for the next call
  (state keys ``has_uint32`` / ``uinteger``); the little-endian ``uint32`` view
  of the raw words is exactly that sequence of halves;
- each draw is Lemire's multiply-shift with rejection
  (``buffered_bounded_lemire_uint32`` in numpy's ``distributions.c``):
  ``m = u * bound``; if ``m mod 2**32 < (2**32 - bound) mod bound`` draw again;
  the result is ``m >> 32``.

Raw words are requested only as they are needed, so the generator never runs
ahead of what numpy would have consumed; a half left over at the end is stored
back as numpy's buffered half (:meth:`BoundedDraws.close`).
``tests/test_stats_draws.py`` checks the integers and the final state against
``Generator.integers`` for odd and even counts, a pre-buffered half, bounds with
frequent rejections and many calls in a row.

Other bit generators (and a bound of 1) fall back to ``Generator.integers``.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

__all__ = ["BoundedDraws"]

_LITTLE = sys.byteorder == "little"


@njit(cache=True, nogil=True)
def _lemire(pending, halves, bound, out):  # pragma: no cover - compiled
    """Fill ``out`` with draws in ``[0, bound)`` from the uint32 stream ``pending``
    then ``halves`` (kept apart: ``halves`` is a view of fresh raw words).

    Returns ``(filled, used)``: draws written and halves consumed; ``filled <
    len(out)`` only when the stream ran out, which rejections can cause (the
    unfinished draw is then not consumed).
    """
    n = out.shape[0]
    n_pending = pending.shape[0]
    nh = n_pending + halves.shape[0]
    excl = np.uint64(bound)
    mask = np.uint64(0xFFFFFFFF)
    threshold = (np.uint64(0x100000000) - excl) % excl
    if n_pending == 0 and halves.shape[0] >= n:
        # Fast path, no loop-carried state: map every half, then check that no
        # draw needed the rejection test (probability ~ n * bound / 2**32).
        suspect = False
        for k in range(n):
            m = np.uint64(halves[k]) * excl
            out[k] = np.int32(m >> np.uint64(32))
            suspect |= (m & mask) < excl
        if not suspect:
            return n, n
    h = 0
    i = 0
    while i < n and h < nh:
        start = h
        u = pending[h] if h < n_pending else halves[h - n_pending]
        m = np.uint64(u) * excl
        h += 1
        left = m & mask
        if left < excl:  # rare: the rejection test proper
            while left < threshold:
                if h >= nh:
                    return i, start
                u = pending[h] if h < n_pending else halves[h - n_pending]
                m = np.uint64(u) * excl
                h += 1
                left = m & mask
        out[i] = np.int32(m >> np.uint64(32))
        i += 1
    return i, h


class BoundedDraws:
    """Draws of ``rng.integers(0, bound, size, dtype=np.int32)``, faster, same stream.

    Parameters
    ----------
    rng
        The generator to draw from (its state advances exactly as numpy's would).
    bound
        Exclusive upper bound, ``1 <= bound <= 2**31``.

    Notes
    -----
    Call :meth:`close` (or use the object as a context manager) after the last
    :meth:`draw`: a pending half word is then stored back into the generator's
    state, so a later ``rng`` call sees the state numpy would have left.
    """

    def __init__(self, rng: np.random.Generator, bound: int) -> None:
        self.rng = rng
        self.bound = int(bound)
        if not 1 <= self.bound <= 2**31:
            raise ValueError(f"bound must be in [1, 2**31], got {bound}")
        bg = rng.bit_generator
        self.fast = type(bg) is np.random.PCG64 and _LITTLE and self.bound > 1
        self._pending = np.empty(0, dtype=np.uint32)
        self._last_high: int | None = None  # numpy keeps it as ``uinteger``
        if self.fast:
            state = bg.state
            if state["has_uint32"]:
                self._pending = np.array([state["uinteger"]], dtype=np.uint32)

    def draw(self, n: int, out: np.ndarray | None = None) -> np.ndarray:
        """The next ``n`` draws.

        Parameters
        ----------
        n
            Number of draws.
        out
            Optional int32 buffer of at least ``n`` items to write into.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)``, int32, values in ``[0, bound)``.
        """
        res = np.empty(n, dtype=np.int32) if out is None else out[:n]
        if not self.fast:
            res[...] = self.rng.integers(0, self.bound, size=n, dtype=np.int32)
            return res
        bg = self.rng.bit_generator
        filled, short = 0, False
        while filled < n:
            # Only the words still needed (at least one once the halves at hand
            # fell short): the generator never runs ahead of numpy's.
            need = n - filled - self._pending.size
            count = max(1, -(-need // 2)) if need > 0 or short else 0
            words = bg.random_raw(count) if count else np.empty(0, dtype=np.uint64)
            halves = words.view(np.uint32)
            if count:
                self._last_high = int(words[-1] >> np.uint64(32))
            short = True
            got, used = _lemire(self._pending, halves, self.bound, res[filled:])
            filled += got
            if used <= self._pending.size:
                self._pending = self._pending[used:]
            else:
                self._pending = halves[used - self._pending.size :].copy()
        return res

    def close(self) -> None:
        """Store a pending half word back as numpy's buffered ``uint32``."""
        if not self.fast:
            return
        bg = self.rng.bit_generator
        state = dict(bg.state)
        state["has_uint32"] = int(self._pending.size > 0)
        if self._last_high is not None:
            state["uinteger"] = self._last_high
        bg.state = state
        self._pending = np.empty(0, dtype=np.uint32)

    def __enter__(self) -> BoundedDraws:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
