"""The GEMM sweep's timings as tables: every timed call (:func:`timings_table`) or a
user's own timings file (:func:`load_timings`, errors naming file, column and row),
the median per (shape, tile) cell, the cells whose repeats disagree (timed through a
disturbance: :func:`stable_cells`; the reference cells by the same rule:
:func:`unstable_references`), the tuned-library reference per shape and the roofline
points (arithmetic intensity, achieved FLOP/s), both over the undisturbed cells.

Columns: ``M, N, K, tile_m, tile_n, tile_k, seconds`` (:data:`TIMING_COLUMNS`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.cost_model import gemm_flops, gemm_min_bytes
from scalinglab.data.tables import numeric_column, read_table
from scalinglab.errors import InputError

TIMING_COLUMNS = ("M", "N", "K", "tile_m", "tile_n", "tile_k", "seconds")
SHAPE = ["M", "N", "K"]
TILE = ["tile_m", "tile_n", "tile_k"]


def timings_table(ds: xr.Dataset) -> pd.DataFrame:
    """The tiled kernel's timings as a long table, one row per timed call.

    Returns
    -------
    pandas.DataFrame
        Columns ``M, N, K, tile_m, tile_n, tile_k, repeat, seconds`` (NaN cells dropped).
    """
    df = ds["tiled_seconds"].to_dataframe().reset_index()
    df = df.rename(columns={"tiled_seconds": "seconds"}).dropna(subset=["seconds"])
    cols = [*TIMING_COLUMNS[:-1], "repeat", "seconds"]
    return df[cols].reset_index(drop=True)


def sweep_timings(path: str | Path) -> tuple[xr.Dataset, pd.DataFrame]:
    """A committed sweep file (``data/gemm_cost_model/sweep-*.nc``; a relative path is
    taken from the repository root) and its :func:`timings_table`."""
    from scalinglab.paths import repo_root

    p = Path(path)
    if not p.is_absolute():
        p = repo_root() / p
    if not p.exists():
        raise InputError("no such sweep file", file=p)
    with xr.open_dataset(p, engine="h5netcdf") as ds:
        ds = ds.load()
    if "tiled_seconds" not in ds:
        raise InputError("not a GEMM sweep: no variable 'tiled_seconds'", file=p)
    return ds, timings_table(ds)


def load_timings(path: str | Path) -> pd.DataFrame:
    """A user's own GEMM timings (CSV, Parquet or netCDF), validated row by row.

    The file needs columns ``M, N, K, tile_m, tile_n, tile_k, seconds`` (one row
    per timed call; several rows per (shape, tile) are repeats). Errors name the
    file, column and row.
    """
    df = read_table(path, required=TIMING_COLUMNS)
    out = pd.DataFrame(
        {
            c: numeric_column(
                df, c, file=path, positive=True, why_positive="sizes and times must be positive"
            )
            for c in TIMING_COLUMNS
        }
    )
    for c in TIMING_COLUMNS[:-1]:
        frac = out[c] % 1 != 0
        if frac.any():
            i = int(np.flatnonzero(frac.to_numpy())[0])
            raise InputError(
                f"not a whole number: {out[c].iloc[i]!r}", file=path, column=c, row=i + 1
            )
        out[c] = out[c].astype(np.int64)
    out["repeat"] = out.groupby(list(TIMING_COLUMNS[:-1])).cumcount()
    return out


#: A cell whose repeats range wider than this (slowest over fastest) was disturbed while
#: it was timed: repeats of one cell in one process agree within about 15% (the median
#: cell of the committed sweeps), and a process-to-process change of a cell's median is
#: about 5% (the re-run spread).
MAX_REPEAT_SPREAD = 2.0


def repeat_spread(timings: pd.DataFrame) -> pd.DataFrame:
    """Per (shape, tile) cell: its repeats' slowest over fastest time.

    Returns
    -------
    pandas.DataFrame
        ``M, N, K, tile_m, tile_n, tile_k, n, fastest_s, median_s, slowest_s, spread``,
        one row per cell.
    """
    g = timings.groupby(SHAPE + TILE)["seconds"]
    out = pd.concat(
        [
            g.size().rename("n"),
            g.min().rename("fastest_s"),
            g.median().rename("median_s"),
            g.max().rename("slowest_s"),
        ],
        axis=1,
    ).reset_index()
    out["spread"] = out["slowest_s"] / out["fastest_s"]
    return out


def stable_cells(
    timings: pd.DataFrame, *, max_spread: float = MAX_REPEAT_SPREAD
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The timed calls of the cells whose repeats agree, and the cells left out.

    A cell whose repeats range more than ``max_spread`` times (slowest over fastest)
    measured whatever shared the machine while it ran, not its tile; a shape left with
    fewer than two stable tiles is left out whole (it has no tile effect to measure).

    Parameters
    ----------
    timings
        One row per timed call (:data:`TIMING_COLUMNS`).
    max_spread
        Largest slowest/fastest ratio of a stable cell's repeats (> 1).

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        The stable cells' calls (same columns as ``timings``), and
        :func:`repeat_spread`'s rows of the cells left out (``spread > max_spread``,
        or on a shape with fewer than two stable tiles), slowest first.
    """
    if not max_spread > 1.0:
        raise ValueError(f"max_spread must be > 1, got {max_spread!r}")
    spread = repeat_spread(timings)
    ok = spread["spread"] <= max_spread
    tiles_left = ok.groupby([spread[c] for c in SHAPE]).transform("sum")
    ok &= tiles_left >= 2
    keep = spread.loc[ok, SHAPE + TILE]
    calls = timings.merge(keep, on=SHAPE + TILE, how="inner")
    dropped = spread.loc[~ok].sort_values("spread", ascending=False).reset_index(drop=True)
    return calls.reset_index(drop=True), dropped


