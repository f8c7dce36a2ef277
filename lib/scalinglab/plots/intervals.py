"""Figures of the interval-estimates study (rliable-style), from the stats engine's xarray output.

Every helper returns a :class:`matplotlib.figure.Figure` made with
``pyplot.subplots`` (so a notebook's inline backend shows it at the end of the
cell; a script may ``savefig`` it). Inputs are the Datasets of
:mod:`scalinglab.stats` (``point``/``lo``/``hi`` variables) and the benchmark's
score DataArray; nothing here computes a statistic beyond what a figure shows
(means for a heatmap, rank counts for a bar chart).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.figure import Figure

METRIC_LABELS = {
    "iqm": "IQM",
    "median": "Median",
    "mean": "Mean",
    "optimality_gap": "Optimality gap",
}


def _colors(names: Sequence[str]) -> dict[str, tuple]:
    cmap = plt.get_cmap("tab10")
    return {str(n): cmap(i % 10) for i, n in enumerate(names)}


#: Heatmaps with more cells than this are drawn without numbers in the cells.
ANNOTATE_MAX_CELLS = 300


def plot_score_heatmap(scores: xr.DataArray) -> Figure:
    """Mean normalized score over runs, per algorithm (rows) and task (columns).

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``.
    """
    table = scores.mean("run", skipna=True).transpose("algorithm", "task")
    n_alg, n_task = table.shape
    many = n_task * n_alg > ANNOTATE_MAX_CELLS
    # a few outlier tasks (normalized scores in the tens on Atari 200M) would squash every
    # other cell into one colour: the scale ends at the 95th percentile, darker = higher
    vmax = float(np.nanquantile(table.values, 0.95)) if many else float(np.nanmax(table.values))
    vmin = min(0.0, float(np.nanmin(table.values)))
    width = 1.0 + (0.28 if many else 0.75) * n_task
    fig, ax = plt.subplots(figsize=(min(width, 24.0), 0.8 + 0.45 * n_alg), layout="constrained")
    im = ax.imshow(table.values, cmap="viridis", aspect="auto", vmin=vmin, vmax=vmax)
    ax.set_xticks(
        range(n_task),
        [str(t) for t in table.task.values],
        rotation=90 if many else 45,
        ha="center" if many else "right",
        fontsize=7 if many else None,
    )
    ax.set_yticks(range(n_alg), [str(a) for a in table.algorithm.values])
    for i in range(n_alg) if not many else ():
        for j in range(n_task):
            v = float(table.values[i, j])
            ax.text(
                j,
                i,
                f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if v < 0.5 * vmax else "black",
            )
    fig.colorbar(
        im,
        ax=ax,
        label="mean normalized score" + (" (scale ends at the 95th percentile)" if many else ""),
        extend="max" if many and vmax < float(np.nanmax(table.values)) else "neither",
    )
    ax.set_title("Benchmark: mean normalized score per task")
    return fig


def plot_few_run_spread(
    estimates: xr.DataArray,
    full: xr.DataArray,
    *,
    rank_metric: str = "iqm",
    higher_is_better: bool = True,
) -> Figure:
    """Spread of few-run point estimates, and how often each algorithm takes each rank.

    Parameters
    ----------
    estimates
        Dims ``(draw, algorithm, metric)``: point estimates from few-run subsamples.
    full
        Dims ``(algorithm, metric)``: point estimates from all runs (marked).
    rank_metric
        Metric whose ranking the right-hand panel shows.

    Returns
    -------
    Figure
        One violin panel per metric, then one panel of rank frequencies.
    """
    metrics = [str(m) for m in estimates.metric.values]
    algs = [str(a) for a in estimates.algorithm.values]
    colors = _colors(algs)
    fig, axes = plt.subplots(
        1,
        len(metrics) + 1,
        figsize=(3.2 * (len(metrics) + 1), 0.6 + 0.45 * len(algs)),
        layout="constrained",
    )
    y = np.arange(len(algs))
    for ax, m in zip(axes, metrics, strict=False):
        data = [estimates.sel(metric=m, algorithm=a).values for a in algs]
        parts = ax.violinplot(
            [d[np.isfinite(d)] for d in data],
            positions=y,
            orientation="horizontal",
            showextrema=False,
            widths=0.8,
        )
        for body, a in zip(parts["bodies"], algs, strict=True):
            body.set_facecolor(colors[a])
            body.set_alpha(0.5)
        ax.scatter(
            full.sel(metric=m).sel(algorithm=algs).values,
            y,
            marker="|",
            s=200,
            color="black",
            zorder=3,
            label="all runs",
        )
        ax.set_title(METRIC_LABELS.get(m, m))
        ax.set_yticks(y, algs if ax is axes[0] else [])
        ax.grid(axis="x", alpha=0.3)
    axes[0].legend(loc="lower right", fontsize=7)
    # rank frequencies under subsampling
    vals = estimates.sel(metric=rank_metric).transpose("draw", "algorithm").values
    order = np.argsort(-vals if higher_is_better else vals, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(len(algs))[None, :], axis=1)
    freq = np.stack([(ranks == r).mean(axis=0) for r in range(len(algs))], axis=1)
    ax = axes[-1]
    left = np.zeros(len(algs))
    cmap = plt.get_cmap("viridis", len(algs))
    for r in range(len(algs)):
        ax.barh(y, freq[:, r], left=left, color=cmap(r), label=f"rank {r + 1}")
        left += freq[:, r]
    ax.set_yticks(y, [])
    ax.set_xlim(0, 1)
    ax.set_title(f"Rank by {METRIC_LABELS.get(rank_metric, rank_metric)} (fraction of draws)")
    # below the figure, in rows (a legend beside the panel is clipped with many algorithms)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(algs), 8), fontsize=7)
    n_runs = estimates.attrs.get("n_runs")
    fig.suptitle("Point estimates from few runs" + (f" ({n_runs} runs per task)" if n_runs else ""))
    return fig


def plot_interval_estimates(intervals: xr.Dataset) -> Figure:
    """rliable's aggregate-metrics plot: one panel per metric, a CI bar per algorithm.

    Parameters
    ----------
    intervals
        Variables ``point``, ``lo``, ``hi`` with dims ``(algorithm, metric)``.
    """
    metrics = [str(m) for m in intervals.metric.values]
    algs = [str(a) for a in intervals.algorithm.values]
    colors = _colors(algs)
    fig, axes = plt.subplots(
        1,
        len(metrics),
        figsize=(3.0 * len(metrics), 0.8 + 0.45 * len(algs)),
        layout="constrained",
        squeeze=False,
    )
    y = np.arange(len(algs))
    for ax, m in zip(axes[0], metrics, strict=True):
        sub = intervals.sel(metric=m)
        for i, a in enumerate(algs):
            lo, hi, pt = (float(sub[v].sel(algorithm=a)) for v in ("lo", "hi", "point"))
            ax.barh(i, hi - lo, left=lo, height=0.6, color=colors[a], alpha=0.75)
            ax.vlines(pt, i - 0.3, i + 0.3, color="black", lw=1.5)
        ax.set_yticks(y, algs if ax is axes[0][0] else [])
        ax.set_title(METRIC_LABELS.get(m, m))
        ax.grid(axis="x", alpha=0.3)
    level = intervals.attrs.get("level")
    fig.supxlabel("normalized score" + (f"  ({100 * float(level):g}% CIs)" if level else ""))
    return fig


def plot_ci_width_vs_runs(widths: xr.Dataset | xr.DataArray, *, var: str = "width") -> Figure:
    """CI width of each metric as the number of runs grows (one line per metric and algorithm).

    Parameters
    ----------
    widths
        A DataArray, or a Dataset holding ``var``, with dims ``(n_runs, algorithm,
        metric)`` (an extra ``draw`` dim is averaged).

    Returns
    -------
    Figure
        Left: width vs runs (thin: per algorithm; thick: mean over algorithms).
        Right: the width ratio of the other metrics over the first one.
    """
    da = widths[var] if isinstance(widths, xr.Dataset) else widths
    if "draw" in da.dims:
        da = da.mean("draw")
    metrics = [str(m) for m in da.metric.values]
    n = da.n_runs.values
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
    mcolors = _colors(metrics)
    for m in metrics:
        for a in da.algorithm.values:
            ax.plot(n, da.sel(metric=m, algorithm=a), color=mcolors[m], alpha=0.25, lw=0.8)
        ax.plot(
            n,
            da.sel(metric=m).mean("algorithm"),
            color=mcolors[m],
            lw=2.5,
            marker="o",
            label=METRIC_LABELS.get(m, m),
        )
    _run_axis(ax, n)
    ax.set_xlabel("runs per task")
    ax.set_ylabel("CI width")
    ax.set_title("Interval width vs runs")
    ax.legend()
    ax.grid(alpha=0.3)
    base = metrics[0]
    for m in metrics[1:]:
        ratio = (da.sel(metric=m) / da.sel(metric=base)).mean("algorithm")
        ax2.plot(
            n,
            ratio,
            color=mcolors[m],
            lw=2.5,
            marker="o",
            label=f"{METRIC_LABELS.get(m, m)} / {METRIC_LABELS.get(base, base)}",
        )
    ax2.axhline(1.0, color="gray", ls="--", lw=1)
    _run_axis(ax2, n)
    ax2.set_xlabel("runs per task")
    ax2.set_ylabel("width ratio (mean over algorithms)")
    ax2.set_title("Relative width")
    ax2.legend()
    ax2.grid(alpha=0.3)
    return fig


def _run_axis(ax, n: np.ndarray) -> None:
    """Run counts on x: a log axis over a wide range, one label per count, none repeated
    (the log axis's own minor labels would print counts again)."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    n = np.unique(np.asarray(n, dtype=int))
    if n.size > 1 and n.max() / max(n.min(), 1) > 5:
        ax.set_xscale("log")
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
        # drop a label that would sit on its neighbour (e.g. 15 and 16 on a log axis)
        kept = [int(n[0])]
        for v in n[1:]:
            if np.log10(v) - np.log10(kept[-1]) > 0.06:
                kept.append(int(v))
        ax.xaxis.set_major_locator(FixedLocator(kept))
        ax.set_xticklabels([str(v) for v in kept])
    else:
        ax.set_xticks(n, [str(v) for v in n])


def plot_performance_profiles(
    profiles: Sequence[xr.Dataset], *, titles: Sequence[str] | None = None
) -> Figure:
    """Performance profiles with pointwise CI bands, one panel per profile.

    Parameters
    ----------
    profiles
        Datasets with ``point``, ``lo``, ``hi`` dims ``(algorithm, tau)``.
    titles
        Panel titles (default: the ``kind`` attribute).
    """
    profiles = list(profiles)
    fig, axes = plt.subplots(
        1, len(profiles), figsize=(4.5 * len(profiles), 3.6), layout="constrained", squeeze=False
    )
    for k, (ax, prof) in enumerate(zip(axes[0], profiles, strict=True)):
        colors = _colors([str(a) for a in prof.algorithm.values])
        tau = prof.tau.values
        for a in prof.algorithm.values:
            p = prof.sel(algorithm=a)
            ax.plot(tau, p["point"], color=colors[str(a)], lw=1.8, label=str(a))
            ax.fill_between(tau, p["lo"], p["hi"], color=colors[str(a)], alpha=0.2, lw=0)
        kind = prof.attrs.get("kind", "score")
        ax.set_title(titles[k] if titles else f"{kind} distribution")
        ax.set_xlabel(r"normalized score $\tau$")
        ax.set_ylabel(
            r"fraction of runs with score $> \tau$"
            if kind == "score"
            else r"fraction of tasks with mean score $> \tau$"
        )
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    return fig


def plot_probability_of_improvement(poi: xr.Dataset) -> Figure:
    """P(X > Y) with its CI for each pair, and the 0.5 line of "no difference".

    Parameters
    ----------
    poi
        ``point``, ``lo``, ``hi`` with dim ``pair`` (labels like ``"adam:sgd"``).
    """
    pairs = [str(p) for p in poi.pair.values]
    fig, ax = plt.subplots(figsize=(5.5, 0.8 + 0.45 * len(pairs)), layout="constrained")
    y = np.arange(len(pairs))
    lo, hi, pt = (poi[v].values.astype(float) for v in ("lo", "hi", "point"))
    ax.barh(y, hi - lo, left=lo, height=0.55, color="tab:blue", alpha=0.6)
    ax.vlines(pt, y - 0.275, y + 0.275, color="black", lw=1.5)
    ax.axvline(0.5, color="gray", ls="--", lw=1)
    ax.set_yticks(y, [p.replace(":", " > ") for p in pairs])
    ax.set_xlabel("P(X > Y)")
    ax.set_xlim(min(0.0, float(np.nanmin(lo)) - 0.02), 1.0)
    ax.set_title("Probability of improvement")
    ax.grid(axis="x", alpha=0.3)
    return fig


def plot_bootstrap_forest(replicates: xr.DataArray, *, level: float = 0.95) -> Figure:
    """``arviz.plot_forest`` of the bootstrap replicates: one panel per metric.

    Each row is an algorithm: its highest-density interval holding ``level`` of
    the replicates (thin line), the interquartile range (thick) and the median
    replicate (dot), as arviz draws them; set beside
    :func:`plot_interval_estimates` (percentile intervals) it shows where the
    bootstrap distributions are skewed.

    Parameters
    ----------
    replicates
        Dims ``(algorithm, replicate, metric)``
        (:func:`scalinglab.stats.replicates.metric_replicates`).
    level
        Mass of the highest-density interval.
    """
    import arviz as az

    from scalinglab.stats.replicates import to_inference_data

    idata = to_inference_data(replicates)
    metrics = [str(m) for m in replicates.metric.values]
    n_algs = replicates.sizes["algorithm"]
    fig, axes = plt.subplots(
        1,
        len(metrics),
        figsize=(3.0 * len(metrics), 0.8 + 0.45 * n_algs),
        layout="constrained",
        squeeze=False,
    )
    for i, (ax, m) in enumerate(zip(axes[0], metrics, strict=True)):
        az.plot_forest(
            idata,
            var_names=[m],
            combined=True,
            hdi_prob=level,
            labeller=az.labels.NoVarLabeller(),
            ax=ax,
            show=False,
        )
        ax.set_title(METRIC_LABELS.get(m, m))
        if i:
            ax.set_yticklabels([])
        ax.grid(axis="x", alpha=0.3)
    fig.supxlabel(f"normalized score  ({100 * level:g}% HDIs of the bootstrap replicates)")
    return fig


def plot_sample_efficiency(
    intervals: xr.Dataset, *, metric: str = "iqm", xlabel: str = "iteration"
) -> Figure:
    """rliable's sample-efficiency curves: a metric over training with pointwise CI bands.

    Parameters
    ----------
    intervals
        :func:`scalinglab.stats.intervals.interval_estimates` output with a
        ``step`` dim: ``point``, ``lo``, ``hi`` dims ``(algorithm, metric, step)``.
    """
    fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
    colors = _colors([str(a) for a in intervals.algorithm.values])
    steps = intervals.step.values
    for a in intervals.algorithm.values:
        cell = intervals.sel(algorithm=a, metric=metric)
        ax.plot(steps, cell["point"], marker="o", ms=3, color=colors[str(a)], label=str(a))
        ax.fill_between(steps, cell["lo"], cell["hi"], color=colors[str(a)], alpha=0.25, lw=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{metric.upper() if metric == 'iqm' else metric} normalized score")
    ax.set_xticks(steps)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig
