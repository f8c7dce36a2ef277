"""The sparsity study's results as named findings, one function per step of the report.

Each function takes what a step of ``notebooks/sparsity_laws.py`` computed from (the
curves, the fits, the committed timings) and returns a :class:`Step`: the table the
report shows, the :class:`Named` findings (each an
:class:`~scalinglab.estimate.Estimate` with its level and method, a name, a description
and a headline flag) and what later steps need. The notebook records a step's findings
with one call (:func:`record_all`), so no ``level=..., method=...`` is typed there and
the method a report prints is the one the library used.

Intervals over seeds are Student t (:mod:`.seed_means`, which covers at 3 seeds); the
law fits keep the fitting engine's group bootstrap with its coverage stated
(:data:`.analysis.LAW_CI`); the committed kernel timings give the median and range over
separate timing runs (a distribution-free interval for the median, level
``1 - 2^(1 - n)``); the paper's curves, one run each, the block bootstraps of
:mod:`.published`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.fitting import FitResult
from scalinglab.record import Finding, record
from scalinglab.studies.sparsity import analysis as sa
from scalinglab.studies.sparsity import limits as slim
from scalinglab.studies.sparsity import matched as sm
from scalinglab.studies.sparsity import published as pub
from scalinglab.studies.sparsity import seed_means

PAPER_SIGN = {"relu": "negative", "silu": "positive"}
PAPER_TREND = {"relu": "decreasing", "silu": "increasing"}


@dataclass(frozen=True)
class Named:
    """One finding before it is recorded: name, estimate, and how it is shown."""

    name: str
    estimate: Estimate
    description: str
    unit: str | None = None
    headline: bool = False


@dataclass
class Step:
    """What one step of the report computed.

    Attributes
    ----------
    findings
        To record, in order (:func:`record_all`).
    table
        The step's table for the report (None when it has none).
    extra
        What later steps or figures need (fits, draws, names), by key.
    messages
        Lines the report prints (fits that failed, designs not run).
    """

    findings: list[Named] = field(default_factory=list)
    table: pd.DataFrame | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)


def record_all(step: Step | Iterable[Named]) -> list[Finding]:
    """Record every finding of ``step`` with :func:`scalinglab.record.record`, in order,
    and print its messages."""
    items = step.findings if isinstance(step, Step) else list(step)
    if isinstance(step, Step):
        for m in step.messages:
            print(m)
    # a headline needs an interval: one that has none here (one seed, no spread) is not one
    return [
        record(
            n.name,
            n.estimate,
            description=n.description,
            unit=n.unit,
            headline=n.headline and n.estimate.ci is not None,
        )
        for n in items
    ]


# ----------------------------------------------------------------------------- our runs
def trends(df: pd.DataFrame, *, level: float) -> Step:
    """Section 2: the sign of the trend with training tokens, per run then over models.

    ``extra["by_model"]``: ``{(activation, model): Estimate}`` (the trend a law's limit is
    checked against).
    """
    out = Step()
    slopes = sa.run_slopes(df)
    by_model: dict[tuple[str, str], Estimate] = {}
    for act, g in slopes.groupby("activation", sort=False):
        out.findings.append(
            Named(
                f"trend/{act}/slope_per_decade",
                seed_means.stratified_mean(g, "slope", level=level),
                f"{act}: sign of the activation-ratio trend with training tokens "
                f"(paper: {PAPER_SIGN.get(str(act), 'none')})",
                unit="activation ratio per 10x tokens",
                headline=True,
            )
        )
        for model, gm in g.groupby("model", sort=False):
            by_model[(str(act), str(model))] = seed_means.stratified_mean(gm, "slope", level=level)
    out.table = seed_means.group_means(slopes, "slope", by=["activation", "model"], level=level)
    out.extra.update(by_model=by_model, slopes=slopes)
    return out


def laws(
    df: pd.DataFrame,
    *,
    trends_by_model: Mapping[tuple[str, str], Estimate],
    user: bool,
    ours: bool,
    reps: int,
    level: float,
    seed: int,
) -> Step:
    """Section 2: the laws per model, their limits with identification.

    Parameters
    ----------
    user
        The user's curves without an ``activation`` column: both laws on every group,
        named ``law/<law>/A0``.
    ours
        This study's sweep (only model ``m``'s identified limits are headlines).
    """
    out = Step()
    user_laws = list(sa.LAWS.values()) if user else None
    table, fits = sa.fit_laws(
        df, by=["activation", "model"], laws=user_laws, reps=reps, level=level, seed=seed
    )
    for row in table.to_dict("records"):
        if isinstance(row.get("error"), str):
            out.messages.append(
                f"{row['activation']}/{row['model']}/{row['law']}: no fit ({row['error']})"
            )
            continue
        res = fits[(row["activation"], row["model"], row["law"])]
        est = sa.law_limit(res, trend=trends_by_model.get((row["activation"], row["model"])))
        out.findings.append(
            Named(
                f"law/{row['law']}/A0" if user else f"law/{row['activation']}/{row['model']}/A0",
                est,
                f"{row['law']} limit activation ratio, {row['n_runs']} runs"
                + (f" ({row['warnings']})" if row["warnings"] else ""),
                headline=(not ours or row["model"] == "m") and est.identified,
            )
        )
    out.table = sa.laws_display(table)
    out.extra["fits"] = fits
    return out


def width_depth(final: pd.DataFrame, *, ppl_budget: float, level: float) -> Step:
    """Section 3: the last-checkpoint ratio (and loss) against width/depth at about one
    parameter count; ``table``: seed means per shape."""
    out = Step()
    wd = final[final["in_width_depth"]]
    summary = seed_means.group_means(
        wd, "activation_ratio", by=["activation", "model"], level=level
    )
    out.table = summary.merge(
        wd.groupby("model")[["width_depth_ratio", "n_params"]].first(), on="model"
    ).sort_values(["activation", "width_depth_ratio"])
    for act, g in wd.groupby("activation", sort=False):
        out.findings += [
            Named(
                f"width_depth/{act}/slope_per_decade",
                seed_means.slope_vs_log(g, "activation_ratio", "width_depth_ratio", level=level),
                f"{act}: final PPL-{ppl_budget:g}% activation ratio vs width/depth at fixed "
                "parameters (paper: positive below a bottleneck)",
                unit="activation ratio per 10x width/depth",
                headline=act == "relu",
            ),
            Named(
                f"width_depth/{act}/loss_slope_per_decade",
                seed_means.slope_vs_log(g, "loss", "width_depth_ratio", level=level),
                f"{act}: final held-out loss vs width/depth (the cost of depth)",
                unit="nats/token per 10x width/depth",
            ),
        ]
    return out


def size(final: pd.DataFrame, *, level: float) -> Step:
    """Section 4: the last-checkpoint ratio against parameters at width/depth 16."""
    out = Step()
    sz = final[final["in_size_sweep"]]
    out.table = seed_means.group_means(
        sz, "activation_ratio", by=["activation", "model"], level=level
    ).merge(sz.groupby("model")["n_params"].first(), on="model")
    for act, g in sz.groupby("activation", sort=False):
        out.findings.append(
            Named(
                f"size/{act}/slope_per_decade",
                seed_means.slope_vs_log(g, "activation_ratio", "n_params", level=level),
                f"{act}: final activation ratio vs non-embedding parameters "
                "(paper: weak dependence)",
                unit="activation ratio per 10x parameters",
                headline=act == "relu",
            )
        )
    return out


def relu_vs_silu(final: pd.DataFrame, *, level: float) -> Step:
    """Section 5: final loss and ratio, ReLU minus SiLU, paired by model and seed."""
    loss, pairs = sa.paired_difference(final, "loss", level=level)
    ratio, _ = sa.paired_difference(final, "activation_ratio", level=level)
    return Step(
        findings=[
            Named(
                "loss/relu_minus_silu",
                loss,
                "final held-out loss, ReLU minus SiLU (paper: comparable)",
                unit="nats/token",
                headline=True,
            ),
            Named(
                "ratio/relu_minus_silu",
                ratio,
                "final activation ratio, ReLU minus SiLU (paper: ReLU far sparser, 6-8% vs 38-41%)",
            ),
        ],
        table=pairs.groupby("model")[["relu", "silu", "diff"]].mean(),
    )


def baselines(ds: xr.Dataset, *, ppl_budget: float, level: float) -> Step:
    """Section 6: the ratio each sparsity method reaches under the same budget."""
    base = (
        ds["final_ratio"]
        .where(ds["status"] == "ok")
        .to_dataframe()
        .reset_index()
        .dropna(subset=["final_ratio"])
    )
    methods = seed_means.group_means(
        base, "final_ratio", by=["activation", "sparsity_method", "model"], level=level
    )
    out = Step(
        table=methods.pivot_table(
            index=["activation", "model"], columns="sparsity_method", values="mean"
        )
    )
    for (act, method), g in base.groupby(["activation", "sparsity_method"], sort=False):
        out.findings.append(
            Named(
                f"method/{act}/{method}",
                seed_means.stratified_mean(g, "final_ratio", level=level),
                f"{act}: final PPL-{ppl_budget:g}% activation ratio with {method}, mean over "
                "models",
            )
        )
    return out


def coverage(slopes: pd.DataFrame, *, level: float, seed: int, sims: int = 2000) -> Step:
    """How often the seed-mean intervals cover at the study's numbers of seeds (3 and 5):
    Student t against the percentile bootstrap, on the per-run ReLU trend slopes of the
    main sweep resampled within models (:func:`.seed_means.coverage_at_seeds`)."""
    relu = slopes[slopes["activation"] == "relu"]
    tab = seed_means.coverage_at_seeds(relu, "slope", level=level, seed=seed, sims=sims)
    out = Step(table=tab)
    for r in tab.to_dict("records"):
        key = "student_t" if r["method"] == "Student t" else "percentile"
        out.findings.append(
            Named(
                f"coverage/{key}/n{r['n']}",
                Estimate(
                    float(r["coverage"]),
                    method=f"{r['sims']} simulated data sets of {r['n']} seeds drawn from the "
                    f"main sweep's per-run ReLU trends (centred within models); Monte Carlo "
                    f"standard error {r['se']:.3f}",
                ),
                f"simulated coverage of a nominal {100 * level:.0f}% {r['method']} interval of "
                f"a mean over {r['n']} seeds",
                unit="share",
            )
        )
    return out


# ----------------------------------------------------------------------------- kernel
def kernel_offline(runs: Sequence[xr.Dataset] | None) -> Step:
    """Section 7: the committed kernel timing runs, median and range over runs.

    ``extra["deciding"]``: the names of the numba speedups at 6.5% active (the claim's
    findings), empty with fewer than 2 runs.
    """
    from scalinglab.studies.sparsity import time_kernel as tk

    out = Step(extra={"deciding": []})
    if not runs:
        out.messages.append(
            "No committed kernel timings: python -m scalinglab.studies.sparsity.time_kernel"
        )
        return out
    ktab = tk.between_run_speedups(runs)
    show = ktab[ktab["impl"].isin(["sparse_torch", "sparse_numba"])]
    out.table = show
    out.extra["runs"] = tk.runs_summary(runs)
    for r in show[(show["batch"] == 1) & (show["ratio"] == 0.065)].to_dict("records"):
        name = f"kernel/offline/{r['impl']}/F{r['d_ff']}/speedup_at_0.065"
        n = int(r["n_runs"])
        est = Estimate(
            float(r["speedup"]),
            float(r["speedup_min"]) if n >= 2 else None,
            float(r["speedup_max"]) if n >= 2 else None,
            # [min, max] of n runs covers their median with probability 1 - 2^(1 - n)
            level=1 - 2.0 ** (1 - n) if n >= 2 else None,
            method=f"median and range over {n} separate timing runs (committed "
            "data/sparsity_laws/kernel-timings-*.nc): the range is a distribution-free "
            "interval for the median",
        )
        out.findings.append(
            Named(
                name,
                est,
                f"batch 1, d_model 1024, F = {r['d_ff']}, 6.5% active (the paper's 93.5% "
                f"sparsity); bytes proxy {r['bytes_speedup']:.1f}x; load up to "
                f"{r['max_load']:.1f}",
                unit="x",
            )
        )
        if r["impl"] == "sparse_numba" and n >= 2:
            out.extra["deciding"].append(name)
    return out


def _over_processes(row: Mapping[str, Any], col: str, *, processes: int, what: str) -> Estimate:
    """A live timing's median over processes with their range: a distribution-free
    interval for the median, covering it with probability ``1 - 2^(1 - n)`` for ``n``
    processes (a percentile bootstrap over 2-4 processes covers far less than it says)."""
    n = int(processes)
    return Estimate(
        float(row[col]),
        float(row["min"]),
        float(row["max"]),
        level=1 - 2.0 ** (1 - n),
        method=f"median and range over {n} separate processes ({what}): the range is a "
        "distribution-free interval for the median",
    )


def kernel_live(speed: pd.DataFrame, *, final: pd.DataFrame | None, processes: int) -> Step:
    """Section 7 with ``retime=True``: the live random-mask timings at batch 1."""
    from scalinglab.studies.sparsity import kernel_speed as kspeed

    out = Step()
    for impl in ("sparse_torch", "sparse_numba"):
        sb = speed[(speed["batch"] == 1) & (speed["impl"] == impl)].sort_values(
            "ratio", ascending=False
        )
        cross = kspeed.crossover(sb["ratio"].to_numpy(), sb["speedup"].to_numpy())
        if cross is not None:
            out.findings.append(
                Named(
                    f"kernel/{impl}/crossover_ratio",
                    Estimate(cross, method="interpolated between measured ratios"),
                    f"{impl}: largest activation ratio where it is no slower than dense "
                    "(batch 1, interpolated)",
                    unit="activation ratio",
                )
            )
        low = sb.iloc[-1]
        out.findings.append(
            Named(
                f"kernel/{impl}/speedup_at_{low['ratio']:g}",
                _over_processes(
                    low,
                    "speedup",
                    processes=processes,
                    what="median of each process's dense/sparse ratio of medians",
                ),
                f"batch 1, measured; ideal (cost model) {low['ideal']:.1f}x, "
                f"{100 * low['fraction_of_ideal']:.0f}% of it",
                unit="x",
                headline=impl == "sparse_numba",
            )
        )
    if final is not None:
        for act in final["activation"].unique():
            a = float(final[final["activation"] == act]["activation_ratio"].mean())
            out.findings.append(
                Named(
                    f"kernel/speedup_at_{act}_ratio",
                    Estimate(
                        kspeed.speedup_at(speed, a, impl="sparse_numba"),
                        method="interpolated in the measured speedups",
                    ),
                    f"sparse_numba speedup (batch 1, interpolated) at the mean final {act} "
                    f"activation ratio {a:.3f}",
                    unit="x",
                )
            )
    return out


def kernel_masks(
    mask_speed: pd.DataFrame,
    mask_rel: pd.DataFrame,
    structure: pd.DataFrame,
    *,
    batches: Sequence[int],
    processes: int,
) -> Step:
    """Section 7b with ``retime=True``: the kernel on a trained model's own masks."""
    out = Step()
    for r in mask_speed[mask_speed["impl"] == "sparse_numba"].to_dict("records"):
        out.findings.append(
            Named(
                f"kernel/{r['source']}_masks/{r['kind']}/batch{r['batch']}/speedup",
                _over_processes(
                    r,
                    "speedup",
                    processes=processes,
                    what="median of each process's summed dense over summed sparse median times",
                ),
                f"sparse_numba on {r['source']} {r['kind']} masks (per-token ratio "
                f"{r['ratio']:.3f}, union read {r['union_ratio']:.3f}); cost model "
                f"{r['predicted']:.1f}x from the ratio, {r['predicted_union']:.1f}x from the "
                "union",
                unit="x",
                headline=r["source"] == "real" and r["kind"] == "cett" and r["batch"] == 1,
            )
        )
    for r in mask_rel[mask_rel["impl"] == "sparse_numba"].to_dict("records"):
        out.findings.append(
            Named(
                f"kernel/real_over_random/{r['kind']}/batch{r['batch']}",
                _over_processes(
                    r,
                    "real_over_random",
                    processes=processes,
                    what="median of each process's real-mask speedup over its "
                    "matched-random speedup",
                ),
                f"sparse_numba, {r['kind']} masks, batch {r['batch']}: speedup on the trained "
                "model's masks over that on random masks of the same per-token counts",
                unit="x",
            )
        )
    b = batches[-1]
    for kind in ("cett", "nonzero"):
        sk = structure[structure["kind"] == kind]
        out.findings.append(
            Named(
                f"masks/{kind}/union_real_over_random_batch{b}",
                Estimate(
                    float((sk[f"union_real_{b}"] / sk[f"union_random_{b}"]).mean()),
                    method="mean over layers and model seeds",
                ),
                f"{kind} masks: union of a batch of {b} held-out tokens over that of matched "
                "random masks (the rows a kernel reads)",
                unit="fraction",
            )
        )
    return out


