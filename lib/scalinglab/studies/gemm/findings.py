"""The GEMM study's findings: one call per step of ``notebooks/gemm_cost_model.py``.

Each function takes what a step computed and records its findings with
:func:`scalinglab.record.record` (the estimates come from :mod:`.estimates`), under the
names the report, its prose and ``notebooks/claims/gemm_cost_model.toml`` use. A maximum
over shapes is recorded without an interval (a bootstrap of a maximum cannot cover).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalinglab.cost_model import HardwareRecord
from scalinglab.estimate import Estimate
from scalinglab.record import record
from scalinglab.studies.gemm import estimates as gest

__all__ = ["record_accuracy", "record_hardware", "record_tile_choice", "record_tile_effects"]


def record_hardware(
    hw: HardwareRecord,
    *,
    fma_per_process: np.ndarray,
    blas_fraction_per_process: np.ndarray,
    spread_ok: bool,
    spread_why: str,
    level: float,
) -> None:
    """Step 1: the roofs of the hardware record, with a re-run interval from the spread's
    processes when that spread applies to this machine (else without one, and why).

    Parameters
    ----------
    hw
        The study's hardware record.
    fma_per_process, blas_fraction_per_process
        Shape ``(processes,)``: each process's FMA peak and BLAS fraction of the peak.
    spread_ok, spread_why
        :func:`.machine.spread_applies`'s verdict on the spread.
    """
    record(
        "hardware/peak_gflops",
        gest.rerun_estimate(
            hw.peak_flop_per_s / 1e9, fma_per_process, level=level, what="FMA peaks"
        )
        if spread_ok
        else Estimate(
            hw.peak_flop_per_s / 1e9, method="measured all-thread FMA rate", note=spread_why
        ),
        unit="GFLOP/s",
        description=f"arithmetic roof ({hw.source}; measured: best of FMA micro-benchmark runs)",
    )
    record(
        "hardware/bandwidth_gbs",
        hw.mem_bytes_per_s / 1e9,
        unit="GB/s",
        description="memory roof (streaming copy, read + write)",
    )
    if hw.blas_fraction_of_peak is not None:
        record(
            "hardware/blas_fraction_of_peak",
            gest.rerun_estimate(
                hw.blas_fraction_of_peak, blas_fraction_per_process, level=level, upper=1.0
            )
            if spread_ok
            else Estimate(
                hw.blas_fraction_of_peak,
                method="BLAS rate over the all-thread FMA rate, one process",
                note=spread_why,
            ),
            headline=spread_ok,  # a headline needs an interval
            description="OpenBLAS sgemm (2048) as a fraction of the FMA peak",
        )


def record_tile_effects(
    calls: pd.DataFrame,
    effects: pd.DataFrame,
    *,
    between_sigma: float,
    level: float,
    reps: int,
    seed: int,
) -> str:
    """Step 2: the largest tile effect over shapes (no interval), the median over shapes,
    and every shape's own worst/best ratio (the largest shape's is the headline).

    Parameters
    ----------
    calls
        The sweep's timed calls (:func:`.timings.timings_table`).
    effects
        :func:`.analysis.tile_effects`'s table, one row per shape.

    Returns
    -------
    str
        The shape with the largest effect, ``"MxNxK"``.
    """
    max_effect, where = gest.max_tile_effect(
        calls, between_sigma=between_sigma, level=level, reps=reps, seed=seed
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
    for row in effects.itertuples():
        record(
            f"tile/worst_over_best/{row.M}x{row.N}x{row.K}",
            gest.tile_effect(row, level=level, reps=reps),
            unit="x",
            headline=f"{row.M}x{row.N}x{row.K}" == where,
            description=f"best tile {row.best_tile}, worst {row.worst_tile}",
        )
    return str(where)


def record_accuracy(acc: pd.DataFrame, *, level: float, reps: int) -> None:
    """Step 4: R^2 of log time and MAPE of every (protocol, model); on unseen shapes the
    forest's and the corrected kernel model's R^2 are headlines."""
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
        gest.median_over_shapes(
            regret["regret"].to_numpy(float), level=level, reps=reps, seed=seed
        ),
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
