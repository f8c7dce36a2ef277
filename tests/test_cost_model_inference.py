"""Generation, KV-cache, Kinetics and sparse-FFN costs against hand counts."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.cost_model import (
    HardwareRecord,
    attention_context_sum,
    generation_flops,
    generation_kv_read_bytes,
    kinetics_cost,
    kv_cache_bytes,
    sparse_ffn_bytes,
    sparse_ffn_flops,
    sparse_ffn_speedup,
    union_activation_ratio,
)


def test_attention_context_sum_counts_positions():
    # prompt of 5; generated tokens attend to 6, 7 and 8 positions
    assert attention_context_sum(5, 3) == 6 + 7 + 8


def test_generation_flops_weights_only():
    assert generation_flops(1e6, 10) == 2 * 1e6 * 10


def test_generation_flops_with_attention():
    # 2 N per token: 2e6 * 3; attention 4 * n_layer 2 * d_attn 8 * (6 + 7 + 8)
    assert generation_flops(1e6, 3, prompt_len=5, n_layer=2, d_attn=8) == 6e6 + 4 * 2 * 8 * 21


def test_kv_cache_bytes_hand_count():
    # K and V (2) * 2 layers * 10 positions * 4 heads * 8 dims * batch 3 * 2 bytes
    assert (
        kv_cache_bytes(2, 10, n_kv_heads=4, head_dim=8, batch=3, dtype_bytes=2)
        == (2 * 2 * 10 * 4 * 8 * 3 * 2)
        == 7680
    )


def test_generation_kv_read_bytes_hand_count():
    # prompt 3, 2 tokens: reads caches of 4 and 5 positions; 16 bytes per position
    # (K and V, 1 layer, 1 head, 4 dims, 2 bytes)
    assert (
        generation_kv_read_bytes(1, 2, prompt_len=3, n_kv_heads=1, head_dim=4, dtype_bytes=2)
        == (4 + 5) * 16
    )


def test_kinetics_cost_matches_their_formula_by_hand():
    # Kinetics dense_cost with N=1e9, L_in=100, L_out=1000, 2 layers, 4 q heads,
    # 2 kv heads, head dim 8 (their head_dim = 8 * 2 layers = 16), 3 samples:
    # compute = 3 * (2*1e9*1000 + 2*(2*100 + 1000)*1000*4*16)
    compute = 3 * (2e12 + 2 * 1200 * 1000 * 64)
    # memory = 2 * (2*100 + 1000*3) * 1000 * 2 * 16 bytes
    memory = 2 * 3200 * 1000 * 32
    cost = kinetics_cost(
        1e9, 100, 1000, n_layer=2, n_q_heads=4, n_kv_heads=2, head_dim=8, n_samples=3
    )
    assert cost.compute_flops == compute == 6.0004608e12
    assert cost.memory_bytes == memory == 204_800_000
    assert cost.eflops == pytest.approx(compute + 562.5 * memory)


def test_kinetics_param_bytes_option():
    base = kinetics_cost(1e6, 10, 20, n_layer=1, n_q_heads=1, n_kv_heads=1, head_dim=4)
    more = kinetics_cost(
        1e6, 10, 20, n_layer=1, n_q_heads=1, n_kv_heads=1, head_dim=4, include_param_bytes=True
    )
    assert more.memory_bytes - base.memory_bytes == 2 * 1e6 * 20


def test_union_activation_ratio():
    assert union_activation_ratio(0.1, 1) == pytest.approx(0.1)
    assert union_activation_ratio(0.1, 2) == pytest.approx(1 - 0.9 * 0.9)
    with pytest.raises(ValueError, match="activation_ratio"):
        union_activation_ratio(1.5, 1)


def test_sparse_ffn_flops_and_bytes_hand_count():
    # d_model 4, d_ff 10, a = 0.5, batch 2: union 1 - 0.25 = 0.75
    # FLOPs: 2 (FMA) * 2 matrices * 4 * 10 * 0.75 * 2 tokens = 240
    assert sparse_ffn_flops(4, 10, activation_ratio=0.5, batch=2) == 240
    # per-token sets instead of the union: 2 * 2 * 4 * 10 * 0.5 * 2 = 160
    assert sparse_ffn_flops(4, 10, activation_ratio=0.5, batch=2, union=False) == 160
    # bytes: 4 * (2 * 4 * 10 * 0.75 weights + 2 * 2 * 4 activations) = 4 * 76
    assert sparse_ffn_bytes(4, 10, activation_ratio=0.5, batch=2) == 304


def test_sparse_ffn_speedup_is_about_one_over_a_at_batch_one():
    hw = HardwareRecord("toy", peak_flop_per_s=2e11, mem_bytes_per_s=3e10)
    s = sparse_ffn_speedup(4096, 16384, activation_ratio=0.1, hw=hw)
    assert 9.0 < s <= 10.0  # memory-bound; activations make it a little under 1/a
    big_batch = sparse_ffn_speedup(4096, 16384, activation_ratio=0.1, hw=hw, batch=64)
    assert big_batch < 1.01  # the union of 64 tokens is ~all neurons
    np.testing.assert_allclose(
        sparse_ffn_speedup(4096, 16384, activation_ratio=np.array([1.0]), hw=hw), [1.0]
    )
