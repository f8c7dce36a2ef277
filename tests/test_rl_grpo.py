"""GRPO math on hand-made cases: advantages, clipping, aggregation, KL, sampling."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scalinglab.models import EOS, PAD, Transformer, TransformerConfig
from scalinglab.studies.rl.grpo import (
    GRPOConfig,
    completion_logprobs,
    completion_mask,
    group_advantages,
    grpo_loss,
    grpo_update,
    sample_completions,
)

S3 = math.sqrt(3.0)


def _model(seed=0, vocab=8):
    cfg = TransformerConfig(vocab_size=vocab, d_model=16, n_layer=1, n_head=2, max_seq_len=12)
    return Transformer(cfg, seed=seed)


def test_group_advantages_by_hand():
    r = torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    # group: centred by 0.25, divided by the group's std sqrt(0.25 * 0.75) = sqrt(3)/4
    torch.testing.assert_close(
        group_advantages(r, norm="group"),
        torch.tensor([[S3, -1 / S3, -1 / S3, -1 / S3], [0.0] * 4]),
        atol=1e-5,
        rtol=1e-5,
    )
    # batch: same centring, divided by the std of all 8 rewards sqrt(5/8 * 3/8)
    sd = math.sqrt(15.0) / 8.0
    torch.testing.assert_close(
        group_advantages(r, norm="batch"),
        torch.tensor([[0.75 / sd, -0.25 / sd, -0.25 / sd, -0.25 / sd], [0.0] * 4]),
        atol=1e-5,
        rtol=1e-5,
    )
    torch.testing.assert_close(
        group_advantages(r, norm="none"), torch.tensor([[0.75, -0.25, -0.25, -0.25], [0.0] * 4])
    )


@pytest.mark.parametrize("norm", ["group", "batch", "none"])
def test_all_equal_rewards_give_zero_advantage(norm):
    r = torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    assert torch.equal(group_advantages(r, norm=norm), torch.zeros(2, 3))


def test_group_and_batch_normalisation_differ_on_unequal_spreads():
    r = torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    g, b = group_advantages(r, norm="group"), group_advantages(r, norm="batch")
    assert torch.allclose(g.std(dim=1, correction=0), torch.ones(2), atol=1e-4)
    assert not torch.allclose(b.std(dim=1, correction=0), torch.ones(2), atol=1e-2)
    with pytest.raises(ValueError, match="normalisation"):
        group_advantages(r, norm="prompt")


def test_clipped_ratio_gets_no_gradient():
    ratios = torch.tensor([1.5, 1.1, 0.5, 0.5])
    adv = torch.tensor([1.0, 1.0, -1.0, 1.0])
    logp = torch.log(ratios)[:, None].clone().requires_grad_(True)
    old = torch.zeros(4, 1)
    loss, stats = grpo_loss(logp, old, adv, torch.ones(4, 1, dtype=torch.bool), clip_eps=0.2)
    # objectives: min(1.5, 1.2)=1.2 (clipped), 1.1, min(-0.5, -0.8)=-0.8 (clipped), 0.5
    assert loss.item() == pytest.approx(-(1.2 + 1.1 - 0.8 + 0.5) / 4)
    loss.backward()
    # d(-rho A)/d logp = -rho A, over 4 tokens; the clipped ones get exactly 0
    torch.testing.assert_close(logp.grad[:, 0], torch.tensor([0.0, -1.1 / 4, 0.0, -0.5 / 4]))
    assert stats["clip_frac"] == pytest.approx(0.5)


def test_token_and_sample_aggregation_on_unequal_lengths():
    mask = torch.tensor([[True, False, False], [True, True, True]])  # lengths 1 and 3
    adv = torch.tensor([1.0, -1.0])
    results = {}
    for agg in ("token", "sample"):
        logp = torch.zeros(2, 3, requires_grad=True)
        loss, _ = grpo_loss(logp, logp.detach(), adv, mask, agg=agg)  # ratio 1: l_t = -A
        loss.backward()
        results[agg] = (loss.item(), logp.grad.clone())
    # token: (-1 + 3) / 4 tokens; sample: mean(-1, +1)
    assert results["token"][0] == pytest.approx(0.5)
    assert results["sample"][0] == pytest.approx(0.0)
    torch.testing.assert_close(
        results["token"][1], torch.tensor([[-1 / 4, 0, 0], [1 / 4, 1 / 4, 1 / 4]])
    )
    torch.testing.assert_close(
        results["sample"][1], torch.tensor([[-1 / 2, 0, 0], [1 / 6, 1 / 6, 1 / 6]])
    )
    # equal lengths: the two aggregations coincide
    full = torch.ones(2, 3, dtype=torch.bool)
    z = torch.zeros(2, 3)
    assert grpo_loss(z, z, adv, full, agg="token")[0] == grpo_loss(z, z, adv, full, agg="sample")[0]


def test_kl_penalty_k3_estimator():
    logp = torch.zeros(1, 2)
    ref = torch.full((1, 2), math.log(2.0))  # q = log 2: e^q - q - 1 = 1 - log 2
    mask = torch.ones(1, 2, dtype=torch.bool)
    loss, stats = grpo_loss(logp, logp, torch.zeros(1), mask, logp_ref=ref, kl_coef=0.5)
    assert stats["kl"] == pytest.approx(1 - math.log(2.0))
    assert loss.item() == pytest.approx(0.5 * (1 - math.log(2.0)))
    assert grpo_loss(logp, logp, torch.zeros(1), mask, logp_ref=logp, kl_coef=0.5)[0] == 0


def test_completion_mask():
    comp = torch.tensor([[5, EOS, PAD], [EOS, PAD, PAD], [5, 6, 7]])
    mask, lengths = completion_mask(comp)
    assert lengths.tolist() == [2, 1, 3]
    assert mask.tolist() == [[True, True, False], [True, False, False], [True, True, True]]


def _plain_greedy(model, prompt, n):
    seq = prompt.clone()
    for _ in range(n):
        nxt = model(seq)[:, -1].argmax(-1, keepdim=True)
        seq = torch.cat([seq, nxt], dim=1)
    return seq[:, prompt.shape[1] :]


def test_sampling_greedy_matches_full_recompute_and_pads_after_eos():
    m = _model().eval()
    prompts = torch.tensor([[3, 4, 5], [6, 7, 3]])
    out = sample_completions(
        m,
        prompts,
        max_new_tokens=6,
        temperature=0,
        repeats=2,
        generator=torch.Generator().manual_seed(0),
    )
    ref = _plain_greedy(m, prompts, out.shape[1]).repeat_interleave(2, dim=0)
    for row, r in zip(out.tolist(), ref.tolist(), strict=True):
        cut = r.index(EOS) + 1 if EOS in r else len(r)
        assert row[:cut] == r[:cut]
        assert all(t == PAD for t in row[cut:])


def test_sampling_is_seeded_and_follows_the_softmax():
    m = _model(seed=1).eval()
    prompt = torch.tensor([[3, 4, 5]])
    draw = lambda s, n=1: sample_completions(  # noqa: E731
        m, prompt, max_new_tokens=n, repeats=4000, generator=torch.Generator().manual_seed(s)
    )
    assert torch.equal(draw(7, 4), draw(7, 4)) and not torch.equal(draw(7, 4), draw(8, 4))
    probs = torch.softmax(m(prompt)[0, -1], -1).detach().numpy()
    freq = np.bincount(draw(3)[:, 0].numpy(), minlength=len(probs)) / 4000
    se = np.sqrt(probs * (1 - probs) / 4000)
    assert np.all(np.abs(freq - probs) < 5 * se + 1e-3)


def test_completion_logprobs_match_manual():
    m = _model(seed=2).eval()
    prompts = torch.tensor([[3, 4], [5, 6]])
    comp = torch.tensor([[7, EOS, PAD], [3, 3, EOS]])
    got = completion_logprobs(m, prompts, comp)
    for i in range(2):
        for t in range(3):
            seq = torch.cat([prompts[i], comp[i, :t]])[None]
            want = torch.log_softmax(m(seq)[0, -1], -1)[comp[i, t]]
            assert got[i, t].item() == pytest.approx(want.item(), abs=1e-5)


def test_update_moves_towards_rewarded_completion():
    m = _model(seed=3)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.0)
    prompts = torch.tensor([[3, 4, 5]]).repeat(4, 1)
    comp = torch.tensor([[6, EOS], [7, EOS], [7, EOS], [7, EOS]])
    cfg = GRPOConfig(group_size=4, prompts_per_step=1, n_minibatches=1)
    before = completion_logprobs(m, prompts[:2], comp[:2]).sum(1).detach()
    stats = grpo_update(
        m,
        opt,
        prompts,
        comp,
        np.array([1.0, 0, 0, 0]),
        cfg,
        generator=torch.Generator().manual_seed(0),
    )
    after = completion_logprobs(m, prompts[:2], comp[:2]).sum(1).detach()
    assert after[0] > before[0] and after[1] < before[1]
    assert stats["zero_adv_frac"] == 0.0 and stats["updates"] == 1


def test_update_with_equal_rewards_leaves_weights_alone():
    m = _model(seed=4)
    w0 = [p.detach().clone() for p in m.parameters()]
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.0)
    prompts = torch.tensor([[3, 4, 5]]).repeat(4, 1)
    comp = torch.tensor([[6, EOS], [7, EOS], [6, 6], [7, EOS]])
    cfg = GRPOConfig(group_size=4, prompts_per_step=1, n_minibatches=2, kl_coef=0.0)
    stats = grpo_update(
        m, opt, prompts, comp, np.ones(4), cfg, generator=torch.Generator().manual_seed(0)
    )
    assert stats["zero_adv_frac"] == 1.0 and stats["extra_forwards"] == 1
    assert all(torch.equal(a, b) for a, b in zip(w0, m.parameters(), strict=True))


def test_config_validation():
    with pytest.raises(ValueError, match="loss_agg"):
        GRPOConfig(loss_agg="seq")
    with pytest.raises(ValueError, match="n_minibatches"):
        GRPOConfig(prompts_per_step=3, group_size=3, n_minibatches=2)
