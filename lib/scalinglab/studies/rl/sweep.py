"""The RL-scaling sweep: sizes x design variants x seeds, as Dask tasks, into xarray.

A sweep has two or three stages, each mapped with :func:`scalinglab.sweeps.map_runs`:

1. one warm-up per (model size, seed) (:func:`~scalinglab.studies.rl.run.warm_start`);
2. (``medium``) a short GRPO learning-rate sweep per size: ``lr_grid`` multipliers of
   the width rule below, ``lr_seeds`` seeds, ``lr_steps`` steps each; the multiplier
   with the highest held-out pass rate over its last evaluations
   (:func:`select_lr`) is used for that size's main runs, and the whole sweep is
   kept in the dataset (``lr_pass_rate``) as a result;
3. one GRPO run per (model size, variant, seed), started from that warm-up, so
   the variants of a size and seed share their starting policy and R0 (paired
   ablations) and the warm-up is paid once. ``variant_sizes`` can restrict a
   variant to some sizes (the other cells are ``status`` "skipped").

Each task sets torch to one thread (also in ``scheduler="sync"``), so a result
does not depend on where it ran. A task that raises is reported in the dataset
(``status`` "failed" and its traceback in ``error``; its values NaN) and printed,
never dropped. Results are cached under ``data/rl_scaling/`` by the hash of the
sweep config (which includes :data:`ENGINE_VERSION`) through
:func:`scalinglab.sweeps.cached_sweep`, which also keeps every finished warm-up and
GRPO run while the sweep runs, so an interrupted sweep resumes run by run.

Compute classes (:func:`sweep_config`): ``tiny`` (tests, seconds), ``small`` (the
default report: 3 sizes spanning 32x in non-embedding parameters, 3 variants,
3 seeds; about 10 minutes on 2 idle cores), ``medium`` (the redesign that can decide
the papers' claims: per-size learning rates, 4 sizes over 32x, 2000-step runs with
the plateau judged afterwards, a low R0, 5 seeds, positive controls and data reuse; hours on 2 cores, resumable run
by run) and ``large`` (a GPU or a cluster).

The warm-up uses one recipe (learning rate, batch, stopping band) for every size.
The GRPO learning rate follows the width, ``lr = lr_base * lr_ref_width / d_model``
(Adam's muP rule for hidden layers, lr proportional to 1 / width): in pilot runs a
fixed RL learning rate of 1e-3 collapsed every size to zero reward while 1e-4
starved the small ones.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from scalinglab.compute import resolve_device
from scalinglab.models.tokenizer import arithmetic_tokenizer
from scalinglab.models.transformer import TransformerConfig
from scalinglab.studies.rl.grpo import GRPOConfig
from scalinglab.studies.rl.lr_stage import lr_stage_dataset, select_lr
from scalinglab.studies.rl.run import (
    RLRunConfig,
    RunResult,
    WarmStart,
    WarmupConfig,
    run_rl,
    warm_start,
)
from scalinglab.studies.rl.stopping import PlateauRule
from scalinglab.studies.rl.tasks import TaskSpec
from scalinglab.sweeps import RunCache, cached_sweep, map_runs

#: Bump when the engine's results change for the same config (invalidates caches).
ENGINE_VERSION = "1"
STUDY = "rl_scaling"


@dataclass(frozen=True)
class SizeSpec:
    """One model size: its shape (other architecture knobs come from the sweep)."""

    name: str
    d_model: int
    n_layer: int
    n_head: int = 4


@dataclass(frozen=True)
class RLSweepConfig:
    """A whole sweep. ``variants`` maps a name to :class:`GRPOConfig` overrides of the
    baseline ``grpo`` (the first variant should be the baseline, ``{}``)."""

    compute_class: str
    sizes: tuple[SizeSpec, ...]
    variants: dict[str, dict] = field(default_factory=lambda: {"baseline": {}})
    seeds: tuple[int, ...] = (0, 1, 2)
    task: TaskSpec = TaskSpec(op="add", n_digits=3, reverse_answer=True)
    warmup: WarmupConfig = WarmupConfig()
    grpo: GRPOConfig = GRPOConfig()
    lr_base: float = 6e-4
    lr_ref_width: int = 32
    architecture: dict = field(default_factory=dict)  # extra TransformerConfig knobs
    n_sft: int = 4000
    n_train: int = 4000
    n_heldout: int = 256
    eval_every: int = 20
    eval_k: int = 4
    data_seed: int = 0
    device: str = "cpu"
    # the redesign (medium): learning-rate stage, plateau stopping, variants on some sizes
    lr_grid: tuple[float, ...] = ()  # multipliers of the width rule tried per size
    lr_seeds: tuple[int, ...] = ()
    lr_steps: int = 0
    lr_last: int = 3  # evaluations averaged to rank the learning rates
    lr_keep: float = 1.0  # < 1: the smallest stable multiplier within this share of the best gain
    plateau: PlateauRule | None = None
    variant_sizes: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        for k, default in _REDESIGN_DEFAULTS.items():  # unused: older configs keep their hash
            if d[k] == default:
                del d[k]
        d["engine_version"] = ENGINE_VERSION
        return d

    def rule_lr(self, size: SizeSpec) -> float:
        """The width rule's learning rate ``lr_base * lr_ref_width / d_model``."""
        return self.lr_base * self.lr_ref_width / size.d_model

    def run_config(self, size: SizeSpec, variant: str, *, lr_mult: float = 1.0) -> RLRunConfig:
        """The :class:`RLRunConfig` of one (size, variant).

        A variant overrides :class:`GRPOConfig` fields, and may also set ``lr_scale``
        (times the size's learning rate), ``train_pool`` and ``max_new_tokens``
        (:class:`~scalinglab.studies.rl.run.RLRunConfig`). ``lr_mult`` multiplies the
        width rule's learning rate (the size's selected multiplier).
        """
        model = TransformerConfig(
            vocab_size=arithmetic_tokenizer().vocab_size,
            d_model=size.d_model,
            n_layer=size.n_layer,
            n_head=size.n_head,
            max_seq_len=self.task.prompt_len + self.task.max_answer_len + 1,
            **self.architecture,
        )
        over = dict(self.variants[variant])
        lr = self.rule_lr(size) * lr_mult * over.pop("lr_scale", 1.0)
        run_knobs = {k: over.pop(k) for k in ("train_pool", "max_new_tokens") if k in over}
        grpo = dataclasses.replace(self.grpo, lr=lr, **over)
        return RLRunConfig(
            model=model,
            task=self.task,
            warmup=self.warmup,
            grpo=grpo,
            n_sft=self.n_sft,
            n_train=self.n_train,
            n_heldout=self.n_heldout,
            eval_every=self.eval_every,
            eval_k=self.eval_k,
            data_seed=self.data_seed,
            plateau=self.plateau,
            **run_knobs,
        )

    def lr_config(self, size: SizeSpec, lr_mult: float) -> RLRunConfig:
        """A learning-rate-stage run: the baseline at ``lr_mult`` x the width rule,
        ``lr_steps`` steps, no plateau stop."""
        cfg = self.run_config(size, next(iter(self.variants)), lr_mult=lr_mult)
        return dataclasses.replace(
            cfg, grpo=dataclasses.replace(cfg.grpo, steps=self.lr_steps), plateau=None
        )

    def n_tasks(self) -> int:
        """Warm-ups, learning-rate-stage runs and main runs of the whole sweep."""
        warm = len(self.sizes) * len(set(self.seeds) | set(self.lr_seeds))
        lr = len(self.sizes) * len(self.lr_grid) * len(self.lr_seeds)
        return warm + lr + sum(len(self.runs_at(v)) * len(self.seeds) for v in self.variants)

    def runs_at(self, variant: str) -> tuple[str, ...]:
        """Names of the sizes ``variant`` runs at (every size unless restricted)."""
        return tuple(self.variant_sizes.get(variant, [s.name for s in self.sizes]))