def kernel_pivot(show: pd.DataFrame) -> pd.DataFrame:
    """The committed timings as the report shows them: one row per width, batch and
    ratio (with the proxy), one column per implementation and statistic."""
    return show.pivot_table(
        index=["d_ff", "batch", "ratio", "union_ratio", "bytes_speedup"],
        columns="impl",
        values=["speedup", "speedup_min", "speedup_max"],
    )


#: The live kernel benchmark's shape per compute class (``retime=True``).
LIVE_SHAPES: dict[str, dict[str, Any]] = {
    "tiny": dict(
        d_model=256,
        d_ff=1024,
        batches=(1,),
        ratios=(1.0, 0.3, 0.1, 0.02),
        repeats=3,
        flush_bytes=8 * 2**20,
    ),
    "other": dict(
        d_model=2048,
        d_ff=8192,
        batches=(1, 8),
        ratios=(1.0, 0.7, 0.5, 0.3, 0.2, 0.1, 0.05, 0.02),
        repeats=5,
        flush_bytes=None,
    ),
}


def time_live(
    compute_class: str, *, hw: Any, processes: int, threads: int, reps: int, level: float, seed: int
) -> tuple[pd.DataFrame, xr.Dataset, dict[str, Any]]:
    """Section 7 with ``retime=True``: the random-mask kernel benchmark of
    :func:`live_shape`, in ``processes`` fresh processes (:mod:`.kernel_spread`).

    Returns
    -------
    speed, bench, shape
        The speedups over processes (:func:`.kernel_spread.speedup_over_processes`), the
        raw benchmark and the shape it ran.
    """
    from scalinglab.studies.sparsity import kernel_spread as ks

    shape = live_shape(compute_class)
    bench = ks.run_over_processes(processes=processes, threads=threads, seed=seed, **shape)
    speed = ks.speedup_over_processes(
        ks.per_process_speedups(bench, hw), reps=reps, level=level, seed=seed
    )
    return speed, bench, shape


