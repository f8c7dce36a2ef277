"""Performance profiles (score distributions) with pointwise bootstrap bands.

``kind="score"``: F(tau) = fraction of all present (run, task) scores strictly
above tau (rliable's ``score_distributions``, ``np.mean(scores > tau)``).
``kind="average"``: fraction of tasks whose mean score over runs is strictly
above tau (rliable's ``average_score_distributions``).

The band at each tau is the percentile interval of F(tau) over stratified
bootstrap replicates (pointwise, not simultaneous). For the score kind, a
replicate is summarised by how often it drew each original score, so F for all
taus is one matrix product ``counts @ [score > tau]``; for the average kind the
per-task means of the resampled batch are compared with all taus at once.
Streams follow the rule of :mod:`scalinglab.stats.intervals` (keyed by algorithm).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import (
    auto_batch_size,
    batches,
    compact_runs,
    keyed_generators,
    percentile_interval,
    stratified_indices,
)
from scalinglab.stats.layout import algorithm_tables, check_scores
from scalinglab.stats.metrics import per_task_means

__all__ = ["KINDS", "performance_profile", "profile_replicates"]

KINDS = ("score", "average")


def _profile_point(values: np.ndarray, taus: np.ndarray, kind: str) -> np.ndarray:
    """F(tau) of one ``(run, task)`` table -> shape ``(T,)``."""
    if kind == "score":
        present = values[~np.isnan(values)]
        return (present[:, None] > taus).mean(axis=0)
    means = per_task_means(values)
    return (means[:, None] > taus).mean(axis=0)


def profile_replicates(
    values: np.ndarray,
    taus: np.ndarray,
    *,
    kind: str = "score",
    reps: int,
    rng: np.random.Generator,
    task_bootstrap: bool = False,
    batch_size: int | None = None,
) -> np.ndarray:
    """Bootstrap replicates of F(tau) for one ``(run, task)`` table.

    Returns
    -------
    numpy.ndarray
        Shape ``(reps, T)``.
    """
    table, n_runs = compact_runs(values)
    flat = table.ravel()
    cells = flat.size
    taus = np.asarray(taus, dtype=float)
    above = (np.nan_to_num(flat, nan=-np.inf)[:, None] > taus).astype(float)  # (cells, T)
    present = (~np.isnan(flat)).astype(float)
    per_rep = 8 * (
        4 * cells + 2 * taus.size + (table.shape[1] * taus.size if kind != "score" else 0)
    )
    batch_size = batch_size or auto_batch_size(per_rep, reps)
    out = []
    task_rng = rng.spawn(1)[0] if task_bootstrap else None
    for size in batches(reps, batch_size):
        idx = stratified_indices(
            rng, n_runs, size=size, task_bootstrap=task_bootstrap, task_rng=task_rng
        )
        if kind == "score":
            offsets = (np.arange(size, dtype=np.int64) * cells)[:, None, None]
            counts = np.bincount((idx + offsets).ravel(), minlength=size * cells)
            counts = counts.reshape(size, cells).astype(float)
            out.append((counts @ above) / (counts @ present)[:, None])
        else:
            means = per_task_means(np.take(flat, idx))  # (size, M)
            out.append((means[:, :, None] > taus).mean(axis=1))
    return np.concatenate(out, axis=0)


def performance_profile(
    scores: xr.DataArray,
    taus: np.ndarray,
    *,
    reps: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator,
    kind: str = "score",
    task_bootstrap: bool = False,
    batch_size: int | None = None,
) -> xr.Dataset:
    """Score-distribution or average-score performance profiles with CI bands.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``, any order; NaN = absent run.
    taus
        Shape ``(T,)``: thresholds.
    reps
        Bootstrap replicates (paper default 2,000).
    level
        Confidence level of the pointwise bands.
    kind
        ``"score"`` (all runs) or ``"average"`` (per-task means).

    Returns
    -------
    xarray.Dataset
        Variables ``point``, ``lo``, ``hi`` with dims ``(algorithm, tau)``;
        attrs ``reps``, ``level``, ``kind``.
    """
    if kind not in KINDS:
        raise InputError(f"unknown profile kind {kind!r}; choose from {list(KINDS)}")
    taus = np.asarray(taus, dtype=float)
    if taus.ndim != 1 or taus.size == 0 or not np.isfinite(taus).all():
        raise InputError(f"taus must be a non-empty 1-D array of finite numbers, got {taus!r}")
    checked = check_scores(scores)
    tables = algorithm_tables(checked)
    gens = keyed_generators(rng, list(tables))
    point, lo, hi = [], [], []
    for name, values in tables.items():
        point.append(_profile_point(values, taus, kind))
        reps_arr = profile_replicates(
            values,
            taus,
            kind=kind,
            reps=int(reps),
            rng=gens[name],
            task_bootstrap=task_bootstrap,
            batch_size=batch_size,
        )
        low, high = percentile_interval(reps_arr, level=level, axis=0)
        lo.append(low)
        hi.append(high)
    dims = ("algorithm", "tau")
    coords = {"algorithm": checked.coords["algorithm"].values, "tau": taus}
    return xr.Dataset(
        {"point": (dims, np.array(point)), "lo": (dims, np.array(lo)), "hi": (dims, np.array(hi))},
        coords=coords,
        attrs={"reps": int(reps), "level": float(level), "kind": kind},
    )
