"""The sparsity-law sweep: gated-FFN LMs (ReLU, SiLU) trained on text, PPL-p% at checkpoints.

One run = one (model shape, activation, seed): a decoder LM with a gated FFN
(:class:`~scalinglab.models.transformer.TransformerConfig`, RMSNorm, rotary,
tied embeddings) trained on the offline byte-level corpus
(:mod:`scalinglab.models.corpus`) with AdamW at a constant learning rate after a
linear warm-up (so a checkpoint at D tokens is a model trained on D tokens, not a
point on a decaying schedule), measuring at geometrically spaced checkpoints the
held-out loss and the PPL-p% activation ratio
(:func:`~scalinglab.studies.sparsity.ppl_sparsity.ppl_sparsity`, CETT method; Top-k and
fixed-threshold baselines at the last checkpoint). Every run of a sweep sees the
same number of tokens; a seed fixes both the initialisation and the batch order,
so the ReLU and SiLU runs of a seed see the same batches (paired).

Models come in two families sharing runs: the *size* family (same width/depth
ratio, growing parameters) and the *width-depth* family (about the same
non-embedding parameters, width/depth ratio from wide-shallow to narrow-deep);
the model in both is trained once. A run is trained by the shared loop
(:func:`scalinglab.training.pretrain.run_pretrain`, the measurements in its
checkpoint callback). Each run is a Dask task (:func:`scalinglab.sweeps.map_runs`,
torch on one thread); results are an xarray Dataset (dims ``activation, model,
seed, checkpoint, layer, sparsity_method``) cached by config hash under
``data/sparsity_laws/`` (:func:`scalinglab.sweeps.cached_sweep`, which keeps every
finished run while the sweep runs, so an interrupted sweep resumes run by run).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from scalinglab import atomic
from scalinglab.compute import resolve_device
from scalinglab.models.corpus import build_corpus, eval_windows
from scalinglab.studies.sparsity.cett import down_column_norms, topk_policy
from scalinglab.studies.sparsity.config import (
    ACTIVATIONS,
    ENGINE_VERSION,
    STUDY,
    ModelSpec,
    SparsitySweepConfig,
    horizon_config,
    matched_configs,
    sweep_config,
)
from scalinglab.studies.sparsity.ppl_sparsity import dense_pass, evaluate_sparse, ppl_sparsity
from scalinglab.studies.sparsity.sweep_dataset import to_dataset
from scalinglab.sweeps import RunCache, cached_sweep, makespan, map_runs
from scalinglab.training.pretrain import Checkpoint, PretrainConfig, run_pretrain


# ----------------------------------------------------------------------------- one run
@dataclass
class RunResult:
    """Measurements of one run at its checkpoints (C checkpoints, L layers)."""

    steps: np.ndarray  # (C,)
    loss: np.ndarray  # (C,) held-out NLL (nats/token), dense
    ffn_off_loss: np.ndarray  # (C,) held-out NLL with every FFN neuron off
    train_loss: np.ndarray  # (C,) mean training loss since the previous checkpoint
    activation_ratio: np.ndarray  # (C,) PPL-p% (CETT) activation ratio
    cett_target: np.ndarray  # (C,)
    ppl_ratio: np.ndarray  # (C,)
    layer_ratio: np.ndarray  # (C, L)
    natural_ratio: np.ndarray  # (C, L) fraction of nonzero h (dense)
    baseline_ratio: dict[str, float]  # method -> ratio at the last checkpoint
    train_s: float
    measure_s: float


def data_seed(seed: int) -> int:
    """Seed of a run's batch order: depends only on ``seed`` (shared by every model)."""
    return int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])


