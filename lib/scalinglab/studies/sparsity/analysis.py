"""Analyses of the sparsity-law sweep: curves, law fits, trends, width-depth, size, loss.

Turns :func:`scalinglab.studies.sparsity.sweep.run_sweep`'s Dataset (or a
user's table of ``run, tokens, activation_ratio``) into tables with bootstrap
CIs. Uncertainty comes from seeds: a run is the resampling unit (the fitting
engine's group bootstrap for the laws; :func:`scalinglab.stats.bootstrap.resample_groups`
for slopes and means, resampling seeds within each model). With 3 seeds these
intervals are coarse (at most 10 distinct resamples per model) and say so.

Checkpoints where the FFN does not matter yet (dropping every FFN neuron costs
less than ``min_ffn_gain`` nats/token of held-out loss) are flagged unusable:
there PPL-p% sparsity is trivially near 0 (everything can go) and says nothing
about the trained model's sparsity.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.data.tables import label_column, numeric_column, read_table
from scalinglab.errors import InputError
from scalinglab.fitting import FitResult, fit
from scalinglab.stats.bootstrap import percentile_interval, resample_groups

LAWS = {"relu": "relu_sparsity", "silu": "silu_sparsity"}


# ----------------------------------------------------------------------------- tables
def curves_frame(ds: xr.Dataset, *, min_ffn_gain: float = 0.05) -> pd.DataFrame:
    """One row per (activation, model, seed, checkpoint) of the finished runs.

    Columns: activation, model, seed, run (``model/activation/seed``), checkpoint,
    tokens, activation_ratio, loss, ffn_off_loss, ffn_gain, usable, natural_ratio
    (layer mean), n_params, d_model, n_layer, width_depth_ratio, in_size_sweep,
    in_width_depth, tokens_per_param.
    """
    ok = ds["status"] == "ok"
    keep = ["activation_ratio", "loss", "ffn_off_loss", "cett_target", "ppl_ratio"]
    df = (
        ds[keep]
        .where(ok)
        .assign(natural_ratio=ds["natural_ratio"].mean("layer"))
        .to_dataframe()
        .reset_index()
    )
    df = df.dropna(subset=["activation_ratio"])
    for c in (
        "tokens",
        "n_params",
        "d_model",
        "n_layer",
        "width_depth_ratio",
        "in_size_sweep",
        "in_width_depth",
    ):
        src = ds[c].to_series()
        df[c] = df[src.index.name].map(src) if src.index.name in df else src.iloc[0]
    df["tokens_per_param"] = df["tokens"] / df["n_params"]
    df["ffn_gain"] = df["ffn_off_loss"] - df["loss"]
    df["usable"] = df["ffn_gain"] >= min_ffn_gain
    df["run"] = df["model"] + "/" + df["activation"] + "/" + df["seed"].astype(str)
    cols = [
        "activation",
        "model",
        "seed",
        "run",
        "checkpoint",
        "tokens",
        "activation_ratio",
        "loss",
        "ffn_off_loss",
        "ffn_gain",
        "usable",
        "natural_ratio",
        "cett_target",
        "ppl_ratio",
        "n_params",
        "d_model",
        "n_layer",
        "width_depth_ratio",
        "in_size_sweep",
        "in_width_depth",
        "tokens_per_param",
    ]
    return df[cols].reset_index(drop=True)


def read_curves(path: str) -> pd.DataFrame:
    """A user's activation-ratio curves: columns ``run, tokens, activation_ratio``
    (optional ``activation``: relu/silu, else ``"unspecified"``); ``model`` is
    ``"user"`` and ``seed`` the run. Errors name the file, column and row."""
    df = read_table(path, required=["run", "tokens", "activation_ratio"])
    out = pd.DataFrame(
        {
            "run": label_column(df, "run", file=path),
            "tokens": numeric_column(
                df,
                "tokens",
                file=path,
                positive=True,
                why_positive="the laws take powers of tokens",
            ),
            "activation_ratio": numeric_column(df, "activation_ratio", file=path),
        }
    )
    bad = np.flatnonzero((out["activation_ratio"] < 0) | (out["activation_ratio"] > 1))
    if bad.size:
        raise InputError(
            f"activation ratio {out['activation_ratio'].iloc[bad[0]]} is not in [0, 1]",
            file=path,
            column="activation_ratio",
            row=int(bad[0]) + 1,
        )
    if "activation" in df.columns:
        act = label_column(df, "activation", file=path)
        wrong = [i for i, a in enumerate(act) if a.lower() not in LAWS]
        if wrong:
            raise InputError(
                f"activation {act[wrong[0]]!r} is not one of {sorted(LAWS)}",
                file=path,
                column="activation",
                row=wrong[0] + 1,
            )
        out["activation"] = [a.lower() for a in act]
    else:
        out["activation"] = "unspecified"
    out["model"] = "user"
    out["seed"] = out["run"]
    out["usable"] = True
    out.attrs["given"] = tuple(str(c) for c in df.columns)
    return out


# ----------------------------------------------------------------------------- laws
def fit_laws(
    df: pd.DataFrame,
    *,
    by: Sequence[str] = ("activation", "model"),
    laws: Sequence[str] | None = None,
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[pd.DataFrame, dict[tuple, FitResult]]:
    """Fit the sparsity laws to the usable rows of each group (bootstrap over runs).

    ``laws`` None: ``relu_sparsity`` for ReLU rows and ``silu_sparsity`` for SiLU
    rows (needs an ``activation`` column); otherwise every listed law on every group.

    Returns
    -------
    table, fits
        One row per (group, law): parameters and their CIs, the limit ``A0``, the
        points and runs used, warnings; and the :class:`FitResult` by (group..., law).
    """
    rows, fits = [], {}
    use = df[df["usable"]]
    keys = list(by)
    for key, g in use.groupby(keys, sort=False) if keys else [((), use)]:
        key = key if isinstance(key, tuple) else (key,)
        names = laws or [LAWS[dict(zip(keys, key, strict=True))["activation"]]]
        for law in names:
            row = dict(
                zip(keys, key, strict=True), law=law, n_points=len(g), n_runs=g["run"].nunique()
            )
            try:
                res = fit(
                    law,
                    g["tokens"].to_numpy(float),
                    g["activation_ratio"].to_numpy(float),
                    groups=g["run"].to_numpy(),
                    bootstrap=reps if g["run"].nunique() > 1 else 0,
                    level=level,
                    seed=seed,
                )
            except (InputError, ValueError) as exc:
                rows.append({**row, "error": str(exc)})
                continue
            fits[(*key, law)] = res
            for p, v in res.params.items():
                row[p] = v
                lo, hi = res.ci[p] if res.ci else (np.nan, np.nan)
                row[f"{p}_lo"], row[f"{p}_hi"] = lo, hi
            row["objective"] = res.objective
            row["warnings"] = "; ".join(res.warnings)
            rows.append(row)
    return pd.DataFrame(rows), fits


# ----------------------------------------------------------------------------- bootstrap
def _run_values(df: pd.DataFrame, value: str, keys: list[str]) -> pd.DataFrame:
    return df.groupby([*keys, "seed"], sort=False)[value].first().reset_index()


def group_means(
    per_run: pd.DataFrame,
    value: str,
    *,
    by: Sequence[str],
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean of ``value`` over the seeds of each group, with a bootstrap CI over seeds."""
    rng = np.random.default_rng(seed)
    rows = []
    for key, g in per_run.groupby(list(by), sort=False):
        v = g[value].to_numpy(float)
        idx = resample_groups(rng, v.size, reps)
        lo, hi = percentile_interval(v[idx].mean(1), level=level)
        key = key if isinstance(key, tuple) else (key,)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "mean": v.mean(),
                "lo": float(lo),
                "hi": float(hi),
                "n_seeds": v.size,
            }
        )
    return pd.DataFrame(rows)


