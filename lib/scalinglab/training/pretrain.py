"""One pretraining run: a Llama-style byte-level LM on the offline corpus, to a data budget.

Budget: ``D = data_multiple * tokens_per_param * N`` training tokens, with ``N``
the model's non-embedding parameters and ``tokens_per_param = 20`` (Chinchilla).
The run takes ``steps = max(1, round(D / (batch_size * seq_len)))`` optimizer steps
(or exactly ``train_steps`` when set); the tokens actually seen are
``steps * batch_size * seq_len`` (recorded).

Learning-rate schedule (:func:`lr_factor`), chosen per run so that it *ends at the
budget*: linear warmup over ``round(warmup * steps)`` steps to the peak ``lr``, then

- ``"cosine"`` (default): cosine decay to ``min_lr_ratio * lr``;
- ``"wsd"``: constant (stable) until the last ``decay_fraction`` of the steps, then
  linear decay to ``min_lr_ratio * lr``;
- ``"constant"``: the peak ``lr`` to the end (a checkpoint after ``D`` tokens is then a
  model trained on ``D`` tokens, not a point on a decaying schedule);

in the first two, the *last* step (index ``steps - 1``) uses exactly ``min_lr_ratio * lr``.
Cosine is the default because the paper compares optimizers at the end of a
full-length schedule for every budget, which either schedule satisfies; cosine has
no extra knob.

Metric: held-out cross-entropy (nats per byte token) on fixed windows of the
held-out split (:func:`scalinglab.models.corpus.eval_windows`, identical for every
run, so losses are paired), at ``n_evals`` evenly spaced points (the last one at
the end of training) on ``eval_tokens`` tokens, and at the end on
``final_eval_tokens`` tokens (the headline ``final_loss``).

Data order (``sampler``): ``"uniform"`` (default) draws every window's start uniformly
over the training stream (windows may overlap and repeat); ``"permuted"`` cuts the stream
into non-overlapping windows and visits them in one random permutation
(:class:`~scalinglab.models.corpus.PermutedWindows`), so a run of at most one epoch sees no
token twice. ``epochs`` in the result is the training tokens drawn over the stream's size.

Reproducibility: the model is initialised from ``seed``, batches are drawn by a
``torch.Generator`` seeded with ``seed`` (offset by ``data_seed``), and nothing
touches the global RNG; the same config and seed give bit-identical losses on CPU.
Timing: wall-clock per training step (forward, backward, clip and optimizer step,
excluding evaluation) and training tokens per second.

Checkpoints: :func:`run_pretrain` calls ``on_checkpoint`` with a :class:`Checkpoint`
(the live model, the mean training loss since the previous checkpoint) after each
step in ``checkpoints``; studies measure their own quantities there (the sparsity
sweep's activation ratios) with this one training loop.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F

from scalinglab.compute import resolve_device
from scalinglab.models.corpus import (
    CorpusConfig,
    PermutedWindows,
    build_corpus,
    eval_windows,
    sample_batch,
)
from scalinglab.models.transformer import Transformer, TransformerConfig
from scalinglab.training.optimizers import build_optimizer, resolve_hparams

#: Bump when results change for the same config (part of every cache key).
ENGINE_VERSION = "1"


def llama_config(
    *, d_model: int, n_layer: int, n_head: int, seq_len: int, vocab_size: int = 259
) -> TransformerConfig:
    """A Llama-style :class:`TransformerConfig`: RMSNorm, rotary positions, SwiGLU, no biases."""
    return TransformerConfig(
        vocab_size=vocab_size,
        d_model=d_model,
        n_layer=n_layer,
        n_head=n_head,
        max_seq_len=seq_len,
        norm="rmsnorm",
        pos="rotary",
        ffn="gated",
        activation="silu",
        bias=False,
        tie_embeddings=False,
    )


def lr_factor(
    step: int,
    total_steps: int,
    *,
    warmup_steps: int = 0,
    schedule: Literal["cosine", "wsd", "constant"] = "cosine",
    min_lr_ratio: float = 0.0,
    decay_fraction: float = 0.2,
) -> float:
    """Multiplier of the peak learning rate for optimizer step ``step`` (0-based).

    Warmup ``(step + 1) / warmup_steps`` for ``step < warmup_steps``; afterwards the
    decay progress ``p = (step - warmup_steps + 1) / (total_steps - warmup_steps)``
    reaches exactly 1 at the last step ``total_steps - 1``, where the factor is
    ``min_lr_ratio`` (``"constant"``: 1 after the warmup).
    """
    if total_steps < 1 or not 0 <= step < total_steps:
        raise ValueError(f"step {step} outside [0, {total_steps})")
    warmup_steps = min(max(int(warmup_steps), 0), total_steps - 1)
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    n_decay = total_steps - warmup_steps
    p = (step - warmup_steps + 1) / n_decay
    if schedule == "cosine":
        return min_lr_ratio + (1.0 - min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * p))
    if schedule == "wsd":
        d = max(1, round(decay_fraction * n_decay))
        q = (step - (total_steps - d) + 1) / d  # 1 at the last step
        if q <= 0:
            return 1.0
        return 1.0 - (1.0 - min_lr_ratio) * q
    raise ValueError(f"unknown schedule {schedule!r}: cosine, wsd or constant")


@dataclass(frozen=True)
class PretrainConfig:
    """Everything that determines a run except its seed.

    Attributes
    ----------
    model
        The architecture (see :func:`llama_config`).
    optimizer, hparams
        A key of :data:`~scalinglab.training.optimizers.OPTIMIZER_TABLE` and
        overrides of its defaults (``lr``, ``weight_decay``, ``warmup``, ...).
    data_multiple, tokens_per_param
        The budget ``D = data_multiple * tokens_per_param * N``.
    batch_size
        Sequences per step (each ``model.max_seq_len`` tokens).
    schedule, decay_fraction
        See :func:`lr_factor`.
    n_evals, eval_tokens, final_eval_tokens
        Held-out evaluations along the run and at its end (``n_evals=0``: none
        along the run; ``final_eval_tokens=0``: none at the end, ``final_loss`` NaN).
    corpus
        The corpus (:class:`~scalinglab.models.corpus.CorpusConfig`).
    data_seed
        Added to the run's seed for the batch generator.
    sampler
        ``"uniform"`` window starts or ``"permuted"`` distinct windows (see the module
        docstring).
    train_steps
        Exactly this many optimizer steps (None: from the data budget).
    """

    model: TransformerConfig
    optimizer: str = "adamw"
    hparams: dict[str, Any] = field(default_factory=dict)
    data_multiple: float = 1.0
    tokens_per_param: float = 20.0
    batch_size: int = 16
    schedule: Literal["cosine", "wsd", "constant"] = "cosine"
    decay_fraction: float = 0.2
    n_evals: int = 8
    eval_tokens: int = 8192
    final_eval_tokens: int = 65536
    corpus: CorpusConfig = CorpusConfig()
    data_seed: int = 0
    train_steps: int | None = None
    sampler: Literal["uniform", "permuted"] = "uniform"

    @property
    def seq_len(self) -> int:
        return self.model.max_seq_len

    @property
    def n_params(self) -> int:
        """Non-embedding parameters ``N``."""
        return self.model.n_params(non_embedding=True)

    @property
    def target_tokens(self) -> float:
        return self.data_multiple * self.tokens_per_param * self.n_params

    @property
    def steps(self) -> int:
        if self.train_steps is not None:
            return max(1, int(self.train_steps))
        return max(1, round(self.target_tokens / (self.batch_size * self.seq_len)))

    @property
    def eval_steps(self) -> list[int]:
        """Steps (number of updates done) after which the held-out loss is measured."""
        if self.n_evals <= 0:
            return []
        n = max(1, min(self.n_evals, self.steps))
        return sorted({max(1, round(self.steps * (i + 1) / n)) for i in range(n)})

    def to_dict(self) -> dict:
        d = asdict(self)
        if d["sampler"] == "uniform":  # the default: configs from before it keep their keys
            del d["sampler"]
        d["hparams"] = resolve_hparams(self.optimizer, self.hparams)
        d["engine_version"] = ENGINE_VERSION
        return d


@dataclass
class PretrainResult:
    """The outcome of :func:`run_pretrain`.

    Attributes
    ----------
    eval_step, eval_tokens_seen
        ``(E,)`` steps and training tokens at each evaluation.
    eval_loss
        ``(E,)`` held-out loss at those points (NaN after a divergence).
    eval_lr
        ``(E,)`` learning-rate factor of the step that preceded each evaluation.
    final_loss
        Held-out loss at the end on ``final_eval_tokens`` (NaN if diverged).
    train_loss
        ``(E,)`` mean training loss over the steps since the previous evaluation.
    status
        ``"ok"`` or ``"diverged"`` (a non-finite training loss stopped the run).
    steps, tokens, n_params
        Optimizer steps, training tokens, non-embedding parameters.
    seconds_per_step, tokens_per_s, train_seconds
        Training wall clock (evaluation excluded).
    epochs
        Training tokens drawn over the training stream's tokens (windows over windows
        available with the ``"permuted"`` sampler).
    """

    eval_step: np.ndarray
    eval_tokens_seen: np.ndarray
    eval_loss: np.ndarray
    eval_lr: np.ndarray
    train_loss: np.ndarray
    final_loss: float
    status: str
    steps: int
    tokens: int
    n_params: int
    seconds_per_step: float
    tokens_per_s: float
    train_seconds: float
    optimizer_state_bytes: int
    hparams: dict[str, Any]
    corpus_hash: str
    device: str
    epochs: float = float("nan")


@torch.no_grad()
def heldout_loss(model: Transformer, windows: torch.Tensor, *, batch_size: int = 64) -> float:
    """Mean next-token cross-entropy of ``model`` on ``windows`` ``(n, T + 1)``."""
    was = model.training
    model.eval()
    total, count = 0.0, 0
    for i in range(0, windows.shape[0], batch_size):
        w = windows[i : i + batch_size].to(model.device)
        logits = model(w[:, :-1])
        total += float(
            F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1), reduction="sum"
            )
        )
        count += w[:, 1:].numel()
    model.train(was)
    return total / count


@dataclass
class Checkpoint:
    """What :func:`run_pretrain` hands ``on_checkpoint`` after a checkpoint step.

    Attributes
    ----------
    step
        Optimizer steps done.
    model
        The model being trained (the run goes on from it: measure, do not modify;
        its train/eval mode is restored after the callback).
    train_loss
        Mean training loss over the steps since the previous checkpoint.
    lr_factor
        Learning-rate factor of the last step.
    train_seconds
        Training wall clock so far (evaluations and callbacks excluded).
    """

    step: int
    model: Transformer
    train_loss: float
    lr_factor: float
    train_seconds: float


def run_pretrain(
    cfg: PretrainConfig,
    *,
    seed: int = 0,
    device: str = "cpu",
    num_threads: int | None = None,
    progress: bool = False,
    batch_seed: int | None = None,
    checkpoints: Sequence[int] = (),
    on_checkpoint: Callable[[Checkpoint], None] | None = None,
) -> PretrainResult:
    """Train ``cfg.model`` from scratch with ``cfg.optimizer`` to the budget; evaluate.

    Parameters
    ----------
    cfg
        The run.
    seed
        Model initialisation and batch order (``seed + cfg.data_seed * 1_000_003``).
    device
        ``"cpu"`` (default), ``"cuda"`` or ``"auto"``.
    num_threads
        ``torch.set_num_threads`` for this process (1 in Dask workers); None leaves it.
    progress
        A tqdm bar over steps.
    batch_seed
        Seed of the batch generator instead of the one derived from ``seed``.
    checkpoints, on_checkpoint
        ``on_checkpoint(Checkpoint(...))`` is called after each of these steps
        (optimizer steps done, in ``1..cfg.steps``). A diverged run stops, so
        later checkpoints are not called.
    """
    from tqdm import tqdm

    if num_threads is not None:
        torch.set_num_threads(num_threads)
    device = resolve_device(device)
    corpus = build_corpus(cfg.corpus)
    if cfg.sampler not in ("uniform", "permuted"):
        raise ValueError(f"unknown sampler {cfg.sampler!r}: uniform or permuted")
    if corpus.vocab_size != cfg.model.vocab_size:
        raise ValueError(f"model vocab_size {cfg.model.vocab_size} != corpus {corpus.vocab_size}")
    hp = resolve_hparams(cfg.optimizer, cfg.hparams)
    model = Transformer(cfg.model, seed=seed, device=device)
    opt = build_optimizer(cfg.optimizer, model, hp)
    gen = torch.Generator().manual_seed(
        int(seed) + int(cfg.data_seed) * 1_000_003 if batch_seed is None else int(batch_seed)
    )
    windows_iter = (
        PermutedWindows(corpus.train, cfg.seq_len, generator=gen)
        if cfg.sampler == "permuted"
        else None
    )
    steps, ev = cfg.steps, cfg.eval_steps
    windows = eval_windows(corpus.heldout, cfg.eval_tokens, cfg.seq_len) if ev else None
    final_windows = (
        eval_windows(corpus.heldout, cfg.final_eval_tokens, cfg.seq_len)
        if cfg.final_eval_tokens > 0
        else None
    )
    ckpts = set(int(c) for c in checkpoints) if on_checkpoint is not None else set()
    ck_acc, ck_n = 0.0, 0
    warm = round(float(hp["warmup"]) * steps)
    clip = float(hp["grad_clip"])
    params = [p for p in model.parameters() if p.requires_grad]
    n_e = len(ev)
    out = {k: np.full(n_e, np.nan) for k in ("loss", "lr", "train")}
    status, train_s, acc, acc_n, e_i, factor = "ok", 0.0, 0.0, 0, 0, 0.0
    cuda = device.startswith("cuda")
    bar = tqdm(total=steps, desc=f"{cfg.optimizer} x{cfg.data_multiple:g}", disable=not progress)
    for step in range(steps):
        if windows_iter is not None:
            x, y = windows_iter.batch(cfg.batch_size)
        else:
            x, y = sample_batch(corpus.train, cfg.batch_size, cfg.seq_len, generator=gen)
        x, y = x.to(device), y.to(device)
        t0 = time.perf_counter()
        factor = lr_factor(
            step,
            steps,
            warmup_steps=warm,
            schedule=cfg.schedule,
            min_lr_ratio=float(hp["min_lr_ratio"]),
            decay_fraction=cfg.decay_fraction,
        )
        opt.set_lr_factor(factor)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        lv = float(loss.detach())  # synchronises CUDA, so the timing below is honest
        if cuda:
            torch.cuda.synchronize()
        train_s += time.perf_counter() - t0
        bar.update(1)
        if not math.isfinite(lv):
            status = "diverged"
            break
        acc, acc_n = acc + lv, acc_n + 1
        ck_acc, ck_n = ck_acc + lv, ck_n + 1
        if e_i < n_e and step + 1 == ev[e_i]:
            out["loss"][e_i] = heldout_loss(model, windows)
            out["lr"][e_i], out["train"][e_i] = factor, acc / acc_n
            acc, acc_n, e_i = 0.0, 0, e_i + 1
        if step + 1 in ckpts:
            was = model.training
            on_checkpoint(
                Checkpoint(
                    step=step + 1,
                    model=model,
                    train_loss=ck_acc / ck_n,
                    lr_factor=factor,
                    train_seconds=train_s,
                )
            )
            model.train(was)
            ck_acc, ck_n = 0.0, 0
    bar.close()
    done = step + 1 if status == "ok" else step
    final = float("nan")
    if status == "ok" and final_windows is not None:
        final = heldout_loss(model, final_windows)
        if not math.isfinite(final):
            status, final = "diverged", float("nan")
    tokens = steps * cfg.batch_size * cfg.seq_len
    if windows_iter is not None:
        epochs = windows_iter.epochs
    else:
        epochs = done * cfg.batch_size * cfg.seq_len / corpus.train.size
    return PretrainResult(
        eval_step=np.array(ev),
        eval_tokens_seen=np.array(ev) * cfg.batch_size * cfg.seq_len,
        eval_loss=out["loss"],
        eval_lr=out["lr"],
        train_loss=out["train"],
        final_loss=final,
        status=status,
        steps=steps,
        tokens=tokens,
        n_params=cfg.n_params,
        seconds_per_step=train_s / max(done, 1),
        tokens_per_s=done * cfg.batch_size * cfg.seq_len / max(train_s, 1e-12),
        train_seconds=train_s,
        optimizer_state_bytes=opt.state_bytes(),
        hparams=hp,
        corpus_hash=corpus.content_hash,
        device=device,
        epochs=float(epochs),
    )
