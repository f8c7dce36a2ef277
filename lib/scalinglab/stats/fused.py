"""Fused bootstrap of the four aggregate metrics on a table without absent runs.

:func:`scalinglab.stats.bootstrap.stratified_replicates` with the metrics of
:mod:`scalinglab.stats.metrics` materializes every resampled table (a gather of
``reps x runs x tasks`` float64 cells), then sorts each replicate's pooled scores
for the IQM. On the Atari 100k data (7 algorithms, 26 games, up to 100 runs,
50,000 replicates) that is 680 million cells gathered, copied and sorted.

Here one compiled call (:func:`_fused_chunk`, the GIL released) bootstraps a
whole chunk of replicates. Per replicate it

- draws the run indices with the generator itself in compiled code
  (:func:`scalinglab.stats.draws.fill_bounded`: the *same* integers as
  ``rng.integers(0, runs, ..., dtype=int32)``, numpy's PCG64 and Lemire stream);
- walks the draws once, task slot by task slot (two at a time), summing each
  slot's runs in run order as numpy's ``mean`` over the run axis does, storing
  the optimality gap's clipped scores in ``(run, task)`` order and counting how
  often each cell of the table was drawn;
- sums the clipped scores, and the slots' means (for the mean over tasks), in
  numpy's pairwise order (:mod:`scalinglab.stats.pairwise`), and takes the
  median over tasks as numpy does: the mean of the two middle values (found by
  selection), summed from 0.0;
- takes the IQM's sorted middle half by counting sort: a replicate is a multiset
  of the table's cells, so walking the cells in the table's value order (sorted
  once) with their counts yields the replicate's sorted scores in ``O(cells)``.
  Blocks of 64 cells that lie wholly below the lower quartile are skipped on
  their count alone, and only positions ``[P/4, P - P/4)`` are written (4 at a
  time, one vector store); the middle ``P - 2 floor(P/4)`` are averaged as
  numpy's ``mean`` averages them.

The results are bit for bit those of the generic path
(``tests/test_stats_fused.py`` checks it on random tables, with and without
task bootstrap), whatever the chunk size. Bit generators other than PCG64 draw
through numpy (same integers, slower). Tables with absent runs (ragged run
counts) take the generic path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from scalinglab.stats.bootstrap import auto_batch_size, batches
from scalinglab.stats.draws import fill_bounded, is_pcg64, pcg_state, store_pcg_state
from scalinglab.stats.pairwise import pairwise_plan, pairwise_sum

__all__ = ["FUSED_METRICS", "fused_replicates"]

#: Metrics the fused pass computes.
FUSED_METRICS = frozenset({"iqm", "median", "mean", "optimality_gap"})

#: Memory budget of one chunk's outputs (metrics, task slots), in bytes.
FUSED_BATCH_BYTES = 1 * 2**20

#: Row of each metric in the compiled pass's output.
_ROW = {"iqm": 0, "optimality_gap": 1, "mean": 2, "median": 3}

#: Cells per block of the IQM's counting-sort walk.
_BLOCK = 64

_0 = np.uint64(0)
_1 = np.uint64(1)
_2 = np.uint64(2)
_3 = np.uint64(3)
_4 = np.uint64(4)


@intrinsic
def _splat4(typingctx, a, i, v):  # pragma: no cover - compiled
    """``a[i:i + 4] = v`` as one 4-wide vector store (``a`` float64, contiguous)."""
    sig = types.void(a, i, v)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        vec_t = ir.VectorType(ir.DoubleType(), 4)
        undef = ir.Constant(vec_t, ir.Undefined)
        vec = builder.insert_element(undef, args[2], ir.Constant(ir.IntType(32), 0))
        zeros = ir.Constant(ir.VectorType(ir.IntType(32), 4), [0, 0, 0, 0])
        vec = builder.shuffle_vector(vec, undef, zeros)
        builder.store(vec, builder.bitcast(ptr, vec_t.as_pointer()), align=8)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True)
def _select(a, k):  # pragma: no cover - compiled
    """Reorder ``a`` (float64, no NaN) so that ``a[k]`` is its ``k``-th smallest value,
    smaller or equal values before it and larger or equal after (Hoare's selection)."""
    lo = 0
    hi = a.shape[0] - 1
    while lo < hi:
        pivot = a[(lo + hi) // 2]
        i = lo
        j = hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while pivot < a[j]:
                j -= 1
            if i <= j:
                tmp = a[i]
                a[i] = a[j]
                a[j] = tmp
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return


@njit(cache=True, nogil=True)
def _fused_chunk(
    val, rank, ordered, rows, slots, st, given, cut, gamma, plan, middle_plan, task_plan, out
):  # pragma: no cover - compiled
    """Bootstrap ``B = out.shape[1]`` replicates of a ``(rows, tasks)`` table.

    ``val`` ``(C,)``: the table flattened, cell ``c = run * tasks + task``;
    ``ordered`` ``(C,)``: its values sorted, ``rank`` ``(C,)`` uint32: the place
    of each cell in ``ordered``; ``slots`` ``(B or 1, S)``: the task of each slot
    (one row: the same for every replicate); ``plan``, ``middle_plan``,
    ``task_plan``: pairwise plans of ``rows * S``, of the IQM's middle and of ``S``
    items; ``cut``: ``floor(rows * S / 4)``;
    ``st``: PCG64 state (:func:`~scalinglab.stats.draws.pcg_state`) the run
    indices are drawn from, unless ``given`` ``(B, rows * S)`` holds them.
    Writes ``out`` ``(4, B)``: IQM, optimality gap, mean and median of the
    replicates (the last two over the slots' mean scores, as numpy's ``mean``
    and ``median`` over the task axis: sums from 0.0 in pairwise order, the
    median the mean of the two middle values).
    """
    size = out.shape[1]
    slots_n = slots.shape[1]
    cells = ordered.shape[0]
    n_tasks = np.uint64(cells // rows)
    pooled = rows * slots_n
    ucut = np.uint64(cut)
    ustop = np.uint64(pooled - cut)
    usn = np.uint64(slots_n)
    draw = np.empty(pooled, dtype=np.int32)
    words = np.empty(pooled // 2 + 1, dtype=np.uint64)
    clipped = np.empty(pooled, dtype=np.float64)
    n_blocks = (cells + _BLOCK - 1) // _BLOCK
    counts = np.zeros(n_blocks * _BLOCK, dtype=np.int32)
    srt = np.empty(pooled + 4, dtype=np.float64)
    steps = max(plan.shape[0], middle_plan.shape[0], task_plan.shape[0])
    stack = np.empty(steps + 1, dtype=np.float64)
    base = np.empty(slots_n, dtype=np.uint64)
    means = np.empty(slots_n, dtype=np.float64)
    half = slots_n // 2
    for b in range(size):
        row = b if slots.shape[0] > 1 else 0
        for j in range(slots_n):
            base[j] = np.uint64(slots[row, j])
        if given.shape[0] > 0:
            draw[:] = given[b]
        else:
            fill_bounded(st, rows, draw, words)
        # One walk over the draws, slot pair by slot pair, runs in order.
        for j in range(0, slots_n - 1, 2):
            s0 = 0.0
            s1 = 0.0
            t0 = base[j]
            t1 = base[j + 1]
            k = np.uint64(j)
            for _ in range(rows):
                c0 = np.uint64(draw[k]) * n_tasks + t0
                c1 = np.uint64(draw[k + _1]) * n_tasks + t1
                v0 = val[c0]
                v1 = val[c1]
                s0 += v0
                s1 += v1
                clipped[k] = v0 if v0 < gamma else gamma
                clipped[k + _1] = v1 if v1 < gamma else gamma
                counts[np.uint64(rank[c0])] += 1
                counts[np.uint64(rank[c1])] += 1
                k += usn
            means[j] = s0 / rows
            means[j + 1] = s1 / rows
        if slots_n % 2:
            s0 = 0.0
            t0 = base[slots_n - 1]
            k = np.uint64(slots_n - 1)
            for _ in range(rows):
                c0 = np.uint64(draw[k]) * n_tasks + t0
                v0 = val[c0]
                s0 += v0
                clipped[k] = v0 if v0 < gamma else gamma
                counts[np.uint64(rank[c0])] += 1
                k += usn
            means[slots_n - 1] = s0 / rows
        out[1, b] = gamma - (0.0 + pairwise_sum(clipped, plan, stack)) / pooled
        out[2, b] = (0.0 + pairwise_sum(means, task_plan, stack)) / slots_n
        if slots_n % 2:
            _select(means, half)
            out[3, b] = 0.0 + (0.0 + means[half])
        else:
            _select(means, half)
            _select(means[:half], half - 1)
            out[3, b] = (0.0 + ((0.0 + means[half - 1]) + means[half])) / 2
        # Counting sort: skip the blocks, then the cells, wholly below the cut
        # (their counts alone), then write sorted positions [cut, stop). Each
        # cell writes 4 copies whatever its count (the next one overwrites the
        # surplus), more only in the rare case of a count above 4.
        pos = _0
        t = _0
        while True:
            s = _0
            for i in range(_BLOCK):
                s += np.uint64(counts[t + np.uint64(i)])
            if pos + s > ucut:
                break
            pos += s
            t += np.uint64(_BLOCK)
        while pos + np.uint64(counts[t]) <= ucut:
            pos += np.uint64(counts[t])
            t += _1
        while pos < ustop:
            n = np.uint64(counts[t])
            _splat4(srt, pos, ordered[t])
            if n > _4:
                i = _4
                while i < n:
                    srt[pos + i] = ordered[t]
                    i += _1
            pos += n
            t += _1
        counts[:] = 0
        mid = srt[ucut:ustop]
        out[0, b] = (0.0 + pairwise_sum(mid, middle_plan, stack)) / (ustop - ucut)


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
    metrics of :mod:`scalinglab.stats.metrics`, at any batch size, and leaves
    ``rng`` in the same state.

    Parameters
    ----------
    values
        Shape ``(runs, tasks)``, no NaN.
    metrics
        Names among :data:`FUSED_METRICS`, in output order.
    reps, rng, task_bootstrap, batch_size, on_batch
        As in :func:`scalinglab.stats.bootstrap.stratified_replicates`
        (``batch_size``: replicates per compiled call).
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
    rank = np.empty(flat.size, dtype=np.uint32)
    rank[order] = np.arange(flat.size, dtype=np.uint32)
    pooled = flat.size
    cut = pooled // 4
    plan = pairwise_plan(pooled)
    middle_plan = pairwise_plan(pooled - 2 * cut)
    task_plan = pairwise_plan(n_tasks)
    per_rep = (n_tasks + 2) * 8 + (n_tasks * 8 if task_bootstrap else 0) + len(metrics) * 8
    if batch_size is None:
        batch_size = auto_batch_size(per_rep, reps, budget=FUSED_BATCH_BYTES)
    task_rng = rng.spawn(1)[0] if task_bootstrap else None
    compiled = is_pcg64(rng)
    st = pcg_state(rng) if compiled else np.zeros(8, dtype=np.uint64)
    no_draws = np.empty((0, pooled), dtype=np.int32)
    all_slots = np.arange(n_tasks, dtype=np.int64)[None, :]
    out = np.empty((reps, len(metrics)))
    done = 0
    # The same generator calls as stratified_indices on a rectangular table:
    # task slots from task_rng, then the run indices of the batch from rng.
    for size in batches(reps, batch_size):
        if task_bootstrap:
            assert task_rng is not None
            slots = task_rng.integers(0, n_tasks, size=(size, 1, n_tasks))[:, 0, :]
        else:
            slots = all_slots
        given = no_draws
        if not compiled:
            given = rng.integers(0, rows, size=(size, pooled), dtype=np.int32)
        res = np.empty((4, size))
        _fused_chunk(
            flat,
            rank,
            ordered,
            rows,
            np.ascontiguousarray(slots, dtype=np.int64),
            st,
            given,
            cut,
            float(gamma),
            plan,
            middle_plan,
            task_plan,
            res,
        )
        block = out[done : done + size]
        for k, name in enumerate(metrics):
            block[:, k] = res[_ROW[name]]
        done += size
        if on_batch is not None:
            on_batch(size)
    if compiled:
        store_pcg_state(rng, st)
    return out
