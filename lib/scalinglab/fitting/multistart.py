"""Multi-start fits: the full initialization grid, batched, then polished.

:func:`fit` is the one entry point: it validates the data for the law, runs
:func:`~scalinglab.fitting.optimize.batched_lm` from every start of the law's
grid (Epoch's 4,500 starts for ``chinchilla``), polishes the best few distinct
optima with L-BFGS-B, keeps the best objective, warns when a parameter ends on
a bound or the optimizer did not converge, and optionally bootstraps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from scalinglab.errors import InputError
from scalinglab.fitting.group_bootstrap import bootstrap as run_bootstrap
from scalinglab.fitting.laws import Law
from scalinglab.fitting.loader import FitData, check_data, default_groups, from_arrays
from scalinglab.fitting.objectives import DEFAULT_DELTA, Objective
from scalinglab.fitting.optimize import batched_lm, distinct_best, polish
from scalinglab.fitting.parallel import dumps, loads, run_tasks
from scalinglab.fitting.problem import Problem
from scalinglab.fitting.registry import get_law
from scalinglab.fitting.result import FitResult
from scalinglab.fitting.starts import start_matrix

#: Starts per task when a multi-start fit is split over processes.
STARTS_PER_TASK = 512
#: An internal log-scale parameter below this (value < 1e-13) is "on its bound 0".
LOG_FLOOR = -30.0


def make_problem(
    law: str | Law,
    x: FitData | np.ndarray | Sequence[np.ndarray],
    y: np.ndarray | None = None,
    *,
    groups: Any = None,
    objective: str | Objective | None = None,
    delta: float = DEFAULT_DELTA,
    fixed: Mapping[str, float] | None = None,
    bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    weights: np.ndarray | Mapping[str, float] | None = None,
) -> Problem:
    """Validate inputs and bind law, data and objective (see :func:`fit` for arguments)."""
    law = get_law(law)
    if isinstance(x, FitData):
        data = x
    else:
        if y is None:
            raise ValueError("pass y (or a FitData as x)")
        k = len(x) if isinstance(x, list | tuple) else (1 if np.ndim(x) == 1 else np.shape(x)[1])
        data = from_arrays(
            x,
            y,
            groups=groups,
            x_names=law.x_names if k == len(law.x_names) else None,
            group_name=None if groups is None else "group",
        )
    data = default_groups(law, data)
    if isinstance(objective, Objective):
        obj = objective
    else:
        obj = Objective(objective or law.objective, delta=delta)
    w = None
    if weights is not None:
        if isinstance(weights, Mapping):
            unknown = set(map(str, weights)) - set(data.group_labels)
            if unknown:
                raise InputError(
                    f"weights for unknown group(s) {sorted(unknown)}",
                    file=data.source,
                    column=data.group_name,
                )
            per = np.array([float(weights.get(g, 1.0)) for g in data.group_labels])
            w = per[data.groups]
        else:
            w = np.asarray(weights, dtype=float)
    problem = Problem(law, data, obj, fixed=fixed, bounds=bounds, weights=w)
    check_data(law, data, log_y=obj.log_space, n_free=problem.F)
    return problem


def _lm_task(args: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    blob, starts, max_iter = args
    problem = loads(blob)
    r = batched_lm(problem, starts, max_iter=max_iter)
    return r.theta, r.f, r.converged


def data_warnings(problem: Problem) -> list[str]:
    """Warnings for data a law can be fitted to but that cannot identify its shape.

    Today one: every observation is the same value (a flat curve: the law's exponents
    and scales are then not identified, whatever the fit reports).
    """
    y = problem.data.y
    if y.size and np.ptp(y) == 0:
        return [
            f"every {problem.data.y_name} is {float(y[0]):g}: the data are flat, so the "
            "law's exponents and scales are not identified (any value fits)"
        ]
    return []


def bound_sides(problem: Problem, theta_free: np.ndarray) -> list[str | None]:
    """Per free parameter ``(F,)``: ``"lower"``, ``"upper"``, ``"collapsed"`` (a log-scale
    parameter at ~0) or None (interior)."""
    out: list[str | None] = []
    for k, j in enumerate(problem.free):
        p, v = problem.params[j], theta_free[k]
        lo, hi = problem.lo[k], problem.hi[k]
        tol = 1e-6 * (1.0 + abs(v))
        if np.isfinite(lo) and v - lo <= tol:
            out.append("lower")
        elif np.isfinite(hi) and hi - v <= tol:
            out.append("upper")
        elif p.transform == "log" and v < LOG_FLOOR:
            out.append("collapsed")
        else:
            out.append(None)
    return out


def bound_warnings(problem: Problem, theta_free: np.ndarray) -> list[str]:
    """Warnings for free parameters on (or collapsed to) a bound."""
    out = []
    for k, (j, side) in enumerate(zip(problem.free, bound_sides(problem, theta_free), strict=True)):
        name, p, v = problem.names[j], problem.params[j], theta_free[k]
        value = float(p.to_reported(v))
        if side == "lower":
            out.append(
                f"parameter {name} = {value:.6g} is on its lower bound "
                f"{float(p.to_reported(problem.lo[k])):.6g}"
            )
        elif side == "upper":
            out.append(
                f"parameter {name} = {value:.6g} is on its upper bound "
                f"{float(p.to_reported(problem.hi[k])):.6g}"
            )
        elif side == "collapsed":
            out.append(f"parameter {name} = {value:.3g} collapsed to its lower bound 0")
    return out


def fit(
    law: str | Law,
    x: FitData | np.ndarray | Sequence[np.ndarray],
    y: np.ndarray | None = None,
    *,
    groups: Any = None,
    objective: str | Objective | None = None,
    delta: float = DEFAULT_DELTA,
    fixed: Mapping[str, float] | None = None,
    bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    weights: np.ndarray | Mapping[str, float] | None = None,
    starts: np.ndarray | Mapping[str, Sequence[float]] | None = None,
    n_polish: int = 5,
    max_iter: int = 500,
    bootstrap: int = 0,
    level: float = 0.95,
    seed: int = 0,
    derived: Mapping[str, Callable[[Mapping[str, float]], Any]] | None = None,
    n_jobs: int | None = 1,
    client: Any = None,
    progress: bool = False,
) -> FitResult:
    """Fit ``law`` to data from every start of its grid and keep the best objective.

    Parameters
    ----------
    law
        A registered law name (``"chinchilla"``, ...) or a :class:`Law`.
    x, y
        Inputs ``(n,)``/``(n, k)`` (columns in the law's ``x_names`` order, e.g.
        ``N, D``) and observations ``(n,)``; or a :class:`FitData` as ``x``.
    groups
        Group labels ``(n,)``: the runs/seeds/curves the bootstrap resamples
        (default: each point is its own group; ``loglinear_kn`` groups by ``N``).
    objective, delta
        ``"huber"`` (log residuals, summed, threshold ``delta``) or ``"ls"``;
        default the law's. An :class:`Objective` may be passed instead.
    fixed
        Parameters held fixed, reported units, e.g. ``{"R0": 0.1}``.
    bounds
        Overrides of the law's bounds, reported units, ``name -> (lo, hi)``.
    weights
        Per-point weights ``(n,)`` or per-group weights ``{label: w}``.
    starts
        Starts instead of the law's grid: reported values ``(S, P)`` or a
        mapping ``name -> values`` (full product).
    n_polish
        Distinct best optima polished with L-BFGS-B.
    max_iter
        Iteration cap of the batched optimizer per start.
    bootstrap, level, seed, derived
        Bootstrap replicates (0: none), CI level, seed and derived quantities
        ``name -> fn(params)`` (see :func:`scalinglab.fitting.group_bootstrap.bootstrap`).
    n_jobs, client
        Split starts and refits over local processes or a Dask client.
    progress
        Show progress bars.

    Returns
    -------
    FitResult
    """
    problem = make_problem(
        law,
        x,
        y,
        groups=groups,
        objective=objective,
        delta=delta,
        fixed=fixed,
        bounds=bounds,
        weights=weights,
    )
    theta0 = start_matrix(problem, starts)
    if n_jobs in (None, 1) and client is None:
        r = batched_lm(problem, theta0, max_iter=max_iter)
        th, f, conv = r.theta, r.f, r.converged
    else:
        blob = dumps(problem)
        tasks = [
            (blob, theta0[i : i + STARTS_PER_TASK], max_iter)
            for i in range(0, theta0.shape[0], STARTS_PER_TASK)
        ]
        parts = run_tasks(
            _lm_task, tasks, n_jobs=n_jobs, client=client, progress=progress, desc="multi-start"
        )
        th = np.concatenate([p[0] for p in parts])
        f = np.concatenate([p[1] for p in parts])
        conv = np.concatenate([p[2] for p in parts])
    if not np.isfinite(f).any():
        raise InputError(
            f"law {problem.law.name!r}: the objective is undefined at every start "
            "(model <= 0 under log residuals?)",
            file=problem.data.source,
        )
    cand = distinct_best(th, f, n_polish)
    best_i, best = None, None
    for i in cand:
        pol = polish(problem, th[i])
        if best is None or pol.f < best.f:
            best_i, best = i, pol
    warnings = bound_warnings(problem, best.theta) + data_warnings(problem)
    converged = bool(best.success or conv[best_i])
    if not converged:
        warnings.append(f"optimizer did not converge (L-BFGS-B: {best.message})")
    local = np.vstack([best.theta[None, :], th[cand[cand != best_i]]])
    theta_full = problem.full(best.theta[None, :])[0]
    rep = problem.reported(theta_full[None, :])[0]
    result = FitResult(
        law=problem.law.name,
        params={n: float(v) for n, v in zip(problem.names, rep, strict=True)},
        objective=float(best.f),
        n_points=problem.data.n_points,
        n_groups=problem.data.n_groups,
        converged=converged,
        warnings=warnings,
        level=level,
        fixed=tuple(n for j, n in enumerate(problem.names) if problem.fixed_mask[j]),
        objective_desc=problem.objective.describe(),
        problem=problem,
        theta=theta_full,
        local_optima=local,
    )
    if bootstrap:
        result = run_bootstrap(
            result,
            reps=bootstrap,
            seed=seed,
            level=level,
            derived=derived,
            n_jobs=n_jobs,
            client=client,
            progress=progress,
        )
    elif derived:
        for name, fn in derived.items():
            result.derive(name, fn)
    return result
