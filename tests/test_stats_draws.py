"""Compiled bounded draws give numpy's ``Generator.integers`` stream and final state."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.stats.draws import (
    BoundedDraws,
    _fill_words,
    fill_bounded,
    pcg_state,
    store_pcg_state,
)


def _state(rng: np.random.Generator) -> dict:
    return rng.bit_generator.state


@pytest.mark.parametrize("bound", [2, 3, 5, 7, 100, 101, 2**16 + 3, 2**30 + 1, 2**31 - 1, 2**31])
def test_same_integers_and_state_as_numpy(bound):
    sizes = [1, 2, 3, 10, 257, 1, 4096, 5, 0, 999]
    for lead in (0, 1):  # an odd draw first leaves numpy's half word buffered
        ref, ours = np.random.default_rng(bound), np.random.default_rng(bound)
        if lead:
            ref.integers(0, 9, size=1, dtype=np.int32)
            ours.integers(0, 9, size=1, dtype=np.int32)
        want = [ref.integers(0, bound, size=n, dtype=np.int32) for n in sizes]
        with BoundedDraws(ours, bound) as draws:
            got = [draws.draw(n) for n in sizes]
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, w)
        assert _state(ours) == _state(ref)
        # and the generators go on identically
        np.testing.assert_array_equal(
            ours.integers(0, 1000, size=7, dtype=np.int32),
            ref.integers(0, 1000, size=7, dtype=np.int32),
        )


def test_rejections_happen_and_match():
    # bound 2**30 + 1: a half is rejected with probability ~1/4, so refills
    # mid-draw and restarts are exercised many times.
    bound = 2**30 + 1
    ref, ours = np.random.default_rng(1), np.random.default_rng(1)
    want = ref.integers(0, bound, size=20_001, dtype=np.int32)
    draws = BoundedDraws(ours, bound)
    got = np.concatenate([draws.draw(n) for n in (1, 9_999, 10_001)])
    draws.close()
    np.testing.assert_array_equal(got, want)
    assert _state(ours) == _state(ref)


def test_fallback_for_other_generators_and_trivial_bound():
    for bg in (np.random.MT19937(3), np.random.Philox(3)):
        ref = np.random.Generator(type(bg)(3))
        with BoundedDraws(np.random.Generator(bg), 37) as draws:
            assert not draws.fast
            np.testing.assert_array_equal(
                draws.draw(50), ref.integers(0, 37, size=50, dtype=np.int32)
            )
    rng = np.random.default_rng(0)
    before = _state(rng)
    with BoundedDraws(rng, 1) as draws:
        assert (draws.draw(5) == 0).all()
    assert _state(rng) == before
    with pytest.raises(ValueError, match="bound"):
        BoundedDraws(rng, 0)


def test_compiled_generator_gives_pcg64s_words_and_state():
    # Two interleaved chains (even and odd steps): any count, same words, same state.
    for n in (0, 1, 2, 3, 4, 7, 1000, 1001):
        ref, ours = np.random.default_rng(n), np.random.default_rng(n)
        st = pcg_state(ours)
        words = np.zeros(n, dtype=np.uint64)
        _fill_words(st, words, n)
        np.testing.assert_array_equal(words, ref.bit_generator.random_raw(n))
        store_pcg_state(ours, st)
        assert _state(ours) == _state(ref)


def test_fill_bounded_in_a_loop_matches_numpy_with_rejections_and_a_pending_half():
    # What the fused kernel does: one fill per replicate, odd counts, a bound
    # whose rejections are frequent, into an unsigned output.
    bound, sizes = 2**30 + 3, [3, 1, 5, 2, 7, 4, 1]
    ref, ours = np.random.default_rng(11), np.random.default_rng(11)
    want = [ref.integers(0, bound, size=n, dtype=np.int32) for n in sizes]
    st = pcg_state(ours)
    words = np.empty(8, dtype=np.uint64)
    for n, w in zip(sizes, want, strict=True):
        out = np.empty(n, dtype=np.uint32)
        fill_bounded(st, bound, out, words)
        np.testing.assert_array_equal(out, w)
    store_pcg_state(ours, st)
    assert _state(ours) == _state(ref)
