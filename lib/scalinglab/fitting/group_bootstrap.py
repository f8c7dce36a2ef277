"""Group bootstrap of a fit: resample runs/seeds/curves, refit, percentile CIs.

Groups (not points: the points of one training curve are correlated) are drawn
with replacement by :func:`scalinglab.stats.bootstrap.resample_groups`, the one
bootstrap engine of the package. A replicate that draws group ``g`` ``k`` times
is the original data with the points of ``g`` weighted ``k`` (the summed
objective makes that exactly a refit on the concatenated sample), so all
replicates share one design and are refitted together by the batched optimizer.

Warm starts: each replicate starts from the full-data optimum and the next
``warm - 1`` distinct local optima found by the full multi-start fit (the best
of them wins; L-BFGS-B polishes it if the batched optimizer hit its iteration
cap). Starting from several optima rather
than one guards against a replicate whose best basin differs from the full
data's; ``starts="grid"`` refits every replicate from the law's full grid
instead (exact but ``len(grid)`` times the work).

Too few groups: the bootstrap needs 2 (an error below); below :func:`min_groups` (10
at the 95% level) the result carries a warning saying how many there are, how many
distinct resamples they allow and roughly what a nominal interval then covers.

Data-dependent bounds (e.g. ``A0 < min(y)``) are recomputed on each
replicate's points. Per-group parameters of groups a replicate did not draw are
unidentified and recorded as NaN (ignored by the percentile interval).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from scalinglab.errors import InputError
from scalinglab.fitting.optimize import batched_lm, polish
from scalinglab.fitting.parallel import dumps, loads, run_tasks
from scalinglab.fitting.result import Derived, FitResult
from scalinglab.fitting.starts import start_matrix
from scalinglab.stats.bootstrap import percentile_interval, resample_groups

#: Replicates per task; fixed so that results do not depend on n_jobs.
REPS_PER_TASK = 50
#: How far below its nominal level a group bootstrap's coverage may fall before a fit
#: warns that it has too few groups (see :func:`min_groups`).
COVERAGE_SLACK = 0.05


def group_coverage(n_groups: int, level: float) -> float:
    """Coverage of a nominal ``level`` percentile interval from ``n_groups`` groups.

    The textbook case, the mean of ``G`` normal group values: the bootstrap's spread is
    ``sqrt((G - 1) / G)`` times the sample's, and the sample mean's studentized error has
    ``G - 1`` degrees of freedom, so the interval ``+-z sqrt((G-1)/G) s/sqrt(G)`` covers
    ``P(|t_{G-1}| < z sqrt((G-1)/G))`` (:mod:`scipy.stats`). A nonlinear fit does no
    better; it is the yardstick, not a promise.
    """
    from scipy import stats

    if n_groups < 2:
        return 0.0
    z = stats.norm.ppf(0.5 + level / 2)
    return float(2 * stats.t.cdf(z * np.sqrt((n_groups - 1) / n_groups), n_groups - 1) - 1)


def min_groups(level: float, *, slack: float = COVERAGE_SLACK) -> int:
    """Fewest groups whose :func:`group_coverage` is within ``slack`` of ``level``.

    10 groups at the 95% level (coverage 90.4%; 3 groups: 74%).
    """
    g = 2
    while group_coverage(g, level) < level - slack:
        g += 1
    return g


def few_groups_warning(n_groups: int, level: float, column: str | None) -> str | None:
    """The warning a bootstrap over too few groups carries (None when there are enough)."""
    need = min_groups(level)
    if n_groups >= need:
        return None
    from math import comb

    what = f"groups ({column})" if column else "groups (points)"
    return (
        f"bootstrap: only {n_groups} {what}, {comb(2 * n_groups - 1, n_groups)} distinct "
        f"resamples: a nominal {level:.0%} interval covers about "
        f"{group_coverage(n_groups, level):.0%} (a mean of normal data); at least {need} "
        f"groups are needed for {level - COVERAGE_SLACK:.0%}"
    )


def replicate_weights(draws: np.ndarray, groups: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Point weights of bootstrap replicates.

    Parameters
    ----------
    draws
        Group indices drawn per replicate, ``(R, G)``.
    groups
        Group code of each point, ``(n,)``.
    base
        Base point weights, ``(n,)``.

    Returns
    -------
    numpy.ndarray
        ``(R, n)``: each point's weight times the number of times its group was drawn.
    """
    R, G = draws.shape
    counts = np.zeros((R, G))
    np.add.at(counts, (np.repeat(np.arange(R), G), draws.ravel()), 1.0)
    return counts[:, groups] * base