def cell_medians(timings: pd.DataFrame) -> pd.DataFrame:
    """Median seconds per (shape, tile) cell, with the number of repeats ``n``."""
    g = timings.groupby(SHAPE + TILE)["seconds"]
    return pd.concat([g.median().rename("seconds"), g.size().rename("n")], axis=1).reset_index()


def unstable_references(ds: xr.Dataset, *, max_spread: float = MAX_REPEAT_SPREAD) -> pd.DataFrame:
    """The reference cells (BLAS, the textbook loop) timed through a disturbance: the same
    rule as the tiled cells' (:func:`stable_cells`), repeats ranging more than
    ``max_spread`` times.

    Returns
    -------
    pandas.DataFrame
        ``impl, shape, spread`` (slowest over fastest repeat), one row per disturbed
        reference cell, slowest first (cells not run, all NaN, are not listed).
    """
    if not max_spread > 1.0:
        raise ValueError(f"max_spread must be > 1, got {max_spread!r}")
    t = ds["ref_seconds"]
    spread = (t.max("repeat") / t.min("repeat")).to_series().dropna()
    out = spread[spread > max_spread].rename("spread").reset_index()
    return out.sort_values("spread", ascending=False).reset_index(drop=True)


def screened_references(ds: xr.Dataset, *, max_spread: float = MAX_REPEAT_SPREAD) -> xr.DataArray:
    """``ref_seconds`` ``(impl, shape, repeat)`` with every disturbed reference cell
    (:func:`unstable_references`) set to NaN."""
    t = ds["ref_seconds"]
    return t.where(t.max("repeat") / t.min("repeat") <= max_spread)


def screened_tiled(ds: xr.Dataset, *, max_spread: float = MAX_REPEAT_SPREAD) -> xr.DataArray:
    """``tiled_seconds`` ``(shape, tile, repeat)`` with every cell whose repeats range more
    than ``max_spread`` times set to NaN (the cell rule of :func:`stable_cells`)."""
    t = ds["tiled_seconds"]
    return t.where(t.max("repeat") / t.min("repeat") <= max_spread)


def reference_table(
    ds: xr.Dataset, *, hw_peak_flop_per_s: float, max_spread: float = MAX_REPEAT_SPREAD
) -> pd.DataFrame:
    """Per shape: median seconds and GFLOP/s of BLAS, the best tile and the textbook loop,
    over the cells not timed through a disturbance (:func:`screened_references`,
    :func:`screened_tiled`: NaN where a shape has none).

    Returns
    -------
    pandas.DataFrame
        ``shape, M, N, K, blas_gflops, best_tiled_gflops, naive_gflops,
        tiled_fraction_of_blas, blas_fraction_of_peak``.
    """
    flops = 2.0 * ds["M"] * ds["N"] * ds["K"]
    ref = screened_references(ds, max_spread=max_spread).median("repeat")
    best = screened_tiled(ds, max_spread=max_spread).median("repeat").min("tile")
    out = pd.DataFrame(
        {
            "shape": ds["shape"].values,
            "M": ds["M"].values,
            "N": ds["N"].values,
            "K": ds["K"].values,
            "blas_gflops": (flops / ref.sel(impl="blas") / 1e9).values,
            "best_tiled_gflops": (flops / best / 1e9).values,
            "naive_gflops": (flops / ref.sel(impl="numba_naive") / 1e9).values,
        }
    )
    out["tiled_fraction_of_blas"] = out["best_tiled_gflops"] / out["blas_gflops"]
    out["blas_fraction_of_peak"] = out["blas_gflops"] * 1e9 / hw_peak_flop_per_s
    return out


def roofline_points(ds: xr.Dataset, *, max_spread: float = MAX_REPEAT_SPREAD) -> pd.DataFrame:
    """Achieved FLOP/s of every kernel on every shape, at its minimum-traffic intensity,
    over the cells not timed through a disturbance.

    Returns
    -------
    pandas.DataFrame
        ``impl`` (``blas``, ``numba_tiled (best tile)``, ``numba_tiled (worst tile)``,
        ``numba_naive``), ``shape, intensity, flop_per_s``.
    """
    flops = np.asarray(gemm_flops(ds["M"].values, ds["N"].values, ds["K"].values))
    intensity = flops / np.asarray(gemm_min_bytes(ds["M"].values, ds["N"].values, ds["K"].values))
    tiled = screened_tiled(ds, max_spread=max_spread).median("repeat")
    ref = screened_references(ds, max_spread=max_spread).median("repeat")
    series = {
        "blas": ref.sel(impl="blas").values,
        "numba_tiled (best tile)": tiled.min("tile").values,
        "numba_tiled (worst tile)": tiled.max("tile").values,
        "numba_naive": ref.sel(impl="numba_naive").values,
    }
    frames = [
        pd.DataFrame(
            {
                "impl": impl,
                "shape": ds["shape"].values,
                "intensity": intensity,
                "flop_per_s": flops / secs,
            }
        )
        for impl, secs in series.items()
    ]
    return pd.concat(frames, ignore_index=True).dropna().reset_index(drop=True)