def time_masks(
    active: xr.DataArray,
    structure: pd.DataFrame,
    *,
    d_model: int,
    hw: Any,
    batches: Sequence[int],
    tiny: bool,
    processes: int,
    threads: int,
    reps: int,
    level: float,
    seed: int,
) -> tuple[pd.DataFrame, Step]:
    """Section 7b with ``retime=True``: the numba kernel timed on the trained model's
    masks and their matched random twins, one token group per call
    (:func:`.mask_kernel.time_masks`); the speedups and their findings
    (:func:`kernel_masks`)."""
    from scalinglab.studies.sparsity import mask_kernel, mask_speedups

    bench = mask_kernel.time_masks(
        active,
        d_model=d_model,
        batches=batches,
        groups=4 if tiny else 12,
        kinds=("cett", "nonzero"),
        impls=("sparse_numba",),
        processes=processes,
        threads=threads,
        flush_bytes=live_shape("tiny" if tiny else "small")["flush_bytes"],
        seed=seed,
    )
    pp = mask_speedups.per_process_speedups(bench, hw)
    speed = mask_speedups.summarize(pp, reps=reps, level=level, seed=seed)
    rel = mask_speedups.real_over_random(pp, reps=reps, level=level, seed=seed)
    step = kernel_masks(speed, rel, structure, batches=batches, processes=processes)
    step.messages.append(
        f"load average during timing up to {speed['load'].max():.1f} on "
        f"{bench.attrs['cpu_count']} cores"
    )
    step.table = mask_table(speed)
    return speed, step