_REDESIGN_DEFAULTS = {
    "lr_grid": (),
    "lr_seeds": (),
    "lr_steps": 0,
    "lr_last": 3,
    "lr_keep": 1.0,
    "plateau": None,
    "variant_sizes": {},
}


_ABLATIONS = {
    "baseline": {},
    "sample_agg": {"loss_agg": "sample"},
    "batch_norm": {"adv_norm": "batch"},
}
_SIZES = {
    "s": SizeSpec("s", 32, 2),
    "m": SizeSpec("m", 64, 3),
    "l": SizeSpec("l", 128, 4),
    "xl": SizeSpec("xl", 256, 6, 8),
    "xxl": SizeSpec("xxl", 512, 8, 8),
}


def sweep_config(compute_class: str = "small", **overrides) -> RLSweepConfig:
    """The sweep of a compute class, with optional field overrides.

    - ``tiny``: 2-digit addition, widths 32/48/64 (25k-99k parameters), baseline and
      per-sample aggregation, 2 seeds, 60 steps of 8 prompts: about 30 s, for tests
      and the notebook's smoke run (curves are short and noisy).
    - ``small``: sizes s/m/l (25k, 148k, 788k non-embedding parameters, 32x),
      baseline + per-sample aggregation + batch-level advantage normalisation,
      3 seeds, 500 GRPO steps of 16 prompts x 8 completions, eval every 25 steps
      on 256 held-out prompts x 4 samples (about 20 core-minutes: 9-10 minutes on
      2 idle cores, estimated by ``benchmarks/bench_rl.py --estimate-small``).
    - ``medium``: the redesign (``docs/studies/rl_scaling.md``): sizes s/m/l/xl
      (32/48/64/128 wide, 2-4 layers: 25k-788k non-embedding parameters, 32x); a
      learning-rate stage per size (0.25, 0.5, 1 x the width rule, 3 seeds, 600
      steps; a multiplier under which a run collapsed is excluded, and the smallest
      multiplier within 80% of the best one's gain is kept, :func:`select_lr`: a first start at
      0.5-4x collapsed GRPO to zero reward at 1x and above from R0 0.03, and 300-step
      runs on 2 seeds chose 1x at the sizes where two of five 2000-step runs then
      collapsed); warm-up stopped at a pass rate of 0.03 (a slow start can show);
      every GRPO run trains its full 2000 steps, the plateau judged afterwards
      (:func:`~scalinglab.studies.rl.stopping.plateau_onset`: stopping on the rule
      ended runs still climbing or already falling); 5 seeds; baseline at every
      size, and at sizes s and m the two design ablations, half the learning rate
      (a positive control on efficiency), a generation cap of 4 tokens (3 digits +
      EOS, below the 4-digit sums' 5: a positive control that must lower A) and a
      fixed pool of 2000 prompts reused for up to 16 epochs against fresh prompts
      (Tan et al.'s data reuse), all at the same compute per step. About 2.4 hours
      on 2 idle cores (:mod:`.budget`, from the first medium sweep's step times).
    - ``medium_v1``: the first ``medium`` design, kept so its committed data and report
      stay reproducible: a 300-step learning-rate stage at 0.125-1x on 2 seeds, and
      main runs stopped by the plateau rule (``compute_class`` is "medium" in its
      config, so the config hash and data file are the ones it was run with).
    - ``large``: sizes s..xxl, 8 seeds, 2000 steps, 4-digit addition.
    """
    if compute_class == "tiny":
        cfg = RLSweepConfig(
            compute_class="tiny",
            sizes=(SizeSpec("s", 32, 2), SizeSpec("m", 48, 2), SizeSpec("l", 64, 2)),
            variants={"baseline": {}, "sample_agg": {"loss_agg": "sample"}},
            seeds=(0, 1),
            task=TaskSpec(op="add", n_digits=2, reverse_answer=True),
            warmup=WarmupConfig(
                lr=3e-3, batch_size=64, max_steps=600, check_every=10, check_prompts=64, check_k=2
            ),
            grpo=GRPOConfig(steps=60, prompts_per_step=8, group_size=8),
            n_sft=1500,
            n_train=1000,
            n_heldout=64,
            eval_every=10,
            eval_k=2,
        )
    elif compute_class == "small":
        cfg = RLSweepConfig(
            compute_class="small",
            sizes=(_SIZES["s"], _SIZES["m"], _SIZES["l"]),
            variants=dict(_ABLATIONS),
            grpo=GRPOConfig(steps=500),
            eval_every=25,
        )
    elif compute_class in ("medium", "medium_v1"):
        task = TaskSpec(op="add", n_digits=3, reverse_answer=True)
        steps, ablated = 2000, ("s", "m")
        variants = {
            **_ABLATIONS,
            "half_lr": {"lr_scale": 0.5},
            "len_cap": {"max_new_tokens": task.max_answer_len},
            "reuse": {"train_pool": 2000},
        }
        cfg = RLSweepConfig(
            compute_class="medium",
            sizes=(
                SizeSpec("s", 32, 2),
                SizeSpec("m", 48, 3),
                SizeSpec("l", 64, 4),
                SizeSpec("xl", 128, 4),
            ),
            variants=variants,
            seeds=tuple(range(5)),
            task=task,
            warmup=WarmupConfig(target_lo=0.03, target_hi=0.06),
            grpo=GRPOConfig(steps=steps),
            n_train=steps * GRPOConfig().prompts_per_step,
            n_heldout=512,
            eval_every=25,
            eval_k=4,
            lr_grid=(0.25, 0.5, 1.0),
            lr_seeds=(0, 1, 2),
            lr_steps=600,
            lr_keep=0.8,
            variant_sizes={v: ablated for v in variants if v != "baseline"},
        )
        if compute_class == "medium_v1":  # the first medium design, as its data was computed
            cfg = dataclasses.replace(
                cfg,
                lr_grid=(0.125, 0.25, 0.5, 1.0),
                lr_seeds=(0, 1),
                lr_steps=300,
                lr_keep=1.0,
                plateau=PlateauRule(min_steps=400),
            )
    elif compute_class == "large":
        cfg = RLSweepConfig(
            compute_class="large",
            sizes=tuple(_SIZES[k] for k in ("s", "m", "l", "xl", "xxl")),
            variants={**_ABLATIONS, "group4": {"group_size": 4}, "group16": {"group_size": 16}},
            seeds=tuple(range(8)),
            task=TaskSpec(op="add", n_digits=4, reverse_answer=True),
            grpo=GRPOConfig(steps=2000, prompts_per_step=32),
            n_sft=20000,
            n_train=20000,
            n_heldout=1024,
            eval_every=50,
            eval_k=8,
        )
    else:
        raise ValueError(
            f"unknown compute_class {compute_class!r}: tiny, small, medium, medium_v1, large"
        )
    return dataclasses.replace(cfg, **overrides) if overrides else cfg


