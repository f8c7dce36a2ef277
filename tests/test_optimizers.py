"""Optimizer wrappers: each lowers the loss on a toy problem; Muon only on hidden matrices."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from scalinglab.models import Transformer
from scalinglab.training.optimizers import (
    OPTIMIZER_TABLE,
    STUDY_OPTIMIZERS,
    build_optimizer,
    default_hparams,
    hparam_grid,
    resolve_hparams,
    split_parameters,
)
from scalinglab.training.pretrain import llama_config

CFG = llama_config(d_model=16, n_layer=2, n_head=2, seq_len=16)


def _batch():
    g = torch.Generator().manual_seed(0)
    return torch.randint(3, 259, (4, 17), generator=g)


def _loss(model, x):
    logits = model(x[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))


def test_study_has_six_optimizers_with_three_matrix_methods():
    assert STUDY_OPTIMIZERS == ("adamw", "nadamw", "muon", "soap", "lion", "scion")
    fam = {o: OPTIMIZER_TABLE[o]["family"] for o in STUDY_OPTIMIZERS}
    assert {o for o, f in fam.items() if f == "matrix"} == {"muon", "soap", "scion"}


@pytest.mark.parametrize("name", list(OPTIMIZER_TABLE))
def test_defaults_lie_on_the_grid_and_grid_has_common_knobs(name):
    hp, grid = default_hparams(name), hparam_grid(name)
    assert {"lr", "weight_decay", "warmup"} <= set(grid)
    assert len(grid) >= 4  # plus at least one of betas / momentum / the optimizer's own knobs
    for k, values in grid.items():
        assert hp[k] in values, f"{name}: default {k}={hp[k]} not in {values}"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(OPTIMIZER_TABLE))
def test_each_optimizer_lowers_the_loss_on_a_toy_problem(name):
    model = Transformer(CFG, seed=0)
    opt = build_optimizer(name, model)
    x = _batch()
    with torch.no_grad():
        before = float(_loss(model, x))
    for _ in range(3):  # SOAP spends its first step building its preconditioner
        loss = _loss(model, x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        after = float(_loss(model, x))
    assert after < before - 0.01, (name, before, after)


def test_muon_gets_exactly_the_hidden_matrices():
    model = Transformer(CFG, seed=0)
    bundle = build_optimizer("muon", model)
    muon, adam = bundle.optimizers
    assert isinstance(muon, torch.optim.Muon) and isinstance(adam, torch.optim.AdamW)
    muon_ids = {id(p) for g in muon.param_groups for p in g["params"]}
    adam_ids = {id(p) for g in adam.param_groups for p in g["params"]}
    hidden = {id(p) for n, p in model.named_parameters() if n.startswith("blocks.") and p.ndim == 2}
    assert muon_ids == hidden and len(hidden) == 2 * 5  # qkv, proj, up, gate, down per layer
    assert not muon_ids & adam_ids
    assert muon_ids | adam_ids == {id(p) for p in model.parameters()}
    for name, p in model.named_parameters():
        if id(p) in muon_ids:
            assert p.ndim == 2 and "emb" not in name and "lm_head" not in name


def test_parameter_roles_and_weight_decay_only_on_matrices():
    model = Transformer(CFG, seed=0)
    roles = split_parameters(model)
    assert [n for n, _ in roles["embedding"]] == ["tok_emb.weight"]
    assert [n for n, _ in roles["head"]] == ["lm_head.weight"]
    assert all(p.ndim == 1 for _, p in roles["vector"])
    opt = build_optimizer("adamw", model, {"weight_decay": 0.2}).optimizers[0]
    for g in opt.param_groups:
        assert g["weight_decay"] == (0.2 if g["params"][0].ndim == 2 else 0.0)


def test_lr_factor_scales_every_group_from_its_base():
    model = Transformer(CFG, seed=0)
    b = build_optimizer("muon", model, {"lr": 0.01, "adam_lr_ratio": 2.0})
    b.set_lr_factor(0.5)
    lrs = sorted({g["lr"] for o in b.optimizers for g in o.param_groups})
    assert lrs == pytest.approx([0.005, 0.01])


def test_unknown_names_are_rejected():
    with pytest.raises(ValueError, match="unknown optimizer"):
        default_hparams("sgdx")
    with pytest.raises(ValueError, match="no hyperparameter"):
        resolve_hparams("adamw", {"momentum": 0.9})
