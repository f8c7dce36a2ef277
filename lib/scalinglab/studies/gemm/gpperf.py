"""GPPerf's own GEMM measurements (Liu & Halim 2024), read and re-analysed.

The published tables (``data/published/gpperf/``, provenance in its ``PROVENANCE.md``)
hold one runtime per (shape, tile) for 141 cells of a tiled CUDA SGEMM on an RTX 4070
and one mean board power per (shape, tile) for 195 cells. This module reads them
through :mod:`scalinglab.data.tables` and computes what the paper claims from them:

- :func:`load_gpperf`: the two tables with short column names (``M, N, K, tile, ms``
  and ``M, N, K, tile, watts``), validated row by row (errors name file, column, row).
- :func:`check_provenance`: the files' sha256 against the provenance table.
- :func:`tile_effects` / :func:`tile_effect_summary`: per shape, the slowest tile's
  time over the fastest's (the paper's "up to 3.2x"), and its maximum and median over
  shapes with a bootstrap over shapes that re-selects best and worst in every
  resample (one timing per cell: the shape is the only resampling unit).
- :func:`power_savings`: board power at each shape's fastest tile against a baseline
  tile (the paper's "22% less power"), and the energy it implies.

The runtime and power predictors (the paper's random split and unseen shapes) are in
:mod:`scalinglab.studies.gemm.gpperf_predictor`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from scalinglab.data.tables import numeric_column, read_table
from scalinglab.errors import InputError
from scalinglab.paths import data_dir
from scalinglab.stats.bootstrap import percentile_interval, resample_groups
from scalinglab.stats.calibration import wilson

TIMES_FILE = "execution_times_all.csv"
POWER_FILE = "power_usage_results_all.csv"
#: sha256 of the published files (``data/published/gpperf/PROVENANCE.md``).
SHA256 = {
    TIMES_FILE: "f3505ef9be491bd8445564ceee1453d28addc7dc0f0f12c80bdabbfc923c3181",
    POWER_FILE: "afcefb646357ab21b2071a6619cc62ef5a091072e8b1a2aa5c9a859afe910b45",
}
SHAPE = ["M", "N", "K"]
_COLUMNS = {TIMES_FILE: ("Execution Time", "ms"), POWER_FILE: ("Average Power Usage (W)", "watts")}


def gpperf_dir() -> Path:
    """``data/published/gpperf/`` of this checkout."""
    return data_dir() / "published" / "gpperf"


def check_provenance(folder: str | Path | None = None) -> dict[str, str]:
    """sha256 of both files, checked against :data:`SHA256`.

    Raises
    ------
    InputError
        A file is missing or its content differs from the published one.
    """
    folder = Path(folder) if folder is not None else gpperf_dir()
    out = {}
    for name, expected in SHA256.items():
        path = folder / name
        if not path.exists():
            raise InputError("no such file (published GPPerf data)", file=path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != expected:
            raise InputError(
                f"sha256 {digest} differs from the published file's {expected}", file=path
            )
        out[name] = digest
    return out


def _read(path: Path, value: str, short: str) -> pd.DataFrame:
    df = read_table(path, required=[*SHAPE, "Tile Size", value])
    out = pd.DataFrame(
        {
            c: numeric_column(
                df, c, file=path, positive=True, why_positive="sizes must be positive"
            )
            for c in [*SHAPE, "Tile Size"]
        }
    )
    for c in out.columns:
        frac = (out[c] % 1 != 0).to_numpy()
        if frac.any():
            i = int(np.flatnonzero(frac)[0])
            raise InputError(
                f"not a whole number: {out[c].iloc[i]!r}", file=path, column=c, row=i + 1
            )
    out = out.astype(np.int64).rename(columns={"Tile Size": "tile"})
    out[short] = numeric_column(
        df, value, file=path, positive=True, why_positive="times and powers are positive"
    )
    dup = out.duplicated([*SHAPE, "tile"]).to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InputError(
            "duplicate (M, N, K, Tile Size) row", file=path, column="Tile Size", row=i + 1
        )
    return out


def load_gpperf(folder: str | Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """GPPerf's runtime and power tables.

    Parameters
    ----------
    folder
        Holds ``execution_times_all.csv`` and ``power_usage_results_all.csv``
        (default :func:`gpperf_dir`).

    Returns
    -------
    (times, power)
        ``times``: one row per timed cell, columns ``M, N, K, tile, ms`` (141 rows in
        the published file); ``power``: ``M, N, K, tile, watts`` (195 rows).
    """
    folder = Path(folder) if folder is not None else gpperf_dir()
    return (
        _read(folder / TIMES_FILE, *_COLUMNS[TIMES_FILE]),
        _read(folder / POWER_FILE, *_COLUMNS[POWER_FILE]),
    )


def shape_label(df: pd.DataFrame) -> np.ndarray:
    """``"MxNxK"`` of every row, shape ``(rows,)``."""
    return df[SHAPE].astype(str).agg("x".join, axis=1).to_numpy()


def tile_effects(times: pd.DataFrame, *, tiles: tuple[int, ...] | None = None) -> pd.DataFrame:
    """Per shape: the fastest and slowest tile and the ratio of their times.

    Parameters
    ----------
    times
        ``M, N, K, tile, ms`` (:func:`load_gpperf`).
    tiles
        Only these tiles (None: every tile timed for the shape).

    Returns
    -------
    pandas.DataFrame
        One row per shape with at least two tiles: ``shape, M, N, K, n_tiles,
        best_tile, worst_tile, best_ms, worst_ms, ratio`` (sorted by ``ratio``, descending).
    """
    df = times if tiles is None else times[times["tile"].isin(tiles)]
    rows = []
    for key, g in df.groupby(SHAPE, sort=True):
        if len(g) < 2:
            continue
        b, w = g["ms"].idxmin(), g["ms"].idxmax()
        rows.append(
            {
                "shape": "x".join(map(str, key)),
                "M": key[0],
                "N": key[1],
                "K": key[2],
                "n_tiles": len(g),
                "best_tile": int(g.at[b, "tile"]),
                "worst_tile": int(g.at[w, "tile"]),
                "best_ms": g.at[b, "ms"],
                "worst_ms": g.at[w, "ms"],
                "ratio": g.at[w, "ms"] / g.at[b, "ms"],
            }
        )
    if not rows:
        raise InputError("no shape has two or more tiles to compare", column="tile")
    return pd.DataFrame(rows).sort_values("ratio", ascending=False).reset_index(drop=True)


def _over_shapes(
    values: np.ndarray, stat, *, reps: int, level: float, seed: int
) -> tuple[float, tuple[float, float]]:
    """``stat`` of per-shape values and its percentile interval over resampled shapes."""
    rng = np.random.default_rng(seed)
    boot = np.array([stat(values[idx]) for idx in resample_groups(rng, len(values), reps)])
    lo, hi = percentile_interval(boot, level=level)
    return float(stat(values)), (float(lo), float(hi))


#: The interval of the median worst/best ratio over shapes.
MEDIAN_RATIO = (
    "median over shapes, percentile bootstrap over shapes (best and worst tile re-selected "
    "per shape)"
)


def tile_effect_summary(
    effects: pd.DataFrame, *, reps: int = 2000, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Maximum and median worst/best ratio over shapes, and how often each tile wins.

    The per-shape ratio re-selects its best and worst tile from the data (one timing
    per cell, so the selection is the data's); the median's interval is a percentile
    bootstrap over shapes. A tile's share of wins is a share of ``n`` independent shapes,
    so its interval is Wilson's (a percentile bootstrap of a share covers 0.92 at 30
    shapes, Wilson 0.94, :mod:`scalinglab.stats.method_coverage`; and it is never
    ``[1, 1]`` for a tile that wins everywhere). The maximum gets no interval (``lo``,
    ``hi`` NaN): resampling shapes cannot exceed the observed maximum, so its bootstrap
    interval would end at the point.

    Returns
    -------
    pandas.DataFrame
        Rows ``max_ratio``, ``median_ratio`` and ``share_best_<tile>`` for every
        tile; columns ``point, lo, hi, n_shapes, interval`` (how the interval was made,
        in words; None for the maximum).
    """
    ratio = effects["ratio"].to_numpy(float)
    n = len(effects)
    out: dict[str, tuple[float, float, float, str | None]] = {
        "max_ratio": (float(np.max(ratio)), np.nan, np.nan, None)
    }
    point, (lo, hi) = _over_shapes(ratio, np.median, reps=reps, level=level, seed=seed)
    out["median_ratio"] = (point, lo, hi, MEDIAN_RATIO)
    best = effects["best_tile"].to_numpy()
    for tile in sorted(set(best)):
        wins = int(np.sum(best == tile))
        lo, hi = (float(v) for v in wilson(wins, n, level=level))
        out[f"share_best_{tile}"] = (wins / n, lo, hi, f"Wilson score over {n} shapes")
    df = pd.DataFrame(out, index=["point", "lo", "hi", "interval"]).T
    df[["point", "lo", "hi"]] = df[["point", "lo", "hi"]].astype(float)
    df["n_shapes"] = n
    return df


