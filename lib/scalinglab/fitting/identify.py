"""Is a fitted parameter identified by the data, or pinned by a bound?

A parameter that ends on (or within a small tolerance of) one of its bounds in
the point fit, or in a large share of the bootstrap refits, or whose interval
has zero width, is not estimated by the data: the bound is. Its value and
interval then borrow their precision from the bound and must not be reported
as a measurement. :func:`identification` tells which, and
:func:`param_estimate` returns a fitted parameter as an
:class:`~scalinglab.estimate.Estimate` with that verdict attached
(``identified=False``, the bound and the reason), so the report that records it
shows it one-sided and a claim resting on it reads ``not identified``.

The share of refits at a bound that makes a parameter not identified is the
library's one rule, :data:`scalinglab.estimate.BOUND_SHARE`.

Tolerance: a parameter is "at" a bound when it lies within ``rtol`` of it in the
optimizer's coordinates, relative to the width of the bounded range when both
bounds are finite, else to ``1 + |value|``; a log-scale parameter bounded below
by 0 is at that bound when its log falls below
:data:`scalinglab.fitting.multistart.LOG_FLOOR`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scalinglab.estimate import BOUND_SHARE, Estimate, identified_by_share
from scalinglab.fitting.result import FitResult

#: Relative distance to a bound (optimizer coordinates) that counts as "at" it.
RTOL = 1e-3
#: Share of bootstrap refits at a bound from which a parameter is not identified
#: (the library's one rule: :data:`scalinglab.estimate.BOUND_SHARE`).
SHARE = BOUND_SHARE
#: An internal log-scale value below this is "at the bound 0" (value < 1e-13).
LOG_FLOOR = -30.0


@dataclass(frozen=True)
class Identification:
    """Whether one fitted parameter is identified.

    Attributes
    ----------
    identified
        False when on a bound in the point fit, at a bound in at least
        ``share`` of the bootstrap refits, held fixed, or with a zero-width or
        undefined interval.
    reason
        Why, in words ("" when identified).
    side, bound
        ``"lower"``/``"upper"`` and the bound's value (reported units) when a
        bound is the cause; else None.
    share_at_bound
        Share of finite bootstrap draws at the nearer-populated bound (0 without draws).
    """

    identified: bool
    reason: str
    side: str | None
    bound: float | None
    share_at_bound: float


def _at_bound(
    v: np.ndarray, lo: float, hi: float, log_scale: bool, rtol: float
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks (at lower, at upper) for internal values ``v`` (any shape)."""
    v = np.asarray(v, dtype=float)
    if np.isfinite(lo) and np.isfinite(hi):
        tol = rtol * (hi - lo) * np.ones_like(v)
    else:
        tol = rtol * (1.0 + np.abs(v))
    with np.errstate(invalid="ignore"):
        at_lo = (v - lo <= tol) if np.isfinite(lo) else np.zeros(v.shape, bool)
        if log_scale and not np.isfinite(lo):
            at_lo = at_lo | (v < LOG_FLOOR)
        at_hi = (hi - v <= tol) if np.isfinite(hi) else np.zeros(v.shape, bool)
    return at_lo & np.isfinite(v) | (log_scale & (v == -np.inf)), at_hi & np.isfinite(v)


def identification(
    result: FitResult, param: str, *, rtol: float = RTOL, share: float = SHARE
) -> Identification:
    """Whether ``param`` of a fitted law is identified by the data.

    Parameters
    ----------
    result
        A fit (with its problem attached; bootstrap draws ``(R, P)`` used when present).
    param
        A reported parameter name (``result.names``).
    rtol, share
        Tolerance to a bound, and the share of refits at a bound that makes a
        parameter not identified.

    Returns
    -------
    Identification
    """
    if param not in result.params:
        raise KeyError(
            f"fit of {result.law!r} has no parameter {param!r}; it has {', '.join(result.names)}"
        )
    problem = result.problem
    if param in result.fixed:
        return Identification(
            False, f"{param} was held fixed, not fitted", None, float(result.params[param]), 0.0
        )
    value = float(result.params[param])
    j = result.names.index(param)
    share_at, side_d, bound_d = 0.0, None, None
    if problem is not None:
        k = int(np.flatnonzero(problem.free == j)[0])
        lo, hi = float(problem.lo[k]), float(problem.hi[k])
        p = problem.params[j]
        log_scale = p.transform == "log"
        rep = lambda z: float(p.to_reported(z))  # noqa: E731
        bounds = {
            "lower": rep(lo) if np.isfinite(lo) else (0.0 if log_scale else None),
            "upper": rep(hi) if np.isfinite(hi) else None,
        }
        at_lo, at_hi = _at_bound(np.array(float(p.to_internal(value))), lo, hi, log_scale, rtol)
        for side, hit in (("lower", bool(at_lo)), ("upper", bool(at_hi))):
            if hit:
                return Identification(
                    False,
                    f"{param} = {value:.4g} at its {side} bound "
                    f"{bounds[side]:.4g} in the point fit",
                    side,
                    bounds[side],
                    _share(result, j, lo, hi, log_scale, rtol)[0],
                )
        share_at, side_d = _share(result, j, lo, hi, log_scale, rtol)
        bound_d = None if side_d is None else bounds[side_d]
        if not identified_by_share(share_at, threshold=share):
            return Identification(
                False,
                f"{param} at its {side_d} bound {bound_d:.4g} in "
                f"{100 * share_at:.0f}% of bootstrap refits",
                side_d,
                bound_d,
                share_at,
            )
    ci = None if result.ci is None else result.ci.get(param)
    if ci is not None:
        a, b = float(ci[0]), float(ci[1])
        if math.isnan(a) or math.isnan(b):
            return Identification(
                False, f"{param} has no finite bootstrap refits", None, None, share_at
            )
        if b - a <= 1e-12 * max(1.0, abs(value)):
            return Identification(
                False, f"{param} has a zero-width interval [{a:.6g}, {b:.6g}]", None, None, share_at
            )
    return Identification(True, "", None, None, share_at)


