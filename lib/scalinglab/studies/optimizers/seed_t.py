"""The sweep design's deciding findings, seed by seed, with Student-t intervals.

The ``default``/``medium`` sweeps train 3 seeds per cell. Their speedup table
(:func:`.findings.speedups`) resamples those seeds with a percentile bootstrap, which at
``n = 3`` covers about 0.71 of the time at a nominal 95% (the committed coverage table,
:mod:`scalinglab.stats.method_coverage`): no interval to decide a claim on. The claims
of the sweep design (FPO-1, FPO-2, FPO-2b, FPO-3, FPO-4, FPO-6) are therefore decided on
the same statistics computed once per seed, as the ``matched`` design does
(:mod:`.seedwise`): AdamW's ``L(D) = A D^-alpha + E`` is fitted to each seed's own
losses at each size, every run of that seed is inverted through it (runs of one seed
share initialisation and data order: the comparison is paired), and the statistic's
mean over seeds gets a Student-t interval over the seeds.

:func:`analyse` returns record rows, one call in the notebook:

- ``t/speedup_mean/<opt>/<size>``: the geometric mean of the speedup over the
  optimizer's budgets at that size;
- ``t/matrix_over_scalar/<size>``: the matrix family's geometric-mean speedup over the
  scalar family's (each optimizer over its own budgets, as :func:`.analysis.family_gap`);
- ``t/size_slope/<opt>``: the slope of the mean log speedup over the budgets every size
  shares against log N, over the trend sizes;
- ``t/catch_up/<follower>_vs_muon/<size>``: the follower's speedup relative to Muon's at
  the highest shared budget over the same at the lowest;
- ``coverage/t/n3`` and ``coverage/percentile/n3``: the simulated coverage at ``n = 3``
  of both interval methods on a generator resampled from these data's own per-seed
  deviations (:func:`.seedwise.coverage`, :func:`scalinglab.stats.calibration.resampled`).
  Each t interval's method text states that coverage
  (:func:`scalinglab.stats.coverage_report.measured_on_data`), so a verdict decided on
  it says it where it falls below the target.

A size whose AdamW fit leaves ``E`` unidentified (pooled, or on its bound in the per-seed
fits by the library's share rule: :func:`.matched_report.e_flags`) gives not-identified
findings there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.stats.coverage_report import measured_on_data
from scalinglab.studies.optimizers import seedwise
from scalinglab.studies.optimizers.analysis import family_log_gap
from scalinglab.studies.optimizers.findings import tuning_note
from scalinglab.studies.optimizers.matched_report import e_flags, not_identified

#: How every interval of this module is made (``n`` seeds).
METHOD = "Student t over {n} seeds (AdamW fitted per seed, statistic computed per seed)"

Row = dict[str, Any]


@dataclass(frozen=True)
class SeedT:
    """What :func:`analyse` found.

    Attributes
    ----------
    rows
        Record rows (``name``, ``point`` an :class:`~scalinglab.estimate.Estimate`, ...).
    coverage
        :func:`.seedwise.coverage`: method, n, coverage, se, sims, deviations (empty
        with too few finite seeds).
    per_seed
        :func:`.seedwise.per_seed` of the table.
    """

    rows: list[Row]
    coverage: pd.DataFrame
    per_seed: pd.DataFrame


def budgets(ps: pd.DataFrame, optimizer: str, size: str) -> list[float]:
    """The budgets ``optimizer`` ran at ``size`` (sorted)."""
    g = ps[(ps.optimizer == optimizer) & (ps.model_size == size)]
    return sorted(float(m) for m in g.data_multiple.unique())


def family_geomean(
    matrix: Sequence[str],
    scalar: Sequence[str],
    size: str,
    own: Mapping[str, Sequence[float]],
    *,
    with_baseline: bool = False,
) -> seedwise.Statistic:
    """Mean over the matrix optimizers of each one's mean log speedup over its own budgets
    ``own[o]``, minus the same over the scalar ones (a ratio of geometric means once
    exponentiated); ``with_baseline``: the baseline is one of the scalars, at log speedup
    0 by definition (as :func:`.analysis.family_gap`)."""

    def per_opt(d: Mapping[tuple[str, str, float], float], o: str) -> float:
        return float(np.mean([d[(o, size, float(m))] for m in own[o]]))

    return lambda d: float(
        family_log_gap(
            [per_opt(d, o) for o in matrix],
            [per_opt(d, o) for o in scalar],
            with_baseline=with_baseline,
        )
    )


def slope_geomean(
    o: str, sizes: Sequence[str], multiples: Sequence[float], n_params: Mapping[str, float]
) -> seedwise.Statistic:
    """Least-squares slope, against log N over ``sizes``, of the mean log speedup over
    ``multiples`` (the budgets every size shares)."""
    x = np.log([float(n_params[s]) for s in sizes])
    xc = (x - x.mean()) / ((x - x.mean()) ** 2).sum()
    return lambda d: float(
        xc @ np.array([np.mean([d[(o, s, float(m))] for m in multiples]) for s in sizes])
    )


def analyse(
    table: pd.DataFrame,
    *,
    sizes: Sequence[str],
    e_identified: Mapping[str, bool],
    families: Mapping[str, str],
    n_params: Mapping[str, float] | None,
    trend_sizes: Sequence[str],
    trend_identified: bool,
    shared: Sequence[float],
    follower: str,
    catch_multiples: Sequence[float],
    baseline: str = "adamw",
    level: float = 0.95,
    seed: int = 0,
    sims: int = 4000,
    tuning: Mapping[str, Sequence[str]] | None = None,
    misfit: Mapping[str, Sequence[str]] | None = None,
    scalar_with_baseline: bool = False,
) -> SeedT:
    """Every ``t/`` finding of the sweep design and the coverage rows (module docstring).

    Parameters
    ----------
    table
        One row per run: ``optimizer, model_size, data_multiple, seed, loss``.
    sizes
        Model sizes, smallest first.
    e_identified
        ``size -> whether AdamW's pooled fit identifies E`` (:func:`.findings.speedups`).
    families
        ``optimizer -> "matrix" | "scalar"``.
    n_params, trend_sizes, trend_identified, shared
        The size trend: parameters per size (None: no trend), the sizes it is fitted
        over and whether it is identified (:func:`.findings.trend_sizes`), the budgets
        every size shares (:func:`.matching.matched`).
    follower, catch_multiples
        SOAP's name and the budgets it shares with Muon (:func:`.findings.shared_multiples`).
    seed, sims
        Seed and simulated data sets of the coverage simulation.
    tuning
        ``size -> flagged tuned settings`` (:func:`.tuning_curves.size_flags`): a size
        with any keeps its findings not identified, the flags in the note.
    misfit
        ``size -> why the baseline's law misses its own losses there``
        (:func:`.matched_report.law_misfit`): such a size's findings are not identified
        either, the reason in the note.
    scalar_with_baseline
        Count the baseline among the scalar family of ``t/matrix_over_scalar/<size>``
        (:func:`family_geomean`).
    """
    ps = seedwise.per_seed(table, baseline=baseline)
    seeds = seedwise.by_seed(ps)
    others = [o for o in dict.fromkeys(map(str, ps.optimizer)) if o != baseline]
    cov = seedwise.coverage(ps[ps.optimizer.isin(others)], level=level, sims=sims, seed=seed)
    at3 = cov[(cov.method == "Student t") & (cov.n == 3)] if len(cov) else cov
    stated = (
        "; " + measured_on_data(float(at3.coverage.iloc[0]), 3, se=float(at3.se.iloc[0]))
        if len(at3)
        else ""
    )
    why = e_flags(ps, e_identified, baseline=baseline)
    for s, fl in (tuning or {}).items():
        if fl:
            why.setdefault(s, []).append(tuning_note(list(fl)))
    for s, reasons in (misfit or {}).items():
        why.setdefault(s, []).extend(reasons)
    rows: list[Row] = []

    def add(
        name: str,
        stat: seedwise.Statistic,
        reasons: list[str],
        desc: str,
        *,
        ratio: bool = True,
        unit: str = "x",
    ) -> None:
        est, x = seedwise.summary(seeds, stat, level=level, ratio=ratio)
        if est is None or not np.isfinite(est.point):
            return
        n = int(np.isfinite(x).sum())
        if est.lo is not None:
            # the coverage simulated on these data is stated at n = 3 only
            est = est.replace(method=METHOD.format(n=n) + (stated if n == 3 else ""), n=n)
        est = not_identified(est, reasons)
        rows.append({"name": name, "point": est, "unit": unit, "description": desc})

    own = {(o, s): budgets(ps, o, s) for o in others for s in sizes}
    for s in sizes:
        for o in others:
            if own[(o, s)]:
                add(
                    f"t/speedup_mean/{o}/{s}",
                    seedwise.geomean(o, s, own[(o, s)]),
                    why.get(s, []),
                    f"geometric mean of {o}'s speedup over {baseline} over its budgets at {s}, "
                    "per seed",
                )
        matrix = [o for o in others if families.get(o) == "matrix" and own[(o, s)]]
        scalar = [o for o in others if families.get(o) == "scalar" and own[(o, s)]]
        if matrix and scalar:
            add(
                f"t/matrix_over_scalar/{s}",
                family_geomean(
                    matrix,
                    scalar,
                    s,
                    {o: own[(o, s)] for o in matrix + scalar},
                    with_baseline=scalar_with_baseline,
                ),
                why.get(s, []),
                f"geo-mean speedup of matrix ({', '.join(matrix)}) over scalar "
                f"({', '.join(([baseline] if scalar_with_baseline else []) + scalar)}) "
                f"methods at {s}, per seed",
            )
        if {follower, "muon"} <= set(others) and len(catch_multiples) >= 2:
            lo_m, hi_m = float(catch_multiples[0]), float(catch_multiples[-1])
            add(
                f"t/catch_up/{follower}_vs_muon/{s}",
                seedwise.catch_up(follower, "muon", s, lo_m, hi_m),
                why.get(s, []),
                f"SOAP's speedup relative to Muon's at {hi_m:g}x over the same at {lo_m:g}x "
                f"at {s}, per seed (above 1: SOAP catches up with more data)",
            )
    if n_params is not None and len(trend_sizes) >= 2 and shared:
        for o in others:
            reasons = [r for s in trend_sizes for r in why.get(s, [])]
            if not trend_identified:
                reasons.insert(0, "rests on a size whose speedups are not identified")
            add(
                f"t/size_slope/{o}",
                slope_geomean(o, trend_sizes, shared, n_params),
                list(dict.fromkeys(reasons)),
                f"slope of {o}'s log speedup per log N over "
                + ", ".join(trend_sizes)
                + " (mean over "
                + ", ".join(f"{m:g}x" for m in shared)
                + "), per seed",
                ratio=False,
                unit="",
            )
    for r in cov[cov.n == 3].itertuples() if len(cov) else ():
        key = "t" if r.method == "Student t" else "percentile"
        rows.append(
            {
                "name": f"coverage/{key}/n3",
                "point": Estimate(float(r.coverage), note=f"simulation standard error {r.se:.3f}"),
                "description": f"simulated coverage of a nominal {level:.0%} {r.method} interval "
                "of a mean over 3 seeds, resampling the per-seed deviations of these log "
                f"speedups ({r.sims} data sets)",
            }
        )
    return SeedT(rows, cov, ps)
