"""Pretraining runs: budgets, the learning-rate schedule, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scalinglab.models.corpus import CorpusConfig
from scalinglab.training.pretrain import (
    Checkpoint,
    PretrainConfig,
    llama_config,
    lr_factor,
    run_pretrain,
)

CORPUS = CorpusConfig(sources=("pydoc_topics",), heldout_fraction=0.2)
MODEL = llama_config(d_model=8, n_layer=1, n_head=2, seq_len=16)


@pytest.mark.parametrize("schedule", ["cosine", "wsd"])
@pytest.mark.parametrize("total,warmup", [(10, 0), (37, 4), (200, 20), (1, 0)])
def test_schedule_ends_exactly_at_the_budget(schedule, total, warmup):
    f = [
        lr_factor(s, total, warmup_steps=warmup, schedule=schedule, min_lr_ratio=0.1)
        for s in range(total)
    ]
    assert f[-1] == pytest.approx(0.1, abs=1e-12)
    if total > 1:
        assert min(f[warmup:]) == pytest.approx(0.1, abs=1e-12)
        assert f[-2] > 0.1
    if warmup:
        assert f[warmup - 1] == pytest.approx(1.0)
        assert all(a < b for a, b in zip(f[: warmup - 1], f[1:warmup], strict=True))
    after = f[warmup:]
    assert all(a >= b for a, b in zip(after[:-1], after[1:], strict=True))
    with pytest.raises(ValueError):
        lr_factor(total, total)


def test_wsd_is_stable_then_decays():
    f = [lr_factor(s, 100, warmup_steps=0, schedule="wsd", decay_fraction=0.2) for s in range(100)]
    assert f[:80] == [1.0] * 80 and f[-1] == 0.0 and f[85] < 1.0


def test_budget_is_chinchilla_multiple_of_non_embedding_params():
    n = MODEL.n_params()
    for mult in (1, 2, 4, 8):
        cfg = PretrainConfig(model=MODEL, data_multiple=mult, batch_size=4, corpus=CORPUS)
        assert cfg.target_tokens == mult * 20 * n
        tokens = cfg.steps * 4 * 16
        assert abs(tokens - mult * 20 * n) <= 4 * 16 / 2
        assert cfg.eval_steps[-1] == cfg.steps


def _cfg(**kw):
    base = dict(
        model=MODEL,
        optimizer="adamw",
        hparams={"lr": 1e-2},
        data_multiple=1.0,
        batch_size=4,
        n_evals=3,
        eval_tokens=256,
        final_eval_tokens=512,
        corpus=CORPUS,
    )
    return PretrainConfig(**{**base, **kw})


@pytest.mark.slow
def test_same_seed_gives_identical_losses_and_training_lowers_loss():
    a = run_pretrain(_cfg(), seed=1, num_threads=1)
    b = run_pretrain(_cfg(), seed=1, num_threads=1)
    c = run_pretrain(_cfg(), seed=2, num_threads=1)
    assert a.status == "ok"
    np.testing.assert_array_equal(a.eval_loss, b.eval_loss)
    assert a.final_loss == b.final_loss
    assert not np.array_equal(a.eval_loss, c.eval_loss)
    assert a.final_loss < math.log(MODEL.vocab_size)  # better than uniform
    assert a.eval_loss[-1] < a.eval_loss[0]
    assert a.eval_lr[-1] == 0.0  # the schedule ended at the budget
    assert a.tokens == a.steps * 4 * 16 and a.tokens_per_s > 0 and a.seconds_per_step > 0
    assert len(a.corpus_hash) == 64


def test_divergence_is_reported_not_hidden():
    r = run_pretrain(_cfg(hparams={"lr": 1e6, "grad_clip": 0.0}), seed=0)
    assert r.status == "diverged"
    assert math.isnan(r.final_loss) and np.isnan(r.eval_loss).all()


def test_constant_schedule_warms_up_then_holds():
    f = [lr_factor(s, 20, warmup_steps=4, schedule="constant") for s in range(20)]
    assert f[:4] == [0.25, 0.5, 0.75, 1.0] and f[4:] == [1.0] * 16


def test_checkpoint_callback_sees_the_run_without_changing_it():
    cfg = _cfg(schedule="constant", n_evals=0, final_eval_tokens=0, train_steps=12)
    assert cfg.steps == 12 and cfg.eval_steps == []
    seen: list[Checkpoint] = []
    params: list[float] = []

    def on_checkpoint(ck: Checkpoint) -> None:
        ck.model.eval()  # a measurement may switch modes; the run restores training mode
        seen.append(ck)
        params.append(float(sum(p.detach().sum() for p in ck.model.parameters())))

    with_cb = run_pretrain(
        cfg, seed=3, num_threads=1, checkpoints=(3, 7, 12), on_checkpoint=on_checkpoint
    )
    plain = run_pretrain(cfg, seed=3, num_threads=1)
    assert [c.step for c in seen] == [3, 7, 12]
    assert len(set(params)) == 3  # the live model, trained further between checkpoints
    assert with_cb.status == plain.status == "ok" and with_cb.steps == 12
    assert math.isnan(with_cb.final_loss) and with_cb.eval_loss.size == 0  # no evaluations
    assert float(sum(p.detach().sum() for p in seen[-1].model.parameters())) == params[-1]
    assert seen[-1].model.training
    # the same run with and without a callback: same final weights, bit for bit
    again: list[float] = []
    run_pretrain(
        cfg,
        seed=3,
        num_threads=1,
        checkpoints=(12,),
        on_checkpoint=lambda ck: again.append(
            float(sum(p.detach().sum() for p in ck.model.parameters()))
        ),
    )
    assert again == params[-1:]
    # train_loss: the mean training loss over the steps since the previous checkpoint
    per_step: list[float] = []
    run_pretrain(
        cfg,
        seed=3,
        num_threads=1,
        checkpoints=range(1, 13),
        on_checkpoint=lambda ck: per_step.append(ck.train_loss),
    )
    assert [c.train_loss for c in seen] == [
        sum(per_step[0:3]) / 3,
        sum(per_step[3:7]) / 4,
        sum(per_step[7:12]) / 5,
    ]


def test_batch_seed_overrides_the_derived_batch_order():
    cfg = _cfg(n_evals=1, final_eval_tokens=256, train_steps=6)
    a = run_pretrain(cfg, seed=0, num_threads=1, batch_seed=123)
    b = run_pretrain(cfg, seed=0, num_threads=1, batch_seed=123)
    c = run_pretrain(cfg, seed=0, num_threads=1)
    assert a.final_loss == b.final_loss != c.final_loss
