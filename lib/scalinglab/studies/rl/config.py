"""The RL-scaling sweep's config: model sizes, variants, seeds and the compute classes.

Compute classes (:func:`sweep_config`): ``tiny`` (tests, seconds), ``small`` (the
default report: 3 sizes spanning 32x in non-embedding parameters, 3 variants,
3 seeds; about 10 minutes on 2 idle cores), ``medium`` (the redesign that can decide
the papers' claims: per-size learning rates, 4 sizes over 32x, 2000-step runs with
the plateau judged afterwards, a low R0, 5 seeds, positive controls and data reuse;
hours on 2 cores, resumable run by run), ``medium_v1`` (the first ``medium`` design,
kept so its committed report stays reproducible) and ``large`` (a GPU or a cluster).

The warm-up uses one recipe (learning rate, batch, stopping band) for every size.
The GRPO learning rate follows the width, ``lr = lr_base * lr_ref_width / d_model``
(Adam's muP rule for hidden layers, lr proportional to 1 / width): in pilot runs a
fixed RL learning rate of 1e-3 collapsed every size to zero reward while 1e-4
starved the small ones.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from scalinglab.models.tokenizer import arithmetic_tokenizer
from scalinglab.models.transformer import TransformerConfig
from scalinglab.provenance import config_dict
from scalinglab.studies.rl.grpo import GRPOConfig
from scalinglab.studies.rl.run import RLRunConfig, WarmupConfig
from scalinglab.studies.rl.stopping import PlateauRule
from scalinglab.studies.rl.tasks import TaskSpec

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
    # the v3 design: warm starts trained once per size, RL seeds from copies of them
    warm_starts: int = 0  # > 0: seeds are a flat run index over warm starts x RL seeds
    warm_start0: int = 0  # the first warm start's seed (a later block of new base models)
    eval_seed: int | None = None  # one evaluation seed for every run (common random numbers)
    warmup_fine: tuple[float, int] = (0.0, 0)  # from this check rate, check every n steps

    def __post_init__(self) -> None:
        if self.warm_starts and len(self.seeds) % self.warm_starts:
            raise ValueError(
                f"RLSweepConfig: {len(self.seeds)} seeds do not split into "
                f"{self.warm_starts} warm starts"
            )
        if self.warm_starts:
            k0 = min(self.seeds)
            if tuple(self.seeds) != tuple(range(k0, k0 + len(self.seeds))) or k0 % self.warm_starts:
                raise ValueError(
                    "RLSweepConfig: with warm_starts, seeds must be a run index k0..k0+n-1 "
                    f"with k0 a multiple of warm_starts ({self.warm_starts}); got {self.seeds}"
                )

    @property
    def rl_seeds(self) -> int:
        """RL seeds per warm start in this block (1 when every seed has its own warm start)."""
        return len(self.seeds) // self.warm_starts if self.warm_starts else 1

    @property
    def rl_seed_start(self) -> int:
        """The first RL seed of this block: 0 for a design whose run index starts at 0
        (``v3``); ``k0 // warm_starts`` for a later seed block whose run index starts at
        ``k0`` (:mod:`.extension`: its RL seeds follow the earlier block's)."""
        return min(self.seeds) // self.warm_starts if self.warm_starts else 0

    def warm_of(self, seed: int) -> int:
        """The warm start (its seed) the run ``seed`` starts from.

        With ``warm_starts`` the block's run index ``k0..k0+n-1`` is warm-start major:
        ``warm_start0 + (seed - k0) // rl_seeds`` (``v3``, ``k0 = 0``: ``seed // 2``; a
        block of new base models, :mod:`.third_stage`, starts at ``warm_start0``)."""
        if not self.warm_starts:
            return seed
        return self.warm_start0 + (seed - min(self.seeds)) // self.rl_seeds

    def rl_seed_of(self, seed: int) -> int:
        """The run's RL seed within its warm start (its seed, without ``warm_starts``):
        ``rl_seed_start + (seed - k0) % rl_seeds``."""
        if not self.warm_starts:
            return seed
        return self.rl_seed_start + (seed - min(self.seeds)) % self.rl_seeds

    def warm_seeds(self) -> list[int]:
        """Seeds of the warm-ups a size needs (each trained once)."""
        if self.warm_starts:
            return list(range(self.warm_start0, self.warm_start0 + self.warm_starts))
        return sorted(set(self.seeds) | set(self.lr_seeds))

    def to_dict(self) -> dict:
        return config_dict(self, engine_version=ENGINE_VERSION, omit_if_default=_REDESIGN_DEFAULTS)

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
        run_knobs = {
            k: over.pop(k) for k in ("train_pool", "max_new_tokens", "cap_share") if k in over
        }
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
            eval_seed=self.eval_seed,
            warmup_fine_from=self.warmup_fine[0],
            warmup_fine_every=self.warmup_fine[1],
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
        warm = len(self.sizes) * len(self.warm_seeds())
        lr = len(self.sizes) * len(self.lr_grid) * len(self.lr_seeds)
        return warm + lr + sum(len(self.runs_at(v)) * len(self.seeds) for v in self.variants)

    def runs_at(self, variant: str) -> tuple[str, ...]:
        """Names of the sizes ``variant`` runs at (every size unless restricted)."""
        return tuple(self.variant_sizes.get(variant, [s.name for s in self.sizes]))


_REDESIGN_DEFAULTS = {
    "warm_start0": 0,
    "lr_grid": (),
    "lr_seeds": (),
    "lr_steps": 0,
    "lr_last": 3,
    "lr_keep": 1.0,
    "plateau": None,
    "variant_sizes": {},
    "warm_starts": 0,
    "eval_seed": None,
    "warmup_fine": (0.0, 0),
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
    - ``v3``: the design of issue 31 (``docs/studies/rl_scaling.md``, "The v3 design"):
      sizes s/m/l/xl (25k-788k non-embedding parameters, 32x); warm-up stopped once the
      pass rate on a slice of the RL prompts reaches 0.15 (R0 about 0.15-0.25, recorded
      per warm start as ``r0``); 2 warm starts per size, each trained once, x 2 RL seeds
      started from copies of it (``seed`` is the run index, ``warm_start(seed)`` and
      ``rl_seed(seed)`` its coordinates), so base-model and RL spread separate; a
      constant learning rate at the width rule (``baseline``) and at half of it
      (``half_lr``) at every size; 4000 GRPO steps of 16 prompts x 8 completions, no
      stopping rule; evaluation every 50 steps on one fixed set of 512 held-out
      prompts x 4 samples with one evaluation seed for every run (common random
      numbers across evaluations and runs); at sizes s and m two ablations at the
      claims' scale: ``len_cap`` (a length cap on 10% of prompts, which binds the ~5%
      whose sum has 4 digits, :func:`~scalinglab.studies.rl.tasks.cap_binds`) and
      ``batch_norm`` (ScaleRL's batch-level advantage normalisation). Runs go size by
      size in the baseline, then ``half_lr``, then the ablations. About 6 hours on one
      idle core (:mod:`.budget`).
    - ``tiny_v3``: the same design at ``tiny`` scale (2-digit addition, 2 sizes, 40 steps),
      for the tests of its layout and resume logic (seconds).
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
        variants: dict[str, dict] = {
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
    elif compute_class in ("v3", "tiny_v3"):
        cfg = _v3(compute_class)
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
            f"unknown compute_class {compute_class!r}: "
            "tiny, small, medium, medium_v1, v3, tiny_v3, large"
        )
    return dataclasses.replace(cfg, **overrides) if overrides else cfg


def _v3(compute_class: str) -> RLSweepConfig:
    """The ``v3`` design, or its ``tiny_v3`` miniature (same layout, seconds to run)."""
    variants: dict[str, dict] = {
        "baseline": {},
        "half_lr": {"lr_scale": 0.5},
        "len_cap": {"cap_share": 0.1},
        "batch_norm": {"adv_norm": "batch"},
    }
    if compute_class == "tiny_v3":
        return RLSweepConfig(
            compute_class="tiny_v3",
            sizes=(SizeSpec("s", 16, 1, 2), SizeSpec("m", 32, 1, 2)),
            variants=variants,
            variant_sizes={"len_cap": ("s",), "batch_norm": ("s",)},
            seeds=(0, 1, 2, 3),
            warm_starts=2,
            eval_seed=2026,
            task=TaskSpec(op="add", n_digits=2, reverse_answer=True),
            warmup=WarmupConfig(
                lr=3e-3,
                max_steps=40,
                check_every=10,
                check_prompts=16,
                check_k=1,
                target_lo=0.15,
                target_hi=0.25,
            ),
            grpo=GRPOConfig(steps=40, prompts_per_step=4, group_size=4),
            n_sft=256,
            n_train=160,
            n_heldout=32,
            eval_every=10,
            eval_k=2,
        )
    steps, prompts = 4000, 16
    return RLSweepConfig(
        compute_class="v3",
        sizes=(
            SizeSpec("s", 32, 2),
            SizeSpec("m", 48, 3),
            SizeSpec("l", 64, 4),
            SizeSpec("xl", 128, 4),
        ),
        variants=variants,
        variant_sizes={"len_cap": ("s", "m"), "batch_norm": ("s", "m")},
        seeds=(0, 1, 2, 3),
        warm_starts=2,
        eval_seed=2026,
        warmup_fine=(0.05, 2),
        task=TaskSpec(op="add", n_digits=3, reverse_answer=True),
        warmup=WarmupConfig(target_lo=0.15, target_hi=0.25, check_every=10, check_prompts=256),
        grpo=GRPOConfig(steps=steps, prompts_per_step=prompts, group_size=8),
        n_train=steps * prompts,
        n_heldout=512,
        eval_every=50,
        eval_k=4,
    )
