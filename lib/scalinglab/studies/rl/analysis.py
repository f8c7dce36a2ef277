"""RL post-training curves: the tidy table, ScaleRL's sigmoid and its extrapolation.

Inputs are a tidy "curves" table (one row per evaluation) with columns
``model_size`` (label), ``n_params``, ``variant``, ``seed``, ``step``, ``compute``
and ``pass_rate``: :func:`curves_frame` makes it from the sweep's Dataset and
:func:`load_rl_logs` from a user's own logs, so every analysis runs on both.
Fitting goes through :mod:`scalinglab.fitting` (law ``scalerl``), resampling
through :mod:`scalinglab.stats.bootstrap`; seeds are the resampling unit everywhere.
The other analyses of the same table have their own modules: Tan et al.'s k(N)
(:mod:`.kn`), the reward-trajectory phases (:mod:`.phases`), predictions from part
of the compute (:mod:`.predict`) and the design ablations (:mod:`.ablations`).

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

COLUMNS = ("model_size", "n_params", "variant", "seed", "step", "compute", "pass_rate")
#: Optional columns: the warm start and the RL seed of a run (designs that nest them).
NEST = ("warm_start", "rl_seed")


def curves_frame(ds: xr.Dataset) -> pd.DataFrame:
    """The sweep's successful runs as a tidy table (failed runs are left out).

    A design that draws several RL seeds from each warmed-up policy names them by the
    non-dimension coordinates ``warm_start(seed)`` and ``rl_seed(seed)``; they are kept
    as columns of the same names (:mod:`.spread` separates the two sources of spread).
    Without an evaluation at step 0, a variable ``r0(model_size, seed)`` gives each run's
    step-0 row (its R0).
    """
    ok = ds.status == "ok"
    df = (
        xr.Dataset({"pass_rate": ds.pass_rate.where(ok), "compute": ds.flops.where(ok)})
        .to_dataframe()
        .reset_index()
    )
    df = df.dropna(subset=["pass_rate"])
    df["step"] = ds.eval_step.values[df["eval"].to_numpy()]
    if "r0" in ds and not (ds.eval_step.values == 0).any():
        # no evaluation at step 0: each run's R0 is the design's r0(model_size, seed)
        r0 = df.drop_duplicates(["model_size", "variant", "seed"])[
            ["model_size", "variant", "seed"]
        ].copy()
        at = dict(model_size=xr.DataArray(r0["model_size"]), seed=xr.DataArray(r0["seed"]))
        r0["pass_rate"] = ds.r0.sel(**at).values
        r0["compute"], r0["step"], r0["eval"] = 0.0, 0, -1
        df = pd.concat([r0, df], ignore_index=True).sort_values(
            ["model_size", "variant", "seed", "step"], kind="stable"
        )
    df["n_params"] = ds.n_params.sel(model_size=xr.DataArray(df["model_size"])).values
    nest = [c for c in NEST if c in ds.coords and ds[c].dims == ("seed",)]
    for c in nest:
        df[c] = ds[c].sel(seed=xr.DataArray(df["seed"])).values
    return df[list(COLUMNS) + nest].reset_index(drop=True)


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


def ordered_sizes(df: pd.DataFrame) -> list[str]:
    return list(df.drop_duplicates("model_size").sort_values("n_params")["model_size"])


def pre_rl_rate(g: pd.DataFrame) -> float:
    """The pre-RL pass rate R0 of ``g``'s runs: the mean of their compute-0 evaluations."""
    return float(g.loc[g["compute"] == 0, "pass_rate"].mean())


def fit_points(g: pd.DataFrame, transient_frac: float) -> pd.DataFrame:
    """The points of ``g``'s runs that ScaleRL fits use: compute above 0 and at least
    ``transient_frac`` of the run's own final compute (``seed`` names the run)."""
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
        pts = fit_points(g, transient_frac)
        r0 = pre_rl_rate(g)
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
    for size in ordered_sizes(df):
        g = df[(df["model_size"] == size) & (df["variant"] == df["variant"].iloc[0])]
        pts = fit_points(g, transient_frac)
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
            fixed={"R0": pre_rl_rate(g)},
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


def per_seed_sigmoids(df: pd.DataFrame, *, transient_frac: float = 0.1) -> pd.DataFrame:
    """ScaleRL fit of every single run (R0 = that run's own): A, B, C_mid per run."""
    rows = []
    for (var, size, sd), g in df.groupby(["variant", "model_size", "seed"], sort=False):
        pts = fit_points(g, transient_frac)
        try:
            r = fit(
                "scalerl",
                pts["compute"].to_numpy(),
                pts["pass_rate"].to_numpy(),
                fixed={"R0": pre_rl_rate(g)},
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
