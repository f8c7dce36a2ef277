"""Findings on the paper's own released curves (the ``published`` variant, section 9) and
the calibration of the minimum trend and size tolerance on half of them (section 9b, both
variants). Each curve is one run: its intervals are the block bootstraps of
:mod:`.published`; the coverage of those that decide a claim (the limits' residual block
bootstrap, the test half's trend and size summaries) is simulated on the curves' own fits
and residuals (:mod:`.coverage_sim`, committed as ``data/sparsity_laws/
published_coverage.json``) and stated in each finding's method.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.studies.sparsity import coverage_sim
from scalinglab.studies.sparsity import published as pub
from scalinglab.studies.sparsity import trends as strd
from scalinglab.studies.sparsity.steps import PAPER_TREND, Named, Step


def paper_laws(curves: pd.DataFrame, *, reps: int, level: float, seed: int) -> Step:
    """Section 9: every released curve refitted; its limit with the residual block
    bootstrap's interval. ``extra``: ``fits``, ``ptab`` (:func:`.published.refit`'s
    table), ``rmse_ratio`` (median of ours over the authors')."""
    ptab, pfits = pub.refit(curves, reps=reps, level=level, seed=seed)
    out = Step(extra={"fits": pfits, "ptab": ptab})
    covered = coverage_sim.read_table()
    for k, r in enumerate(ptab.to_dict("records")):
        cur = curves[(curves["activation"] == r["activation"]) & (curves["model"] == r["model"])]
        est = pub.paper_limit(
            pfits[(r["activation"], r["model"])],
            cur["D"].to_numpy(),
            cur["activation_ratio"].to_numpy(),
            reps=reps,
            level=level,
            seed=seed + k,
        )
        name = f"paper/law/{r['activation']}/{r['model']}/A0"
        out.findings.append(
            Named(
                name,
                coverage_sim.with_coverage(name, est, covered, level=level),
                f"{r['activation']} limit, the paper's {r['model']} curve refitted (authors: "
                f"{r['auth_A0']:.4g})",
                unit="activation ratio",
                headline=est.identified and r["model"] in ("0.1b", "1.2b"),
            )
        )
    worse = ptab[ptab["rmse"] > ptab["auth_rmse"] * (1 + 1e-3)]
    out.findings += [
        Named(
            "paper/fit/curves_at_most_authors_rmse",
            Estimate(float(len(ptab) - len(worse)), method="count"),
            f"released curves (of {len(ptab)}) where our refit's RMSE is at most the authors'",
            unit="curves",
        ),
        Named(
            "paper/fit/median_rmse_ratio",
            Estimate(float(np.median(ptab["rmse"] / ptab["auth_rmse"])), method="median"),
            "median over the released curves of our refit's RMSE over the authors'",
        ),
    ]
    cols = ["activation", "model", "n_points", "block_len", "resid_lag1", "rmse", "auth_rmse"]
    show = ptab[cols].copy()
    for p in ("alpha", "b", "c", "A0"):
        show[p] = [
            None
            if np.isnan(r.get(p, np.nan))
            else f"{r[p]:.3g} [{r[p + '_lo']:.3g}, {r[p + '_hi']:.3g}]"
            for r in ptab.to_dict("records")
        ]
        show[f"auth {p}"] = ptab[f"auth_{p}"]
    out.table = show
    return out


def paper_late(curves: pd.DataFrame, *, reps: int, level: float, seed: int) -> Step:
    """Section 9: law-free, each curve's last-decade slope and end ratio, averaged over
    sizes, and the end ratio's relative slope against parameters."""
    late, draws = pub.late_trends(curves, reps=reps, seed=seed)
    out = Step(table=late)
    for act in ("relu", "silu"):
        n = int((late["activation"] == act).sum())
        out.findings += [
            Named(
                f"paper/{act}/trend/late_slope",
                pub.mean_over_models(late, draws, activation=act, level=level),
                f"{act}: slope over the last decade of tokens, mean over the paper's {n} sizes "
                f"(paper: {PAPER_TREND[act]})",
                unit="activation ratio per 10x tokens",
                headline=True,
            ),
            Named(
                f"paper/{act}/end_ratio",
                pub.mean_over_models(late, draws, activation=act, column=1, level=level),
                f"{act}: ratio at the last checkpoint (late line), mean over sizes",
                unit="activation ratio",
            ),
            Named(
                f"paper/{act}/scale/relative_slope",
                pub.scale_slope(late, draws, activation=act, level=level),
                f"{act}: end-of-training ratio vs parameter count, relative (paper: weak "
                "dependence)",
                unit="fraction of the limit per 10x parameters",
                headline=True,
            ),
        ]
    return out


def min_effects(pcurves: pd.DataFrame) -> dict[str, float]:
    """The minimum trend effect per activation, as :func:`calibration` sets it
    (``calibration/<act>/min_relative_trend``: half the weakest last-decade trend of the
    calibration half of the paper's curves), for steps that run before section 9b. It
    reads the curves' point slopes only (no bootstrap)."""
    late, _ = pub.late_trends(pcurves, reps=1, seed=0)
    out = {}
    for act in ("relu", "silu"):
        cal_m, _ = strd.calibration_halves(late[late["activation"] == act]["model"].unique())
        out[act] = strd.min_trend_effect(late, activation=act, models=cal_m)
    return out


def calibration(
    pcurves: pd.DataFrame, *, test_half: bool, reps: int, level: float, seed: int
) -> Step:
    """Section 9b: the minimum trend and the size tolerance, set on half of the paper's
    curves; with ``test_half``, the other half's trends and size slopes (the published
    variant's deciding findings). ``extra["values"]``: the claims file's values."""
    late, draws = pub.late_trends(pcurves, reps=reps, seed=seed)
    out = Step()
    cal: dict[str, dict[str, Any]] = {}
    covered = coverage_sim.read_table() if test_half else {}
    for act in ("relu", "silu"):
        cal_m, test_m = strd.calibration_halves(late[late["activation"] == act]["model"].unique())
        cal[act] = {
            "calibration": ", ".join(cal_m),
            "test": ", ".join(test_m),
            "min_effect": strd.min_trend_effect(late, activation=act, models=cal_m),
            "tolerance": strd.scale_tolerance(late, activation=act, models=cal_m),
        }
        out.findings += [
            Named(
                f"calibration/{act}/min_relative_trend",
                Estimate(cal[act]["min_effect"], method="half the smallest magnitude"),
                f"half the weakest last-decade trend of the paper's {act} curves "
                f"{cal[act]['calibration']} (the calibration half)",
                unit="fraction of the level per 10x tokens",
            ),
            Named(
                f"calibration/{act}/scale_tolerance",
                Estimate(cal[act]["tolerance"], method="OLS on log10 parameters over the mean"),
                f"relative size slope of the end ratio over the paper's {act} curves "
                f"{cal[act]['calibration']} (the calibration half)",
                unit="fraction of the limit per 10x parameters",
            ),
        ]
        if test_half:
            t = late[(late["activation"] == act) & late["model"].isin(test_m)]
            trend_name = f"paper/{act}/trend/late_relative_slope/test_half"
            scale_name = f"paper/{act}/scale/relative_slope/test_half"
            trend = pub.mean_over_models(
                late, draws, activation=act, column=2, level=level, models=test_m
            )
            scale = pub.scale_slope(t, draws, activation=act, level=level)
            out.findings += [
                Named(
                    trend_name,
                    coverage_sim.with_coverage(trend_name, trend, covered, level=level),
                    f"{act}: last-decade slope over the end ratio, the test half "
                    f"({cal[act]['test']})",
                    unit="fraction of the level per 10x tokens",
                ),
                Named(
                    scale_name,
                    coverage_sim.with_coverage(scale_name, scale, covered, level=level),
                    f"{act}: end ratio vs parameter count, the test half ({cal[act]['test']})",
                    unit="fraction of the limit per 10x parameters",
                ),
            ]
    out.table = pd.DataFrame(cal).T
    out.extra["values"] = {
        **{f"{a}_min": cal[a]["min_effect"] for a in cal},
        **{f"{a}_tol": cal[a]["tolerance"] for a in cal},
        **{f"{a}_test": cal[a]["test"] for a in cal},
    }
    return out


__all__ = ["calibration", "min_effects", "paper_late", "paper_laws"]
