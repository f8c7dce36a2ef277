"""Speedups of the sparse FFN on a trained model's masks, from the timings of
:func:`scalinglab.studies.sparsity.mask_kernel.time_masks`.

- :func:`per_process_speedups` sums each process's median times over the model's
  layers and seeds (the speedup of the whole FFN stack) and puts the cost model's
  roofline prediction beside it, for the per-token ratio (independent union) and for
  the union actually read;
- :func:`summarize` and :func:`real_over_random` take the median over processes with
  a percentile bootstrap over processes
  (:func:`~scalinglab.studies.sparsity.kernel_spread.median_interval`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.studies.sparsity.kernel_spread import median_interval
from scalinglab.studies.sparsity.mask_kernel import CELL


def _roofline(d: int, f: int, a: float, b: int, hw: Any) -> float:
    from scalinglab.cost_model import roofline_seconds, sparse_ffn_bytes, sparse_ffn_flops

    flops = sparse_ffn_flops(d, f, activation_ratio=a, batch=b, n_matrices=3)
    moved = sparse_ffn_bytes(d, f, activation_ratio=a, batch=b, n_matrices=3)
    return float(roofline_seconds(flops, moved, hw))


def per_process_speedups(bench: xr.Dataset, hw: Any) -> pd.DataFrame:
    """Whole-stack speedups per process, with the cost model's predictions.

    For each process and (kind, batch, source, impl): the sum over model seeds and
    layers of the dense median times over the sum of the implementation's
    (``speedup``); ``predicted``: the same ratio of roofline times
    (:func:`scalinglab.cost_model.roofline_seconds` on ``hw``) at each case's mean
    per-token ratio with the cost model's independent union ``1 - (1 - a)^b``;
    ``predicted_union``: at the union the case actually read.

    Returns
    -------
    pandas.DataFrame
        One row per (process, kind, batch, source, impl), with ``ratio`` and
        ``union_ratio`` (means over the cases), ``dense_s``, ``sparse_s`` (sums of
        medians) and ``load`` (max load average before timing).
    """
    d, f = int(bench.attrs["d_model"]), int(bench.attrs["d_ff"])
    med = bench["median_s"]
    coords = {k: bench[k].values for k in ("kind", "batch", "source", "ratio", "union_ratio")}
    rows = []
    keys = sorted(
        {
            (coords["kind"][j], int(coords["batch"][j]), coords["source"][j])
            for j in range(bench.sizes["case"])
        }
    )
    for kind, b, source in keys:
        sel = np.flatnonzero(
            (coords["kind"] == kind) & (coords["batch"] == b) & (coords["source"] == source)
        )
        a = coords["ratio"][sel]
        u = coords["union_ratio"][sel]
        dense_roof = len(sel) * _roofline(d, f, 1.0, b, hw)
        pred = dense_roof / sum(_roofline(d, f, float(x), b, hw) for x in a)
        a_union = 1.0 - (1.0 - np.minimum(u, 1.0)) ** (1.0 / b)
        pred_u = dense_roof / sum(_roofline(d, f, float(x), b, hw) for x in a_union)
        for p in bench["process"].values:
            m = med.sel(process=p).isel(case=sel)
            dense_s = float(m.sel(impl="dense").sum())
            load = float(bench["load_before"].sel(process=p).isel(case=sel).max())
            for impl in [str(i) for i in bench["impl"].values if i != "dense"]:
                sparse_s = float(m.sel(impl=impl).sum())
                rows.append(
                    {
                        "process": int(p),
                        "kind": str(kind),
                        "batch": b,
                        "source": str(source),
                        "impl": impl,
                        "ratio": float(a.mean()),
                        "union_ratio": float(u.mean()),
                        "dense_s": dense_s,
                        "sparse_s": sparse_s,
                        "speedup": dense_s / sparse_s,
                        "predicted": pred,
                        "predicted_union": pred_u,
                        "load": load,
                    }
                )
    return pd.DataFrame(rows)


def summarize(
    per_process: pd.DataFrame, *, reps: int = 2000, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Median speedup over processes per (kind, batch, source, impl), bootstrap over processes.

    Returns
    -------
    pandas.DataFrame
        ``speedup``, ``speedup_lo/hi``, ``min``/``max`` over processes, ``predicted``,
        ``predicted_union``, ``fraction_of_predicted`` (speedup / predicted),
        ``ratio``, ``union_ratio``, ``processes``, ``load``.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for key, g in per_process.groupby(CELL, sort=True):
        v = g["speedup"].to_numpy(float)
        point, lo, hi = median_interval(v, rng, reps, level)
        first = g.iloc[0]
        rows.append(
            {
                **dict(zip(CELL, key, strict=True)),
                "speedup": point,
                "speedup_lo": lo,
                "speedup_hi": hi,
                "min": float(v.min()),
                "max": float(v.max()),
                "predicted": float(first["predicted"]),
                "predicted_union": float(first["predicted_union"]),
                "fraction_of_predicted": point / float(first["predicted"]),
                "ratio": float(first["ratio"]),
                "union_ratio": float(first["union_ratio"]),
                "processes": v.size,
                "load": float(g["load"].max()),
            }
        )
    return pd.DataFrame(rows)


def real_over_random(
    per_process: pd.DataFrame, *, reps: int = 2000, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Speedup on real masks over that on matched random masks, paired within processes.

    Returns
    -------
    pandas.DataFrame
        One row per (kind, batch, impl): ``real_over_random`` (median over processes of
        each process's ratio), ``lo``, ``hi`` (percentile bootstrap over processes),
        ``min``, ``max`` (the range of the processes' ratios).
    """
    rng = np.random.default_rng(seed)
    keys = ["process", "kind", "batch", "impl"]
    wide = per_process.pivot_table(index=keys, columns="source", values="speedup").reset_index()
    wide["r"] = wide["real"] / wide["random"]
    rows = []
    for key, g in wide.groupby(["kind", "batch", "impl"], sort=True):
        r = g["r"].to_numpy(float)
        point, lo, hi = median_interval(r, rng, reps, level)
        rows.append(
            {
                **dict(zip(["kind", "batch", "impl"], key, strict=True)),
                "real_over_random": point,
                "lo": lo,
                "hi": hi,
                "min": float(r.min()),
                "max": float(r.max()),
                "processes": len(g),
            }
        )
    return pd.DataFrame(rows)
