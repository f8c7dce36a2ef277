"""Statistics of GEMM timings: how much the tile matters, and speed ratios, with CIs.

Input: the long table of timed calls (one row per call: ``M, N, K, tile_m, tile_n,
tile_k, seconds``; :func:`scalinglab.studies.gemm.sweep.timings_table` or a user's
file via :func:`~scalinglab.studies.gemm.sweep.load_timings`). Every interval is a
percentile bootstrap that resamples the repeats of each (shape, tile) cell
independently (:func:`scalinglab.stats.bootstrap.resample_groups`).

- :func:`tile_effects`: per shape, the best and worst tile and the ratio of their
  median times (the pair held fixed in the bootstrap, so picking the extremes does
  not bias the interval), and how often the best tile stays best.
- :func:`max_tile_effect`: the largest (or median) such ratio over shapes.
- :func:`speed_ratio`: one kernel's speed as a fraction of a baseline's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalinglab.studies.gemm.sweep import SHAPE, TILE
from scalinglab.stats.bootstrap import percentile_interval, resample_groups


def _bootstrap_cells(timings: pd.DataFrame, *, reps: int, seed: int) -> list[tuple]:
    """Per shape: (shape, tile labels, cell medians, replicate medians ``(reps, tiles)``).

    Every (shape, tile) cell's repeats are resampled with replacement, independently.
    """
    rng = np.random.default_rng(seed)
    out = []
    for shape, df in timings.groupby(SHAPE, sort=False):
        groups = list(df.groupby(TILE, sort=True))
        cells = [g["seconds"].to_numpy() for _, g in groups]
        labels = ["x".join(map(str, t)) for t, _ in groups]
        med = np.array([np.median(c) for c in cells])
        boot = np.stack([np.median(c[resample_groups(rng, len(c), reps)], axis=1)
                         for c in cells], axis=1)
        out.append((shape, labels, med, boot))
    return out


def tile_effects(
    timings: pd.DataFrame, *, reps: int = 2000, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Per shape: the best and worst tile and how much the choice matters.

    ``ratio = median(worst) / median(best)``, best and worst picked from the medians
    of all repeats. Its CI holds that pair fixed and resamples, independently for
    the two cells, each cell's repeats with replacement (percentile interval of the
    ratio of medians): re-picking the extremes in every replicate would bias the
    interval upward (the max over noisy medians exceeds the max of the true ones).
    How stable the pick is, is reported separately as ``best_share``.

    Returns
    -------
    pandas.DataFrame
        One row per shape: ``M, N, K, best_tile, worst_tile, best_s, worst_s, ratio,
        ratio_lo, ratio_hi, best_share`` (share of replicates in which the best tile
        stays best), sorted by ``ratio`` descending.
    """
    rows = []
    for shape, labels, med, boot in _bootstrap_cells(timings, reps=reps, seed=seed):
        b, w = int(np.argmin(med)), int(np.argmax(med))
        lo, hi = percentile_interval(boot[:, w] / boot[:, b], level=level)
        rows.append({
            "M": shape[0], "N": shape[1], "K": shape[2], "best_tile": labels[b],
            "worst_tile": labels[w], "best_s": med[b], "worst_s": med[w],
            "ratio": med[w] / med[b], "ratio_lo": float(lo), "ratio_hi": float(hi),
            "best_share": float(np.mean(np.argmin(boot, axis=1) == b)),
        })
    return pd.DataFrame(rows).sort_values("ratio", ascending=False).reset_index(drop=True)


def max_tile_effect(
    timings: pd.DataFrame, *, reps: int = 2000, level: float = 0.95, seed: int = 0,
    over: str = "max",
) -> tuple[float, tuple[float, float], str]:
    """The largest (or median) worst/best ratio over shapes, its CI, and where the max is.

    ``over="max"``: the shape with the largest ratio and that ratio's CI (as in
    :func:`tile_effects`: its best and worst tiles held fixed). ``over="median"``:
    the median over shapes of the fixed-pair ratios, recomputed in every replicate.
    """
    if over not in ("max", "median"):
        raise ValueError(f"over must be 'max' or 'median', got {over!r}")
    cells = _bootstrap_cells(timings, reps=reps, seed=seed)
    pairs = [(int(np.argmax(med)), int(np.argmin(med))) for _, _, med, _ in cells]
    points = np.array([med[w] / med[b] for (_, _, med, _), (w, b) in zip(cells, pairs,
                                                                          strict=True)])
    boot = np.stack([bt[:, w] / bt[:, b] for (_, _, _, bt), (w, b) in zip(cells, pairs,
                                                                          strict=True)], axis=1)
    k = int(np.argmax(points))
    stat = boot[:, k] if over == "max" else np.median(boot, axis=1)
    lo, hi = percentile_interval(stat, level=level)
    point = points[k] if over == "max" else np.median(points)
    return float(point), (float(lo), float(hi)), "x".join(map(str, cells[k][0]))


def speed_ratio(
    baseline_seconds: np.ndarray, kernel_seconds: np.ndarray, *, reps: int = 2000,
    level: float = 0.95, seed: int = 0,
) -> tuple[float, tuple[float, float]]:
    """``median(baseline) / median(kernel)`` (the kernel's speed as a fraction of the
    baseline's) with a percentile bootstrap CI resampling each set of repeats.

    Parameters
    ----------
    baseline_seconds, kernel_seconds
        Repeated timings, shape ``(repeats,)`` each (NaN ignored).
    """
    rng = np.random.default_rng(seed)
    a = np.asarray(baseline_seconds, float)
    b = np.asarray(kernel_seconds, float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    boot = (np.median(a[resample_groups(rng, a.size, reps)], axis=1)
            / np.median(b[resample_groups(rng, b.size, reps)], axis=1))
    lo, hi = percentile_interval(boot, level=level)
    return float(np.median(a) / np.median(b)), (float(lo), float(hi))
