"""The sparse FFN benchmark repeated in separate processes: intervals a re-run respects.

Repeats inside one process share its state (thread placement, page layout, what
else the machine runs at that minute), so a bootstrap over one process's repeats
gives intervals narrower than the change a re-run of identical code shows (the
committed report's 16.46x [15.25, 16.75] became 14.17x [12.80, 14.37]). Here
:func:`run_over_processes` runs
:func:`scalinglab.kernels.sparse_ffn.benchmark_sparse_ffn` in ``processes``
fresh spawned processes one after another; :func:`speedup_over_processes` takes
each process's speedup (dense median over implementation median, as
:func:`scalinglab.studies.sparsity.kernel_speed.speedup_table` computes it) and
reports the median over processes with a percentile bootstrap over processes;
:func:`rerun_coverage` says how often one half of the processes' point lands
inside the other half's interval.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.stats.bootstrap import percentile_interval, resample_groups

CELL = ["batch", "ratio", "impl"]


def _one_process(job: tuple[Callable[..., xr.Dataset], dict[str, Any], int]) -> xr.Dataset:
    """``target(**kw)`` in a fresh process with the given torch and numba thread count."""
    import numba
    import torch

    target, kw, threads = job
    torch.set_num_threads(threads)
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return target(**kw)


def spawn_each(
    target: Callable[..., xr.Dataset], kw: dict[str, Any], *, processes: int, threads: int = 1
) -> xr.Dataset:
    """``target(**kw)`` in ``processes`` spawned processes, one after another.

    ``target`` is a module-level function returning a Dataset (a benchmark); the
    results are concatenated along a new leading ``process`` dim (coords 0..n-1).
    """
    if processes < 1:
        raise ValueError(f"processes must be >= 1, got {processes}")
    ctx = multiprocessing.get_context("spawn")
    out = []
    for _ in range(processes):
        with ctx.Pool(1) as pool:
            out.append(pool.apply(_one_process, ((target, dict(kw), int(threads)),)))
    ds = xr.concat(
        out,
        dim="process",
        data_vars="all",
        coords="minimal",
        compat="override",
        join="override",
        combine_attrs="override",
    )
    return ds.assign_coords(process=np.arange(processes))


def run_over_processes(
    d_model: int,
    d_ff: int,
    *,
    ratios: Sequence[float],
    batches: Sequence[int] = (1,),
    gated: bool = True,
    repeats: int = 5,
    processes: int = 4,
    threads: int = 1,
    flush_bytes: int | None = None,
    seed: int = 0,
) -> xr.Dataset:
    """:func:`benchmark_sparse_ffn` in ``processes`` spawned processes, one after another.

    Every process draws the same weights and masks (same ``seed``): only the
    process differs.

    Returns
    -------
    xarray.Dataset
        The benchmark's dataset with a leading ``process`` dim: ``seconds``
        ``(process, impl, case, repeat)`` and the per-cell summaries.
    """
    from scalinglab.kernels.sparse_ffn import benchmark_sparse_ffn

    kw = dict(
        d_model=d_model,
        d_ff=d_ff,
        ratios=tuple(ratios),
        batches=tuple(batches),
        gated=gated,
        repeats=repeats,
        flush_bytes=flush_bytes,
        seed=seed,
        progress=False,
    )
    return spawn_each(benchmark_sparse_ffn, kw, processes=processes, threads=threads)


def per_process_speedups(ds: xr.Dataset, hw: Any) -> pd.DataFrame:
    """:func:`speedup_table` of every process, one row per (process, batch, ratio, impl)."""
    from scalinglab.studies.sparsity.kernel_speed import speedup_table

    parts = []
    for p in ds["process"].values:
        t = speedup_table(ds.sel(process=p), hw, reps=0)
        parts.append(t.assign(process=int(p)))
    return pd.concat(parts, ignore_index=True)


def median_interval(
    v: np.ndarray, rng: np.random.Generator, reps: int, level: float
) -> tuple[float, float, float]:
    """Median of ``v`` (shape ``(processes,)``) and its percentile bootstrap interval over
    processes: ``(median, lo, hi)``."""
    boot = np.median(v[resample_groups(rng, v.size, reps)], axis=1)
    lo, hi = percentile_interval(boot, level=level)
    return float(np.median(v)), float(lo), float(hi)


def speedup_over_processes(
    per_process: pd.DataFrame, *, reps: int = 2000, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Median speedup over processes per cell, with a percentile bootstrap over processes.

    Returns
    -------
    pandas.DataFrame
        One row per (batch, ratio, impl): ``speedup`` (median over processes),
        ``speedup_lo/hi``, ``min/max`` (the range of the processes' own speedups),
        ``ideal`` (cost model), ``fraction_of_ideal``, ``union_ratio``, ``dense_s``,
        ``sparse_s`` and ``fraction_of_roofline`` (medians over processes),
        ``processes``, ``load`` (max load average before timing).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for key, g in per_process.groupby(CELL, sort=False):
        v = g["speedup"].to_numpy(float)
        point, lo, hi = median_interval(v, rng, reps, level)
        rows.append(
            {
                **dict(zip(CELL, key, strict=True)),
                "speedup": point,
                "speedup_lo": lo,
                "speedup_hi": hi,
                "min": float(v.min()),
                "max": float(v.max()),
                "ideal": float(g["ideal"].iloc[0]),
                "fraction_of_ideal": point / float(g["ideal"].iloc[0]),
                "union_ratio": float(g["union_ratio"].iloc[0]),
                **{
                    c: float(g[c].median()) for c in ("dense_s", "sparse_s", "fraction_of_roofline")
                },
                "processes": v.size,
                "load": float(g["load"].max()),
            }
        )
    return pd.DataFrame(rows)


def rerun_coverage(
    per_process: pd.DataFrame, *, reps: int = 500, level: float = 0.95, seed: int = 0
) -> dict[str, float]:
    """How often a re-run's point lands inside a run's interval.

    The processes are split into a first and a second half (in the order they
    ran); the first half plays the report (median over its processes and the
    bootstrap interval over them), the second the re-run (its median). Counted over
    every cell, with the halves in both roles.

    Returns
    -------
    dict
        ``inside`` (share of cells and roles where the re-run's point lies in the
        interval), ``cells`` (how many comparisons), ``half`` (processes per half).
    """
    rng = np.random.default_rng(seed)
    n = int(per_process["process"].nunique())
    if n < 4:
        raise ValueError(f"re-run coverage needs at least 4 processes, got {n}")
    procs = np.sort(per_process["process"].unique())
    halves = (procs[: n // 2], procs[n // 2 : 2 * (n // 2)])
    hits = []
    for _, g in per_process.groupby(CELL, sort=False):
        for a, b in (halves, halves[::-1]):
            va = g[g["process"].isin(a)]["speedup"].to_numpy(float)
            vb = g[g["process"].isin(b)]["speedup"].to_numpy(float)
            _, lo, hi = median_interval(va, rng, reps, level)
            hits.append(lo <= float(np.median(vb)) <= hi)
    return {"inside": float(np.mean(hits)), "cells": len(hits), "half": n // 2}
