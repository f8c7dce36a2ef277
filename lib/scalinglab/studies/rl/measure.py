"""What an RL run measures besides its reward: FLOPs and the held-out pass rate.

- FLOPs, counted with :mod:`scalinglab.cost_model` over the real (unpadded) token
  counts: :func:`forward_flops` (no-grad forwards counted as generation, ``2 N`` per
  token plus attention over the cache), :func:`train_flops` (forward + backward,
  ``6 N`` per token plus the attention term) and :func:`rl_step_flops` (one GRPO step:
  rollouts, old/reference log-probabilities, updates). ``N`` is the non-embedding
  parameter count.
- :func:`pass_rate`: the held-out pass rate, mean over ``k`` samples per prompt at
  temperature 1, drawn from a generator re-seeded for every evaluation (common random
  numbers).
- :func:`torch_threads`: torch's intra-op threads for the duration of a run (1 in
  parallel Dask workers).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch

from scalinglab.models.transformer import Transformer, TransformerConfig
from scalinglab.studies.rl.grpo import sample_completions
from scalinglab.studies.rl.tasks import Problems, score_completions


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Temporarily set torch's intra-op threads (1 in parallel Dask workers)."""
    if not n:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def forward_flops(cfg: TransformerConfig, lengths: np.ndarray | float) -> float:
    """FLOPs of no-grad forward passes over sequences of ``lengths`` tokens (summed).

    Counted as generating them (:func:`scalinglab.cost_model.inference.generation_flops`,
    ``2 N`` per token plus ``4 n_layer d_model`` per attended position, causal).
    """
    from scalinglab.cost_model.inference import generation_flops

    return float(
        np.sum(
            generation_flops(
                float(cfg.n_params()), lengths, n_layer=cfg.n_layer, d_attn=cfg.d_model
            )
        )
    )


def train_flops(cfg: TransformerConfig, lengths: np.ndarray | float) -> float:
    """FLOPs of forward+backward over sequences of ``lengths`` tokens (summed):
    :func:`scalinglab.cost_model.flops.training_flops` with ``n_ctx`` = each length."""
    from scalinglab.cost_model.flops import training_flops

    lengths = np.asarray(lengths, dtype=float)
    return float(
        np.sum(
            training_flops(
                float(cfg.n_params()),
                lengths,
                n_layer=cfg.n_layer,
                n_ctx=lengths,
                d_model=cfg.d_model,
            )
        )
    )


def rl_step_flops(
    cfg: TransformerConfig,
    *,
    prompt_len: int,
    gen_lengths: np.ndarray,
    n_prompts: int,
    extra_forwards: int = 0,
    n_epochs: int = 1,
) -> float:
    """RL compute of one GRPO step.

    Parameters
    ----------
    cfg
        The policy's architecture (``N`` = its non-embedding parameters).
    prompt_len
        Tokens per prompt ``T``.
    gen_lengths
        (n_prompts G,) generated tokens per completion, EOS included.
    n_prompts
        Distinct prompts (each prefilled once).
    extra_forwards
        No-grad passes over the batch (old and/or reference log-probabilities).
    n_epochs
        Gradient passes over the batch.

    Returns
    -------
    float
        ``prefill + generation + extra_forwards * forward + n_epochs * training``,
        where a completion of ``L`` tokens is generated after ``T`` prompt tokens and
        scored/trained as a sequence of ``T + L - 1`` input tokens.
    """
    from scalinglab.cost_model.inference import generation_flops

    n = float(cfg.n_params())
    lengths = np.asarray(gen_lengths, dtype=float)
    prefill = n_prompts * forward_flops(cfg, float(prompt_len))
    rollout = float(
        np.sum(
            generation_flops(
                n, lengths, prompt_len=prompt_len, n_layer=cfg.n_layer, d_attn=cfg.d_model
            )
        )
    )
    seq = prompt_len + lengths - 1.0
    return (
        prefill
        + rollout
        + extra_forwards * forward_flops(cfg, seq)
        + n_epochs * train_flops(cfg, seq)
    )


@torch.no_grad()
def pass_rate(
    model: Transformer,
    problems: Problems,
    *,
    k: int,
    seed: int,
    temperature: float = 1.0,
    batch_sequences: int = 1024,
    max_new_tokens: int = 0,
    blocked: np.ndarray | None = None,
) -> np.ndarray:
    """Per-problem pass rate, mean over ``k`` sampled completions.

    ``max_new_tokens``: generation limit (EOS included); 0 = the longest answer + EOS.
    ``blocked``: (len(problems),) bool, problems a length cap makes unanswerable
    (:func:`~scalinglab.studies.rl.tasks.cap_binds`): their rate is 0. They are still
    sampled, so the randomness of the others does not depend on the cap.

    Returns
    -------
    numpy.ndarray
        (len(problems),) in [0, 1]; its mean is the pass rate (mean@k).
    """
    gen = torch.Generator(device=model.device).manual_seed(int(seed))
    prompts = problems.prompt_tensor().to(model.device)
    per = max(1, batch_sequences // k)
    out = []
    for s in range(0, len(problems), per):
        comp = sample_completions(
            model,
            prompts[s : s + per],
            repeats=k,
            temperature=temperature,
            max_new_tokens=max_new_tokens or problems.spec.max_answer_len + 1,
            generator=gen,
        )
        out.append(score_completions(comp, problems.subset(slice(s, s + per)), repeats=k))
    rates = np.concatenate(out).reshape(-1, k).mean(axis=1)
    if blocked is not None:
        rates = np.where(np.asarray(blocked, dtype=bool), 0.0, rates)
    return rates
