"""The optimizer study's figures: per-size panels with interval bars, the tuning path, the
trend with size and the mid-run rankings. Each returns its :class:`matplotlib.figure.Figure`
(the notebook shows it)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure


def _bars(ax: Axes, x: pd.Series, y: pd.Series, lo: pd.Series, hi: pd.Series, **kw) -> None:
    """Error bars from an interval; a missing end draws no bar on that side."""
    ax.errorbar(x, y, yerr=[y - lo.fillna(y), hi.fillna(y) - y], marker="o", capsize=2, **kw)


def per_size(
    table: pd.DataFrame, value: str, *, sizes: Sequence[str], ylabel: str, ref: float | None = None
) -> Figure:
    """One panel per size: ``value`` (with ``lo``/``hi``) against the data multiple, one line
    per optimizer. ``table``: rows (optimizer, model_size, data_multiple, value, lo, hi)."""
    fig, axes = plt.subplots(1, len(sizes), figsize=(4 * len(sizes), 3.5), squeeze=False)
    for ax, s in zip(axes[0], sizes, strict=True):
        here = table[table.model_size == s]
        for o, g in here.groupby("optimizer", sort=False):
            _bars(ax, g.data_multiple, g[value], g.lo, g.hi, label=o)
        if ref is not None:
            ax.axhline(ref, color="k", lw=0.8)
        ax.set(xlabel="data (x Chinchilla)", ylabel=ylabel, title=s if len(here) else f"{s}: none")
        if len(here):
            ax.set_xscale("log")
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def tuning(path: pd.DataFrame, ds: xr.Dataset) -> Figure:
    """Coordinate descent at the smallest size (every evaluation, the incumbent as a line)
    and the tuned peak learning rate per size. ``path``: the sweep's ``tuning_*`` table."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for o, g in path[path.stage.str.startswith("base")].groupby("search", sort=False):
        x = np.arange(len(g))
        top = g.objective[np.isfinite(g.objective)].max()
        axes[0].scatter(x, g.objective.clip(upper=top), s=8, alpha=0.4)
        axes[0].plot(x, g.incumbent, label=o)
    axes[0].set(
        xlabel="evaluation",
        ylabel="final held-out loss",
        title=f"coordinate descent at {ds.model_size.values[0]}",
    )
    axes[0].legend(fontsize=8)
    lr = ds.lr.isel(data_multiple=0).to_pandas()
    for o in lr.index:
        axes[1].plot(ds.n_params.values, lr.loc[o].values, "o-", label=o)
    axes[1].set(
        xscale="log",
        yscale="log",
        xlabel="non-embedding parameters",
        ylabel="tuned peak learning rate",
        title="learning rate after re-tuning",
    )
    fig.tight_layout()
    return fig


def size_trend(per_size: pd.DataFrame, *, baseline: str, multiples: Sequence[float]) -> Figure:
    """Each optimizer's geometric-mean speedup against non-embedding parameters
    (``per_size`` from :func:`.analysis.size_trend`)."""
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for o, g in per_size[per_size.optimizer != baseline].groupby("optimizer", sort=False):
        _bars(ax, g.n_params, g.speedup, g.lo, g.hi, label=o)
    ax.axhline(1.0, color="k", lw=0.8)
    over = ", ".join(f"{m:g}x" for m in multiples)
    ax.set(
        xscale="log", xlabel="non-embedding parameters", ylabel=f"speedup (geo-mean over {over})"
    )
    ax.legend(fontsize=8)
    return fig


def rankings(ds: xr.Dataset, tau: pd.DataFrame, big: str, most: float) -> Figure:
    """Seed-mean held-out loss curves at (``big``, ``most``) and Kendall tau with the final
    ranking at each checkpoint (``tau`` from :func:`.analysis.ranking_agreement`)."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    curves = ds.loss.sel(model_size=big, data_multiple=most).mean("seed")
    toks = ds.tokens_seen.sel(model_size=big, data_multiple=most).values
    for o in ds.optimizer.values:
        axes[0].plot(toks, curves.sel(optimizer=o), marker=".", label=o)
    axes[0].set(
        xlabel="training tokens",
        ylabel="held-out loss",
        yscale="log",
        title=f"{big}, {most:g}x Chinchilla (mean over seeds)",
    )
    axes[0].legend(fontsize=8)
    for m, g in tau[tau.model_size == big].groupby("data_multiple"):
        _bars(axes[1], g.step + 1, g.tau, g.lo, g.hi, label=f"{m:g}x")
    axes[1].set(
        xlabel=f"checkpoint (of {ds.sizes['step']})",
        ylabel="Kendall tau with the final ranking",
        title=big,
    )
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    return fig
