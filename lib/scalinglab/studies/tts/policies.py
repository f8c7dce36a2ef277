"""Trained policies of the RL study's sizes, saved with provenance and cached by config.

The RL study (:mod:`scalinglab.studies.rl`) does not keep its trained weights, so
this module trains them the same way: :func:`~scalinglab.studies.rl.run.warm_start`
(supervised warm-up to the target pass rate), then the GRPO loop of
:func:`~scalinglab.studies.rl.run.run_rl` with the same sub-seeds, generators and
updates (its held-out evaluations, which do not touch the weights, are skipped), at
the baseline variant of an RL compute class. The weights are saved as a torch
``state_dict`` (``.pt``) next to a JSON sidecar with the run config, its hash and the
provenance (:func:`scalinglab.provenance.provenance_attrs`) under
``data/test_time_scaling/policies/`` (``data/.cache/`` for the ``tiny`` class), named
by the config hash: a saved policy is reused while its config is unchanged.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch

from scalinglab import atomic
from scalinglab.compute import dataset_path
from scalinglab.models.tokenizer import arithmetic_tokenizer
from scalinglab.models.transformer import Transformer
from scalinglab.provenance import config_hash, provenance_attrs
from scalinglab.studies.rl.config import RLSweepConfig, sweep_config
from scalinglab.studies.rl.grpo import grpo_update, sample_completions
from scalinglab.studies.rl.measure import torch_threads
from scalinglab.studies.rl.run import RLRunConfig, warm_start
from scalinglab.studies.rl.tasks import sample_problems, score_completions

STUDY = "test_time_scaling"
#: Bump when training changes for the same config (invalidates saved policies).
POLICY_VERSION = "1"


def rl_class(compute_class: str) -> RLSweepConfig:
    """The RL sweep whose sizes and recipe the policies follow: ``tiny`` for ``tiny``,
    the RL study's ``small`` class otherwise (``small`` and ``medium`` share policies)."""
    return sweep_config("tiny" if compute_class.startswith("tiny") else "small")


def policy_config(sweep: RLSweepConfig, size: str, *, seed: int) -> dict:
    """Everything that determines a policy's weights (its cache key)."""
    spec = {s.name: s for s in sweep.sizes}[size]
    cfg = sweep.run_config(spec, "baseline")
    return {
        "compute_class": sweep.compute_class,
        "size": size,
        "seed": int(seed),
        "run": cfg.to_dict(),
        "policy_version": POLICY_VERSION,
    }


def policy_path(sweep: RLSweepConfig, size: str, *, seed: int) -> Path:
    """``data/test_time_scaling/policies/policy-<class>-<size>-<hash>.pt``."""
    cfg = policy_config(sweep, size, seed=seed)
    nc = dataset_path(STUDY, f"policy-{sweep.compute_class}-{size}", cfg)
    return nc.parent / "policies" / nc.with_suffix(".pt").name


def train_policy(cfg: RLRunConfig, *, seed: int, num_threads: int | None = 1) -> tuple[dict, dict]:
    """Warm-up + GRPO exactly as :func:`~scalinglab.studies.rl.run.run_rl` trains.

    Returns
    -------
    state, info
        The final ``state_dict`` (CPU tensors) and a summary (warm-up steps and check,
        GRPO steps, mean training reward of the last 20 steps, wall seconds).
    """
    t0 = time.perf_counter()
    with torch_threads(num_threads):
        _, _, s_roll, _ = (int(x) for x in np.random.SeedSequence(seed).generate_state(4))
        warm = warm_start(cfg, seed=seed)
        sets = sample_problems(
            cfg.task,
            {"sft": cfg.n_sft, "train": cfg.n_train, "heldout": cfg.n_heldout},
            seed=cfg.data_seed,
        )
        model = Transformer(cfg.model, seed=0)
        model.load_state_dict(warm.state)
        g = cfg.grpo
        if g.kl_coef:
            raise ValueError("policies are trained without a KL reference (the baseline recipe)")
        opt = torch.optim.AdamW(model.parameters(), lr=g.lr, weight_decay=g.weight_decay)
        gen = torch.Generator().manual_seed(s_roll)
        sampler = torch.Generator().manual_seed(s_roll + 1)
        prompts_all = sets["train"].prompt_tensor(arithmetic_tokenizer())
        order, pos, rewards_log = torch.randperm(cfg.pool, generator=gen), 0, []
        for _ in range(g.steps):
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
            rewards = score_completions(
                comp, sets["train"].subset(pidx.numpy()), repeats=g.group_size
            )
            prompts = prompts_all[pidx].repeat_interleave(g.group_size, dim=0)
            grpo_update(model, opt, prompts, comp, rewards, g, generator=gen)
            rewards_log.append(float(np.mean(rewards)))
        state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    info = {
        "warmup_steps": warm.steps,
        "warmup_check": warm.check,
        "grpo_steps": g.steps,
        "final_train_reward": float(np.mean(rewards_log[-20:])) if rewards_log else float("nan"),
        "n_params": model.n_params(),
        "wall_s": time.perf_counter() - t0,
    }
    return state, info


def load_or_train(
    sweep: RLSweepConfig,
    size: str,
    *,
    seed: int = 0,
    rerun: bool = False,
    num_threads: int | None = 1,
) -> tuple[Transformer, dict]:
    """The policy of ``size`` from its saved file, or trained and saved.

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
    state, info = train_policy(cfg, seed=seed, num_threads=num_threads)
    with atomic.replacing(path, suffix=".pt") as tmp:
        torch.save(state, tmp)
    meta = {**prov, "config": key, "training": info, "file": path.name}
    atomic.write_text(side, json.dumps(meta, indent=1, sort_keys=True) + "\n")
    model = Transformer(cfg.model, seed=0)
    model.load_state_dict(state)
    return model.eval(), meta
