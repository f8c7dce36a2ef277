"""Policies of the RL study's sizes at matched training, ordered by quality, saved with
provenance and cached by config.

**Matched training** (:class:`Recipe`): every size sees the same supervised examples
(the RL study's ``sft`` set of its task), in the same order, for the same number of
steps of the same batch, with the same learning-rate schedule (AdamW, linear warm-up
held constant, then a linear decay to zero, so training ends at a settled point rather
than on a spike of a constant rate), optionally followed by the same number of GRPO steps
(:func:`~scalinglab.studies.rl.grpo.grpo_update` at the RL study's width rule). This is a
model family trained on the same data, as the papers' model families are: at matched
training a larger model is expected to be the better one.

Why not the RL recipe (warm-up to a low pass rate, then GRPO): at this scale GRPO's
take-off time varies by hundreds of steps between seeds and sizes (the RL study's
``medium_v2`` data), so the same GRPO steps order the sizes by take-off luck, and the
first policies of this study came out *reversed* (held-out pass@1 0.82, 0.79 and 0.46
for s, m and l). Supervised training to convergence reaches a higher pass rate at a
small fraction of the compute and leaves the sizes ordered by capacity (measured, see
``docs/studies/test_time_scaling.md``). ``grpo_steps`` stays available (0 in the
committed classes).

:func:`quality_order` checks a set of policies for that order (pass@1 must rise with
size) on the RL study's training prompts (never the held-out ones), and
:func:`load_or_train` refuses (``strict``) or flags a set that is not ordered. The
weights are saved as a torch ``state_dict`` (``.pt``) next to a JSON sidecar with the
config, its hash, the provenance (:func:`scalinglab.provenance.provenance_attrs`) and
the training summary under ``data/test_time_scaling/policies/`` (``data/.cache/`` for
the ``tiny`` class), named by the config hash: a saved policy is reused while its
config is unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from scalinglab import atomic
from scalinglab.compute import dataset_path
from scalinglab.models.tokenizer import arithmetic_tokenizer
from scalinglab.models.transformer import Transformer
from scalinglab.provenance import config_hash, provenance_attrs
from scalinglab.studies.rl.config import RLSweepConfig, sweep_config
from scalinglab.studies.rl.grpo import grpo_update, sample_completions
from scalinglab.studies.rl.measure import pass_rate, torch_threads
from scalinglab.studies.rl.run import RLRunConfig
from scalinglab.studies.rl.tasks import Problems, TaskSpec, sample_problems, score_completions

STUDY = "test_time_scaling"
#: Bump when training changes for the same config (invalidates saved policies).
POLICY_VERSION = "3"


@dataclass(frozen=True)
class Recipe:
    """Matched training: the same for every size.

    Attributes
    ----------
    sft_steps
        Supervised steps (next-token loss on the answer and EOS), batch ``batch_size``,
        drawn without replacement from the RL study's ``sft`` set, reshuffled each epoch
        by the same seeded generator for every size.
    lr
        Peak AdamW learning rate (no weight decay).
    warmup_steps
        Linear warm-up of the learning rate from 0.
    decay_steps
        Linear decay to 0 over the last ``decay_steps`` steps; the rate is constant in
        between (warm-up, stable, decay). The stable phase keeps the full rate through
        the sudden rise of the pass rate these models show (a cosine decay from step 50
        left size m stuck at a pass rate of 0.1 in a pilot), the decay settles the end.
    batch_size
        Sequences per step.
    grpo_steps
        GRPO steps after the supervised phase (the RL class's GRPO config and width
        rule); 0: none.
    check_every
        Steps between pass-rate checks on the training prompts (the sidecar keeps them).
    check_prompts, check_k
        Training prompts checked (the first ones of the RL set) and samples per prompt.
    """

    sft_steps: int = 1500
    lr: float = 1e-3
    warmup_steps: int = 50
    decay_steps: int = 300
    batch_size: int = 64
    grpo_steps: int = 0
    check_every: int = 100
    check_prompts: int = 256
    check_k: int = 4

    def __post_init__(self) -> None:
        if self.sft_steps < 1 or self.batch_size < 1 or self.grpo_steps < 0:
            raise ValueError("Recipe: sft_steps and batch_size must be >= 1, grpo_steps >= 0")
        if self.warmup_steps < 0 or self.decay_steps < 1:
            raise ValueError("Recipe: warmup_steps must be >= 0 and decay_steps >= 1")
        if self.warmup_steps + self.decay_steps > self.sft_steps:
            raise ValueError("Recipe: warmup_steps + decay_steps must not exceed sft_steps")
        if not self.lr > 0:
            raise ValueError(f"Recipe: lr must be > 0, got {self.lr}")

    def lr_at(self, step: int) -> float:
        """Learning rate of (0-based) step ``step``."""
        if step < self.warmup_steps:
            return self.lr * (step + 1) / self.warmup_steps
        left = self.sft_steps - step  # steps left, this one included
        if left <= self.decay_steps:
            return self.lr * max(left - 1, 0) / self.decay_steps
        return self.lr


#: The task of the ``small``/``medium`` policies: a 3-digit number times a 1-digit one,
#: the answer reversed. Its prompts differ in difficulty (a factor 0 or 1 is easy, long
#: carries are hard), so at matched training the policies solve some prompts almost
#: always and others rarely: coverage climbs over a wide range of k, as in the papers
#: (3-digit addition saturated every size: pass@1 0.98-0.99, coverage 1 by k = 16).
TTS_TASK = TaskSpec(op="mul", n_digits=3, n_digits_b=1, reverse_answer=True)


def rl_class(compute_class: str) -> RLSweepConfig:
    """The RL sweep whose sizes and data sets the policies follow: ``tiny`` for ``tiny``,
    the RL study's ``small`` class with :data:`TTS_TASK` otherwise (``small`` and
    ``medium`` share policies)."""
    if compute_class.startswith("tiny"):
        return sweep_config("tiny")
    return dataclasses.replace(sweep_config("small"), task=TTS_TASK)


def recipe_of(sweep: RLSweepConfig) -> Recipe:
    """The matched recipe of an RL class: 1500 steps at 1e-3, the last 300 decaying
    (``small``: in a pilot at a constant 1e-3 every size's pass rate rose between steps
    500 and 700 and levelled off by 1200), 400 at 3e-3 for ``tiny`` (tests: stopped
    before its policies saturate)."""
    if sweep.compute_class == "tiny":  # stopped before saturation: pass rates ~0.5-0.8
        return Recipe(sft_steps=400, lr=3e-3, warmup_steps=20, decay_steps=100, check_prompts=64)
    return Recipe()


def policy_config(sweep: RLSweepConfig, size: str, *, seed: int) -> dict:
    """Everything that determines a policy's weights (its cache key)."""
    spec = {s.name: s for s in sweep.sizes}[size]
    cfg = sweep.run_config(spec, "baseline")
    return {
        "compute_class": sweep.compute_class,
        "size": size,
        "seed": int(seed),
        "model": cfg.model.to_dict(),
        "task": cfg.task.to_dict(),
        "sets": {"sft": cfg.n_sft, "train": cfg.n_train, "heldout": cfg.n_heldout},
        "data_seed": cfg.data_seed,
        "recipe": dataclasses.asdict(recipe_of(sweep)),
        "grpo": cfg.grpo.to_dict(),
        "policy_version": POLICY_VERSION,
    }