def _share(
    result: FitResult, j: int, lo: float, hi: float, log_scale: bool, rtol: float
) -> tuple[float, str | None]:
    """Share of finite draws at the more populated bound, and which bound."""
    if result.draws is None or result.problem is None:
        return 0.0, None
    col = np.asarray(result.draws[:, j], dtype=float)
    col = col[~np.isnan(col)]
    if col.size == 0:
        return 0.0, None
    internal = result.problem.params[j].to_internal(col)
    at_lo, at_hi = _at_bound(internal, lo, hi, log_scale, rtol)
    s_lo, s_hi = float(at_lo.mean()), float(at_hi.mean())
    if max(s_lo, s_hi) == 0:
        return 0.0, None
    return (s_lo, "lower") if s_lo >= s_hi else (s_hi, "upper")


def param_estimate(
    result: FitResult,
    param: str,
    *,
    method: str | None = None,
    depends: tuple[str, ...] = (),
    rtol: float = RTOL,
    share: float = SHARE,
) -> Estimate:
    """A fitted parameter (or derived quantity) as an estimate, with its identification.

    Parameters
    ----------
    result, param
        The fit and a parameter name (``result.names``) or a scalar derived
        quantity (``result.derived``, see :meth:`FitResult.derive`).
    method
        Default: the fit's bootstrap description (:meth:`FitResult.method_text`).
    depends
        Other parameters it rests on; it is not identified when any of them is
        not. E.g. ``relu_sparsity``'s limit ``A0`` with ``depends=("alpha",)``:
        at ``alpha = 0`` the law is a constant and ``A0`` trades off against
        ``b`` and ``c``, so its interval means nothing.
    rtol, share
        As for :func:`identification`.

    Returns
    -------
    scalinglab.estimate.Estimate
        With the fit's level and number of refits when it has an interval;
        ``identified``, ``bound``, ``side`` and ``note`` from :func:`identification`.
    """
    reps = result.bootstrap_info.get("reps")
    method = method or result.method_text()
    if param in result.params:
        ident = identification(result, param, rtol=rtol, share=share)
        point = float(result.params[param])
        ci = None if result.ci is None else result.ci[param]
    elif param in result.derived:
        d = result.derived[param]
        if np.ndim(d.point) != 0:
            raise ValueError(f"derived quantity {param!r} is not a scalar")
        point = float(d.point)
        ci = None if d.ci is None else (float(d.ci[0]), float(d.ci[1]))
        ident = Identification(True, "", None, None, 0.0)
        if ci is not None and ci[1] - ci[0] <= 1e-12 * max(1.0, abs(point)):
            ident = Identification(False, f"{param} has a zero-width interval", None, None, 0.0)
    else:
        raise KeyError(f"fit of {result.law!r} has no parameter or derived quantity {param!r}")
    for dep in depends if ident.identified else ():
        sub = identification(result, dep, rtol=rtol, share=share)
        if not sub.identified:
            ident = Identification(False, f"rests on {sub.reason}", None, None, sub.share_at_bound)
            break
    return Estimate(
        point,
        None if not ci else float(ci[0]),
        None if not ci else float(ci[1]),
        level=result.level if ci else None,
        method=method,
        resamples=reps if ci else None,
        identified=ident.identified,
        note=ident.reason or None,
        bound=ident.bound,
        side=ident.side,
    )