def pretrain_config(cfg: SparsitySweepConfig, spec: ModelSpec, activation: str) -> PretrainConfig:
    """The training recipe of one run as a :class:`~scalinglab.training.pretrain.PretrainConfig`.

    AdamW (betas 0.9, 0.95; weight decay on matrices only), a linear warm-up over
    ``max(1, int(warmup_frac * steps))`` steps then the constant ``lr``, gradients
    clipped to ``grad_clip``, exactly ``cfg.steps`` steps; no held-out evaluations of
    its own (the checkpoints measure).
    """
    warm = max(1, int(cfg.warmup_frac * cfg.steps))
    hparams = {
        "lr": cfg.lr,
        "weight_decay": cfg.weight_decay,
        "beta1": 0.9,
        "beta2": 0.95,
        "eps": 1e-8,
        "warmup": warm / cfg.steps,
        "grad_clip": cfg.grad_clip,
    }
    return PretrainConfig(
        model=cfg.model_config(spec, activation),
        optimizer="adamw",
        hparams=hparams,
        batch_size=cfg.batch_size,
        schedule="constant",
        n_evals=0,
        final_eval_tokens=0,
        corpus=cfg.corpus,
        train_steps=cfg.steps,
    )


def train_run(
    cfg: SparsitySweepConfig,
    spec: ModelSpec,
    activation: str,
    seed: int,
    *,
    num_threads: int | None = 1,
    progress: bool = False,
) -> RunResult:
    """Train one model and measure it at :meth:`SparsitySweepConfig.checkpoint_steps`.

    Training is :func:`~scalinglab.training.pretrain.run_pretrain` with
    :func:`pretrain_config` and batches drawn from :func:`data_seed`; the measurements
    run in its checkpoint callback. A run whose training loss turns non-finite raises
    (the sweep reports it as failed).
    """
    corpus = build_corpus(cfg.corpus)
    windows = eval_windows(corpus.heldout, cfg.eval_tokens, cfg.seq_len)
    ckpts = cfg.checkpoint_steps()
    rows: list[dict] = []
    baselines: dict[str, float] = {}
    measure_s = 0.0

    def measure(ck: Checkpoint) -> None:
        nonlocal measure_s, baselines
        t1 = time.perf_counter()
        row, last = measure_checkpoint(cfg, ck.model, windows, last=ck.step == ckpts[-1])
        rows.append({"step": ck.step, "train_loss": ck.train_loss, **row})
        baselines = last or baselines
        if cfg.checkpoint_dir:
            _save_checkpoint(cfg, spec, activation, seed, ck.step, ck.model)
        if progress:
            print(
                f"{spec.name}/{activation}/seed{seed} step {ck.step}: loss "
                f"{row['loss']:.3f} ratio {row['ratio']:.3f}",
                file=sys.stderr,
                flush=True,
            )
        measure_s += time.perf_counter() - t1

    result = run_pretrain(
        pretrain_config(cfg, spec, activation),
        seed=seed,
        device=cfg.device,
        num_threads=num_threads,
        batch_seed=data_seed(seed),
        checkpoints=ckpts,
        on_checkpoint=measure,
    )
    if result.status != "ok":
        raise RuntimeError(
            f"{spec.name}/{activation}/seed{seed}: training loss not finite; "
            f"stopped after {len(rows)} of {len(ckpts)} checkpoints"
        )
    return run_result(rows, baselines, train_s=result.train_seconds, measure_s=measure_s)


def measure_checkpoint(
    cfg: SparsitySweepConfig, model, windows: torch.Tensor, *, last: bool
) -> tuple[dict, dict[str, float]]:
    """The measurements of one checkpoint: held-out loss, PPL-p% ratio (CETT), FFN-off loss.

    Returns ``(row, baselines)``: ``row`` has ``loss, off, ratio, knob, ppl, layer, natural``
    (:func:`run_result` reads them); ``baselines`` maps each of ``cfg.baselines`` to its
    ratio when ``last`` (the run's last checkpoint), else is empty.
    """
    dense = dense_pass(model, windows)
    res = ppl_sparsity(model, windows, p=cfg.p, method="cett", dense=dense)
    off = evaluate_sparse(model, windows, topk_policy(0.0, down_column_norms(model)))
    baselines = (
        {
            m: ppl_sparsity(model, windows, p=cfg.p, method=m, dense=dense).activation_ratio
            for m in cfg.baselines
        }
        if last
        else {}
    )
    row = {
        "loss": res.dense_nll,
        "off": off.nll,
        "ratio": res.activation_ratio,
        "knob": res.knob,
        "ppl": res.ppl_ratio,
        "layer": res.layer_ratio,
        "natural": res.natural_ratio,
    }
    return row, baselines


