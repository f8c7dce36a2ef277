"""Analyses of RL post-training curves: sigmoids, k(N), phases and ablations.

Inputs are a tidy "curves" table (one row per evaluation) with columns
``model_size`` (label), ``n_params``, ``variant``, ``seed``, ``step``, ``compute``
and ``pass_rate``: :func:`curves_frame` makes it from the sweep's Dataset and
:func:`load_rl_logs` from a user's own logs, so every analysis runs on both.
Fitting goes through :mod:`scalinglab.fitting` (laws ``scalerl``,
``loglinear_kn``, ``logistic_progress``, ``exp_saturation``), resampling through
:mod:`scalinglab.stats.bootstrap`; seeds are the resampling unit everywhere.

Documented rules (see ``docs/studies/rl_scaling.md``):

- R0 is the mean pass rate at compute 0 (after warm-up, before RL) and is held
  fixed in the ScaleRL fit (the law is about the gain from R0).
- Early transient: points with ``compute < transient_frac * C_max`` of their run
  are left out of the ScaleRL fits (ScaleRL dropped ~1.5k of 50-100k GPU-hours,
  1.5-3%; our first evaluations are noisier relative to the gain, so 10%).
- Phases: the logistic in training progress ``t`` (fraction of the run) is our
  law (Nimmaturi et al. give none exactly); the slow start ends at ``t10``, the
  plateau begins at ``t90``, where the fitted curve has made 10% / 90% of its gain:
  ``t0 -/+ ln(9) / kappa``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.data.tables import label_column, numeric_column, read_table, require_columns
from scalinglab.errors import InputError
from scalinglab.fitting import extrapolation_check, fit, from_arrays
from scalinglab.stats.bootstrap import percentile_interval, resample_groups

LN9 = float(np.log(9.0))
COLUMNS = ("model_size", "n_params", "variant", "seed", "step", "compute", "pass_rate")


def curves_frame(ds: xr.Dataset) -> pd.DataFrame:
    """The sweep's successful runs as a tidy table (failed runs are left out)."""
    ok = ds.status == "ok"
    df = (
        xr.Dataset({"pass_rate": ds.pass_rate.where(ok), "compute": ds.flops.where(ok)})
        .to_dataframe()
        .reset_index()
    )
    df = df.dropna(subset=["pass_rate"])
    df["step"] = ds.eval_step.values[df["eval"].to_numpy()]
    df["n_params"] = ds.n_params.sel(model_size=xr.DataArray(df["model_size"])).values
    return df[list(COLUMNS)].reset_index(drop=True)


def load_rl_logs(path: str | Path) -> pd.DataFrame:
    """A user's RL logs as a curves table.

    The table (CSV, Parquet or netCDF) needs ``model_size`` (parameters, > 0),
    ``seed``, ``pass_rate`` (in [0, 1]) and ``compute`` or ``step`` (>= 0; with
    only ``step``, compute is the step). ``variant`` is optional. Every run
    (model size, variant, seed) needs a point at compute 0 (its R0) and at least
    4 points. Errors name the file, column and row.
    """
    df = read_table(path, required=("model_size", "seed", "pass_rate"))
    xcol = "compute" if "compute" in df.columns else "step"
    require_columns(df, [xcol], file=path)
    n = numeric_column(
        df, "model_size", file=path, positive=True, why_positive="it is a parameter count"
    )
    pr = numeric_column(df, "pass_rate", file=path)
    bad = (pr < 0) | (pr > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"pass rate {pr[i]} is outside [0, 1]", file=path, column="pass_rate", row=i + 1
        )
    x = numeric_column(df, xcol, file=path)
    if (x < 0).any():
        i = int(np.flatnonzero(x < 0)[0])
        raise InputError(f"{xcol} must be >= 0, got {x[i]}", file=path, column=xcol, row=i + 1)
    seed = label_column(df, "seed", file=path)
    variant = (
        label_column(df, "variant", file=path)
        if "variant" in df.columns
        else np.full(len(df), "baseline", dtype=object)
    )
    out = pd.DataFrame(
        {
            "model_size": [f"{v:.3g}" for v in n],
            "n_params": n,
            "variant": variant,
            "seed": seed,
            "step": df["step"].to_numpy() if "step" in df.columns else x,
            "compute": x,
            "pass_rate": pr,
        }
    )
    for (size, var, sd), g in out.groupby(["model_size", "variant", "seed"], sort=False):
        where = f"run model_size={size}, variant={var}, seed={sd}"
        if (g["compute"] == 0).sum() != 1:
            raise InputError(
                f"{where} needs exactly one point at {xcol} 0 (its R0)",
                file=path,
                column=xcol,
                row=int(g.index[0]) + 1,
            )
        if len(g) < 4:
            raise InputError(
                f"{where} has {len(g)} points; at least 4 are needed",
                file=path,
                column=xcol,
                row=int(g.index[0]) + 1,
            )
    return out.sort_values(["n_params", "variant", "seed", "compute"]).reset_index(drop=True)