def run_slopes(
    df: pd.DataFrame, *, y: str = "activation_ratio", x: str = "tokens", min_x: float = 0.0
) -> pd.DataFrame:
    """Per run: the OLS slope of ``y`` against ``log10(x)`` over its usable checkpoints
    with ``x >= min_x`` (units of ``y`` per decade of ``x``; ``min_x`` picks a late
    window); runs with fewer than 3 such points dropped."""
    rows = []
    late = df[df["usable"] & (df[x] >= min_x)]
    for (act, model, s), g in late.groupby(["activation", "model", "seed"], sort=False):
        if len(g) >= 3:
            slope = np.polyfit(np.log10(g[x].to_numpy(float)), g[y].to_numpy(float), 1)[0]
            rows.append(
                {"activation": act, "model": model, "seed": s, "slope": slope, "n_points": len(g)}
            )
    return pd.DataFrame(rows)


def stratified_mean(
    per_run: pd.DataFrame,
    value: str,
    *,
    strata: str = "model",
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, tuple[float, float]]:
    """Mean over strata of each stratum's seed mean; CI resamples seeds within strata."""
    rng = np.random.default_rng(seed)
    parts = [g[value].to_numpy(float) for _, g in per_run.groupby(strata, sort=False)]
    point = float(np.mean([p.mean() for p in parts]))
    reps_means = np.mean([p[resample_groups(rng, p.size, reps)].mean(1) for p in parts], axis=0)
    lo, hi = percentile_interval(reps_means, level=level)
    return point, (float(lo), float(hi))