def live_shape(compute_class: str) -> dict[str, Any]:
    """:data:`LIVE_SHAPES` of ``compute_class`` (``run_over_processes`` keywords)."""
    return dict(LIVE_SHAPES.get(compute_class, LIVE_SHAPES["other"]))


def live_summary(
    speed: pd.DataFrame,
    bench: xr.Dataset,
    shape: Mapping[str, Any],
    *,
    threads: int,
    processes: int,
) -> str:
    """One line on how the live timing ran."""
    return (
        f"d_model {shape['d_model']}, d_ff {shape['d_ff']}, gated, float32, {threads} "
        f"thread(s), {processes} separate processes x {shape['repeats']} repeats; load average "
        f"during timing: max {speed['load'].max():.2f} on {bench.attrs['cpu_count']} cores"
    )


def masks_summary(masks: xr.Dataset) -> str:
    """One line on the trained mask model: its shape, training, losses and tokens."""
    a = masks.attrs
    return (
        f"model {a['model']}: d_model {a['d_model']}, {a['n_layer']} layers, d_ff {a['d_ff']}, "
        f"{a['tokens']:,} training tokens, seeds {masks['seed'].values.tolist()}; held-out "
        f"loss {float(masks['loss'].mean()):.3f} dense, "
        f"{float(masks['sparse_loss'].mean()):.3f} under the cett masks; "
        f"{masks.sizes['window'] * masks.sizes['position']} tokens recorded"
    )