def power_savings(
    times: pd.DataFrame, power: pd.DataFrame, *, baseline_tile: int = 1, min_ms: float = 0.0
) -> pd.DataFrame:
    """Per shape: power and energy at the fastest tile against a baseline tile.

    Parameters
    ----------
    times, power
        From :func:`load_gpperf`.
    baseline_tile
        The configuration the saving is measured against (1: no tiling, the kernel's
        untiled baseline; the paper does not name its baseline).
    min_ms
        Keep shapes whose fastest tile runs at least this long (power is polled every
        100 ms: shorter kernels read mostly idle power).

    Returns
    -------
    pandas.DataFrame
        One row per shape: ``shape, best_tile, best_ms, best_watts, base_watts,
        power_saving`` (``1 - best_watts / base_watts``), ``base_ms`` and
        ``energy_saving`` (``1 - E_best / E_base``, NaN where the baseline tile was not
        timed).
    """
    t = times.assign(shape=shape_label(times))
    p = power.assign(shape=shape_label(power)).set_index(["shape", "tile"])["watts"]
    rows = []
    for shape, g in t.groupby("shape", sort=True):
        b = g.loc[g["ms"].idxmin()]
        if b["ms"] < min_ms:
            continue
        try:
            best_w, base_w = p.loc[(shape, int(b["tile"]))], p.loc[(shape, baseline_tile)]
        except KeyError:
            continue
        base = g[g["tile"] == baseline_tile]["ms"]
        base_ms = float(base.iloc[0]) if len(base) else float("nan")
        rows.append(
            {
                "shape": shape,
                "best_tile": int(b["tile"]),
                "best_ms": float(b["ms"]),
                "best_watts": float(best_w),
                "base_watts": float(base_w),
                "power_saving": 1.0 - best_w / base_w,
                "base_ms": base_ms,
                "energy_saving": 1.0 - best_w * b["ms"] / (base_w * base_ms),
            }
        )
    if not rows:
        raise InputError(
            f"no shape has power for its fastest tile and tile {baseline_tile}"
            f" with a runtime of at least {min_ms} ms",
            column="tile",
        )
    return pd.DataFrame(rows)


def median_over_shapes(
    values: np.ndarray, *, reps: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """Median of per-shape values ``(shapes,)`` with a percentile bootstrap over shapes."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        raise ValueError("no finite per-shape values")
    return _over_shapes(v, np.median, reps=reps, level=level, seed=seed)
