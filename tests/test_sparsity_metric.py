"""PPL-p% sparsity: CETT by hand, the threshold search, the outer search, baselines."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from scalinglab.models import Transformer, TransformerConfig
from scalinglab.studies.sparsity.cett import (
    LayerCETT,
    bracket_search,
    cett,
    contributions,
    down_column_norms,
    threshold_policy,
    topk_policy,
)
from scalinglab.studies.sparsity.ppl_sparsity import (
    dense_pass,
    evaluate_sparse,
    ppl_sparsity,
    sparsity_report,
)

# A hand-made layer: D = 2, F = 3; column norms of W_down are 1, 2, sqrt(2).
W_DOWN = torch.tensor([[1.0, 0.0, 1.0], [0.0, 2.0, 1.0]])
H = torch.tensor(
    [
        [1.0, 0.25, 2.0],  # contributions 1, 0.5, 2 sqrt(2)
        [-0.5, 1.0, 0.0],
    ]
)  # contributions 0.5, 2, 0


def test_contributions_by_hand():
    c = contributions(H, W_DOWN.norm(dim=0))
    expected = torch.tensor([[1.0, 0.5, 2.0 * math.sqrt(2.0)], [0.5, 2.0, 0.0]])
    assert torch.allclose(c, expected)


def test_cett_by_hand():
    # W_down h: token 1 -> (1 + 2, 0.5 + 2) = (3, 2.5); token 2 -> (-0.5, 2).
    full1, full2 = math.sqrt(3.0**2 + 2.5**2), math.sqrt(0.5**2 + 2.0**2)
    # t = 0.75: token 1 drops neuron 1 (tail 0.25 * (0, 2) = (0, 0.5), norm 0.5);
    # token 2 drops neurons 0 and 2 (tail -0.5 * (1, 0) + 0, norm 0.5).
    assert cett(H, W_DOWN, 0.75) == pytest.approx((0.5 / full1 + 0.5 / full2) / 2, rel=1e-6)
    # t = 1.5: token 1 drops neurons 0 and 1 (tail (1, 0) + (0, 0.5), norm sqrt(1.25));
    # token 2 still drops only neurons 0 and 2.
    assert cett(H, W_DOWN, 1.5) == pytest.approx(
        (math.sqrt(1.25) / full1 + 0.5 / full2) / 2, rel=1e-6
    )
    # t = 0 drops only exact zeros (nothing to lose); above every contribution, all.
    assert cett(H, W_DOWN, 0.0) == 0.0
    assert cett(H, W_DOWN, 3.0) == pytest.approx(1.0, rel=1e-6)


def test_cett_token_with_zero_output_counts_zero():
    h = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    # token 1 has no output; token 2's only neuron is dropped at t = 2 (ratio 1).
    assert cett(h, W_DOWN, 2.0) == pytest.approx(0.5)


def test_threshold_policy_by_hand():
    active = threshold_policy([0.75], [W_DOWN.norm(dim=0)])(0, H)
    assert active.tolist() == [[True, False, True], [False, True, False]]


def _random_layer(n=3000, f=48, d=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    h = torch.relu(torch.randn(n, f, generator=g)) * torch.randn(n, f, generator=g)
    return h, torch.randn(d, f, generator=g)


def test_threshold_search_hits_target_and_is_monotone():
    h, w = _random_layer()
    lc = LayerCETT(h, w)
    targets = [0.02, 0.05, 0.1, 0.2, 0.4]
    found = [lc.threshold(t, tol=1e-3) for t in targets]
    for t, th in zip(targets, found, strict=True):
        v = cett(h, w, th)  # fresh evaluation, not the memo
        assert v <= t and t - v <= 1e-3
    assert all(a < b for a, b in zip(found, found[1:], strict=False))
    # a target at or above CETT of dropping everything gives the largest contribution
    assert lc.threshold(1.5) == pytest.approx(float(contributions(h, w.norm(dim=0)).max()))
    with pytest.raises(ValueError):
        lc.threshold(-0.1)


def test_bracket_search_root_and_step_function():
    root = 0.2 ** (1 / 3)
    x = bracket_search(lambda x: x**3 - 0.2, 0.0, 1.0, -0.2, 0.8, x_tol=1e-10, f_tol=0.0)
    assert x <= root and root - x < 1e-9
    step = bracket_search(
        lambda x: math.floor(10 * x) - 3.5, 0.0, 1.0, -3.5, 6.5, x_tol=1e-6, f_tol=0.0
    )
    assert 0.4 - 1e-6 <= step < 0.4  # the largest feasible point of a step function
    with pytest.raises(ValueError):
        bracket_search(lambda x: x, 0.0, 1.0, 0.5, 1.0, x_tol=1e-3, f_tol=0.0)


VOCAB = 40


@functools.cache
def _model(activation: str = "relu", d_ff: int = 45) -> Transformer:
    """A random gated-FFN model with large weights, so that its FFN shapes the logits."""
    cfg = TransformerConfig(
        vocab_size=VOCAB,
        d_model=16,
        n_layer=2,
        n_head=2,
        d_ff=d_ff,
        max_seq_len=32,
        norm="rmsnorm",
        pos="rotary",
        ffn="gated",
        activation=activation,
    )
    m = Transformer(cfg, seed=0)
    with torch.no_grad():
        for p in m.parameters():
            if p.ndim == 2:
                p.mul_(10.0)
    return m.eval()


@functools.cache
def _sampled(activation: str, d_ff: int, n: int, t: int, seed: int) -> torch.Tensor:
    m = _model(activation, d_ff)
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(3, VOCAB, (n, 1), generator=g)
    with torch.no_grad():
        for _ in range(t):
            probs = torch.softmax(m(x)[:, -1].double(), -1)
            x = torch.cat([x, torch.multinomial(probs, 1, generator=g)], 1)
    return x


def _windows(activation="relu", d_ff=45, n=8, t=24, seed=1):
    """Windows (n, t + 1) sampled from the dense model itself: the FFN is needed to fit them."""
    return _sampled(activation, d_ff, n, t, seed)


@pytest.mark.parametrize("activation", ["relu", "silu"])
def test_the_test_model_needs_its_ffn(activation):
    m, w = _model(activation), _windows(activation)
    dense = evaluate_sparse(m, w, None)
    off = evaluate_sparse(m, w, topk_policy(0.0, down_column_norms(m)))
    assert off.nll > dense.nll + 0.1


def test_dense_evaluation_matches_plain_cross_entropy():
    m, w = _model(), _windows()
    ev = evaluate_sparse(m, w, None, batch_size=3)
    with torch.no_grad():
        ref = F.cross_entropy(m(w[:, :-1]).flatten(0, 1), w[:, 1:].flatten()).item()
    assert ev.nll == pytest.approx(ref, rel=1e-5)
    assert ev.n_tokens == w[:, 1:].numel()
    hid = m.ffn_hiddens(w[:, :-1])
    assert ev.natural_ratio[0] == pytest.approx(float((hid[0] != 0).float().mean()))


def test_topk_gives_the_stated_ratio():
    m, w = _model(d_ff=45), _windows()
    ev = evaluate_sparse(m, w, topk_policy(0.25, down_column_norms(m)))
    assert np.all(ev.layer_ratio == 11 / 45)  # round(0.25 * 45) = 11 of 45 per token
    zero = evaluate_sparse(m, w, topk_policy(0.0, down_column_norms(m)))
    assert np.all(zero.layer_ratio == 0.0)
    with pytest.raises(ValueError):
        topk_policy(1.5, down_column_norms(m))


def test_fixed_threshold_gives_the_counted_ratio():
    m, w = _model(), _windows()
    norms = down_column_norms(m)
    h0 = m.ffn_hiddens(w[:, :-1])[0]  # layer 0 sees the same input truncated or not
    t = float(contributions(h0, norms[0]).median())
    ev = evaluate_sparse(m, w, threshold_policy([t, t], norms))
    assert ev.layer_ratio[0] == pytest.approx(
        float((contributions(h0, norms[0]) > t).float().mean())
    )


@pytest.mark.parametrize("activation", ["relu", "silu"])
@pytest.mark.parametrize("method", ["cett", "topk", "threshold"])
def test_outer_search_respects_budget_and_is_tight(activation, method):
    m, w = _model(activation), _windows(activation)
    res = ppl_sparsity(m, w, p=1.0, method=method, knob_tol=1e-3, ppl_tol=2e-4)
    budget = math.log1p(0.01)
    assert res.ppl_ratio <= 1.01 + 1e-12
    assert 0.0 < res.activation_ratio < 1.0
    assert res.activation_ratio == pytest.approx(float(np.mean(res.layer_ratio)))
    # tight: within ppl_tol of the budget, or the other end of the bracket breaks it
    over = res.extra["infeasible_knob"]
    assert over is not None
    norms = down_column_norms(m)
    if method == "cett":
        th = res.extra["infeasible_thresholds"]
        assert np.all(np.asarray(th) >= res.thresholds)  # a larger target, larger thresholds
        pol = threshold_policy(th, norms)
    elif method == "topk":
        pol = topk_policy(over, norms)
    else:
        pol = threshold_policy([over, over], norms)
    worse = evaluate_sparse(m, w, pol)
    assert worse.nll - res.dense_nll > budget
    knob_range = 1.0
    if method == "threshold":  # the threshold is searched in [0, largest contribution]
        knob_range = max(
            float(contributions(h, n).max())
            for h, n in zip(m.ffn_hiddens(w[:, :-1]), norms, strict=True)
        )
    gap = abs(over - res.knob) / knob_range
    assert budget - math.log(res.ppl_ratio) <= 2e-4 or gap <= max(1e-3, 0.5 / 45) + 1e-12


def test_bigger_budget_is_sparser_and_results_are_deterministic():
    m, w = _model("silu"), _windows("silu")
    tight = ppl_sparsity(m, w, p=0.5)
    loose = ppl_sparsity(m, w, p=10.0)
    assert loose.activation_ratio < tight.activation_ratio
    again = ppl_sparsity(m, w, p=0.5)
    assert again.to_dict() == tight.to_dict()


def test_report_shares_the_dense_pass():
    m, w = _model(), _windows()
    rep = sparsity_report(m, w, methods=("cett", "topk"))
    dense, _ = dense_pass(m, w)
    assert set(rep) == {"cett", "topk"}
    assert all(r.dense_nll == dense.nll for r in rep.values())
    with pytest.raises(ValueError):
        ppl_sparsity(m, w, method="magic")
    with pytest.raises(ValueError):
        ppl_sparsity(m, w, p=-1.0)