def mask_table(mask_speed: pd.DataFrame) -> pd.DataFrame:
    """The whole-stack speedups on real and random masks as the report shows them."""
    cols = [
        "ratio",
        "union_ratio",
        "speedup",
        "min",
        "max",
        "predicted",
        "predicted_union",
        "fraction_of_predicted",
    ]
    return mask_speed.set_index(["kind", "batch", "impl", "source"])[cols]


# ----------------------------------------------------------------------------- long runs
def long_frame(long: Mapping[str, xr.Dataset], *, min_ffn_gain: float) -> pd.DataFrame | None:
    """The long design's runs as one curves frame (None when it is not run)."""
    if not long:
        return None
    frames = [sa.curves_frame(d, min_ffn_gain=min_ffn_gain) for d in long.values()]
    return pd.concat(frames, ignore_index=True)


def long_provenance(long: Mapping[str, xr.Dataset]) -> str:
    """Per long-design size: the device its runs used, how many are ok, where trained."""
    return "\n".join(
        f"{name}: {d.attrs['device']} runs, {int((d['status'] == 'ok').sum())} ok; "
        f"{d.attrs.get('train_machine', 'trained on this machine')}"
        for name, d in long.items()
    )


def horizon(hdf: pd.DataFrame, *, model: str, reps: int, level: float, seed: int) -> Step:
    """Section 8: the smallest model trained 16x longer; trends over the whole run and its
    last decade, the relative last-decade trend, and the laws' limits."""
    out = Step()
    t_end = float(hdf["tokens"].max())
    windows = {"whole": 0.0, "last_decade": t_end / 10}
    last: dict[str, Estimate] = {}
    for window, min_x in windows.items():
        hs = sa.run_slopes(hdf, min_x=min_x)
        for act, g in hs.groupby("activation", sort=False):
            est = seed_means.stratified_mean(g, "slope", level=level)
            if window == "last_decade":
                last[str(act)] = est
            out.findings.append(
                Named(
                    f"horizon/{act}/slope_per_decade/{window}",
                    est,
                    f"{act}, model {model}, {window.replace('_', ' ')} of a "
                    f"{t_end / 1e6:.0f}M-token run (paper: {PAPER_SIGN.get(str(act))})",
                    unit="activation ratio per 10x tokens",
                    headline=act == "relu" and window == "last_decade",
                )
            )
    for act, g in hdf.groupby("activation", sort=False):
        try:
            est = slim.relative_trend(g, min_x=windows["last_decade"], level=level)
        except ValueError as err:
            out.messages.append(f"horizon/{act}: no last-decade trend ({err})")
            continue
        out.findings.append(
            Named(
                f"horizon/{act}/trend/relative_last_decade",
                est,
                f"{act}, model {model}: last-decade slope over the run's mean ratio there",
                unit="fraction of the level per 10x tokens",
            )
        )
    table, fits = sa.fit_laws(hdf, reps=reps, level=level, seed=seed)
    for row in table.to_dict("records"):
        if isinstance(row.get("error"), str):
            continue
        res = fits[(row["activation"], row["model"], row["law"])]
        out.findings.append(
            Named(
                f"horizon/{row['activation']}/A0",
                sa.law_limit(res, trend=last.get(row["activation"])),
                f"{row['law']} limit on the long run, {row['n_runs']} runs"
                + (f" ({row['warnings']})" if row["warnings"] else ""),
            )
        )
    out.table = sa.laws_display(table)
    out.extra["final"] = (
        hdf[hdf["tokens"] == t_end].groupby("activation")[["activation_ratio", "loss"]].mean()
    )
    return out


