"""Reward-trajectory phases run by run (Nimmaturi et al., GRPOLAW-1).

:func:`~scalinglab.studies.rl.predict.phase_predictions` fits one logistic in training
progress to all seeds of a size at once: the *mean* trajectory. When the runs of one
size take off at different times, that mean is not a logistic: a run that sits at its
R0 for 80% of training and one that climbs from its first step average to a curve that
climbs from the start, so the pooled fit can report "no slow start" while half the
runs have one. Nimmaturi et al.'s phases describe a trajectory, so this module also
judges every run on its own:

- :func:`run_phases`: each baseline run's logistic
  ``R(t) = R0 + (Rmax - R0) / (1 + exp(-kappa (t - t0)))`` and exponential
  saturation, with ``t10``, ``t50``, ``t90``; whether the data hold a slow start
  (at least ``min_evals`` evaluations after step 0 lie before ``t10``, and the logistic
  fits better than the exponential saturation, which has no slow start), a plateau
  (at least ``min_evals`` evaluations after ``t90``, and ``Rmax <= 1``), and the
  plateau onset predicted from the run's first ``early_frac`` alone.
- :func:`phase_shares`: the shares of runs with each phase, over base models where the
  runs nest in warm starts (Korn-Graubard intervals, :func:`.units.share_over_units`),
  and the spread of the slow start's length across seeds (a pooled SD with its
  chi-square interval, RL seeds within warm starts where they nest).

Inputs are the curves table of :mod:`scalinglab.studies.rl.analysis` (baseline
variant: the first one).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from scalinglab.errors import InputError
from scalinglab.fitting import extrapolation_check, fit, from_arrays
from scalinglab.stats.bootstrap import percentile_interval, stratified_replicates
from scalinglab.stats.coverage_report import measured_on_data
from scalinglab.studies.rl.analysis import NEST, ordered_sizes
from scalinglab.studies.rl.spread import has_nesting, pooled_sd, variance_components
from scalinglab.studies.rl.units import share_coverage, share_over_units, unit_icc, unit_values

LN9 = float(np.log(9.0))


def _rmse(res, t: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((res.predict(t) - y) ** 2)))


def _logistic_points(res) -> tuple[float, float, float]:
    p = res.params
    return p["t0"] - LN9 / p["kappa"], p["t0"], p["t0"] + LN9 / p["kappa"]


def _one_run(t: np.ndarray, y: np.ndarray, *, dt: float, early_frac: float, min_evals: int):
    logi = fit("logistic_progress", t, y, n_polish=5)
    expo = fit("exp_saturation", t, y)
    t10, t50, t90 = _logistic_points(logi)
    rmse_l, rmse_e = _rmse(logi, t, y), _rmse(expo, t, y)
    span = min_evals * dt
    slow = bool(t10 >= span and rmse_l < rmse_e)
    plateau = bool(t90 <= t.max() - span and logi.params["Rmax"] <= 1.0)
    early = t <= early_frac
    t90_early = np.nan
    if early.sum() >= 5:
        try:
            t90_early = _logistic_points(fit("logistic_progress", t[early], y[early], n_polish=5))[
                2
            ]
        except Exception:  # an early fit that fails has predicted nothing
            t90_early = np.nan
        if not 0.0 <= t90_early <= 10.0:  # no plateau in sight from the early window
            t90_early = np.nan
    r0, rmax = float(logi.params["R0"]), float(logi.params["Rmax"])
    return {
        "R0": logi.params["R0"],
        "Rmax": logi.params["Rmax"],
        # a rising logistic within [0, 1]; else (a curve that climbs from step 0, its R0
        # extrapolated far below 0, or one that falls, R0 > Rmax) t10 and t90 time nothing
        "identified": bool(0.0 <= r0 < rmax <= 1.0),
        "t10": t10,
        "t50": t50,
        "t90": t90,
        "rmse_logistic": rmse_l,
        "rmse_exp": rmse_e,
        "slow_start": slow,
        "plateau": plateau,
        "three_phases": slow and plateau,
        "t90_early": t90_early,
        "t90_error": t90_early - t90 if plateau else np.nan,
    }


def run_phases(df: pd.DataFrame, *, early_frac: float = 0.3, min_evals: int = 2) -> pd.DataFrame:
    """Each baseline run's phases.

    Parameters
    ----------
    df
        The curves table (columns ``variant``, ``model_size``, ``n_params``, ``seed``,
        ``step``, ``pass_rate``); the first variant is the baseline.
    early_frac
        The share of training the early plateau prediction may see.
    min_evals
        Evaluations a phase must span to be in the data (after step 0 for the slow
        start, before the last evaluation for the plateau).

    Returns
    -------
    DataFrame
        One row per run (``model_size``, ``seed``, ``n_params``, ``start`` = the pass
        rate at step 0; ``warm_start`` and ``rl_seed`` when the curves have them): the
        logistic's ``R0``, ``Rmax``, ``t10``, ``t50``, ``t90``
        (fractions of the size's longest run), ``rmse_logistic``, ``rmse_exp``,
        ``identified`` (the run's logistic rises within ``[0, 1]``: ``0 <= R0 < Rmax <=
        1``; the phases of a run whose fit is not are artefacts of the fit), the
        booleans ``slow_start``, ``plateau``, ``three_phases``, ``t90_early`` (NaN when
        the early fit sees no plateau) and ``t90_error`` (early - full, NaN without a
        plateau). A run whose logistic fit fails has NaN values and False phases.
    """
    base = df[df["variant"] == df["variant"].iloc[0]]
    order = base.drop_duplicates("model_size").sort_values("n_params")["model_size"]
    rows = []
    for size in order:
        g_size = base[base["model_size"] == size]
        t_end = float(g_size["step"].max())
        dt = float(np.median(np.diff(np.unique(g_size["step"].to_numpy())))) / t_end
        for sd, g in g_size.groupby("seed", sort=True):
            g = g.sort_values("step")
            t, y = g["step"].to_numpy() / t_end, g["pass_rate"].to_numpy()
            row = {
                "model_size": size,
                "seed": sd,
                "n_params": float(g["n_params"].iloc[0]),
                "start": float(y[0]),
            }
            row |= {c: g[c].iloc[0] for c in NEST if c in g}
            try:
                row |= _one_run(t, y, dt=dt, early_frac=early_frac, min_evals=min_evals)
            except Exception:  # a run no logistic fits: no phases found in it
                row |= {
                    "identified": False,
                    "slow_start": False,
                    "plateau": False,
                    "three_phases": False,
                }
            rows.append(row)
    return pd.DataFrame(rows)


def _table(per_run: pd.DataFrame, column: str) -> tuple[np.ndarray, list[str]]:
    """Shape ``(runs, sizes)`` table of one column, NaN-padded."""
    sizes = list(dict.fromkeys(per_run["model_size"]))
    cols = [per_run.loc[per_run["model_size"] == s, column].to_numpy(float) for s in sizes]
    out = np.full((max(len(c) for c in cols), len(sizes)), np.nan)
    for j, c in enumerate(cols):
        out[: len(c), j] = c
    return out, sizes


def _mean_rank_correlation(rows: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Mean over sizes of Spearman's rho between ``pairs[:, 0]`` and ``pairs[:, 1]``.

    ``rows``: shape ``(B, R, M)`` row indices into ``pairs`` (NaN = absent) of ``B``
    resampled tables of ``R`` runs by ``M`` sizes; returns shape ``(B,)``. A size whose
    resample has fewer than 3 distinct runs or a constant column has no rho (left out).
    """
    out = np.full(rows.shape[0], np.nan)
    for b in range(rows.shape[0]):
        rhos = []
        for m in range(rows.shape[2]):
            r = rows[b, :, m]
            r = r[np.isfinite(r)].astype(int)
            xy = pairs[r]
            xy = xy[np.isfinite(xy).all(axis=1)]
            if len(np.unique(r)) < 3 or np.ptp(xy[:, 0]) == 0 or np.ptp(xy[:, 1]) == 0:
                continue
            rx, ry = rankdata(xy[:, 0]), rankdata(xy[:, 1])
            rhos.append(float(np.corrcoef(rx, ry)[0, 1]))
        if rhos:
            out[b] = float(np.mean(rhos))
    return out


SHARES = ("slow_start", "plateau", "three_phases", "predicted")


def phase_shares(
    per_run: pd.DataFrame,
    *,
    tolerance: float = 0.1,
    reps: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, dict]:
    """Shares of runs with each phase, and how much the slow start varies across seeds.

    The unit of a share's interval is the base model (:mod:`.units`): where the runs
    carry ``warm_start``, each warm start's share of its runs is one unit and the share
    is their mean, sizes as strata; otherwise each run is a unit. The interval is
    Korn-Graubard's (:func:`.units.share_over_units`), its coverage simulated on the
    units' own design with their measured intra-unit correlation
    (:func:`.units.share_coverage`, stated in the method text). The spread of ``t10`` is
    a pooled standard deviation with its chi-square interval
    (:func:`.spread.pooled_sd`): within warm starts (the RL seeds of one base model, as
    the paper's seeds are) where the runs nest, with the base models' own SD beside it
    (:func:`.spread.variance_components`); within sizes otherwise (:func:`_t10_spread`).

    Returns
    -------
    dict
        Keys ``slow_start``, ``plateau``, ``three_phases`` (shares), ``predicted``
        (share of runs whose plateau onset the early fit predicts within ``tolerance``; a
        run without a plateau or whose early fit sees none counts as not predicted),
        ``t10_seed_sd`` (the SD of ``t10`` across the seeds of a size, or the RL seeds of
        a warm start, pooled over those where a run takes off after step 0, and
        ``t10_seed_sd_all`` over every one: :func:`_t10_spread`; ``t10`` clipped to
        ``[0, 1]``, a slow start lasting the whole run counting as 1), ``t10_base_sd`` (the warm starts' SD of ``t10``; only where the
        runs nest) and ``t10_start_rho`` (Spearman's rank correlation of ``t10`` with the
        run's starting pass rate within a size, averaged over sizes, with a stratified
        percentile bootstrap over runs: does the initial performance explain when a run
        takes off?). Each maps to ``{"value", "ci", "n_runs", "by_size", "method",
        "n"}`` (``by_size``: the per-size point values; ``n``: the sample size the
        interval rests on: units, or degrees of freedom for an SD); a share also has
        ``"clustered"`` (whether its units are warm starts). Key ``fits``: ``{"identified",
        "n_runs"}``, the runs whose own logistic is identified (:func:`run_phases`).
    """
    per_run = per_run.reset_index(drop=True)
    per_run["predicted"] = (per_run["t90_error"].abs() <= tolerance).astype(float)
    per_run["t10_c"] = per_run["t10"].clip(0.0, 1.0)
    per_run["row"] = np.arange(len(per_run), dtype=float)
    for name in SHARES:
        per_run[name] = per_run[name].astype(float)
    rng = np.random.default_rng(seed)
    out: dict[str, dict] = {}
    for name in SHARES:
        units = unit_values(per_run, name)
        p, lo, hi = share_over_units(units, level=level)
        cov = share_coverage(units, icc=unit_icc(per_run, name), level=level, rng=rng)
        by_size = pd.Series(units.values).groupby(units.strata, sort=False).mean()
        out[name] = {
            "value": p,
            "ci": (lo, hi),
            "n_runs": units.n_runs,
            "by_size": {str(k): float(v) for k, v in by_size.items()},
            "method": f"Korn-Graubard interval over {units.describe()}; "
            + measured_on_data(cov.coverage, units.n, se=cov.se)
            + f", the worst of 8 generators (its interval below the truth in {cov.miss_high:.3f})",
            "n": units.n,
            "clustered": units.clustered,
        }
    out |= _t10_spread(per_run, level=level)
    ident = per_run["identified"] if "identified" in per_run else pd.Series(True, per_run.index)
    out["fits"] = {"identified": int(ident.sum()), "n_runs": len(per_run)}
    out["t10_start_rho"] = _start_rho(per_run, reps=reps, rng=rng, level=level)
    return out


def _by_size_sd(per_run: pd.DataFrame, by: list[str]) -> dict[str, float]:
    """Per size, the pooled SD of ``t10`` within the groups ``by`` (as the headline)."""
    out = {}
    for s, g in per_run.groupby("model_size", sort=False):
        est = pooled_sd(g, "t10_c", by=by)
        out[str(s)] = float("nan") if est is None else est.point
    return out


def _as_dict(est, *, n_runs: int, by_size: dict[str, float]) -> dict:
    nan = float("nan")
    if est is None:
        return {
            "value": nan,
            "ci": (nan, nan),
            "n_runs": n_runs,
            "by_size": by_size,
            "method": "not estimable: no group with two or more runs that take off",
        }
    return {
        "value": est.point,
        "ci": (est.lo, est.hi),
        "n_runs": n_runs,
        "by_size": by_size,
        "method": est.method,
        "n": est.n,
    }


def _t10_spread(per_run: pd.DataFrame, *, level: float) -> dict[str, dict]:
    """``t10_seed_sd`` and ``t10_seed_sd_all``; where the runs nest in warm starts, also
    ``t10_base_sd``.

    ``t10_seed_sd`` is pooled over the groups (warm starts where the runs nest, else
    sizes) in which some run takes off after step 0 (``t10`` above 0), every run of such
    a group kept: in the others every run climbs from its first step, its ``t10`` is
    clipped to 0 and there is no take-off to time (their zeros would shrink the SD and,
    being no normal errors, the interval too). ``t10_seed_sd_all`` pools every group
    (what :func:`.spread.variance_components` subtracts to give the base models' SD,
    ``t10_base_sd``, read over every warm start: whether a base model takes off late at
    all is part of how base models differ). ``t10`` is clipped to ``[0, 1]``, which
    biases an SD down; the chi-square interval assumes normal errors.
    """
    nested = has_nesting(per_run)
    by = ["model_size", "warm_start"] if nested else ["model_size"]
    timed = per_run.groupby(by)["t10_c"].transform("max") > 0
    names = [
        f"{k[0]} warm start {k[1]}" if nested else str(k)
        for k, _ in per_run.loc[timed].groupby(by if nested else "model_size")
    ]
    groups = ("warm start" if nested else "size") + ("s" if len(names) != 1 else "")
    est = pooled_sd(
        per_run[timed],
        "t10_c",
        by=by,
        level=level,
        what=f"within the {len(names)} {groups} ({', '.join(names)}) where a run takes off "
        "after step 0",
    )
    n_all = int(per_run["t10_c"].notna().sum())
    every = pooled_sd(
        per_run, "t10_c", by=by, level=level, what=f"within every {groups.rstrip('s')}"
    )
    out = {
        "t10_seed_sd": _as_dict(
            est, n_runs=int(timed.sum()), by_size=_by_size_sd(per_run[timed], by)
        ),
        "t10_seed_sd_all": _as_dict(every, n_runs=n_all, by_size=_by_size_sd(per_run, by)),
    }
    if nested:
        comps = variance_components(per_run, "t10_c", level=level)
        if comps is not None:
            out["t10_base_sd"] = _as_dict(comps["warm_start"], n_runs=n_all, by_size={})
    return out


def _start_rho(per_run: pd.DataFrame, *, reps: int, rng: np.random.Generator, level: float) -> dict:
    """Mean over sizes of Spearman's rho between ``t10`` and the starting pass rate,
    runs resampled within their size."""
    pairs = per_run[["start", "t10_c"]].to_numpy(float)
    values, sizes = _table(per_run, "row")

    def stat(x: np.ndarray) -> np.ndarray:
        return _mean_rank_correlation(x, pairs)[..., None]

    present = values[:, ~np.all(np.isnan(values), axis=0)]
    by_size = {s: float(stat(values[:, [j]][None])[0, 0]) for j, s in enumerate(sizes)}
    point, ci = np.nan, (np.nan, np.nan)
    if present.size:
        point = float(stat(present[None])[0, 0])
        draws = stratified_replicates(present, stat, reps=reps, rng=rng)
        with np.errstate(all="ignore"):
            lo, hi = percentile_interval(draws, level=level)
        ci = (float(lo[0]), float(hi[0]))
    return {"value": point, "ci": ci, "n_runs": int(np.isfinite(present).sum()), "by_size": by_size}


def _progress(g: pd.DataFrame) -> np.ndarray:
    """Training progress: the step over the longest run of the group (its step budget
    when no run stopped early), the same scale for every seed."""
    return (g["step"] / g["step"].max()).to_numpy()


def pooled_phases(
    df: pd.DataFrame, *, early_frac: float = 0.3, reps: int = 500, seed: int = 0
) -> pd.DataFrame:
    """Reward-trajectory phases per size (baseline): logistic in progress ``t``.

    Returns one row per size: ``t10`` (end of the slow start) and ``t90`` (plateau
    start) with CIs over seeds; ``t90_early`` from a fit on ``t <= early_frac``
    only (NaN when that window has fewer distinct steps than the logistic has
    parameters), its ``mae_rest`` on the later points; and the RMSE of the logistic and
    of the exponential-saturation law on all points (which law fits better).
    """
    base = df[df["variant"] == df["variant"].iloc[0]]
    derived = {
        "t10": lambda p: p["t0"] - LN9 / p["kappa"],
        "t90": lambda p: p["t0"] + LN9 / p["kappa"],
    }
    rows = []
    for size in ordered_sizes(base):
        g = base[base["model_size"] == size]
        t, y, grp = _progress(g), g["pass_rate"].to_numpy(), g["seed"].to_numpy()
        full = fit(
            "logistic_progress", t, y, groups=grp, bootstrap=reps, seed=seed, derived=derived
        )
        expo = fit("exp_saturation", t, y, groups=grp)
        early = t <= early_frac
        data = from_arrays(t, y, groups=grp.astype(str))
        try:
            ex = extrapolation_check(
                "logistic_progress", data, train=early, metric="mae", bootstrap=0, seed=seed
            )
        except InputError:
            # the early window holds fewer distinct steps than the logistic has parameters
            # (a short run evaluated rarely): it predicts no plateau
            t90_early, mae_rest = np.nan, np.nan
        else:
            p_early = ex.fit.params
            t90_early, mae_rest = p_early["t0"] + LN9 / p_early["kappa"], ex.error
        row = {
            "model_size": size,
            "n_params": float(g["n_params"].iloc[0]),
            "R0": full.params["R0"],
            "Rmax": full.params["Rmax"],
            # an early fit that puts the plateau beyond 10 runs has not seen it coming
            "t90_early": t90_early if 0.0 <= t90_early <= 10.0 else np.nan,
            "mae_rest": mae_rest,
            "rmse_logistic": _rmse(full, t, y),
            "rmse_exp": _rmse(expo, t, y),
        }
        for name in ("t10", "t90"):
            d = full.derived[name]
            row[name] = float(d.point)
            row[f"{name}_lo"], row[f"{name}_hi"] = (
                (float(d.ci[0]), float(d.ci[1])) if d.ci else (np.nan, np.nan)
            )
        rows.append(row)
    return pd.DataFrame(rows)