def _sizes(df: pd.DataFrame) -> list[str]:
    return list(df.drop_duplicates("model_size").sort_values("n_params")["model_size"])


def _r0(g: pd.DataFrame) -> float:
    return float(g.loc[g["compute"] == 0, "pass_rate"].mean())


def _fit_points(g: pd.DataFrame, transient_frac: float) -> pd.DataFrame:
    cmax = g.groupby("seed")["compute"].transform("max")
    return g[(g["compute"] > 0) & (g["compute"] >= transient_frac * cmax)]


def fit_scalerl(
    df: pd.DataFrame, *, transient_frac: float = 0.1, reps: int = 1000, seed: int = 0
) -> tuple[pd.DataFrame, dict]:
    """ScaleRL sigmoid per (variant, model size), R0 fixed, bootstrap over seeds.

    Returns
    -------
    table : DataFrame
        One row per (variant, model_size): ``n_params``, ``R0``, ``A``, ``B``,
        ``C_mid`` and their ``*_lo``/``*_hi`` CI bounds, ``n_seeds``.
    fits : dict
        ``(variant, model_size) -> FitResult``.
    """
    rows, fits = [], {}
    for (var, size), g in df.groupby(["variant", "model_size"], sort=False):
        pts = _fit_points(g, transient_frac)
        r0 = _r0(g)
        res = fit(
            "scalerl",
            pts["compute"].to_numpy(),
            pts["pass_rate"].to_numpy(),
            groups=pts["seed"].to_numpy(),
            fixed={"R0": r0},
            bootstrap=reps,
            seed=seed,
        )
        fits[(var, size)] = res
        row = {
            "variant": var,
            "model_size": size,
            "n_params": float(g["n_params"].iloc[0]),
            "R0": r0,
            "n_seeds": g["seed"].nunique(),
        }
        for p in ("A", "B", "C_mid"):
            row[p] = res.params[p]
            row[f"{p}_lo"], row[f"{p}_hi"] = res.ci[p] if res.ci else (np.nan, np.nan)
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["variant", "n_params"]).reset_index(drop=True), fits


def extrapolate_scalerl(
    df: pd.DataFrame,
    *,
    fit_frac: float = 0.5,
    transient_frac: float = 0.1,
    reps: int = 500,
    seed: int = 0,
) -> pd.DataFrame:
    """Fit each size's sigmoid on compute <= ``fit_frac`` C_max, score the rest (MAE)."""
    rows = []
    for size in _sizes(df):
        g = df[(df["model_size"] == size) & (df["variant"] == df["variant"].iloc[0])]
        pts = _fit_points(g, transient_frac)
        cmax = float(pts["compute"].max())
        data = from_arrays(
            pts["compute"].to_numpy(),
            pts["pass_rate"].to_numpy(),
            groups=pts["seed"].astype(str).to_numpy(),
        )
        ex = extrapolation_check(
            "scalerl",
            data,
            train=(pts["compute"] <= fit_frac * cmax).to_numpy(),
            metric="mae",
            bootstrap=reps,
            seed=seed,
            fixed={"R0": _r0(g)},
        )
        lo, hi = ex.ci if ex.ci else (np.nan, np.nan)
        rows.append(
            {
                "model_size": size,
                "n_params": float(g["n_params"].iloc[0]),
                "mae": ex.error,
                "mae_lo": lo,
                "mae_hi": hi,
                "n_train": ex.n_train,
                "n_test": ex.n_test,
                "A_half": ex.fit.params["A"],
                "final_observed": float(
                    pts.loc[pts["compute"] == pts["compute"].max(), "pass_rate"].mean()
                ),
            }
        )
    return pd.DataFrame(rows)