def matched(mdf: pd.DataFrame, main: pd.DataFrame, *, level: float) -> Step:
    """Section 8b: sizes at matched tokens per parameter; a second width-depth family."""
    out = Step()
    msz = mdf[mdf["family"] == "size"]
    mfinal = sa.final_values(msz)
    out.table = seed_means.group_means(
        mfinal, "activation_ratio", by=["activation", "model"], level=level
    ).merge(mfinal.groupby("model")["n_params"].first(), on="model")
    tpp_end = float(msz.groupby("run")["tokens_per_param"].max().mean())
    for act, g in mfinal.groupby("activation", sort=False):
        out.findings += [
            Named(
                f"matched/{act}/scale/slope_per_decade",
                sm.scale_slope(g, level=level),
                f"{act}: activation ratio at {tpp_end:.0f} tokens per parameter (every size) "
                "vs non-embedding parameters",
                unit="activation ratio per 10x parameters",
            ),
            Named(
                f"matched/{act}/scale/relative_slope",
                sm.scale_slope(g, relative=True, level=level),
                f"{act}: the same slope relative to the mean ratio (paper: weak dependence; "
                "the published variant applies the same criterion)",
                unit="fraction of the level per 10x parameters",
                headline=True,
            ),
        ]
    wdt = sm.width_depth_table(
        {"main (77-83k)": main, "second (25-28k)": mdf[mdf["family"] == "width_depth"]}, level=level
    )
    for row in wdt[wdt["family"] == "second (25-28k)"].to_dict("records"):
        out.findings.append(
            Named(
                f"width_depth_25k/{row['activation']}/slope_per_decade",
                row["estimate"],
                f"{row['activation']}: final activation ratio vs width/depth at "
                f"{row['params_lo'] / 1e3:.0f}-{row['params_hi'] / 1e3:.0f}k parameters, "
                f"{row['n_shapes']} shapes, {row['tokens_per_param']:.0f} tokens per parameter "
                "(paper: positive below a bottleneck)",
                unit="activation ratio per 10x width/depth",
                headline=row["activation"] == "relu",
            )
        )
    out.extra["width_depth"] = wdt.assign(estimate=wdt["estimate"].map(str))
    return out


def ratio_frames(
    main: pd.DataFrame | None,
    *,
    horizon: pd.DataFrame | None,
    matched: pd.DataFrame | None,
    long: pd.DataFrame | None,
) -> dict[str, pd.DataFrame]:
    """The designs whose two ratios section 8c shows, in order: the main sweep's size
    family, the horizon probe, the matched sizes and the long design (those that ran)."""
    frames = {
        "main": None if main is None else main[main["in_size_sweep"]],
        "horizon": horizon,
        "matched": None if matched is None else matched[matched["family"] == "size"],
        "long": long,
    }
    return {k: v for k, v in frames.items() if v is not None}


def ratios(frames: Mapping[str, pd.DataFrame], *, level: float) -> Step:
    """Section 8c: both ratios per design and size; ``extra["both"]``: their seed means
    by design (:func:`.limits.both_ratios`)."""
    out = Step(extra={"both": {}})
    for design, frame in frames.items():
        out.extra["both"][design] = slim.both_ratios(frame)
        for r in slim.metric_trends(frame, level=level).to_dict("records"):
            metric = "nonzero" if r["metric"].startswith("nonzero") else "ppl1"
            if r["activation"] == "silu" and metric == "nonzero":
                continue  # no exact zeros: the nonzero ratio is 1 at every checkpoint
            out.findings.append(
                Named(
                    f"ratios/{design}/{r['activation']}/{r['model']}/{metric}/slope_per_decade",
                    r["estimate"],
                    f"{r['metric']}, {design} design, model {r['model']} ({r['activation']}): "
                    f"{r['start']:.3f} at the first usable checkpoint, {r['end']:.3f} at the "
                    "last",
                    unit="ratio per 10x tokens",
                )
            )
    return out