def policy_path(sweep: RLSweepConfig, size: str, *, seed: int) -> Path:
    """``data/test_time_scaling/policies/policy-<class>-<size>-<hash>.pt``."""
    cfg = policy_config(sweep, size, seed=seed)
    nc = dataset_path(STUDY, f"policy-{sweep.compute_class}-{size}", cfg)
    return nc.parent / "policies" / nc.with_suffix(".pt").name


def supervised(
    model: Transformer, sft: Problems, recipe: Recipe, *, seed: int, check=None, progress=False
) -> list[tuple[int, float]]:
    """The recipe's supervised phase, in place; returns the checks ``(step, pass rate)``.

    ``check`` is a callable ``model -> pass rate`` run every ``recipe.check_every`` steps
    and at the end.
    """
    from tqdm import tqdm

    gen = torch.Generator().manual_seed(int(seed))
    tokens, target = sft.sft_tensor()
    inputs, labels = tokens[:, :-1], tokens[:, 1:].masked_fill(~target[:, 1:], -100)
    opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: recipe.lr_at(s) / recipe.lr)
    order, pos, checks = torch.randperm(len(sft), generator=gen), 0, []
    for step in tqdm(range(recipe.sft_steps), disable=not progress, desc="supervised", unit="step"):
        model.train()
        if pos + recipe.batch_size > len(order):
            order, pos = torch.randperm(len(sft), generator=gen), 0
        idx = order[pos : pos + recipe.batch_size]
        pos += recipe.batch_size
        logits = model(inputs[idx])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[idx].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        done = step + 1
        if check is not None and (done % recipe.check_every == 0 or done == recipe.sft_steps):
            checks.append((done, float(check(model))))
    return checks


