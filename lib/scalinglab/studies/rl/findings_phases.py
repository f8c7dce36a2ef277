"""Findings on the reward trajectory's phases: the pooled logistic's t10, t50, t90 per
size and the plateau onset predicted early (:func:`phase_findings`, shown by
:func:`phase_table`), and the phases judged run by run (:func:`run_phase_findings`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.estimate import identified_by_share
from scalinglab.studies.rl.named import (
    OVER_SEEDS,
    RUNS_WITHIN_SIZE,
    Named,
    ci_of,
    estimate_of,
    unstable_fit,
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


def phase_findings(
    ph: pd.DataFrame,
    *,
    largest: str,
    early_frac: float,
    level: float,
    reps: int,
    n: int | Mapping[str, int] | None = None,
) -> list[Named]:
    """The pooled logistic's phase points per size (:func:`.predict.phase_predictions`)
    and the error of the plateau onset predicted from the first ``early_frac`` (headline
    at the ``largest`` size); ``n``: the runs per size the bootstrap resamples (one
    number for every size, or ``size -> runs`` for a design whose sizes have different
    numbers of runs)."""
    out = []
    for _, r in ph.iterrows():
        s = r["model_size"]
        n_s = n.get(s) if isinstance(n, Mapping) else n
        notes = phase_notes(r, early_frac=early_frac)
        exact = r.get("bootstrap") == "exact"  # every distinct resample once: no MC error
        method = f"{OVER_SEEDS}, exact (every distinct resample once)" if exact else OVER_SEEDS
        n_draws = None if exact else reps
        for name, what in PHASES:
            ci, why = unstable_fit(r[name], ci_of(r, name), notes[name])
            out.append(
                Named(
                    f"phases/{s}/{name}",
                    estimate_of(
                        r[name],
                        ci,
                        level=level,
                        method=method,
                        resamples=n_draws,
                        n=n_s,
                        identified=why is None,
                        note=why,
                    ),
                    f"{what} (fraction of the size's step budget)",
                )
            )
        ci, note = unstable_fit(r["t90_error"], ci_of(r, "t90_error"), notes["t90_early_error"])
        out.append(
            Named(
                f"phases/{s}/t90_early_error",
                estimate_of(
                    r["t90_error"],
                    ci,
                    level=level,
                    method=method,
                    resamples=n_draws,
                    n=n_s,
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
    each phase (the three-phase share a headline), the seed spread of t10 (and, where
    the runs nest in warm starts, the base models' spread) and its rank correlation with
    the starting pass rate (not identified when no run has a slow start: every t10 is
    then clipped to 0 and their spread is an artefact; and every one of them not
    identified when the runs' own logistics are not identified in
    :data:`~scalinglab.estimate.BOUND_SHARE` or more of the runs, ``shares["fits"]``).
    Each finding takes the method
    and sample size ``shares`` states (``"method"``, ``"n"``); a share without them (an
    older table) reads as the stratified bootstrap over runs, and a zero-width one gets
    the Wilson interval."""
    whats = (
        ("slow_start", "show a slow start (>= 2 evaluations before t10)"),
        ("plateau", "reach a plateau inside training (>= 2 evaluations after t90)"),
        ("three_phases", "show all three phases"),
        (
            "predicted",
            f"have their plateau onset predicted within 0.1 from their first {early_frac:.0%}",
        ),
    )

    def kw(v: Mapping[str, Any]) -> dict[str, Any]:
        return dict(level=level, method=v.get("method", RUNS_WITHIN_SIZE), resamples=reps)

    fits = shares.get("fits")
    unfit = (
        None
        if fits is None or identified_by_share(1.0 - fits["identified"] / max(fits["n_runs"], 1))
        else f"the run's own logistic is identified (a rise within [0, 1], 0 <= R0 < Rmax "
        f"<= 1) in only {fits['identified']} of {fits['n_runs']} runs: the others climb "
        "from step 0 (R0 extrapolated below 0) or fall (R0 > Rmax), so their t10 and t90 "
        "time no phase"
    )

    out = []
    for name, what in whats:
        sh = shares[name]
        over = (
            f": in the average base model, the mean over the {sh['n']} base models of "
            "each one's share of its runs (each base model weighing the same)"
            if sh.get("clustered")
            else ""
        )
        out.append(
            Named(
                f"phases/runs/{name}_share",
                estimate_of(
                    sh["value"],
                    sh["ci"],
                    n=int(sh.get("n", sh["n_runs"])),
                    share_n=int(sh["n_runs"]),
                    identified=unfit is None,
                    note=unfit,
                    **kw(sh),
                ),
                f"share of the {sh['n_runs']} {base} runs that {what}{over}",
                headline=name == "three_phases",
            )
        )
    no_start = (
        None
        if shares["slow_start"]["value"] > 0
        else "no run has a slow start (every t10 is at or before step 0): when runs take "
        "off cannot vary"
    )
    nested = "t10_base_sd" in shares
    seeds = "RL seeds of one base model (warm start)" if nested else "seeds of a size"
    groups = "base models" if nested else "sizes"
    spreads = [
        (
            "t10_seed_sd",
            f"standard deviation of t10 (end of the slow start) across the {seeds}, "
            f"pooled over the {groups} where a run takes off after step 0 (fraction of "
            "the run)",
        ),
        (
            "t10_seed_sd_all",
            f"standard deviation of t10 across the {seeds}, pooled over every one of "
            f"the {groups} (those whose runs climb from step 0 add zeros; fraction of the run)",
        ),
        (
            "t10_start_rho",
            "Spearman correlation of t10 with the run's starting pass rate within a "
            "size, mean over sizes (< 0: runs that start higher take off sooner)",
        ),
    ]
    if nested:
        spreads.insert(
            2,
            (
                "t10_base_sd",
                "standard deviation of t10 between the base models (warm starts) of a "
                "size, beyond the RL seeds' spread within every base model "
                "(phases/runs/t10_seed_sd_all; fraction of the run)",
            ),
        )
    for name, desc in spreads:
        if name not in shares:  # an older table
            continue
        v = shares[name]
        ok = bool(np.isfinite(v["value"])) and no_start is None and unfit is None
        out.append(
            Named(
                f"phases/runs/{name}",
                estimate_of(
                    v["value"],
                    v["ci"],
                    n=int(v.get("n", shares["slow_start"]["n_runs"])),
                    identified=ok,
                    note=no_start or unfit,
                    **kw(v),
                ),
                desc,
            )
        )
    return out
