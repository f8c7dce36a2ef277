"""Probability of improvement P(X > Y) with stratified-bootstrap intervals.

Definition (rliable): for each task m, ``P(X_m > Y_m)`` is the Mann-Whitney U
statistic over the ``N_x * N_y`` pairs of runs, counting ``x_i > y_j`` as 1 and
ties as 1/2, divided by ``N_x N_y``; P(X > Y) is its mean over tasks. X and Y may
have different run counts (also per task); each is resampled independently,
stratified per task.

Why hand-written, and how it is fast: rliable calls ``scipy.stats.mannwhitneyu``
once per task per replicate. Here a replicate is described by multiplicity
counts ``c_x`` (how often each original run of X was drawn) and ``c_y``. With Y's
runs sorted per task, ``U = sum_a c_x[a] * (C_y[lo_a] + C_y[hi_a]) / 2`` where
``C_y`` is the cumulative count of Y's sorted runs and ``lo_a`` / ``hi_a`` are the
numbers of Y's original runs strictly below / at most ``x_a`` (computed once).
That is O(batch * (N_x + N_y) * M) array work per batch, no sorting and no
Python loop over replicates.
"""

from __future__ import annotations

from collections.abc import Sequence

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
from scalinglab.stats.layout import check_scores

__all__ = ["pairwise_probability_of_improvement", "probability_of_improvement"]


