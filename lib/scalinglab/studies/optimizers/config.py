"""The optimizer sweep's configuration: sizes, the sweep config and its compute classes.

:class:`SweepConfig` is everything that determines a sweep (its hash is the cache key of
the dataset and of its per-run cache); :func:`sweep_config` gives the config of a compute
class (``tiny``, ``small``, ``medium``, ``large``); :func:`planned_epochs` the passes over
the corpus each run makes, from the config alone. The phases that run it are in
:mod:`scalinglab.studies.optimizers.sweep`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scalinglab.models.corpus import CorpusConfig, build_corpus
from scalinglab.provenance import config_dict
from scalinglab.training.optimizers import (
    OPTIMIZER_TABLE,
    STUDY_OPTIMIZERS,
    default_hparams,
    hparam_grid,
)
from scalinglab.training.pretrain import ENGINE_VERSION, PretrainConfig, llama_config

#: The walk protocol's fixed ladders (:mod:`.protocol`; ``lr`` grows without end). They
#: reach the limits of the feasible range where one exists (beta1, weight decay, warmup
#: 0) and run far past the values optimizers use elsewhere (beta2 down to 0.5, betas and
#: momentum up to 0.999), so an optimum on a cut end is a finding about the model, not
#: about the ladder.
WALK_LADDERS: dict[str, tuple[float, ...]] = {
    "beta1": (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999),
    "beta2": (0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9999),
    "momentum": (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999),
    "weight_decay": (0.0, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6),
    "warmup": (0.0, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8),
}
#: The ladder ends that are limits of the feasible range: an optimum there is a
#: constrained optimum (``"at_limit"``), reported and not flagged (:mod:`.walk`).
WALK_LIMITS: dict[str, tuple[float, ...]] = {
    "beta1": (0.0,),
    "weight_decay": (0.0,),
    "warmup": (0.0,),
}


@dataclass(frozen=True)
class SizeSpec:
    """One model size: shape and batch size (sequences per step)."""

    name: str
    d_model: int
    n_layer: int
    n_head: int
    batch_size: int


@dataclass(frozen=True)
class SweepConfig:
    """A whole sweep (see the module docstring for the phases)."""

    compute_class: str
    sizes: tuple[SizeSpec, ...]
    optimizers: tuple[str, ...] = STUDY_OPTIMIZERS
    data_multiples: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)
    seeds: tuple[int, ...] = (0, 1, 2)
    seq_len: int = 64
    tokens_per_param: float = 20.0
    schedule: str = "cosine"
    tune_multiple: float = 1.0
    tune_seed: int = 0
    tune_tol: float = 0.005
    tune_max_rounds: int = 3
    tune_coords: tuple[str, ...] | None = None  # None: every coordinate of the grid
    tune_neighborhood: int | None = None  # None: sweep whole grids (the paper's rule)
    retune_coords: tuple[str, ...] = ("lr", "warmup")
    retune_multiples: tuple[float, ...] = (1.0,)
    retune_max_rounds: int = 3
    grid_overrides: dict[str, dict[str, tuple]] = field(default_factory=dict)
    # grids that grow (x factor) when the optimum sits on their edge (tuning.CoordinateDescent)
    tune_extend: dict[str, float] = field(default_factory=lambda: {"lr": 2.0, "weight_decay": 2.0})
    n_evals: int = 8
    eval_tokens: int = 4096
    final_eval_tokens: int = 32768
    corpus: CorpusConfig = CorpusConfig()
    device: str = "cpu"
    # the redesign (medium): distinct windows, and the control arms (:mod:`.arms`)
    sampler: str = "uniform"
    transfer_sizes: tuple[str, ...] = ()  # sizes where each optimizer also runs AdamW's hp
    transfer_coords: tuple[str, ...] = ("lr", "weight_decay")
    control_schedule: str = ""  # "constant" or "wsd": a schedule control arm
    control_sizes: tuple[str, ...] = ()
    control_multiples: tuple[float, ...] = ()
    # cells the design adds or leaves out (medium): size -> multiples
    baseline_extra_multiples: dict[str, tuple[float, ...]] = field(default_factory=dict)
    others_multiples: dict[str, tuple[float, ...]] = field(default_factory=dict)
    # the corpus content hash the sweep's runs were trained on ("": whatever builds here)
    corpus_pin: str = ""
    # the walk protocol (``matched``; :mod:`.protocol`): non-empty tune_seeds selects it
    tune_seeds: tuple[int, ...] = ()  # tuning seeds, disjoint from the evaluation seeds
    walk_start: dict[str, dict[str, Any]] = field(default_factory=dict)  # optimizer -> start
    walk_ladders: dict[str, tuple[float, ...]] = field(default_factory=dict)  # coord -> values
    walk_lr_factor: float = 2.0
    walk_max_evals: int = 8  # safety cap per walk (a walk stopped by it is flagged on-edge)
    walk_max_passes: int = 2  # coordinate-descent passes at the largest size
    final_coords: dict[str, tuple[str, ...]] = field(default_factory=dict)  # optimizer -> coords
    budget_retune: dict[str, tuple[float, ...]] = field(default_factory=dict)  # size -> multiples
    embed_head: str = ""  # "adamw": embeddings/head/norms to AdamW at AdamW's tuned settings
    # AdamW's multiples per size (replaces data_multiples + baseline_extra_multiples there)
    baseline_multiples: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [o for o in self.optimizers if o not in OPTIMIZER_TABLE]
        if unknown:
            raise ValueError(f"unknown optimizers {unknown}; known: {list(OPTIMIZER_TABLE)}")
        if "adamw" not in self.optimizers:
            raise ValueError("the sweep needs the baseline 'adamw'")
        if self.tune_multiple not in self.data_multiples:
            raise ValueError("tune_multiple must be one of data_multiples")
        names = {s.name for s in self.sizes}
        if not set(self.transfer_sizes) | set(self.control_sizes) <= names:
            raise ValueError(f"transfer_sizes and control_sizes must be among {sorted(names)}")
        if not set(self.control_multiples) <= set(self.data_multiples):
            raise ValueError("control_multiples must be among data_multiples")
        if bool(self.control_schedule) != bool(self.control_sizes and self.control_multiples):
            raise ValueError("a schedule control needs control_schedule, sizes and multiples")
        for name, per in (
            ("baseline_extra_multiples", self.baseline_extra_multiples),
            ("others_multiples", self.others_multiples),
        ):
            if not set(per) <= names:
                raise ValueError(f"{name} names sizes {sorted(set(per) - names)} not in the sweep")
        for size, ms in self.others_multiples.items():
            if not set(ms) <= set(self.data_multiples) or self.tune_multiple not in ms:
                raise ValueError(
                    f"others_multiples[{size!r}] must be among data_multiples and hold "
                    f"tune_multiple {self.tune_multiple:g}"
                )

        if set(self.tune_seeds) & set(self.seeds):
            raise ValueError(
                f"tuning seeds {self.tune_seeds} must not be evaluation seeds {self.seeds}"
            )
        if self.embed_head not in ("", "adamw"):
            raise ValueError(f"embed_head must be '' or 'adamw', not {self.embed_head!r}")
        for size, ms in self.baseline_multiples.items():
            if size not in names or self.tune_multiple not in ms:
                raise ValueError(
                    f"baseline_multiples[{size!r}] must name a size of the sweep and hold "
                    f"tune_multiple {self.tune_multiple:g}"
                )
        if not set(self.budget_retune) <= names:
            raise ValueError(f"budget_retune names sizes {sorted(set(self.budget_retune) - names)}")
        for size in self.control_sizes:
            run = self.others_multiples.get(size, self.data_multiples)
            if not set(self.control_multiples) <= set(run):
                raise ValueError(
                    f"the schedule control at {size!r} needs every optimizer at "
                    f"{self.control_multiples}, but others_multiples runs only {run}"
                )

    @property
    def multiples(self) -> tuple[float, ...]:
        """Every data multiple any cell runs (the dataset's ``data_multiple`` coordinate)."""
        extra = {
            m
            for per in (self.baseline_extra_multiples, self.baseline_multiples)
            for ms in per.values()
            for m in ms
        }
        return tuple(sorted(set(self.data_multiples) | extra))

    def runs_cell(self, optimizer: str, size: str, multiple: float) -> bool:
        """Whether the design runs ``optimizer`` at ``(size, multiple)``.

        Every optimizer runs every ``data_multiples`` but where ``others_multiples`` names
        the size (there the optimizers other than AdamW run only those multiples); AdamW
        also runs the ``baseline_extra_multiples`` of a size (to pin its ``L(D)`` fit).
        """
        if optimizer == "adamw":
            if size in self.baseline_multiples:
                return multiple in self.baseline_multiples[size]
            return multiple in self.data_multiples or multiple in self.baseline_extra_multiples.get(
                size, ()
            )
        return multiple in self.others_multiples.get(size, self.data_multiples)

    def grid(self, optimizer: str) -> dict[str, tuple]:
        return {**hparam_grid(optimizer), **self.grid_overrides.get(optimizer, {})}

    def run_config(
        self,
        optimizer: str,
        size: SizeSpec,
        multiple: float,
        hparams: dict[str, Any],
        *,
        schedule: str | None = None,
    ) -> PretrainConfig:
        model = llama_config(
            d_model=size.d_model, n_layer=size.n_layer, n_head=size.n_head, seq_len=self.seq_len
        )
        return PretrainConfig(
            model=model,
            optimizer=optimizer,
            hparams=dict(hparams),
            data_multiple=float(multiple),
            tokens_per_param=self.tokens_per_param,
            batch_size=size.batch_size,
            schedule=schedule or self.schedule,  # type: ignore[arg-type]
            n_evals=self.n_evals,
            eval_tokens=self.eval_tokens,
            final_eval_tokens=self.final_eval_tokens,
            corpus=self.corpus,
            sampler=self.sampler,  # type: ignore[arg-type]
        )

    def ladders(self) -> dict[str, tuple[float, ...]]:
        """The walk protocol's fixed ladders: :data:`WALK_LADDERS` with ``walk_ladders``."""
        return {**WALK_LADDERS, **self.walk_ladders}

    def to_dict(self) -> dict:
        d = config_dict(self, engine_version=ENGINE_VERSION, omit_if_default=_REDESIGN_DEFAULTS)
        d["corpus_hash"] = self.corpus_pin or build_corpus(self.corpus).content_hash
        d["optimizer_table"] = {
            o: {"defaults": default_hparams(o), "grid": self.grid(o)} for o in self.optimizers
        }
        if self.tune_seeds:  # the walks' ladders and limits decide what a tuned run is
            d["walk_protocol"] = {"ladders": self.ladders(), "limits": WALK_LIMITS}
        return d


#: Fields added by the redesign, left out of the config hash at these values.
_REDESIGN_DEFAULTS: dict[str, Any] = {
    "sampler": "uniform",
    "transfer_sizes": (),
    "transfer_coords": ("lr", "weight_decay"),
    "control_schedule": "",
    "control_sizes": (),
    "control_multiples": (),
    "baseline_extra_multiples": {},
    "others_multiples": {},
    "corpus_pin": "",
    "tune_seeds": (),
    "walk_start": {},
    "walk_ladders": {},
    "walk_lr_factor": 2.0,
    "walk_max_evals": 8,
    "walk_max_passes": 2,
    "final_coords": {},
    "budget_retune": {},
    "embed_head": "",
    "baseline_multiples": {},
}


def check_corpus(sweep: SweepConfig) -> None:
    """Raise when the corpus built here is not the one ``sweep.corpus_pin`` names.

    The ``"installed"`` corpus is made of the text that Python and the installed packages
    ship, so another set of installed packages builds another corpus; runs trained on
    it must not be mixed with the pinned sweep's.
    """
    if not sweep.corpus_pin:
        return
    built = build_corpus(sweep.corpus).content_hash
    if built != sweep.corpus_pin:
        raise RuntimeError(
            f"the {sweep.compute_class} sweep was trained on corpus {sweep.corpus_pin[:12]}, "
            f"but this environment builds {built[:12]} (its installed packages differ): "
            'install the project as `pip install -c lib/constraints.txt -e ".[test,lint]"` '
            "to train more runs of it (reading its committed dataset needs no training)"
        )


def planned_epochs(sweep: SweepConfig) -> np.ndarray:
    """Passes over the training stream of each run, from the config alone (no training).

    Returns
    -------
    numpy.ndarray
        ``(len(sweep.sizes), len(sweep.multiples))``: tokens a run draws over the
        training stream's tokens (``"permuted"``: windows drawn over windows available);
        NaN at a (size, multiple) the design runs for no optimizer.
    """
    corpus = build_corpus(sweep.corpus)
    out = np.zeros((len(sweep.sizes), len(sweep.multiples)))
    for j, sz in enumerate(sweep.sizes):
        for k, m in enumerate(sweep.multiples):
            if not any(sweep.runs_cell(o, sz.name, m) for o in sweep.optimizers):
                out[j, k] = np.nan  # no run at this budget and size
                continue
            cfg = sweep.run_config("adamw", sz, m, {})
            if sweep.sampler == "permuted":
                out[j, k] = cfg.steps * cfg.batch_size / (corpus.train.size // (cfg.seq_len + 1))
            else:
                out[j, k] = cfg.steps * cfg.batch_size * cfg.seq_len / corpus.train.size
    return out


_S = {
    "xs": SizeSpec("xs", 8, 1, 2, 8),
    "xs2": SizeSpec("xs2", 12, 1, 2, 8),
    "s": SizeSpec("s", 16, 1, 2, 8),
    "m": SizeSpec("m", 24, 2, 3, 16),
    "l": SizeSpec("l", 32, 2, 4, 16),
    "xl": SizeSpec("xl", 48, 3, 4, 32),
    "xxl": SizeSpec("xxl", 64, 4, 4, 32),
    "h": SizeSpec("h", 128, 6, 8, 64),
    "hh": SizeSpec("hh", 256, 8, 8, 128),
}


#: The ``medium`` sizes. Rule: two layers, heads of 8 dimensions, width the only knob
#: (6.7k, 25.2k, 55.5k and 221.7k non-embedding parameters: 33x); sequences of 128
#: tokens, 8 per step at width 16, 16 at widths 32 and 48, 32 at width 96, so that a run at
#: 1x Chinchilla takes 120-1100 steps.
MEDIUM_SIZES = (
    SizeSpec("w16", 16, 2, 2, 8),
    SizeSpec("w32", 32, 2, 4, 16),
    SizeSpec("w48", 48, 2, 6, 16),
    SizeSpec("w96", 96, 2, 12, 32),
)
#: Content hash of the ``installed`` corpus the ``medium`` runs trained on (Python 3.11 with
#: the project installed as ``.[test,lint]`` against ``lib/constraints.txt``).
MEDIUM_CORPUS = "5e65a198e71baf5cbf8811eedf92923730848240a3469c74392ab23428da745c"
#: The optimizers the paper ran at its largest size (1.2B), here at every ``medium`` size.
PAPER_SUBSET = ("adamw", "nadamw", "muon", "soap")

#: The ``matched`` sizes: ``medium``'s rule (two layers, heads of 8 dimensions) at widths
#: 32-96 (25.2k, 55.5k, 100.7k, 221.7k non-embedding parameters: 8.8x, the paper's 130M-1.2B
#: is 9.2x) and ONE batch size (16 sequences of 128 tokens) at every size.
MATCHED_SIZES = (
    SizeSpec("w32", 32, 2, 4, 16),
    SizeSpec("w48", 48, 2, 6, 16),
    SizeSpec("w64", 64, 2, 8, 16),
    SizeSpec("w96", 96, 2, 12, 16),
)
#: The paper's largest-size subset with the paper's NAdamW (constant Nesterov momentum).
MATCHED_OPTIMIZERS = ("adamw", "nadamw_paper", "muon", "soap")
_BETAS_WD_WARMUP = ("beta1", "beta2", "weight_decay", "warmup")


def sweep_config(compute_class: str = "small", **overrides: Any) -> SweepConfig:
    """The sweep of a compute class, with optional field overrides.

    - ``tiny``: sizes xs/xs2 (0.9k and 1.8k non-embedding parameters), multiples
      0.5, 1 and 2 (three points: the least a baseline fit needs; AdamW also at 4x at
      xs, the others only at 1x and 2x at xs2, so the tests meet every kind of cell of
      the ``medium`` design), sequences of 32, two seeds; tuning moves only the
      learning rate (one local pass), so the whole study runs in well under a minute.
    - ``small``: sizes s/m/l (3.4k, 13.9k, 25.2k: 7.5x), multiples 1/2/4/8, three
      seeds, full coordinate descent at s (1x), learning rate and warmup re-tuned at
      m and l (1x); 35 minutes measured on 2 workers of an otherwise idle 2-core
      machine (estimate: ``benchmarks/bench_optimizers.py --estimate-small``).
    - ``medium`` (issue #14): sizes w16/w32/w48/w96 (:data:`MEDIUM_SIZES`: 6.7k,
      25.2k, 55.5k, 221.7k non-embedding parameters, 33x; two layers, heads of 8
      dimensions, width the only knob), the paper's largest-size subset
      (:data:`PAPER_SUBSET`: AdamW, NAdamW, Muon, SOAP) at every size, multiples 0.5,
      1, 2, 4, three seeds, sequences of 128 tokens. At w96 the optimizers other than
      AdamW run at 1x only (:attr:`SweepConfig.others_multiples`): their speedups
      there invert AdamW's fit over 0.5-4x at a matched budget, and the trend over
      sizes is read at the budget every size shares (1x). AdamW also runs 8x and 16x
      at w16 and w32 (:attr:`SweepConfig.baseline_extra_multiples`): over 0.5-4x its
      ``L(D)`` fit left ``E`` on its bound 0 there; a single-seed probe over 0.5-16x
      moved it off (E 1.64 at w16, 1.25 at w32). Full coordinate descent at w16
      (1x), the learning rate re-tuned at every larger size (1x). Data: the
      ``"installed"`` corpus (:mod:`scalinglab.models.installed_text`, 51M training
      bytes on this machine's Python 3.11 and the project's packages) read as distinct
      windows (``sampler="permuted"``): no run draws a window twice (at most 0.35
      epochs, w96 at 4x; :func:`planned_epochs`). Arms: AdamW's lr and weight decay
      transferred to the others at w16 and w32; a constant learning rate at w16 and w32,
      4x (the mid-run ranking's agreement pooled over both cells). The corpus is pinned
      by content hash (:data:`MEDIUM_CORPUS`): the cache key names it, so the committed
      dataset is found in any environment, and training more runs checks that this
      environment builds the same corpus (:func:`check_corpus`).

      *Multiples.* 0.5-4x spans three octaves, as the paper's 1-8x does; 8x at w96
      alone (4 optimizers, 3 seeds) would take about as long as the rest of the sweep,
      and 16x there would exceed the corpus (1.4 epochs); 16x at w32 is 0.15 epochs. Whether AdamW's
      ``L(D) = A D^-alpha + E`` identifies ``E`` at every size is checked, not assumed:
      the notebook marks a size whose ``E`` sits on its bound ``not identified``.

      *Seeds (power).* The AdamW-vs-itself speedup interval, the noise floor of every
      speedup, has a half-width of about ``sigma / (alpha (L - E) sqrt(n))`` in log
      units (``sigma`` the seed spread of a final loss). In the committed ``small``
      sweep at its largest size (25k, 1k-token batches, 32k evaluation tokens) three
      seeds gave [0.86, 1.19] (half-width 0.17): at that spread, +-0.1 needs about 9
      seeds, and 9 seeds at w96 alone would take three times the budget. ``medium``
      lowers the spread per seed instead, with 2-4x larger batches at the larger
      sizes (1k-token batches become 2k-4k), 4x the final evaluation tokens (131k)
      and no repeated data; if that halves ``sigma`` at w96, three seeds reach +-0.085.
      That is a design assumption, measured by the run: the notebook records the
      AdamW-vs-itself interval and the minimum detectable speedup at every size
      (``noise/mde/<size>``), and claims nearer 1 than it read ``inconclusive``.

      *Budget.* 4.1 hours (14.8k s) on 2 workers of the 2-core machine: 0.1 core-hours
      of base tuning, 1.2 of re-tuning, 6.8 of final runs and arms, estimated from step
      times measured against the ``small`` sweep's reference cell
      (``python -m scalinglab.studies.optimizers.budget medium``, :mod:`.budget`;
      ``benchmarks/results/optimizers_medium_budget.json``).
    - ``matched`` (issue #29; :mod:`.protocol`): w32-w96 with one batch, the paper's
      NAdamW, walks to an interior optimum on tuning seeds 100 and 101.
    - ``tiny_matched``: the tests' walk-protocol sweep (``matched``'s phases, arms and
      embedding rule at the ``tiny`` sizes, walks of at most 3 evaluations, so some end
      flagged): about 180 runs, 4-10 minutes in process on 2 busy cores.
    - ``large``: sizes xxl/h/hh (200k-6.3M, 32x), five seeds; a GPU cluster.
    """
    if compute_class == "tiny":
        cfg = SweepConfig(
            compute_class="tiny",
            sizes=(_S["xs"], _S["xs2"]),
            data_multiples=(0.5, 1.0, 2.0),
            seeds=(0, 1),
            seq_len=32,
            tune_coords=("lr",),
            tune_max_rounds=1,
            tune_neighborhood=1,
            retune_coords=("lr",),
            retune_max_rounds=1,
            n_evals=4,
            eval_tokens=1024,
            final_eval_tokens=4096,
            sampler="permuted",
            transfer_sizes=("xs",),
            control_schedule="constant",
            control_sizes=("xs2",),
            control_multiples=(2.0,),
            baseline_extra_multiples={"xs": (4.0,)},
            others_multiples={"xs2": (1.0, 2.0)},
        )
    elif compute_class == "small":
        cfg = SweepConfig(compute_class="small", sizes=(_S["s"], _S["m"], _S["l"]))
    elif compute_class == "medium":
        cfg = SweepConfig(
            compute_class="medium",
            sizes=MEDIUM_SIZES,
            optimizers=PAPER_SUBSET,
            data_multiples=(0.5, 1.0, 2.0, 4.0),
            seeds=(0, 1, 2),
            seq_len=128,
            retune_coords=("lr",),
            retune_max_rounds=2,
            eval_tokens=8192,
            final_eval_tokens=131072,
            corpus=CorpusConfig(sources=("installed",), heldout_fraction=0.1),
            sampler="permuted",
            transfer_sizes=("w16", "w32"),
            control_schedule="constant",
            control_sizes=("w16", "w32"),
            control_multiples=(4.0,),
            baseline_extra_multiples={"w16": (8.0, 16.0), "w32": (8.0, 16.0)},
            others_multiples={"w96": (1.0,)},
            corpus_pin=MEDIUM_CORPUS,
        )
    elif compute_class == "matched":
        cfg = SweepConfig(
            compute_class="matched",
            sizes=MATCHED_SIZES,
            optimizers=MATCHED_OPTIMIZERS,
            data_multiples=(1.0, 2.0, 4.0, 8.0),
            seeds=(0, 1, 2),
            seq_len=128,
            eval_tokens=8192,
            final_eval_tokens=131072,
            corpus=CorpusConfig(sources=("installed",), heldout_fraction=0.1),
            sampler="permuted",
            corpus_pin=MEDIUM_CORPUS,
            transfer_sizes=("w32",),
            control_schedule="constant",
            control_sizes=("w32",),
            control_multiples=(4.0,),
            others_multiples={"w48": (1.0, 2.0, 4.0), "w64": (1.0, 2.0), "w96": (1.0,)},
            baseline_multiples={
                "w32": (0.5, 1.0, 2.0, 4.0, 8.0, 16.0),
                "w48": (0.5, 1.0, 2.0, 4.0, 8.0),
                "w64": (0.5, 1.0, 2.0, 4.0),
                "w96": (0.5, 1.0, 2.0, 4.0),
            },
            tune_seeds=(100, 101),
            # starts: the committed ``medium`` optima at w32 (the paper's NAdamW: AdamW's)
            walk_start={
                "adamw": dict(lr=8e-3, beta1=0.7, beta2=0.95, weight_decay=0.1, warmup=0.0),
                "nadamw_paper": dict(lr=8e-3, beta1=0.9, beta2=0.95, weight_decay=0.1, warmup=0.0),
                "muon": dict(lr=3.2e-2, momentum=0.9, weight_decay=0.1, warmup=0.05),
                "soap": dict(
                    lr=6.4e-2,
                    beta1=0.9,
                    beta2=0.95,
                    weight_decay=0.0,
                    warmup=0.1,
                    precondition_frequency=5,
                ),
            },
            final_coords={
                "adamw": _BETAS_WD_WARMUP,
                "nadamw_paper": _BETAS_WD_WARMUP,
                "soap": _BETAS_WD_WARMUP,
                "muon": ("momentum", "weight_decay", "warmup"),
            },
            budget_retune={"w32": (0.5, 2.0, 4.0, 8.0, 16.0), "w48": (2.0, 4.0), "w64": (2.0,)},
            embed_head="adamw",
            walk_max_passes=3,
        )
    elif compute_class == "tiny_matched":
        # the tests' walk protocol: the ``matched`` design's phases, arms and embedding rule
        # at the ``tiny`` sizes (one batch), learning-rate walks of at most 3 evaluations
        cfg = SweepConfig(
            compute_class="tiny_matched",
            sizes=(_S["xs"], _S["xs2"]),
            optimizers=MATCHED_OPTIMIZERS,
            data_multiples=(1.0, 2.0),
            seeds=(0, 1, 2),
            seq_len=32,
            n_evals=4,
            eval_tokens=1024,
            final_eval_tokens=4096,
            sampler="permuted",
            transfer_sizes=("xs",),
            control_schedule="constant",
            control_sizes=("xs",),
            control_multiples=(2.0,),
            others_multiples={"xs2": (1.0,)},
            baseline_multiples={"xs": (0.5, 1.0, 2.0, 4.0), "xs2": (0.5, 1.0, 2.0, 4.0)},
            tune_seeds=(100, 101),
            walk_max_evals=3,
            walk_max_passes=1,
            final_coords={"adamw": ("warmup",)},
            budget_retune={"xs": (2.0,)},
            embed_head="adamw",
        )
    elif compute_class == "large":
        cfg = SweepConfig(
            compute_class="large",
            sizes=(_S["xxl"], _S["h"], _S["hh"]),
            seeds=(0, 1, 2, 3, 4),
            seq_len=256,
            retune_multiples=(1.0, 2.0, 4.0, 8.0),
            final_eval_tokens=262144,
            corpus=CorpusConfig(sources=("pydoc_topics", "stdlib_docstrings", "stdlib_source")),
            device="auto",
        )
    else:
        raise ValueError(
            f"unknown compute_class {compute_class!r}: tiny, small, medium, matched, "
            "tiny_matched, large"
        )
    return dataclasses.replace(cfg, **overrides) if overrides else cfg


def cell_hparams(
    sweep: SweepConfig, tuned: dict, optimizer: str, size: SizeSpec, multiple: float
) -> dict[str, Any]:
    """Hyperparameters of a cell: tuned at its size and the nearest tuned multiple (log scale)."""
    have = [m for (o, s, m) in tuned if o == optimizer and s == size.name]
    if not have:  # a size never re-tuned takes the base optimum
        return dict(tuned[(optimizer, sweep.sizes[0].name, sweep.tune_multiple)])
    best = min(have, key=lambda m: (abs(math.log(m / multiple)), m))
    return dict(tuned[(optimizer, size.name, best)])
