"""The RL study's results as named findings: each analysis result, turned into the
:class:`~scalinglab.estimate.Estimate` (with its level, method and resamples) and the
name, description and headline flag under which the report records it.

The analysis modules (:mod:`.analysis`, :mod:`.predict`, :mod:`.kn`, :mod:`.phases`,
:mod:`.ablations`, :mod:`.stopping`) keep returning the tables and dicts their figures
and tests use; each function here takes one of those results and returns a list of
:class:`Named`, which the notebook records with one call (:func:`record_all`), so no
``level=..., method=..., resamples=...`` is re-typed in the notebook and the method a
report prints is written once, here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.estimate import BOUND_SHARE, Estimate, identified_by_share
from scalinglab.fitting import param_estimate
from scalinglab.record import Finding, record
from scalinglab.stats.calibration import share_with_floor

#: Intervals that resample whole seeds of a size (sigmoid, half compute, k(N), phases).
#: A seed is one run; in the ``v3`` design the runs of a size are 2 warm starts x 2 RL
#: seeds, resampled as if independent (the ``n`` recorded is the number of runs, so the
#: report's coverage table states the percentile bootstrap's simulated coverage there).
OVER_SEEDS = "bootstrap over seeds (whole runs), percentile"
OVER_RUNS = "bootstrap over runs, percentile"
RUNS_WITHIN_SIZE = "stratified bootstrap over runs (within size), percentile"
PAIRED = "paired bootstrap over seeds"
RLIABLE = "stratified bootstrap (rliable)"


@dataclass(frozen=True)
class Named:
    """One finding before it is recorded: its name, its estimate and how it is shown.

    Attributes
    ----------
    name
        The finding's stable name, e.g. ``"scalerl/s/A"``.
    estimate
        The number with its interval and method (a point without interval for counts).
    description, unit
        Shown in the findings table.
    headline
        Shown in the index and the forest plot (dropped by ``record`` when the estimate
        is not identified).
    """

    name: str
    estimate: Estimate
    description: str
    unit: str | None = None
    headline: bool = False


def record_all(items: Iterable[Named]) -> list[Finding]:
    """Record every item with :func:`scalinglab.record.record`, in order; a headline
    whose estimate has no interval on these data (too few runs, a degenerate interval
    dropped by :func:`_est`) is recorded as an ordinary finding, with its note."""
    return [
        record(
            n.name,
            n.estimate,
            description=n.description,
            unit=n.unit,
            headline=n.headline and n.estimate.ci is not None,
        )
        for n in items
    ]


def _ci(row: Any, col: str) -> tuple[float, float]:
    return float(row[f"{col}_lo"]), float(row[f"{col}_hi"])


def _est(
    point: float,
    ci: Sequence[float] | None,
    *,
    n: int | None = None,
    share_n: int | None = None,
    **kw: Any,
) -> Estimate:
    """An estimate with interval ``ci`` (or none) over ``n`` seeds or runs: the sample
    size at which the report states the method's coverage (None: not recorded; an
    interval then reads "sample size not recorded" in the coverage table).

    No degenerate interval leaves here: ends that are not finite give no interval; an
    interval of zero width (every resample gave the same value) is, for a share counted
    over ``share_n`` draws, widened to the Wilson interval of that share
    (:func:`~scalinglab.stats.calibration.share_with_floor`), and otherwise dropped, with
    the reason in the note (the point is then shown without an interval)."""
    lo, hi = (None, None) if ci is None else (float(ci[0]), float(ci[1]))
    notes = [kw.pop("note", None)]
    if lo is not None and hi is not None and not (np.isfinite(lo) and np.isfinite(hi)):
        lo = hi = None
        notes.append("no finite resampled interval")
    est = Estimate(
        float(point),
        lo,
        hi,
        n=None if n is None or n < 1 else int(n),
        note="; ".join(x for x in notes if x) or None,
        **kw,
    )
    if est.lo is None or est.hi is None or est.hi - est.lo > 1e-12 * max(1.0, abs(est.point)):
        return est
    if share_n and 0 <= est.point <= 1:
        return share_with_floor(est, n=int(share_n))
    why = (
        f"every resample gave {est.point:.6g} (interval [{est.lo:.6g}, {est.hi:.6g}]): a "
        "zero-width interval cannot cover, so none is shown"
    )
    return est.replace(
        lo=None, hi=None, mc_se=None, note="; ".join(x for x in (est.note, why) if x)
    )


def _reinterval(est: Estimate, **changes: Any) -> Estimate:
    """``est`` with ``changes``, passed through :func:`_est` (no degenerate interval)."""
    fields = {k: v for k, v in dataclasses.asdict(est).items() if k not in ("point", "lo", "hi")}
    return _est(est.point, est.ci, **{**fields, **changes})


def run_outcome_findings(base_out: pd.DataFrame, *, base: str) -> list[Named]:
    """How the baseline runs ended (:func:`.stopping.run_outcomes`, one variant's rows):
    counts of runs that declined, collapsed or never took off."""
    n = len(base_out)
    return [
        Named(
            "runs/declined",
            Estimate(float(base_out["declined"].sum())),
            f"{base} runs whose last evaluation is more than 0.1 below their peak, of {n}",
            unit="runs",
        ),
        Named(
            "runs/collapsed",
            Estimate(float(base_out["collapsed"].sum())),
            f"{base} runs whose last evaluation is below half their R0, or at R0 after "
            f"taking off, of {n}",
            unit="runs",
        ),
        Named(
            "runs/not_taken_off",
            Estimate(float((~base_out["took_off"]).sum())),
            f"{base} runs whose pass rate never rose 0.1 above R0, of {n}",
            unit="runs",
        ),
    ]


def plateau_findings(after: Mapping[str, Any], *, level: float) -> list[Named]:
    """The gain after the plateau rule's onset (:func:`.stopping.gain_after_plateau`,
    Student t over runs); not identified with fewer than 3 runs that continued past it."""
    n_runs, n_total = int(after["n_runs"]), int(after["n_total"])
    finite = bool(np.isfinite(after["mean"]))
    gain = _est(
        after["mean"],
        after["ci"] if finite else None,
        level=level,
        method=f"Student t over {n_runs} runs",
        n=n_runs,
        identified=n_runs >= 3,
        note=(
            f"only {n_runs} of {n_total} runs continued past a plateau (the rule fired in "
            f"{after.get('n_plateau', 0)} stable runs; a run it stopped shows nothing after)"
            if n_runs < 3
            else None
        ),
    )
    return [
        Named(
            "plateau/gain_after",
            gain,
            "pass rate gained after the plateau rule's onset, mean over the "
            f"{n_runs} runs (every variant and size) that continued past it",
        ),
        Named(
            "plateau/share_gaining",
            Estimate(float(after["share_gaining"])),
            "share of those runs that gained more than 0.02 after the onset (stopped too "
            "early by the rule)",
        ),
    ]


def lr_findings(lr_table: pd.DataFrame, grid: Sequence[float]) -> list[Named]:
    """The learning-rate stage's choice per size (``selected``, ``on_grid_edge`` columns,
    one row per size)."""
    out = []
    for size, r in lr_table.iterrows():
        edge = "; on the grid edge" if r["on_grid_edge"] else ""
        out.append(
            Named(
                f"lr/{size}/multiplier",
                Estimate(float(r["selected"])),
                f"selected multiple of the width rule's learning rate (grid {list(grid)}{edge})",
            )
        )
    return out


def sigmoid_findings(table: pd.DataFrame, fits: Mapping, *, base: str) -> list[Named]:
    """ScaleRL's A, B and C_mid per size of the baseline (:func:`.analysis.fit_scalerl`);
    A is a headline."""
    out = []
    for _, row in table.loc[table["variant"] == base].iterrows():
        size, res = row["model_size"], fits[(base, row["model_size"])]
        for p in ("A", "B", "C_mid"):
            est = param_estimate(res, p)
            if est.ci is not None:  # the groups of the fit's bootstrap are the seeds
                est = _reinterval(
                    est, method=f"{OVER_SEEDS} ({est.resamples} refits)", n=int(row["n_seeds"])
                )
            out.append(
                Named(
                    f"scalerl/{size}/{p}",
                    est,
                    f"ScaleRL {p}, model {size}",
                    unit="FLOPs" if p == "C_mid" else None,
                    headline=p == "A",
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
        out.append(
            Named(
                f"scalerl/{s}/A_pred_error",
                _est(
                    r["A_error"],
                    _ci(r, "A_error"),
                    level=level,
                    method=OVER_SEEDS,
                    resamples=pred_reps,
                    n=n_of,
                    identified=bool(r["A_half_identified"]),
                    note=r["A_half_note"] or None,
                ),
                f"A fitted on the first {fit_frac:.0%} of compute minus A of the full run",
                headline=big,
            )
        )
        if final:
            out.append(
                Named(
                    f"scalerl/{s}/final_pred_error",
                    _est(
                        r["final_error"],
                        _ci(r, "final_error"),
                        level=level,
                        method=OVER_SEEDS,
                        resamples=pred_reps,
                        n=n_of,
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
                _est(
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
                _est(
                    r["mae"],
                    _ci(r, "mae"),
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
    no N0 to extrapolate by. ``n``: the seeds per size the bootstrap resamples (the
    fewest of any size), recorded as each interval's sample size."""

    def est(pair: Any, **kw: Any) -> Estimate:
        point, ci = pair
        return _est(point, ci, level=level, method=OVER_SEEDS, resamples=reps, n=n, **kw)

    sizes = list(kn["sizes"])
    n0_ok, n0_why = kn["N0_identified"]
    out = [
        Named("tan/Kmax", est(kn["Kmax"]), "Tan et al. Kmax (joint fit over sizes)"),
        Named(
            "tan/N0",
            est(kn["N0"], identified=n0_ok, note=n0_why or None),
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


PHASES = (
    ("t10", "end of the slow start"),
    ("t50", "middle of the rapid gain"),
    ("t90", "plateau onset"),
)


def phase_notes(r: Any, *, early_frac: float) -> dict[str, str | None]:
    """Why each of a size's pooled-logistic phase points is not identified (None when it
    is): ``t10``, ``t50``, ``t90`` and ``t90_early_error``, for one row of
    :func:`.predict.phase_predictions`."""
    step_note = (
        None
        if r["rise_resolved"]
        else f"the logistic rises within one evaluation interval ({r['eval_dt']:.3f} of the "
        "run): a step, its phases are not resolved"
    )
    if not r["bend_inside"]:
        step_note = (
            f"the logistic's midpoint t50 = {r['t50']:.2f} lies outside training: the seeds' "
            "mean curve has no bend to place the phases by (see the runs one by one)"
        )
    notes: dict[str, str | None] = {name: step_note for name, _ in PHASES}
    if r["R0"] < 0 and r["bend_inside"]:
        notes["t10"] = (
            f"the logistic's R0 = {r['R0']:.3f} < 0: the curve already climbs at "
            "step 0, the data hold no slow start"
        )
    early_ok = (
        np.isfinite(r["t90_early"])
        and identified_by_share(r["early_fail_share"])
        and bool(r["bend_inside"])
    )
    if early_ok:
        notes["t90_early_error"] = None
    elif r["bend_inside"]:
        seen = (
            "point fit"
            if not np.isfinite(r["t90_early"])
            else f"{100 * r['early_fail_share']:.0f}% of refits"
        )
        notes["t90_early_error"] = f"the fit on the first {early_frac:.0%} sees no plateau ({seen})"
    else:
        notes["t90_early_error"] = step_note
    return notes


def _unstable_fit(
    point: float, ci: tuple[float, float], note: str | None
) -> tuple[tuple[float, float] | None, str | None]:
    """``(ci, note)`` of a pooled fit's number; a point outside its own resampled interval
    (the fit changes when whole runs are resampled: few runs, or runs that disagree) has
    no interval and is not identified, with the reason."""
    lo, hi = ci
    if not (np.isfinite(point) and np.isfinite(lo) and np.isfinite(hi)):
        return ci, note
    slack = 1e-6 * max(abs(lo), abs(hi), abs(point), 1e-300)
    if lo - slack <= point <= hi + slack:
        return ci, note
    why = (
        f"the point {point:.3g} lies outside its resampled interval [{lo:.3g}, {hi:.3g}]: "
        "the pooled fit is not stable when whole runs are resampled"
    )
    return None, "; ".join(x for x in (note, why) if x)


def phase_findings(
    ph: pd.DataFrame,
    *,
    largest: str,
    early_frac: float,
    level: float,
    reps: int,
    n: int | None = None,
) -> list[Named]:
    """The pooled logistic's phase points per size (:func:`.predict.phase_predictions`)
    and the error of the plateau onset predicted from the first ``early_frac`` (headline
    at the ``largest`` size); ``n``: the seeds per size the bootstrap resamples."""
    out = []
    for _, r in ph.iterrows():
        s = r["model_size"]
        notes = phase_notes(r, early_frac=early_frac)
        for name, what in PHASES:
            ci, why = _unstable_fit(r[name], _ci(r, name), notes[name])
            out.append(
                Named(
                    f"phases/{s}/{name}",
                    _est(
                        r[name],
                        ci,
                        level=level,
                        method=OVER_SEEDS,
                        resamples=reps,
                        n=n,
                        identified=why is None,
                        note=why,
                    ),
                    f"{what} (fraction of the size's step budget)",
                )
            )
        ci, note = _unstable_fit(r["t90_error"], _ci(r, "t90_error"), notes["t90_early_error"])
        out.append(
            Named(
                f"phases/{s}/t90_early_error",
                _est(
                    r["t90_error"],
                    ci,
                    level=level,
                    method=OVER_SEEDS,
                    resamples=reps,
                    n=n,
                    identified=note is None,
                    note=note,
                ),
                f"plateau onset predicted from the first {early_frac:.0%} minus full fit",
                headline=s == largest,
            )
        )
    return out


def phase_table(ph: pd.DataFrame, *, early_frac: float) -> pd.DataFrame:
    """The pooled phase fits per size for display, with a column ``identified`` that
    flags the fits the data do not pin (an R0 below 0 or an Rmax above 1, a midpoint
    outside training, a step within one evaluation): their numbers are blanked (NaN),
    not read as phases (the reason is in the findings' notes); the two RMSEs stay."""
    cols = [
        "R0",
        "Rmax",
        "t10",
        "t50",
        "t90",
        "t90_lo",
        "t90_hi",
        "t90_early",
        "t90_error",
        "early_fail_share",
        "rmse_logistic",
        "rmse_exp",
    ]
    out = ph.set_index("model_size")[[c for c in cols if c in ph]].copy()
    flags = []
    for _, r in ph.iterrows():
        notes = phase_notes(r, early_frac=early_frac)
        bad = [n for n in ("t10", "t50", "t90") if notes[n] is not None]
        if r["Rmax"] > 1 or r["R0"] < 0:
            bad.append("R0/Rmax outside [0, 1]")
        flags.append("yes" if not bad else "not identified: " + ", ".join(dict.fromkeys(bad)))
    out["identified"] = flags
    # a fit the data do not pin prints no numbers (R0 = -259, Rmax = 2.4e4 read as results)
    blank = [c for c in out.columns if c not in ("identified", "rmse_logistic", "rmse_exp")]
    out.loc[out["identified"] != "yes", blank] = np.nan
    return out


def run_phase_findings(
    shares: Mapping[str, Any], *, base: str, early_frac: float, level: float, reps: int
) -> list[Named]:
    """Phases judged run by run (:func:`.phases.phase_shares`): the shares of runs with
    each phase (the three-phase share a headline), the seed spread of t10 and its rank
    correlation with the starting pass rate (not identified when no run has a slow
    start: every t10 is then clipped to 0 and their spread is an artefact). A share
    whose resampled interval has zero width (0 of n runs) gets the Wilson interval."""
    whats = (
        ("slow_start", "show a slow start (>= 2 evaluations before t10)"),
        ("plateau", "reach a plateau inside training (>= 2 evaluations after t90)"),
        ("three_phases", "show all three phases"),
        (
            "predicted",
            f"have their plateau onset predicted within 0.1 from their first {early_frac:.0%}",
        ),
    )
    kw: dict[str, Any] = dict(level=level, method=RUNS_WITHIN_SIZE, resamples=reps)
    out = []
    for name, what in whats:
        sh = shares[name]
        out.append(
            Named(
                f"phases/runs/{name}_share",
                # a share of 0 (or 1) in every resample: the Wilson interval over the runs
                _est(sh["value"], sh["ci"], n=int(sh["n_runs"]), share_n=int(sh["n_runs"]), **kw),
                f"share of the {sh['n_runs']} {base} runs that {what}",
                headline=name == "three_phases",
            )
        )
    no_start = (
        None
        if shares["slow_start"]["value"] > 0
        else "no run has a slow start (every t10 is at or before step 0): when runs take "
        "off cannot vary"
    )
    for name, desc in (
        (
            "t10_seed_sd",
            "standard deviation of t10 (end of the slow start) across the seeds of a "
            "size, mean over sizes (fraction of the run)",
        ),
        (
            "t10_start_rho",
            "Spearman correlation of t10 with the run's starting pass rate within a "
            "size, mean over sizes (< 0: runs that start higher take off sooner)",
        ),
    ):
        v = shares[name]
        ok = bool(np.isfinite(v["value"])) and no_start is None
        out.append(
            Named(
                f"phases/runs/{name}",
                _est(
                    v["value"],
                    v["ci"],
                    n=int(shares["slow_start"]["n_runs"]),
                    identified=ok,
                    note=no_start,
                    **kw,
                ),
                desc,
            )
        )
    return out


#: The ablation findings that are headlines: the positive controls' effects.
ABLATION_HEADLINES = frozenset({("len_cap", "A"), ("half_lr", "log10_C_mid")})


def ablation_findings(
    effects: pd.DataFrame,
    spread: Mapping[str, Any],
    *,
    base: str,
    level: float,
    reps: int,
    method: str = PAIRED,
) -> list[Named]:
    """Each variant's paired effect on A, log10 B and log10 C_mid with its minimum
    detectable effect, its probability of improvement on A and log10 B
    (:func:`.ablations.ablation_effects`, or with Student-t intervals
    :func:`.sound_findings.t_effects`, whose ``method`` is then passed), and the seed
    spread of A (:func:`.predict.seed_spread`)."""
    out = []
    for _, r in effects.iterrows():
        v, m = r["variant"], r["metric"]
        out.append(
            Named(
                f"ablation/{v}/delta_{m}",
                _est(
                    r["delta"],
                    _ci(r, "delta"),
                    level=level,
                    method=method,
                    resamples=reps if method == PAIRED else None,
                    n=int(r["n_seeds"]),
                    identified=bool(r["identified"]),
                    note=r["note"] or None,
                ),
                f"{v} minus {base}, {m} (sizes {r['sizes']}, {r['n_seeds']} seeds; minimum "
                f"detectable effect {r['mde']:.3g})",
                headline=(v, m) in ABLATION_HEADLINES,
            )
        )
        if m != "log10_C_mid":
            out.append(
                Named(
                    f"ablation/{v}/p_improve_{m}",
                    _est(
                        r["p_improve"],
                        (r["p_lo"], r["p_hi"]),
                        level=level,
                        method=RLIABLE,
                        resamples=reps,
                        n=int(r["n_seeds"]),
                        share_n=int(r["n_seeds"]),  # P = 0 or 1 in every resample: Wilson
                    ),
                    f"P({v} > {base}) on {m}",
                )
            )
    at_bound = float(spread["at_bound"])
    out.append(
        Named(
            "scalerl/A_seed_sd",
            _est(
                spread["sd"],
                spread["ci"],
                level=level,
                method="bootstrap over seeds within sizes, percentile"
                + (" (extended to the point)" if spread["ci_extended"] else ""),
                resamples=reps,
                n=min(spread["n_runs"].values()) if spread.get("n_runs") else None,
                identified=identified_by_share(at_bound),
                note=(
                    f"A on its bound 1 in {100 * at_bound:.0f}% of the per-run fits"
                    if at_bound >= BOUND_SHARE
                    else None
                ),
            ),
            "standard deviation of A across seeds (baseline, mean over sizes)",
        )
    )
    return out


def reuse_findings(reuse: Mapping[str, Any], *, level: float, reps: int) -> list[Named]:
    """Data reuse against fresh prompts at equal compute
    (:func:`.predict.matched_compute_delta`)."""
    return [
        Named(
            "reuse/delta_pass_rate",
            _est(
                reuse["delta"],
                reuse["ci"],
                level=level,
                method=PAIRED,
                resamples=reps,
                n=int(reuse["n_seeds"]),
            ),
            f"pass rate, reused pool minus fresh prompts at equal compute "
            f"(sizes {', '.join(reuse['sizes'])}, {reuse['n_seeds']} seeds)",
            headline=True,
        )
    ]


#: The design ablations of ScaleRL's kind (SCALERL-4 is decided on those the sweep ran).
DESIGN_CHOICES = ("sample_agg", "batch_norm")


def claim_values(
    sizes: Sequence[str], variants: Sequence[str], *, early_frac: float, user_data: bool = False
) -> dict:
    """What ``notebooks/claims/rl_scaling.toml``'s templates name, for
    :func:`scalinglab.record.claims_from`: the sizes, the design ablations the sweep ran
    (all of them, so that SCALERL-4 reads untested, when it ran none), the early window
    as a percentage, and ``data="user"`` for a user's own logs (no claim of the file is
    about them: the ledger is then empty)."""
    ran = [v for v in DESIGN_CHOICES if v in variants]
    return {
        "sizes": list(sizes),
        "design_choices": ran or list(DESIGN_CHOICES),
        "early_pct": f"{early_frac:.0%}",
        "data": "user" if user_data else "sweep",
    }