def _counts(idx: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Multiplicity of each table cell in each replicate.

    ``idx`` has shape ``(B, R, M)`` (flat indices into an ``(R, M)`` table of
    shape ``shape``). Returns float counts of shape ``(B, R, M)``. Rows beyond a
    task's run count (its absent cells) may hold counts from padding draws; the
    statistic never reads them (``lo``/``hi`` are 0 there for X and at most
    ``n_y`` for Y, whose cumulative counts stop before the absent rows).
    """
    size = idx.shape[0]
    cells = shape[0] * shape[1]
    offsets = (np.arange(size, dtype=np.int64) * cells)[:, None, None]
    counts = np.bincount((idx + offsets).ravel(), minlength=size * cells)
    return counts.reshape(size, *shape).astype(float)


class _Pair:
    """Precomputed tables of one (X, Y) comparison."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.tx, self.nx = compact_runs(x)
        ty, self.ny = compact_runs(y)
        self.ty = np.sort(ty, axis=0)  # ascending per task, NaN (absent) last
        self.px = ~np.isnan(self.tx)
        self.py = ~np.isnan(self.ty)
        rx, m = self.tx.shape
        self.lo = np.zeros((rx, m), dtype=np.int64)
        self.hi = np.zeros((rx, m), dtype=np.int64)
        for j in range(m):
            ys = self.ty[: self.ny[j], j]
            xs = self.tx[: self.nx[j], j]
            self.lo[: self.nx[j], j] = np.searchsorted(ys, xs, side="left")
            self.hi[: self.nx[j], j] = np.searchsorted(ys, xs, side="right")

    def statistic(self, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
        """P(X > Y) for count arrays ``cx (B, Rx, M)``, ``cy (B, Ry, M)`` -> ``(B,)``."""
        size, ry, m = cy.shape
        cum = np.zeros((size, ry + 1, m))
        np.cumsum(cy, axis=1, out=cum[:, 1:])
        # cum[b, lo[a, j], j] + cum[b, hi[a, j], j], gathered as one flat take per row
        cols = np.arange(m)
        flat = np.concatenate([(self.lo * m + cols).ravel(), (self.hi * m + cols).ravel()])
        both = np.take(cum.reshape(size, -1), flat, axis=1)
        half = self.lo.size
        below = (both[:, :half] + both[:, half:]).reshape(size, *self.lo.shape)
        wins = 0.5 * np.einsum("brm,brm->bm", cx, below)
        return (wins / (self.nx * self.ny)).mean(axis=-1)

    def point(self) -> float:
        return float(self.statistic(self.px[None].astype(float), self.py[None].astype(float))[0])

    def replicates(
        self, *, reps: int, rng: np.random.Generator, batch_size: int | None
    ) -> np.ndarray:
        gx, gy = keyed_generators(rng, ["x", "y"]).values()
        per_rep = 48 * (self.tx.size + self.ty.size + self.ty.shape[1])
        batch_size = batch_size or auto_batch_size(per_rep, reps)
        out = []
        for size in batches(reps, batch_size):
            cx = _counts(stratified_indices(gx, self.nx, size=size), self.tx.shape)
            cy = _counts(stratified_indices(gy, self.ny, size=size), self.ty.shape)
            out.append(self.statistic(cx, cy))
        return np.concatenate(out)


def _run_task(arr: xr.DataArray, what: str) -> xr.DataArray:
    return check_scores(arr, required=("run", "task"), what=what)


def probability_of_improvement(
    x: xr.DataArray,
    y: xr.DataArray,
    *,
    reps: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator,
    batch_size: int | None = None,
) -> dict:
    """P(X > Y) averaged over tasks, with a stratified-bootstrap percentile CI.

    Parameters
    ----------
    x, y
        Scores with dims ``(run, task)`` (any order; NaN = absent run). Their
        task labels must be the same set; run counts may differ.
    reps
        Bootstrap replicates (paper default 2,000).
    rng
        Source of randomness; X and Y get independent streams derived from it.

    Returns
    -------
    dict
        ``{"point": p, "ci": (lo, hi)}`` as Python floats.
    """
    xa = _run_task(x, "x")
    ya = _run_task(y, "y")
    tx = list(xa.indexes["task"])
    ty = set(ya.indexes["task"])
    if set(tx) != ty:
        only_x = sorted(map(str, set(tx) - ty))
        only_y = sorted(map(str, ty - set(tx)))
        raise InputError(
            f"x and y must have the same tasks; only in x: {only_x}, only in y: {only_y}"
        )
    ya = ya.sel(task=tx)
    pair = _Pair(xa.values, ya.values)
    reps_arr = pair.replicates(reps=int(reps), rng=rng, batch_size=batch_size)
    lo, hi = percentile_interval(reps_arr, level=level)
    return {"point": pair.point(), "ci": (float(lo), float(hi))}


def _parse_pair(pair, algorithms: Sequence[str]) -> tuple[str, str]:
    if isinstance(pair, str):
        for i in range(1, len(pair)):
            if pair[i] == ":" and pair[:i] in algorithms and pair[i + 1 :] in algorithms:
                return pair[:i], pair[i + 1 :]
        raise InputError(f"comparison {pair!r} is not X:Y with X and Y among {list(algorithms)}")
    a, b = pair
    for name in (a, b):
        if str(name) not in algorithms:
            raise InputError(f"unknown algorithm {name!r} in comparison; have {list(algorithms)}")
    return str(a), str(b)


def pairwise_probability_of_improvement(
    scores: xr.DataArray,
    pairs: Sequence[tuple[str, str] | str],
    *,
    reps: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator,
    batch_size: int | None = None,
) -> xr.Dataset:
    """P(X > Y) with CIs for several ``(X, Y)`` pairs of algorithms.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``, any order.
    pairs
        ``(X, Y)`` tuples or ``"X:Y"`` strings.
    rng
        Each pair draws from its own stream keyed by ``"X:Y"``, so a pair's
        interval does not depend on the other pairs.

    Returns
    -------
    xarray.Dataset
        Variables ``point``, ``lo``, ``hi`` with dim ``pair`` (labels ``"X:Y"``,
        with coords ``x`` and ``y``); attrs ``reps``, ``level``.
    """
    checked = check_scores(scores)
    algorithms = [str(a) for a in checked.coords["algorithm"].values]
    parsed = [_parse_pair(p, algorithms) for p in pairs]
    if not parsed:
        raise InputError("no pair of algorithms to compare")
    labels = [f"{a}:{b}" for a, b in parsed]
    gens = keyed_generators(rng, labels)
    point, lo, hi = [], [], []
    for (a, b), label in zip(parsed, labels, strict=True):
        res = probability_of_improvement(
            checked.isel(algorithm=algorithms.index(a)),
            checked.isel(algorithm=algorithms.index(b)),
            reps=reps,
            level=level,
            rng=gens[label],
            batch_size=batch_size,
        )
        point.append(res["point"])
        lo.append(res["ci"][0])
        hi.append(res["ci"][1])
    return xr.Dataset(
        {"point": ("pair", point), "lo": ("pair", lo), "hi": ("pair", hi)},
        coords={
            "pair": labels,
            "x": ("pair", [a for a, _ in parsed]),
            "y": ("pair", [b for _, b in parsed]),
        },
        attrs={
            "reps": int(reps),
            "level": float(level),
            "method": "stratified bootstrap (independent per algorithm), percentile",
        },
    )
