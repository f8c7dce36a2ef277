"""The coverage law with a ceiling: ``coverage(k) = c * exp(a * k^b)``.

The exponentiated power law (:mod:`scalinglab.fitting.coverage_law`) tends to 1 as k
grows, so it assumes every prompt is solved eventually. A policy that never solves some
prompts (a wrong carry it always makes, an answer it cannot spell) has coverage that
levels off at the share ``c`` of prompts it can solve at all. This module fits the law
with that ceiling as a third parameter, in log space like ``exp_power``::

    log coverage = log c + a k^b,   a in [-50, 0], b in [-5, 0], c in [C_MIN, 1]

and says whether the data identify the ceiling. Coverage never exceeds the ceiling, so
``c`` is raised to the highest coverage observed (the fit leaves out points at coverage
1 and could otherwise put ``c`` below a coverage the policy reached, an interval that
excludes what was seen). ``c`` on its upper bound 1 (no ceiling)
in the point fit, or in at least :data:`scalinglab.estimate.BOUND_SHARE` of the prompt
resamples' refits, is **not identified** (the curve is still rising at ``k_max`` and
cannot tell a ceiling below 1 from a slow approach to 1). A ceiling off its bound is an
estimate, with its interval over the refits.

Fitted with the fitting engine (:func:`scalinglab.fitting.fit`, least squares on log
coverage, points with coverage 0 or 1 left out as for ``exp_power``); the law is not
registered (it is this study's), so ``scalinglab fit`` does not list it.

Shapes: ``K`` values of k, ``P`` problems, ``R`` resamples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scalinglab.estimate import Estimate, bound_share_note, identified_by_share
from scalinglab.fitting import FitResult, Law, Param, fit
from scalinglab.fitting.coverage_law import LS_DELTA

NAME = "exp_power_ceiling"
#: Lowest ceiling the fit may use (a policy solving fewer than a third of its prompts
#: at any k is outside what this law describes here).
C_MIN = 1.0 / 3.0
#: Distance to the bound 1 (in log c) that counts as "on" it.
BOUND_TOL = 1e-4


def _fn(k, a, b, c):
    return np.log(c) + a * np.exp(b * np.log(k))


def _jac(k, a, b, c):
    kb = np.exp(b * np.log(k))
    v = np.log(c) + a * kb
    return v, {
        "a": np.broadcast_to(kb, v.shape),
        "b": a * kb * np.log(k),
        "c": np.broadcast_to(1.0 / c, v.shape),
    }


def _init(x, y, groups, n_groups):
    """Starts: exp_power's grid at ceilings 1, 0.99 and the largest coverage seen."""
    top = float(np.clip(np.max(y) * (1 + 1e-6), C_MIN, 1.0))
    grid = [
        (a, b, c)
        for a in (-0.05, -0.3, -1.0, -3.0)
        for b in (-0.05, -0.3, -0.8)
        for c in (1.0, 0.99, top)
    ]
    return np.array(grid, dtype=float)


LAW = Law(
    name=NAME,
    formula="coverage = c * exp(a * k^b)",
    x_names=("k",),
    params=(
        Param("a", bounds=(-50.0, 0.0)),
        Param("b", bounds=(-5.0, 0.0)),
        Param("c", bounds=(C_MIN, 1.0)),
    ),
    fn=_fn,
    jac=_jac,
    space="log",
    init=_init,
    objective="huber",
    x_positive=(True,),
    description="exponentiated power law of coverage with a ceiling c (share ever solved)",
)


def fit_ceiling(ks: np.ndarray, cov: np.ndarray) -> FitResult:
    """Fit the ceiling law to one coverage curve.

    Parameters
    ----------
    ks, cov
        (K,) sample counts and coverage; points with coverage 0 or 1 are left out
        (no information in log space), as for ``exp_power``.

    Raises
    ------
    ValueError
        Fewer than 4 informative points (three parameters).
    """
    ks = np.asarray(ks, dtype=float)
    cov = np.asarray(cov, dtype=float)
    keep = (cov > 0) & (cov < 1.0 - 1e-12)
    if keep.sum() < 4:
        raise ValueError(f"{NAME} needs >= 4 points with 0 < coverage < 1, got {int(keep.sum())}")
    return fit(LAW, ks[keep], cov[keep], delta=LS_DELTA)


