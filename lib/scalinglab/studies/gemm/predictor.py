"""Predicting GEMM run time from shape and tile: roofline, random forest, and both.

Three predictors of the tiled kernel's median time per (shape, tile) cell:

- ``roofline``: the analytic bound ``max(2MNK / peak, 4(MK + KN + MN) / bandwidth)``
  from the hardware record (:func:`scalinglab.cost_model.roofline_seconds`); no fitting.
- ``random_forest``: scikit-learn's ``RandomForestRegressor`` on shape and tile
  sizes plus derived features (FLOPs, bytes, arithmetic intensity, tile counts,
  thread utilisation, whether the kernel takes its threaded path, register-block
  padding, panel sizes), target ``log(seconds)``
  (as Liu and Halim 2024, with their FLOPs/bytes/intensity features).
- ``roofline_x_correction``: the roofline times a learned factor, a forest on the
  same features fit to ``log(seconds / roofline)``.
- ``kernel_model``: the kernel's own work on its busiest thread
  (:func:`scalinglab.cost_model.tiled_gemm_counts`: padded FLOPs, micro-kernel calls,
  panel steps, packed bytes, per-call and thread-pool overheads), each count times a
  non-negative cost per unit fit by :func:`calibrate_kernel_model` (scipy's NNLS on
  relative errors). Seven numbers with a physical meaning, so it extrapolates to
  shapes larger or smaller than any it saw, where a forest predicts the nearest leaf.
- ``kernel_model_x_correction``: the kernel model times a forest-learned factor.

Two protocols, both out-of-fold: ``cv`` (5-fold over cells, shuffled) and
``unseen_shapes`` (grouped 5-fold: every shape's cells are predicted by a model
that never saw that shape). Metrics: R^2 of ``log(seconds)`` (relative accuracy
across four orders of magnitude; R^2 of raw seconds would only measure the
largest shapes) and MAPE of seconds, each with a percentile bootstrap CI that
resamples *shapes* (cells of one shape share its operands and are correlated) via
:func:`scalinglab.stats.bootstrap.resample_groups`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import nnls
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import GroupKFold, KFold

from scalinglab.cost_model import (
    HardwareRecord,
    gemm_flops,
    gemm_min_bytes,
    roofline_seconds,
    tiled_gemm_counts,
)
from scalinglab.cost_model.tiled_gemm import COUNTS
from scalinglab.kernels.gemm_numba import MR, NR, PARALLEL_MIN_FLOPS
from scalinglab.stats.bootstrap import percentile_interval, resample_groups
from scalinglab.studies.gemm.timings import SHAPE, TILE

MODELS = (
    "roofline",
    "random_forest",
    "roofline_x_correction",
    "kernel_model",
    "kernel_model_x_correction",
)
PROTOCOLS = ("cv", "unseen_shapes")


def gemm_features(
    cells: pd.DataFrame, *, n_threads: int, mr: int = MR, nr: int = NR
) -> pd.DataFrame:
    """Features of each (shape, tile) row: sizes and what follows from them.

    Parameters
    ----------
    cells
        Columns ``M, N, K, tile_m, tile_n, tile_k``.
    n_threads
        Threads the kernel ran on (thread utilisation of the output tiles).
    mr, nr
        Register block the timed kernel used (default: this CPU's; timings made on
        another CPU carry their own, see
        :func:`scalinglab.studies.gemm.machine.committed_sweep_config`).

    Returns
    -------
    pandas.DataFrame
        One row per input row, numeric columns only.
    """
    m, n, k = (cells[c].to_numpy(float) for c in SHAPE)
    tm, tn, tk = (cells[c].to_numpy(float) for c in TILE)
    flops = np.asarray(gemm_flops(m, n, k))
    nbytes = np.asarray(gemm_min_bytes(m, n, k))
    tiles = np.ceil(m / tm) * np.ceil(n / tn)
    waves = np.ceil(tiles / n_threads)
    eff_k = np.minimum(tk, k)
    padded = np.ceil(m / mr) * mr * np.ceil(n / nr) * nr  # register blocks of C
    micro_calls = padded / (mr * nr) * np.ceil(k / tk)
    return pd.DataFrame(
        {
            "M": m,
            "N": n,
            "K": k,
            "tile_m": tm,
            "tile_n": tn,
            "tile_k": tk,
            "log_flops": np.log(flops),
            "log_bytes": np.log(nbytes),
            "log_intensity": np.log(flops / nbytes),
            "output_tiles": tiles,
            "k_steps": np.ceil(k / tk),
            "thread_utilisation": tiles / (waves * n_threads),
            "parallel_path": _counts(cells, n_threads=n_threads, mr=mr, nr=nr)["threaded"],
            "log_flops_per_busy_thread": np.log(flops / np.minimum(tiles, n_threads)),
            "padding_factor": padded / (m * n),
            "log_micro_calls": np.log(micro_calls),
            "micro_depth": eff_k,
            "b_panel_bytes": 4.0 * np.minimum(tn, n) * eff_k,
            "a_panel_bytes": 4.0 * np.minimum(tm, m) * eff_k,
        }
    )


def _counts(
    cells: pd.DataFrame, *, n_threads: int, mr: int = MR, nr: int = NR
) -> dict[str, np.ndarray]:
    """:func:`scalinglab.cost_model.tiled_gemm_counts` with the register block and the
    threading threshold of :func:`scalinglab.kernels.gemm_numba.gemm_tiled`."""
    return tiled_gemm_counts(
        *(cells[c].to_numpy(float) for c in SHAPE + TILE),
        n_threads=n_threads,
        mr=mr,
        nr=nr,
        parallel_min_flops=PARALLEL_MIN_FLOPS,
    )


def kernel_counts(cells: pd.DataFrame, *, n_threads: int, mr: int = MR, nr: int = NR) -> np.ndarray:
    """The kernel's work per (shape, tile) row, ``(cell, count)`` in :data:`COUNTS` order
    (``mr x nr``: the register block the kernel used)."""
    counts = _counts(cells, n_threads=n_threads, mr=mr, nr=nr)
    return np.column_stack([counts[c] for c in COUNTS])


def calibrate_kernel_model(counts: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """Non-negative seconds per unit of each count, minimising relative error.

    Solves ``min ||(counts @ cost - seconds) / seconds||`` subject to ``cost >= 0``
    by ``scipy.optimize.nnls`` (columns scaled to [0, 1] for conditioning).

    Parameters
    ----------
    counts
        ``(cell, count)`` from :func:`kernel_counts`.
    seconds
        ``(cell,)`` measured times.

    Returns
    -------
    numpy.ndarray
        ``(count,)`` seconds per unit; predict with ``counts @ cost``.
    """
    scale = counts.max(axis=0)
    scale[scale == 0] = 1.0
    weighted = counts / scale / seconds[:, None]
    cost, _ = nnls(weighted, np.ones(len(seconds)))
    return cost / scale


def _forest(seed: int) -> RandomForestRegressor:
    return RandomForestRegressor(
        n_estimators=300, min_samples_leaf=1, max_features=0.5, random_state=seed, n_jobs=1
    )


def out_of_fold(
    cells: pd.DataFrame,
    hw: HardwareRecord,
    *,
    n_threads: int,
    seed: int = 0,
    n_splits: int = 5,
    mr: int = MR,
    nr: int = NR,
) -> pd.DataFrame:
    """Out-of-fold predictions of every model under both protocols.

    Parameters
    ----------
    cells
        One row per (shape, tile): ``M, N, K, tile_m, tile_n, tile_k, seconds``
        (e.g. :func:`scalinglab.studies.gemm.timings.cell_medians`).
    hw
        Hardware record for the roofline.
    mr, nr
        Register block the timed kernel used (:func:`gemm_features`).

    Returns
    -------
    pandas.DataFrame
        Long table: ``row, shape, protocol, model, seconds, predicted``.
    """
    cells = cells.reset_index(drop=True)
    x = gemm_features(cells, n_threads=n_threads, mr=mr, nr=nr).to_numpy()
    work = kernel_counts(cells, n_threads=n_threads, mr=mr, nr=nr)
    y = np.log(cells["seconds"].to_numpy(float))
    roof = np.asarray(
        roofline_seconds(
            gemm_flops(*(cells[c].to_numpy(float) for c in SHAPE)),
            gemm_min_bytes(*(cells[c].to_numpy(float) for c in SHAPE)),
            hw,
        ),
        dtype=float,
    )
    shape_id = cells[SHAPE].astype(str).agg("x".join, axis=1).to_numpy()
    n_shapes = len(np.unique(shape_id))
    if n_shapes < 2:
        raise ValueError("predicting unseen shapes needs timings of at least 2 shapes")
    splits = {
        "cv": KFold(n_splits=min(n_splits, len(cells)), shuffle=True, random_state=seed).split(x),
        "unseen_shapes": GroupKFold(n_splits=min(n_splits, n_shapes)).split(x, groups=shape_id),
    }
    frames = []
    for protocol, folds in splits.items():
        pred = {m: np.full(len(cells), np.nan) for m in MODELS}
        pred["roofline"] = np.log(roof)
        for train, test in folds:
            rf = _forest(seed).fit(x[train], y[train])
            pred["random_forest"][test] = rf.predict(x[test])
            corr = _forest(seed).fit(x[train], y[train] - np.log(roof[train]))
            pred["roofline_x_correction"][test] = np.log(roof[test]) + corr.predict(x[test])
            cost = calibrate_kernel_model(work[train], np.exp(y[train]))
            kernel = np.log(np.maximum(work @ cost, 1e-12))
            pred["kernel_model"][test] = kernel[test]
            corr = _forest(seed).fit(x[train], y[train] - kernel[train])
            pred["kernel_model_x_correction"][test] = kernel[test] + corr.predict(x[test])
        for model, p in pred.items():
            frames.append(
                pd.DataFrame(
                    {
                        "row": np.arange(len(cells)),
                        "shape": shape_id,
                        "protocol": protocol,
                        "model": model,
                        "seconds": np.exp(y),
                        "predicted": np.exp(p),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def _r2_log(y: np.ndarray, p: np.ndarray) -> float:
    ly, lp = np.log(y), np.log(p)
    ss_tot = np.sum((ly - ly.mean()) ** 2)
    return float(1.0 - np.sum((ly - lp) ** 2) / ss_tot) if ss_tot > 0 else float("nan")


def _mape(y: np.ndarray, p: np.ndarray) -> float:
    return float(np.mean(np.abs(p - y) / y))


def accuracy(
    oof: pd.DataFrame, *, reps: int = 2000, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """R^2 of log seconds and MAPE per (protocol, model), with bootstrap CIs over shapes.

    Returns
    -------
    pandas.DataFrame
        ``protocol, model, r2_log, r2_lo, r2_hi, mape, mape_lo, mape_hi, n_cells,
        n_shapes``.
    """
    rows = []
    for (protocol, model), df in oof.groupby(["protocol", "model"], sort=False):
        shapes, inverse = np.unique(df["shape"].to_numpy(), return_inverse=True)
        by_shape = [np.flatnonzero(inverse == s) for s in range(len(shapes))]
        y, p = df["seconds"].to_numpy(), df["predicted"].to_numpy()
        rng = np.random.default_rng(seed)
        boot = np.empty((reps, 2))
        for r, draw in enumerate(resample_groups(rng, len(shapes), reps)):
            idx = np.concatenate([by_shape[s] for s in draw])
            boot[r] = _r2_log(y[idx], p[idx]), _mape(y[idx], p[idx])
        (r2_lo, mape_lo), (r2_hi, mape_hi) = percentile_interval(boot, level=level)
        rows.append(
            {
                "protocol": protocol,
                "model": model,
                "r2_log": _r2_log(y, p),
                "r2_lo": r2_lo,
                "r2_hi": r2_hi,
                "mape": _mape(y, p),
                "mape_lo": mape_lo,
                "mape_hi": mape_hi,
                "n_cells": len(df),
                "n_shapes": len(shapes),
            }
        )
    return pd.DataFrame(rows)


def tile_choice_regret(
    oof: pd.DataFrame, cells: pd.DataFrame, *, model: str, among: pd.DataFrame | None = None
) -> pd.DataFrame:
    """For unseen shapes: the tile the model would pick vs the measured best.

    Parameters
    ----------
    oof
        :func:`out_of_fold` output; its ``row`` indexes ``cells``.
    cells
        The cells the predictors were scored on (:func:`~.timings.cell_medians`).
    among
        Timed calls or cells (columns ``M, N, K, tile_m, tile_n, tile_k``) whose
        measured times are trusted (:func:`~.timings.stable_cells`): the pick and the
        best are taken among those tiles only (a cell timed through a disturbance
        cannot say whether picking it was a mistake); a shape left with fewer than two
        is skipped. None: every cell.

    Returns
    -------
    pandas.DataFrame
        Per shape: ``shape, picked_tile, best_tile, regret`` (measured time of the
        picked tile over the best measured time; 1.0 = picked the best).
    """
    df = oof[(oof["protocol"] == "unseen_shapes") & (oof["model"] == model)]
    keys = cells.reset_index(drop=True)[SHAPE + TILE]
    tiles = keys[TILE].astype(str).agg("x".join, axis=1).to_numpy()
    trusted = np.ones(len(keys), dtype=bool)
    if among is not None:
        ok = among[SHAPE + TILE].drop_duplicates().assign(_ok=True)
        trusted = keys.merge(ok, on=SHAPE + TILE, how="left")["_ok"].notna().to_numpy()
    rows = []
    for shape, g in df.groupby("shape", sort=False):
        g = g[trusted[g["row"].to_numpy(int)]]
        if len(g) < 2:
            continue
        picked = g.loc[g["predicted"].idxmin()]
        best = g.loc[g["seconds"].idxmin()]
        rows.append(
            {
                "shape": shape,
                "picked_tile": tiles[int(picked["row"])],
                "best_tile": tiles[int(best["row"])],
                "regret": float(picked["seconds"] / best["seconds"]),
            }
        )
    return pd.DataFrame(rows, columns=["shape", "picked_tile", "best_tile", "regret"])


def within_shape_r2(oof: pd.DataFrame, *, protocol: str = "unseen_shapes") -> pd.DataFrame:
    """R^2 of log time within each shape: how well a model ranks the tiles of a shape.

    Most of the variance of log time is between shapes (problem size); a tile-blind
    model that knew each shape's mean time would already score a high R^2. Here
    each shape's mean is removed from both the measured and the predicted log
    times, so only the part of the variance the tile choice makes is scored:
    ``1 - sum((d_pred - d_meas)^2) / sum(d_meas^2)`` with ``d = log t - mean over
    the shape's tiles``.

    Parameters
    ----------
    oof
        :func:`out_of_fold` output (``shape, protocol, model, seconds, predicted``).

    Returns
    -------
    pandas.DataFrame
        One row per model: ``model``, ``r2_within`` (the within-shape R^2),
        ``within_share`` (share of the variance of log time that lies within
        shapes), ``oracle_r2`` (the R^2 of log time of the tile-blind per-shape
        mean: ``1 - within_share``).
    """
    df = oof[oof["protocol"] == protocol]
    if df.empty:
        raise ValueError(f"no out-of-fold predictions under protocol {protocol!r}")
    rows = []
    for model, g in df.groupby("model", sort=False):
        y = np.log(g["seconds"].to_numpy(float))
        p = np.log(g["predicted"].to_numpy(float))
        by = g["shape"].to_numpy()
        dy = y - pd.Series(y).groupby(by).transform("mean").to_numpy()
        dp = p - pd.Series(p).groupby(by).transform("mean").to_numpy()
        total = float(np.sum((y - y.mean()) ** 2))
        within = float(np.sum(dy**2))
        rows.append(
            {
                "model": model,
                "r2_within": 1.0 - float(np.sum((dp - dy) ** 2)) / within,
                "within_share": within / total,
                "oracle_r2": 1.0 - within / total,
            }
        )
    return pd.DataFrame(rows)
