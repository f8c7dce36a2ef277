"""Findings of the fitted laws: ScaleRL's sigmoid per size (A, B, C_mid), its
half-compute test per size, and Tan et al.'s k(N) (joint fit, per-size slopes, the
leave-the-largest-out check)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.fitting import param_estimate
from scalinglab.studies.rl.kn import n0_bound_side
from scalinglab.studies.rl.named import (
    OVER_SEEDS,
    RUNS_WITHIN_SIZE,
    Named,
    ci_of,
    estimate_of,
    reinterval,
    unstable_fit,
)


def point_outside_refits(est: Estimate) -> Estimate:
    """``est`` unchanged, or, where the point fit lies outside the percentile interval of
    its own refits (beyond a relative 1e-6), without the interval and not identified:
    the objective is flat along the parameter (a step-shaped curve leaves ``C_mid``
    anywhere between two evaluations), so the refits and the point fit stop at
    different places and no interval of them describes it."""
    if est.lo is None or est.hi is None:
        return est
    slack = 1e-6 * max(abs(est.lo), abs(est.hi), abs(est.point), 1e-300)
    if est.lo - slack <= est.point <= est.hi + slack:
        return est
    why = "the point fit lies outside its refits' interval: the fit is flat along it"
    return est.replace(
        lo=None,
        hi=None,
        mc_se=None,
        identified=False,
        note="; ".join(x for x in (est.note, why) if x),
    )


def sigmoid_findings(
    table: pd.DataFrame,
    fits: Mapping,
    *,
    base: str,
    prefix: str = "scalerl",
    params: Sequence[str] = ("A", "B", "C_mid"),
    headline: bool = True,
    what: str = "",
) -> list[Named]:
    """ScaleRL's A, B and C_mid per size of the variant ``base``
    (:func:`.analysis.fit_scalerl`), named ``<prefix>/<size>/<param>``; A is a headline
    unless ``headline`` is False (a secondary arm, a sensitivity). ``what`` is added to
    the description (e.g. ", stable runs")."""
    out = []
    for _, row in table.loc[table["variant"] == base].iterrows():
        size, res = row["model_size"], fits[(base, row["model_size"])]
        for p in params:
            est = param_estimate(res, p)
            if est.ci is not None:  # the groups of the fit's bootstrap are the seeds
                est = reinterval(
                    est, method=f"{OVER_SEEDS} ({est.resamples} refits)", n=int(row["n_seeds"])
                )
            est = point_outside_refits(est)
            out.append(
                Named(
                    f"{prefix}/{size}/{p}",
                    est,
                    f"ScaleRL {p}, model {size} ({base}{what}, {int(row['n_seeds'])} runs)",
                    unit="FLOPs" if p == "C_mid" else None,
                    headline=headline and p == "A",
                )
            )
    return out


def half_compute_findings(
    half: pd.DataFrame,
    extra: pd.DataFrame,
    *,
    largest: str,
    fit_frac: float,
    level: float,
    pred_reps: int,
    reps: int,
    final: bool = True,
) -> list[Named]:
    """ScaleRL's half-compute test per size (:func:`.predict.half_compute`): the error of
    A and of the final pass rate predicted from the first ``fit_frac`` (headlines at the
    ``largest`` size), the full fit's RMSE, then the held-out MAE of
    :func:`.analysis.extrapolate_scalerl` (``extra``). ``final=False`` leaves the final
    pass rate to the runs one by one (:func:`.sound_findings.final_error_findings`)."""
    out = []
    seeds = half["n_seeds"] if "n_seeds" in half else pd.Series(0, index=half.index)
    seeds_of = dict(zip(half["model_size"], seeds, strict=True))
    for _, r in half.iterrows():
        s, big = r["model_size"], r["model_size"] == largest
        n_of = int(seeds_of[s]) or None
        # a point outside its own resampled interval (few runs: at 2, three distinct
        # resamples) gets no interval and is not identified (:func:`.unstable_fit`)
        a_ci, a_why = unstable_fit(r["A_error"], ci_of(r, "A_error"), None)
        out.append(
            Named(
                f"scalerl/{s}/A_pred_error",
                estimate_of(
                    r["A_error"],
                    a_ci,
                    level=level,
                    method=OVER_SEEDS,
                    resamples=pred_reps,
                    n=n_of,
                    identified=bool(r["A_half_identified"]) and a_why is None,
                    note="; ".join(x for x in (r["A_half_note"], a_why) if x) or None,
                ),
                f"A fitted on the first {fit_frac:.0%} of compute minus A of the full run",
                headline=big,
            )
        )
        if final:
            f_ci, f_why = unstable_fit(r["final_error"], ci_of(r, "final_error"), None)
            out.append(
                Named(
                    f"scalerl/{s}/final_pred_error",
                    estimate_of(
                        r["final_error"],
                        f_ci,
                        level=level,
                        method=OVER_SEEDS,
                        resamples=pred_reps,
                        n=n_of,
                        identified=f_why is None,
                        note=f_why,
                    ),
                    f"final pass rate predicted from the first {fit_frac:.0%} of compute "
                    "minus observed (mean over runs)",
                    headline=big,
                )
            )
        lo, hi = min(r["rmse_lo"], r["rmse"]), max(r["rmse_hi"], r["rmse"])
        out.append(
            Named(
                f"scalerl/{s}/rmse",
                estimate_of(
                    r["rmse"],
                    (lo, hi),
                    level=level,
                    method=OVER_SEEDS + " (extended to the point: resampled mean curves "
                    "are noisier)",
                    resamples=pred_reps,
                    n=n_of,
                ),
                "RMSE of the full sigmoid fit against the seed-mean curve",
            )
        )
    for _, r in extra.iterrows():
        out.append(
            Named(
                f"extrapolation/{r['model_size']}/mae",
                estimate_of(
                    r["mae"],
                    ci_of(r, "mae"),
                    level=level,
                    method="held-out MAE, bootstrap over seeds",
                    resamples=reps,
                    n=int(seeds_of.get(r["model_size"], 0)) or None,
                ),
                f"MAE of the sigmoid fitted on the first {fit_frac:.0%} of compute",
            )
        )
    return out


def kn_findings(
    kn: Mapping[str, Any], *, level: float, reps: int, per_size: bool = True, n: int | None = None
) -> list[Named]:
    """Tan et al.'s joint k(N) fit (:func:`.kn.fit_kn`): Kmax, N0 (with its
    identification), the per-size slopes, the rise of k over sizes (headline) and the
    leave-the-largest-out error when there are >= 3 sizes. With ``per_size=False`` the
    slopes and the rise are left to :func:`.sound_findings.tan_findings` (Student t over
    runs). The held-out error is not identified when either fit's N0 (all sizes, or the
    smaller ones) sits on a bound of its range: a law whose k does not rise with N has
    no N0 to extrapolate by. Each replicate resamples the runs of every size within that
    size (:func:`.kn.fit_kn`), so the intervals are a stratified bootstrap
    (:data:`~.named.RUNS_WITHIN_SIZE`); ``n``: the runs of the size with the fewest,
    recorded as each interval's sample size (the stratified scheme's coverage is limited
    by its smallest stratum)."""

    def est(pair: Any, **kw: Any) -> Estimate:
        point, ci = pair
        return estimate_of(
            point, ci, level=level, method=RUNS_WITHIN_SIZE, resamples=reps, n=n, **kw
        )

    sizes = list(kn["sizes"])
    n0_ok, n0_why = kn["N0_identified"]
    on_bound = (
        None if n0_ok or "N0_bounds" not in kn else n0_bound_side(kn["N0"][0], kn["N0_bounds"])
    )
    pinned = {} if on_bound is None else {"bound": on_bound[0], "side": on_bound[1]}
    out = [
        Named("tan/Kmax", est(kn["Kmax"]), "Tan et al. Kmax (joint fit over sizes)"),
        Named(
            "tan/N0",
            est(kn["N0"], identified=n0_ok, note=n0_why or None, **pinned),
            "Tan et al. N0 (joint fit over sizes)",
        ),
    ]
    if per_size:
        for s, n, pair in zip(sizes, kn["n_params"], kn["k_slope"], strict=True):
            out.append(
                Named(f"tan/k/{s}", est(pair), f"log-log slope of 1 - R in compute, N={n:,.0f}")
            )
        out.append(
            Named(
                "tan/k_rise",
                est(kn["k_rise"]),
                f"k of the largest size ({sizes[-1]}) minus k of the smallest ({sizes[0]})",
                headline=True,
            )
        )
    if "holdout" in kn:
        h = kn["holdout"]
        h_ok, h_why = h["N0_identified"]
        if h_ok and not n0_ok:
            h_ok, h_why = False, f"the joint fit over every size: {n0_why}"
        elif not h_ok:
            h_why = f"the fit on the smaller sizes: {h_why}"
        out.append(
            Named(
                "tan/holdout_k_error",
                est((h["error"], h["error_ci"]), identified=h_ok, note=h_why or None),
                f"k of {h['size']} predicted from the smaller sizes minus measured",
            )
        )
    return out


def k_table(kn: Mapping[str, Any], *, digits: int = 3) -> pd.DataFrame:
    """The per-size exponents of :func:`.kn.fit_kn` as a table: the slope, its interval
    as ``[lo, hi]`` text rounded to ``digits``, and the joint law's k."""
    return pd.DataFrame(
        {
            "n_params": kn["n_params"],
            "k_slope": [k for k, _ in kn["k_slope"]],
            "k_slope_ci": [f"[{lo:.{digits}f}, {hi:.{digits}f}]" for _, (lo, hi) in kn["k_slope"]],
            "k_law": [k for k, _ in kn["k_law"]],
        },
        index=kn["sizes"],
    )
