"""Findings of the RL study's checks that can fail, with intervals that cover at its n.

The companions of :mod:`.findings` for the analyses that decide the claims under the
sound-verdict rules: the per-run half-compute fits (:mod:`.halfruns`, SCALERL-2), Tan
et al.'s law fitted run by run and held out against the sigmoid (:mod:`.tanlaw`, TAN-1,
k(N)), the base-model and RL spread (:mod:`.spread`), the plateau as an equivalence
test with unstable runs apart (:mod:`.stopping`), and the ablations' paired effects with
Student-t intervals over seeds and their minimum detectable effects (:func:`t_effects`:
a percentile bootstrap over 3-5 seeds covers about 75-85% at a nominal 95%).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.estimate import BOUND_SHARE, Estimate
from scalinglab.stats.calibration import proportion_estimate
from scalinglab.stats.group_means import mean_of_group_means_t
from scalinglab.studies.rl import halfruns
from scalinglab.studies.rl.named import PAIRED_T, Named, checked
from scalinglab.studies.rl.scope import MIN_STABLE

#: The method of the ablations' paired intervals (:func:`t_effects`).


def half_run_findings(dec: Mapping[str, Any], *, min_multiple: float) -> list[Named]:
    """SCALERL-2's deciding finding, the mean ``|A_half - A_full|`` over the runs of every
    variant that its rules keep (:func:`.halfruns.keep_text`;
    :func:`.halfruns.half_fit_decision`, whose ``population`` names them by variant), its
    signed companion and the counts behind it."""
    n, n_all = dec["n_eligible"], dec["n_runs"]
    pop = dec.get("population")
    each = f" ({halfruns.variants_text(pop)})" if pop else ""
    kept = halfruns.keep_text(min_multiple)
    who = f"the {n} of {n_all} fitted runs{each}, every variant of the design, that are {kept}"
    return [
        Named(
            "scalerl/half_runs/A_abs_error",
            dec["estimate"],
            f"mean |A of the half fit - A of the full fit| over {who} (each run fitted "
            "on its own"
            + ("; averaged within their base models" if dec.get("clustered") else "")
            + ")",
            headline=True,
        ),
        Named(
            "scalerl/half_runs/A_error",
            dec["signed"],
            f"mean A of the half fit - A of the full fit over the same {n} runs",
        ),
        Named(
            "scalerl/half_runs/n_eligible",
            Estimate(float(n)),
            f"runs entering SCALERL-2 (those that are {kept}), of {n_all} fitted runs of "
            "every variant",
            unit="runs",
        ),
        Named(
            "scalerl/half_runs/max_multiple",
            Estimate(
                float(dec["max_multiple"]),
                identified=bool(np.isfinite(dec["max_multiple"])),
                note=None
                if np.isfinite(dec["max_multiple"])
                else "no run took off with its C_mid after its first evaluation",
            ),
            "the furthest any run's half window reaches, in multiples of its C_mid "
            "(ScaleRL's: about 20x)",
        ),
    ]


def final_error_findings(tab: pd.DataFrame, *, level: float, fit_frac: float) -> list[Named]:
    """SCALERL-2-final per size from the runs one by one
    (:func:`.halfruns.final_error_by_size`): the half fit's absolute error on the final
    pass rate (``final_abs_error``, what the claim decides: headline at the largest size,
    by ``n_params``) and its signed error (``final_pred_error``, the bias, shown), each a
    Student-t mean over the size's stable runs; not identified with fewer than
    :data:`.scope.MIN_STABLE` such runs."""
    largest = tab["n_params"].idxmax() if len(tab) else None
    out = []
    for size, r in tab.iterrows():
        n, ok = int(r["runs"]), bool(np.isfinite(r["final_error_lo"]))
        n_units = int(r["units"]) if "units" in r else n
        how = str(r["unit_method"]) if "unit_method" in r else f"Student t over {n} runs"
        left = f"; {int(r['unstable'])} unstable run(s) left out" if r["unstable"] else ""
        over = f"mean over the {n} stable runs{left}" + (
            f", each of its {n_units} base models weighing the same"
            if bool(r.get("clustered", False))
            else ""
        )
        what = (
            f"each run's sigmoid fitted on its first {fit_frac:.0%} of compute predicts its "
            "last evaluation kept (the one the scope rule judged is held out)"
        )
        for name, col, said, head in (
            ("final_abs_error", "final_abs_error", "absolute error", size == largest),
            ("final_pred_error", "final_error", "signed error (predicted minus measured)", False),
        ):
            if col not in r:
                continue
            out.append(
                Named(
                    f"scalerl/{size}/{name}",
                    checked(
                        Estimate(
                            float(r[col]),
                            float(r[f"{col}_lo"]) if ok else None,
                            float(r[f"{col}_hi"]) if ok else None,
                            level=level if ok else None,
                            method=f"{how} (each run fitted alone)",
                            n=n_units if n_units else None,
                            identified=ok,
                            note=None
                            if ok
                            else f"{n} stable run(s) with a half fit (need {MIN_STABLE}){left}",
                        )
                    ),
                    f"{what}: its {said}, {over}",
                    headline=head,
                )
            )
    return out


def tan_findings(
    k_table: pd.DataFrame,
    rise: Estimate,
    comp: pd.DataFrame,
    comp_est: Estimate,
    *,
    level: float,
    rise_stable: Estimate | None = None,
    comp_stable: Estimate | None = None,
) -> list[Named]:
    """Tan et al.'s law run by run (:mod:`.tanlaw`): ``k`` and the curvature per size,
    the rise of ``k`` (headline), the held-out RMSE difference power law - sigmoid
    (TAN-1) and the share of runs the sigmoid predicts better (Wilson interval).

    ``comp_stable``: the held-out difference on the stable runs alone
    (``tan/stable/heldout_rmse_delta``), a sensitivity beside TAN-1's every-run mean: a
    run that collapses is predicted badly by both laws, so the difference of their errors
    is widest there.

    ``rise_stable``: the rise on the stable runs alone (``tan/stable/k_rise``), a
    sensitivity beside the headline, which keeps every run as the design stated: a run
    that falls back late bends its line flatter, and unstable runs are more frequent at
    the larger sizes, so instability could make ``k`` fall with size by itself."""
    out = []
    for s, r in k_table.iterrows():
        for col, what in (
            (
                "k",
                f"Tan et al.'s k (minus the log-log slope of 1 - R in compute), N={r['n_params']:,.0f}",
            ),
            (
                "curvature",
                "quadratic term of log10(1 - R) in log10 compute, per decade squared "
                "(0 if Tan et al.'s line holds)",
            ),
        ):
            ok = np.isfinite(r[f"{col}_lo"])
            method, n_units = str(r[f"{col}_method"]), int(r[f"{col}_units"])
            over = "the size's base models" if r[f"{col}_clustered"] else "runs"
            out.append(
                Named(
                    f"tan/k/{s}" if col == "k" else f"tan/{s}/curvature",
                    Estimate(
                        float(r[col]),
                        float(r[f"{col}_lo"]) if ok else None,
                        float(r[f"{col}_hi"]) if ok else None,
                        level=level if ok else None,
                        method=method,
                        n=n_units or None,
                    ),
                    what + f" (mean over {over})",
                )
            )
    sizes = list(k_table.index)
    out.append(
        Named(
            "tan/k_rise",
            rise,
            f"k of the largest size ({sizes[-1]}) minus k of the smallest ({sizes[0]})",
            headline=True,
        )
    )
    if rise_stable is not None:
        out.append(
            Named(
                "tan/stable/k_rise",
                rise_stable,
                f"k of the largest size ({sizes[-1]}) minus k of the smallest ({sizes[0]}), "
                "stable runs only (a sensitivity: unstable runs, more frequent at the larger "
                "sizes, fit flatter lines; the claim keeps every run)",
            )
        )
    out.append(
        Named(
            "tan/heldout_rmse_delta",
            comp_est,
            "held-out RMSE (pass rate, evaluations after the half) of Tan et al.'s line "
            "minus that of ScaleRL's sigmoid, both fitted on the first half of each run; "
            f"mean over the {len(comp)} runs of every variant, unstable ones included"
            + (
                ", averaged within their base models (size x warm start), each size "
                "weighing by its base models"
                if "warm_start" in comp
                else ""
            )
            + " (> 0: the sigmoid predicts better)",
            headline=True,
        )
    )
    if comp_stable is not None:
        out.append(
            Named(
                "tan/stable/heldout_rmse_delta",
                comp_stable,
                "the same held-out RMSE difference on the stable runs alone (a sensitivity: "
                "both laws predict a collapsing run badly; the claim keeps every run)",
            )
        )
    n = len(comp)
    share = (
        proportion_estimate(int(comp["sigmoid_wins"].sum()), n, level=level)
        if n
        else Estimate(
            float("nan"),
            identified=False,
            note="no run has evaluations after its half and enough before it for both fits",
        )
    )
    out.append(
        Named(
            "tan/sigmoid_wins_share",
            share,
            f"share of the {n} runs whose later half the sigmoid predicts better than "
            "Tan et al.'s line",
        )
    )
    return out


def _entering(values: pd.DataFrame, part: str) -> pd.DataFrame:
    """The runs a variance component is computed from: every run for the base-model
    (``warm_start``) part; for the ``rl`` part only the runs of base models with at least
    2 RL seeds (a base model with one run has no within-model spread to give)."""
    keys = [k for k in ("model_size", "warm_start") if k in values]
    if part != "rl" or "warm_start" not in values:
        return values
    n = values.groupby(keys)["A_on_bound"].transform("size")
    return values[n >= 2]


def spread_findings(
    comps: Mapping[str, dict[str, Estimate] | None],
    values: pd.DataFrame,
    *,
    prefix: str = "spread",
    subset: str = "",
) -> list[Named]:
    """Base-model (warm-start) and RL standard deviations of each value
    (:func:`.spread.variance_components`, ``comps`` keyed ``"A"``, ``"final"``); not
    identified, with the reason, on data that do not nest RL seeds in warm starts, and
    for ``A`` when it sits on its bound 1 in at least :data:`BOUND_SHARE` of the runs
    that component is computed from (:func:`_entering`).

    ``values``: the runs the components were computed on (:func:`.spread.run_values`,
    one row per run). ``prefix``: ``"spread"`` for every run (the claim's), e.g.
    ``"spread/stable"`` for the stable runs alone (a sensitivity), with ``subset`` saying
    in each description which runs these are (e.g. ``"stable runs only: ScaleRL's scope;
    a sensitivity"``; empty: every run)."""
    out = []
    what = {"A": "the per-run sigmoid's A", "final": "the final pass rate (last 3 evaluations)"}
    runs = f" ({subset})" if subset else ""
    for v, comp in comps.items():
        for part, desc in (("warm_start", "base models (warm starts)"), ("rl", "RL seeds")):
            name = f"{prefix}/{v}/{part}_sd"
            text = f"standard deviation of {what.get(v, v)} across {desc}{runs}, {len(values)} runs"
            if comp is None:
                note = (
                    "this design re-warms the model for every seed (no warm_start/rl_seed "
                    "coordinates, or no warm start with 2 RL seeds): base-model and RL "
                    "spread are confounded"
                )
                out.append(Named(name, Estimate(float("nan"), identified=False, note=note), text))
                continue
            est = comp[part]
            if v == "A" and "A_on_bound" in values:
                on = _entering(values, part)["A_on_bound"]
                share = float(on.mean()) if len(on) else 1.0
                if share >= BOUND_SHARE:
                    est = est.replace(
                        identified=False,
                        note=f"A on its bound 1 in {100 * share:.0f}% of the {len(on)} runs "
                        "that enter it",
                    )
            out.append(Named(name, est, text))
    return out


def plateau_equivalence_findings(
    after: Mapping[str, Any], base_out: pd.DataFrame, *, base: str
) -> list[Named]:
    """The counts beside GRPOLAW-2: runs where the equivalence rule fired and the
    unstable runs reported apart (:func:`.stopping.gain_after_plateau`)."""
    return [
        Named(
            "plateau/n_plateau",
            Estimate(float(after["n_plateau"])),
            f"stable {base} runs whose last 20% of compute is shown to gain less "
            f"than 0.02 (the gain's upper bound), of the "
            f"{after['n_total'] - after['n_unstable']} stable ones ({after['n_total']} in all)",
            unit="runs",
        ),
        Named(
            "runs/unstable",
            Estimate(float(base_out["unstable"].sum())),
            f"{base} runs ending more than 0.1 below their peak (unstable: outside ScaleRL's "
            f"scope, not counted as plateaus), of {len(base_out)}",
            unit="runs",
        ),
    ]


def coverage_findings(cov: pd.DataFrame, *, n_used: int) -> list[Named]:
    """The simulated coverage at the design's number of seeds of the Student-t and the
    percentile-bootstrap interval of a seed mean
    (:func:`scalinglab.stats.calibration.seed_mean_coverage`, one row per method and n)."""
    out = []
    for _, r in cov[cov["n"] == n_used].iterrows():
        key = "t" if r["method"].lower().startswith("student") else "percentile"
        out.append(
            Named(
                f"coverage/{key}_at_n",
                Estimate(
                    float(r["coverage"]),
                    method=f"{int(r['sims'])} simulated data sets, Monte Carlo SE {r['se']:.3f}",
                ),
                f"coverage of the nominal 95% {r['method']} interval of a mean of {n_used} "
                "per-run values drawn from the baseline's per-run A",
            )
        )
    return out


def t_effects(
    per_seed: pd.DataFrame, effects: pd.DataFrame, *, baseline: str, level: float = 0.95
) -> pd.DataFrame:
    """The ablations' paired effects with Student-t intervals in place of the bootstrap's.

    For each variant and metric of ``effects`` (:func:`.ablations.ablation_effects`),
    the per-seed differences (variant - baseline, same seed) of each size give a mean
    and a variance of the mean; the effect is the mean over sizes, its standard error
    ``sqrt(sum_i s_i^2 / n_i) / S`` and its degrees of freedom Welch-Satterthwaite's.

    Returns
    -------
    pandas.DataFrame
        ``effects`` with ``delta_lo``, ``delta_hi`` and ``mde`` (80% power,
        :func:`scalinglab.claims.minimum_detectable_effect`) replaced, and ``method``.
    """
    from scalinglab.claims import minimum_detectable_effect

    with np.errstate(divide="ignore", invalid="ignore"):
        ps = per_seed.assign(
            log10_B=np.log10(per_seed["B"].astype(float)),
            log10_C_mid=np.log10(per_seed["C_mid"].astype(float)),
        ).replace([np.inf, -np.inf], np.nan)
    out = effects.copy()
    for i, r in effects.iterrows():
        wide = ps.pivot_table(index=["model_size", "seed"], columns="variant", values=r["metric"])
        diff = (wide[r["variant"]] - wide[baseline]).dropna()
        groups = [g.to_numpy(float) for _, g in diff.groupby(level=0) if g.size >= 2]
        if not groups:
            continue
        est, _ = mean_of_group_means_t(groups, level=level)
        lo, hi = float(est.lo), float(est.hi)  # type: ignore[arg-type]
        out.loc[i, ["delta", "delta_lo", "delta_hi"]] = [est.point, lo, hi]
        out.loc[i, "mde"] = minimum_detectable_effect((lo, hi), level)
    out["method"] = PAIRED_T
    return out


def mde_table(effects: pd.DataFrame, verdicts: Sequence[Mapping[str, Any]] = ()) -> pd.DataFrame:
    """Each ablation effect with its interval, its minimum detectable effect and, where a
    claim is decided by it, the claim's verdict (``verdicts``: ``results.json``-style
    claim dicts with ``id``, ``verdict`` and ``evidence``)."""
    cols = ["variant", "metric", "delta", "delta_lo", "delta_hi", "mde", "n_seeds"]
    if effects.empty:  # no variant besides the baseline
        return pd.DataFrame(columns=[*cols, "verdict"])
    by_finding: dict[str, list[str]] = {}
    for c in verdicts:
        for e in c.get("evidence", ()) or ():
            by_finding.setdefault(e["name"], []).append(f"{c['id']}: {c['verdict']}")
    t = effects[cols].copy()
    t["verdict"] = [
        "; ".join(by_finding.get(f"ablation/{v}/delta_{m}", [])) or "-"
        for v, m in zip(t["variant"], t["metric"], strict=True)
    ]
    return t.reset_index(drop=True)
