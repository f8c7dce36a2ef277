"""Activation masks of trained ReLU models: which FFN neurons each held-out token uses.

The kernel section times a sparse FFN on masks; random masks (every token its own
uniformly random active set) are the cost model's assumption, not what a trained
model does. Here a ReLU model is trained with the study's own recipe and corpus
(:func:`scalinglab.studies.sparsity.sweep.pretrain_config`, the shared
:func:`~scalinglab.training.pretrain.run_pretrain` loop, batches from
:func:`~scalinglab.studies.sparsity.sweep.data_seed`) and, after its last step,
its FFN activity is recorded on the study's held-out windows
(:func:`~scalinglab.models.corpus.eval_windows`, ``eval_tokens`` tokens), per layer
and per token, of two kinds:

- ``"nonzero"``: ``h_i != 0`` in the dense forward pass (ReLU's own sparsity);
- ``"cett"``: active under the study's metric, the PPL-p% CETT thresholds
  (:func:`~scalinglab.studies.sparsity.ppl_sparsity.ppl_sparsity`), recorded in the
  truncated forward pass the metric measures (each layer sees the truncated layers
  below), so the masks' mean is the run's PPL-p% activation ratio.

Masks are bit-packed along the hidden units (``numpy.packbits``, little bit order)
and stored as ``data/sparsity_laws/masks-<class>-<hash>.nc`` by
:func:`scalinglab.sweeps.cached_sweep` (one run per seed, each cached as it
finishes, so an interrupted recording resumes seed by seed; a progress bar with the
time left). :func:`unpack_masks` gives them back as booleans.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
import xarray as xr
from torch import Tensor

from scalinglab.compute import resolve_device
from scalinglab.models.corpus import build_corpus, eval_windows
from scalinglab.models.transformer import Transformer
from scalinglab.studies.sparsity.cett import down_column_norms, threshold_policy
from scalinglab.studies.sparsity.config import STUDY, ModelSpec, SparsitySweepConfig, sweep_config
from scalinglab.studies.sparsity.ppl_sparsity import dense_pass, evaluate_sparse, ppl_sparsity
from scalinglab.studies.sparsity.sweep import data_seed, pretrain_config
from scalinglab.sweeps import RunCache, cached_sweep, map_runs
from scalinglab.training.pretrain import Checkpoint, run_pretrain

#: Bump when the recorded masks change for the same config (invalidates the cache).
MASKS_VERSION = "1"
KINDS = ("nonzero", "cett")
BITORDER: Literal["little"] = "little"


@dataclass(frozen=True)
class MaskConfig:
    """What to train and record: ``sweep`` holds the recipe, its one model and its seeds.

    Only ReLU, one model; ``sweep.tokens`` training tokens, one checkpoint (the last
    step); masks of the ``eval_tokens`` held-out tokens.
    """

    sweep: SparsitySweepConfig
    kinds: tuple[str, ...] = KINDS

    def __post_init__(self) -> None:
        if len(self.sweep.models) != 1 or self.sweep.activations != ("relu",):
            raise ValueError("MaskConfig: one model and activations=('relu',)")
        if not self.kinds or any(k not in KINDS for k in self.kinds):
            raise ValueError(f"MaskConfig: kinds must be among {KINDS}, got {self.kinds}")

    @property
    def spec(self) -> ModelSpec:
        return self.sweep.models[0]

    def to_dict(self) -> dict:
        return {**self.sweep.to_dict(), "kinds": list(self.kinds), "masks_version": MASKS_VERSION}


def mask_config(compute_class: str = "small", **overrides) -> MaskConfig:
    """The mask recording of a compute class (``overrides``: fields of its sweep config).

    - ``small`` (``medium`` and ``large`` use the same recording): model ``k`` (d_model 256, 2 layers, d_ff 688; 1.6M
      non-embedding parameters, wide enough for the kernel's timings to be above its
      call overheads), ReLU, seeds 0 and 1, 1.5M tokens (the main sweep's budget),
      the study's recipe and corpus; about 9 minutes a seed on an idle core (the committed
      recording took 59 minutes a seed on the shared 2-core machine under a load of 8).
    - ``tiny``: a 2-layer toy (d_model 32), one seed, 60k tokens: seconds, for tests.
    """
    one = dict(activations=("relu",), n_checkpoints=1, first_checkpoint=1.0, baselines=())
    if compute_class == "tiny":
        base = sweep_config("tiny", models=(ModelSpec("k", 32, 2, 2),), seeds=(0,), **one)
    elif compute_class in ("small", "medium", "large"):
        base = sweep_config("small", models=(ModelSpec("k", 256, 2),), seeds=(0, 1), **one)
    else:
        raise ValueError(f"unknown compute_class {compute_class!r}: tiny, small, medium, large")
    return MaskConfig(dataclasses.replace(base, **overrides) if overrides else base)


# ----------------------------------------------------------------------------- recording
def pack(mask: np.ndarray) -> np.ndarray:
    """Bool ``(..., F)`` -> uint8 ``(..., ceil(F / 8))`` (little bit order)."""
    return np.packbits(np.asarray(mask, dtype=bool), axis=-1, bitorder=BITORDER)


def unpack(packed: np.ndarray, d_ff: int) -> np.ndarray:
    """uint8 ``(..., ceil(F / 8))`` -> bool ``(..., F)``; the inverse of :func:`pack`."""
    bits = np.unpackbits(np.asarray(packed, dtype=np.uint8), axis=-1, count=d_ff, bitorder=BITORDER)
    return bits.astype(bool)


@dataclass
class RecordedMasks:
    """One model's masks on ``W`` held-out windows of ``T`` tokens (K kinds, L layers, F units).

    ``packed`` (K, L, W, T, ceil(F/8)) uint8; ``layer_ratio`` (K, L) the metric's active
    fraction per layer; ``thresholds`` (L,) the PPL-p% CETT thresholds on
    ``|h_i| ||W_down[:, i]||``; ``loss``/``sparse_loss`` held-out NLL dense / truncated.
    """

    packed: np.ndarray
    layer_ratio: np.ndarray
    thresholds: np.ndarray
    loss: float
    sparse_loss: float
    d_ff: int
    train_s: float = float("nan")


@torch.no_grad()
def record_masks(
    model: Transformer, windows: Tensor, *, p: float = 1.0, kinds: tuple[str, ...] = KINDS
) -> RecordedMasks:
    """Record which FFN neurons of ``model`` each token of ``windows`` uses, per layer.

    Parameters
    ----------
    model
        A trained transformer with a (gated or plain) FFN.
    windows
        Token ids (W, T + 1): inputs ``[:, :-1]`` (the targets measure the losses).
    p
        PPL budget (percent) of the ``"cett"`` masks.
    kinds
        Among :data:`KINDS`.

    Returns
    -------
    RecordedMasks
        Masks in ``kinds`` order; ``thresholds`` NaN when ``"cett"`` is not asked for.
    """
    dense = dense_pass(model, windows)
    n_layer, f = model.cfg.n_layer, model.cfg.ffn_width
    w, t = windows.shape[0], windows.shape[1] - 1
    masks = np.zeros((len(kinds), n_layer, w, t, f), dtype=bool)
    ratios = np.full((len(kinds), n_layer), np.nan)
    thresholds = np.full(n_layer, np.nan)
    sparse_loss = float("nan")
    for k, kind in enumerate(kinds):
        if kind == "nonzero":
            for layer, hs in enumerate(dense[1]):
                masks[k, layer] = (torch.cat(hs) != 0).numpy()
            ratios[k] = dense[0].natural_ratio
        elif kind == "cett":
            res = ppl_sparsity(model, windows, p=p, method="cett", dense=dense)
            thresholds = np.asarray(res.thresholds, dtype=float)
            policy = threshold_policy(thresholds, down_column_norms(model))
            seen: list[list[Tensor]] = [[] for _ in range(n_layer)]

            def recording(layer: int, h: Tensor, policy=policy, seen=seen) -> Tensor:
                active = policy(layer, h)
                seen[layer].append(active)
                return active

            ev = evaluate_sparse(model, windows, recording)
            for layer in range(n_layer):
                masks[k, layer] = torch.cat(seen[layer]).numpy()
            ratios[k], sparse_loss = ev.layer_ratio, ev.nll
        else:
            raise ValueError(f"unknown mask kind {kind!r}; choose from {KINDS}")
    return RecordedMasks(
        packed=pack(masks),
        layer_ratio=ratios,
        thresholds=thresholds,
        loss=dense[0].nll,
        sparse_loss=sparse_loss,
        d_ff=f,
    )


def train_and_record(cfg: MaskConfig, seed: int, *, num_threads: int | None = 1) -> RecordedMasks:
    """Train ``cfg``'s model with ``seed`` (the study's recipe) and record its masks."""
    sw = cfg.sweep
    windows = eval_windows(build_corpus(sw.corpus).heldout, sw.eval_tokens, sw.seq_len)
    out: list[RecordedMasks] = []

    def at_end(ck: Checkpoint) -> None:
        out.append(record_masks(ck.model, windows, p=sw.p, kinds=cfg.kinds))

    t0 = time.perf_counter()
    result = run_pretrain(
        pretrain_config(sw, cfg.spec, "relu"),
        seed=seed,
        device=sw.device,
        num_threads=num_threads,
        batch_seed=data_seed(seed),
        checkpoints=[sw.steps],
        on_checkpoint=at_end,
    )
    if result.status != "ok" or not out:
        raise RuntimeError(f"mask run seed {seed}: training loss not finite")
    out[0].train_s = time.perf_counter() - t0
    return out[0]


# ----------------------------------------------------------------------------- the dataset
def _task(item: tuple[MaskConfig, int]) -> RecordedMasks:
    return train_and_record(*item, num_threads=1)


def to_dataset(cfg: MaskConfig, runs: list[RecordedMasks]) -> xr.Dataset:
    """Stack the seeds' recordings into the masks Dataset.

    Dims: ``seed``, ``kind``, ``layer``, ``window``, ``position`` (token within its
    window), ``unit_byte`` (8 hidden units a byte); ``masks`` is uint8.
    """
    sw, spec = cfg.sweep, cfg.spec
    mcfg = sw.model_config(spec, "relu")
    r0 = runs[0]
    _, n_layer, w, t, nb = r0.packed.shape
    ds = xr.Dataset(
        {
            "masks": (
                ("seed", "kind", "layer", "window", "position", "unit_byte"),
                np.stack([r.packed for r in runs]),
                {
                    "long_name": "FFN activation masks, bit-packed along the hidden units",
                    "packing": f"numpy.packbits(axis=-1, bitorder={BITORDER!r}); "
                    f"unpack with count=d_ff={r0.d_ff}",
                },
            ),
            "layer_ratio": (
                ("seed", "kind", "layer"),
                np.stack([r.layer_ratio for r in runs]),
                {"long_name": "active fraction per layer (tokens averaged)"},
            ),
            "thresholds": (
                ("seed", "layer"),
                np.stack([r.thresholds for r in runs]),
                {"long_name": f"PPL-{sw.p:g}% CETT thresholds on |h_i| ||W_down[:, i]||"},
            ),
            "loss": ("seed", [r.loss for r in runs], {"units": "nats/token"}),
            "sparse_loss": (
                "seed",
                [r.sparse_loss for r in runs],
                {"long_name": "held-out loss under the cett masks", "units": "nats/token"},
            ),
            "train_s": ("seed", [r.train_s for r in runs], {"units": "s"}),
        },
        coords={
            "seed": list(sw.seeds),
            "kind": list(cfg.kinds),
            "layer": np.arange(n_layer),
            "window": np.arange(w),
            "position": np.arange(t),
        },
        attrs={
            "study": STUDY,
            "compute_class": sw.compute_class,
            "what": "which FFN hidden units of a trained ReLU model are active for each "
            "held-out token, per layer: 'nonzero' = h_i != 0 in the dense pass; 'cett' = "
            f"|h_i| ||W_down[:, i]|| above the PPL-{sw.p:g}% CETT threshold of its layer, in "
            "the truncated pass the metric measures",
            "model": spec.name,
            "d_model": spec.d_model,
            "n_layer": spec.n_layer,
            "d_ff": r0.d_ff,
            "n_params": mcfg.n_params(),
            "tokens": sw.steps * sw.batch_size * sw.seq_len,
            "masks_version": MASKS_VERSION,
            "device": sw.device,
            **build_corpus(sw.corpus).describe(),
        },
    )
    ds["masks"].encoding.update(zlib=True, complevel=6)
    return ds


def run_masks(
    cfg: MaskConfig | str = "small",
    *,
    scheduler: str = "",
    client=None,
    rerun: bool = False,
    progress: bool = True,
) -> xr.Dataset:
    """The recorded masks, from ``data/sparsity_laws/masks-<class>-<hash>.nc`` when cached.

    Otherwise trains every seed (a Dask task each; finished seeds are kept, so an
    interrupted call resumes) and saves the Dataset with provenance (config, git
    commit). ``cfg``: a :class:`MaskConfig` or a compute-class name.
    """
    if isinstance(cfg, str):
        cfg = mask_config(cfg)
    cfg = dataclasses.replace(
        cfg, sweep=dataclasses.replace(cfg.sweep, device=resolve_device(cfg.sweep.device))
    )
    key = {**cfg.to_dict(), "corpus_hash": build_corpus(cfg.sweep.corpus).content_hash}
    seeds = list(cfg.sweep.seeds)

    def execute(runs: RunCache) -> xr.Dataset:
        done, fails = map_runs(
            _task,
            [(cfg, s) for s in seeds],
            keys=[["masks", s] for s in seeds],
            runs=runs,
            scheduler=scheduler,
            client=client,
            desc="mask runs",
            progress=progress,
        )
        if fails:
            raise RuntimeError(f"mask runs failed: {[seeds[f.index] for f in fails]}")
        return to_dataset(cfg, done)

    return cached_sweep(STUDY, f"masks-{cfg.sweep.compute_class}", key, execute, rerun=rerun)


def unpack_masks(ds: xr.Dataset) -> xr.DataArray:
    """The masks as booleans: dims ``(seed, kind, layer, window, position, unit)``."""
    d_ff = int(ds.attrs["d_ff"])
    bits = unpack(ds["masks"].values, d_ff)
    dims = (*ds["masks"].dims[:-1], "unit")
    return xr.DataArray(bits, dims=dims, coords={d: ds[d] for d in dims[:-1]}, name="active")


__all__ = [
    "KINDS",
    "MASKS_VERSION",
    "MaskConfig",
    "RecordedMasks",
    "mask_config",
    "pack",
    "record_masks",
    "run_masks",
    "to_dataset",
    "train_and_record",
    "unpack",
    "unpack_masks",
]