def _warm_task(item: tuple[RLSweepConfig, int, int]) -> WarmStart:
    sweep, size_i, seed = item
    cfg = sweep.run_config(sweep.sizes[size_i], next(iter(sweep.variants)))
    return warm_start(cfg, seed=seed, device=sweep.device, num_threads=1)


def _rl_task(item: tuple[RLSweepConfig, int, str, int, WarmStart, float]) -> RunResult:
    sweep, size_i, variant, seed, warm, lr_mult = item
    cfg = sweep.run_config(sweep.sizes[size_i], variant, lr_mult=lr_mult)
    return run_rl(cfg, seed=seed, device=sweep.device, num_threads=1, warm=warm)


def _lr_task(item: tuple[RLSweepConfig, int, float, int, WarmStart]) -> RunResult:
    sweep, size_i, lr_mult, seed, warm = item
    cfg = sweep.lr_config(sweep.sizes[size_i], lr_mult)
    return run_rl(cfg, seed=seed, device=sweep.device, num_threads=1, warm=warm)


def execute_sweep(
    sweep: RLSweepConfig,
    *,
    scheduler: str = "",
    client=None,
    progress: bool = True,
    runs: RunCache | None = None,
) -> xr.Dataset:
    """Run every task of ``sweep`` and assemble the dataset.

    ``runs``: the sweep's per-run cache (:func:`scalinglab.sweeps.cached_sweep`); warm-ups
    and GRPO runs found there are not run again, new ones are stored as they finish.
    None: no caching. Main runs go variant by variant, seed by seed, so an interrupted
    sweep has whole seeds of the baseline at every size first.
    """
    from scalinglab.compute import get_client

    sweep = dataclasses.replace(sweep, device=resolve_device(sweep.device))
    names = [s.name for s in sweep.sizes]
    warm_seeds = sorted(set(sweep.seeds) | set(sweep.lr_seeds))
    warm_items = [(sweep, i, s) for i in range(len(sweep.sizes)) for s in warm_seeds]
    rl_keys = [
        (i, v, s)
        for v in sweep.variants
        for s in sweep.seeds
        for i in range(len(sweep.sizes))
        if names[i] in sweep.runs_at(v)
    ]
    own = client is None and scheduler != "sync"
    lr_results: dict = {}
    with get_client(scheduler) if own else contextlib.nullcontext(client) as cl:
        warms, wfail = map_runs(
            _warm_task,
            warm_items,
            runs=runs,
            scheduler=scheduler,
            client=cl,
            desc="warm-up",
            keys=[["warm-up", sweep.sizes[i].name, s] for _, i, s in warm_items],
            progress=progress,
        )
        warm_of = {
            (it[1], it[2]): w for it, w in zip(warm_items, warms, strict=True) if w is not None
        }
        werr = {(f.config[1], f.config[2]): f.error for f in wfail}
        mult = dict.fromkeys(range(len(sweep.sizes)), 1.0)
        if sweep.lr_grid:
            lr_items = [
                (sweep, i, m, s, warm_of[(i, s)])
                for i in range(len(sweep.sizes))
                for m in sweep.lr_grid
                for s in sweep.lr_seeds
                if (i, s) not in werr
            ]
            lr_runs, lr_fail = map_runs(
                _lr_task,
                lr_items,
                runs=runs,
                scheduler=scheduler,
                client=cl,
                desc="learning-rate stage",
                progress=progress,
                keys=[["lr", names[i], m, s] for _, i, m, s, _ in lr_items],
            )
            for f in lr_fail:
                print(
                    f"FAILED learning-rate run size={names[f.config[1]]} x{f.config[2]} "
                    f"seed={f.config[3]}: {f.error.strip().splitlines()[-1]}"
                )
            lr_results = {
                (it[1], it[2], it[3]): r
                for it, r in zip(lr_items, lr_runs, strict=True)
                if r is not None
            }
            mult = {i: select_lr(sweep, lr_results, i) for i in range(len(sweep.sizes))}
        todo = [
            (sweep, i, v, s, warm_of[(i, s)], mult[i]) for i, v, s in rl_keys if (i, s) not in werr
        ]
        tagged = bool(sweep.lr_grid)  # the key names the selected learning rate
        results_, rfail = map_runs(
            _rl_task,
            todo,
            runs=runs,
            scheduler=scheduler,
            client=cl,
            desc="GRPO runs",
            keys=[
                ["grpo", sweep.sizes[i].name, v, s, *([m] if tagged else [])]
                for _, i, v, s, _, m in todo
            ],
            progress=progress,
        )
    failed = {f.index for f in rfail}
    results = {
        (it[1], it[2], it[3]): r
        for n, (it, r) in enumerate(zip(todo, results_, strict=True))
        if n not in failed
    }
    errors = {
        (i, v, s): "warm-up failed:\n" + werr[(i, s)] for i, v, s in rl_keys if (i, s) in werr
    }
    errors.update({(f.config[1], f.config[2], f.config[3]): f.error for f in rfail})
    for (i, v, s), err in errors.items():
        print(
            f"FAILED run size={sweep.sizes[i].name} variant={v} seed={s}: "
            f"{err.strip().splitlines()[-1]}"
        )
    ds = to_dataset(sweep, results, errors, warm_of, lr_mult=mult)
    if sweep.lr_grid:
        ds = ds.merge(lr_stage_dataset(sweep, lr_results))
    return ds