def _runs_by_size(df: pd.DataFrame) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """Per size, each seed's (compute, pass rate) points with C > 0 and R < 1."""
    out: dict[str, list] = {}
    for size in _sizes(df):
        g = df[(df["model_size"] == size) & (df["compute"] > 0) & (df["pass_rate"] < 1)]
        out[size] = [
            (r["compute"].to_numpy(), r["pass_rate"].to_numpy())
            for _, r in g.groupby("seed", sort=True)
        ]
    return out


def _kn_summary(runs: dict, picks: dict, sizes: list[str], nvals: dict, starts=None):
    """Kmax, N0, the law's k per size and each size's own slope, for one resample."""
    xs, ys, ns, slopes = [], [], [], []
    for s in sizes:
        chosen = [runs[s][i] for i in picks[s]]
        c = np.concatenate([a for a, _ in chosen])
        r = np.concatenate([b for _, b in chosen])
        xs.append(c)
        ys.append(1.0 - r)
        ns.append(np.full(c.size, nvals[s]))
        slopes.append(-np.polyfit(np.log10(c), np.log10(1.0 - r), 1)[0])
    n, x, y = np.concatenate(ns), np.concatenate(xs), np.concatenate(ys)
    # replicates start from the full-data optimum.
    # N0 is bounded to [N_min / 100, 100 N_max]: outside that range the data cannot
    # tell it apart from the bound (k flat in N), and an unbounded log N0 drifting to
    # -inf makes L-BFGS-B crawl (seconds per refit).
    res = fit(
        "loglinear_kn",
        np.column_stack([n, x]),
        y,
        groups=n,
        starts=starts,
        n_polish=5 if starts is None else 1,
        bounds={"N0": (min(nvals.values()) / 100, 100 * max(nvals.values()))},
    )
    kmax, n0 = res.params["Kmax"], res.params["N0"]
    k_law = [kmax * nvals[s] / (nvals[s] + n0) for s in sizes]
    return np.array([kmax, n0, *k_law, *slopes]), res


