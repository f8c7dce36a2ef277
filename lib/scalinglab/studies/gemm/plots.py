"""Figures of the GEMM cost-model study: tile sweep, roofline, predictor accuracy.

Every helper returns a :class:`matplotlib.figure.Figure` from ``pyplot.subplots``
and computes nothing beyond what it draws; the tables come from
:mod:`scalinglab.studies.gemm.sweep` and :mod:`scalinglab.studies.gemm.predictor`.
They live in the study's room (not in the shared ``plots`` room) because they draw
this study's tables and know its models' names.
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from scalinglab.cost_model import HardwareRecord, attainable_flop_per_s

_MODEL_LABELS = {
    "roofline": "roofline (analytic)",
    "random_forest": "random forest",
    "roofline_x_correction": "roofline x learned correction",
    "kernel_model": "kernel model (fitted costs)",
    "kernel_model_x_correction": "kernel model x learned correction",
}


def plot_tile_heatmap(cells: pd.DataFrame) -> Figure:
    """Slowdown of every tile relative to its shape's best tile (1 = best, outlined).

    Parameters
    ----------
    cells
        One row per (shape, tile): ``M, N, K, tile_m, tile_n, tile_k, seconds``.
    """
    c = cells.copy()
    c["shape"] = c[["M", "N", "K"]].astype(str).agg("x".join, axis=1)
    c["tile"] = c[["tile_m", "tile_n", "tile_k"]].astype(str).agg("x".join, axis=1)
    c["slowdown"] = c["seconds"] / c.groupby("shape")["seconds"].transform("min")
    grid = c.pivot(index="shape", columns="tile", values="slowdown")
    grid = grid.loc[c.drop_duplicates("shape")["shape"]]
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * grid.shape[1] + 2), 0.35 * grid.shape[0] + 2))
    im = ax.imshow(np.log2(grid.to_numpy()), cmap="viridis_r", aspect="auto")
    ax.set_xticks(range(grid.shape[1]), grid.columns, rotation=90, fontsize=7)
    ax.set_yticks(range(grid.shape[0]), grid.index, fontsize=7)
    for i, j in enumerate(np.nanargmin(grid.to_numpy(), axis=1)):
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="red", lw=1.5))
    ax.set_xlabel("tile (tile_m x tile_n x tile_k)")
    ax.set_ylabel("shape (M x N x K)")
    cb = fig.colorbar(im, ax=ax)
    cb.set_label("log2 (time / best time)")
    ax.set_title("Tile-size sweep: slowdown vs the best tile (red)")
    fig.tight_layout()
    return fig


def plot_tile_effects(effects: pd.DataFrame, *, level: float = 0.95) -> Figure:
    """Worst/best tile time ratio per shape with its bootstrap CI (from ``tile_effects``)."""
    e = effects.sort_values("ratio")
    labels = e[["M", "N", "K"]].astype(str).agg("x".join, axis=1)
    fig, ax = plt.subplots(figsize=(6, 0.3 * len(e) + 1.5))
    y = np.arange(len(e))
    err = np.vstack([e["ratio"] - e["ratio_lo"], e["ratio_hi"] - e["ratio"]]).clip(min=0)
    ax.errorbar(e["ratio"], y, xerr=err, fmt="o", capsize=3)
    ax.axvline(3.2, color="gray", ls="--", label="paper: up to 3.2x (GPU)")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel(f"worst / best tile time ({100 * level:g}% bootstrap CI over repeats)")
    ax.legend(fontsize=8)
    ax.set_title("How much the tile size matters, per shape")
    fig.tight_layout()
    return fig


def plot_roofline(points: pd.DataFrame, hw: HardwareRecord) -> Figure:
    """Every kernel's achieved FLOP/s against its arithmetic intensity, under the roofs.

    Parameters
    ----------
    points
        ``impl, intensity`` (FLOP/byte at minimum traffic) and ``flop_per_s``.
    hw
        The measured hardware record (FMA peak, BLAS and copy bandwidth).
    """
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    lo = max(points["intensity"].min() / 2, 1e-2)
    hi = points["intensity"].max() * 2
    x = np.logspace(np.log10(lo), np.log10(hi), 200)
    ax.plot(
        x,
        np.asarray(attainable_flop_per_s(x, hw)) / 1e9,
        "k-",
        label=f"roofline: {hw.peak_flop_per_s / 1e9:.0f} GFLOP/s, "
        f"{hw.mem_bytes_per_s / 1e9:.0f} GB/s",
    )
    if hw.blas_flop_per_s:
        ax.axhline(
            hw.blas_flop_per_s / 1e9,
            color="gray",
            ls=":",
            label=f"BLAS sgemm (hardware record): {hw.blas_flop_per_s / 1e9:.0f} GFLOP/s",
        )
    markers = dict(zip(points["impl"].unique(), "os^vDx*", strict=False))
    for impl, g in points.groupby("impl", sort=False):
        ax.scatter(
            g["intensity"], g["flop_per_s"] / 1e9, marker=markers[impl], s=22, alpha=0.8, label=impl
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("arithmetic intensity (FLOP/byte, minimum traffic)")
    ax.set_ylabel("achieved GFLOP/s")
    ax.set_title(f"Roofline of {hw.name}")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def plot_predictions(oof: pd.DataFrame, *, protocol: str = "unseen_shapes") -> Figure:
    """Predicted vs measured time for each model (out-of-fold, one panel per model)."""
    d = oof[oof["protocol"] == protocol]
    models = list(d["model"].unique())
    fig, axes = plt.subplots(1, len(models), figsize=(4 * len(models), 4), squeeze=False)
    lo, hi = d[["seconds", "predicted"]].min().min(), d[["seconds", "predicted"]].max().max()
    for ax, model in zip(axes[0], models, strict=True):
        g = d[d["model"] == model]
        ax.scatter(g["seconds"], g["predicted"], s=8, alpha=0.6)
        ax.plot([lo, hi], [lo, hi], "k--", lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(_MODEL_LABELS.get(model, model), fontsize=9)
        ax.set_xlabel("measured seconds")
    axes[0][0].set_ylabel(f"predicted seconds ({protocol.replace('_', ' ')})")
    fig.tight_layout()
    return fig


def plot_accuracy(acc: pd.DataFrame, *, level: float = 0.95) -> Figure:
    """R^2 of log time per model and protocol with bootstrap CIs (from ``accuracy``)."""
    fig, ax = plt.subplots(figsize=(8, 3.8))
    protocols = list(acc["protocol"].unique())
    models = list(acc["model"].unique())
    width = 0.8 / len(protocols)
    for k, protocol in enumerate(protocols):
        a = acc[acc["protocol"] == protocol].set_index("model").loc[models]
        x = np.arange(len(models)) + (k - (len(protocols) - 1) / 2) * width
        r2 = a["r2_log"].to_numpy()
        err = np.vstack([r2 - a["r2_lo"], a["r2_hi"] - r2]).clip(min=0)
        off = r2 < -0.2  # below the axis: draw a stub and print the value instead
        err[:, off] = 0.0
        ax.bar(
            x, np.clip(r2, -0.2, None), width, yerr=err, capsize=3, label=protocol.replace("_", " ")
        )
        for xi, v in zip(x[off], r2[off], strict=True):
            ax.text(xi, -0.15, f"{v:.2g}", ha="center", fontsize=7)
    ax.axhline(0.95, color="gray", ls="--", lw=1, label="target 0.95")
    labels = [textwrap.fill(_MODEL_LABELS.get(m, m), 16) for m in models]
    ax.set_xticks(np.arange(len(models)), labels, fontsize=8)
    ax.set_ylabel(f"R^2 of log time ({100 * level:g}% CI)")
    ax.set_ylim(-0.2, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_gpperf_tiles(times: pd.DataFrame) -> Figure:
    """GPPerf's runtimes: each shape's time per tile over its fastest tile's (log scale).

    ``times``: ``M, N, K, tile, ms`` (:func:`scalinglab.studies.gemm.gpperf.load_gpperf`).
    """
    t = times.assign(shape=times[["M", "N", "K"]].astype(str).agg("x".join, axis=1))
    t["rel"] = t["ms"] / t.groupby("shape")["ms"].transform("min")
    grid = t.pivot(index="shape", columns="tile", values="rel")
    order = t.groupby("shape")["ms"].min().sort_values().index
    grid = grid.loc[order]
    fig, ax = plt.subplots(figsize=(6, 9))
    im = ax.imshow(np.log10(grid.to_numpy()), aspect="auto", cmap="viridis")
    ax.set_xticks(range(grid.shape[1]), [str(c) for c in grid.columns])
    ax.set_yticks(range(grid.shape[0]), grid.index, fontsize=7)
    ax.set_xlabel("tile size (threads per block edge)")
    ax.set_ylabel("shape M x N x K (fastest run time, ascending)")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            v = grid.iat[i, j]
            ax.text(
                j,
                i,
                "not run" if np.isnan(v) else f"{v:.3g}",
                ha="center",
                va="center",
                fontsize=6,
                color="w" if np.isnan(v) or v < 10 else "k",
            )
    fig.colorbar(im, ax=ax, label="log10(time / fastest tile's time)")
    fig.tight_layout()
    return fig


def plot_gpperf_predictions(
    preds: pd.DataFrame, *, unit: str, model: str = "random_forest"
) -> Figure:
    """Predicted vs measured under the paper's random split and on unseen shapes.

    ``preds``: the predictions table of
    :func:`scalinglab.studies.gemm.gpperf_predictor.predictor_accuracy`.
    """
    d = preds[preds["model"] == model]
    protocols = [p for p in ("random_split", "unseen_shapes") if p in set(d["protocol"])]
    fig, axes = plt.subplots(1, len(protocols), figsize=(4.5 * len(protocols), 4.2), squeeze=False)
    lo = d[["measured", "predicted"]].clip(lower=1e-9).min().min()
    hi = d[["measured", "predicted"]].max().max()
    for ax, protocol in zip(axes[0], protocols, strict=True):
        g = d[d["protocol"] == protocol]
        ax.scatter(g["measured"], g["predicted"].clip(lower=lo), s=12, alpha=0.7)
        ax.plot([lo, hi], [lo, hi], "k--", lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        title = (
            "paper's split (random 80/20, seed 42)"
            if protocol == "random_split"
            else "unseen shapes (grouped 5-fold)"
        )
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"measured ({unit})")
    axes[0][0].set_ylabel(f"predicted ({unit})")
    fig.tight_layout()
    return fig


def plot_gpperf_accuracy(acc: pd.DataFrame, *, metric: str = "r2", level: float = 0.95) -> Figure:
    """One metric per (target, protocol) for the random forest, with its interval."""
    d = acc[(acc["model"] == "random_forest") & (acc["metric"] == metric)]
    labels = [f"{r.target}: {r.protocol.replace('_', ' ')}" for r in d.itertuples()]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(d) + 1.2))
    y = np.arange(len(d))
    point = d["point"].to_numpy()
    err = np.vstack([point - d["lo"].to_numpy(), d["hi"].to_numpy() - point]).clip(min=0)
    ax.errorbar(point, y, xerr=err, fmt="o", capsize=3)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0.98, color="gray", ls="--", lw=1, label="paper: runtime 0.98")
    ax.axvline(0.78, color="gray", ls=":", lw=1, label="paper: power 0.78")
    ax.set_xlabel(
        f"{metric.replace('_', ' ')} of the random forest ({100 * level:g}% interval; "
        "repeated splits: range of the split scores)"
    )
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig
