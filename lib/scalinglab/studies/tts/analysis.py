"""The study's analyses on a sample Dataset (ours or a user's), one call per notebook step.

Input: a Dataset with ``correct`` and ``answer`` (size, prompt, sample), as
:func:`~scalinglab.studies.tts.sampling.run_samples` or
:func:`~scalinglab.studies.tts.table.load_samples` returns it. Every interval comes
from one set of problem resamples (``R`` rows of problem indices), shared by all
analyses, so differences between sizes and between cost measures are paired.

Shapes: ``S`` sizes, ``P`` problems, ``K`` values of k, ``R`` resamples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.fitting import coverage_law as tlaw
from scalinglab.stats import passk as cv
from scalinglab.stats.samples import METHOD, Curves, coverage_curves, max_k, size_arrays

__all__ = [
    "Curves",
    "Majority",
    "coverage_curves",
    "extrapolation",
    "extrapolation_k",
    "fit_laws",
    "law_estimates",
    "loglinear_slope",
    "majority",
    "max_k",
    "plateau",
    "size_arrays",
]


def fit_laws(curves: Curves, *, reps: int | None = None) -> dict[str, tlaw.BootstrapFit]:
    """The exponentiated power law per size on k = 1, 2, 4, ..., k_max, with refits on
    (the first ``reps`` of) the problem resamples."""
    grid = cv.k_grid(len(curves.ks))
    draws = curves.draws[:reps]
    return {
        s: tlaw.fit_bootstrap(grid, curves.per_problem[s][:, grid - 1], draws) for s in curves.sizes
    }


def extrapolation_k(k_max: int, *, frac: int = 8) -> int:
    """The largest k of the extrapolation fit: ``k_max / frac``, at least 4 (three grid
    points, 1, 2 and 4, for a two-parameter law)."""
    return max(k_max // frac, 4)


def law_estimates(fits: dict[str, tlaw.BootstrapFit], curves: Curves) -> dict[str, Estimate]:
    """``"<size>/a"``, ``"<size>/b"``: each size's law parameters with their intervals
    over the refits (not identified when on a bound of the law)."""
    return {
        f"{s}/{p}": f.estimate(p, level=curves.level, method=METHOD)
        for s, f in fits.items()
        for p in ("a", "b")
    }


def extrapolation(curves: Curves, *, frac: int = 8, reps: int | None = None) -> dict[str, Estimate]:
    """Per size: fit on k <= :func:`extrapolation_k`, predict k_max; the error (predicted
    minus observed coverage) with its interval over the refits that succeeded."""
    grid = cv.k_grid(len(curves.ks))
    k_fit = extrapolation_k(len(curves.ks), frac=frac)
    draws = curves.draws[:reps]
    out = {}
    for s in curves.sizes:
        err, ed = tlaw.extrapolate(grid, curves.per_problem[s][:, grid - 1], draws, k_fit=k_fit)
        out[s] = curves.over_prompts(err, ed)
    return out


def loglinear_slope(curves: Curves, size: str) -> Estimate:
    """Slope of coverage against log2 k over the grid (coverage gained per doubling of k),
    by least squares over k = 1, 2, 4, ..., k_max, with its interval over the resamples."""
    grid = cv.k_grid(len(curves.ks))
    u = np.log2(grid)
    u = (u - u.mean()) / np.sum((u - u.mean()) ** 2)
    point = float(curves.cov[size][grid - 1] @ u)
    return curves.over_prompts(point, curves.cov_draws[size][:, grid - 1] @ u)


@dataclass
class Majority:
    """Majority-vote accuracy per size at the grid's k.

    Attributes
    ----------
    ks
        (K,) the grid 1, 2, 4, ..., k_max.
    per_problem
        size -> (P, K).
    """

    ks: np.ndarray
    per_problem: dict[str, np.ndarray]

    def curve(self, size: str, draws: np.ndarray | None = None) -> np.ndarray:
        x = self.per_problem[size]
        return x.mean(axis=0) if draws is None else np.stack([x[i].mean(axis=0) for i in draws])


def majority(ds: xr.Dataset, *, k_max: int, reps: int = 32, seed: int = 0) -> Majority:
    """Majority-vote accuracy per problem at k = 1, 2, 4, ..., k_max for every size."""
    ks = cv.k_grid(k_max)
    out = {}
    for i, s in enumerate(str(x) for x in ds["size"].values):
        _, _, ans, ok = size_arrays(ds, s)
        out[s] = cv.majority_accuracy(ans, ok, ks, reps=reps, seed=seed + i)
    return Majority(ks, out)


def plateau(maj: Majority, curves: Curves, size: str, *, tol: float = 0.01) -> dict[str, Estimate]:
    """Where majority voting stops improving, and what coverage gains after it.

    Returns
    -------
    dict
        ``k_plateau``: the smallest grid k within ``tol`` of the majority accuracy at
        k_max; ``maj_gain``: majority accuracy at k_max minus at k_max / 8;
        ``cov_gain``: coverage at k_max minus at k_max / 8. Each with its interval over
        the curves' prompt resamples.
    """
    ks = maj.ks
    k8 = int(ks[-1] // 8)
    j8 = int(np.searchsorted(ks, k8))
    m_pt, m_dr = maj.curve(size), maj.curve(size, curves.draws)
    c_pt, c_dr = curves.cov[size], curves.cov_draws[size]
    return {
        "k_plateau": curves.over_prompts(
            cv.plateau_k(m_pt, ks, tol=tol), np.array([cv.plateau_k(d, ks, tol=tol) for d in m_dr])
        ),
        "maj_gain": curves.over_prompts(float(m_pt[-1] - m_pt[j8]), m_dr[:, -1] - m_dr[:, j8]),
        "cov_gain": curves.over_prompts(
            float(c_pt[ks[-1] - 1] - c_pt[k8 - 1]), c_dr[:, ks[-1] - 1] - c_dr[:, k8 - 1]
        ),
    }