def slope_vs_log(
    per_run: pd.DataFrame,
    value: str,
    x: str,
    *,
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, tuple[float, float]]:
    """OLS slope of the per-model seed means of ``value`` against ``log10(x)``.

    ``per_run`` has one row per (model, seed) with columns ``model``, ``x`` and
    ``value``. The CI resamples seeds within each model (models are the design).
    """
    rng = np.random.default_rng(seed)
    groups = [
        (float(g[x].iloc[0]), g[value].to_numpy(float))
        for _, g in per_run.groupby("model", sort=False)
    ]
    lx = np.log10([gx for gx, _ in groups])
    means = np.array([v.mean() for _, v in groups])
    point = float(np.polyfit(lx, means, 1)[0])
    draws = np.stack([v[resample_groups(rng, v.size, reps)].mean(1) for _, v in groups], 1)
    xc = lx - lx.mean()
    slopes = (draws - draws.mean(1, keepdims=True)) @ xc / (xc @ xc)
    lo, hi = percentile_interval(slopes, level=level)
    return point, (float(lo), float(hi))


def final_values(df: pd.DataFrame, value: str = "activation_ratio") -> pd.DataFrame:
    """Each run's ``value`` at its last checkpoint, with the model's coordinates."""
    last = df.loc[df.groupby("run")["tokens"].idxmax()]
    return last[
        [
            "activation",
            "model",
            "seed",
            "run",
            value,
            "n_params",
            "width_depth_ratio",
            "in_size_sweep",
            "in_width_depth",
            "loss",
        ]
    ].reset_index(drop=True)


def paired_difference(
    final: pd.DataFrame,
    value: str = "loss",
    *,
    a: str = "relu",
    b: str = "silu",
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, tuple[float, float], pd.DataFrame]:
    """``value`` of activation ``a`` minus ``b`` per (model, seed), averaged over models
    (CI resamples seeds within models); and the per-pair table."""
    wide = final.pivot_table(index=["model", "seed"], columns="activation", values=value)
    wide = wide.dropna(subset=[a, b]).reset_index()
    wide["diff"] = wide[a] - wide[b]
    point, ci = stratified_mean(wide, "diff", reps=reps, level=level, seed=seed)
    return point, ci, wide


# ----------------------------------------------------------------------------- identification
#: Sign of the activation-ratio trend with tokens each law's form can express.
LAW_SIGN = {"relu_sparsity": -1, "silu_sparsity": +1}


def law_identification(
    res: FitResult, param: str = "A0", *, trend: tuple[float, tuple[float, float]] | None = None
):
    """Whether a sparsity law's ``param`` is identified: not on a bound (point fit or >= 20%
    of refits), resting on an identified ``alpha`` (at ``alpha = 0`` the ReLU law is a
    constant and its limit trades off against ``b`` and ``c``), and fitted to data whose
    trend has the sign the law's form expresses.

    Parameters
    ----------
    res
        A ``relu_sparsity`` or ``silu_sparsity`` fit.
    trend
        The data's own trend, ``(point, (lo, hi))`` in ratio per decade of tokens (e.g.
        from :func:`run_slopes` and :func:`stratified_mean`); the parameter is not
        identified when that interval lies entirely on the side the law cannot express.

    Returns
    -------
    scalinglab.fitting.Identification
    """
    from scalinglab.fitting import Identification, identification

    ident = identification(res, param)
    if ident.identified and param != "alpha" and "alpha" in res.params:
        sub = identification(res, "alpha")
        if not sub.identified:
            ident = Identification(False, f"rests on {sub.reason}", None, None, sub.share_at_bound)
    sign = LAW_SIGN.get(res.law)
    if ident.identified and trend is not None and sign is not None:
        lo, hi = trend[1]
        if (sign < 0 and lo > 0) or (sign > 0 and hi < 0):
            ident = Identification(
                False,
                f"the data's trend {trend[0]:+.3g} [{lo:+.3g}, {hi:+.3g}] per decade has "
                f"the sign {res.law}'s form cannot express",
                None,
                None,
                0.0,
            )
    return ident


def laws_display(table: pd.DataFrame, params: Sequence[str] = ("alpha", "c", "A0")) -> pd.DataFrame:
    """A compact view of :func:`fit_laws`' table: one ``"value [lo, hi]"`` string per
    parameter (a dash where a law has no such parameter or no fit), points, runs."""
    from scalinglab.textfmt import fmt_num

    out = []
    for row in table.to_dict("records"):
        r = {k: row[k] for k in ("activation", "model", "law") if k in row}
        for p in params:
            v = row.get(p)
            if v is None or (isinstance(v, float) and np.isnan(v)):
                r[p] = None
                continue
            lo, hi = row.get(f"{p}_lo", np.nan), row.get(f"{p}_hi", np.nan)
            r[p] = fmt_num(v) + ("" if np.isnan(lo) else f" [{fmt_num(lo)}, {fmt_num(hi)}]")
        r["points/runs"] = f"{row.get('n_points', '')}/{row.get('n_runs', '')}"
        r["warnings"] = "; ".join(
            v for v in (row.get("warnings"), row.get("error")) if isinstance(v, str) and v
        )
        out.append(r)
    return pd.DataFrame(out)
