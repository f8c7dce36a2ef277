"""The shared transformer: shapes, causality, KV cache, parameter counts, hooks, seeding."""

from __future__ import annotations

import itertools

import pytest
import torch

from scalinglab.cost_model.flops import transformer_params
from scalinglab.models import Transformer, TransformerConfig

VOCAB = 17
ARCHS = [
    {},
    {
        "norm": "rmsnorm",
        "pos": "rotary",
        "ffn": "gated",
        "activation": "silu",
        "tie_embeddings": True,
    },
    {"bias": True, "activation": "relu", "ffn": "gated"},
    {"pos": "rotary", "bias": True, "d_ff": 40, "tie_embeddings": True},
]


def _model(seed: int = 0, **kw) -> Transformer:
    cfg = TransformerConfig(vocab_size=VOCAB, d_model=32, n_layer=2, n_head=4, max_seq_len=16, **kw)
    return Transformer(cfg, seed=seed).eval()


def _tokens(b: int, t: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (b, t), generator=torch.Generator().manual_seed(seed))


@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCHS)
def test_shapes_and_causality(arch):
    m = _model(**arch)
    idx = _tokens(3, 10)
    logits = m(idx)
    assert logits.shape == (3, 10, VOCAB)
    changed = idx.clone()
    changed[:, 6] = (changed[:, 6] + 1) % VOCAB
    out2 = m(changed)
    torch.testing.assert_close(out2[:, :6], logits[:, :6], rtol=0, atol=1e-6)
    assert (out2[:, 6:] - logits[:, 6:]).abs().max() > 1e-4  # the future did change


@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCHS)
def test_kv_cache_matches_full_forward(arch):
    m = _model(**arch)
    idx = _tokens(2, 12)
    full = m(idx)
    cache = m.new_cache(2)
    parts = [m(idx[:, :5], cache=cache)]  # prefill
    parts += [m(idx[:, t : t + 1], cache=cache) for t in range(5, 9)]  # one token at a time
    parts.append(m(idx[:, 9:], cache=cache))  # several new tokens on a non-empty cache
    assert cache.length == 12
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=1e-5, atol=1e-5)


def test_cache_repeat_interleave_continues_each_row():
    m = _model()
    idx = _tokens(2, 6)
    cache = m.new_cache(2)
    m(idx[:, :4], cache=cache)
    big = cache.repeat_interleave(3)
    nxt = idx[:, 4:5].repeat_interleave(3, dim=0)
    out = m(nxt, cache=big)[:, -1]
    ref = m(idx[:, :5])[:, -1].repeat_interleave(3, dim=0)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


def test_too_long_sequence_is_rejected():
    m = _model()
    with pytest.raises(ValueError, match="max_seq_len"):
        m(_tokens(1, 17))


@pytest.mark.parametrize(("arch", "non_emb"), list(itertools.product(ARCHS, [True, False])))
def test_param_count_formula_matches_numel(arch, non_emb):
    m = _model(**arch)
    counted = {id(p): p.numel() for p in m.parameters()}  # tied weights once
    if non_emb:
        for mod in (m.tok_emb, m.pos_emb, m.lm_head):
            for p in [] if mod is None else mod.parameters():
                counted.pop(id(p), None)
    assert m.n_params(non_embedding=non_emb) == sum(counted.values())


def test_param_count_agrees_with_cost_model():
    # Kaplan's N counts weight matrices only: ours minus the norm weights.
    m = _model()
    norms = sum(p.numel() for n, p in m.named_parameters() if "norm" in n)
    assert m.n_params() - norms == transformer_params(2, 32)
    gated = _model(ffn="gated", d_ff=48)
    norms = sum(p.numel() for n, p in gated.named_parameters() if "norm" in n)
    # a gated FFN has three d x d_ff matrices: like a plain FFN of width 1.5 d_ff
    assert gated.n_params() - norms == transformer_params(2, 32, d_ff=72)


def test_default_ffn_widths():
    assert TransformerConfig(vocab_size=5, d_model=48).ffn_width == 192
    assert TransformerConfig(vocab_size=5, d_model=48, ffn="gated").ffn_width == 128


def test_ffn_hook_reads_and_replaces_hidden():
    m = _model(ffn="gated", activation="relu")
    idx = _tokens(2, 7)
    seen = []
    handle = m.blocks[1].norm2.register_forward_hook(lambda mod, inp, out: seen.append(out))
    hiddens = m.ffn_hiddens(idx)
    handle.remove()
    assert [h.shape for h in hiddens] == [(2, 7, m.cfg.ffn_width)] * 2
    ffn = m.blocks[1].ffn
    manual = torch.relu(seen[0] @ ffn.gate.weight.T) * (seen[0] @ ffn.up.weight.T)
    torch.testing.assert_close(hiddens[1], manual)
    assert (hiddens[1] == 0).float().mean() > 0.2  # ReLU gating: many exact zeros
    # zeroing every h_i must equal a model whose W_down is zero
    zeroed = m(idx, ffn_hook=lambda layer, h: torch.zeros_like(h))
    m2 = _model(ffn="gated", activation="relu")
    with torch.no_grad():
        for blk in m2.blocks:
            blk.ffn.down.weight.zero_()
    torch.testing.assert_close(zeroed, m2(idx))
    assert (zeroed - m(idx)).abs().max() > 1e-4


@pytest.mark.slow
def test_seeded_init_is_reproducible_and_leaves_global_rng_alone():
    state = torch.random.get_rng_state()
    a, b, c = _model(seed=3), _model(seed=3), _model(seed=4)
    assert torch.equal(state, torch.random.get_rng_state())
    for (na, pa), (_, pb), (_, pc) in zip(
        a.named_parameters(), b.named_parameters(), c.named_parameters(), strict=True
    ):
        assert torch.equal(pa, pb), na
        if pa.dim() == 2:
            assert not torch.equal(pa, pc), na


@pytest.mark.slow
def test_dropout_masks_come_from_the_model_generator():
    outs = []
    for _ in range(2):
        m = _model(seed=5, dropout=0.3).train()
        outs.append(m(_tokens(2, 8)))
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)
    m.eval()
    torch.testing.assert_close(m(_tokens(2, 8)), m(_tokens(2, 8)))  # no dropout in eval
    assert (outs[0] - m(_tokens(2, 8))).abs().max() > 1e-4


@pytest.mark.parametrize(
    "bad",
    [
        {"d_model": 30, "n_head": 4},
        {"norm": "batchnorm"},
        {"activation": "tanh"},
        {"dropout": 1.0},
        {"pos": "rotary", "d_model": 12, "n_head": 4},
    ],
)
def test_config_validation(bad):
    with pytest.raises(ValueError, match="TransformerConfig"):
        TransformerConfig(vocab_size=VOCAB, **bad)
