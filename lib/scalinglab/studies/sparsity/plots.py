"""The sparsity study's figures, one function per figure of ``notebooks/sparsity_laws.py``.

Each draws on a new matplotlib figure and returns it; the notebook shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from scalinglab.stats.calibration import t_interval
from scalinglab.studies.sparsity import analysis as sa
from scalinglab.studies.sparsity import limits as slim
from scalinglab.studies.sparsity import seed_means


def curves(df: pd.DataFrame, *, ppl_budget: float) -> Any:
    """Seed-mean activation ratio against tokens per model, one panel per activation."""
    acts = list(df["activation"].unique())
    fig, axes = plt.subplots(1, len(acts), figsize=(6 * len(acts), 4), squeeze=False)
    for ax, act in zip(axes[0], acts, strict=True):
        for model, g in df[df["activation"] == act].groupby("model", sort=False):
            m = g.groupby("tokens").agg(r=("activation_ratio", "mean"), u=("usable", "all"))
            (line,) = ax.plot(m.index, m["r"], "-", label=model, alpha=0.8)
            ax.plot(m.index[~m["u"]], m["r"][~m["u"]], "x", color=line.get_color())
        ax.set(
            xscale="log",
            xlabel="training tokens D",
            ylabel=f"PPL-{ppl_budget:g}% activation ratio",
            title=f"{act} (mean over seeds; x = FFN not yet useful)",
        )
        ax.legend(fontsize=8, ncol=2)
    return fig


def law_fits(df: pd.DataFrame, fits: Mapping[tuple, Any]) -> Any:
    """Each model's usable points and its law fit, ReLU law left, SiLU law right."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for (act, model, law), res in fits.items():
        ax = axes[0 if law == "relu_sparsity" else 1]
        g = df[(df["activation"] == act) & (df["model"] == model) & df["usable"]]
        pts = ax.plot(g["tokens"], g["activation_ratio"], ".", alpha=0.5)[0]
        grid = np.geomspace(g["tokens"].min(), g["tokens"].max(), 50)
        ax.plot(
            grid,
            res.predict(grid),
            "-",
            color=pts.get_color(),
            label=f"{act}/{model}: A0={res.params['A0']:.3f}",
        )
        ax.set(xscale="log", xlabel="training tokens D", ylabel="activation ratio", title=law)
        ax.legend(fontsize=8)
    return fig


def width_depth(summary: pd.DataFrame, wd: pd.DataFrame) -> Any:
    """Final ratio (seed means, t intervals) and loss against width/depth."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for act, g in summary.groupby("activation", sort=False):
        axes[0].errorbar(
            g["width_depth_ratio"],
            g["mean"],
            [g["mean"] - g["lo"], g["hi"] - g["mean"]],
            fmt="o-",
            capsize=3,
            label=act,
        )
        lm = wd[wd["activation"] == act].groupby("width_depth_ratio")["loss"].mean()
        axes[1].plot(lm.index, lm.values, "o-", label=act)
    axes[0].set(xscale="log", xlabel="width / depth", ylabel="final activation ratio")
    axes[1].set(xscale="log", xlabel="width / depth", ylabel="final held-out loss (nats/byte)")
    for ax in axes:
        ax.legend()
    return fig


def kernel_live(speed: pd.DataFrame, batches: Sequence[int]) -> Any:
    """Live random-mask speedups against the activation ratio, beside the cost model."""
    fig, axes = plt.subplots(1, len(batches), figsize=(6 * len(batches), 4), squeeze=False)
    for ax, b in zip(axes[0], batches, strict=True):
        sb = speed[speed["batch"] == b]
        ideal = sb.drop_duplicates("ratio")
        ax.plot(ideal["ratio"], ideal["ideal"], "k--", label="ideal (cost model)")
        for impl, g in sb.groupby("impl", sort=False):
            ax.errorbar(
                g["ratio"],
                g["speedup"],
                [g["speedup"] - g["min"], g["max"] - g["speedup"]],
                fmt="o-",
                capsize=3,
                label=impl,
            )
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="activation ratio a",
            ylabel="speedup over dense",
            title=f"batch {b}",
        )
        ax.invert_xaxis()
        ax.legend(fontsize=8)
    return fig


def kernel_offline(show: pd.DataFrame, n_runs: int) -> Any:
    """Committed timings: median and range over runs per width, and the bytes proxy."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax, b in zip(axes, sorted(show["batch"].unique()), strict=False):
        for (impl, f), g in show[show["batch"] == b].groupby(["impl", "d_ff"]):
            ax.errorbar(
                g["ratio"],
                g["speedup"],
                [g["speedup"] - g["speedup_min"], g["speedup_max"] - g["speedup"]],
                fmt="o-" if impl == "sparse_numba" else "s:",
                capsize=3,
                label=f"{impl}, F={f}",
            )
        proxy = show[show["batch"] == b].drop_duplicates("ratio")
        ax.plot(proxy["ratio"], proxy["bytes_speedup"], "k--", label="bytes read, dense/sparse")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="activation ratio a (per token)",
            ylabel="speedup over dense",
            title=f"batch {b}: median and range over {n_runs} timing runs",
        )
        ax.legend(fontsize=7, ncol=2)
    return fig


