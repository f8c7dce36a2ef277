"""The sparsity-law sweep's runs assembled into one xarray Dataset.

:func:`to_dataset` turns the finished runs of
:func:`scalinglab.studies.sparsity.sweep.execute_sweep` (``(model index, activation,
seed) -> RunResult``) into the Dataset the analyses read, with the sweep's config,
the corpus's provenance and the failed runs in its attributes.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from scalinglab.models.corpus import build_corpus
from scalinglab.studies.sparsity.cett import METHODS
from scalinglab.studies.sparsity.config import ENGINE_VERSION, STUDY, SparsitySweepConfig


def to_dataset(cfg: SparsitySweepConfig, results: dict, errors: dict) -> xr.Dataset:
    """Assemble runs ``(model index, activation, seed) -> RunResult`` into a Dataset.

    Dims: ``activation``, ``model``, ``seed``, ``checkpoint``, ``layer`` (the
    deepest model's; NaN beyond a model's depth), ``sparsity_method`` (not
    ``method``, which would shadow the argument of ``Dataset.sel``).
    """
    acts, seeds, names = list(cfg.activations), list(cfg.seeds), [m.name for m in cfg.models]
    steps = cfg.checkpoint_steps()
    c, n_lay = len(steps), max(m.n_layer for m in cfg.models)
    shape = (len(acts), len(names), len(seeds))
    per_ck = {
        k: np.full((*shape, c), np.nan)
        for k in (
            "loss",
            "ffn_off_loss",
            "train_loss",
            "activation_ratio",
            "cett_target",
            "ppl_ratio",
        )
    }
    per_layer = {k: np.full((*shape, c, n_lay), np.nan) for k in ("layer_ratio", "natural_ratio")}
    methods = ["cett", *cfg.baselines]
    base = np.full((*shape, len(methods)), np.nan)
    timing = {k: np.full(shape, np.nan) for k in ("train_s", "measure_s")}
    status = np.full(shape, "failed", dtype=object)
    error = np.full(shape, "", dtype=object)
    for (m, a, s), r in results.items():
        i, j, k = acts.index(a), m, seeds.index(s)
        if list(r.steps) != steps:
            raise RuntimeError(f"checkpoint steps {list(r.steps)} != expected {steps}")
        for name in per_ck:
            per_ck[name][i, j, k] = getattr(r, name)
        nl = cfg.models[m].n_layer
        per_layer["layer_ratio"][i, j, k, :, :nl] = r.layer_ratio
        per_layer["natural_ratio"][i, j, k, :, :nl] = r.natural_ratio
        base[i, j, k] = [r.baseline_ratio.get(mt, np.nan) for mt in methods]
        timing["train_s"][i, j, k], timing["measure_s"][i, j, k] = r.train_s, r.measure_s
        status[i, j, k] = "ok"
    for (m, a, s), err in errors.items():
        error[acts.index(a), m, seeds.index(s)] = err
    mcfg = [cfg.model_config(m, "relu") for m in cfg.models]
    n_params = np.array([c_.n_params() for c_ in mcfg])
    tokens = np.array(steps) * cfg.batch_size * cfg.seq_len
    dims, cdims = ("activation", "model", "seed"), ("activation", "model", "seed", "checkpoint")
    corpus = build_corpus(cfg.corpus)
    return xr.Dataset(
        {
            "loss": (
                cdims,
                per_ck["loss"],
                {"long_name": "held-out loss (dense)", "units": "nats/token"},
            ),
            "ffn_off_loss": (
                cdims,
                per_ck["ffn_off_loss"],
                {"long_name": "held-out loss with every FFN neuron off", "units": "nats/token"},
            ),
            "train_loss": (cdims, per_ck["train_loss"], {"units": "nats/token"}),
            "activation_ratio": (
                cdims,
                per_ck["activation_ratio"],
                {"long_name": f"PPL-{cfg.p:g}% activation ratio (CETT)"},
            ),
            "cett_target": (cdims, per_ck["cett_target"]),
            "ppl_ratio": (cdims, per_ck["ppl_ratio"], {"long_name": "sparse / dense perplexity"}),
            "layer_ratio": ((*cdims, "layer"), per_layer["layer_ratio"]),
            "natural_ratio": (
                (*cdims, "layer"),
                per_layer["natural_ratio"],
                {"long_name": "fraction of nonzero FFN hiddens (dense)"},
            ),
            "final_ratio": (
                (*dims, "sparsity_method"),
                base,
                {"long_name": f"PPL-{cfg.p:g}% activation ratio at the last checkpoint, by method"},
            ),
            **{k: (dims, v, {"units": "s"}) for k, v in timing.items()},
            "status": (dims, status.astype(str)),
            "error": (dims, error.astype(str)),
        },
        coords={
            "activation": acts,
            "model": names,
            "seed": seeds,
            "checkpoint": np.arange(c),
            "layer": np.arange(n_lay),
            "sparsity_method": methods,
            "step": ("checkpoint", np.array(steps)),
            "tokens": ("checkpoint", tokens, {"long_name": "training tokens D"}),
            "d_model": ("model", [m.d_model for m in cfg.models]),
            "n_layer": ("model", [m.n_layer for m in cfg.models]),
            "n_params": ("model", n_params, {"long_name": "non-embedding parameters"}),
            "n_params_total": ("model", [c_.n_params(non_embedding=False) for c_ in mcfg]),
            "d_ff": ("model", [c_.ffn_width for c_ in mcfg]),
            "width_depth_ratio": ("model", [m.d_model / m.n_layer for m in cfg.models]),
            "in_size_sweep": ("model", [m.family in ("size", "both") for m in cfg.models]),
            "in_width_depth": ("model", [m.family in ("width_depth", "both") for m in cfg.models]),
            "tokens_per_param": (("model", "checkpoint"), tokens[None, :] / n_params[:, None]),
        },
        attrs={
            "study": STUDY,
            "compute_class": cfg.compute_class,
            "device": cfg.device,
            "p": cfg.p,
            "n_failed": int((status != "ok").sum()),
            "engine_version": ENGINE_VERSION,
            "methods_available": ",".join(METHODS),
            **corpus.describe(),
        },
    )
