"""Design ablations against the baseline, run by run: does a choice move the
asymptote ``A`` or the efficiency (``B``, ``C_mid``)? ScaleRL's "most choices move B,
not A", decided with paired differences over seeds, the probability of improvement
and the minimum detectable effect of the design.

Input: the per-run sigmoid table of
:func:`scalinglab.studies.rl.analysis.per_seed_sigmoids`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.estimate import BOUND_SHARE
from scalinglab.stats.group_means import mean_of_group_means

#: Share of a variant's per-run fits with A on its bound 1 from which its A is not identified.
A_BOUND_SHARE = BOUND_SHARE


def ablation_effects(
    per_seed: pd.DataFrame,
    *,
    baseline: str = "baseline",
    reps: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Each variant against the baseline on A, log10 B and log10 C_mid, paired by seed.

    ``delta`` is the mean over sizes of the mean over seeds of (variant - baseline)
    (seeds share their warm-up, so the pairing is real), over the sizes the variant
    ran at; the CI resamples seeds within each size. ``p_improve`` is the probability
    of improvement P(variant > baseline) over runs, averaged over those sizes, from
    :mod:`scalinglab.stats.improvement`. ``mde`` is the smallest effect this design
    detects with 80% power, from the interval's width
    (:func:`scalinglab.claims.minimum_detectable_effect`). ``identified`` is False
    for ``A`` when, in either arm, at least :data:`A_BOUND_SHARE` of the per-run fits
    put A on its bound 1 (the run ended before the curve bent), with ``note``.
    """
    from scalinglab.claims import minimum_detectable_effect
    from scalinglab.stats.improvement import probability_of_improvement

    with np.errstate(divide="ignore", invalid="ignore"):
        log_b = np.log10(per_seed["B"].to_numpy(dtype=float))
        log_c = np.log10(per_seed["C_mid"].to_numpy(dtype=float))
    ps = per_seed.assign(
        log10_B=np.where(np.isfinite(log_b), log_b, np.nan),
        log10_C_mid=np.where(np.isfinite(log_c), log_c, np.nan),
    )
    rows: list[dict] = []
    rng = np.random.default_rng(seed)
    for var in [v for v in ps["variant"].unique() if v != baseline]:
        for metric in ("A", "log10_B", "log10_C_mid"):
            wide = ps.pivot_table(index=["model_size", "seed"], columns="variant", values=metric)
            diff = (wide[var] - wide[baseline]).dropna()
            sizes = list(diff.index.get_level_values(0).unique())
            per_size = [diff.loc[s].to_numpy() for s in sizes]
            est, _ = mean_of_group_means(per_size, rng=rng, reps=reps, level=level)
            point, (lo, hi) = est.point, est.ci  # type: ignore[misc]

            def arr(v, metric=metric, sizes=sizes):
                t = ps[(ps["variant"] == v) & ps["model_size"].isin(sizes)].pivot_table(
                    index="seed", columns="model_size", values=metric
                )
                return xr.DataArray(
                    t.to_numpy(), dims=("run", "task"), coords={"task": list(t.columns)}
                )

            poi = probability_of_improvement(
                arr(var),
                arr(baseline),
                reps=reps,
                level=level,
                rng=np.random.default_rng([seed, len(rows)]),
            )
            note = ""
            if metric == "A":
                for arm in (var, baseline):
                    a = ps.loc[(ps["variant"] == arm) & ps["model_size"].isin(sizes), "A"]
                    share = float(np.mean(a >= 1.0 - 1e-3)) if len(a) else 1.0
                    if share >= A_BOUND_SHARE:
                        note = (
                            f"A of {arm} on its bound 1 in {100 * share:.0f}% of the "
                            "per-run fits (runs ended before the curve bent)"
                        )
                        break
            rows.append(
                {
                    "variant": var,
                    "metric": metric,
                    "delta": point,
                    "delta_lo": float(lo),
                    "delta_hi": float(hi),
                    "p_improve": poi["point"],
                    "p_lo": poi["ci"][0],
                    "p_hi": poi["ci"][1],
                    "mde": minimum_detectable_effect((float(lo), float(hi)), level),
                    "identified": not note,
                    "note": note,
                    "sizes": ",".join(sizes),
                    "n_seeds": int(min(len(d) for d in per_size)),
                }
            )
    return pd.DataFrame(rows)
