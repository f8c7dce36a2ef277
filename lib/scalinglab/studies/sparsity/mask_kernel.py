"""The sparse FFN timed on a trained model's activation masks, next to random masks.

The kernel benchmark (:func:`scalinglab.kernels.sparse_ffn.benchmark_sparse_ffn`) and
the cost model (:func:`scalinglab.cost_model.sparse_ffn_speedup`) assume each token
activates its own uniformly random set of neurons, so a batch of ``b`` tokens reads
a union of ``1 - (1 - a)^b`` of them. A trained model's masks
(:mod:`scalinglab.studies.sparsity.masks`) are not random: some units fire for
most tokens, some for none, so the union of a batch is smaller (and the kernel
faster) than the formula says. Here:

- :func:`token_groups` forms batches of ``b`` tokens from ``b`` different held-out
  windows at one position (a decoding batch: one token of each of ``b`` sequences);
  :func:`matched_random` gives each token the same number of active units, placed
  uniformly at random (the control: same per-token ratio, no structure);
- :func:`mask_structure` says how structured the masks are (dead and hot units, the
  union of a batch against the random control and the formula);
- :func:`benchmark_masks` times the dense FFN and both sparse implementations on
  every (model seed, layer, kind, batch, source) case, one token group per timed
  call, with the shared harness (cache flush before each call); weights and inputs
  are random of the trained model's shape (the time depends on which rows are read,
  not on their values); :func:`time_masks` repeats it in separate processes
  (:func:`~scalinglab.studies.sparsity.kernel_spread.spawn_each`);
- :mod:`scalinglab.studies.sparsity.mask_speedups` turns those timings into speedups
  of the whole FFN stack, beside the cost model's prediction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
import xarray as xr

from scalinglab.studies.sparsity.kernel_spread import spawn_each

IMPLS = ("dense", "sparse_torch", "sparse_numba")
SOURCES = ("real", "random")
#: A cell of the summaries (one speedup each).
CELL = ["kind", "batch", "source", "impl"]


# ----------------------------------------------------------------------------- masks
def token_groups(
    active: np.ndarray, *, batch: int, groups: int, rng: np.random.Generator
) -> np.ndarray:
    """Batches of tokens: ``b`` different windows at one position, ``groups`` times.

    Parameters
    ----------
    active
        (W, T, F) bool: one layer's masks over W windows of T tokens.
    batch
        ``b <= W`` tokens a group.

    Returns
    -------
    numpy.ndarray
        (groups, b, F) bool.
    """
    w, t, _ = active.shape
    if not 1 <= batch <= w:
        raise ValueError(f"batch must be in [1, {w}] (windows), got {batch}")
    pos = rng.integers(0, t, size=groups)
    wins = np.stack([rng.choice(w, size=batch, replace=False) for _ in range(groups)])
    return active[wins, pos[:, None]]


def matched_random(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each token (row of ``masks`` (..., F)) its own count of active units, at random units."""
    k = masks.sum(axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(rng.random(masks.shape), axis=-1), axis=-1)
    return rank < k


def union_fraction(groups: np.ndarray) -> np.ndarray:
    """Fraction of units active for some token of each group: (G, b, F) -> (G,)."""
    return groups.any(axis=1).mean(axis=-1)