def predict(params: dict[str, float], ks: np.ndarray) -> np.ndarray:
    """Coverage under the law at ``ks`` (K,)."""
    return params["c"] * np.exp(params["a"] * np.asarray(ks, dtype=float) ** params["b"])


def on_ceiling_bound(c: float | np.ndarray) -> np.ndarray:
    """Whether a ceiling sits on its upper bound 1 (no ceiling)."""
    return np.abs(np.log(np.asarray(c, dtype=float))) < BOUND_TOL


@dataclass
class CeilingFit:
    """The ceiling law fitted to all prompts and to each resample.

    Attributes
    ----------
    point
        The fit on all prompts.
    draws
        (R, 3) refitted ``(a, b, c)``; NaN where a refit failed.
    """

    point: FitResult
    draws: np.ndarray
    #: The highest coverage observed on the grid (all prompts), and per resample ``(R,)``:
    #: coverage never exceeds the ceiling, so ``c`` is at least these (None: not known).
    top: float | None = None
    top_draws: np.ndarray | None = None

    def ceilings(self) -> np.ndarray:
        """``(R,)`` refitted ``c``, each raised to its resample's highest observed
        coverage (a ceiling below a coverage the policy reached is impossible: the fit
        leaves out the points at coverage 1, so by itself it can put ``c`` under them)."""
        c = self.draws[:, 2]
        if self.top_draws is not None:
            c = np.where(np.isfinite(c), np.fmax(c, self.top_draws), c)
        return c

    def share_at_bound(self) -> float:
        """Share of the refits that succeeded with ``c`` on its bound 1 (after raising
        each to its resample's highest observed coverage)."""
        c = self.ceilings()
        c = c[np.isfinite(c)]
        return float(on_ceiling_bound(c).mean()) if c.size else math.nan

    def ceiling(self, *, level: float, method: str) -> Estimate:
        """The ceiling ``c`` with its percentile interval over the refits; not identified
        when on its bound 1 in the point fit or in :data:`BOUND_SHARE` of the refits."""
        v = float(self.point.params["c"])
        raised = self.top is not None and float(self.top) > v
        if raised:
            v = float(self.top)  # type: ignore[arg-type]
        c = self.ceilings()
        c = c[np.isfinite(c)]
        share = self.share_at_bound()
        if bool(on_ceiling_bound(v)):
            ok, note = False, "c at its bound 1 (no ceiling) in the point fit"
            if raised:
                note += " (the coverage observed reaches 1, so no ceiling lies below it)"
        elif not identified_by_share(share):
            ok, note = False, bound_share_note("c", share, 1)
        else:
            ok, note = True, None
        if c.size < 2:
            return Estimate(v, identified=False, method=method, note="no refits succeeded")
        q = (1.0 - level) / 2.0
        lo, hi = (float(x) for x in np.quantile(c, [q, 1.0 - q]))
        lo, hi = min(lo, v), max(hi, v)
        return Estimate(
            v,
            lo,
            hi,
            level=level,
            method=method,
            resamples=int(c.size),
            identified=ok,
            bound=None if ok else 1.0,
            side=None if ok else "upper",
            note=note,
        )


def fit_ceiling_bootstrap(ks: np.ndarray, per_problem: np.ndarray, draws: np.ndarray) -> CeilingFit:
    """Fit the law to the mean of ``per_problem`` (P, K) and to each resample's mean.

    ``draws`` (R, P) are problem indices (:func:`~scalinglab.stats.passk.prompt_draws`).
    """
    point = fit_ceiling(ks, per_problem.mean(axis=0))
    out = np.full((len(draws), 3), np.nan)
    top = np.full(len(draws), np.nan)
    for r, idx in enumerate(draws):
        cov = per_problem[idx].mean(axis=0)
        top[r] = float(np.max(cov))
        try:
            f = fit_ceiling(ks, cov)
        except ValueError:
            continue
        out[r] = f.params["a"], f.params["b"], f.params["c"]
    return CeilingFit(point, out, float(np.max(per_problem.mean(axis=0))), top)


def never_solved(correct: np.ndarray) -> float:
    """Share of problems with no correct sample among all of theirs (P, n) 0/1: the
    empirical floor of ``1 - c`` at ``k = n``."""
    c = np.asarray(correct)
    return float(np.mean(c.sum(axis=1) == 0))
