"""What activation sparsity buys in the sparse FFN kernel: measured speedups over the
dense FFN against the cost model's ideal, the crossover ratio below which the sparse
kernel wins, and the speedup at a model's measured activation ratio.

Input: the timing Dataset of
:func:`scalinglab.kernels.sparse_ffn.benchmark_sparse_ffn`. Intervals resample each
side's timed repeats (:func:`scalinglab.stats.bootstrap.resample_groups`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.stats.bootstrap import percentile_interval, resample_groups


def crossover(ratios: np.ndarray, speedup: np.ndarray) -> float | None:
    """Largest activation ratio with speedup >= 1, interpolated in log(ratio); None if never.

    ``ratios`` descending; returns ``ratios[0]`` if the first point is already >= 1.
    """
    ok = np.asarray(speedup) >= 1.0
    if not ok.any():
        return None
    i = int(np.argmax(ok))
    if i == 0:
        return float(ratios[0])
    a0, a1 = np.log(ratios[i - 1]), np.log(ratios[i])
    s0, s1 = speedup[i - 1], speedup[i]
    return float(np.exp(a0 + (1.0 - s0) * (a1 - a0) / (s1 - s0)))


def speedup_table(
    ds: xr.Dataset, hw, *, reps: int = 0, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Measured vs ideal speedups from :func:`scalinglab.kernels.sparse_ffn.benchmark_sparse_ffn`.

    One row per (batch, ratio, sparse implementation): dense and implementation
    medians, measured speedup (ratio of medians) with ``speedup_lo/hi``: a
    percentile bootstrap CI resampling each side's timed repeats (``reps > 0``), or
    else the quartile range (``q25/q75`` to ``q75/q25``); the cost model's ideal
    speedup (:func:`scalinglab.cost_model.sparse_ffn_speedup` on ``hw``), the
    fraction of ideal reached, and the roofline time
    (:func:`scalinglab.cost_model.roofline_seconds`) over the measured time.
    """
    from scalinglab.cost_model import (
        roofline_seconds,
        sparse_ffn_bytes,
        sparse_ffn_flops,
        sparse_ffn_speedup,
    )

    d, f, n_mat = int(ds.attrs["d_model"]), int(ds.attrs["d_ff"]), int(ds.attrs["n_matrices"])
    rows: list[dict] = []
    for j in range(ds.sizes["case"]):
        b, a = int(ds["batch"].values[j]), float(ds["ratio"].values[j])
        ideal = float(
            sparse_ffn_speedup(d, f, activation_ratio=a, hw=hw, batch=b, n_matrices=n_mat)
        )
        flops = sparse_ffn_flops(d, f, activation_ratio=a, batch=b, n_matrices=n_mat)
        moved = sparse_ffn_bytes(d, f, activation_ratio=a, batch=b, n_matrices=n_mat)
        roof = float(roofline_seconds(flops, moved, hw))
        cell = ds.isel(case=j)
        dm, dq25, dq75 = (float(cell[q].sel(impl="dense")) for q in ("median_s", "q25_s", "q75_s"))
        for impl in [str(i) for i in ds["impl"].values if i != "dense"]:
            m, q25, q75 = (float(cell[q].sel(impl=impl)) for q in ("median_s", "q25_s", "q75_s"))
            lo, hi = dq25 / q75, dq75 / q25
            if reps:
                rng = np.random.default_rng([seed, j, len(rows)])
                t_d = cell["seconds"].sel(impl="dense").values
                t_s = cell["seconds"].sel(impl=impl).values
                draws = np.median(t_d[resample_groups(rng, t_d.size, reps)], 1) / np.median(
                    t_s[resample_groups(rng, t_s.size, reps)], 1
                )
                lo, hi = (float(v) for v in percentile_interval(draws, level=level))
            rows.append(
                {
                    "batch": b,
                    "ratio": a,
                    "union_ratio": float(ds["union_ratio"][j]),
                    "impl": impl,
                    "dense_s": dm,
                    "sparse_s": m,
                    "speedup": dm / m,
                    "speedup_lo": lo,
                    "speedup_hi": hi,
                    "ideal": ideal,
                    "fraction_of_ideal": dm / m / ideal,
                    "fraction_of_roofline": roof / m,
                    "load": float(cell["load_before"].max()),
                }
            )
    return pd.DataFrame(rows)


def speedup_at(table: pd.DataFrame, ratio: float, *, impl: str, batch: int = 1) -> float:
    """Measured speedup of ``impl`` at activation ``ratio``, interpolated in log-log
    between the benchmarked ratios (clamped to their range)."""
    t = table[(table["impl"] == impl) & (table["batch"] == batch)].sort_values("ratio")
    if t.empty:
        raise ValueError(f"no benchmark rows for impl={impl!r}, batch={batch}")
    r = np.clip(ratio, t["ratio"].min(), t["ratio"].max())
    return float(np.exp(np.interp(np.log(r), np.log(t["ratio"]), np.log(t["speedup"]))))
