"""Analyses of the sparsity-law sweep: curves, law fits, trends, width-depth, size, loss.

Turns :func:`scalinglab.studies.sparsity.sweep.run_sweep`'s Dataset (or a
user's table of ``run, tokens, activation_ratio``) into tables with bootstrap
CIs. Uncertainty comes from seeds: a run is the resampling unit (the fitting
engine's group bootstrap for the laws; Student t over seeds within each model for slopes
and means, :mod:`.seed_means`, which covers at 3 seeds where a percentile bootstrap
does not).

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
from scalinglab.estimate import Estimate
from scalinglab.fitting import FitResult, fit
from scalinglab.studies.sparsity import seed_means

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


def sweep_models(ds: xr.Dataset) -> pd.DataFrame:
    """The sweep's models: shape, parameters and the families each belongs to."""
    cols = ["d_model", "n_layer", "n_params", "d_ff", "width_depth_ratio", "in_size_sweep"]
    return ds[[*cols, "in_width_depth"]].to_dataframe()


def sweep_summary(ds: xr.Dataset, df: pd.DataFrame, *, min_ffn_gain: float) -> str:
    """One paragraph on the sweep: runs ok and failed (with their errors), usable
    checkpoints, corpus and core-minutes."""
    bad = ds["status"] != "ok"
    text = (
        f"{int((~bad).sum())} runs ok, {int(bad.sum())} failed; {int(df['usable'].sum())} of "
        f"{len(df)} checkpoints usable (FFN gain >= {min_ffn_gain} nats); corpus "
        f"{ds.attrs['corpus_train_tokens']:,} train tokens ({ds.attrs['corpus_sources']}); "
        f"train {float(ds['train_s'].sum()) / 60:.1f} + measure "
        f"{float(ds['measure_s'].sum()) / 60:.1f} core-minutes"
    )
    if bool(bad.any()):
        errors = ds["error"].where(bad, drop=True).to_dataframe()
        text += "\n" + errors.to_string()
    return text


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


# ----------------------------------------------------------------------------- seeds
# intervals over seeds: Student t (seed_means), which covers at 3 seeds
group_means = seed_means.group_means
stratified_mean = seed_means.stratified_mean
slope_vs_log = seed_means.slope_vs_log


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
    level: float = 0.95,
) -> tuple[Estimate, pd.DataFrame]:
    """``value`` of activation ``a`` minus ``b`` per (model, seed), averaged over models
    (Welch t interval over seeds, :func:`.seed_means.stratified_mean`); and the per-pair
    table (columns ``model, seed, a, b, diff``)."""
    wide = final.pivot_table(index=["model", "seed"], columns="activation", values=value)
    wide = wide.dropna(subset=[a, b]).reset_index()
    wide["diff"] = wide[a] - wide[b]
    return stratified_mean(wide, "diff", level=level), wide


# ----------------------------------------------------------------------------- identification
#: Sign of the activation-ratio trend with tokens each law's form can express.
LAW_SIGN = {"relu_sparsity": -1, "silu_sparsity": +1}


def law_identification(res: FitResult, param: str = "A0", *, trend: Estimate | None = None):
    """Whether a sparsity law's ``param`` is identified: not on a bound (point fit or >= 20%
    of refits), resting on an identified ``alpha`` (at ``alpha = 0`` the ReLU law is a
    constant and its limit trades off against ``b`` and ``c``), and fitted to data whose
    trend has the sign the law's form expresses.

    Parameters
    ----------
    res
        A ``relu_sparsity`` or ``silu_sparsity`` fit.
    trend
        The data's own trend in ratio per decade of tokens (e.g. from :func:`run_slopes`
        and :func:`stratified_mean`); the parameter is not identified when its interval
        lies entirely on the side the law cannot express (no interval: not used).

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
    if ident.identified and trend is not None and trend.ci is not None and sign is not None:
        lo, hi = trend.ci
        if (sign < 0 and lo > 0) or (sign > 0 and hi < 0):
            ident = Identification(
                False,
                f"the data's trend {trend.point:+.3g} [{lo:+.3g}, {hi:+.3g}] per decade has "
                f"the sign {res.law}'s form cannot express",
                None,
                None,
                0.0,
            )
    return ident


#: How the law fits' intervals are made, with their coverage at 3 seeds stated.
#: The law limits' interval method, without words on its coverage.
LAW_CI_BASE = "group bootstrap over runs (seeds) of the law fit, percentile"
LAW_CI = (
    f"{LAW_CI_BASE}; over a few runs per model a percentile bootstrap covers below its "
    "nominal level (a 3-seed mean: about 0.75, see the coverage table)"
)


def law_limit(res: FitResult, *, trend: Estimate | None = None, param: str = "A0") -> Estimate:
    """A sparsity law's limit as an estimate: the fit's group-bootstrap interval
    (:data:`LAW_CI`) and :func:`law_identification`'s verdict (a limit on its bound, on an
    unidentified ``alpha`` or against the data's trend is not identified).

    A bootstrap whose refits never leave a bound has a zero-width interval, which does
    not cover: the estimate then has no interval, and its note says so.
    """
    ident = law_identification(res, param, trend=trend)
    ci = None if res.ci is None else tuple(float(v) for v in res.ci[param])
    note = ident.reason or None
    if ci is not None and not ci[0] < ci[1]:
        ci = None
        note = "; ".join(v for v in (note, "every refit gave the same value: no interval") if v)
    return Estimate(
        float(res.params[param]),
        None if ci is None else ci[0],
        None if ci is None else ci[1],
        level=res.level if ci is not None else None,
        method=LAW_CI,
        resamples=res.bootstrap_info.get("reps") if ci is not None else None,
        identified=ident.identified,
        note=note,
        bound=ident.bound,
        side=ident.side,
    )


def laws_display(table: pd.DataFrame, params: Sequence[str] = ("alpha", "c", "A0")) -> pd.DataFrame:
    """A compact view of :func:`fit_laws`' table: one ``"value [lo, hi]"`` string per
    parameter (a dash where a law has no such parameter or no fit; no interval where
    every bootstrap refit gives one value, as on a bound), points, runs."""
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
            if np.isnan(lo):
                r[p] = fmt_num(v)
            elif lo == hi:  # every refit at one value (a bound): a [v, v] interval says nothing
                r[p] = f"{fmt_num(v)} (every refit {fmt_num(lo)}: no interval)"
            else:
                r[p] = f"{fmt_num(v)} [{fmt_num(lo)}, {fmt_num(hi)}]"
        r["points/runs"] = f"{row.get('n_points', '')}/{row.get('n_runs', '')}"
        r["warnings"] = "; ".join(
            v for v in (row.get("warnings"), row.get("error")) if isinstance(v, str) and v
        )
        out.append(r)
    return pd.DataFrame(out)