def run_result(
    rows: list[dict], baselines: dict[str, float], *, train_s: float, measure_s: float
) -> RunResult:
    """A :class:`RunResult` from the rows of :func:`measure_checkpoint` (plus ``step`` and
    ``train_loss``) and the last checkpoint's baselines."""
    return RunResult(
        steps=np.array([r["step"] for r in rows]),
        loss=np.array([r["loss"] for r in rows]),
        ffn_off_loss=np.array([r["off"] for r in rows]),
        train_loss=np.array([r["train_loss"] for r in rows]),
        activation_ratio=np.array([r["ratio"] for r in rows]),
        cett_target=np.array([r["knob"] for r in rows]),
        ppl_ratio=np.array([r["ppl"] for r in rows]),
        layer_ratio=np.stack([np.asarray(r["layer"]) for r in rows]),
        natural_ratio=np.stack([np.asarray(r["natural"]) for r in rows]),
        baseline_ratio={**baselines, "cett": rows[-1]["ratio"]},
        train_s=train_s,
        measure_s=measure_s,
    )


def _save_checkpoint(cfg, spec, activation, seed, step, model) -> None:
    folder = os.path.join(cfg.checkpoint_dir, f"{spec.name}-{activation}-seed{seed}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"step-{step:07d}.pt")
    with atomic.replacing(path) as tmp:  # a rerun task overwrites, never half-writes
        torch.save(model.state_dict(), tmp)


# ----------------------------------------------------------------------------- the sweep
def _task(item: tuple[SparsitySweepConfig, int, str, int]) -> RunResult:
    cfg, m, activation, seed = item
    return train_run(cfg, cfg.models[m], activation, seed, num_threads=1)


def execute_sweep(
    cfg: SparsitySweepConfig,
    *,
    scheduler: str = "",
    client=None,
    progress: bool = True,
    runs: RunCache | None = None,
) -> xr.Dataset:
    """Run every (model, activation, seed) of ``cfg`` into a Dataset.

    ``runs``: the sweep's per-run cache (:func:`scalinglab.sweeps.cached_sweep`); runs
    found there are not trained again. None: no caching.
    """
    items = [
        (cfg, m, a, s) for m in range(len(cfg.models)) for a in cfg.activations for s in cfg.seeds
    ]
    # longest tasks first (roughly: parameters, deeper is slower per parameter)
    cost = [
        cfg.model_config(m, "relu").n_params(non_embedding=False) * m.n_layer**0.5
        for m in cfg.models
    ]
    order = sorted(range(len(items)), key=lambda i: -cost[items[i][1]])
    results, failures = map_runs(
        _task,
        [items[i] for i in order],
        runs=runs,
        keys=[[cfg.models[items[i][1]].name, *items[i][2:]] for i in order],
        scheduler=scheduler,
        client=client,
        desc="sparsity runs",
        progress=progress,
    )
    done = {items[i][1:]: r for i, r in zip(order, results, strict=True) if r is not None}
    errors = {items[order[f.index]][1:]: f.error for f in failures}
    for (m, a, s), err in errors.items():
        print(
            f"FAILED run model={cfg.models[m].name} activation={a} seed={s}: "
            f"{err.strip().splitlines()[-1]}"
        )
    return to_dataset(cfg, done, errors)


def run_sweep(
    cfg: SparsitySweepConfig | str = "small",
    *,
    scheduler: str = "",
    client=None,
    rerun: bool = False,
    progress: bool = True,
) -> xr.Dataset:
    """The sweep's dataset, from ``data/sparsity_laws/`` when its config is unchanged.

    Parameters
    ----------
    cfg
        A config or a compute-class name (:func:`sweep_config`).
    scheduler, client
        Where tasks run (:func:`scalinglab.compute.get_client`): ``""`` a local
        cluster, ``"sync"`` in-process, or a scheduler address.
    rerun
        Recompute even when cached (runs of an interrupted attempt are still reused).
    """
    if isinstance(cfg, str):
        cfg = sweep_config(cfg)
    cfg = dataclasses.replace(cfg, device=resolve_device(cfg.device))
    key = {**cfg.to_dict(), "corpus_hash": build_corpus(cfg.corpus).content_hash}
    return cached_sweep(
        STUDY,
        f"sweep-{cfg.compute_class}",
        key,
        lambda runs: execute_sweep(
            cfg, scheduler=scheduler, client=client, progress=progress, runs=runs
        ),
        rerun=rerun,
    )


def run_matched(
    compute_class: str = "small",
    *,
    p: float = 1.0,
    scheduler: str = "",
    client=None,
    rerun: bool = False,
    progress: bool = True,
) -> dict[str, xr.Dataset]:
    """The matched-tokens-per-parameter sweeps (:func:`matched_configs`), one Dataset each.

    Each is cached on its own (``data/sparsity_laws/sweep-<class>-matched-<name>-*.nc``),
    so a sweep interrupted in the largest size keeps the finished ones; the
    cheapest run first, so a reader has data early.
    """
    cfgs = matched_configs(compute_class)
    order = sorted(cfgs, key=lambda k: cfgs[k].tokens * len(cfgs[k].models))
    return {
        k: run_sweep(
            dataclasses.replace(cfgs[k], p=p),
            scheduler=scheduler,
            client=client,
            rerun=rerun,
            progress=progress,
        )
        for k in order
    }


def time_partial_runs(
    cfg: SparsitySweepConfig, *, steps: int = 40, progress: bool = True
) -> dict[str, tuple[float, float]]:
    """Per model: (train seconds per step, measurement seconds per checkpoint).

    Measured on short runs of ``steps`` steps with 2 checkpoints (both
    activations, seed 0, one thread; baselines included, so the measurement cost
    is an overestimate), for :func:`estimate_seconds`.
    """
    part = dataclasses.replace(
        cfg, tokens=steps * cfg.batch_size * cfg.seq_len, n_checkpoints=2, first_checkpoint=0.5
    )
    out = {}
    for m in cfg.models:
        runs = [train_run(part, m, a, cfg.seeds[0], num_threads=1) for a in cfg.activations]
        out[m.name] = (
            float(np.mean([r.train_s for r in runs])) / part.steps,
            float(np.mean([r.measure_s for r in runs])) / 2,
        )
        if progress:
            print(
                f"{m.name}: {out[m.name][0] * 1e3:.1f} ms/step, {out[m.name][1]:.2f} s/checkpoint",
                file=sys.stderr,
                flush=True,
            )
    return out


def estimate_seconds(
    cfg: SparsitySweepConfig, timings: dict[str, tuple[float, float]], *, workers: int = 2
) -> float:
    """Wall-clock estimate of a sweep from per-model ``(train s per step, measure s per
    checkpoint)`` (e.g. from a short partial run), packed on ``workers`` workers
    (:func:`scalinglab.sweeps.makespan`)."""
    per_run = []
    for m in cfg.models:
        t_step, t_meas = timings[m.name]
        per_run += [t_step * cfg.steps + t_meas * len(cfg.checkpoint_steps())] * (
            len(cfg.activations) * len(cfg.seeds)
        )
    return makespan(per_run, workers=workers)


__all__ = [
    "ACTIVATIONS",
    "ENGINE_VERSION",
    "STUDY",
    "ModelSpec",
    "RunResult",
    "SparsitySweepConfig",
    "estimate_seconds",
    "execute_sweep",
    "horizon_config",
    "matched_configs",
    "pretrain_config",
    "run_matched",
    "run_sweep",
    "sweep_config",
    "time_partial_runs",
    "to_dataset",
    "train_run",
]