def _grpo(model: Transformer, cfg: RLRunConfig, steps: int, sets, *, seed: int) -> float:
    """``steps`` GRPO steps as :func:`~scalinglab.studies.rl.run.run_rl` trains (no
    evaluations); returns the mean training reward of the last 20 steps."""
    g = cfg.grpo
    if g.kl_coef:
        raise ValueError("policies are trained without a KL reference (the baseline recipe)")
    opt = torch.optim.AdamW(model.parameters(), lr=g.lr, weight_decay=g.weight_decay)
    gen = torch.Generator().manual_seed(seed)
    sampler = torch.Generator().manual_seed(seed + 1)
    prompts_all = sets["train"].prompt_tensor(arithmetic_tokenizer())
    order, pos, rewards_log = torch.randperm(cfg.pool, generator=gen), 0, []
    for _ in range(steps):
        if pos + g.prompts_per_step > cfg.pool:
            order, pos = torch.randperm(cfg.pool, generator=gen), 0
        pidx = order[pos : pos + g.prompts_per_step]
        pos += g.prompts_per_step
        comp = sample_completions(
            model,
            prompts_all[pidx],
            repeats=g.group_size,
            max_new_tokens=cfg.gen_len,
            temperature=g.temperature,
            generator=sampler,
        )
        rewards = score_completions(comp, sets["train"].subset(pidx.numpy()), repeats=g.group_size)
        prompts = prompts_all[pidx].repeat_interleave(g.group_size, dim=0)
        grpo_update(model, opt, prompts, comp, rewards, g, generator=gen)
        rewards_log.append(float(np.mean(rewards)))
    return float(np.mean(rewards_log[-20:])) if rewards_log else float("nan")


def train_policy(
    cfg: RLRunConfig,
    recipe: Recipe,
    *,
    seed: int,
    num_threads: int | None = 1,
    progress: bool = False,
) -> tuple[dict, dict]:
    """Train one size by the matched recipe.

    Returns
    -------
    state, info
        The final ``state_dict`` (CPU tensors) and a summary: the checks ``(step, pass
        rate)`` on the training prompts, the final check, GRPO steps and reward,
        parameters and wall seconds.
    """
    t0 = time.perf_counter()
    with torch_threads(num_threads):
        s_init, s_sft, s_roll, s_check = (
            int(x) for x in np.random.SeedSequence(seed).generate_state(4)
        )
        sets = sample_problems(
            cfg.task,
            {"sft": cfg.n_sft, "train": cfg.n_train, "heldout": cfg.n_heldout},
            seed=cfg.data_seed,
        )
        probe = sets["train"].subset(slice(0, recipe.check_prompts))

        def check(m: Transformer) -> float:
            return float(pass_rate(m, probe, k=recipe.check_k, seed=s_check).mean())

        model = Transformer(cfg.model, seed=s_init)
        checks = supervised(model, sets["sft"], recipe, seed=s_sft, check=check, progress=progress)
        reward = float("nan")
        if recipe.grpo_steps:
            reward = _grpo(model, cfg, recipe.grpo_steps, sets, seed=s_roll)
            checks.append((recipe.sft_steps + recipe.grpo_steps, check(model)))
        model.eval()
        state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    info = {
        "checks": checks,
        "check_pass_rate": checks[-1][1],
        "check": f"pass rate over {recipe.check_k} samples of the first "
        f"{recipe.check_prompts} RL training prompts (never held out)",
        "sft_steps": recipe.sft_steps,
        "grpo_steps": recipe.grpo_steps,
        "final_grpo_reward": reward,
        "n_params": model.n_params(),
        "wall_s": time.perf_counter() - t0,
    }
    return state, info


