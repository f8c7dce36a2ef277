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
import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.fitting import coverage_law as tlaw
from scalinglab.stats import passk as cv
from scalinglab.stats.calibration import change_with_floor, proportion_estimate, seed_mean_coverage
from scalinglab.stats.samples import METHOD, Curves, coverage_curves, max_k, size_arrays
from scalinglab.studies.tts import ceiling as tceil
from scalinglab.studies.tts.policies import QualityOrder, quality_order

__all__ = [
    "Curves",
    "Majority",
    "Ordering",
    "ceiling_estimates",
    "fit_ceilings",
    "interval_coverage",
    "state_coverage",
    "ordering",
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
    (the first ``reps`` of) the problem resamples; a size whose coverage is strictly
    between 0 and 1 at fewer than 3 grid points (saturated within a few samples) is left
    out: there is nothing to fit."""
    grid = cv.k_grid(len(curves.ks))
    draws = curves.draws[:reps]
    out = {}
    for s in curves.sizes:
        try:
            out[s] = tlaw.fit_bootstrap(grid, curves.per_problem[s][:, grid - 1], draws)
        except ValueError:
            continue
    return out


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


#: Differences of coverage smaller than this are floating-point noise (the law's
#: ``exp(a k^b)`` a hair below 1), not a prediction error: they are set to 0 at the source.
COVERAGE_TOL = 1e-9


def _denoise(x: np.ndarray | float) -> np.ndarray:
    """``x`` with every ``|value| <`` :data:`COVERAGE_TOL` set to 0 (NaN kept)."""
    v = np.asarray(x, dtype=float)
    return np.where(np.abs(v) < COVERAGE_TOL, 0.0, v)


def extrapolation(curves: Curves, *, frac: int = 8, reps: int | None = None) -> dict[str, Estimate]:
    """Per size: fit on k <= :func:`extrapolation_k`, predict k_max; the error (predicted
    minus observed coverage) with its interval over the refits that succeeded (a size
    with fewer than 3 points below coverage 1 up to that k is left out).

    Errors below :data:`COVERAGE_TOL` in size are 0. Coverage cannot pass 1, so once a
    size's observed coverage at the fit's last k is near 1 its error is pinned near 0:
    predicted and observed coverage at k_max both lie between the lower of (observed
    coverage at k_fit, predicted coverage at k_max) and 1. That span is the estimate's
    ``room``; a claim whose band is wider than it reads "not identified (saturated)"
    (:func:`scalinglab.verdict_checks.saturation`), not a reproduction.
    """
    grid = cv.k_grid(len(curves.ks))
    k_fit = extrapolation_k(len(curves.ks), frac=frac)
    k_max = int(grid[-1])
    draws = curves.draws[:reps]
    out = {}
    for s in curves.sizes:
        try:
            err, ed = tlaw.extrapolate(grid, curves.per_problem[s][:, grid - 1], draws, k_fit=k_fit)
        except ValueError:  # too few points below 1 up to k_fit: left out
            continue
        err = float(_denoise(err))
        est = curves.over_prompts(err, _denoise(ed))
        observed_fit = float(curves.cov[s][k_fit - 1])
        predicted_max = err + float(curves.cov[s][k_max - 1])
        out[s] = est.replace(room=max(1.0 - min(observed_fit, predicted_max), 0.0))
    return out


#: Why a coverage slope can have no interval (record() shows it if every resample agrees).
FLAT = (
    "every prompt is solved in all of its samples or in none, so coverage is flat in k "
    "in every prompt resample"
)
#: Why the plateau k can have no interval.
ON_GRID = (
    "every prompt resample puts the plateau at the same k of the doubling grid: its "
    "spread is below one grid step"
)


def loglinear_slope(curves: Curves, size: str) -> Estimate:
    """Slope of coverage against log2 k over the grid (coverage gained per doubling of k),
    by least squares over k = 1, 2, 4, ..., k_max, with its interval over the resamples.

    Coverage cannot exceed 1, so a rise from pass@1 to 1 by k_max has a least-squares
    slope of at most ``(1 - pass@1) / log2 k_max``: that is the estimate's ``room``, and
    a claim asking for a larger slope reads "not identified (saturated)" for this size
    (:func:`scalinglab.verdict_checks.saturation`), not a counter-example.
    """
    grid = cv.k_grid(len(curves.ks))
    u = np.log2(grid)
    u = (u - u.mean()) / np.sum((u - u.mean()) ** 2)
    point = float(curves.cov[size][grid - 1] @ u)
    est = curves.over_prompts(point, curves.cov_draws[size][:, grid - 1] @ u)
    room = max(1.0 - float(curves.cov[size][0]), 0.0) / float(np.log2(grid[-1]))
    return est.replace(room=room, no_interval=FLAT)


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
        the curves' prompt resamples. ``cov_gain`` carries its ``room``, ``1 -``
        coverage at k_max / 8 (coverage cannot pass 1): a claim asking for a larger gain
        reads "not identified (saturated)" (:func:`scalinglab.verdict_checks.saturation`).
        ``maj_gain`` carries ``1 -`` majority accuracy at k_max / 8, the most it could
        still rise: a size already voting right on nearly every prompt shows a plateau
        whatever the claim, so a plateau band wider than that reads "not identified
        (saturated)" (a fall is not bounded so, but is not what the plateau claim
        contrasts with coverage's rise).
    """
    ks = maj.ks
    k8 = int(ks[-1] // 8)
    j8 = int(np.searchsorted(ks, k8))
    m_pt, m_dr = maj.curve(size), maj.curve(size, curves.draws)
    c_pt, c_dr = curves.cov[size], curves.cov_draws[size]
    cov_gain = curves.over_prompts(
        float(c_pt[ks[-1] - 1] - c_pt[k8 - 1]), c_dr[:, ks[-1] - 1] - c_dr[:, k8 - 1]
    )
    # no prompt's coverage or majority accuracy moves from k_max / 8 to k_max in any
    # resample: a gain of 0 with no spread, bounded by the share of prompts that gain
    n_p = int(curves.per_problem[size].shape[0])
    cov_gain = change_with_floor(cov_gain, n=n_p, signed=False)
    cov_gain = cov_gain.replace(room=max(1.0 - float(c_pt[k8 - 1]), 0.0))
    maj_gain = change_with_floor(
        curves.over_prompts(float(m_pt[-1] - m_pt[j8]), m_dr[:, -1] - m_dr[:, j8]), n=n_p
    )
    return {
        "k_plateau": curves.over_prompts(
            cv.plateau_k(m_pt, ks, tol=tol), np.array([cv.plateau_k(d, ks, tol=tol) for d in m_dr])
        ).replace(no_interval=ON_GRID),
        # the most majority accuracy could still rise: a plateau forced by a ceiling of 1
        "maj_gain": maj_gain.replace(room=max(1.0 - float(m_pt[j8]), 0.0)),
        "cov_gain": cov_gain,
    }


@dataclass
class Ordering:
    """Are the sizes ordered by quality on the held-out prompts?

    Attributes
    ----------
    order
        The point check (:func:`~scalinglab.studies.tts.policies.quality_order` on
        pass@1).
    gains
        ``"<larger>_vs_<smaller>"`` -> pass@1 of the larger of two adjacent sizes minus
        the smaller's, with its interval over the prompt resamples (paired).
    extremes
        The same for the largest size against the smallest (the pair the size-choice
        claims compare).
    ordered
        The point order holds and every adjacent gain's interval lies above 0: all pairs
        ordered at once, an intersection-union test that needs no multiplicity
        correction (each interval at the curves' level).
    extremes_ordered
        The largest size's gain over the smallest has its interval above 0.
    """

    order: QualityOrder
    gains: dict[str, Estimate]
    extremes: tuple[str, Estimate]
    ordered: bool
    extremes_ordered: bool

    def message(self) -> str:
        if self.ordered:
            return self.order.message() + ", every adjacent gain's interval above 0"
        weak = [k for k, e in self.gains.items() if not _above_zero(e)]
        extra = f"; gain intervals not above 0: {', '.join(weak)}" if weak else ""
        msg = self.order.message()
        if self.order.ordered:
            msg = msg.replace("ordered by quality", "not clearly ordered by quality", 1)
        return msg + extra


def _above_zero(e: Estimate) -> bool:
    return e.lo is not None and e.lo > 0


def ordering(curves: Curves) -> Ordering:
    """Pass@1 per size (coverage at k = 1) and the gain of each size over the next smaller
    one, and of the largest over the smallest, with paired intervals over the prompt
    resamples."""
    sizes = list(curves.sizes)
    p1 = {s: float(curves.cov[s][0]) for s in sizes}

    def gain(b: str, a: str) -> Estimate:
        return curves.over_prompts(
            p1[b] - p1[a], curves.cov_draws[b][:, 0] - curves.cov_draws[a][:, 0]
        )

    gains = {f"{b}_vs_{a}": gain(b, a) for a, b in zip(sizes, sizes[1:], strict=False)}
    ends = (f"{sizes[-1]}_vs_{sizes[0]}", gain(sizes[-1], sizes[0]))
    order = quality_order(p1, sizes)
    ok = order.ordered and all(_above_zero(e) for e in gains.values())
    return Ordering(order, gains, ends, ok, len(sizes) > 1 and _above_zero(ends[1]))


def fit_ceilings(curves: Curves, *, reps: int | None = None) -> dict[str, tceil.CeilingFit]:
    """The ceiling law per size on k = 1, 2, 4, ..., k_max with refits on (the first
    ``reps`` of) the prompt resamples; a size whose curve has fewer than 4 points strictly
    between 0 and 1 is left out (nothing to fit)."""
    grid = cv.k_grid(len(curves.ks))
    draws = curves.draws[:reps]
    out = {}
    for s in curves.sizes:
        try:
            out[s] = tceil.fit_ceiling_bootstrap(grid, curves.per_problem[s][:, grid - 1], draws)
        except ValueError:
            continue
    return out


def ceiling_estimates(
    fits: dict[str, tceil.CeilingFit], ds: xr.Dataset, curves: Curves
) -> dict[str, Estimate]:
    """``"<size>/c"``: the fitted ceiling (not identified on its bound 1);
    ``"<size>/never_solved"``: share of prompts with no correct sample among all of
    theirs, with its Wilson interval (the prompts are the units)."""
    out = {}
    for s, f in fits.items():
        out[f"{s}/c"] = f.ceiling(level=curves.level, method=METHOD + ", refitted")
    for s in curves.sizes:
        n, c, _, _ = size_arrays(ds, s)
        out[f"{s}/never_solved"] = proportion_estimate(
            int(np.sum(c == 0)), int(len(c)), level=curves.level
        )
    return out


def interval_coverage(
    per_prompt: dict[str, np.ndarray],
    *,
    level: float = 0.95,
    sims: int = 2000,
    resamples: int = 400,
    seed: int = 0,
) -> pd.DataFrame:
    """Simulated coverage, at this study's number of prompts, of the interval methods for
    a mean over prompts, drawing prompts with replacement from the observed per-prompt
    values of each finding (:func:`scalinglab.stats.calibration.seed_mean_coverage`):
    whether the prompt bootstrap's percentile interval covers for values as skewed as
    these (most prompts contribute 0 to a gain near saturation). With 2000 simulated data
    sets the standard error of a coverage near 0.93 is about 0.006 (400 left it at 0.013,
    too coarse to say whether 0.93 was reached).

    Parameters
    ----------
    per_prompt
        Finding name -> (P,) the statistic's value per prompt (its mean is the finding).

    Returns
    -------
    pandas.DataFrame
        ``finding, method, n, coverage, se, sims``.
    """
    rows = []
    for i, (name, v) in enumerate(per_prompt.items()):
        v = np.asarray(v, dtype=float)
        t = seed_mean_coverage(
            v, ns=(int(v.size),), sims=sims, level=level, resamples=resamples, seed=seed + i
        )
        rows.append(t.assign(finding=name))
    cols = ["finding", "method", "n", "coverage", "se", "sims"]
    return pd.concat(rows, ignore_index=True)[cols] if rows else pd.DataFrame(columns=cols)


def state_coverage(est: Estimate, table: pd.DataFrame, finding: str) -> Estimate:
    """``est`` with its method text stating the coverage :func:`interval_coverage`
    simulated for its own method (the percentile bootstrap over prompts) on these
    prompts' values (:func:`scalinglab.stats.coverage_report.measured_on_data`), so a
    verdict it decides states that coverage when below the target.

    Parameters
    ----------
    table
        :func:`interval_coverage`'s table.
    finding
        The finding's name in it.

    Raises
    ------
    KeyError
        ``table`` has no percentile-bootstrap row for ``finding``.
    """
    from scalinglab.stats.coverage_report import measured_on_data

    row = table[(table.finding == finding) & (table.method == "percentile bootstrap")]
    if not len(row):
        raise KeyError(f"state_coverage: no percentile-bootstrap coverage of {finding!r}")
    r = row.iloc[0]
    said = measured_on_data(float(r.coverage), int(r.n), se=float(r.se))
    return est.replace(method=f"{est.method}; {said}")
