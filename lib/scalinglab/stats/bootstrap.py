"""The one bootstrap engine shared by ``stats`` and ``fitting``.

Resampling is done as index arrays drawn from an explicit ``np.random.Generator``
(never the global RNG), so the same seed gives the same interval bit for bit.

Stratified bootstrap of scores (tasks are strata)
-------------------------------------------------
A score table has shape ``(runs, tasks)`` with NaN for absent runs. It is first
*compacted* (:func:`compact_runs`): the present runs of each task move to the
top, in their original order, so task ``m`` has its runs in rows ``[0, n_m)``.
:func:`stratified_indices` then draws, for a batch of replicates at once, flat
indices into that table of shape ``(batch, R, M)`` (``R = max n_m``): in every
replicate each task's ``n_m`` runs are resampled with replacement among its own
``n_m`` runs; the remaining rows point at the task's absent (NaN) cells, so the
resampled array keeps exactly the ragged shape of the data. With
``task_bootstrap`` the ``M`` task slots are first resampled with replacement too
(as rliable's ``StratifiedBootstrap(task_bootstrap=True)``).

:func:`stratified_replicates` runs a statistic on ``(batch, R, M)`` resampled
arrays, batch after batch, with memory bounded by :func:`auto_batch_size`
(about 256 MB per batch). Indices are drawn with ``Generator.integers(...,
dtype=int32)``, whose stream does not depend on how the draws are split into
batches, so ``batch_size`` never changes a result.

Intervals
---------
:func:`percentile_interval` (quantiles of the replicates, linear interpolation as
``numpy.percentile``) and :func:`bca_interval` (bias-corrected and accelerated,
with the acceleration from a leave-one-run-out jackknife, :func:`jackknife_runs`,
exactly as ``arch``'s ``IIDBootstrap`` which rliable uses), and rliable's two other
methods, :func:`basic_interval` (``2 * point`` minus the opposite percentile, arch's
``basic``) and :func:`bc_interval` (bias-corrected percentile, arch's ``bc``: BCa with
zero acceleration). These are hand-written
because scipy's ``bootstrap`` cannot resample within strata nor accept a
stratified jackknife; ``tests/test_stats_bootstrap.py`` cross-checks BCa with
``scipy.stats.bootstrap`` on a single task, where the two definitions coincide.

Reproducible streams
--------------------
:func:`keyed_generators` gives every algorithm (or pair, or other unit) its own
generator derived from one draw of the caller's generator and a hash of the
unit's *name*. A unit's resamples therefore depend only on the seed and its name,
never on which other units are present or in which order.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

#: Memory budget of one batch of replicates, in bytes.
BATCH_BYTES = 256 * 2**20


def resample_groups(rng: np.random.Generator, n_groups: int, reps: int) -> np.ndarray:
    """Indices of groups drawn with replacement, one row per bootstrap replicate.

    Returns
    -------
    numpy.ndarray
        Shape ``(reps, n_groups)``, dtype int64, values in ``[0, n_groups)``.
    """
    if n_groups < 1 or reps < 1:
        raise ValueError(f"need n_groups >= 1 and reps >= 1, got {n_groups}, {reps}")
    return rng.integers(0, n_groups, size=(reps, n_groups))


def percentile_interval(
    replicates: np.ndarray, *, level: float = 0.95, axis: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap replicates along ``axis``.

    NaN replicates (e.g. failed refits) are ignored; where every replicate is NaN the
    interval is NaN (no interval). An end that falls between two infinite replicates (a
    refit whose parameter ran to infinity) is NaN as well. Neither prints numpy's warning
    into a report.

    Returns
    -------
    lo, hi
        Arrays of the replicates' shape with ``axis`` removed.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    alpha = (1 - level) / 2
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)
        lo, hi = np.nanquantile(np.asarray(replicates, dtype=float), [alpha, 1 - alpha], axis=axis)
    return lo, hi


def basic_interval(
    replicates: np.ndarray, point: np.ndarray, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Basic (reverse-percentile) bootstrap interval, as ``arch``'s ``method="basic"``.

    ``lo = 2 point - q(1 - alpha/2)``, ``hi = 2 point - q(alpha/2)`` with ``q`` the
    replicates' quantiles (linear interpolation); NaN replicates are ignored.

    Parameters
    ----------
    replicates
        Shape ``(reps, K)``.
    point
        Shape ``(K,)``.

    Returns
    -------
    lo, hi
        Shape ``(K,)`` each.
    """
    q_lo, q_hi = percentile_interval(replicates, level=level, axis=0)
    point = np.asarray(point, dtype=float)
    return 2 * point - np.asarray(q_hi), 2 * point - np.asarray(q_lo)


