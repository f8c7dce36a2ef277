"""Predictions the papers claim, tested with intervals over seeds.

- :func:`half_compute` (ScaleRL, SCALERL-1/2): per size, the sigmoid fitted on every
  evaluation and refitted on compute up to ``fit_frac`` (half) of each run's final
  compute; the asymptote predicted from the half (``A_half - A_full``) and the final
  pass rate predicted from the half (predicted minus observed at each run's last
  evaluation), and the full fit's RMSE against the seed-mean curve. A half fit whose
  ``A`` sits on the bound 1 (in the point fit or in >= 20% of refits) has no
  asymptote to predict: ``A_half_identified`` is False, with the reason.
- :func:`phase_predictions` (Nimmaturi et al., GRPOLAW-1/2): per size, the logistic in
  training progress ``t`` (the step over the size's longest run) with ``t10``, ``t50``,
  ``t90`` and its own ``R0``, and the plateau onset ``t90`` predicted from the first
  ``early_frac`` (30%) of training alone, its error against the full fit.

Every interval resamples whole seeds (the runs of one size), refitting each
replicate from the full-data optimum; a replicate whose fit fails is NaN and left out
of the percentile interval. Inputs are the curves table of
:mod:`scalinglab.studies.rl.analysis` (baseline variant: the first one).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalinglab.estimate import BOUND_SHARE
from scalinglab.fitting import fit
from scalinglab.stats.bootstrap import percentile_interval, resample_groups
from scalinglab.stats.exact_bootstrap import (
    exact_group_resamples,
    exact_percentile_interval,
    n_distinct_resamples,
)
from scalinglab.stats.group_means import mean_of_group_means_t
from scalinglab.studies.rl.analysis import pre_rl_rate
from scalinglab.studies.rl.named import PAIRED_T

LN9 = float(np.log(9.0))
#: Share of refits at a bound from which an estimate is not identified (as fitting.identify).
SHARE = BOUND_SHARE
_AT_ONE = 1.0 - 1e-3  # an asymptote this close to 1 sits on its bound


def _baseline_runs(df: pd.DataFrame) -> dict[str, list[pd.DataFrame]]:
    base = df[df["variant"] == df["variant"].iloc[0]]
    sizes = list(base.drop_duplicates("model_size").sort_values("n_params")["model_size"])
    return {
        s: [
            g.sort_values("compute")
            for _, g in base[base["model_size"] == s].groupby("seed", sort=True)
        ]
        for s in sizes
    }


def _warm(res) -> dict:
    return {k: [v] for k, v in res.params.items() if k not in res.fixed}


def _half_stats(
    runs: list[pd.DataFrame],
    pick: np.ndarray,
    *,
    fit_frac: float,
    transient_frac: float,
    starts=None,
) -> tuple[np.ndarray, tuple]:
    """[A_full, A_half, A error, final error, rmse, B_full, C_mid_full] for one resample."""
    chosen = [runs[i] for i in pick]
    r0 = float(np.mean([pre_rl_rate(g) for g in chosen]))
    full_c, full_y, half_c, half_y, grp, steps = [], [], [], [], [], []
    finals = []
    for j, g in enumerate(chosen):
        c, y = g["compute"].to_numpy(), g["pass_rate"].to_numpy()
        cmax = c.max()
        keep = (c > 0) & (c >= transient_frac * cmax)
        full_c.append(c[keep])
        full_y.append(y[keep])
        grp.append(np.full(keep.sum(), j))
        steps.append(g["step"].to_numpy()[keep])
        h = keep & (c <= fit_frac * cmax)
        half_c.append(c[h])
        half_y.append(y[h])
        finals.append((cmax, y[-1]))
    fc, fy = np.concatenate(full_c), np.concatenate(full_y)
    sf, sh = (None, None) if starts is None else starts
    full = fit("scalerl", fc, fy, fixed={"R0": r0}, starts=sf, n_polish=5 if sf is None else 1)
    half = fit(
        "scalerl",
        np.concatenate(half_c),
        np.concatenate(half_y),
        fixed={"R0": r0},
        starts=sh,
        n_polish=5 if sh is None else 1,
    )
    pred = np.array([float(half.predict(np.array([cm]))[0]) for cm, _ in finals])
    obs = np.array([y for _, y in finals])
    curve = (
        pd.DataFrame({"step": np.concatenate(steps), "c": fc, "y": fy})
        .groupby("step")[["c", "y"]]
        .mean()
    )
    rmse = float(np.sqrt(np.mean((full.predict(curve["c"].to_numpy()) - curve["y"]) ** 2)))
    a_f, a_h = float(full.params["A"]), float(half.params["A"])
    out = np.array(
        [
            a_f,
            a_h,
            a_h - a_f,
            float(np.mean(pred - obs)),
            rmse,
            float(full.params["B"]),
            float(full.params["C_mid"]),
        ]
    )
    return out, (full, half)


def half_compute(
    df: pd.DataFrame,
    *,
    fit_frac: float = 0.5,
    transient_frac: float = 0.1,
    reps: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """ScaleRL's test: does the first half of compute predict the asymptote and the end?

    Parameters
    ----------
    df
        Curves table (``model_size, n_params, variant, seed, step, compute, pass_rate``).
    fit_frac
        The half: each run's evaluations with compute <= ``fit_frac`` x its final compute.
    transient_frac
        Evaluations before this share of a run's compute are left out of every fit.
    reps, seed, level
        Bootstrap over seeds.

    Returns
    -------
    DataFrame
        One row per size: ``A_full``, ``A_half``, ``A_error`` (half - full),
        ``final_error`` (half-fit prediction - observed final pass rate, mean over
        runs), ``rmse`` (full fit against the seed-mean curve), each with ``*_lo``,
        ``*_hi``; ``A_half_identified`` and ``A_half_note``; ``A_full_at_bound``
        (share of refits with the full fit's A on 1); ``n_seeds``.
    """
    rng = np.random.default_rng(seed)
    rows = []
    names = ["A_full", "A_half", "A_error", "final_error", "rmse", "B", "C_mid"]
    for size, runs in _baseline_runs(df).items():
        every = np.arange(len(runs))
        point, (full, half) = _half_stats(
            runs, every, fit_frac=fit_frac, transient_frac=transient_frac
        )
        starts = (_warm(full), _warm(half))
        draws = np.full((reps, len(names)), np.nan)
        for b, pick in enumerate(resample_groups(rng, len(runs), reps)):
            try:
                draws[b] = _half_stats(
                    runs, pick, fit_frac=fit_frac, transient_frac=transient_frac, starts=starts
                )[0]
            except Exception:  # a failed refit is a NaN replicate, left out of the interval
                continue
        lo, hi = percentile_interval(draws, level=level)
        ok = ~np.isnan(draws[:, 1])
        share_half = float(np.mean(draws[ok, 1] >= _AT_ONE)) if ok.any() else 1.0
        share_full = float(np.mean(draws[ok, 0] >= _AT_ONE)) if ok.any() else 1.0
        if point[1] >= _AT_ONE:
            note = f"A of the half fit = {point[1]:.3f}, on its bound 1 in the point fit"
        elif share_half >= SHARE:
            note = f"A of the half fit on its bound 1 in {100 * share_half:.0f}% of refits"
        elif point[0] >= _AT_ONE or share_full >= SHARE:  # nothing to predict: A of the
            note = (  # full run is not identified at this size
                f"A of the full fit = {point[0]:.3f}, on its bound 1"
                + ("" if point[0] >= _AT_ONE else f" in {100 * share_full:.0f}% of refits")
            )
        else:
            note = ""
        row = {
            "model_size": size,
            "n_params": float(runs[0]["n_params"].iloc[0]),
            "n_seeds": len(runs),
            "A_half_identified": not note,
            "A_half_note": note,
            "A_full_at_bound": share_full,
            "failed_reps": int((~ok).sum()),
        }
        for k, name in enumerate(names):
            row[name], row[f"{name}_lo"], row[f"{name}_hi"] = point[k], lo[k], hi[k]
        rows.append(row)
    return pd.DataFrame(rows)


def _progress_fit(t: np.ndarray, y: np.ndarray, starts=None):
    return fit("logistic_progress", t, y, starts=starts, n_polish=5 if starts is None else 1)


def _phase_stats(
    runs: list[pd.DataFrame], pick: np.ndarray, *, early_frac: float, t_end: float, starts=None
) -> tuple[np.ndarray, tuple]:
    """[R0, Rmax, t10, t50, t90, t90_early, error] for one resample."""
    chosen = [runs[i] for i in pick]
    t = np.concatenate([g["step"].to_numpy() / t_end for g in chosen])
    y = np.concatenate([g["pass_rate"].to_numpy() for g in chosen])
    sf, se = (None, None) if starts is None else starts
    full = _progress_fit(t, y, sf)
    p = full.params
    early = t <= early_frac
    t90_early = np.nan
    res_e = None
    if np.unique(t[early]).size >= 5:  # the logistic's 4 parameters need 5 distinct steps
        res_e = _progress_fit(t[early], y[early], se)
        q = res_e.params
        t90_early = q["t0"] + LN9 / q["kappa"]
        if not 0.0 <= t90_early <= 10.0:  # an early fit placing the plateau beyond 10 runs
            t90_early = np.nan  # has not seen it coming
    t90 = p["t0"] + LN9 / p["kappa"]
    out = np.array(
        [p["R0"], p["Rmax"], p["t0"] - LN9 / p["kappa"], p["t0"], t90, t90_early, t90_early - t90]
    )
    return out, (full, res_e)


def phase_predictions(
    df: pd.DataFrame,
    *,
    early_frac: float = 0.3,
    reps: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Nimmaturi et al.'s phases and the plateau predicted from early training, per size.

    Progress ``t`` is the step over the size's longest run (its step budget when no run
    stopped early), the same for every seed, so "the first 30%" is known in advance.

    Returns
    -------
    DataFrame
        One row per size: ``R0`` and ``Rmax`` of the logistic, ``t10``, ``t50``,
        ``t90``, ``t90_early`` and ``t90_error`` (early - full), each with ``*_lo``,
        ``*_hi``; ``early_fail_share`` (refits whose early fit saw no plateau);
        ``eval_dt`` (the evaluation interval in ``t``), ``rise_resolved`` (the rise
        from ``t10`` to ``t90`` spans at least one evaluation interval; if not, the
        logistic is a step between two evaluations and its phases are not resolved)
        and ``bend_inside`` (the midpoint ``t50`` lies in ``[0, 1]``; if not, the
        logistic's bend is an extrapolation and so are its phases); ``bootstrap``:
        ``"exact"`` when the size's runs have at most ``reps`` distinct resamples (every
        one fitted once with its probability, :mod:`scalinglab.stats.exact_bootstrap`:
        no Monte Carlo error, no seed), else ``"Monte Carlo (reps)"``.
    """
    rng = np.random.default_rng(seed)
    names = ["R0", "Rmax", "t10", "t50", "t90", "t90_early", "t90_error"]
    rows = []
    for size, runs in _baseline_runs(df).items():
        t_end = float(max(g["step"].max() for g in runs))
        every = np.arange(len(runs))
        point, (full, early) = _phase_stats(runs, every, early_frac=early_frac, t_end=t_end)
        starts = (_warm(full), None if early is None else _warm(early))
        exact = n_distinct_resamples(len(runs)) <= reps  # few runs: every resample once
        if exact:
            picks, weights = exact_group_resamples(len(runs))
        else:
            picks = resample_groups(rng, len(runs), reps)
            weights = np.full(reps, 1.0 / reps)
        draws = np.full((len(picks), len(names)), np.nan)
        for b, pick in enumerate(picks):
            try:
                draws[b] = _phase_stats(
                    runs, pick, early_frac=early_frac, t_end=t_end, starts=starts
                )[0]
            except Exception:  # a failed refit is a NaN replicate
                continue
        with np.errstate(all="ignore"):
            if exact:
                lo, hi = exact_percentile_interval(draws, weights, level=level)
            else:
                lo, hi = percentile_interval(draws, level=level)
        fitted = ~np.isnan(draws[:, 4])
        dt = (
            float(
                np.median(np.diff(np.unique(np.concatenate([g["step"].to_numpy() for g in runs]))))
            )
            / t_end
        )
        row = {
            "model_size": size,
            "n_params": float(runs[0]["n_params"].iloc[0]),
            "t_end_step": t_end,
            "eval_dt": dt,
            # a rise narrower than one evaluation interval is a step: kappa is unbounded
            "rise_resolved": bool(point[4] - point[2] >= dt),
            # a midpoint outside training: the mean curve has no bend to place phases by
            "bend_inside": bool(0.0 <= point[3] <= 1.0),
            "early_fail_share": (
                float(np.average(np.isnan(draws[fitted, 5]), weights=weights[fitted]))
                if fitted.any()
                else 1.0
            ),
            "bootstrap": "exact" if exact else f"Monte Carlo ({reps})",
        }
        for k, name in enumerate(names):
            row[name], row[f"{name}_lo"], row[f"{name}_hi"] = point[k], lo[k], hi[k]
        rows.append(row)
    return pd.DataFrame(rows)


def _end_rate(c: np.ndarray, y: np.ndarray, c_end: float, window_frac: float) -> float:
    """Mean pass rate over compute ``[(1 - window_frac) c_end, c_end]`` (linear interpolation)."""
    grid = np.linspace((1.0 - window_frac) * c_end, c_end, 21)
    return float(np.mean(np.interp(grid, c, y)))


def matched_compute_delta(
    df: pd.DataFrame,
    variant: str,
    *,
    baseline: str = "baseline",
    window_frac: float = 0.2,
    level: float = 0.95,
) -> dict:
    """Held-out pass rate of ``variant`` minus ``baseline`` at equal RL compute, paired by seed.

    For each size the variant ran at and each seed, the two runs (same warmed-up
    policy) are compared over the last ``window_frac`` of the compute both reached
    (the shorter run's end: the plateau rule may stop them at different points); the
    effect is the mean over sizes of the mean over seeds, its interval a Student t with
    Welch-Satterthwaite degrees of freedom over sizes
    (:func:`scalinglab.stats.group_means.mean_of_group_means_t`: with 3-5 seeds a size,
    the percentile bootstrap it replaces covered 0.77-0.85).

    Returns
    -------
    dict
        ``delta``, ``ci``, ``per_size`` (size -> mean delta), ``n_seeds``, ``sizes``.
    """
    per_size = {}
    for size in df.loc[df["variant"] == variant, "model_size"].unique():
        g = df[df["model_size"] == size]
        diffs = []
        for sd in sorted(
            set(g.loc[g["variant"] == variant, "seed"])
            & set(g.loc[g["variant"] == baseline, "seed"])
        ):
            a = g[(g["variant"] == variant) & (g["seed"] == sd)].sort_values("compute")
            b = g[(g["variant"] == baseline) & (g["seed"] == sd)].sort_values("compute")
            c_end = min(a["compute"].max(), b["compute"].max())
            diffs.append(
                _end_rate(a["compute"].to_numpy(), a["pass_rate"].to_numpy(), c_end, window_frac)
                - _end_rate(b["compute"].to_numpy(), b["pass_rate"].to_numpy(), c_end, window_frac)
            )
        if diffs:
            per_size[size] = np.array(diffs)
    if not per_size:
        raise ValueError(f"variant {variant!r} has no run paired with {baseline!r}")
    est, _ = mean_of_group_means_t(list(per_size.values()), level=level, method=PAIRED_T)
    point, (lo, hi) = est.point, est.ci  # type: ignore[misc]
    return {
        "delta": point,
        "ci": (float(lo), float(hi)),
        "per_size": {k: float(v.mean()) for k, v in per_size.items()},
        "n_seeds": int(min(len(v) for v in per_size.values())),
        "sizes": list(per_size),
    }


def seed_spread(
    per_seed: pd.DataFrame,
    *,
    metric: str = "A",
    variant: str | None = None,
    reps: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict:
    """Run-to-run spread of a per-run sigmoid parameter (ScaleRL's noise floor on ``A``).

    Parameters
    ----------
    per_seed
        :func:`scalinglab.studies.rl.analysis.per_seed_sigmoids`.
    variant
        The variant whose runs are used (the baseline); None: the first one in
        ``per_seed``.

    Returns
    -------
    dict
        ``sd`` (standard deviation over seeds, ``ddof=1``, averaged over sizes),
        ``ci`` (bootstrap over seeds within each size), ``at_bound`` (share of the
        per-run fits with ``A`` on its bound 1 among the runs whose values enter the
        standard deviation: the baseline's finite values at sizes with at least 2 of
        them; another variant's run, a failed fit or a size's only run does not count;
        the spread then measures the bound), ``n_bound`` (the runs that share counts),
        ``per_size``, ``n_runs`` (size -> runs with a finite value) and ``variant``.
    """
    variant = str(per_seed["variant"].iloc[0]) if variant is None else variant
    base = per_seed[per_seed["variant"] == variant]
    vals = {s: g[metric].dropna().to_numpy() for s, g in base.groupby("model_size", sort=False)}
    vals = {s: v for s, v in vals.items() if v.size >= 2}
    if not vals:
        raise ValueError("seed_spread needs at least 2 runs of one size")
    rng = np.random.default_rng(seed)
    point = float(np.mean([v.std(ddof=1) for v in vals.values()]))
    boots = np.mean(
        [v[resample_groups(rng, v.size, reps)].std(axis=1, ddof=1) for v in vals.values()], axis=0
    )
    lo, hi = percentile_interval(boots, level=level)
    allv = np.concatenate(list(vals.values()))  # the values the SD and its interval use
    return {
        "sd": point,
        "ci": (float(min(lo, point)), float(max(hi, point))),
        "ci_extended": bool(point < lo or point > hi),
        "at_bound": float(np.mean(allv >= _AT_ONE)) if metric == "A" else 0.0,
        "n_bound": int(allv.size),
        "variant": variant,
        "per_size": {k: float(v.std(ddof=1)) for k, v in vals.items()},
        "n_runs": {k: int(v.size) for k, v in vals.items()},
    }