def long_design(ldf: pd.DataFrame, *, reps: int, level: float, seed: int) -> Step:
    """Section 8d: the long design's laws per size, their identified limits, the
    relative last-decade trends and the limit's change from size s to m."""
    out = Step()
    table, fits = sa.fit_laws(ldf, reps=reps, level=level, seed=seed)
    identified: dict[tuple[str, str], tuple[FitResult, float]] = {}
    for row in table.to_dict("records"):
        act, model = row["activation"], row["model"]
        if isinstance(row.get("error"), str):
            out.messages.append(f"{act}/{model}: no fit ({row['error']})")
            continue
        g = ldf[(ldf["activation"] == act) & (ldf["model"] == model)]
        tpp_end = float(g["tokens_per_param"].max())
        late = sa.run_slopes(g, x="tokens_per_param", min_x=tpp_end / 10)
        trend = None if late.empty else seed_means.stratified_mean(late, "slope", level=level)
        res = fits[(act, model, row["law"])]
        est = sa.law_limit(res, trend=trend)
        out.findings.append(
            Named(
                f"long/{act}/{model}/A0",
                est,
                f"{row['law']} limit, model {model} to {tpp_end:.0f} tokens per parameter, "
                f"{row['n_runs']} runs",
                unit="activation ratio",
            )
        )
        if est.identified:
            identified[(act, model)] = (res, float(g["n_params"].iloc[0]))
    for act, g in ldf.groupby("activation", sort=False):
        try:
            est = slim.relative_trend(
                g, x="tokens_per_param", min_x=float(g["tokens_per_param"].max()) / 10, level=level
            )
        except ValueError as err:
            out.messages.append(f"long/{act}: no last-decade trend ({err})")
            continue
        out.findings.append(
            Named(
                f"long/{act}/trend/relative_last_decade",
                est,
                f"{act}: slope over the last decade of tokens per parameter over the run's "
                "mean ratio there, mean over sizes",
                unit="fraction of the level per 10x tokens",
            )
        )
    for act in ("relu", "silu"):
        if (act, "s") in identified and (act, "m") in identified:
            out.findings.append(
                Named(
                    f"long/{act}/scale/A0_relative_slope",
                    slim.limit_scale_slope(
                        identified[(act, "s")], identified[(act, "m")], level=level
                    ),
                    f"{act}: change of the identified limit from s to m over its mean",
                    unit="fraction of the limit per 10x parameters",
                )
            )
    out.table = sa.laws_display(table)
    return out


# ----------------------------------------------------------------------------- the paper
def paper_laws(curves: pd.DataFrame, *, reps: int, level: float, seed: int) -> Step:
    """Section 9: every released curve refitted; its limit with the residual block
    bootstrap's interval. ``extra``: ``fits``, ``ptab`` (:func:`.published.refit`'s
    table), ``rmse_ratio`` (median of ours over the authors')."""
    ptab, pfits = pub.refit(curves, reps=reps, level=level, seed=seed)
    out = Step(extra={"fits": pfits, "ptab": ptab})
    for k, r in enumerate(ptab.to_dict("records")):
        cur = curves[(curves["activation"] == r["activation"]) & (curves["model"] == r["model"])]
        est = pub.paper_limit(
            pfits[(r["activation"], r["model"])],
            cur["D"].to_numpy(),
            cur["activation_ratio"].to_numpy(),
            reps=reps,
            level=level,
            seed=seed + k,
        )
        out.findings.append(
            Named(
                f"paper/law/{r['activation']}/{r['model']}/A0",
                est,
                f"{r['activation']} limit, the paper's {r['model']} curve refitted (authors: "
                f"{r['auth_A0']:.4g})",
                unit="activation ratio",
                headline=est.identified and r["model"] in ("0.1b", "1.2b"),
            )
        )
    worse = ptab[ptab["rmse"] > ptab["auth_rmse"] * (1 + 1e-3)]
    out.findings += [
        Named(
            "paper/fit/curves_at_most_authors_rmse",
            Estimate(float(len(ptab) - len(worse)), method="count"),
            f"released curves (of {len(ptab)}) where our refit's RMSE is at most the authors'",
            unit="curves",
        ),
        Named(
            "paper/fit/median_rmse_ratio",
            Estimate(float(np.median(ptab["rmse"] / ptab["auth_rmse"])), method="median"),
            "median over the released curves of our refit's RMSE over the authors'",
        ),
    ]
    cols = ["activation", "model", "n_points", "block_len", "resid_lag1", "rmse", "auth_rmse"]
    show = ptab[cols].copy()
    for p in ("alpha", "b", "c", "A0"):
        show[p] = [
            None
            if np.isnan(r.get(p, np.nan))
            else f"{r[p]:.3g} [{r[p + '_lo']:.3g}, {r[p + '_hi']:.3g}]"
            for r in ptab.to_dict("records")
        ]
        show[f"auth {p}"] = ptab[f"auth_{p}"]
    out.table = show
    return out


def paper_late(curves: pd.DataFrame, *, reps: int, level: float, seed: int) -> Step:
    """Section 9: law-free, each curve's last-decade slope and end ratio, averaged over
    sizes, and the end ratio's relative slope against parameters."""
    late, draws = pub.late_trends(curves, reps=reps, seed=seed)
    out = Step(table=late)
    for act in ("relu", "silu"):
        n = int((late["activation"] == act).sum())
        out.findings += [
            Named(
                f"paper/{act}/trend/late_slope",
                pub.mean_over_models(late, draws, activation=act, level=level),
                f"{act}: slope over the last decade of tokens, mean over the paper's {n} sizes "
                f"(paper: {PAPER_TREND[act]})",
                unit="activation ratio per 10x tokens",
                headline=True,
            ),
            Named(
                f"paper/{act}/end_ratio",
                pub.mean_over_models(late, draws, activation=act, column=1, level=level),
                f"{act}: ratio at the last checkpoint (late line), mean over sizes",
                unit="activation ratio",
            ),
            Named(
                f"paper/{act}/scale/relative_slope",
                pub.scale_slope(late, draws, activation=act, level=level),
                f"{act}: end-of-training ratio vs parameter count, relative (paper: weak "
                "dependence)",
                unit="fraction of the limit per 10x parameters",
                headline=True,
            ),
        ]
    return out