def kernel_masks(mask_speed: pd.DataFrame, batches: Sequence[int]) -> Any:
    """Whole-stack speedups on real and matched random masks, with the cost model's."""
    kinds = list(dict.fromkeys(mask_speed["kind"]))
    fig, axes = plt.subplots(1, len(kinds), figsize=(6 * len(kinds), 4), squeeze=False)
    for ax, kind in zip(axes[0], kinds, strict=True):
        sk = mask_speed[(mask_speed["kind"] == kind) & (mask_speed["impl"] == "sparse_numba")]
        for k, b in enumerate(batches):
            sb = sk[sk["batch"] == b].set_index("source")
            for dx, source, color in ((-0.12, "real", "C0"), (0.12, "random", "C1")):
                r = sb.loc[source]
                ax.errorbar(
                    k + dx,
                    r["speedup"],
                    [[r["speedup"] - r["min"]], [r["max"] - r["speedup"]]],
                    fmt="o",
                    color=color,
                    capsize=4,
                    label=f"{source} masks (numba)" if k == 0 else None,
                )
                ax.hlines(
                    r["predicted_union"],
                    k + dx - 0.1,
                    k + dx + 0.1,
                    color=color,
                    linestyles=":",
                    label=f"cost model, {source} union read" if k == 0 else None,
                )
            ax.hlines(
                sb["predicted"].iloc[0],
                k - 0.3,
                k + 0.3,
                color="k",
                linestyles="--",
                label="cost model, 1 - (1 - a)^b" if k == 0 else None,
            )
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set(
            xticks=range(len(batches)),
            xticklabels=[f"batch {b}" for b in batches],
            yscale="log",
            ylabel="speedup over dense (whole FFN stack)",
            title=f"{kind} masks, mean per-token ratio {sk['ratio'].iloc[0]:.3f}",
        )
        ax.legend(fontsize=7)
    return fig


def horizon(hdf: pd.DataFrame, *, main_end: float, model: str, ppl_budget: float) -> Any:
    """The long-horizon probe, one line per seed."""
    t_end = float(hdf["tokens"].max())
    fig, ax = plt.subplots(figsize=(7, 4))
    for act, g in hdf.groupby("activation", sort=False):
        for s_, r in g.groupby("seed"):
            ax.plot(
                r["tokens"],
                r["activation_ratio"],
                "-",
                alpha=0.5,
                color="C0" if act == "relu" else "C1",
                label=f"{act}" if s_ == g["seed"].min() else None,
            )
    ax.axvline(main_end, color="gray", ls=":", lw=1, label="end of main sweep")
    ax.set(
        xscale="log",
        xlabel="training tokens D",
        ylabel=f"PPL-{ppl_budget:g}% activation ratio",
        title=f"model {model}: {t_end / float(hdf['n_params'].iloc[0]):.0f} tokens per "
        "parameter at the end (one line per seed)",
    )
    ax.legend(fontsize=8)
    return fig


