"""The GEMM study's findings: one call per step of ``notebooks/gemm_cost_model.py``.

Each function takes what a step computed and records its findings with
:func:`scalinglab.record.record` (the estimates come from :mod:`.estimates`), under the
names the report, its prose and ``notebooks/claims/gemm_cost_model.toml`` use. A maximum
over shapes is recorded without an interval (a bootstrap of a maximum cannot cover).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.cost_model import HardwareRecord
from scalinglab.estimate import Estimate
from scalinglab.record import record
from scalinglab.studies.gemm import analysis
from scalinglab.studies.gemm import estimates as gest
from scalinglab.studies.gemm.timings import (
    MAX_REPEAT_SPREAD,
    repeat_spread,
    screened_references,
    screened_tiled,
    unstable_references,
)

__all__ = [
    "record_accuracy",
    "record_accuracy_all_cells",
    "record_buffer_comparison",
    "record_hardware",
    "record_reference",
    "record_tile_choice",
    "record_tile_effects",
]

#: A shape whose deepest tile is at least this many times ``K``: the old pack buffers,
#: zero-filled at ``tile_k`` rows, were that many times what the shape needed.
SMALL_K_OVERSIZE = 4.0


def record_hardware(
    hw: HardwareRecord,
    *,
    roof_per_process: np.ndarray,
    blas_over_fma_per_process: np.ndarray,
    spread_ok: bool,
    spread_why: str,
    level: float,
) -> None:
    """Step 1: the roofs of the hardware record, with a re-run interval from the spread's
    processes when that spread applies to this machine (else without one, and why).

    The arithmetic roof is the larger of the FMA probe and BLAS sgemm (both achieved
    rates, so both are lower bounds of the peak; the record's ``peak_flop_per_s``,
    :func:`.machine.all_thread_peak`). BLAS over the FMA probe is recorded as the ratio
    of two measured rates, not as a fraction of a peak: above 1 it says the probe
    under-read the peak (and the roof is BLAS's rate), so it has no upper bound of 1
    and its interval is not clipped.

    Parameters
    ----------
    hw
        The study's hardware record.
    roof_per_process, blas_over_fma_per_process
        Shape ``(processes,)``: each process's roof (larger of its FMA probe and BLAS
        rate) and its BLAS rate over its FMA probe (:func:`.machine.per_process`).
    spread_ok, spread_why
        :func:`.machine.spread_applies`'s verdict on the spread.
    """
    fma = hw.fma_flop_per_s
    blas = hw.blas_flop_per_s
    which = (
        "BLAS sgemm, which ran faster than the FMA probe"
        if blas is not None and fma is not None and blas > fma
        else "the all-thread FMA probe"
    )
    record(
        "hardware/peak_gflops",
        gest.rerun_estimate(hw.peak_flop_per_s / 1e9, roof_per_process, level=level, what="roofs")
        if spread_ok
        else Estimate(
            hw.peak_flop_per_s / 1e9,
            method="larger of the all-thread FMA probe and BLAS sgemm, one process",
            note=spread_why,
        ),
        unit="GFLOP/s",
        description=f"arithmetic roof ({hw.source}): the larger of the all-thread FMA probe "
        f"and BLAS sgemm (best of runs); here {which}",
    )
    record(
        "hardware/bandwidth_gbs",
        hw.mem_bytes_per_s / 1e9,
        unit="GB/s",
        description="memory roof (streaming copy, read + write)",
    )
    if blas is not None and fma is not None:
        ratio = blas / fma
        note = (
            "BLAS ran faster than the FMA probe: the probe under-reads the peak, so the "
            "roof is BLAS's rate"
            if ratio > 1
            else None
        )
        record(
            "hardware/blas_over_fma_probe",
            gest.rerun_estimate(ratio, blas_over_fma_per_process, level=level, note=note)
            if spread_ok
            else Estimate(
                ratio,
                method="BLAS rate over the all-thread FMA probe, one process",
                note="; ".join(x for x in (note, spread_why) if x),
            ),
            description="OpenBLAS sgemm (2048) over the all-thread FMA probe (a ratio of "
            "two measured rates, not a fraction of a peak: above 1 the probe under-reads)",
        )


def record_tile_effects(
    calls: pd.DataFrame,
    effects: pd.DataFrame,
    *,
    between_sigma: float,
    level: float,
    reps: int,
    seed: int,
    all_calls: pd.DataFrame | None = None,
    unstable: pd.DataFrame | None = None,
    coverage: dict | None = None,
) -> pd.DataFrame:
    """Step 2: the largest tile effect over shapes (observed: no interval; true: an
    interval simultaneous over shapes, the headline), the median over shapes, and every
    shape's own worst/best ratio.

    Parameters
    ----------
    calls
        The timed calls the tile study uses: the sweep's stable cells
        (:func:`.timings.stable_cells`) or all of them.
    effects
        :func:`.analysis.tile_effects`'s table of ``calls`` with ``simultaneous=True``,
        one row per shape: every shape's interval and the largest effect's come from
        its one set of draws (``reps`` raised there for the adjusted tail).
    all_calls, unstable
        With :func:`.timings.stable_cells`: every timed call, and the cells left out;
        recorded are how many were left out and the largest effect over all cells
        (no interval), beside the stable cells' findings.
    coverage
        :func:`.coverage.tile_effect_coverage` of ``calls``: the per-shape intervals'
        measured coverage, stated in the method of ``tile/largest_effect`` and of every
        ``tile/worst_over_best/<shape>`` (so GEMM-1's verdict states it when below 0.93),
        and recorded as ``tile/per_shape_coverage``.

    Returns
    -------
    pandas.DataFrame
        :func:`.analysis.largest_effect`'s per-shape table (each shape's ratio, its
        Bonferroni-adjusted lower end and its upper end), behind ``tile/largest_effect``:
        the interval of the largest true effect over shapes, which decides GEMM-1 (the
        largest observed ratio, a selected maximum, is a description without an interval).
    """
    largest, summary, table = gest.largest_effect(effects, level=level)
    max_effect, where = gest.max_tile_effect(
        calls, between_sigma=between_sigma, level=level, reps=reps, seed=seed
    )
    largest = gest.with_coverage(largest, coverage)
    if coverage is not None:
        from scipy.stats import t as student_t

        c, se, sims = coverage["coverage"], coverage["se"], coverage["sims"]
        half = float(student_t.ppf(0.5 + level / 2, sims - 1)) * se
        note = (
            f"the per-shape {coverage['level']:g} intervals at {coverage['n']} repeats per "
            f"cell over {sims} simulated sweeps x {coverage['shapes']} shapes; lowest shape "
            f"{coverage['worst_shape']} at {coverage['worst_coverage']:.2f}; truth below the "
            f"lower end {coverage['below']:.3f}, above the upper end {coverage['above']:.3f}"
        )
        record(
            "tile/per_shape_coverage",
            Estimate(
                c,
                max(c - half, 0.0),
                min(c + half, 1.0),
                level=level,
                method=f"Student t over {sims} simulated sweeps (each sweep's share of "
                "shapes whose interval holds the true worst/best ratio)",
                n=sims,
                note=note,
            )
            if se > 0
            else Estimate(c, no_interval="every simulated sweep scored alike", note=note),
            description="coverage of the per-shape tile-effect intervals behind GEMM-1, "
            "on simulated sweeps resampled from this sweep's own repeats",
        )
    record(
        "tile/largest_effect",
        largest,
        unit="x",
        headline=True,
        description=f"largest true slowdown from the tile choice over {summary['shapes']} "
        "shapes (interval simultaneous over shapes; the point is the largest observed "
        "ratio); paper: up to 3.2x on GPU",
    )
    record(
        "tile/max_worst_over_best",
        # a maximum over shapes: a bootstrap that resamples repeats cannot give it a valid
        # interval (it can end below a component's), so it is reported without one
        Estimate(
            max_effect.point,
            method="largest per-shape worst/best ratio of median times",
            note="a maximum over shapes, reported without an interval; see each shape's "
            "interval in tile/worst_over_best/<shape>",
        ),
        unit="x",
        headline=False,  # no interval: the largest shape's own finding is the headline
        description=f"largest slowdown from the tile choice (at {where}); paper: up to 3.2x on GPU",
    )
    record(
        "tile/median_worst_over_best",
        gest.max_tile_effect(
            calls, over="median", between_sigma=between_sigma, level=level, reps=reps, seed=seed
        )[0],
        unit="x",
        description="typical slowdown from the tile choice (median over shapes)",
    )
    spread = repeat_spread(all_calls if all_calls is not None else calls)
    record(
        "tile/median_repeat_spread",
        Estimate(
            float(spread["spread"].median()),
            method="median over cells of the slowest repeat's time over the fastest's",
        ),
        unit="x",
        description=f"how far a typical cell's repeats range, over {len(spread)} cells",
    )
    if all_calls is not None and unstable is not None:
        n_cells = len(spread)
        record(
            "tile/unstable_cells",
            Estimate(float(len(unstable)), method="count of cells"),
            description=f"cells left out of the tile study, of {n_cells}: repeats ranging "
            f"more than {MAX_REPEAT_SPREAD:g}x (timed through a disturbance), or on a shape "
            "with fewer than two stable tiles",
        )
        point, _, at = analysis.max_tile_effect(all_calls, reps=1, level=level, seed=seed)
        record(
            "tile/all_cells/max_worst_over_best",
            Estimate(
                point,
                method="largest per-shape worst/best ratio of median times, every cell",
                note="a maximum over shapes, reported without an interval",
            ),
            unit="x",
            description=f"largest slowdown from the tile choice counting the unstable cells "
            f"too (at {at})",
        )
    for row in effects.itertuples():
        record(
            f"tile/worst_over_best/{row.M}x{row.N}x{row.K}",
            gest.with_coverage(gest.tile_effect(row, level=level, reps=reps), coverage),
            unit="x",
            description=f"best tile {row.best_tile}, worst {row.worst_tile}",
        )
    return table


def record_buffer_comparison(
    change: pd.DataFrame,
    before: pd.DataFrame,
    *,
    sweep_name: str,
    level: float,
    reps: int,
    seed: int,
    between_sigma: float = 0.0,
) -> dict:
    """Step 2: does the old-buffer sweep's largest tile effect survive right-sized buffers?

    Parameters
    ----------
    change
        :func:`.analysis.tile_effect_change` of the sweep (right-sized buffers) over the
        old-buffer sweep ``before``, one row per shape.
    before
        The old-buffer sweep's calls the comparison used (its stable cells).
    sweep_name
        The old sweep's file, named in the descriptions.

    Returns
    -------
    dict
        ``shape`` (the old sweep's largest effect), ``verdict`` (``"does not survive"``:
        the change's interval lies below 1; ``"survives"``: it holds 1;
        ``"grows"``: it lies above 1) and that shape's row of ``change``.

    Findings: the old largest effect (no interval: a maximum), that shape's ratio under
    the old and the right-sized buffers and their change (intervals); per group of
    shapes (``small_k``: deepest tile at least :data:`SMALL_K_OVERSIZE` x ``K``, where
    the old buffers were oversized; ``deep_k``: ``K`` at least the deepest tile, where
    nothing changed) the median change over shapes and how many shapes' change
    intervals lie below and above 1.
    """
    point, _, where = analysis.max_tile_effect(before, reps=1, level=level, seed=seed)
    key = tuple(int(x) for x in where.split("x"))
    match = change[(change["M"] == key[0]) & (change["N"] == key[1]) & (change["K"] == key[2])]
    if match.empty:
        raise ValueError(f"the old sweep's largest effect ({where}) is not in both sweeps")
    row = match.iloc[0]
    if row.change_hi < 1.0:
        verdict = "does not survive"
    elif row.change_lo > 1.0:
        verdict = "grows"
    else:
        verdict = "survives"
    record(
        "tile/buffers/old_max_worst_over_best",
        Estimate(
            point,
            method="largest per-shape worst/best ratio of median times (old pack buffers)",
            note="a maximum over shapes, reported without an interval",
        ),
        unit="x",
        description=f"the old-buffer sweep's ({sweep_name}) largest tile effect, at {where}",
    )
    for name, pt, lo, hi, what in (
        ("old_buffers", row.ratio_before, row.before_lo, row.before_hi, "old pack buffers"),
        ("right_sized", row.ratio, row.ratio_lo, row.ratio_hi, "right-sized pack buffers"),
    ):
        record(
            f"tile/buffers/old_max_shape/{name}",
            Estimate(
                float(pt),
                float(lo),
                float(hi),
                level=level,
                method=gest.REPEATS + "; best and worst re-selected per replicate",
                resamples=reps,
            ),
            unit="x",
            description=f"worst/best at {where} with {what} (the cells stable in both sweeps)",
        )
    record(
        "tile/buffers/old_max_shape/change",
        Estimate(
            float(row.change),
            float(row.change_lo),
            float(row.change_hi),
            level=level,
            method=gest.REPEATS + "; both sweeps resampled independently, best and worst "
            "re-selected in each, ratio of the two effects, median-bias shifted",
            resamples=reps,
        ),
        unit="x",
        description=f"tile effect at {where} with right-sized over old pack buffers "
        f"(< 1: the old effect was partly the buffers); {verdict}",
    )
    groups = {
        "small_k": change["max_tile_k_over_K"] >= SMALL_K_OVERSIZE,
        "deep_k": change["max_tile_k_over_K"] <= 1.0,
    }
    words = {
        "small_k": f"shapes whose deepest tile is >= {SMALL_K_OVERSIZE:g}x K (old buffers "
        "oversized)",
        "deep_k": "shapes with K >= the deepest tile (buffers unchanged: the two runs' difference)",
    }
    for g, mask in groups.items():
        sub = change[mask]
        if len(sub) < 2:
            continue
        record(
            f"tile/buffers/{g}/median_change",
            gest.median_exact(sub["change"].to_numpy(float), level=level),
            unit="x",
            description=f"median over {len(sub)} {words[g]} of the tile effect with "
            "right-sized over old pack buffers",
        )
        record(
            f"tile/buffers/{g}/shapes",
            Estimate(float(len(sub)), method="count of shapes"),
            description=f"{words[g]}, stable in both sweeps",
        )
        for side, hits in (("lower", sub["change_hi"] < 1.0), ("higher", sub["change_lo"] > 1.0)):
            record(
                f"tile/buffers/{g}/shapes_{side}",
                Estimate(float(hits.sum()), method="count of shapes"),
                description=f"of {len(sub)} {words[g]}, those whose change interval lies "
                f"{'below' if side == 'lower' else 'above'} 1",
            )
    return {"shape": where, "verdict": verdict, "row": row}


def record_reference(
    ds: xr.Dataset, *, between_sigma: float, level: float, reps: int, seed: int
) -> pd.DataFrame:
    """Step 2: the tiled kernel's speed as a fraction of BLAS at the largest shape, over
    cells screened by the disturbed-cell rule (:data:`.timings.MAX_REPEAT_SPREAD`) on both
    sides: the largest shape whose BLAS cell is undisturbed, its fastest undisturbed tile.

    Parameters
    ----------
    ds
        The sweep (``tiled_seconds`` ``(shape, tile, repeat)``, ``ref_seconds``
        ``(impl, shape, repeat)``).

    Returns
    -------
    pandas.DataFrame
        :func:`.timings.unstable_references`: the reference cells left out (recorded as
        ``reference/unstable_cells``).
    """
    unstable = unstable_references(ds)
    record(
        "reference/unstable_cells",
        Estimate(float(len(unstable)), method="count of cells"),
        description=f"reference cells (BLAS, textbook loop) left out: repeats ranging more "
        f"than {MAX_REPEAT_SPREAD:g}x, the tiled cells' rule",
    )
    blas = screened_references(ds).sel(impl="blas")
    tiled = screened_tiled(ds)
    ok = blas.notnull().any("repeat") & tiled.notnull().any("repeat").any("tile")
    flops = (ds["M"] * ds["N"] * ds["K"]).where(ok)
    if not bool(ok.any()):
        return unstable
    big = str(flops.idxmax("shape").item())
    best_tile = tiled.sel(shape=big).median("repeat").idxmin("tile").item()
    record(
        "kernel/tiled_fraction_of_blas",
        gest.speed_ratio(
            blas.sel(shape=big).values,
            tiled.sel(shape=big, tile=best_tile).values,
            between_sigma=between_sigma,
            level=level,
            reps=reps,
            seed=seed,
        ),
        headline=True,
        description=f"numba tiled ({best_tile}) speed / OpenBLAS at {big} (undisturbed cells)",
    )
    return unstable


def record_accuracy(acc: pd.DataFrame, *, level: float, reps: int) -> None:
    """Step 4: R^2 of log time and MAPE of every (protocol, model), over the cells the tile
    study uses (a cell timed through a disturbance is left out of training and scoring);
    on unseen shapes the forest's and the corrected kernel model's R^2 are headlines."""
    for row in acc.itertuples():
        headline = row.protocol == "unseen_shapes" and row.model in (
            "random_forest",
            "kernel_model_x_correction",
        )
        est = gest.accuracy(row, level=level, reps=reps)
        record(
            f"predictor/{row.protocol}/{row.model}/r2_log",
            est["r2_log"],
            headline=headline,
            description=f"R^2 of log time, {row.n_cells} cells, {row.n_shapes} shapes "
            "(target >= 0.95 on unseen shapes; paper 0.98)",
        )
        record(
            f"predictor/{row.protocol}/{row.model}/mape",
            est["mape"],
            description="mean absolute percentage error of time (paper: 15.6%)",
        )


def record_accuracy_all_cells(acc: pd.DataFrame, *, level: float, reps: int) -> None:
    """Step 4, for comparison only: the random forest's R^2 of log time and MAPE when the
    disturbed cells are kept (the screened cells' scores, :func:`record_accuracy`, decide
    GEMM-2), under ``predictor/all_cells/<protocol>/random_forest/...``."""
    for row in acc[acc["model"] == "random_forest"].itertuples():
        est = gest.accuracy(row, level=level, reps=reps)
        for metric in ("r2_log", "mape"):
            record(
                f"predictor/all_cells/{row.protocol}/random_forest/{metric}",
                est[metric],
                description=f"{metric} with every cell, the {row.n_cells} including those "
                "timed through a disturbance (for comparison: the screened cells decide)",
            )


def record_tile_choice(
    regret: pd.DataFrame, within: pd.DataFrame, *, level: float, reps: int, seed: int
) -> None:
    """Step 4: the tile-choice regret on unseen shapes (median with its interval, the
    maximum without one) and each model's within-shape R^2.

    Parameters
    ----------
    regret
        :func:`.predictor.tile_choice_regret`'s table (column ``regret``, one row per shape).
    within
        :func:`.predictor.within_shape_r2`'s table indexed by model (``r2_within``,
        ``within_share``, ``oracle_r2``).
    """
    record(
        "predictor/unseen_shapes/tile_choice_regret_median",
        gest.median_exact(regret["regret"].to_numpy(float), level=level),
        unit="x",
        description="measured time of the predicted-best tile over the best tile, median "
        "over unseen shapes (kernel model x correction)",
    )
    record(
        "predictor/unseen_shapes/tile_choice_regret_max",
        Estimate(
            float(regret["regret"].max()),
            method="largest over unseen shapes",
            note="a maximum over shapes, reported without an interval",
        ),
        unit="x",
        description="worst shape's measured time of the predicted-best tile over the best tile",
    )
    for model_name, row in within.iterrows():
        record(
            f"predictor/unseen_shapes/{model_name}/r2_within_shape",
            Estimate(
                float(row["r2_within"]),
                method="R^2 of log time after removing each "
                "shape's mean (out-of-fold, unseen shapes)",
            ),
            description=f"how well {model_name} ranks the tiles of an unseen shape; "
            f"{100 * row['within_share']:.0f}% of the variance of log time is within shapes "
            f"(a tile-blind per-shape oracle reaches R^2 {row['oracle_r2']:.3f})",
        )
