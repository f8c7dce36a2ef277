"""Bounded integer draws in compiled code, equal to numpy's ``Generator.integers`` stream.

``rng.integers(0, bound, size=n, dtype=np.int32)`` on a PCG64 generator costs a
call through numpy's bit-generator interface per draw; on the Atari 100k data
(130 million run indices per algorithm at 50,000 replicates) that would be most
of the bootstrap's time. Here the generator itself runs in compiled code, and
gives the *same* integers, in the same order, leaving the same final state:

- PCG64 (numpy's ``pcg64.h``, XSL-RR 128/64): the 128-bit state advances as
  ``state = state * M + inc`` (mod 2**128), then the output word is
  ``rotr64(high ^ low, high >> 58)`` of the new state. The 128-bit product
  needs the high half of a 64 x 64-bit product, which :func:`_umulhi` gets from
  LLVM as one ``mul`` (numba has no 128-bit integers);
- numpy draws a bounded ``int32`` from ``next_uint32``, which for PCG64 returns
  the low half of a fresh 64-bit word and keeps the high half for the next call
  (state keys ``has_uint32`` / ``uinteger``);
- each draw is Lemire's multiply-shift with rejection
  (``buffered_bounded_lemire_uint32`` in numpy's ``distributions.c``):
  ``m = u * bound``; if ``m mod 2**32 < (2**32 - bound) mod bound`` draw again;
  the result is ``m >> 32``. A bound of 1 consumes nothing.

The state travels as a ``uint64`` array (:func:`pcg_state`),
written back into the generator by :func:`store_pcg_state`; compiled kernels
call :func:`fill_bounded` on it directly (:mod:`scalinglab.stats.fused` does,
once per replicate). ``tests/test_stats_draws.py`` checks the integers and the
final state against ``Generator.integers`` for odd and even counts, a
pre-buffered half, bounds with frequent rejections and many calls in a row.

Other bit generators fall back to ``Generator.integers``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["BoundedDraws", "fill_bounded", "pcg_state", "store_pcg_state"]

_M64 = 2**64 - 1
#: PCG64's 128-bit multiplier (``PCG_DEFAULT_MULTIPLIER_128``), high and low words.
_MUL_HI = np.uint64(0x2360ED051FC65DA4)
_MUL_LO = np.uint64(0x4385DF649FCCF645)
_MUL = 0x2360ED051FC65DA44385DF649FCCF645
_MUL2 = _MUL * _MUL % 2**128
_MUL2_HI = np.uint64(_MUL2 >> 64)
_MUL2_LO = np.uint64(_MUL2 & _M64)
_U32 = np.uint64(0xFFFFFFFF)
_2_32 = np.uint64(0x100000000)
_32 = np.uint64(32)
_58 = np.uint64(58)
_63 = np.uint64(63)
_64 = np.uint64(64)


@intrinsic
def _umulhi(typingctx, a, b):  # pragma: no cover - compiled
    """High 64 bits of the 128-bit product of two uint64."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return sig, codegen


@njit(cache=True, nogil=True)
def _next_word(st):  # pragma: no cover - compiled
    """Advance the PCG64 state in ``st`` by one step; the output word."""
    hi = st[0]
    lo = st[1]
    low = lo * _MUL_LO
    high = _umulhi(lo, _MUL_LO) + hi * _MUL_LO + lo * _MUL_HI
    lo = low + st[3]
    hi = high + st[2] + np.uint64(lo < low)
    st[0] = hi
    st[1] = lo
    x = hi ^ lo
    r = hi >> _58
    return (x >> r) | (x << ((_64 - r) & _63))


@intrinsic
def _mul128(typingctx, a, b):  # pragma: no cover - compiled
    """The 128-bit product of two uint64, as ``(high, low)``: one ``mul``."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        high = builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))
        low = builder.trunc(product, ir.IntType(64))
        return context.make_tuple(builder, signature.return_type, (high, low))

    return sig, codegen


@njit(cache=True, nogil=True)
def _output(hi, lo):  # pragma: no cover - compiled
    """PCG64's output word (XSL-RR) of a state."""
    x = hi ^ lo
    r = hi >> _58
    return (x >> r) | (x << ((_64 - r) & _63))


@njit(cache=True, nogil=True)
def _fill_words(st, words, n):  # pragma: no cover - compiled
    """``words[:n]`` = the next ``n`` PCG64 outputs.

    Two interleaved chains, the even and the odd steps, each advanced by the
    two-step map ``state * M**2 + inc * (M + 1)`` (``st[6:8]``): the same states
    as one chain, with half the dependency latency per word.
    """
    if n == 0:
        return
    hi = st[0]
    lo = st[1]
    inc_hi = st[2]
    inc_lo = st[3]
    h, low = _mul128(lo, _MUL_LO)
    a_lo = low + inc_lo
    a_hi = h + hi * _MUL_LO + lo * _MUL_HI + inc_hi + np.uint64(a_lo < low)
    h, low = _mul128(a_lo, _MUL_LO)
    b_lo = low + inc_lo
    b_hi = h + a_hi * _MUL_LO + a_lo * _MUL_HI + inc_hi + np.uint64(b_lo < low)
    c_hi = st[6]
    c_lo = st[7]
    i = 0
    while i + 1 < n:
        words[i] = _output(a_hi, a_lo)
        words[i + 1] = _output(b_hi, b_lo)
        hi = b_hi
        lo = b_lo
        h, low = _mul128(a_lo, _MUL2_LO)
        a_hi = h + a_hi * _MUL2_LO + a_lo * _MUL2_HI + c_hi
        a_lo = low + c_lo
        a_hi += np.uint64(a_lo < low)
        h, low = _mul128(b_lo, _MUL2_LO)
        b_hi = h + b_hi * _MUL2_LO + b_lo * _MUL2_HI + c_hi
        b_lo = low + c_lo
        b_hi += np.uint64(b_lo < low)
        i += 2
    if i < n:
        words[i] = _output(a_hi, a_lo)
        hi = a_hi
        lo = a_lo
    st[0] = hi
    st[1] = lo


