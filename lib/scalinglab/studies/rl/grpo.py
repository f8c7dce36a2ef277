"""GRPO: group sampling, group-relative advantages, the clipped objective, one update.

Group Relative Policy Optimization (Shao et al. 2024, DeepSeekMath) with the design
options the RL-scaling study ablates (ScaleRL, Khatri et al. 2025; DAPO, Yu et al.
2025):

- Advantages: ``A_ij = r_ij - mean_j r_ij`` (centred in the group of ``G``
  completions of prompt ``i``), divided by the group's standard deviation
  (``adv_norm="group"``, GRPO), by the standard deviation over the whole batch
  (``"batch"``, ScaleRL's batch-level normalisation) or not at all (``"none"``,
  Dr. GRPO). Standard deviations are population ones (``ddof=0``) plus ``eps``;
  a group whose rewards are all equal gets zero advantage under every option.
- Per token, ``l_t = -min(rho_t A, clip(rho_t, 1 - eps, 1 + eps) A)
  + beta KL_t`` with ``rho_t = exp(logp_t - logp_old_t)`` and the ``k3`` estimator
  ``KL_t = exp(q_t) - q_t - 1``, ``q_t = logp_ref_t - logp_t`` (Schulman 2020).
- Aggregation: ``"token"`` averages ``l_t`` over every completion token of the
  batch (DAPO); ``"sample"`` averages within each completion, then over
  completions (the original GRPO), so tokens of short completions weigh more.

Hand-written (TRL's ``GRPOTrainer`` needs HF models, datasets and accelerate, and
hides the loss behind a trainer): the math is a few tensor lines, tested on
hand-made cases in ``tests/test_rl_grpo.py``.

Shapes: ``P`` prompts, ``G`` group size, ``N = P G`` completions, ``L`` completion
tokens (EOS included), ``T`` prompt tokens.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from scalinglab.models.tokenizer import EOS, PAD
from scalinglab.models.transformer import Transformer


@dataclass(frozen=True)
class GRPOConfig:
    """Hyperparameters of the RL phase (defaults: the study's baseline recipe).

    Attributes
    ----------
    steps
        Rollout-and-update iterations.
    prompts_per_step, group_size
        ``P`` prompts per step, ``G`` completions each (batch ``N = P G``).
    lr, weight_decay, max_grad_norm
        AdamW (constant learning rate) and gradient clipping.
    clip_eps
        PPO clip range ``eps``.
    kl_coef
        ``beta`` of the KL penalty to the warmed-up reference policy (0: no reference).
    loss_agg
        ``"token"`` or ``"sample"`` (see the module docstring).
    adv_norm
        ``"group"``, ``"batch"`` or ``"none"``.
    n_minibatches, n_epochs
        Updates per rollout batch: after the first, the policy is off the sampling
        policy and the clipping acts.
    temperature
        Sampling temperature (the log-probabilities use the same).
    """

    steps: int = 200
    prompts_per_step: int = 16
    group_size: int = 8
    lr: float = 3e-4
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    clip_eps: float = 0.2
    kl_coef: float = 0.0
    loss_agg: Literal["token", "sample"] = "token"
    adv_norm: Literal["group", "batch", "none"] = "group"
    n_minibatches: int = 2
    n_epochs: int = 1
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if self.loss_agg not in ("token", "sample"):
            raise ValueError(
                f"GRPOConfig: loss_agg must be 'token' or 'sample', got {self.loss_agg!r}"
            )
        if self.adv_norm not in ("group", "batch", "none"):
            raise ValueError(
                f"GRPOConfig: adv_norm must be group, batch or none, got {self.adv_norm!r}"
            )
        if self.group_size < 2 or self.prompts_per_step < 1 or self.steps < 0:
            raise ValueError("GRPOConfig: group_size >= 2, prompts_per_step >= 1, steps >= 0")
        if self.prompts_per_step * self.group_size % self.n_minibatches:
            raise ValueError("GRPOConfig: n_minibatches must divide prompts_per_step * group_size")

    def to_dict(self) -> dict:
        return asdict(self)


def group_advantages(rewards: Tensor, *, norm: str = "group", eps: float = 1e-6) -> Tensor:
    """Group-relative advantages.

    Parameters
    ----------
    rewards
        (P, G) rewards, one row per prompt.
    norm
        ``"group"``: divide by each row's std; ``"batch"``: by the std of all
        ``P G`` rewards; ``"none"``: centre only.
    eps
        Added to the standard deviation.

    Returns
    -------
    Tensor
        (P, G) advantages; rows with equal rewards are exactly 0.
    """
    rewards = rewards.to(torch.float64) if rewards.dtype == torch.float64 else rewards.float()
    centred = rewards - rewards.mean(dim=1, keepdim=True)
    if norm == "group":
        return centred / (rewards.std(dim=1, keepdim=True, correction=0) + eps)
    if norm == "batch":
        return centred / (rewards.std(correction=0) + eps)
    if norm == "none":
        return centred
    raise ValueError(f"unknown advantage normalisation {norm!r}")


def grpo_loss(
    logp: Tensor,
    logp_old: Tensor,
    advantages: Tensor,
    mask: Tensor,
    *,
    clip_eps: float = 0.2,
    agg: str = "token",
    logp_ref: Tensor | None = None,
    kl_coef: float = 0.0,
) -> tuple[Tensor, dict[str, float]]:
    """The clipped GRPO objective as a loss to minimise.

    Parameters
    ----------
    logp, logp_old
        (N, L) log-probabilities of the sampled tokens under the current policy
        (with gradient) and the sampling policy.
    advantages
        (N,) one advantage per completion.
    mask
        (N, L) bool, True on completion tokens (up to and including EOS).
    clip_eps
        Clip range.
    agg
        ``"token"`` or ``"sample"``.
    logp_ref, kl_coef
        Reference log-probabilities (N, L) and the KL weight.

    Returns
    -------
    loss : Tensor
        Scalar.
    stats : dict
        ``clip_frac`` (share of tokens whose objective is the clipped one, i.e.
        without gradient) and ``kl`` (mean k3 estimate, 0 without reference).
    """
    m = mask.to(logp.dtype)
    ratio = torch.exp(logp - logp_old)
    adv = advantages.to(logp.dtype)[:, None]
    unclipped = ratio * adv
    clipped = ratio.clamp(1.0 - clip_eps, 1.0 + clip_eps) * adv
    per_token = -torch.minimum(unclipped, clipped)
    kl_mean = 0.0
    if logp_ref is not None and kl_coef:
        q = logp_ref - logp
        kl = torch.exp(q) - q - 1.0
        per_token = per_token + kl_coef * kl
        kl_mean = float((kl * m).sum() / m.sum().clamp(min=1.0))
    if agg == "token":
        loss = (per_token * m).sum() / m.sum().clamp(min=1.0)
    elif agg == "sample":
        loss = ((per_token * m).sum(1) / m.sum(1).clamp(min=1.0)).mean()
    else:
        raise ValueError(f"unknown loss aggregation {agg!r}")
    with torch.no_grad():
        is_clipped = (clipped < unclipped) & mask
        clip_frac = float(is_clipped.sum() / mask.sum().clamp(min=1))
    return loss, {"clip_frac": clip_frac, "kl": kl_mean}


def completion_logprobs(
    model: Transformer, prompts: Tensor, completions: Tensor, *, temperature: float = 1.0
) -> Tensor:
    """Log-probabilities of each completion token given its prompt and prefix.

    Parameters
    ----------
    prompts
        (N, T) prompt ids (all of the same length).
    completions
        (N, L) generated ids (PAD after EOS).

    Returns
    -------
    Tensor
        (N, L) ``log pi(y_t | x, y_<t)``; entries after EOS are meaningless (mask them).
    """
    seq = torch.cat([prompts, completions], dim=1)
    t = prompts.shape[1]
    logits = model(seq[:, :-1])[:, t - 1 :]
    if temperature != 1.0:
        logits = logits / temperature
    logp = F.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, completions.unsqueeze(-1)).squeeze(-1)


def completion_mask(completions: Tensor) -> tuple[Tensor, Tensor]:
    """Mask (N, L) of tokens up to and including the first EOS, and lengths (N,).

    A row without EOS keeps all ``L`` tokens (it was cut at the length limit).
    """
    n, length = completions.shape
    is_eos = completions == EOS
    has = is_eos.any(dim=1)
    first = torch.where(
        has, is_eos.float().argmax(dim=1), torch.full((n,), length - 1, device=completions.device)
    )
    lengths = first + 1
    mask = torch.arange(length, device=completions.device)[None, :] < lengths[:, None]
    return mask, lengths


@torch.inference_mode()
def sample_completions(
    model: Transformer,
    prompts: Tensor,
    *,
    max_new_tokens: int,
    repeats: int = 1,
    temperature: float = 1.0,
    generator: torch.Generator,
) -> Tensor:
    """Sample completions with a KV cache: each prompt is prefilled once, then repeated.

    Parameters
    ----------
    prompts
        (P, T) prompt ids, all of length ``T``.
    max_new_tokens
        Length limit (EOS included).
    repeats
        Completions per prompt (``G``); rows of one prompt are adjacent.
    temperature
        Softmax temperature; 0 means greedy.
    generator
        The only source of randomness.

    Returns
    -------
    Tensor
        (P repeats, L) ids with ``L <= max_new_tokens``, PAD after each row's EOS.
    """
    was_training = model.training
    model.eval()
    p, t = prompts.shape
    cache = model.new_cache(p, max_len=t + max_new_tokens)
    logits = model(prompts, cache=cache)[:, -1]
    if repeats > 1:
        cache = cache.repeat_interleave(repeats)
        logits = logits.repeat_interleave(repeats, dim=0)
    n = p * repeats
    done = torch.zeros(n, dtype=torch.bool, device=prompts.device)
    out = []
    for step in range(max_new_tokens):
        if temperature == 0:
            nxt = logits.argmax(dim=-1)
        else:
            probs = torch.softmax(logits.float() / temperature, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        nxt = nxt.masked_fill(done, PAD)
        out.append(nxt)
        done = done | (nxt == EOS)
        if step == max_new_tokens - 1 or bool(done.all()):
            break
        logits = model(nxt[:, None], cache=cache)[:, -1]
    model.train(was_training)
    return torch.stack(out, dim=1)


def minibatch_indices(
    n: int, n_minibatches: int, *, generator: torch.Generator, device=None
) -> list[Tensor]:
    """A random split of ``range(n)`` into equal minibatches (from ``generator``)."""
    perm = torch.randperm(n, generator=generator).to(device)
    return list(perm.chunk(n_minibatches))


def grpo_update(
    model: Transformer,
    optimizer: torch.optim.Optimizer,
    prompts: Tensor,
    completions: Tensor,
    rewards: np.ndarray,
    cfg: GRPOConfig,
    *,
    generator: torch.Generator,
    ref_model: Transformer | None = None,
) -> dict:
    """One GRPO iteration on a sampled batch: advantages, then the policy updates.

    Parameters
    ----------
    prompts
        (N, T) prompt of each completion (rows of one prompt adjacent).
    completions
        (N, L) sampled ids.
    rewards
        (N,) rewards, grouped as ``(P, G)`` in row order.
    generator
        Draws the minibatch split.
    ref_model
        Reference policy for the KL term (needed when ``cfg.kl_coef > 0``).

    Returns
    -------
    dict
        ``loss``, ``clip_frac``, ``kl``, ``zero_adv_frac`` (share of groups with
        equal rewards), ``extra_forwards`` (no-grad forward passes over the batch for
        old/reference log-probabilities: 0, 1 or 2) and ``updates``.
    """
    dev = prompts.device
    g = cfg.group_size
    r = torch.as_tensor(rewards, dtype=torch.float32, device=dev).view(-1, g)
    adv = group_advantages(r, norm=cfg.adv_norm).reshape(-1)
    mask, _ = completion_mask(completions)
    off_policy = cfg.n_minibatches * cfg.n_epochs > 1
    extra_forwards = 0
    old = ref = None
    if off_policy or (ref_model is not None and cfg.kl_coef):
        with torch.no_grad():
            if off_policy:
                old = completion_logprobs(model, prompts, completions, temperature=cfg.temperature)
                extra_forwards += 1
            if ref_model is not None and cfg.kl_coef:
                ref = completion_logprobs(
                    ref_model, prompts, completions, temperature=cfg.temperature
                )
                extra_forwards += 1
    stats = {"loss": 0.0, "clip_frac": 0.0, "kl": 0.0}
    updates = 0
    model.train()
    for _ in range(cfg.n_epochs):
        for idx in minibatch_indices(
            len(completions), cfg.n_minibatches, generator=generator, device=dev
        ):
            logp = completion_logprobs(
                model, prompts[idx], completions[idx], temperature=cfg.temperature
            )
            logp_old = logp.detach() if old is None else old[idx]
            loss, s = grpo_loss(
                logp,
                logp_old,
                adv[idx],
                mask[idx],
                clip_eps=cfg.clip_eps,
                agg=cfg.loss_agg,
                logp_ref=None if ref is None else ref[idx],
                kl_coef=cfg.kl_coef,
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.max_grad_norm:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            updates += 1
            stats["loss"] += float(loss.detach()) / (cfg.n_epochs * cfg.n_minibatches)
            stats["clip_frac"] += s["clip_frac"] / (cfg.n_epochs * cfg.n_minibatches)
            stats["kl"] += s["kl"] / (cfg.n_epochs * cfg.n_minibatches)
    stats["zero_adv_frac"] = float((r.std(dim=1, correction=0) == 0).float().mean())
    stats["extra_forwards"] = extra_forwards
    stats["updates"] = updates
    return stats
