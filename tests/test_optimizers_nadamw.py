"""The paper's NAdamW against a reference step written out by hand, and the embedding/head rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scalinglab.models.transformer import Transformer, TransformerConfig
from scalinglab.training.optimizers import (
    EMBED_HEAD_HPARAMS,
    NAdamW,
    build_optimizer,
    resolve_hparams,
)


def _reference(p0, grads, *, lr, b1, b2, eps, wd):
    """AlgoPerf's NAdamW (Dahl et al. 2023, Table 1) in plain Python floats, per element."""
    p = [float(x) for x in p0]
    m = [0.0] * len(p)
    v = [0.0] * len(p)
    out = []
    for t, g in enumerate(grads, start=1):
        for i, gi in enumerate(g):
            p[i] = p[i] * (1.0 - lr * wd)  # decoupled weight decay
            m[i] = b1 * m[i] + (1.0 - b1) * gi
            v[i] = b2 * v[i] + (1.0 - b2) * gi * gi
            m_hat = (b1 * m[i] + (1.0 - b1) * gi) / (1.0 - b1**t)  # constant Nesterov momentum
            v_hat = v[i] / (1.0 - b2**t)
            p[i] = p[i] - lr * m_hat / (math.sqrt(v_hat) + eps)
        out.append(list(p))
    return out


def test_nadamw_matches_the_reference_step_for_a_few_steps():
    p0 = [0.5, -1.25, 2.0, 0.0]
    rng = np.random.default_rng(3)
    grads = rng.normal(size=(5, 4)).tolist()
    hp = {"lr": 0.03, "b1": 0.9, "b2": 0.95, "eps": 1e-8, "wd": 0.1}
    want = _reference(p0, grads, **hp)
    p = torch.nn.Parameter(torch.tensor(p0, dtype=torch.float64))
    opt = NAdamW([p], lr=hp["lr"], betas=(hp["b1"], hp["b2"]), eps=hp["eps"], weight_decay=hp["wd"])
    for t, g in enumerate(grads):
        p.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
        np.testing.assert_allclose(p.detach().numpy(), want[t], rtol=1e-12, atol=1e-14)


def test_first_step_written_out():
    # t = 1: m = (1 - b1) g, v = (1 - b2) g^2, look-ahead = (1 - b1)(1 + b1) g,
    # bias-corrected by 1 - b1 -> (1 + b1) g; v_hat = g^2 -> update = lr (1 + b1) sign(g)
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    p.grad = torch.tensor([0.3, -4.0], dtype=torch.float64)
    NAdamW([p], lr=0.1, betas=(0.9, 0.99), eps=0.0, weight_decay=0.5).step()
    decayed = np.array([1.0, -2.0]) * (1 - 0.1 * 0.5)
    np.testing.assert_allclose(p.detach().numpy(), decayed - 0.1 * 1.9 * np.array([1.0, -1.0]))


def test_nadamw_is_not_torch_nadam():
    # torch's NAdam warms its momentum up (mu_t = beta1 (1 - 0.5 0.96^(t psi))): other steps
    grads = [[1.0, -0.5], [0.2, 0.4], [-0.3, 0.1]]
    p, q = (torch.nn.Parameter(torch.tensor([0.1, 0.2], dtype=torch.float64)) for _ in "pq")
    ours = NAdamW([p], lr=0.01, betas=(0.9, 0.95))
    theirs = torch.optim.NAdam([q], lr=0.01, betas=(0.9, 0.95), decoupled_weight_decay=True)
    for g in grads:
        p.grad = q.grad = torch.tensor(g, dtype=torch.float64)
        ours.step()
        theirs.step()
    assert float((p - q).detach().abs().max()) > 1e-4


def test_nadamw_rejects_bad_settings():
    with pytest.raises(ValueError, match="betas"):
        NAdamW([torch.nn.Parameter(torch.zeros(2))], betas=(1.0, 0.9))


CFG = TransformerConfig(vocab_size=20, d_model=16, n_layer=1, n_head=2, max_seq_len=8)
EH = {"eh_lr": 0.002, "eh_beta1": 0.8, "eh_beta2": 0.99, "eh_weight_decay": 0.05}


@pytest.mark.parametrize("name", ["nadamw_paper", "muon", "soap"])
def test_embedding_head_rule_gives_the_rest_to_adamw(name):
    model = Transformer(CFG, seed=0)
    bundle = build_optimizer(name, model, EH)
    adam = bundle.optimizers[-1]
    assert isinstance(adam, torch.optim.AdamW)
    hidden = {id(p) for n, p in model.named_parameters() if n.startswith("blocks.") and p.ndim == 2}
    theirs = {id(p) for g in adam.param_groups for p in g["params"]}
    ours = {id(p) for o in bundle.optimizers[:-1] for g in o.param_groups for p in g["params"]}
    assert ours == hidden
    assert theirs == {id(p) for p in model.parameters()} - hidden
    for g in adam.param_groups:
        assert g["lr"] == 0.002 and g["betas"] == (0.8, 0.99)
        assert g["weight_decay"] in (0.05, 0.0)


def test_embedding_head_rule_all_or_none_and_not_for_adamw():
    with pytest.raises(ValueError, match="embedding/head"):
        resolve_hparams("muon", {"eh_lr": 0.01})
    with pytest.raises(ValueError, match="embedding/head"):
        resolve_hparams("adamw", EH)
    assert set(EMBED_HEAD_HPARAMS) <= set(resolve_hparams("soap", EH))
    assert not set(EMBED_HEAD_HPARAMS) & set(resolve_hparams("soap"))
