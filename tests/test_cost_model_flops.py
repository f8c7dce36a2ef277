"""Cost-model formulas against counts done by hand (the arithmetic is in each test)."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.cost_model import (
    gemm_flops,
    gemm_intensity,
    gemm_min_bytes,
    mfu,
    training_flops,
    training_flops_per_token,
    transformer_params,
)


def test_gemm_flops_hand_count():
    # C[3,5] = A[3,7] @ B[7,5]: 15 outputs, each 7 multiplies and 7 adds
    assert gemm_flops(3, 5, 7) == 15 * (7 + 7) == 210


def test_gemm_min_bytes_hand_count():
    # A 3x7 = 21, B 7x5 = 35, C 3x5 = 15 elements: 71 elements
    assert gemm_min_bytes(3, 5, 7) == 71 * 4 == 284
    assert gemm_min_bytes(3, 5, 7, dtype_bytes=2) == 142
    assert gemm_intensity(3, 5, 7) == pytest.approx(210 / 284)


def test_gemm_counts_vectorise():
    out = gemm_flops(np.array([1, 2]), np.array([1, 1]), np.array([1, 3]))
    np.testing.assert_array_equal(out, [2 * 1 * 1 * 1, 2 * 2 * 1 * 3])


@pytest.mark.parametrize("bad", [0, -1, np.nan])
def test_gemm_rejects_nonpositive_sizes(bad):
    with pytest.raises(ValueError, match="m must be"):
        gemm_flops(bad, 2, 2)


def test_transformer_params_default_widths():
    # d_ff = 4d, d_attn = d: per layer 4 d^2 (attention) + 8 d^2 (FFN) = 12 d^2
    assert transformer_params(12, 768) == 12 * 12 * 768**2 == 84_934_656


def test_transformer_params_explicit_widths_and_embeddings():
    # 2 layers, d=4, d_ff=10: per layer 4*4*4 = 64 (attention) + 2*4*10 = 80 (FFN)
    assert transformer_params(2, 4, d_ff=10) == 2 * (64 + 80) == 288
    # embeddings: (vocab 100 + positions 8) * d 4 = 432
    assert (
        transformer_params(2, 4, d_ff=10, vocab_size=100, n_ctx=8, include_embeddings=True)
        == 288 + 432
    )


def test_training_flops_6nd():
    assert training_flops(1e6, 1e9) == 6 * 1e6 * 1e9


def test_training_flops_with_attention_term():
    # per token: 6N + 12 * n_layer * n_ctx * d_model = 6e6 + 12*2*128*64 = 6e6 + 196_608
    per_token = 6e6 + 196_608
    assert training_flops_per_token(1e6, n_layer=2, n_ctx=128, d_model=64) == per_token
    assert training_flops(1e6, 1000, n_layer=2, n_ctx=128, d_model=64) == per_token * 1000


def test_training_flops_needs_all_attention_sizes():
    with pytest.raises(ValueError, match="needs all"):
        training_flops(1e6, 10, n_layer=2)


def test_mfu_hand_count():
    # 1000 tokens/s * 6 * 1e6 FLOPs/token = 6e9 FLOP/s on a 1e10 FLOP/s machine
    assert mfu(1000, n_params=1e6, peak_flop_per_s=1e10) == pytest.approx(0.6)
    # with attention: 1000 * (6e6 + 12*1*10*10) / 1e10
    assert mfu(
        1000, n_params=1e6, peak_flop_per_s=1e10, n_layer=1, n_ctx=10, d_model=10
    ) == pytest.approx(1000 * (6e6 + 1200) / 1e10)
