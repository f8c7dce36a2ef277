"""Fused bootstrap of the four aggregate metrics on a table without absent runs.

:func:`scalinglab.stats.bootstrap.stratified_replicates` with the metrics of
:mod:`scalinglab.stats.metrics` materializes every resampled table (a gather of
``reps x runs x tasks`` float64 cells), then sorts each replicate's pooled scores
for the IQM. On the Atari 100k data (7 algorithms, 26 games, up to 100 runs,
50,000 replicates) that is 680 million cells gathered, copied and sorted.

Here the run indices are drawn by :class:`scalinglab.stats.draws.BoundedDraws`
(the *same* integers as ``rng.integers(..., dtype=int32)``, without numpy's
per-draw call overhead), and compiled passes per replicate compute, without
building the resampled table:

- the per-task means, summed run after run in the order numpy's ``mean`` over
  the run axis adds them (then ``mean`` and ``median`` over tasks are left to
  numpy, on a ``(batch, tasks)`` array);
- the IQM's sorted middle half by counting sort: a replicate is a multiset of
  the table's cells, so counting how often each cell was drawn and walking the
  cells in the table's value order (sorted once) yields the replicate's sorted
  scores in ``O(cells)`` (one sort serves the whole replicate), and the middle
  ``P - 2 floor(P/4)`` are summed in numpy's pairwise order;
- the optimality gap's clipped scores in ``(run, task)`` order, summed by the
  same pairwise summation as numpy's ``add.reduce`` over a contiguous axis.

The results are bit for bit those of the generic path
(``tests/test_stats_fused.py`` checks it on random tables, with and without
task bootstrap). Tables with absent runs (ragged run counts) take the generic
path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numba import njit

from scalinglab.stats.bootstrap import auto_batch_size, batches
from scalinglab.stats.draws import BoundedDraws

__all__ = ["FUSED_METRICS", "fused_replicates"]

#: Metrics the fused pass computes.
FUSED_METRICS = frozenset({"iqm", "median", "mean", "optimality_gap"})

#: Memory budget of one batch (run-index draws, task means), in bytes: small
#: enough to stay in cache and to be reused by the allocator (no page faults).
FUSED_BATCH_BYTES = 1 * 2**20

#: numpy's pairwise-summation block (``PW_BLOCKSIZE`` in ``loops_utils.h``).
_PW_BLOCK = 128


def _pairwise_plan(n: int) -> np.ndarray:
    """numpy's pairwise-summation tree over ``n`` items, in post-order.

    Rows ``(1, lo, m)``: push the block sum of items ``[lo, lo + m)`` (``m <=
    128``); rows ``(0, 0, 0)``: replace the top two sums by their sum (left +
    right). Recursion is unrolled here because numba's disk cache does not keep
    recursive functions safely.
    """
    rows: list[tuple[int, int, int]] = []

    def walk(lo: int, m: int) -> None:
        if m <= _PW_BLOCK:
            rows.append((1, lo, m))
            return
        half = m // 2
        half -= half % 8
        walk(lo, half)
        walk(lo + half, m - half)
        rows.append((0, 0, 0))

    walk(0, n)
    return np.asarray(rows, dtype=np.int64).reshape(-1, 3)


@njit(cache=True, nogil=True)
def _block_sum(a, lo, n):  # pragma: no cover - compiled
    """numpy's ``pairwise_sum`` of a block ``a[lo:lo + n]``, ``n <= 128``."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0 = a[lo]
    r1 = a[lo + 1]
    r2 = a[lo + 2]
    r3 = a[lo + 3]
    r4 = a[lo + 4]
    r5 = a[lo + 5]
    r6 = a[lo + 6]
    r7 = a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, nogil=True)