def matched_sizes(msz: pd.DataFrame, *, ppl_budget: float) -> Any:
    """Sizes at matched tokens per parameter (band: the seeds' range)."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax, (act, g) in zip(axes, msz.groupby("activation", sort=False), strict=False):
        for model, gm in g.groupby("model", sort=False):
            m_ = gm.groupby("tokens_per_param")["activation_ratio"].agg(["mean", "min", "max"])
            (line,) = ax.plot(
                m_.index, m_["mean"], "-", label=f"{model} ({gm['n_params'].iloc[0]:,})"
            )
            ax.fill_between(m_.index, m_["min"], m_["max"], color=line.get_color(), alpha=0.2)
        ax.set(
            xscale="log",
            xlabel="tokens per non-embedding parameter",
            ylabel=f"PPL-{ppl_budget:g}% activation ratio",
            title=f"{act}: sizes at matched data per parameter (band: seed range)",
        )
        ax.legend(fontsize=8)
    return fig


def width_depth_families(families: Mapping[str, pd.DataFrame], *, level: float) -> Any:
    """The final ratio against width/depth at two parameter counts."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax, act in zip(axes, ("relu", "silu"), strict=True):
        for label, frame in families.items():
            fin = sa.final_values(frame)
            fin = fin[fin["in_width_depth"] & (fin["activation"] == act)]
            if fin.empty:
                continue
            gm = (
                seed_means.group_means(fin, "activation_ratio", by=["model"], level=level)
                .merge(fin.groupby("model")["width_depth_ratio"].first(), on="model")
                .sort_values("width_depth_ratio")
            )
            ax.errorbar(
                gm["width_depth_ratio"],
                gm["mean"],
                [gm["mean"] - gm["lo"], gm["hi"] - gm["mean"]],
                fmt="o-",
                capsize=3,
                label=label,
            )
        ax.set(
            xscale="log",
            xlabel="width / depth",
            ylabel="final activation ratio",
            title=f"{act}: two parameter counts, about 20 tokens per parameter",
        )
        ax.legend(fontsize=8)
    return fig