def fit_kn(df: pd.DataFrame, *, reps: int = 500, seed: int = 0, level: float = 0.95) -> dict:
    """Tan et al.'s ``log10 L = -k(N) log10 C + E0(N)`` on the baseline, with CIs over seeds.

    ``L = 1 - pass rate``; points at compute 0 or pass rate 1 are left out. Each
    bootstrap replicate resamples the seeds of every size and refits from the
    full-data optimum (the law's grid is used for the full-data fit only).

    Returns
    -------
    dict
        ``Kmax``, ``N0`` as (point, (lo, hi)); ``k_law`` (the law's k(N)) and
        ``k_slope`` (each size's own log-log slope) per size, same form; and
        ``holdout``: the law fitted without the largest size predicting its k,
        against its measured slope (``error`` = predicted - measured, with CI).
    """
    base = df[df["variant"] == df["variant"].iloc[0]]
    sizes = _sizes(base)
    runs = _runs_by_size(base)
    nvals = {s: float(base.loc[base["model_size"] == s, "n_params"].iloc[0]) for s in sizes}
    every = {s: np.arange(len(runs[s])) for s in sizes}
    point, full = _kn_summary(runs, every, sizes, nvals)
    warm = {k: [v] for k, v in full.params.items()}
    held = held_warm = None
    if len(sizes) >= 3:
        held, hres = _kn_summary(runs, every, sizes[:-1], nvals)
        held_warm = {k: [v] for k, v in hres.params.items()}
    rng = np.random.default_rng(seed)
    picks = {s: resample_groups(rng, len(runs[s]), reps) for s in sizes}
    k = len(sizes)
    draws = np.full((reps, point.size), np.nan)
    err = np.full(reps, np.nan)
    for b in range(reps):
        pick = {s: picks[s][b] for s in sizes}
        try:
            draws[b] = _kn_summary(runs, pick, sizes, nvals, starts=warm)[0]
            if held is not None:
                h = _kn_summary(runs, pick, sizes[:-1], nvals, starts=held_warm)[0]
                err[b] = (
                    h[0] * nvals[sizes[-1]] / (nvals[sizes[-1]] + h[1]) - draws[b, 2 + 2 * k - 1]
                )
        except Exception:  # a failed refit is a NaN replicate, ignored by the interval
            continue
    lo, hi = percentile_interval(draws, level=level)
    pair = lambda i: (float(point[i]), (float(lo[i]), float(hi[i])))  # noqa: E731
    rise = draws[:, 2 + 2 * k - 1] - draws[:, 2 + k]
    rlo, rhi = percentile_interval(rise, level=level)
    n_bounds = (min(nvals.values()) / 100, 100 * max(nvals.values()))
    out = {
        "Kmax": pair(0),
        "N0": pair(1),
        "sizes": sizes,
        "n_params": [nvals[s] for s in sizes],
        "k_law": [pair(2 + i) for i in range(k)],
        "k_slope": [pair(2 + k + i) for i in range(k)],
        "k_rise": (float(point[2 + 2 * k - 1] - point[2 + k]), (float(rlo), float(rhi))),
        "N0_identified": _n0_identified(point[1], draws[:, 1], (lo[1], hi[1]), n_bounds),
        "reps": reps,
        "level": level,
        "failed_reps": int(np.isnan(draws[:, 0]).sum()),
    }
    if held is not None:
        n_big = nvals[sizes[-1]]
        k_pred = float(held[0] * n_big / (n_big + held[1]))
        elo, ehi = percentile_interval(err, level=level)
        h_bounds = (
            min(nvals[s] for s in sizes[:-1]) / 100,
            100 * max(nvals[s] for s in sizes[:-1]),
        )
        out["holdout"] = {
            "size": sizes[-1],
            "k_pred": k_pred,
            "k_measured": float(point[-1]),
            "error": k_pred - float(point[-1]),
            "error_ci": (float(elo), float(ehi)),
            "N0_identified": _n0_identified(held[1], np.array([]), None, h_bounds),
        }
    return out


def _n0_identified(
    n0: float,
    draws: np.ndarray,
    ci,
    bounds: tuple[float, float],
    *,
    rtol: float = 1e-3,
    share: float = 0.2,
) -> tuple[bool, str]:
    """Whether k(N)'s N0 is identified: not on a bound of its search range (in log
    space, within ``rtol`` of the range's width) in the point fit or in ``share`` of
    the refits, and not a zero-width interval. Returns ``(identified, reason)``."""
    lo_b, hi_b = np.log(bounds[0]), np.log(bounds[1])
    tol = rtol * (hi_b - lo_b)

    def side(v):
        lv = np.log(np.asarray(v, dtype=float))
        return lv - lo_b <= tol, hi_b - lv <= tol

    at_lo, at_hi = side(n0)
    if at_lo or at_hi:
        b = bounds[0] if at_lo else bounds[1]
        which = "lower" if at_lo else "upper"
        return False, (
            f"N0 = {n0:.4g} at the {which} bound {b:.4g} of its range in the point "
            "fit: k does not rise with N across these sizes"
        )
    d = draws[np.isfinite(draws)]
    if d.size:
        lo_s, hi_s = side(d)
        frac = float(max(lo_s.mean(), hi_s.mean()))
        if frac >= share:
            return False, f"N0 at a bound of its range in {100 * frac:.0f}% of bootstrap refits"
    if ci is not None and np.isfinite(ci[0]) and ci[1] - ci[0] <= 1e-12 * max(1.0, abs(n0)):
        return False, "N0 has a zero-width interval"
    return True, ""


