"""Findings of the design ablations and positive controls (paired effects, their
minimum detectable effects, probabilities of improvement, the seed spread of A) and of
data reuse against fresh prompts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from scalinglab.estimate import BOUND_SHARE, identified_by_share
from scalinglab.studies.rl.named import PAIRED, PAIRED_T, RLIABLE, Named, ci_of, estimate_of

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
    spread of A (:func:`.predict.seed_spread`), not identified when A sits on its bound 1
    in at least :data:`BOUND_SHARE` of the runs whose values enter it (its ``at_bound``
    counts those alone, as :func:`.sound_findings._entering` does for the RL-seed SD)."""
    out = []
    for _, r in effects.iterrows():
        v, m = r["variant"], r["metric"]
        out.append(
            Named(
                f"ablation/{v}/delta_{m}",
                estimate_of(
                    r["delta"],
                    ci_of(r, "delta"),
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
                    estimate_of(
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
    at_bound = float(spread["at_bound"])  # over the runs that enter the SD only
    counted = f" {spread['n_bound']} {spread.get('variant', base)}" if "n_bound" in spread else ""
    out.append(
        Named(
            "scalerl/A_seed_sd",
            estimate_of(
                spread["sd"],
                spread["ci"],
                level=level,
                method="bootstrap over seeds within sizes, percentile"
                + (" (extended to the point)" if spread["ci_extended"] else ""),
                resamples=reps,
                n=min(spread["n_runs"].values()) if spread.get("n_runs") else None,
                identified=identified_by_share(at_bound),
                note=(
                    f"A on its bound 1 in {100 * at_bound:.0f}% of the{counted} runs that enter it"
                    if at_bound >= BOUND_SHARE
                    else None
                ),
            ),
            "standard deviation of A across seeds (baseline, mean over sizes)",
        )
    )
    return out


def reuse_findings(reuse: Mapping[str, Any], *, level: float) -> list[Named]:
    """Data reuse against fresh prompts at equal compute
    (:func:`.predict.matched_compute_delta`: a paired Student t, Welch-Satterthwaite df)."""
    return [
        Named(
            "reuse/delta_pass_rate",
            estimate_of(
                reuse["delta"], reuse["ci"], level=level, method=PAIRED_T, n=int(reuse["n_seeds"])
            ),
            f"pass rate, reused pool minus fresh prompts at equal compute "
            f"(sizes {', '.join(reuse['sizes'])}, {reuse['n_seeds']} seeds)",
            headline=True,
        )
    ]