def width_depth_limits(wdf: pd.DataFrame, limits: Mapping[str, Any]) -> Any:
    """The long width-depth family: each shape's ReLU ratio over tokens per parameter
    (seed mean, the seeds' range shaded, the start of its own last decade dotted), and
    each shape's limit against width/depth (``limits``: ``{model: Estimate}``); a shape
    whose limit is not identified is drawn at its last-decade mean as an open marker,
    labelled so. One colour per shape in both panels."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.4))
    ratio = wdf.groupby("model")["width_depth_ratio"].first().sort_values()
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # a shape's colour follows its width/depth, so one shape has one colour in every family
    colours = {m: cycle[int(round(np.log2(r))) % len(cycle)] for m, r in ratio.items()}
    for model, r in ratio.items():
        g = wdf[(wdf["model"] == model) & wdf["usable"]]
        by = g.groupby("tokens_per_param")["activation_ratio"]
        x = np.asarray(by.mean().index, float)
        mean, n = by.mean().to_numpy(), by.count().to_numpy()
        half = stats.t.ppf(0.975, np.maximum(n - 1, 1)) * by.sem().fillna(0.0).to_numpy()
        c = colours[model]
        left.plot(x, mean, color=c, label=f"{model} (width/depth {r:g}, {n.max()} seeds)")
        left.fill_between(x, mean - half, mean + half, color=c, alpha=0.2)
        left.axvline(x.max() / 10, color=c, ls=":", lw=1)
    left.set(
        xscale="log",
        xlabel="tokens per non-embedding parameter (checkpoints past the FFN-gain filter)",
        ylabel="PPL-1% activation ratio (ReLU)",
        title="seed mean, its 95% t band shaded; dotted: each last decade's start",
    )
    left.legend(fontsize=8)
    shown = {"identified": False, "not": False}
    for model, r in ratio.items():
        est, c = limits.get(model), colours[model]
        if est is not None and est.identified and est.ci is not None:
            lo, hi = est.ci
            right.errorbar(
                [r], [est.point], [[est.point - lo], [hi - est.point]], fmt="o", color=c, capsize=3
            )
            right.annotate(model, (r, est.point), xytext=(5, 5), textcoords="offset points")
            shown["identified"] = True
            continue
        lv = slim.plateau_levels(wdf[wdf["model"] == model]).to_numpy()
        y = float(lv.mean())
        half = float(y - t_interval(lv)[0]) if len(lv) > 1 else 0.0
        right.errorbar([r], [y], [[half], [half]], fmt="o", mfc="none", color=c, capsize=3)
        right.annotate(
            f"{model}: last-decade mean,\nlimit not identified",
            (r, y),
            xytext=(6, 4),
            textcoords="offset points",
            fontsize=8,
        )
        shown["not"] = True
    what = {
        (True, False): "limit A0 (limit rule), 95% t over seeds",
        (True, True): "limit A0, or last-decade mean where\nnot identified (95% t over seeds)",
        (False, True): "last-decade mean ratio, 95% t over seeds\n(no limit identified)",
    }.get((shown["identified"], shown["not"]), "limit A0")
    right.margins(y=0.35)
    right.set(
        xscale="log",
        xlabel="width / depth",
        ylabel=what,
        title=(
            "limits at one parameter count and one horizon"
            if shown["identified"]
            else "no limit identified: each shape's last-decade mean"
        ),
        xlim=(ratio.min() / 1.5, ratio.max() * 1.8),
    )
    right.set_xticks(list(ratio.to_numpy(float)), [f"{v:g}" for v in ratio])
    right.minorticks_off()
    fig.suptitle(
        "Long width-depth family to "
        f"{float(f'{wdf.tokens_per_param.max():.2g}'):g} tokens per parameter "
        "(ReLU, one parameter count, same tokens per parameter)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def both_ratios(both: pd.DataFrame, *, design: str, ppl_budget: float) -> Any:
    """The PPL-p% ratio (solid) and the nonzero ratio (dashed, ReLU) per model, its seeds
    in the legend; for the long design a dotted line where each size's own last decade
    (the window of its trend and plateau) starts."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
    for ax, (act, g) in zip(axes, both.groupby("activation", sort=False), strict=False):
        for k, (model, gm) in enumerate(g.groupby("model", sort=False)):
            name = f"{model} ({int(gm['n_seeds'].max())} seeds)"
            ax.plot(
                gm["tokens_per_param"],
                gm["ppl1_ratio"],
                "-o",
                ms=3,
                color=f"C{k}",
                label=f"{name}: PPL-{ppl_budget:g}%",
            )
            if act == "relu":
                ax.plot(
                    gm["tokens_per_param"],
                    gm["nonzero_ratio"],
                    "--",
                    color=f"C{k}",
                    label=f"{name}: nonzero",
                )
            if design == "long":  # where each size's own last decade starts
                ax.axvline(float(gm["tokens_per_param"].max()) / 10, color=f"C{k}", lw=0.6, ls=":")
        ax.set(
            xscale="log",
            xlabel="tokens per parameter",
            ylabel="ratio (seed mean)",
            title=f"{design} design, {act}",
        )
        ax.legend(fontsize=7, ncol=2)
    return fig


def paper_curves(curves: pd.DataFrame, fits: Mapping[tuple, Any], authors: pd.DataFrame) -> Any:
    """The released curves, our refits (solid) and the authors' (dotted)."""
    from scalinglab.studies.sparsity import published as pub

    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax, (act, g) in zip(axes, curves.groupby("activation", sort=False), strict=True):
        for model, c in g.groupby("model", sort=False):
            pts = ax.plot(c["D"], c["activation_ratio"], ".", ms=3)[0]
            grid = np.geomspace(c["D"].min(), c["D"].max(), 100)
            ax.plot(
                grid, fits[(act, model)].predict(grid), "-", color=pts.get_color(), label=f"{model}"
            )
            ax.plot(
                grid,
                pub.author_predict(authors.loc[f"{model}_{act}"], act, grid),
                ":",
                color=pts.get_color(),
            )
        ax.set(
            xscale="log",
            xlabel="training tokens D (billions)",
            ylabel="activation ratio",
            title=f"{act}: points, our fit (solid), the authors' (dotted)",
        )
        ax.legend(fontsize=8, ncol=2)
    return fig
