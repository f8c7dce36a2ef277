"""Coverage of the intervals read on our own long runs, simulated on those runs.

- :func:`group_coverage`: the pooled law fit of one (activation, size) plus each run's own
  residual curve around it, whole runs drawn with replacement as the seeds of a simulated
  experiment (so the generator has the seeds' real spread and shape); the group bootstrap
  over runs is rerun on each, the truth is the pooled fit's ``A0``.
- :func:`pair_coverage`: the same for two sizes' law limits compared per decade.
- :func:`plateau_pair_coverage`: two plateau limits' Welch delta-method interval, each
  model's per-seed levels centred and drawn with replacement.

Each returns a :class:`.coverage_sim.Coverage` whose words
(:meth:`~.coverage_sim.Coverage.said`) the finding's method appends, so its verdict states
the coverage measured on its own data. The released curves' procedures are in
:mod:`.coverage_sim`.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from scalinglab.errors import InputError
from scalinglab.fitting import FitResult, fit
from scalinglab.studies.sparsity.coverage_sim import Coverage, from_hits


def _run_parts(group: pd.DataFrame, res: FitResult) -> tuple[list, list]:
    """Each run's ``(tokens, ratio)`` and its residuals from ``res``, runs in order."""
    runs = [g for _, g in group.groupby("run", sort=True)]
    parts = [(g["tokens"].to_numpy(float), g["activation_ratio"].to_numpy(float)) for g in runs]
    return parts, [y - res.predict(x) for x, y in parts]


def _simulated_refit(
    parts: list,
    resid: list,
    res: FitResult,
    rng: np.random.Generator,
    *,
    reps: int,
    level: float,
    seed: int,
) -> FitResult | None:
    """One simulated experiment: as many runs as ``parts``, each a run drawn with
    replacement, its curve the law's prediction plus that run's residuals; refitted with
    a group bootstrap over runs (None when the refit fails)."""
    k = len(parts)
    pick = rng.integers(0, k, size=k)
    x = np.concatenate([parts[j][0] for j in pick])
    y = np.concatenate([res.predict(parts[j][0]) + resid[j] for j in pick])
    g = np.repeat(np.arange(k), [parts[j][0].size for j in pick])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return fit(res.law, x, y, groups=g, bootstrap=reps, level=level, seed=seed)
    except (InputError, ValueError):
        return None


def group_coverage(
    group: pd.DataFrame,
    res: FitResult,
    *,
    sims: int = 200,
    reps: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> Coverage:
    """Coverage of the law fit's group bootstrap over runs (percentile, ``reps`` refits)
    for one (activation, size) of our runs.

    Parameters
    ----------
    group
        The usable rows of one activation and model (``run, tokens, activation_ratio``),
        every seed.
    res
        Its pooled law fit (the generator's mean; truth: its ``A0``).

    Returns
    -------
    Coverage
        ``n`` is the number of runs; generator ``runs``.
    """
    parts, resid = _run_parts(group, res)
    truth = float(res.params["A0"])
    rng = np.random.default_rng([seed, 1299709])
    hits = np.zeros(sims, bool)
    for s in range(sims):
        r = _simulated_refit(parts, resid, res, rng, reps=reps, level=level, seed=seed + s)
        ci = r.ci["A0"] if r is not None and r.ci else None
        hits[s] = ci is not None and ci[0] < ci[1] and ci[0] <= truth <= ci[1]
    return dataclasses.replace(
        from_hits({"runs": hits}, len(parts)),
        how=f"{reps} bootstrap refits per simulated experiment",
    )


def pair_coverage(
    small: tuple[pd.DataFrame, FitResult, float],
    large: tuple[pd.DataFrame, FitResult, float],
    *,
    sims: int = 200,
    reps: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> Coverage:
    """Coverage of the paired-draw interval of a law limit's change between two sizes
    (:func:`.limits.limit_scale_slope`), both sizes simulated as :func:`group_coverage`
    simulates one, independently, and refitted.

    Parameters
    ----------
    small, large
        ``(usable rows, pooled law fit, non-embedding parameters)`` of each size; the
        truth is the slope between the two fits' ``A0``.

    Returns
    -------
    Coverage
        ``n`` is the smaller size's number of runs (``how`` names both); generator
        ``runs``.
    """
    from scalinglab.studies.sparsity.limits import limit_scale_slope

    (ga, ra, na), (gb, rb, nb) = small, large
    pa, ea = _run_parts(ga, ra)
    pb, eb = _run_parts(gb, rb)
    truth = limit_scale_slope((ra, na), (rb, nb), level=level).point
    rng = np.random.default_rng([seed, 15485863])
    hits = np.zeros(sims, bool)
    for s in range(sims):
        fa = _simulated_refit(pa, ea, ra, rng, reps=reps, level=level, seed=seed + 2 * s)
        fb = _simulated_refit(pb, eb, rb, rng, reps=reps, level=level, seed=seed + 2 * s + 1)
        if fa is None or fb is None:
            continue
        ci = limit_scale_slope((fa, na), (fb, nb), level=level).ci
        hits[s] = ci is not None and ci[0] < ci[1] and ci[0] <= truth <= ci[1]
    return dataclasses.replace(
        from_hits({"runs": hits}, min(len(pa), len(pb))),
        how=f"{len(pa)} and {len(pb)} runs; {reps} bootstrap refits per size and simulated "
        "experiment",
    )


def plateau_pair_coverage(
    small: tuple[Sequence[float], float],
    large: tuple[Sequence[float], float],
    *,
    sims: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Coverage:
    """Coverage of the Welch t interval of a plateau limit's change between two models
    (:func:`.limits.plateau_scale_slope`), simulated on the two models' own per-seed levels.

    Each simulated experiment draws as many levels per model as it has, with replacement,
    from that model's levels centred at their mean plus its mean; the truth is the change
    between the two means. Seed-to-seed spread and skew are the data's own; with 5 seeds a
    model's empirical distribution is coarse, so the reading is an approximation, stated
    with its Monte Carlo error.

    Parameters
    ----------
    small, large
        ``(per-seed plateau levels (n,), x)`` of each model (``x`` the parameters or the
        width/depth ratio, as :func:`.limits.plateau_scale_slope` takes them).

    Returns
    -------
    Coverage
        ``n`` the smaller model's number of seeds; generator ``seeds``.
    """
    from scalinglab.studies.sparsity.limits import plateau_scale_slope

    (va, xa), (vb, xb) = small, large
    a, b = np.asarray(va, dtype=float), np.asarray(vb, dtype=float)
    truth = plateau_scale_slope((a, xa), (b, xb), level=level).point
    rng = np.random.default_rng([seed, 32452843])
    ca, cb = a - a.mean(), b - b.mean()
    hits = np.zeros(sims, bool)
    for s in range(sims):
        sa_ = a.mean() + rng.choice(ca, size=a.size)
        sb_ = b.mean() + rng.choice(cb, size=b.size)
        ci = plateau_scale_slope((sa_, xa), (sb_, xb), level=level).ci
        hits[s] = ci is not None and ci[0] <= truth <= ci[1]
    return dataclasses.replace(
        from_hits({"seeds": hits}, min(a.size, b.size)), how=f"{a.size} and {b.size} seeds"
    )


__all__ = ["group_coverage", "pair_coverage", "plateau_pair_coverage"]
