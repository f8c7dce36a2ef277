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
    that enter the paired effect put A on its bound 1 (the run ended before the curve
    bent), with ``note``; a run without its pair is not counted. ``log10_B`` and
    ``log10_C_mid`` then are not identified either: they come from the same sigmoid
    fits, and a fit whose A sits on its bound has its B and C_mid free to trade off.
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
        a_note = _a_bound_note(ps, var, baseline)
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
            note = a_note
            if note and metric != "A":  # B and C_mid come from the same fits as A
                note = f"{note}; B and C_mid are fitted jointly with A, so not identified either"
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


def _a_bound_note(ps: pd.DataFrame, var: str, baseline: str) -> str:
    """Why the paired fits of ``var`` against ``baseline`` leave A unidentified (in
    either arm, at least :data:`A_BOUND_SHARE` of the per-run fits that enter the paired
    effect on A put it on its bound 1), or ``""``."""
    wide = ps.pivot_table(index=["model_size", "seed"], columns="variant", values="A")
    paired = (wide[var] - wide[baseline]).dropna().index
    for arm in (var, baseline):
        rows_arm = ps[ps["variant"] == arm]
        keys = pd.MultiIndex.from_frame(rows_arm[["model_size", "seed"]])
        a = rows_arm.loc[keys.isin(paired), "A"]
        share = float(np.mean(a >= 1.0 - 1e-3)) if len(a) else 1.0
        if share >= A_BOUND_SHARE:
            return (
                f"A of {arm} on its bound 1 in {100 * share:.0f}% of its "
                f"{len(a)} paired per-run fits (runs ended before the curve bent)"
            )
    return ""


def design_mde(
    rl_sd: float,
    n_pairs: int,
    *,
    level: float = 0.95,
    power: float = 0.8,
    paired_sd: float | None = None,
) -> float:
    """Minimum detectable effect of an ablation, from the design's noise, before it runs.

    An ablation run shares its warm start (and so its R0) with a baseline run, so the
    effect is estimated from ``n_pairs`` paired differences (variant - baseline) whose
    standard deviation is ``sqrt(2) * rl_sd`` (two independent RL trajectories from
    one policy) unless ``paired_sd`` is given. The MDE is the mean difference a
    two-sided paired t-test at ``1 - level`` detects with probability ``power``
    (statsmodels' :class:`~statsmodels.stats.power.TTestPower`, noncentral t), in the
    metric's units.

    Parameters
    ----------
    rl_sd
        Run-to-run standard deviation of the metric (e.g. A) between RL seeds of one
        warm start.
    n_pairs
        Paired differences: sizes x runs per size the ablation ran.
    level, power
        Confidence level of the test and the power asked for.
    paired_sd
        Standard deviation of the paired differences, if known (overrides ``rl_sd``).

    Returns
    -------
    float
        The effect detectable with ``power``; ``inf`` with fewer than 2 pairs.
    """
    from statsmodels.stats.power import TTestPower

    if rl_sd < 0 or (paired_sd is not None and paired_sd < 0):
        raise ValueError("design_mde: standard deviations must be >= 0")
    if n_pairs < 2:
        return float("inf")
    sd = float(paired_sd) if paired_sd is not None else float(np.sqrt(2.0) * rl_sd)
    d = TTestPower().solve_power(
        effect_size=None, nobs=n_pairs, alpha=1.0 - level, power=power, alternative="two-sided"
    )
    return float(d) * sd


def design_mdes(sweep, rl_sds: dict[str, float], *, baseline: str = "baseline") -> pd.DataFrame:
    """:func:`design_mde` of every variant of ``sweep`` against the baseline, for each
    assumed run-to-run noise in ``rl_sds`` (name -> standard deviation).

    Returns
    -------
    pandas.DataFrame
        One row per (variant, noise): ``variant``, ``sizes``, ``n_pairs``, ``noise``,
        ``rl_sd``, ``mde``.
    """
    rows = []
    for v in sweep.variants:
        if v == baseline:
            continue
        sizes = sweep.runs_at(v)
        n = len(sizes) * len(sweep.seeds)
        for name, sd in rl_sds.items():
            rows.append(
                {
                    "variant": v,
                    "sizes": ",".join(sizes),
                    "n_pairs": n,
                    "noise": name,
                    "rl_sd": sd,
                    "mde": design_mde(sd, n),
                }
            )
    return pd.DataFrame(rows)
