"""Optimizers: a batched Levenberg-Marquardt over all starts at once, and an L-BFGS-B polish.

Why hand-written: a scaling-law fit is a tiny problem (5-20 parameters, a few
hundred points) solved from thousands of starts (Epoch's 4,500-point grid) and
again for every bootstrap replicate. Looping scipy's L-BFGS-B over starts spends
almost all its time in per-call Python overhead (minutes for one Chinchilla
fit). :func:`batched_lm` instead advances every start together with numpy:
each iteration computes residuals and Jacobians for all active starts in one
array operation, solves all ``F x F`` damped Gauss-Newton/IRLS systems with one
batched ``np.linalg.solve``, and drops starts as they converge. For the Huber
objective the Gauss-Newton matrix uses the IRLS weights ``psi(r)/r`` (a
majorizer of the Huber loss), so steps are safe even where most residuals are
in the linear part. Bounds are handled by projection, freezing parameters that
sit on a bound with the gradient pointing outwards.

The best few distinct results are then polished with scipy's L-BFGS-B
(:func:`polish`, analytic gradient, tight tolerances), which also gives the
final bound/convergence semantics users know. Every start is optimized
independently of the others (no shared state across the batch), so results do
not depend on how starts are batched or split over processes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from scalinglab.fitting.problem import Problem


@dataclass
class BatchResult:
    """Result of :func:`batched_lm`.

    Attributes
    ----------
    theta
        Free parameters at the end, ``(S, F)``.
    f
        Objective, ``(S,)`` (``inf`` where the start was invalid).
    converged
        ``(S,)`` bool: stopped by the convergence test rather than the iteration cap.
    n_iter
        Iterations used (the largest over starts).
    """

    theta: np.ndarray
    f: np.ndarray
    converged: np.ndarray
    n_iter: int


def _rows(a: np.ndarray | None, idx: np.ndarray, S: int) -> np.ndarray | None:
    if a is None:
        return None
    a = np.asarray(a)
    return a[idx] if a.ndim == 2 and a.shape[0] == S else a


def batched_lm(
    problem: Problem,
    theta0: np.ndarray,
    *,
    w: np.ndarray | None = None,
    lo: np.ndarray | None = None,
    hi: np.ndarray | None = None,
    max_iter: int = 500,
    ftol: float = 1e-12,
) -> BatchResult:
    """Minimize the problem's objective from every row of ``theta0`` at once.

    Parameters
    ----------
    problem
        The fit problem.
    theta0
        Starts, free parameters, shape ``(S, F)``.
    w
        Point weights ``(n,)`` or one row per start ``(S, n)`` (bootstrap replicates).
    lo, hi
        Internal bounds ``(F,)`` or ``(S, F)``; default the problem's.
    max_iter
        Iteration cap per start.
    ftol
        A start stops when an iteration's (achieved or, if rejected, predicted)
        relative decrease of the objective is below ``ftol``.
    """
    S, F = theta0.shape
    w = problem.weights if w is None else np.asarray(w, dtype=float)
    lo = np.broadcast_to(problem.lo if lo is None else lo, (S, F))
    hi = np.broadcast_to(problem.hi if hi is None else hi, (S, F))
    theta = np.clip(np.array(theta0, dtype=float), lo, hi)
    f, g, H = problem.evaluate(theta, w, need="gn")
    lam = np.full(S, 1e-3)
    active = np.isfinite(f)
    converged = np.zeros(S, dtype=bool)
    eye = np.eye(F, dtype=bool)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007  (it is reported)
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        th, gi, Hi = theta[idx], g[idx], H[idx]
        lo_i, hi_i = lo[idx], hi[idx]
        frozen = ((th <= lo_i) & (gi > 0)) | ((th >= hi_i) & (gi < 0))
        gi = np.where(frozen, 0.0, gi)
        keep = ~frozen
        Hi = Hi * (keep[:, :, None] & keep[:, None, :])
        dg = np.diagonal(Hi, axis1=1, axis2=2)
        floor = np.maximum(dg, 1e-12 * dg.max(axis=1, keepdims=True) + 1e-300)
        damp = np.where(frozen, 1.0, lam[idx, None] * floor)
        A = Hi + eye * damp[:, None, :]
        try:
            step = np.linalg.solve(A, -gi[..., None])[..., 0]
        except np.linalg.LinAlgError:
            step = np.stack(
                [np.linalg.lstsq(a, -b, rcond=None)[0] for a, b in zip(A, gi, strict=True)]
            )
        trial = np.clip(th + step, lo_i, hi_i)
        step = trial - th
        ft = problem.evaluate(trial, _rows(w, idx, S), need="value")[0]
        f_i = f[idx]
        pred = -(np.sum(gi * step, axis=1) + 0.5 * np.einsum("sf,sfg,sg->s", step, Hi, step))
        acc = np.isfinite(ft) & (ft < f_i)
        scale = np.maximum(np.abs(f_i), 1e-300)
        # a rejected step signals convergence only if its model predicted a tiny
        # decrease (a negative prediction comes from clipping at a bound: keep damping)
        small = np.where(acc, (f_i - ft) / scale <= ftol, (pred >= 0) & (pred / scale <= ftol))
        small |= ~np.any(step != 0.0, axis=1)
        a_idx = idx[acc]
        theta[a_idx], f[a_idx] = trial[acc], ft[acc]
        lam[idx] = np.where(acc, np.maximum(lam[idx] / 3.0, 1e-12), lam[idx] * 4.0)
        stop = small | (lam[idx] > 1e12)
        converged[idx[stop]] = True
        active[idx[stop]] = False
        refresh = idx[acc & ~stop]
        if refresh.size:
            _, g[refresh], H[refresh] = problem.evaluate(
                theta[refresh], _rows(w, refresh, S), need="gn"
            )
    return BatchResult(theta=theta, f=f, converged=converged, n_iter=it)


@dataclass
class PolishResult:
    """Result of :func:`polish`: free parameters ``(F,)``, objective, success flag, message."""

    theta: np.ndarray
    f: float
    success: bool
    message: str
    n_iter: int


def polish(
    problem: Problem,
    theta: np.ndarray,
    *,
    w: np.ndarray | None = None,
    lo: np.ndarray | None = None,
    hi: np.ndarray | None = None,
    maxiter: int = 2000,
) -> PolishResult:
    """Refine one start with scipy's L-BFGS-B (analytic gradient, tight tolerances).

    Parameters
    ----------
    theta
        Free parameters, shape ``(F,)``.
    w
        Point weights ``(n,)``.
    """
    w = problem.weights if w is None else np.asarray(w, dtype=float)
    lo = problem.lo if lo is None else lo
    hi = problem.hi if hi is None else hi
    bounds = [
        (None if not np.isfinite(a) else a, None if not np.isfinite(b) else b)
        for a, b in zip(lo, hi, strict=True)
    ]

    def fun(t: np.ndarray) -> tuple[float, np.ndarray]:
        f, g, _ = problem.evaluate(t[None, :], w, need="grad")
        if not np.isfinite(f[0]):
            return 1e300, np.zeros_like(t)
        return float(f[0]), g[0]

    x0 = np.clip(np.asarray(theta, dtype=float), lo, hi)
    res = minimize(
        fun,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": maxiter, "ftol": 1e-14, "gtol": 1e-11},
    )
    f0 = fun(x0)[0]
    if not res.fun <= f0:  # never worse than where it started
        return PolishResult(x0, f0, bool(res.success), str(res.message), int(res.nit))
    return PolishResult(
        np.asarray(res.x), float(res.fun), bool(res.success), str(res.message), int(res.nit)
    )


def distinct_best(theta: np.ndarray, f: np.ndarray, k: int, *, rtol: float = 1e-4) -> np.ndarray:
    """Indices of up to ``k`` lowest-objective rows that are pairwise distinct.

    Two rows are the same optimum when their objectives agree to ``1e-9``
    (relative) and their parameters to ``rtol`` (relative, per coordinate).
    """
    order = np.argsort(f, kind="stable")
    kept: list[int] = []
    for i in order:
        if not np.isfinite(f[i]):
            break
        same = False
        for j in kept:
            close_f = abs(f[i] - f[j]) <= 1e-9 * max(abs(f[j]), 1e-300)
            close_t = np.all(np.abs(theta[i] - theta[j]) <= rtol * (1 + np.abs(theta[j])))
            if close_f and close_t:
                same = True
                break
        if not same:
            kept.append(int(i))
            if len(kept) == k:
                break
    return np.array(kept, dtype=np.int64)