@dataclass(frozen=True)
class QualityOrder:
    """Whether pass@1 rises with size.

    Attributes
    ----------
    sizes
        Smallest first.
    pass1
        The pass@1 of each size, in that order.
    ordered
        Every size's pass@1 above the next smaller one's.
    problems
        One line per adjacent pair out of order (empty when ordered).
    """

    sizes: tuple[str, ...]
    pass1: tuple[float, ...]
    ordered: bool
    problems: tuple[str, ...]

    def message(self) -> str:
        pairs = ", ".join(f"{s} {p:.3f}" for s, p in zip(self.sizes, self.pass1, strict=True))
        if self.ordered:
            return f"ordered by quality (pass@1 {pairs})"
        return f"not ordered by quality (pass@1 {pairs}): " + "; ".join(self.problems)


def quality_order(pass1: Mapping[str, float], sizes: Sequence[str]) -> QualityOrder:
    """Check that pass@1 rises strictly with size.

    Parameters
    ----------
    pass1
        Size -> pass@1 (any estimate of it, e.g. a pass rate over sampled completions).
    sizes
        The sizes, smallest first.
    """
    missing = [s for s in sizes if s not in pass1]
    if missing:
        raise ValueError(f"quality_order: no pass@1 for size(s) {missing}")
    vals = [float(pass1[s]) for s in sizes]
    bad = [
        f"{sizes[i + 1]} ({vals[i + 1]:.3f}) is not above {sizes[i]} ({vals[i]:.3f})"
        for i in range(len(sizes) - 1)
        if not vals[i + 1] > vals[i]
    ]
    return QualityOrder(tuple(sizes), tuple(vals), not bad, tuple(bad))


class PolicyOrderError(ValueError):
    """A policy set whose pass@1 does not rise with size."""


def load_or_train(
    sweep: RLSweepConfig,
    size: str,
    *,
    seed: int = 0,
    rerun: bool = False,
    num_threads: int | None = 1,
    progress: bool = False,
) -> tuple[Transformer, dict]:
    """The policy of ``size`` from its saved file, or trained by the matched recipe and
    saved.

    Returns
    -------
    model, sidecar
        The policy (eval mode, CPU) and its JSON sidecar (config, hash, provenance,
        training summary).
    """
    spec = {s.name: s for s in sweep.sizes}[size]
    cfg = sweep.run_config(spec, "baseline")
    key = policy_config(sweep, size, seed=seed)
    path = policy_path(sweep, size, seed=seed)
    side = path.with_suffix(".json")
    if not rerun and path.exists() and side.exists():
        meta = json.loads(side.read_text())
        if meta.get("config_hash") == config_hash(key):
            model = Transformer(cfg.model, seed=0)
            model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
            return model.eval(), meta
    prov = provenance_attrs(key)  # the code the training started from
    state, info = train_policy(
        cfg, recipe_of(sweep), seed=seed, num_threads=num_threads, progress=progress
    )
    with atomic.replacing(path, suffix=".pt") as tmp:
        torch.save(state, tmp)
    meta = {**prov, "config": key, "training": info, "file": path.name}
    atomic.write_text(side, json.dumps(meta, indent=1, sort_keys=True) + "\n")
    model = Transformer(cfg.model, seed=0)
    model.load_state_dict(state)
    return model.eval(), meta


def load_policy_set(
    sweep: RLSweepConfig,
    sizes: Sequence[str],
    *,
    seed: int = 0,
    strict: bool = False,
    progress: bool = False,
) -> tuple[dict[str, dict], QualityOrder]:
    """Train (or load) every size's policy, then check the set's quality order on the
    training prompts' checks (:func:`quality_order`).

    Raises
    ------
    PolicyOrderError
        With ``strict``, when pass@1 does not rise with size.
    """
    metas = {}
    for s in sizes:  # one at a time
        _, metas[s] = load_or_train(sweep, s, seed=seed, progress=progress)
    order = quality_order({s: m["training"]["check_pass_rate"] for s, m in metas.items()}, sizes)
    if strict and not order.ordered:
        raise PolicyOrderError(f"{sweep.compute_class} policies {order.message()}")
    return metas, order