def _rmse(res, t: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((res.predict(t) - y) ** 2)))


def _progress(g: pd.DataFrame) -> np.ndarray:
    """Training progress: the step over the longest run of the group (its step budget
    when no run stopped early), the same scale for every seed."""
    return (g["step"] / g["step"].max()).to_numpy()


def phases(
    df: pd.DataFrame, *, early_frac: float = 0.3, reps: int = 500, seed: int = 0
) -> pd.DataFrame:
    """Reward-trajectory phases per size (baseline): logistic in progress ``t``.

    Returns one row per size: ``t10`` (end of the slow start) and ``t90`` (plateau
    start) with CIs over seeds; ``t90_early`` from a fit on ``t <= early_frac``
    only, its ``mae_rest`` on the later points; and the RMSE of the logistic and
    of the exponential-saturation law on all points (which law fits better).
    """
    base = df[df["variant"] == df["variant"].iloc[0]]
    derived = {
        "t10": lambda p: p["t0"] - LN9 / p["kappa"],
        "t90": lambda p: p["t0"] + LN9 / p["kappa"],
    }
    rows = []
    for size in _sizes(base):
        g = base[base["model_size"] == size]
        t, y, grp = _progress(g), g["pass_rate"].to_numpy(), g["seed"].to_numpy()
        full = fit(
            "logistic_progress", t, y, groups=grp, bootstrap=reps, seed=seed, derived=derived
        )
        expo = fit("exp_saturation", t, y, groups=grp)
        early = t <= early_frac
        data = from_arrays(t, y, groups=grp.astype(str))
        ex = extrapolation_check(
            "logistic_progress", data, train=early, metric="mae", bootstrap=0, seed=seed
        )
        p_early = ex.fit.params
        t90_early = p_early["t0"] + LN9 / p_early["kappa"]
        row = {
            "model_size": size,
            "n_params": float(g["n_params"].iloc[0]),
            "R0": full.params["R0"],
            "Rmax": full.params["Rmax"],
            # an early fit that puts the plateau beyond 10 runs has not seen it coming
            "t90_early": t90_early if 0.0 <= t90_early <= 10.0 else np.nan,
            "mae_rest": ex.error,
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


def per_seed_sigmoids(df: pd.DataFrame, *, transient_frac: float = 0.1) -> pd.DataFrame:
    """ScaleRL fit of every single run (R0 = that run's own): A, B, C_mid per run."""
    rows = []
    for (var, size, sd), g in df.groupby(["variant", "model_size", "seed"], sort=False):
        pts = _fit_points(g, transient_frac)
        try:
            r = fit(
                "scalerl",
                pts["compute"].to_numpy(),
                pts["pass_rate"].to_numpy(),
                fixed={"R0": _r0(g)},
            )
            vals = {p: r.params[p] for p in ("A", "B", "C_mid")}
        except Exception:  # reported as NaN, kept in the table
            vals = dict.fromkeys(("A", "B", "C_mid"), np.nan)
        rows.append(
            {
                "variant": var,
                "model_size": size,
                "seed": sd,
                "n_params": float(g["n_params"].iloc[0]),
                **vals,
            }
        )
    return pd.DataFrame(rows)


#: Share of a variant's per-run fits with A on its bound 1 from which its A is not identified.
A_BOUND_SHARE = 0.2


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
    rows = []
    rng = np.random.default_rng(seed)
    for var in [v for v in ps["variant"].unique() if v != baseline]:
        for metric in ("A", "log10_B", "log10_C_mid"):
            wide = ps.pivot_table(index=["model_size", "seed"], columns="variant", values=metric)
            diff = (wide[var] - wide[baseline]).dropna()
            sizes = list(diff.index.get_level_values(0).unique())
            per_size = [diff.loc[s].to_numpy() for s in sizes]
            point = float(np.mean([d.mean() for d in per_size]))
            boots = np.mean(
                [d[resample_groups(rng, len(d), reps)].mean(axis=1) for d in per_size], axis=0
            )
            lo, hi = percentile_interval(boots, level=level)

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
