"""Figures of the RL-scaling study: training curves, sigmoid fits, k(N), phases, variants.

Every helper returns a :class:`matplotlib.figure.Figure` from ``pyplot.subplots`` and
computes nothing beyond what it draws; the tables come from :mod:`.analysis`
(``curves``: one row per evaluation with ``model_size``, ``n_params``, ``variant``,
``seed``, ``step``, ``compute``, ``pass_rate``), :mod:`.stopping`, :mod:`.kn` and
:mod:`.phases`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator


def _mean_curve(curves: pd.DataFrame, size: str, variant: str) -> pd.DataFrame:
    g = curves[(curves["model_size"] == size) & (curves["variant"] == variant)]
    return g.groupby("step")[["compute", "pass_rate"]].mean()


def symlog_threshold(compute: Sequence[float] | np.ndarray) -> float:
    """The linear threshold of a symlog compute axis that starts at step 0: the power of
    ten at or below the first positive compute, so the "0" tick sits one decade-width left
    of the first decade's label (with :func:`symlog_ticks`: the default locator labelled
    a power of ten inside the linear range, on top of "0")."""
    c = np.asarray(compute, dtype=float)
    pos = c[c > 0]
    if pos.size == 0:
        raise ValueError("symlog_threshold: no positive compute to place the axis by")
    return float(10 ** np.floor(np.log10(pos.min())))


def symlog_ticks(compute: Sequence[float] | np.ndarray) -> list[float]:
    """Major ticks of a symlog compute axis from step 0: 0, then every power of ten from
    :func:`symlog_threshold` up to the first one at or above the largest compute (no tick
    inside the linear range, where its label would sit on top of "0")."""
    lt = symlog_threshold(compute)
    top = float(np.max(np.asarray(compute, dtype=float)))
    k0, k1 = int(round(np.log10(lt))), int(np.ceil(np.log10(top)))
    return [0.0] + [float(10**k) for k in range(k0, max(k0, k1) + 1)]


def _symlog_compute_axis(ax: Any, compute: Any) -> None:
    ax.set_xscale("symlog", linthresh=symlog_threshold(compute), linscale=1.0)
    ax.set_xticks(symlog_ticks(compute))
    ax.xaxis.set_minor_locator(NullLocator())


def training_curves(
    curves: pd.DataFrame, outcomes: pd.DataFrame, sizes: Sequence[str], *, base: str
) -> Figure:
    """Every baseline run (thin), the seed-mean curve per size (thick) and the plateau
    rule's onset per run (triangles; ``outcomes`` from :func:`.stopping.run_outcomes`)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, size in enumerate(sizes):
        g = curves[(curves["model_size"] == size) & (curves["variant"] == base)]
        for sd, run in g.groupby("seed"):
            ax.plot(run["compute"], run["pass_rate"], color=f"C{i}", alpha=0.3, lw=0.8)
            onset = outcomes.loc[(outcomes["model_size"] == size) & (outcomes["seed"] == sd)]
            if len(onset) and np.isfinite(onset["plateau_step"].iloc[0]):
                at = run[run["step"] == onset["plateau_step"].iloc[0]]
                ax.plot(at["compute"], at["pass_rate"], "v", color=f"C{i}", ms=5)
        mean = _mean_curve(curves, size, base)
        label = f"{size} (N={g['n_params'].iloc[0]:,.0f})"
        ax.plot(mean["compute"], mean["pass_rate"], color=f"C{i}", lw=2, label=label)
    _symlog_compute_axis(ax, curves["compute"])
    ax.set(
        xlabel="RL compute (FLOPs)",
        ylabel="held-out pass rate",
        title=f"GRPO training curves ({base}; thin: seeds; triangles: the plateau rule's onset)",
    )
    ax.legend()
    return fig


