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
    and the tuned peak learning rate per size. ``path``: the sweep's ``tuning_*`` table.
    A sweep tuned by walks (no base-size descent: its curves are drawn by
    :func:`tuning_curves`) gets the learning-rate panel alone."""
    base = path[path.stage.str.startswith("base")]
    fig, axes = plt.subplots(1, 2 if len(base) else 1, figsize=(12 if len(base) else 6, 4))
    axes = np.atleast_1d(axes)
    if len(base):
        for o, g in base.groupby("search", sort=False):
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
        axes[-1].plot(ds.n_params.values, lr.loc[o].values, "o-", label=o)
    axes[-1].set(
        xscale="log",
        yscale="log",
        xlabel="non-embedding parameters",
        ylabel="tuned peak learning rate",
        title="learning rate after re-tuning" if len(base) else "tuned peak learning rate per size",
    )
    axes[-1].legend(fontsize=8)
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


def tuning_curves(curves: pd.DataFrame, *, multiple: float) -> Figure:
    """Each optimizer's learning-rate tuning curve at every size (the final walk at
    ``multiple``): mean objective over the tuning seeds against the learning rate, the
    optimum starred, a flagged walk (optimum on its edge) dashed with its optimum crossed.
    ``curves``: :func:`.tuning_curves.curves`."""
    lr = curves[(curves.coordinate == "lr") & curves.final & (curves.multiple == multiple)]
    opts = list(dict.fromkeys(lr.search))
    fig, axes = plt.subplots(
        1, max(len(opts), 1), figsize=(3.6 * max(len(opts), 1), 3.4), squeeze=False
    )
    for ax, o in zip(axes[0], opts, strict=False):
        for r in lr[lr.search == o].itertuples():
            ok = r.status == "interior"
            y = np.array(r.objectives, dtype=float)
            line = ax.plot(
                r.values,
                y,
                "o-" if ok else "o--",
                ms=3,
                label=f"{r.size}{'' if ok else ' (flagged)'}",
            )
            best = y[list(r.values).index(r.best)]
            ax.plot([r.best], [best], "*" if ok else "x", ms=11, color=line[0].get_color())
        ax.set(
            xscale="log",
            xlabel="peak learning rate",
            ylabel="mean final loss (tuning seeds)",
            title=f"{o}, {multiple:g}x",
        )
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def matched_speedups(
    speedups: pd.DataFrame, cells: pd.DataFrame, n_params: dict[str, float]
) -> Figure:
    """Speedup over AdamW against non-embedding parameters at the matched budget (left)
    and at matched steps (right), with t intervals over seeds; an unidentified point is
    hollow. ``speedups``/``cells``: :class:`.matched_report.Matched`."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, (col, title) in zip(
        axes, (("budget", "matched budget"), ("steps_multiple", "matched steps")), strict=True
    ):
        pick = set(zip(cells["size"], cells[col], strict=True))
        for o, g in speedups.groupby("optimizer", sort=False):
            g = g[[(s, m) in pick for s, m in zip(g["size"], g.multiple, strict=True)]]
            if not len(g):
                continue
            x = g["size"].map(n_params)
            lo, hi = g.lo.astype(float), g.hi.astype(float)
            line = ax.errorbar(
                x,
                g.speedup,
                yerr=[g.speedup - lo.fillna(g.speedup), hi.fillna(g.speedup) - g.speedup],
                marker="o",
                capsize=2,
                label=o,
                mfc="none",
            )
            ax.scatter(
                x[g.identified], g.speedup[g.identified], color=line[0].get_color(), zorder=3
            )
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set(xscale="log", xlabel="non-embedding parameters", title=title)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("speedup over AdamW (t over seeds)")
    fig.suptitle("filled: identified; hollow: not identified (E or a tuning flag)", fontsize=9)
    fig.tight_layout()
    return fig