def calibration(
    pcurves: pd.DataFrame, *, test_half: bool, reps: int, level: float, seed: int
) -> Step:
    """Section 9b: the minimum trend and the size tolerance, set on half of the paper's
    curves; with ``test_half``, the other half's trends and size slopes (the published
    variant's deciding findings). ``extra["values"]``: the claims file's values."""
    late, draws = pub.late_trends(pcurves, reps=reps, seed=seed)
    out = Step()
    cal: dict[str, dict[str, Any]] = {}
    for act in ("relu", "silu"):
        cal_m, test_m = slim.calibration_halves(late[late["activation"] == act]["model"].unique())
        cal[act] = {
            "calibration": ", ".join(cal_m),
            "test": ", ".join(test_m),
            "min_effect": slim.min_trend_effect(late, activation=act, models=cal_m),
            "tolerance": slim.scale_tolerance(late, activation=act, models=cal_m),
        }
        out.findings += [
            Named(
                f"calibration/{act}/min_relative_trend",
                Estimate(cal[act]["min_effect"], method="half the smallest magnitude"),
                f"half the weakest last-decade trend of the paper's {act} curves "
                f"{cal[act]['calibration']} (the calibration half)",
                unit="fraction of the level per 10x tokens",
            ),
            Named(
                f"calibration/{act}/scale_tolerance",
                Estimate(cal[act]["tolerance"], method="OLS on log10 parameters over the mean"),
                f"relative size slope of the end ratio over the paper's {act} curves "
                f"{cal[act]['calibration']} (the calibration half)",
                unit="fraction of the limit per 10x parameters",
            ),
        ]
        if test_half:
            t = late[(late["activation"] == act) & late["model"].isin(test_m)]
            out.findings += [
                Named(
                    f"paper/{act}/trend/late_relative_slope/test_half",
                    pub.mean_over_models(
                        late, draws, activation=act, column=2, level=level, models=test_m
                    ),
                    f"{act}: last-decade slope over the end ratio, the test half "
                    f"({cal[act]['test']})",
                    unit="fraction of the level per 10x tokens",
                ),
                Named(
                    f"paper/{act}/scale/relative_slope/test_half",
                    pub.scale_slope(t, draws, activation=act, level=level),
                    f"{act}: end ratio vs parameter count, the test half ({cal[act]['test']})",
                    unit="fraction of the limit per 10x parameters",
                ),
            ]
    out.table = pd.DataFrame(cal).T
    out.extra["values"] = {
        **{f"{a}_min": cal[a]["min_effect"] for a in cal},
        **{f"{a}_tol": cal[a]["tolerance"] for a in cal},
        **{f"{a}_test": cal[a]["test"] for a in cal},
    }
    return out


# ----------------------------------------------------------------------------- claims
def sweep_claim_values(
    cal: Step, kernel: Step, *, recorded: Iterable[str] | None = None
) -> dict[str, Any]:
    """What the claims file's ``sweep`` design names: the calibration values, the
    longest runs there are (the long design, else the horizon probe) and the committed
    kernel timings' deciding findings (a missing name leaves the claim untested).

    ``recorded``: the finding names recorded so far (default: this process's,
    :func:`scalinglab.record.findings`)."""
    from scalinglab.record import findings

    have = set(recorded if recorded is not None else (f.name for f in findings()))
    trend = "long" if "long/relu/trend/relative_last_decade" in have else "horizon"
    return {
        **cal.extra["values"],
        "trend": trend,
        "trend_runs": "our longest runs ("
        + ("the long design, sizes s and m" if trend == "long" else "horizon probe, model s")
        + ")",
        "sizes": ["s", "m"],
        "kernel": kernel.extra.get("deciding") or ["kernel/offline/none"],
    }


def paper_claim_values(cal: Step, laws_step: Step) -> dict[str, Any]:
    """What the claims file's ``paper`` design names: the calibration values and the
    released sizes per activation."""
    ptab = laws_step.extra["ptab"]
    return {
        **cal.extra["values"],
        **{
            f"{act}_models": list(ptab[ptab["activation"] == act]["model"])
            for act in ("relu", "silu")
        },
    }


__all__ = [
    "Named",
    "Step",
    "baselines",
    "calibration",
    "coverage",
    "horizon",
    "kernel_live",
    "kernel_masks",
    "kernel_offline",
    "kernel_pivot",
    "live_shape",
    "time_live",
    "time_masks",
    "live_summary",
    "long_frame",
    "long_provenance",
    "mask_table",
    "masks_summary",
    "paper_claim_values",
    "sweep_claim_values",
    "laws",
    "long_design",
    "matched",
    "paper_late",
    "paper_laws",
    "ratio_frames",
    "ratios",
    "record_all",
    "relu_vs_silu",
    "size",
    "trends",
    "width_depth",
]
