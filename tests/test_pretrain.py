"""Pretraining runs: budgets, the learning-rate schedule, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scalinglab.training.pretrain import PretrainConfig, llama_config, lr_factor, run_pretrain
from scalinglab.models.corpus import CorpusConfig

CORPUS = CorpusConfig(sources=("pydoc_topics",), heldout_fraction=0.2)
MODEL = llama_config(d_model=8, n_layer=1, n_head=2, seq_len=16)


@pytest.mark.parametrize("schedule", ["cosine", "wsd"])
@pytest.mark.parametrize("total,warmup", [(10, 0), (37, 4), (200, 20), (1, 0)])
def test_schedule_ends_exactly_at_the_budget(schedule, total, warmup):
    f = [lr_factor(s, total, warmup_steps=warmup, schedule=schedule, min_lr_ratio=0.1)
         for s in range(total)]
    assert f[-1] == pytest.approx(0.1, abs=1e-12)
    if total > 1:
        assert min(f[warmup:]) == pytest.approx(0.1, abs=1e-12)
        assert f[-2] > 0.1
    if warmup:
        assert f[warmup - 1] == pytest.approx(1.0)
        assert all(a < b for a, b in zip(f[:warmup - 1], f[1:warmup], strict=True))
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
    base = dict(model=MODEL, optimizer="adamw", hparams={"lr": 1e-2}, data_multiple=1.0,
                batch_size=4, n_evals=3, eval_tokens=256, final_eval_tokens=512, corpus=CORPUS)
    return PretrainConfig(**{**base, **kw})


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