def to_dataset(
    sweep: RLSweepConfig,
    results: dict,
    errors: dict,
    warms: dict,
    *,
    lr_mult: dict[int, float] | None = None,
) -> xr.Dataset:
    """Assemble runs into a Dataset (dims ``model_size, variant, seed, eval, step``).

    A run that stopped early (plateau rule) has NaN after its last evaluation and
    step; a (size, variant) the sweep does not run is ``status`` "skipped".

    Parameters
    ----------
    results
        ``(size_index, variant, seed) -> RunResult`` of the runs that finished.
    errors
        ``(size_index, variant, seed) -> traceback`` of the runs that failed.
    warms
        ``(size_index, seed) -> WarmStart`` (None where the warm-up failed).
    lr_mult
        ``size_index -> multiplier`` of the width rule's learning rate used (1).
    """
    lr_mult = lr_mult or {}
    names = [s.name for s in sweep.sizes]
    variants, seeds = list(sweep.variants), list(sweep.seeds)
    steps = sweep.grpo.steps
    ev_steps = sorted({0, *range(sweep.eval_every, steps + 1, sweep.eval_every), steps})
    shape = (len(names), len(variants), len(seeds))
    e, s_ = len(ev_steps), steps
    arr = {k: np.full((*shape, e), np.nan) for k in ("pass_rate", "flops", "wall_s")}
    per = {
        k: np.full((*shape, s_), np.nan)
        for k in ("train_reward", "mean_length", "clip_frac", "zero_adv_frac", "step_flops")
    }
    timing = {k: np.full(shape, np.nan) for k in ("rollout_s", "reward_s", "update_s", "eval_s")}
    status = np.full(shape, "failed", dtype=object)
    for j, v in enumerate(variants):
        for i, name in enumerate(names):
            if name not in sweep.runs_at(v):
                status[i, j] = "skipped"
    error = np.full(shape, "", dtype=object)
    stopped = np.zeros(shape, dtype=bool)
    for (i, v, s), r in results.items():
        j, k = variants.index(v), seeds.index(s)
        ne, ns = len(r.eval_step), len(r.step_flops)
        if list(r.eval_step) != ev_steps[:ne] or not (ne == e or sweep.plateau is not None):
            raise RuntimeError(f"eval schedule {list(r.eval_step)} != expected {ev_steps}")
        arr["pass_rate"][i, j, k, :ne], arr["flops"][i, j, k, :ne] = r.pass_rate, r.eval_flops
        arr["wall_s"][i, j, k, :ne] = r.eval_wall_s
        for name in per:
            per[name][i, j, k, :ns] = getattr(r, name)
        for name in timing:
            timing[name][i, j, k] = r.timing_s[name[:-2]]
        stopped[i, j, k] = getattr(r, "stopped_early", False)
        status[i, j, k] = "ok"
    for (i, v, s), err in errors.items():
        error[i, variants.index(v), seeds.index(s)] = err
    warm_vars = {
        k: np.full((len(names), len(seeds)), np.nan)
        for k in ("warmup_steps", "warmup_flops", "warmup_wall_s", "warmup_check")
    }
    for (i, s), w in warms.items():
        if w is not None:
            for k in warm_vars:
                warm_vars[k][i, seeds.index(s)] = getattr(w, k.removeprefix("warmup_"))
    cfgs = [
        sweep.run_config(sz, variants[0], lr_mult=lr_mult.get(i, 1.0))
        for i, sz in enumerate(sweep.sizes)
    ]
    run_dims, ev_dims = ("model_size", "variant", "seed"), ("model_size", "variant", "seed", "eval")
    ds = xr.Dataset(
        {
            "pass_rate": (ev_dims, arr["pass_rate"], {"long_name": "held-out pass rate (mean@k)"}),
            **{k: (("model_size", "variant", "seed", "step"), v) for k, v in per.items()},
            **{k: (run_dims, v) for k, v in timing.items()},
            **{k: (("model_size", "seed"), v) for k, v in warm_vars.items()},
            "status": (run_dims, status.astype(str)),
            "error": (run_dims, error.astype(str)),
            **({"stopped_early": (run_dims, stopped)} if sweep.plateau is not None else {}),
        },
        coords={
            "model_size": names,
            "variant": variants,
            "seed": seeds,
            "eval": np.arange(e),
            "step": np.arange(1, s_ + 1),
            "eval_step": ("eval", np.array(ev_steps)),
            "samples": (
                ("variant", "eval"),
                np.array(
                    [
                        [st * c.grpo.prompts_per_step * c.grpo.group_size for st in ev_steps]
                        for c in (sweep.run_config(sweep.sizes[0], v) for v in variants)
                    ]
                ),
                {"long_name": "completions sampled"},
            ),
            "flops": (ev_dims, arr["flops"], {"units": "FLOP", "long_name": "RL compute"}),
            "wall_s": (ev_dims, arr["wall_s"], {"units": "s"}),
            "n_params": ("model_size", [c.model.n_params() for c in cfgs]),
            "n_params_total": ("model_size", [c.model.n_params(non_embedding=False) for c in cfgs]),
            "d_model": ("model_size", [s.d_model for s in sweep.sizes]),
            "n_layer": ("model_size", [s.n_layer for s in sweep.sizes]),
            "lr": ("model_size", [c.grpo.lr for c in cfgs]),
            **(
                {
                    "lr_mult_selected": (
                        "model_size",
                        [lr_mult.get(i, 1.0) for i in range(len(names))],
                    )
                }
                if sweep.lr_grid
                else {}
            ),
            **(
                {
                    "prompt_pool": (
                        "variant",
                        [sweep.run_config(sweep.sizes[0], v).pool for v in variants],
                    ),
                    "gen_len": (
                        "variant",
                        [sweep.run_config(sweep.sizes[0], v).gen_len for v in variants],
                    ),
                }
                if sweep.plateau is not None or sweep.lr_grid
                else {}
            ),
            "variant_overrides": ("variant", [json.dumps(sweep.variants[v]) for v in variants]),
        },
        attrs={
            "study": STUDY,
            "compute_class": sweep.compute_class,
            "device": sweep.device,
            "n_failed": int((status == "failed").sum()),
            "engine_version": ENGINE_VERSION,
        },
    )
    return ds


