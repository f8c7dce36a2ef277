"""The sparse FFN equals the dense FFN restricted to the active neurons."""

from __future__ import annotations

import pytest
import torch

from scalinglab.kernels.sparse_ffn import SparseFFN, random_token_mask, union_indices, warm_up
from scalinglab.models import Transformer, TransformerConfig

D, FF, B = 37, 101, 5  # odd sizes on purpose


def _weights(gated: bool, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    w_up = torch.randn(FF, D, generator=g) / D**0.5
    w_gate = torch.randn(FF, D, generator=g) / D**0.5 if gated else None
    w_down = torch.randn(D, FF, generator=g) / FF**0.5
    return w_up, w_down, w_gate


def _reference(x, w_up, w_down, w_gate, act, mask):
    """The dense FFN in float64, written out: W_down ((act(W_gate x) * W_up x) * mask)."""
    f = torch.relu if act == "relu" else torch.nn.functional.silu
    x, w_up, w_down = x.double(), w_up.double(), w_down.double()
    h = f(x @ w_gate.double().t()) * (x @ w_up.t()) if w_gate is not None else f(x @ w_up.t())
    return ((h * mask.double()) @ w_down.t()).float()


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    warm_up()


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["torch", "numba"])
@pytest.mark.parametrize("act", ["relu", "silu"])
@pytest.mark.parametrize("gated", [True, False])
@pytest.mark.parametrize("ratio", [0.0, 1 / FF, 0.03, 0.3, 0.77, 1.0])
def test_sparse_equals_masked_dense(impl, act, gated, ratio):
    w_up, w_down, w_gate = _weights(gated)
    ffn = SparseFFN(w_up, w_down, w_gate, activation=act, max_batch=B)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(B, D, generator=g)
    mask = random_token_mask(B, FF, ratio, generator=g)
    assert int(mask.sum(1).max()) == round(ratio * FF)
    ref = _reference(x, w_up, w_down, w_gate, act, mask)
    y = ffn.forward(x, union_indices(mask), token_mask=mask, impl=impl).clone()
    assert y.shape == (B, D)
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)
    if ratio == 1.0:  # everything active: the dense FFN itself
        torch.testing.assert_close(ffn.dense(x), ref, rtol=1e-5, atol=1e-5)
    if ratio == 0.0:
        assert torch.count_nonzero(y) == 0


@pytest.mark.parametrize("impl", ["torch", "numba"])
def test_shared_active_set_without_token_mask(impl):
    w_up, w_down, w_gate = _weights(True, seed=3)
    ffn = SparseFFN(w_up, w_down, w_gate, max_batch=3)
    x = torch.randn(3, D, generator=torch.Generator().manual_seed(2))
    active = torch.zeros(FF, dtype=torch.bool)
    active[[0, 7, 50, 100]] = True
    mask = active.expand(3, FF)
    ref = _reference(x, w_up, w_down, w_gate, "relu", mask)
    by_mask = ffn.forward(x, active, impl=impl).clone()
    by_index = ffn.forward(x, torch.tensor([100, 0, 50, 7]), impl=impl).clone()
    torch.testing.assert_close(by_mask, ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(by_index, ref, rtol=1e-5, atol=1e-5)


def test_buffers_are_reused_and_results_deterministic():
    ffn = SparseFFN(*_weights(True), max_batch=B)
    g = torch.Generator().manual_seed(4)
    x = torch.randn(B, D, generator=g)
    mask = random_token_mask(B, FF, 0.2, generator=g)
    idx = union_indices(mask)
    first = ffn.forward(x, idx, token_mask=mask)
    ptr = first.data_ptr()
    snapshot = first.clone()
    again = ffn.forward(x, idx, token_mask=mask)
    assert again.data_ptr() == ptr  # the output buffer, not a new tensor
    assert torch.equal(again, snapshot)
    n1 = ffn.forward(x, idx, token_mask=mask, impl="numba")
    n2 = ffn.forward(x, idx, token_mask=mask, impl="numba")
    assert torch.equal(n1, n2)


@pytest.mark.slow
def test_from_transformer_layer_matches_its_ffn():
    cfg = TransformerConfig(
        vocab_size=11, d_model=24, n_layer=1, n_head=2, ffn="gated", activation="silu", d_ff=55
    )
    model = Transformer(cfg, seed=0)
    block = model.blocks[0].ffn
    ffn = SparseFFN.from_module(block, max_batch=4)
    x = torch.randn(4, 24, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ref = block(x[None], layer=0, hook=None)[0]
    out = ffn.forward(x, torch.arange(55)).clone()
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-6)


def test_union_and_random_mask():
    mask = torch.tensor([[True, False, False, True], [False, False, True, True]])
    assert union_indices(mask).tolist() == [0, 2, 3]
    g = torch.Generator().manual_seed(0)
    m = random_token_mask(64, 200, 0.1, generator=g)
    assert (m.sum(1) == 20).all()
    frac = union_indices(m).numel() / 200
    assert abs(frac - (1 - 0.9**64)) < 0.02  # about 1 - (1 - a)^b


def test_input_validation():
    w_up, w_down, w_gate = _weights(True)
    with pytest.raises(ValueError):
        SparseFFN(w_up, w_down.t(), w_gate)
    with pytest.raises(ValueError):
        SparseFFN(w_up, w_down, w_gate, activation="gelu")
    ffn = SparseFFN(w_up, w_down, w_gate, max_batch=2)
    with pytest.raises(ValueError):
        ffn.forward(torch.zeros(3, D), torch.arange(3))
    with pytest.raises(ValueError):
        ffn.forward(torch.zeros(1, D), torch.tensor([FF]))
    with pytest.raises(ValueError):
        ffn.forward(torch.zeros(1, D), torch.arange(3), impl="cuda-magic")
    with pytest.raises(ValueError):
        random_token_mask(2, 10, 1.5, generator=torch.Generator())