@njit(cache=True, nogil=True)
def fill_bounded(st, bound, out, words):  # pragma: no cover - compiled
    """``out[:]`` = the next ``len(out)`` draws of ``integers(0, bound, dtype=int32)``.

    Parameters
    ----------
    st
        PCG64 state, shape ``(8,)``, uint64 (:func:`pcg_state`); advanced in place.
    bound
        Exclusive upper bound, ``1 <= bound <= 2**31``.
    out
        Shape ``(n,)``, any integer dtype holding ``bound - 1``.
    words
        Scratch, uint64, at least ``n // 2 + 1`` items.

    Notes
    -----
    The halves are drawn as if no draw were rejected and mapped in one
    vectorizable loop; only if some draw fell in the (rare) zone where Lemire's
    test must be made are they mapped again one by one with rejections, taking
    further words as needed. Either way the stream, the integers and the final
    state are numpy's.
    """
    n = out.shape[0]
    if bound == 1 or n == 0:
        out[:] = 0
        return
    excl = np.uint64(bound)
    pending = st[5]
    first = 1 if st[4] else 0
    nw = (n - first + 1) // 2
    _fill_words(st, words, nw)
    suspect = False
    if first:
        m = (pending & _U32) * excl
        out[0] = m >> _32
        suspect |= (m & _U32) < excl
    for i in range((n - first) // 2):
        w = words[i]
        m = (w & _U32) * excl
        m2 = (w >> _32) * excl
        out[first + 2 * i] = m >> _32
        out[first + 2 * i + 1] = m2 >> _32
        suspect |= ((m & _U32) < excl) | ((m2 & _U32) < excl)
    if (n - first) % 2:
        m = (words[nw - 1] & _U32) * excl
        out[n - 1] = m >> _32
        suspect |= (m & _U32) < excl
    avail = first + 2 * nw
    if nw > 0:
        st[5] = words[nw - 1] >> _32
    if suspect:
        # The exact path: Lemire's rejection test on every draw, in stream order.
        threshold = (_2_32 - excl) % excl
        extra = np.uint64(0)
        q = 0
        for k in range(n):
            while True:
                if q == avail:
                    extra = _next_word(st)
                    st[5] = extra >> _32
                    avail += 2
                if q < first:
                    u = pending & _U32
                elif q < first + 2 * nw:
                    w = words[(q - first) // 2]
                    u = w & _U32 if (q - first) % 2 == 0 else w >> _32
                elif q == avail - 2:
                    u = extra & _U32
                else:
                    u = extra >> _32
                q += 1
                m = u * excl
                left = m & _U32
                if left >= excl or left >= threshold:
                    break
            out[k] = m >> _32
        st[4] = np.uint64(avail - q)
    else:
        st[4] = np.uint64(avail - n)


def pcg_state(rng: np.random.Generator) -> np.ndarray:
    """The PCG64 state of ``rng`` as :func:`fill_bounded` takes it.

    Returns
    -------
    numpy.ndarray
        Shape ``(8,)``, uint64: ``(state >> 64, state mod 2**64, inc >> 64,
        inc mod 2**64, has_uint32, uinteger)`` and the increment of two steps,
        ``inc * (M + 1) mod 2**128`` (high, low).
    """
    s = rng.bit_generator.state
    state, inc = int(s["state"]["state"]), int(s["state"]["inc"])
    inc2 = inc * (_MUL + 1) % 2**128
    fields = (state >> 64, state & _M64, inc >> 64, inc & _M64, s["has_uint32"], s["uinteger"])
    return np.array([*fields, inc2 >> 64, inc2 & _M64], dtype=np.uint64)


def store_pcg_state(rng: np.random.Generator, st: np.ndarray) -> None:
    """Write a :func:`pcg_state` array (advanced by draws) back into ``rng``."""
    s = dict(rng.bit_generator.state)
    s["state"] = {"state": int(st[0]) << 64 | int(st[1]), "inc": int(st[2]) << 64 | int(st[3])}
    s["has_uint32"] = int(st[4])
    s["uinteger"] = int(st[5])
    rng.bit_generator.state = s


def is_pcg64(rng: np.random.Generator) -> bool:
    """Whether ``rng`` draws from PCG64, the generator the compiled draws reproduce."""
    return type(rng.bit_generator) is np.random.PCG64


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
    With PCG64 the draws run on a copy of the state: call :meth:`close` (or use
    the object as a context manager) after the last :meth:`draw` to store it back
    into ``rng``, and do not use ``rng`` in between.
    """

    def __init__(self, rng: np.random.Generator, bound: int) -> None:
        self.rng = rng
        self.bound = int(bound)
        if not 1 <= self.bound <= 2**31:
            raise ValueError(f"bound must be in [1, 2**31], got {bound}")
        self.fast = is_pcg64(rng) and self.bound > 1
        self._st = pcg_state(rng) if self.fast else np.zeros(8, dtype=np.uint64)
        self._words = np.empty(0, dtype=np.uint64)

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
        if self._words.size < n // 2 + 1:
            self._words = np.empty(n // 2 + 1, dtype=np.uint64)
        fill_bounded(self._st, self.bound, res, self._words)
        return res

    def close(self) -> None:
        """Store the advanced state (with a pending half word) back into the generator."""
        if self.fast:
            store_pcg_state(self.rng, self._st)

    def __enter__(self) -> BoundedDraws:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