def _pairwise_sum(a, plan, stack):  # pragma: no cover - compiled
    """numpy's ``pairwise_sum`` of ``a`` following ``plan`` (:func:`_pairwise_plan`)."""
    top = 0
    for i in range(plan.shape[0]):
        if plan[i, 0] == 1:
            stack[top] = _block_sum(a, plan[i, 1], plan[i, 2])
            top += 1
        else:
            stack[top - 2] = stack[top - 2] + stack[top - 1]
            top -= 1
    return stack[0]


@njit(cache=True, nogil=True)
def _fused_batch(
    ordered,
    rank,
    n_tasks,
    draw,
    slots,
    cut,
    gamma,
    plan,
    middle_plan,
    want_means,
    want_iqm,
    want_gap,
    means,
    iqm,
    gap,
):  # pragma: no cover - compiled
    """One batch: ``draw`` ``(B, R, S)`` run indices, ``slots`` ``(B, S)`` task of
    each slot; writes ``means`` ``(B, S)``, ``iqm`` ``(B,)``, ``gap`` ``(B,)``.
    Cell ``c = run * n_tasks + task`` has value ``ordered[rank[c]]`` (``ordered``:
    the table's values sorted), so a draw needs one gather for its value and its
    place in the counting sort."""
    size, rows, slots_n = draw.shape
    cells = ordered.shape[0]
    pooled = rows * slots_n
    stop = pooled - cut
    counts = np.zeros(cells, dtype=np.int32)
    cell = np.empty(pooled, dtype=np.int32)
    value = np.empty(pooled, dtype=np.float64)
    clipped = np.empty(pooled, dtype=np.float64)
    acc = np.empty(slots_n, dtype=np.float64)
    srt = np.empty(pooled + 4, dtype=np.float64)
    base = np.empty(slots_n, dtype=np.int64)
    stack = np.empty(max(plan.shape[0], middle_plan.shape[0]) + 1, dtype=np.float64)
    for b in range(size):
        # Simple passes over the replicate's P draws, in (run, slot) order (each
        # compiles to a tight loop; one pass doing everything is slower).
        for j in range(slots_n):
            base[j] = slots[b, j]
        k = 0
        for r in range(rows):
            for j in range(slots_n):
                cell[k] = rank[draw[b, r, j] * n_tasks + base[j]]
                k += 1
        for k in range(pooled):
            value[k] = ordered[cell[k]]
        if want_means:
            for j in range(slots_n):
                acc[j] = 0.0
            for r in range(rows):
                for j in range(slots_n):
                    acc[j] += value[r * slots_n + j]
            for j in range(slots_n):
                means[b, j] = acc[j] / rows
        if want_gap:
            for k in range(pooled):
                v = value[k]
                clipped[k] = v if v < gamma else gamma
            gap[b] = gamma - (0.0 + _pairwise_sum(clipped, plan, stack)) / pooled
        if want_iqm:
            for k in range(pooled):
                counts[cell[k]] += 1
            # Branch-free counting-sort walk: cell t owns sorted positions
            # [pos, pos + n); it writes 4 copies whatever n (a later cell
            # overwrites the surplus), more only in the rare case n > 4. The
            # middle half is then averaged as numpy's mean averages it.
            pos = 0
            t = 0
            while pos < stop:
                n = counts[t]
                counts[t] = 0
                v = ordered[t]
                srt[pos] = v
                srt[pos + 1] = v
                srt[pos + 2] = v
                srt[pos + 3] = v
                if n > 4:
                    for i in range(4, n):
                        srt[pos + i] = v
                pos += n
                t += 1
            counts[t:] = 0  # the cells not walked
            iqm[b] = (0.0 + _pairwise_sum(srt[cut:stop], middle_plan, stack)) / (stop - cut)