def mask_structure(
    active: xr.DataArray, *, batches: Sequence[int] = (1, 8), groups: int = 256, seed: int = 0
) -> pd.DataFrame:
    """How far a model's masks are from random ones, per (seed, kind, layer).

    Parameters
    ----------
    active
        Bool masks with dims ``(seed, kind, layer, window, position, unit)``
        (:func:`scalinglab.studies.sparsity.masks.unpack_masks`).

    Returns
    -------
    pandas.DataFrame
        ``ratio`` (mean per-token active fraction), ``token_sd`` (its SD over tokens),
        ``dead`` (fraction of units never active), ``hot`` (active for at least half
        the tokens), ``hot_share`` (share of all activations that hot units carry),
        and per batch ``b``: ``union_real_b``, ``union_random_b`` (matched random
        masks of the same groups) and ``union_formula_b`` (``1 - (1 - a)^b``).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for s in active["seed"].values:
        for kind in active["kind"].values:
            for layer in active["layer"].values:
                m = active.sel(seed=s, kind=kind, layer=layer).values  # (W, T, F)
                per_token = m.mean(axis=-1)
                freq = m.mean(axis=(0, 1))
                hot = freq >= 0.5
                a = float(per_token.mean())
                row: dict[str, Any] = {
                    "seed": int(s),
                    "kind": str(kind),
                    "layer": int(layer),
                    "ratio": a,
                    "token_sd": float(per_token.std()),
                    "dead": float((freq == 0).mean()),
                    "hot": float(hot.mean()),
                    "hot_share": float(freq[hot].sum() / max(freq.sum(), 1e-30)),
                }
                for b in batches:
                    g = token_groups(m, batch=b, groups=groups, rng=rng)
                    row[f"union_real_{b}"] = float(union_fraction(g).mean())
                    row[f"union_random_{b}"] = float(union_fraction(matched_random(g, rng)).mean())
                    row[f"union_formula_{b}"] = 1.0 - (1.0 - a) ** b
                rows.append(row)
    return pd.DataFrame(rows)


def mask_cases(
    active: xr.DataArray,
    *,
    batches: Sequence[int] = (1, 8),
    groups: int = 16,
    kinds: Sequence[str] = ("cett",),
    seed: int = 0,
) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    """The timing cases: real token groups and their matched random twins.

    Returns
    -------
    labels, masks
        ``labels[i]``: ``model_seed, layer, kind, batch, source`` (``"real"`` or
        ``"random"``), ``ratio`` (mean per-token active fraction) and
        ``union_ratio`` (mean over groups of the union's fraction); ``masks[i]``:
        (groups, b, F) bool. A random case holds the same tokens' counts as the
        real case before it.
    """
    rng = np.random.default_rng(seed)
    labels: list[dict[str, Any]] = []
    masks: list[np.ndarray] = []
    for s in active["seed"].values:
        for kind in kinds:
            for layer in active["layer"].values:
                m = active.sel(seed=s, kind=kind, layer=layer).values
                for b in batches:
                    real = token_groups(m, batch=b, groups=groups, rng=rng)
                    for source, g in (("real", real), ("random", matched_random(real, rng))):
                        labels.append(
                            {
                                "model_seed": int(s),
                                "layer": int(layer),
                                "kind": str(kind),
                                "batch": int(b),
                                "source": source,
                                "ratio": float(g.mean()),
                                "union_ratio": float(union_fraction(g).mean()),
                            }
                        )
                        masks.append(g)
    return labels, masks


# ----------------------------------------------------------------------------- timing
def benchmark_masks(
    labels: Sequence[dict[str, Any]],
    masks: Sequence[np.ndarray],
    *,
    d_model: int,
    impls: Sequence[str] = IMPLS[1:],
    warmup: int = 1,
    flush_bytes: int | None = None,
    seed: int = 0,
    progress: bool = False,
) -> xr.Dataset:
    """Time ``dense`` and ``impls`` on every case, each timed call on the case's next token group.

    A gated ReLU FFN of width ``F`` (from the masks) and ``d_model``, random float32
    weights scaled as in :func:`~scalinglab.kernels.sparse_ffn.benchmark_sparse_ffn`,
    random inputs (G, b, d_model) per case. A call of a sparse implementation reads
    the union of its group's masks and applies each token's own mask; ``dense`` is
    the torch FFN on all units, always timed. ``impls``: among ``sparse_torch`` and
    ``sparse_numba``. Repeats = groups (one timed call per group).

    Returns
    -------
    xarray.Dataset
        :func:`scalinglab.kernels.harness.benchmark`'s dataset (dims ``impl, case,
        repeat``) with the labels as case coords; attrs ``d_model``, ``d_ff``,
        ``n_matrices`` (3), ``seed``.
    """
    from scalinglab.kernels.harness import benchmark
    from scalinglab.kernels.sparse_ffn import Impl, SparseFFN, union_indices, warm_up

    if len(labels) != len(masks) or not masks:
        raise ValueError(f"{len(labels)} labels for {len(masks)} mask arrays")
    n_groups, d_ff = masks[0].shape[0], masks[0].shape[-1]
    warm_up()
    g = torch.Generator().manual_seed(seed)
    w_up = torch.randn(d_ff, d_model, generator=g) * d_model**-0.5
    w_gate = torch.randn(d_ff, d_model, generator=g) * d_model**-0.5
    w_down = torch.randn(d_model, d_ff, generator=g) * d_ff**-0.5
    ffn = SparseFFN(
        w_up, w_down, w_gate, activation="relu", max_batch=max(m.shape[1] for m in masks)
    )
    inputs = []
    for m in masks:
        if m.shape[0] != n_groups or m.shape[-1] != d_ff:
            raise ValueError("every case needs the same number of groups and units")
        tm = torch.from_numpy(np.ascontiguousarray(m))
        x = torch.randn(m.shape[0], m.shape[1], d_model, generator=g)
        inputs.append([(x[i], tm[i], union_indices(tm[i])) for i in range(n_groups)])
    index = {tuple(sorted(lab.items())): i for i, lab in enumerate(labels)}

    def cycling(case, call):
        grp = inputs[index[tuple(sorted(dict(case).items()))]]
        state = [0]

        def run():
            x, tm, idx = grp[state[0] % n_groups]
            state[0] += 1
            return call(x, tm, idx)

        return run

    def dense(case):
        return cycling(case, lambda x, tm, idx: ffn.dense(x, token_mask=tm))

    def sparse(impl: Impl):
        def factory(case):
            return cycling(case, lambda x, tm, idx: ffn.forward(x, idx, token_mask=tm, impl=impl))

        return factory

    every = {"dense": dense, "sparse_torch": sparse("torch"), "sparse_numba": sparse("numba")}
    if not impls or any(i not in IMPLS[1:] for i in impls):
        raise ValueError(f"impls must be among {IMPLS[1:]}, got {impls}")
    kernels = {k: every[k] for k in ("dense", *impls)}
    ds = benchmark(
        kernels,
        list(labels),
        repeats=n_groups,
        warmup=warmup,
        flush_bytes=flush_bytes,
        progress=progress,
    )
    return ds.assign_attrs(
        d_model=d_model, d_ff=d_ff, n_matrices=3, seed=seed, torch_threads=torch.get_num_threads()
    )


def time_masks(
    active: xr.DataArray,
    *,
    d_model: int,
    batches: Sequence[int] = (1, 8),
    groups: int = 16,
    kinds: Sequence[str] = ("cett",),
    impls: Sequence[str] = IMPLS[1:],
    processes: int = 4,
    threads: int = 1,
    flush_bytes: int | None = None,
    seed: int = 0,
) -> xr.Dataset:
    """:func:`mask_cases` timed by :func:`benchmark_masks` in ``processes`` fresh processes.

    Every process times the same cases, weights and inputs (same ``seed``).

    Returns
    -------
    xarray.Dataset
        The benchmark's dataset with a leading ``process`` dim.
    """
    labels, masks = mask_cases(active, batches=batches, groups=groups, kinds=kinds, seed=seed)
    kw = dict(
        labels=labels,
        masks=masks,
        d_model=d_model,
        impls=tuple(impls),
        flush_bytes=flush_bytes,
        seed=seed,
    )
    return spawn_each(benchmark_masks, kw, processes=processes, threads=threads)


__all__ = [
    "IMPLS",
    "SOURCES",
    "benchmark_masks",
    "mask_cases",
    "mask_structure",
    "matched_random",
    "time_masks",
    "token_groups",
    "union_fraction",
]