def bc_interval(
    replicates: np.ndarray, point: np.ndarray, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Bias-corrected percentile interval, as ``arch``'s ``method="bc"`` (BCa with a = 0).

    Bias ``z0 = Phi^-1(mean(replicates < point))``; the interval is the replicates'
    quantiles at ``Phi(2 z0 + z_{alpha/2})`` and ``Phi(2 z0 + z_{1-alpha/2})``.

    Parameters
    ----------
    replicates
        Shape ``(reps, K)``.
    point
        Shape ``(K,)``.

    Returns
    -------
    lo, hi
        Shape ``(K,)`` each; as :func:`bca_interval` for constant replicates
        (that value) and for a bias that cannot be estimated (NaN, with a warning).
    """
    reps = np.asarray(replicates, dtype=float)
    point = np.asarray(point, dtype=float)
    jackknife = np.zeros((2, point.shape[0]))  # constant jackknife: acceleration 0
    return bca_interval(reps, point, jackknife, level=level)


def bca_interval(
    replicates: np.ndarray, point: np.ndarray, jackknife: np.ndarray, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Bias-corrected and accelerated (BCa) bootstrap interval.

    Bias ``z0 = Phi^-1(mean(replicates < point))`` (strict, as ``arch``);
    acceleration ``a = sum(u^3) / (6 (sum u^2)^1.5)`` with ``u = mean(jk) - jk``.

    Parameters
    ----------
    replicates
        Shape ``(reps, K)``: bootstrap replicates of K statistics.
    point
        Shape ``(K,)``: the statistics on the original data.
    jackknife
        Shape ``(n_jk, K)``: the statistics with one unit left out each time
        (see :func:`jackknife_runs`).

    Returns
    -------
    lo, hi
        Shape ``(K,)`` each. A statistic whose replicates are all equal gets that
        value as both ends; one whose replicates all lie on one side of the point
        (bias not estimable) gets NaN, with a warning.
    """
    from scipy import stats as sps  # here, not at import: the CLI starts faster without it

    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    reps = np.asarray(replicates, dtype=float)
    point = np.asarray(point, dtype=float)
    jk = np.asarray(jackknife, dtype=float)
    alpha = (1 - level) / 2
    z = sps.norm.ppf([alpha, 1 - alpha])
    lo = np.full(point.shape, np.nan)
    hi = np.full(point.shape, np.nan)
    for k in range(point.shape[0]):
        r = reps[:, k]
        if np.all(r == r[0]):
            lo[k] = hi[k] = r[0]
            continue
        p = np.mean(r < point[k])
        if p <= 0.0 or p >= 1.0:
            warnings.warn(
                f"BCa bias cannot be estimated for statistic {k} (all replicates on one "
                "side of the point estimate); its interval is NaN",
                RuntimeWarning,
                stacklevel=2,
            )
            continue
        z0 = sps.norm.ppf(p)
        u = jk[:, k].mean() - jk[:, k]
        denom = 6.0 * np.sum(u**2) ** 1.5
        a = np.sum(u**3) / denom if denom > 0 else 0.0
        q = sps.norm.cdf(z0 + (z0 + z) / (1.0 - a * (z0 + z)))
        lo[k], hi[k] = np.percentile(r, 100 * q)
    return lo, hi


def keyed_generators(
    rng: np.random.Generator, keys: Iterable[str]
) -> dict[str, np.random.Generator]:
    """One independent generator per key, derived from ``rng`` and the key's name.

    Draws 128 bits of entropy from ``rng`` once, then seeds each key's PCG64
    generator with that entropy plus the SHA-256 of the key. A key's stream thus
    depends only on ``rng``'s state and the key itself, not on the other keys or
    their order.

    Returns
    -------
    dict
        ``{key: numpy.random.Generator}`` in the order of ``keys``.
    """
    base = [int(w) for w in rng.integers(0, 2**32, size=4, dtype=np.uint64)]
    out: dict[str, np.random.Generator] = {}
    for key in keys:
        digest = hashlib.sha256(str(key).encode("utf-8")).digest()
        words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
        out[key] = np.random.Generator(np.random.PCG64(np.random.SeedSequence(base + words)))
    return out


def auto_batch_size(bytes_per_replicate: float, reps: int, *, budget: int = BATCH_BYTES) -> int:
    """Replicates per batch so that one batch stays below ``budget`` bytes."""
    return int(max(1, min(reps, budget // max(1.0, float(bytes_per_replicate)))))


def batches(reps: int, batch_size: int) -> Iterator[int]:
    """Sizes of consecutive batches covering ``reps`` replicates."""
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    done = 0
    while done < reps:
        size = min(batch_size, reps - done)
        yield size
        done += size


def compact_runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move each task's present runs to the top, keeping their order.

    Parameters
    ----------
    values
        Shape ``(runs, tasks)``; NaN = absent.

    Returns
    -------
    table
        Shape ``(R, tasks)`` with ``R`` the largest present-run count; task ``m``
        has its runs in rows ``[0, n_m)`` and NaN below.
    n_runs
        Shape ``(tasks,)``, int64: present runs per task.

    Raises
    ------
    ValueError
        If a task has no present run.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"expected a (runs, tasks) table, got shape {values.shape}")
    absent = np.isnan(values)
    n_runs = (~absent).sum(axis=0).astype(np.int64)
    if values.shape[1] == 0:
        raise ValueError("the score table has no task")
    if (n_runs == 0).any():
        raise ValueError(f"task column {int(np.flatnonzero(n_runs == 0)[0])} has no present run")
    order = np.argsort(absent, axis=0, kind="stable")
    table = np.take_along_axis(values, order, axis=0)[: int(n_runs.max())]
    return np.ascontiguousarray(table), n_runs


def stratified_indices(
    rng: np.random.Generator,
    n_runs: np.ndarray,
    *,
    size: int,
    task_bootstrap: bool = False,
    task_rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Flat indices of a batch of stratified bootstrap resamples of a compacted table.

    Parameters
    ----------
    n_runs
        Shape ``(M,)``: present runs per task of a table of shape ``(R, M)``,
        ``R = max(n_runs)``, compacted as by :func:`compact_runs`.
    size
        Replicates in the batch.
    task_bootstrap
        Also resample the M task slots with replacement.
    task_rng
        Generator for the task draws (default ``rng``). Callers that batch pass a
        separate stream, so that task and run draws do not interleave and the
        replicates do not depend on the batch size.

    Returns
    -------
    numpy.ndarray
        Shape ``(size, R, M)``, int64: ``table.ravel()[idx]`` is the batch of
        resampled tables; entry ``(b, r, j)`` is run ``r`` of task slot ``j``,
        drawn uniformly among the slot's task's runs for ``r < n``, and the
        slot's task's absent cell ``(r, task)`` otherwise.
    """
    n_runs = np.asarray(n_runs, dtype=np.int64)
    n_tasks = n_runs.shape[0]
    rows = int(n_runs.max())
    ragged = bool((n_runs != rows).any())
    if task_bootstrap:
        slot_task = (task_rng or rng).integers(0, n_tasks, size=(size, 1, n_tasks))
        high = n_runs[slot_task]
    else:
        slot_task = np.arange(n_tasks)
        high = n_runs
    if ragged:
        draw = rng.integers(0, np.broadcast_to(high, (size, rows, n_tasks)), dtype=np.int32)
    else:
        draw = rng.integers(0, rows, size=(size, rows, n_tasks), dtype=np.int32)
    if ragged:
        r = np.arange(rows, dtype=np.int32)[:, None]
        draw = np.where(r < high, draw, r)
    idx = np.multiply(draw, n_tasks, dtype=np.int64)
    idx += slot_task
    return idx


def stratified_replicates(
    values: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    reps: int,
    rng: np.random.Generator,
    task_bootstrap: bool = False,
    batch_size: int | None = None,
    n_stats: int | None = None,
    on_batch: Callable[[int], object] | None = None,
) -> np.ndarray:
    """Bootstrap replicates of ``statistic`` under stratified resampling of runs.

    Parameters
    ----------
    values
        Shape ``(runs, tasks)``; NaN = absent run (each task needs one present).
    statistic
        Maps resampled tables of shape ``(batch, R, M)`` (NaN = absent) to an
        array of shape ``(batch, K)``.
    reps
        Number of replicates.
    batch_size
        Replicates per batch; default: as many as fit in about 256 MB. It does
        not change the result.
    n_stats
        K, only used to size the memory estimate.
    on_batch
        Called with the number of replicates finished after every batch
        (progress bars).

    Returns
    -------
    numpy.ndarray
        Shape ``(reps, K)``.
    """
    table, n_runs = compact_runs(values)
    flat = table.ravel()
    cells = table.size
    if batch_size is None:
        batch_size = auto_batch_size(cells * 48 + 16 * (n_stats or 8), reps, budget=BATCH_BYTES)
    out: list[np.ndarray] = []
    task_rng = rng.spawn(1)[0] if task_bootstrap else None
    for size in batches(reps, batch_size):
        idx = stratified_indices(
            rng, n_runs, size=size, task_bootstrap=task_bootstrap, task_rng=task_rng
        )
        res = np.asarray(statistic(np.take(flat, idx)), dtype=float)
        out.append(res.reshape(size, -1))
        if on_batch is not None:
            on_batch(size)
    return np.concatenate(out, axis=0)


def jackknife_runs(
    values: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    batch_size: int | None = None,
) -> np.ndarray:
    """Leave-one-run-out jackknife of ``statistic`` (for the BCa acceleration).

    Replicate ``i`` removes the ``i``-th present run of every task (for
    rectangular data: run ``i`` across all tasks, exactly ``arch``'s jackknife
    over the rows of rliable's ``(runs, tasks)`` matrix). A task with a single
    run keeps it.

    Parameters
    ----------
    values
        Shape ``(runs, tasks)``; NaN = absent run.
    statistic
        As in :func:`stratified_replicates`.
    batch_size
        Leave-one-out tables per batch; default: as many as fit in about 256 MB
        (the ``R`` tables of ``R x M`` cells never exist at once). It does not
        change the result.

    Returns
    -------
    numpy.ndarray
        Shape ``(R, K)`` with ``R`` the largest present-run count.
    """
    table, n_runs = compact_runs(values)
    rows = table.shape[0]
    removable = n_runs > 1
    if batch_size is None:
        batch_size = auto_batch_size(table.size * 48, rows, budget=BATCH_BYTES)
    out = []
    start = 0
    for size in batches(rows, batch_size):
        jk = np.repeat(table[None], size, axis=0)
        for k in range(size):
            jk[k, start + k, removable] = np.nan
        out.append(np.asarray(statistic(jk), dtype=float).reshape(size, -1))
        start += size
    return np.concatenate(out, axis=0)


def stack_statistics(
    functions: Sequence[Callable[[np.ndarray], np.ndarray]],
) -> Callable[[np.ndarray], np.ndarray]:
    """Combine metrics ``f(x) -> (...)`` into one statistic ``x -> (..., K)``."""

    def statistic(x: np.ndarray) -> np.ndarray:
        return np.stack([np.asarray(f(x), dtype=float) for f in functions], axis=-1)

    return statistic
