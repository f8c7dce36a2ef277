"""The sparse FFN kernel's findings: the committed timing runs (section 7, which decide the
speed claim), and with ``retime=True`` the live timings on random masks and on a trained
model's own masks (sections 7 and 7b).

Every timing interval is the median over separate runs (or processes) with their range,
a distribution-free interval for the median at level ``1 - 2^(1 - n)`` for ``n`` of them
(a percentile bootstrap over 2-4 processes covers far less than it says).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.studies.sparsity.steps import Named, Step


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
            n=n,
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
        n=n,
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


__all__ = [
    "kernel_live",
    "kernel_masks",
    "kernel_offline",
    "kernel_pivot",
    "live_shape",
    "live_summary",
    "mask_table",
    "masks_summary",
    "time_live",
    "time_masks",
]