def _refit_task(args: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    blob, W, lo, hi, starts, max_iter = args
    problem = loads(blob)
    c, K, F = W.shape[0], starts.shape[0], starts.shape[1]
    theta0 = np.tile(starts, (c, 1))
    rep = np.repeat(np.arange(c), K)
    r = batched_lm(problem, theta0, w=W[rep], lo=lo[rep], hi=hi[rep], max_iter=max_iter)
    f = r.f.reshape(c, K)
    best = np.argmin(np.where(np.isfinite(f), f, np.inf), axis=1)
    theta = r.theta.reshape(c, K, F)[np.arange(c), best]
    fbest = f[np.arange(c), best]
    conv = r.converged.reshape(c, K)[np.arange(c), best]
    for i in range(c):  # L-BFGS-B only where the batched optimizer hit its iteration cap
        if conv[i] or not np.isfinite(fbest[i]):
            continue
        pol = polish(problem, theta[i], w=W[i], lo=lo[i], hi=hi[i])
        if pol.f <= fbest[i]:
            theta[i], fbest[i] = pol.theta, pol.f
            conv[i] = conv[i] or pol.success
    return theta, fbest, conv


def bootstrap(
    result: FitResult,
    *,
    reps: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    derived: Mapping[str, Callable[[Mapping[str, float]], Any]] | None = None,
    starts: str = "warm",
    warm: int = 3,
    max_iter: int = 500,
    n_jobs: int | None = 1,
    client: Any = None,
    progress: bool = False,
) -> FitResult:
    """Group-bootstrap ``result``: refit ``reps`` replicates; percentile CIs.

    Parameters
    ----------
    result
        A fit from :func:`scalinglab.fitting.multistart.fit` (its problem attached).
    reps, seed, level
        Number of replicates, seed of the ``np.random.Generator`` that draws
        them (same seed -> identical draws and CIs), CI level.
    derived
        ``name -> fn(params)``: quantities with CIs (a prediction at a new x, a
        speedup, ...); ``fn`` gets a mapping of reported values per draw.
    starts, warm
        ``"warm"``: start each replicate from the ``warm`` best distinct
        optima of the full fit; ``"grid"``: from the law's full grid.
    n_jobs, client
        Local processes or a Dask client (tasks of ``REPS_PER_TASK`` replicates).

    Returns
    -------
    FitResult
        ``result`` with ``draws`` ``(reps, P)``, ``ci``, ``derived`` filled in.
    """
    problem = result.problem
    if problem is None:
        raise ValueError("result has no problem attached")
    data = problem.data
    if data.n_groups < 2:
        raise InputError(
            f"the bootstrap resamples groups and needs at least 2; got {data.n_groups}",
            file=data.source,
            column=data.group_name,
        )
    rng = np.random.default_rng(seed)
    draws_idx = resample_groups(rng, data.n_groups, reps)
    W = replicate_weights(draws_idx, data.groups, problem.weights)
    has_callable = any(callable(b) for p in problem.law.params for b in p.bounds)
    if has_callable:
        lohi = [problem.bounds_on(w > 0) for w in W]
        lo, hi = np.array([a for a, _ in lohi]), np.array([b for _, b in lohi])
    else:
        lo, hi = np.tile(problem.lo, (reps, 1)), np.tile(problem.hi, (reps, 1))
    if starts == "warm":
        st = result.local_optima[:warm]
    elif starts == "grid":
        st = start_matrix(problem, None)
    else:
        raise ValueError(f"starts must be 'warm' or 'grid', got {starts!r}")
    blob = dumps(problem)
    tasks = [
        (
            blob,
            W[i : i + REPS_PER_TASK],
            lo[i : i + REPS_PER_TASK],
            hi[i : i + REPS_PER_TASK],
            st,
            max_iter,
        )
        for i in range(0, reps, REPS_PER_TASK)
    ]
    parts = run_tasks(
        _refit_task, tasks, n_jobs=n_jobs, client=client, progress=progress, desc="bootstrap refits"
    )
    theta = np.concatenate([p[0] for p in parts])
    f = np.concatenate([p[1] for p in parts])
    conv = np.concatenate([p[2] for p in parts])
    draws = problem.reported(problem.full(theta))
    failed = ~np.isfinite(f)
    draws[failed] = np.nan
    if problem.law.has_groups:  # groups a replicate did not draw: parameter unidentified
        counts = np.zeros((reps, data.n_groups))
        np.add.at(counts, (np.repeat(np.arange(reps), data.n_groups), draws_idx.ravel()), 1.0)
        col = 0
        for p in problem.law.params:
            if p.per_group:
                block = draws[:, col : col + data.n_groups]
                block[counts == 0] = np.nan
                col += data.n_groups
            else:
                col += 1
    lo_ci, hi_ci = percentile_interval(draws, level=level, axis=0)
    result.draws = draws
    result.level = level
    result.ci = {
        n: (float(a), float(b)) for n, a, b in zip(result.names, lo_ci, hi_ci, strict=True)
    }
    result.bootstrap_info = {
        "reps": int(reps),
        "seed": int(seed),
        "method": "percentile",
        "resampled": "groups",
        "starts": f"{starts} ({st.shape[0]})",
        "failed": int(failed.sum()),
        "not_converged": int((~conv).sum()),
    }
    warn = [w for w in result.warnings if not w.startswith("bootstrap:")]
    if failed.any():
        warn.append(f"bootstrap: {int(failed.sum())} of {reps} refits failed (ignored in CIs)")
    few = few_groups_warning(data.n_groups, level, data.group_name)
    if few:
        warn.append(few)
    result.warnings = warn
    result.derived = {}
    for name, fn in (derived or {}).items():
        result.derive(name, fn)
    return result


def derive(fn: Callable[..., Any], *results: FitResult, level: float | None = None) -> Derived:
    """A quantity of several independently bootstrapped fits, with its CI.

    ``fn(params_1, params_2, ...)`` gets one mapping of reported values per
    fit; draws are paired by index (the fits' data are independent, so pairing
    independent draws is a draw of the joint). E.g. the asymptote difference of
    two ablations: ``derive(lambda a, b: a["A"] - b["A"], fit_a, fit_b)``.
    All fits need the same number of draws.

    Fits bootstrapped with the same ``seed`` and group count draw the same group
    indices, which *pairs* them (right when group ``i`` is the same seed in every
    fit, a paired design); for unrelated data, bootstrap each fit with its own seed
    so the draws are independent.
    """
    if not results:
        raise ValueError("pass at least one FitResult")
    if any(r.draws is None for r in results):
        raise ValueError("every fit needs bootstrap draws")
    R = {r.draws.shape[0] for r in results}
    if len(R) != 1:
        raise ValueError(f"fits have different numbers of draws: {sorted(R)}")
    level = results[0].level if level is None else level
    point = np.asarray(fn(*[dict(r.params) for r in results]), dtype=float)
    vals = []
    for i in range(R.pop()):
        rows = [dict(zip(r.names, r.draws[i], strict=True)) for r in results]
        ok = all(np.all(np.isfinite(r.draws[i][r.core_mask()])) for r in results)
        vals.append(np.asarray(fn(*rows), dtype=float) if ok else np.full(point.shape, np.nan))
    vals = np.array(vals)
    lo, hi = percentile_interval(vals, level=level, axis=0)
    return Derived(point, (lo, hi), vals)