def fused_replicates(
    values: np.ndarray,
    metrics: Sequence[str],
    *,
    reps: int,
    rng: np.random.Generator,
    task_bootstrap: bool = False,
    batch_size: int | None = None,
    gamma: float = 1.0,
    on_batch: Callable[[int], object] | None = None,
) -> np.ndarray:
    """Bootstrap replicates of aggregate metrics of a table with no absent run.

    Equal bit for bit to ``stratified_replicates(values, stack_statistics(fns),
    reps=reps, rng=rng, task_bootstrap=task_bootstrap)`` with ``fns`` the named
    metrics of :mod:`scalinglab.stats.metrics`, at any batch size.

    Parameters
    ----------
    values
        Shape ``(runs, tasks)``, no NaN.
    metrics
        Names among :data:`FUSED_METRICS`, in output order.
    reps, rng, task_bootstrap, batch_size, on_batch
        As in :func:`scalinglab.stats.bootstrap.stratified_replicates`.
    gamma
        Threshold of the optimality gap.

    Returns
    -------
    numpy.ndarray
        Shape ``(reps, len(metrics))``.

    Raises
    ------
    ValueError
        If the table has an absent (NaN) cell or a metric is not fused.
    """
    table = np.ascontiguousarray(np.asarray(values, dtype=float))
    if table.ndim != 2 or table.shape[1] == 0 or table.shape[0] == 0:
        raise ValueError(f"expected a non-empty (runs, tasks) table, got shape {table.shape}")
    if np.isnan(table).any():
        raise ValueError("fused_replicates needs a table without absent (NaN) runs")
    unknown = [m for m in metrics if m not in FUSED_METRICS]
    if unknown:
        raise ValueError(f"metrics {unknown} are not fused; choose from {sorted(FUSED_METRICS)}")
    rows, n_tasks = table.shape
    flat = table.ravel()
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    rank = np.empty(flat.size, dtype=np.int32)
    rank[order] = np.arange(flat.size, dtype=np.int32)
    pooled = flat.size
    cut = pooled // 4
    plan = _pairwise_plan(pooled)
    middle_plan = _pairwise_plan(pooled - 2 * cut)
    want_means = "mean" in metrics or "median" in metrics
    want_iqm = "iqm" in metrics
    want_gap = "optimality_gap" in metrics
    per_rep = pooled * 4 + n_tasks * 16 + 64
    if batch_size is None:
        batch_size = auto_batch_size(per_rep, reps, budget=FUSED_BATCH_BYTES)
    task_rng = rng.spawn(1)[0] if task_bootstrap else None
    out = np.empty((reps, len(metrics)))
    buffer = np.empty(min(batch_size, reps) * pooled, dtype=np.int32)
    done = 0
    # The same generator calls as stratified_indices on a rectangular table;
    # BoundedDraws gives rng.integers(0, rows, ..., dtype=int32)'s integers.
    with BoundedDraws(rng, rows) as runs:
        for size in batches(reps, batch_size):
            if task_bootstrap:
                assert task_rng is not None
                slots = task_rng.integers(0, n_tasks, size=(size, 1, n_tasks))[:, 0, :]
            else:
                slots = np.broadcast_to(np.arange(n_tasks), (size, n_tasks))
            draw = runs.draw(size * pooled, out=buffer).reshape(size, rows, n_tasks)
            means = np.empty((size, n_tasks) if want_means else (0, 0))
            iqm = np.empty(size if want_iqm else 0)
            gap = np.empty(size if want_gap else 0)
            _fused_batch(
                ordered,
                rank,
                n_tasks,
                draw,
                np.ascontiguousarray(slots, dtype=np.int64),
                cut,
                float(gamma),
                plan,
                middle_plan,
                want_means,
                want_iqm,
                want_gap,
                means,
                iqm,
                gap,
            )
            block = out[done : done + size]
            for k, name in enumerate(metrics):
                if name == "iqm":
                    block[:, k] = iqm
                elif name == "mean":
                    block[:, k] = means.mean(axis=-1)
                elif name == "median":
                    block[:, k] = np.median(means, axis=-1)
                else:
                    block[:, k] = gap
            done += size
            if on_batch is not None:
                on_batch(size)
    return out