def run_sweep(
    sweep: RLSweepConfig | str = "small",
    *,
    scheduler: str = "",
    client=None,
    rerun: bool = False,
    progress: bool = True,
) -> xr.Dataset:
    """The sweep's dataset, from ``data/rl_scaling/`` when its config is unchanged.

    Parameters
    ----------
    sweep
        A config or a compute-class name.
    scheduler, client
        Where tasks run (:func:`scalinglab.compute.get_client`): ``""`` a local
        cluster, ``"sync"`` in-process, or a scheduler address.
    rerun
        Recompute even when cached (runs of an interrupted attempt are still reused).

    Returns
    -------
    xarray.Dataset
        See :func:`to_dataset`; ``status``/``error`` say which runs failed.
    """
    if isinstance(sweep, str):
        sweep = sweep_config(sweep)
    sweep = dataclasses.replace(sweep, device=resolve_device(sweep.device))
    return cached_sweep(
        STUDY,
        f"grpo-{sweep.compute_class}",
        sweep.to_dict(),
        lambda runs: execute_sweep(
            sweep, scheduler=scheduler, client=client, progress=progress, runs=runs
        ),
        rerun=rerun,
    )


def rl_runs_folder(sweep: RLSweepConfig) -> Path:
    """Where the sweep keeps its finished runs while it runs
    (``data/rl_scaling/.runs/grpo-<class>-<hash>/``; gone once the combined Dataset exists)."""
    from scalinglab.compute import dataset_path
    from scalinglab.sweeps import RUNS_DIR

    sweep = dataclasses.replace(sweep, device=resolve_device(sweep.device))
    path = dataset_path(STUDY, f"grpo-{sweep.compute_class}", sweep.to_dict())
    return path.parent / RUNS_DIR / path.stem