def lr_stage(lr_table: pd.DataFrame, grid: Sequence[float]) -> Figure:
    """End-of-stage pass rate against the learning-rate multiplier, one line per size
    (``lr_table``: one row per size, one column per multiplier of ``grid``)."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for i, size in enumerate(lr_table.index):
        scores = lr_table.loc[size, list(grid)].to_numpy(dtype=float)
        ax.plot(list(grid), scores, "o-", color=f"C{i}", label=size)
    ax.set(
        xscale="log",
        xlabel="multiple of the width rule's learning rate",
        ylabel="end-of-stage pass rate",
        title="GRPO learning-rate stage",
    )
    ax.legend()
    return fig


def sigmoid_fits(
    curves: pd.DataFrame, fits: Mapping[Any, Any], sizes: Sequence[str], *, base: str
) -> Figure:
    """The seed-mean curves with each size's ScaleRL sigmoid and its band, extended 4x
    (``fits[(base, size)]`` from :func:`.analysis.fit_scalerl`); a size without a fit
    (too few stable runs, :mod:`.scope`) is left out and named in the title."""
    fig, ax = plt.subplots(figsize=(7, 4))
    missing = [s for s in sizes if (base, s) not in fits]
    for i, size in enumerate(sizes):
        if size in missing:
            continue
        mean = _mean_curve(curves, size, base)
        ax.scatter(mean["compute"], mean["pass_rate"], color=f"C{i}", s=12)
        pos = mean["compute"][mean["compute"] > 0]
        c = np.geomspace(pos.min(), mean["compute"].max() * 4, 200)
        res = fits[(base, size)]
        band = res.predict_interval(c)
        label = f"{size}: A={res.params['A']:.2f}, B={res.params['B']:.2f}"
        ax.plot(c, band.point, color=f"C{i}", label=label)
        ax.fill_between(c, band.ci[0], band.ci[1], color=f"C{i}", alpha=0.2)
    ax.set(
        xscale="log",
        xlabel="RL compute (FLOPs)",
        ylabel="held-out pass rate",
        title="ScaleRL sigmoid fits (band: CI over seeds), extended 4x"
        + (f"\nnot fitted (too few stable runs): {', '.join(missing)}" if missing else ""),
    )
    ax.legend()
    return fig


def k_of_n(
    curves: pd.DataFrame,
    kn_fit: Mapping[str, Any],
    sizes: Sequence[str],
    *,
    base: str,
    k_table: pd.DataFrame | None = None,
) -> Figure:
    """Left: log(1 - R) against log compute per size; right: the per-size slopes with
    their intervals and the joint k(N) law (``kn_fit`` from :func:`.kn.fit_kn`; with
    ``k_table`` from :func:`.tanlaw.k_by_size`, its k and Student-t intervals)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for i, size in enumerate(sizes):
        mean = _mean_curve(curves[curves["compute"] > 0], size, base)
        axes[0].plot(mean["compute"], 1 - mean["pass_rate"], "o-", ms=3, color=f"C{i}", label=size)
    axes[0].set(
        xscale="log",
        yscale="log",
        xlabel="RL compute (FLOPs)",
        ylabel="1 - pass rate",
        title="Tan et al.: log L vs log C",
    )
    axes[0].legend()
    if k_table is None:
        k_pts = np.array([k for k, _ in kn_fit["k_slope"]])
        k_err = np.abs(np.array([ci for _, ci in kn_fit["k_slope"]]).T - k_pts)
        n = kn_fit["n_params"]
    else:
        k_pts = k_table["k"].to_numpy(float)
        k_err = np.abs(k_table[["k_lo", "k_hi"]].to_numpy(float).T - k_pts)
        n = list(k_table["n_params"])
    axes[1].errorbar(n, k_pts, yerr=k_err, fmt="o", label="per-size slope")
    nn = np.geomspace(min(n) / 2, max(n) * 2, 100)
    axes[1].plot(nn, kn_fit["Kmax"][0] * nn / (nn + kn_fit["N0"][0]), label="k(N) law")
    axes[1].set(
        xscale="log",
        xlabel="non-embedding parameters N",
        ylabel="k",
        title="k(N) = Kmax N / (N + N0)",
    )
    axes[1].legend()
    return fig


def run_phases(per_run: pd.DataFrame) -> Figure:
    """Each run's t10 (blue: a slow start in its data, red: none) and t90 (bar) per size,
    clipped to [-0.1, 1.1] (``per_run`` from :func:`.phases.run_phases`)."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for j, (_s, g) in enumerate(per_run.groupby("model_size", sort=False)):
        x = j + np.linspace(-0.15, 0.15, len(g))
        colour = np.where(g["slow_start"], "C0", "C3")
        ax.scatter(x, g["t10"].clip(-0.1, 1.1), c=colour, zorder=3)
        ax.scatter(x, g["t90"].clip(-0.1, 1.1), marker="_", s=200, c="k", zorder=2)
    ax.axhspan(-0.1, 0.0, color="0.9")
    ax.axhspan(1.0, 1.1, color="0.9")
    ax.set(
        xticks=range(per_run["model_size"].nunique()),
        xticklabels=list(dict.fromkeys(per_run["model_size"])),
        xlabel="model size",
        ylabel="fraction of training",
        title="each run's t10 (blue: slow start, red: none) and t90 (bar)",
    )
    return fig


def variant_curves(curves: pd.DataFrame, sizes: Sequence[str], variants: Sequence[str]) -> Figure:
    """The seed-mean curve of every variant, one panel per size."""
    fig, axes = plt.subplots(1, len(sizes), figsize=(4 * len(sizes), 3.5), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, size in zip(axes, sizes, strict=True):
        for j, var in enumerate(variants):
            mean = _mean_curve(curves, size, var)
            if not mean.empty:
                ax.plot(mean["compute"], mean["pass_rate"], color=f"C{j}", label=var)
        ax.set(title=size, xlabel="RL compute (FLOPs)")
    axes[0].set_ylabel("held-out pass rate")
    axes[0].legend()
    return fig


def half_fit_errors(runs: pd.DataFrame, *, min_multiple: float = 4.0, tol: float = 0.02) -> Figure:
    """Each run's half-fit error of A against the multiple of its C_mid that its half
    window reaches (``runs`` from :func:`.halfruns.per_run_half_fits`; stable runs that
    took off, C_mid inside their window): filled where the half fit's A is off its bound,
    open where it sits on 1; the band is ScaleRL's noise floor, the dashed line the
    multiple from which the claim is decided."""
    r = runs[
        runs["A_error"].notna()
        & ~runs["unstable"].astype(bool)
        & runs["took_off"].astype(bool)
        & runs["C_mid_inside"].astype(bool)
    ]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for i, (size, g) in enumerate(r.groupby("model_size", sort=False)):
        on = g["A_half_on_bound"].astype(bool)
        err = g["A_error"].abs().clip(lower=1e-4)
        ax.scatter(g.loc[~on, "multiple"], err[~on], color=f"C{i}", s=18, label=size)
        ax.scatter(g.loc[on, "multiple"], err[on], facecolors="none", edgecolors=f"C{i}", s=18)
    ax.axhspan(1e-4, tol, color="0.9", zorder=0)
    ax.axvline(min_multiple, color="k", ls="--", lw=0.8)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="half window's end / C_mid of the full fit",
        ylabel="|A_half - A_full|",
        title="half-compute fits run by run (open: half fit's A on its bound 1)",
    )
    ax.legend(title="size")
    return fig
