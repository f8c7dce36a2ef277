"""What a sparsity-law sweep trains: model shapes, the recipe, and the compute classes.

:class:`SparsitySweepConfig` fixes every run of a sweep (its ``to_dict`` is the
cache key, with the corpus hash); :func:`sweep_config` gives the main sweep of
a compute class (sizes at one width/depth ratio, and shapes at about one
parameter count) and :func:`horizon_config` the long-horizon probe (the
smallest size trained 16x longer); :func:`matched_configs` the design that
separates size from data: each size at the same tokens per parameter, and a
second width-depth family at a quarter of the first one's parameters. The long designs
(each size or shape to the horizon where its limit is identified) are in
:mod:`~scalinglab.studies.sparsity.long_config`. The training loop is in
:mod:`scalinglab.studies.sparsity.sweep`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from scalinglab.models.corpus import CorpusConfig
from scalinglab.models.transformer import TransformerConfig
from scalinglab.studies.sparsity.cett import METHODS

#: Bump when results change for the same config (invalidates caches).
ENGINE_VERSION = "1"
STUDY = "sparsity_laws"
ACTIVATIONS = ("relu", "silu")


@dataclass(frozen=True)
class ModelSpec:
    """One model shape; ``family`` is ``"size"``, ``"width_depth"`` or ``"both"``."""

    name: str
    d_model: int
    n_layer: int
    n_head: int = 4
    family: str = "size"


@dataclass(frozen=True)
class SparsitySweepConfig:
    """A whole sweep (every run trains on ``tokens`` tokens)."""

    compute_class: str
    models: tuple[ModelSpec, ...]
    activations: tuple[str, ...] = ACTIVATIONS
    seeds: tuple[int, ...] = (0, 1, 2)
    tokens: int = 1_500_000
    n_checkpoints: int = 10
    first_checkpoint: float = 0.08  # fraction of the run at the first checkpoint
    batch_size: int = 16
    seq_len: int = 128
    lr: float = 3e-3
    warmup_frac: float = 0.05
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    p: float = 1.0
    eval_tokens: int = 4096
    baselines: tuple[str, ...] = ("topk", "threshold")
    corpus: CorpusConfig = CorpusConfig()
    architecture: dict = field(
        default_factory=lambda: {"norm": "rmsnorm", "pos": "rotary", "tie_embeddings": True}
    )
    device: str = "cpu"
    checkpoint_dir: str = ""  # save state dicts there when set

    def __post_init__(self) -> None:
        bad = [a for a in self.activations if a not in ACTIVATIONS]
        if bad or not self.activations:
            raise ValueError(f"activations must be among {ACTIVATIONS}, got {self.activations}")
        if any(b not in METHODS or b == "cett" for b in self.baselines):
            raise ValueError(f"baselines must be among 'topk', 'threshold': {self.baselines}")
        names = [m.name for m in self.models]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"model names must be unique and non-empty: {names}")
        if self.n_checkpoints < 1 or not self.seeds or self.tokens < 1:
            raise ValueError("need n_checkpoints >= 1, at least one seed and tokens >= 1")
        for m in self.models:  # fail now, not inside a task hours later
            if m.family not in ("size", "width_depth", "both"):
                raise ValueError(f"model {m.name}: unknown family {m.family!r}")
            self.model_config(m, self.activations[0])

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["engine_version"] = ENGINE_VERSION
        return d

    @property
    def steps(self) -> int:
        return max(1, self.tokens // (self.batch_size * self.seq_len))

    def checkpoint_steps(self) -> list[int]:
        """Geometric steps from ``first_checkpoint * steps`` to ``steps`` (distinct)."""
        first = max(1.0, self.first_checkpoint * self.steps)
        raw = np.geomspace(first, self.steps, self.n_checkpoints)
        return sorted({int(round(s)) for s in raw})

    def model_config(self, spec: ModelSpec, activation: str) -> TransformerConfig:
        return TransformerConfig(
            vocab_size=259,
            d_model=spec.d_model,
            n_layer=spec.n_layer,
            n_head=spec.n_head,
            max_seq_len=self.seq_len,
            ffn="gated",
            activation=activation,
            **self.architecture,
        )


_SMALL = (
    ModelSpec("s", 32, 2),
    ModelSpec("m", 48, 3, family="both"),
    ModelSpec("l", 64, 4),
    ModelSpec("w1", 80, 1, family="width_depth"),
    ModelSpec("w2", 56, 2, family="width_depth"),
    ModelSpec("w6", 32, 6, family="width_depth"),
    ModelSpec("w8", 28, 8, 2, family="width_depth"),
)


def sweep_config(compute_class: str = "small", **overrides) -> SparsitySweepConfig:
    """The sweep of a compute class, with optional field overrides.

    - ``tiny``: 2 sizes + 1 extra shape (2-8k parameters), 2 seeds, 60k tokens
      of the pydoc corpus, 4 checkpoints: seconds, for tests and smoke runs.
    - ``small``: sizes s/m/l (25k, 83k, 201k non-embedding parameters; width/depth
      16), width-depth shapes at 75-83k parameters (width/depth 80, 28, 16, 5.3,
      3.5), ReLU and SiLU, 3 seeds, 1.5M tokens each (60 to 7.5 tokens per
      parameter), 10 checkpoints: 42 runs, about 2,900 core-seconds measured from
      partial runs on the shared 2-core machine under load (about 24 minutes on 2
      workers; :func:`time_partial_runs`, :func:`estimate_seconds`).
    - ``medium``: 5 seeds, 8M tokens, the stdlib source added to the corpus.
    - ``large``: medium with 32M tokens and a larger size (GPU or cluster).
    """
    if compute_class == "tiny":
        cfg = SparsitySweepConfig(
            compute_class="tiny",
            models=(
                ModelSpec("s", 16, 1, 2),
                ModelSpec("m", 16, 2, 2, family="both"),
                ModelSpec("w1", 24, 1, 2, family="width_depth"),
            ),
            seeds=(0, 1),
            tokens=60_000,
            n_checkpoints=6,  # >= 4 usable points per ReLU curve: the law has 4 free parameters
            first_checkpoint=0.1,
            batch_size=8,
            seq_len=32,
            lr=3e-3,
            eval_tokens=512,
            corpus=CorpusConfig(sources=("pydoc_topics",), heldout_fraction=0.05),
        )
    elif compute_class == "small":
        cfg = SparsitySweepConfig(compute_class="small", models=_SMALL)
    elif compute_class in ("medium", "large"):
        models = _SMALL + ((ModelSpec("xl", 96, 6),) if compute_class == "large" else ())
        cfg = SparsitySweepConfig(
            compute_class=compute_class,
            models=models,
            seeds=tuple(range(5)),
            tokens=8_000_000 if compute_class == "medium" else 32_000_000,
            n_checkpoints=14,
            eval_tokens=8192,
            corpus=CorpusConfig(sources=("pydoc_topics", "stdlib_docstrings", "stdlib_source")),
        )
    else:
        raise ValueError(f"unknown compute_class {compute_class!r}: tiny, small, medium, large")
    return dataclasses.replace(cfg, **overrides) if overrides else cfg


#: The second width-depth family (about 25k non-embedding parameters, a third of
#: the main family's 77-83k): width/depth 48, 16, 6, 4, 2 at 25.0-27.9k parameters.
_WD_25K = (
    ModelSpec("v1", 48, 1, family="width_depth"),
    ModelSpec("v2", 32, 2, family="width_depth"),
    ModelSpec("v4", 24, 4, family="width_depth"),
    ModelSpec("v5", 20, 5, 2, family="width_depth"),
    ModelSpec("v8", 16, 8, 2, family="width_depth"),
)

#: The horizon probe's and the long designs' corpus: the main corpus plus the standard
#: library's source.
LONG_CORPUS = CorpusConfig(sources=("pydoc_topics", "stdlib_docstrings", "stdlib_source"))

#: Tokens per non-embedding parameter of the matched design (Chinchilla's 20).
MATCHED_TOKENS_PER_PARAM = 20.0


def matched_configs(
    compute_class: str = "small", *, tokens_per_param: float = MATCHED_TOKENS_PER_PARAM
) -> dict[str, SparsitySweepConfig]:
    """Sweeps at matched tokens per parameter, so size and data effects separate.

    The main sweep gives every size the same tokens (60 down to 7.5 tokens per
    parameter), so its size slope is confounded with data. Here:

    - ``size-<model>``: each size of the main sweep's size family on its own
      ``tokens_per_param * N`` tokens (rounded to whole steps), same recipe, so
      the checkpoints of all sizes fall on the same tokens-per-parameter grid; on
      the horizon probe's larger corpus (13.5M training tokens), so no size
      repeats data;
    - ``wd25k``: a second width-depth family (width/depth 48, 16, 6, 4, 2 at
      25.0-27.9k parameters) on ``tokens_per_param * 26.6k`` tokens of the main
      sweep's corpus, to set beside the main family (77-83k parameters, 1.5M
      tokens, 18.9-19.8 tokens per parameter, same corpus).

    ``small``: ReLU and SiLU; sizes s/m/l (25k, 83k, 201k) on 0.5M, 1.7M and 4.0M
    tokens, and 5 shapes on 0.5M tokens; 5 seeds, 3 for l (its runs cost 8x those of
    s): 76 runs, about 80 core-minutes on an idle machine.
    ``tiny``: the tiny sizes and two tiny shapes at 5 tokens per parameter, 2
    seeds (seconds).
    ``medium``/``large``: the same design at 60 tokens per parameter.
    """
    if compute_class == "tiny":
        base, seeds = sweep_config("tiny"), (0, 1)
        wd = (
            ModelSpec("v1", 24, 1, 2, family="width_depth"),
            ModelSpec("v2", 16, 2, 2, family="width_depth"),
        )
        if tokens_per_param == MATCHED_TOKENS_PER_PARAM:
            tokens_per_param = 5.0
    elif compute_class in ("small", "medium", "large"):
        base, wd, seeds = sweep_config("small"), _WD_25K, tuple(range(5))
        if compute_class != "small" and tokens_per_param == MATCHED_TOKENS_PER_PARAM:
            tokens_per_param = 60.0
    else:
        raise ValueError(f"unknown compute_class {compute_class!r}: tiny, small, medium, large")
    sizes = [m for m in base.models if m.family in ("size", "both")]
    step_tokens = base.batch_size * base.seq_len

    def tokens_for(n_params: float) -> int:
        return max(1, round(tokens_per_param * n_params / step_tokens)) * step_tokens

    out: dict[str, SparsitySweepConfig] = {}
    for m in sizes:
        n = base.model_config(m, "relu").n_params()
        out[f"size-{m.name}"] = dataclasses.replace(
            base,
            compute_class=f"{compute_class}-matched-{m.name}",
            models=(dataclasses.replace(m, family="size"),),
            seeds=seeds[:3] if n > 150_000 and compute_class == "small" else seeds,
            tokens=tokens_for(n),
            corpus=LONG_CORPUS if compute_class != "tiny" else base.corpus,
        )
    if wd:
        n = float(np.mean([base.model_config(m, "relu").n_params() for m in wd]))
        out["wd25k"] = dataclasses.replace(
            base,
            compute_class=f"{compute_class}-matched-wd25k",
            models=wd,
            seeds=seeds,
            tokens=tokens_for(n),
        )
    return out


def horizon_config(compute_class: str = "small") -> SparsitySweepConfig:
    """A long-horizon probe: the smallest size trained 16x longer than the main sweep.

    The main sweep stops at 7.5-60 tokens per parameter, where the paper's ReLU
    trend may not have started; this probe asks whether it turns later.

    - ``small``: model ``s`` (25k non-embedding parameters), ReLU and SiLU, 3 seeds,
      24M tokens (950 tokens per parameter) of the corpus with the standard
      library's source added (13.5M training tokens, so under two epochs),
      14 checkpoints from 120k tokens: 6 runs, about 15 minutes on 2 workers.
    - ``tiny``: one 2-layer toy model, 2 seeds, 240k tokens: seconds, for tests.
    - ``medium``/``large``: the same probe for sizes s and m, 5 seeds, 64M tokens.
    """
    if compute_class == "tiny":
        return dataclasses.replace(
            sweep_config("tiny"),
            compute_class="tiny-horizon",
            models=(ModelSpec("s", 16, 1, 2),),
            tokens=240_000,
            n_checkpoints=5,
            first_checkpoint=0.05,
        )
    if compute_class == "small":
        models, seeds, tokens = _SMALL[:1], (0, 1, 2), 24_000_000
    elif compute_class in ("medium", "large"):
        models, seeds, tokens = _SMALL[:2], tuple(range(5)), 64_000_000
    else:
        raise ValueError(f"unknown compute_class {compute_class!r}: tiny, small, medium, large")
    return SparsitySweepConfig(
        compute_class=f"{compute_class}-horizon",
        models=models,
        seeds=seeds,
        tokens=tokens,
        n_checkpoints=14,
        first_checkpoint=120_000 / tokens,
        corpus=LONG_CORPUS,
    )
