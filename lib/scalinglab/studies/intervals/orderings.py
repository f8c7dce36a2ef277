"""Published orderings by point estimate, tested with intervals (the paper's re-analysis).

Agarwal et al. 2021 re-analyse published results: a leaderboard orders
algorithms by a point estimate (median or mean normalized score), and the
paper asks which of those orderings the interval estimates support, how often
a few-run evaluation would have reversed them, and how much of the mean a few
outlier tasks make. This module turns those questions into numbers with
intervals, for any scores with dims ``(algorithm, run, task)``:

- :func:`leaderboard_pairs`: the adjacent pairs of the ranking by a point
  estimate (what a leaderboard states: "X beats Y");
- :func:`metric_difference`: the CI of a metric's difference between two
  algorithms (IQM(X) - IQM(Y)), from independent stratified resamples of each;
- :func:`ordering_table`: each such pair with both point estimates, whether the
  IQM intervals overlap, the IQM difference with its interval, P(X > Y) with its
  interval, and the paper's reading of the pair (:func:`ordering_reading`);
- :func:`separated_pairs`: pairs whose P(X > Y) interval excludes 0.5 (the full
  data separate them);
- :func:`pair_flip_rates`: how often ``n_runs``-run studies order given pairs
  unlike all runs, with an outer-bootstrap interval (claim 1 on the pairs that
  matter, rather than on near-ties);
- :func:`top_task_share`: the share of the mean contributed by the highest
  ``k`` tasks, with an interval (the mean's sensitivity to outliers);
- :func:`fewest_runs`: the fewest runs of any (algorithm, task) cell, the ``n`` a
  stratified bootstrap rests on (where a report reads its coverage).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import percentile_interval
from scalinglab.stats.layout import check_scores
from scalinglab.stats.metrics import AGGREGATES, per_task_means, resolve_metrics
from scalinglab.stats.reliability import outer_bootstrap
from scalinglab.stats.replicates import metric_replicates
from scalinglab.stats.variability import rank_flip_probability, subsample_point_estimates

#: The paper's bar for a meaningful improvement (Bouthillier et al. 2021, used by
#: Agarwal et al. 2021): P(X > Y) at least this, with its interval above 0.5.
MEANINGFUL_POI = 0.75

__all__ = [
    "MEANINGFUL_POI",
    "fewest_runs",
    "leaderboard_pairs",
    "metric_difference",
    "ordering_reading",
    "ordering_table",
    "pair_flip_rates",
    "separated_pairs",
    "top_task_share",
]


def fewest_runs(scores: xr.DataArray, algorithms: Sequence[str] | None = None) -> int:
    """The fewest present runs of any (algorithm, task) cell of ``scores`` (dims
    ``(algorithm, run, task)``, NaN = absent run), over ``algorithms`` (None: all).

    A stratified bootstrap resamples each task's runs: with ``n`` runs per task its
    variance is ``(n - 1) / n`` of the sampling variance, so its coverage is a function
    of ``n`` (:mod:`scalinglab.stats.method_coverage`), and the fewest runs is where it
    covers least.
    """
    sub = scores if algorithms is None else scores.sel(algorithm=list(algorithms))
    counts = np.isfinite(sub.transpose("algorithm", "run", "task").values).sum(axis=1)
    return int(counts.min())


def _points(scores: xr.DataArray, metric: str) -> dict[str, float]:
    checked = check_scores(scores).transpose("algorithm", "run", "task")
    values = AGGREGATES[resolve_metrics(metric)[0]](checked.values)
    return {str(a): float(v) for a, v in zip(checked.algorithm.values, values, strict=True)}


def leaderboard_pairs(scores: xr.DataArray, *, metric: str = "median") -> list[tuple[str, str]]:
    """Adjacent pairs ``(X, Y)`` of the ranking by ``metric`` on all runs, X ranked above Y.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``; NaN = absent run.
    metric
        ``"median"``, ``"mean"`` or ``"iqm"`` (higher is better).

    Returns
    -------
    list of tuple
        ``A - 1`` pairs for ``A`` algorithms, best first (ties keep input order).
    """
    if metric == "optimality_gap":
        raise InputError("leaderboard_pairs ranks by a higher-is-better metric")
    points = _points(scores, metric)
    ranked = sorted(points, key=lambda a: -points[a])
    return list(zip(ranked[:-1], ranked[1:], strict=True))


def metric_difference(
    scores: xr.DataArray,
    pairs: Sequence[tuple[str, str]],
    *,
    metric: str = "iqm",
    reps: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator,
) -> xr.Dataset:
    """Percentile CI of ``metric(X) - metric(Y)`` for each pair.

    Each algorithm's runs are resampled within tasks by its own keyed stream
    (:func:`scalinglab.stats.replicates.metric_replicates`, the streams of
    :func:`~scalinglab.stats.intervals.interval_estimates`), independently of
    the other's: the difference of replicate ``b`` is X's replicate ``b`` minus Y's.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``; NaN = absent run.
    pairs
        ``(X, Y)`` algorithm names.

    Returns
    -------
    xarray.Dataset
        ``point``, ``lo``, ``hi``, ``n_runs`` (the fewest runs per task of X and Y:
        the interval's ``n``) with dim ``pair`` (labels ``"X:Y"``, coords ``x``,
        ``y``); attrs ``metric``, ``reps``, ``level``, ``method``.
    """
    checked = check_scores(scores)
    names = [str(a) for a in checked.algorithm.values]
    if not pairs:
        raise InputError("metric_difference needs at least one pair")
    for x, y in pairs:
        for a in (x, y):
            if a not in names:
                raise InputError(f"unknown algorithm {a!r}; have {names}")
    draws = metric_replicates(checked, metrics=(metric,), reps=reps, rng=rng)
    points = _points(checked, metric)
    point, lo, hi = [], [], []
    for x, y in pairs:
        d = (draws.sel(algorithm=x) - draws.sel(algorithm=y)).values[:, 0]
        a, b = percentile_interval(d, level=level)
        point.append(points[x] - points[y])
        lo.append(float(a))
        hi.append(float(b))
    runs = [fewest_runs(checked, (x, y)) for x, y in pairs]
    return xr.Dataset(
        {
            "point": ("pair", point),
            "lo": ("pair", lo),
            "hi": ("pair", hi),
            "n_runs": ("pair", runs),
        },
        coords={
            "pair": [f"{x}:{y}" for x, y in pairs],
            "x": ("pair", [x for x, _ in pairs]),
            "y": ("pair", [y for _, y in pairs]),
        },
        attrs={
            "metric": metric,
            "reps": int(reps),
            "level": float(level),
            "method": "stratified bootstrap of each algorithm independently, percentile "
            "interval of the difference",
        },
    )


def ordering_reading(diff_lo: float, diff_hi: float, poi: float, poi_lo: float) -> str:
    """The paper's reading of a published ordering "X beats Y", in words.

    The aggregate intervals decide the order: ``"supported"`` when the IQM
    difference's interval lies above 0, ``"reversed"`` only when it lies below 0
    (Y's aggregate is higher), ``"not resolved"`` otherwise. P(X > Y) then says
    how large the improvement is: ``"meaningful"`` when its interval lies above
    0.5 and its point reaches :data:`MEANINGFUL_POI`. A P(X > Y) just below 0.5
    alone is not a reversal of an aggregate ordering.
    """
    order = "supported" if diff_lo > 0 else "reversed" if diff_hi < 0 else "not resolved"
    if poi_lo > 0.5 and poi >= MEANINGFUL_POI:
        return f"{order}; meaningful improvement (P(X > Y) >= {MEANINGFUL_POI})"
    return order


def ordering_table(
    pairs: Sequence[tuple[str, str]],
    ci: xr.Dataset,
    poi: xr.Dataset,
    *,
    metrics: Sequence[str] = ("median", "mean"),
    iqm_diff: xr.Dataset | None = None,
) -> pd.DataFrame:
    """One row per published ordering: point estimates against what the intervals say.

    Parameters
    ----------
    pairs
        ``(X, Y)`` with X ranked above Y by ``metrics[0]``.
    ci
        :func:`scalinglab.stats.intervals.interval_estimates` output (``point``,
        ``lo``, ``hi`` with dims ``(algorithm, metric)``); needs ``metrics`` and ``iqm``.
    poi
        :func:`scalinglab.stats.improvement.pairwise_probability_of_improvement`
        output holding every pair as ``"X:Y"``.
    metrics
        Point estimates shown for X and Y; ``<metric>_agrees`` says whether a
        later one orders the pair as the first does.
    iqm_diff
        :func:`metric_difference` output holding every pair: adds
        ``iqm_diff``, ``iqm_diff_lo``, ``iqm_diff_hi`` and ``reading``
        (:func:`ordering_reading`).

    Returns
    -------
    pandas.DataFrame
        Index ``"X > Y"``; columns ``<metric>_x``, ``<metric>_y``,
        ``<metric>_agrees``, ``iqm_overlap`` (the IQM intervals overlap),
        ``poi``, ``poi_lo``, ``poi_hi`` and ``supported`` (P(X > Y)'s interval
        lies above 0.5).
    """
    rows = []
    labels = [str(p) for p in poi.pair.values]
    for x, y in pairs:
        if f"{x}:{y}" not in labels:
            raise InputError(f"no P(X > Y) for the pair {x}:{y}")
        cell = poi.sel(pair=f"{x}:{y}")
        row: dict[str, object] = {"ordering": f"{x} > {y}"}
        for i, m in enumerate(metrics):
            px = float(ci["point"].sel(algorithm=x, metric=m))
            py = float(ci["point"].sel(algorithm=y, metric=m))
            row |= {f"{m}_x": px, f"{m}_y": py}
            if i:
                row[f"{m}_agrees"] = px > py
        ix, iy = ci.sel(algorithm=x, metric="iqm"), ci.sel(algorithm=y, metric="iqm")
        row["iqm_overlap"] = float(ix["lo"]) <= float(iy["hi"]) and float(iy["lo"]) <= float(
            ix["hi"]
        )
        row |= {
            "poi": float(cell["point"]),
            "poi_lo": float(cell["lo"]),
            "poi_hi": float(cell["hi"]),
            "supported": float(cell["lo"]) > 0.5,
        }
        if iqm_diff is not None:
            d = iqm_diff.sel(pair=f"{x}:{y}")
            row |= {
                "iqm_diff": float(d["point"]),
                "iqm_diff_lo": float(d["lo"]),
                "iqm_diff_hi": float(d["hi"]),
                "reading": ordering_reading(
                    float(d["lo"]), float(d["hi"]), float(cell["point"]), float(cell["lo"])
                ),
            }
        rows.append(row)
    return pd.DataFrame(rows).set_index("ordering")


def separated_pairs(poi: xr.Dataset) -> list[tuple[str, str]]:
    """Pairs whose P(X > Y) interval excludes 0.5, oriented winner first.

    Parameters
    ----------
    poi
        Dataset with ``point``, ``lo``, ``hi`` over dim ``pair`` and coords ``x``, ``y``.
    """
    out = []
    for i in range(poi.sizes["pair"]):
        x, y = str(poi["x"].values[i]), str(poi["y"].values[i])
        if float(poi["lo"].values[i]) > 0.5:
            out.append((x, y))
        elif float(poi["hi"].values[i]) < 0.5:
            out.append((y, x))
    return out


def pair_flip_rates(
    scores: xr.DataArray,
    pairs: Sequence[tuple[str, str]],
    *,
    n_runs: int,
    draws: int = 1000,
    metrics: Sequence[str] | str = ("iqm", "median", "mean"),
    reps: int = 200,
    level: float = 0.95,
    rng: np.random.Generator,
) -> xr.Dataset:
    """How often ``n_runs``-run studies order the given pairs unlike all runs, with CIs.

    A draw takes ``n_runs`` runs per task without replacement and computes
    each metric; it flips a pair when its point estimates order the pair
    against the all-runs point estimates (ties in the draw count as no flip).
    The interval comes from an outer stratified bootstrap over runs
    (:func:`scalinglab.stats.reliability.outer_bootstrap`): in each replicate the
    all-runs reference is the replicate's own.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``; NaN = absent run.
    pairs
        ``(X, Y)`` algorithm pairs (orientation does not matter); at least one.
    n_runs, draws
        Runs per few-run study and studies drawn.
    reps
        Outer bootstrap replicates.

    Returns
    -------
    xarray.Dataset
        ``point``, ``lo``, ``hi`` (and the Monte Carlo standard errors of the ends,
        ``mc_se_lo``, ``mc_se_hi``) with dims ``(pair, metric)`` (pair labels
        ``"X:Y"`` and ``"(mean)"``, the mean flip rate over the pairs).
    """
    names = resolve_metrics(metrics)
    checked = check_scores(scores)
    algorithms = [str(a) for a in checked.algorithm.values]
    if not pairs:
        raise InputError("pair_flip_rates needs at least one pair")
    for x, y in pairs:
        for a in (x, y):
            if a not in algorithms:
                raise InputError(f"unknown algorithm {a!r}; have {algorithms}")
    index = np.array([[algorithms.index(x), algorithms.index(y)] for x, y in pairs])

    def statistic(data: xr.DataArray, g: np.random.Generator) -> np.ndarray:
        est = subsample_point_estimates(data, n_runs=n_runs, draws=draws, metrics=names, rng=g)
        full = xr.DataArray(
            np.stack(
                [AGGREGATES[m](data.transpose("algorithm", "run", "task").values) for m in names],
                axis=-1,
            ),
            dims=("algorithm", "metric"),
            coords={"algorithm": data.algorithm.values, "metric": list(names)},
        )
        flips = rank_flip_probability(est, full)["pair_flip"].values  # (A, A, K)
        per_pair = flips[index[:, 0], index[:, 1]]  # (P, K); NaN for tied references
        with np.errstate(invalid="ignore"):
            mean = (
                np.nanmean(per_pair, axis=0)
                if np.isfinite(per_pair).any()
                else np.full(len(names), np.nan)
            )
        return np.vstack([per_pair, mean[None]])

    res = outer_bootstrap(checked, statistic, reps=reps, level=level, rng=rng)
    labels = [f"{x}:{y}" for x, y in pairs] + ["(mean)"]
    dims = ("pair", "metric")
    return xr.Dataset(
        {v: (dims, res[v]) for v in ("point", "lo", "hi", "mc_se_lo", "mc_se_hi")},
        coords={"pair": labels, "metric": list(names)},
        attrs={
            "n_runs": int(n_runs),
            "draws": int(draws),
            "reps": int(reps),
            "level": float(level),
            "method": "outer stratified bootstrap over runs, percentile",
        },
    )


def top_task_share(
    scores: xr.DataArray,
    *,
    k: int | None = None,
    reps: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator,
) -> xr.Dataset:
    """Share of each algorithm's mean score contributed by its ``k`` highest tasks.

    ``share = sum of the per-task means of the k tasks / sum of all per-task
    means``, the k tasks being, per algorithm, those with the highest per-task
    mean on all runs (fixed across resamples, so the interval measures the
    share's sampling noise, not a max over noisy cells); with equal per-task
    means it is ``k / M``. Meaningful when the per-task means are mostly
    positive (normalized scores above the random baseline).

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``; NaN = absent run.
    k
        Tasks counted; default ``ceil(M / 10)`` (the top 10% of tasks).
    reps
        Stratified bootstrap replicates (runs resampled within tasks).

    Returns
    -------
    xarray.Dataset
        ``point``, ``lo``, ``hi``, ``n_runs`` (the fewest runs on any task: the
        interval's ``n``) with dim ``algorithm``, ``top_tasks`` with dims
        ``(algorithm, rank)`` (the k tasks, highest first); attrs ``k``,
        ``tasks``, ``uniform_share`` (``k / M``).
    """
    checked = check_scores(scores)
    m = checked.sizes["task"]
    k = max(1, math.ceil(m / 10)) if k is None else int(k)
    if not 1 <= k < m:
        raise InputError(f"k must be in [1, {m - 1}] for {m} tasks, got {k}")

    full = per_task_means(checked.transpose("algorithm", "run", "task").values)  # (A, M)
    chosen = np.argsort(-full, axis=1, kind="stable")[:, :k]  # (A, k)

    def statistic(data: xr.DataArray, g: np.random.Generator) -> np.ndarray:
        means = per_task_means(data.transpose("algorithm", "run", "task").values)  # (A, M)
        top = np.take_along_axis(means, chosen, axis=1).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return top / means.sum(axis=1)

    res = outer_bootstrap(checked, statistic, reps=reps, level=level, rng=rng)
    tasks = np.asarray(checked.task.values)[chosen].astype(str)
    return xr.Dataset(
        {
            **{v: ("algorithm", res[v]) for v in ("point", "lo", "hi", "mc_se_lo", "mc_se_hi")},
            "top_tasks": (("algorithm", "rank"), tasks),
            "n_runs": (
                "algorithm",
                [fewest_runs(checked, [str(a)]) for a in checked.algorithm.values],
            ),
        },
        coords={"algorithm": [str(a) for a in checked.algorithm.values], "rank": np.arange(k)},
        attrs={
            "k": k,
            "tasks": m,
            "uniform_share": k / m,
            "reps": int(reps),
            "level": float(level),
            "method": "stratified bootstrap over runs, percentile",
        },
    )
