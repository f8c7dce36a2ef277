"""The optimizer study's questions beyond the speedup table, each with bootstrap CIs.

- :func:`speedup_by_size` and :func:`size_trend`: does the speedup shrink with model
  size? Per optimizer, the geometric mean of its speedup over data multiples at each
  size, and the slope
  of ``log(speedup)`` against ``log(N)`` (N non-embedding parameters) by least
  squares, with percentile CIs from the replicates of
  :func:`~scalinglab.fitting.speedup.compute_speedups`.
- :func:`family_gap`: do matrix-preconditioned optimizers lead? The difference of
  the mean log speedup of the matrix family and of the scalar family (baseline
  excluded) per size, as a ratio ``exp(gap)``, with CIs from the same replicates.
- :func:`ranking_agreement`: do rankings at intermediate checkpoints match the end?
  Kendall's tau between the optimizers' ranking (by seed-mean held-out loss) at each
  evaluation point and at the end of the same runs, with CIs from resampling seeds
  (jointly for all optimizers: runs with the same seed share initialisation and
  data order). :func:`leader_table` names the leader at each checkpoint.
- :func:`wallclock_table`: seconds per step of each optimizer relative to the
  baseline at the same size, next to its token speedup; the wall-clock speedup is
  ``token speedup / step-time ratio`` (a speedup that costs more time per step is
  not a speedup).

Kendall's tau is vectorized over replicates here (``scipy.stats.kendalltau`` takes
one pair at a time); with continuous losses there are no ties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.fitting.speedup import SpeedupResult
from scalinglab.stats.bootstrap import percentile_interval, resample_groups


def geomean_by_size(result: SpeedupResult) -> tuple[pd.DataFrame, dict]:
    """Each (optimizer, size)'s geometric-mean speedup over data budgets, and its bootstrap
    replicates ``{(optimizer, size): array (reps,)}``."""
    cells = result.cells
    rows, reps = [], {}
    for (o, s), g in cells.groupby(["optimizer", "model_size"], sort=False):
        ok = g[g.status == "ok"]
        point = float(np.exp(np.log(ok.speedup).mean())) if len(ok) == len(g) else np.nan
        rep = None
        if result.draws is not None and len(ok) == len(g):
            d = result.draws[:, g.index.to_numpy()]
            with np.errstate(divide="ignore", invalid="ignore"):
                rep = np.exp(np.log(d).mean(axis=1))  # inf stays inf, NaN stays NaN
        reps[(o, s)] = rep
        rows.append(
            {
                "optimizer": o,
                "model_size": s,
                "speedup": point,
                "n_multiples": len(g),
                "complete": len(ok) == len(g),
            }
        )
    return pd.DataFrame(rows), reps


def speedup_by_size(result: SpeedupResult) -> pd.DataFrame:
    """Geometric mean of each optimizer's speedup over the data multiples, per size.

    Returns
    -------
    pandas.DataFrame
        optimizer, model_size, speedup (NaN unless every multiple has a finite
        speedup), lo, hi (percentile CI; replicates below the asymptote dropped),
        n_multiples, complete.
    """
    per, reps = geomean_by_size(result)
    per["lo"], per["hi"] = np.nan, np.nan
    for i, r in per.iterrows():
        rep = reps[(r.optimizer, r.model_size)]
        if rep is not None and np.isfinite(rep).any():
            lo, hi = percentile_interval(np.where(np.isinf(rep), np.nan, rep), level=result.level)
            per.loc[i, ["lo", "hi"]] = float(lo), float(hi)
    return per


def size_trend(
    result: SpeedupResult, n_params: Mapping[str, float]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Speedup per size and its trend with size.

    Parameters
    ----------
    result
        From :func:`~scalinglab.fitting.speedup.compute_speedups`.
    n_params
        ``model_size -> N``.

    Returns
    -------
    per_size, trend
        ``per_size``: :func:`speedup_by_size` with ``n_params``.
        ``trend``: optimizer, slope of log speedup per log N, lo, hi, n_sizes.
    """
    per = speedup_by_size(result)
    _, reps = geomean_by_size(result)
    per["n_params"] = [float(n_params[s]) for s in per.model_size]
    trend = []
    for o, g in per.groupby("optimizer", sort=False):
        g = g[g.complete]
        if len(g) < 2:
            trend.append(
                {"optimizer": o, "slope": np.nan, "lo": np.nan, "hi": np.nan, "n_sizes": len(g)}
            )
            continue
        x = np.log(g.n_params.to_numpy())
        xc = (x - x.mean()) / ((x - x.mean()) ** 2).sum()
        slope = float(xc @ np.log(g.speedup.to_numpy()))
        lo = hi = np.nan
        if all(reps[(o, s)] is not None for s in g.model_size):
            R = np.column_stack([reps[(o, s)] for s in g.model_size])
            with np.errstate(divide="ignore", invalid="ignore"):
                sl = np.log(R) @ xc
            lo, hi = percentile_interval(np.where(np.isfinite(sl), sl, np.nan), level=result.level)
        trend.append(
            {"optimizer": o, "slope": slope, "lo": float(lo), "hi": float(hi), "n_sizes": len(g)}
        )
    return per, pd.DataFrame(trend)


def family_log_gap(matrix: Sequence, scalar: Sequence, *, with_baseline: bool = False):
    """FPO-2's statistic on log speedups: the matrix family's mean minus the scalar
    family's, the baseline counted among the scalars at log speedup 0 when
    ``with_baseline``. Each item is a float or an array ``(R,)`` of replicates (then the
    result is ``(R,)``). The one definition behind :func:`family_gap`,
    :func:`.seedwise.family` and :func:`.seed_t.family_geomean`."""
    scalars = [*scalar, *([0.0] if with_baseline else [])]
    if not matrix or not scalars:
        raise ValueError("a family gap needs a matrix and a scalar optimizer")
    return np.mean(np.broadcast_arrays(*matrix), axis=0) - np.mean(
        np.broadcast_arrays(*scalars), axis=0
    )


def family_gap(
    result: SpeedupResult, families: Mapping[str, str], *, with_baseline: bool = False
) -> pd.DataFrame:
    """Geometric-mean speedup of the matrix optimizers over that of the scalar ones, per size.

    Parameters
    ----------
    families
        ``optimizer -> "matrix" | "scalar"``; the baseline is left out, unless
        ``with_baseline``: then it is one of the scalar family, at speedup 1 by definition
        (the ``medium`` design's FPO-2, so the ratio does not rest on one scalar variant).

    Returns
    -------
    pandas.DataFrame
        model_size, ratio (``exp(mean log speedup, matrix - scalar)``; > 1: matrix
        methods lead), lo, hi, matrix, scalar (the optimizers used).
    """
    per, reps = geomean_by_size(result)
    rows = []
    for s, g in per.groupby("model_size", sort=False):
        g = g[g.complete & (g.optimizer != result.baseline)]
        mat = [o for o in g.optimizer if families.get(o) == "matrix"]
        sca = [o for o in g.optimizer if families.get(o) == "scalar"]
        ones = [1.0] if with_baseline else []
        if not mat or not (sca or ones):
            continue
        sp = dict(zip(g.optimizer, g.speedup, strict=True))
        log_sp = {o: float(np.log(sp[o])) for o in mat + sca}
        point = float(
            np.exp(
                family_log_gap(
                    [log_sp[o] for o in mat], [log_sp[o] for o in sca], with_baseline=with_baseline
                )
            )
        )
        lo = hi = np.nan
        if all(reps[(o, s)] is not None for o in mat + sca):
            with np.errstate(divide="ignore", invalid="ignore"):
                d = family_log_gap(
                    [np.log(reps[(o, s)]) for o in mat],
                    [np.log(reps[(o, s)]) for o in sca],
                    with_baseline=with_baseline,
                )
            lo, hi = (
                float(np.exp(v))
                for v in percentile_interval(
                    np.where(np.isfinite(d), d, np.nan), level=result.level
                )
            )
        rows.append(
            {
                "model_size": s,
                "ratio": point,
                "lo": lo,
                "hi": hi,
                "matrix": ",".join(mat),
                "scalar": ",".join(([result.baseline] if with_baseline else []) + sca),
            }
        )
    return pd.DataFrame(rows)


def kendall_tau(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-a between rows of ``a`` and ``b`` ``(R, n)``: concordant minus discordant pairs."""
    n = a.shape[-1]
    sa = np.sign(a[..., :, None] - a[..., None, :])
    sb = np.sign(b[..., :, None] - b[..., None, :])
    iu = np.triu_indices(n, 1)
    return (sa * sb)[..., iu[0], iu[1]].sum(-1) / (n * (n - 1) / 2)


def ranking_agreement(
    ds: xr.Dataset, *, reps: int = 1000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """Kendall's tau between the ranking at each checkpoint and at the end of the same runs.

    Parameters
    ----------
    ds
        An optimizer-sweep Dataset (``loss`` over ``optimizer, model_size,
        data_multiple, seed, step``; the last valid step is the end of training).

    Returns
    -------
    pandas.DataFrame
        model_size, data_multiple, step, tokens_seen, tau, lo, hi (tau 1: same order),
        seeds (the seeds resampled: the interval's ``n``).
    """
    loss = ds["loss"].transpose("optimizer", "model_size", "data_multiple", "seed", "step").values
    n_seed = loss.shape[3]
    idx = resample_groups(np.random.default_rng(seed), n_seed, reps) if n_seed >= 2 else None
    rows = []
    for j, s in enumerate(ds.model_size.values):
        for k, m in enumerate(ds.data_multiple.values):
            cur = loss[:, j, k]  # (O, seeds, steps)
            valid = np.flatnonzero(np.isfinite(cur).all(axis=(0, 1)))
            if len(valid) < 1:
                continue
            last = valid[-1]
            mean = cur.mean(axis=1)  # (O, steps)
            boot = None if idx is None else cur[:, idx].mean(axis=2)  # (O, R, steps)
            for e in valid:
                tau = float(kendall_tau(mean[:, e][None], mean[:, last][None])[0])
                lo = hi = np.nan
                if boot is not None:
                    t = kendall_tau(boot[:, :, e].T, boot[:, :, last].T)
                    lo, hi = (float(v) for v in percentile_interval(t, level=level))
                rows.append(
                    {
                        "model_size": str(s),
                        "data_multiple": float(m),
                        "step": int(e),
                        "tokens_seen": int(ds.tokens_seen.values[j, k, e]),
                        "tau": tau,
                        "lo": lo,
                        "hi": hi,
                        "seeds": int(n_seed),
                    }
                )
    return pd.DataFrame(rows)


def leader_table(ds: xr.Dataset) -> pd.DataFrame:
    """The optimizer with the lowest seed-mean held-out loss at every checkpoint.

    Returns
    -------
    pandas.DataFrame
        model_size, data_multiple, step, tokens_seen, leader, ranking (best first).
    """
    mean = ds["loss"].mean("seed")
    rows = []
    for s in ds.model_size.values:
        for m in ds.data_multiple.values:
            cur = mean.sel(model_size=s, data_multiple=m)
            for e in ds.step.values:
                v = cur.sel(step=e).to_series()
                if v.isna().any():
                    continue
                order = list(v.sort_values().index)
                rows.append(
                    {
                        "model_size": str(s),
                        "data_multiple": float(m),
                        "step": int(e),
                        "tokens_seen": int(
                            ds.tokens_seen.sel(model_size=s, data_multiple=m, step=e)
                        ),
                        "leader": order[0],
                        "ranking": " < ".join(order),
                    }
                )
    return pd.DataFrame(rows)


#: How :func:`wallclock_table` reads a step-time ratio without a side-by-side timing.
STEP_TIMES_OVER_RUNS = (
    "percentile bootstrap over the sweep's runs (separate processes at separate times: "
    "the machine's load moves it)"
)


def _step_time_medians(times: np.ndarray, rng: np.random.Generator, reps: int) -> np.ndarray:
    """Bootstrap medians of one (optimizer, size)'s seconds per step, resampling its runs."""
    v = times[np.isfinite(times)]
    if v.size < 2:
        return np.full(reps, np.nan)
    return np.median(v[resample_groups(rng, v.size, reps)], axis=1)


def wallclock_table(
    ds: xr.Dataset,
    result: SpeedupResult,
    *,
    baseline: str | None = None,
    seed: int = 0,
    timing: xr.Dataset | None = None,
) -> pd.DataFrame:
    """Step time relative to the baseline next to token and wall-clock speedups, per size.

    With ``timing`` (:func:`.step_times.measure`, the optimizers timed side by side), a
    cell it covers takes its step-time ratio from there: the mean log ratio over rounds
    with its Student-t interval, and for the wall-clock interval as many t draws
    (:func:`.step_times.ratio_draws`) as the token speedup has replicates. Otherwise the
    ratio is read off the sweep's runs: every run is a separate process at a separate
    time, so resampling runs carries the machine's run-to-run variance (its load) into the
    step-time interval: each replicate takes the median seconds per step over resampled
    runs of the optimizer and, independently, of the baseline. Replicate ``r`` of the
    wall-clock speedup divides token-speedup replicate ``r`` by step-time-ratio
    replicate ``r``.

    Returns
    -------
    pandas.DataFrame
        optimizer, model_size, seconds_per_step (median over the timing's rounds where it
        timed the cell, else over runs), time_ratio
        (over the baseline's) with ratio_lo/ratio_hi and ratio_method, token_speedup
        (geometric mean over multiples) with token_lo/token_hi, wallclock_speedup ``=
        token_speedup / time_ratio`` with wallclock_lo/wallclock_hi.
    """
    from scalinglab.stats.bootstrap import keyed_generators
    from scalinglab.studies.optimizers import step_times

    baseline = baseline or result.baseline
    per, reps = geomean_by_size(result)
    sec = ds["seconds_per_step"].where(ds["status"] == "ok")
    others = ds["status"].sel(optimizer=[o for o in ds.optimizer.values if o != baseline])
    if others.sizes["optimizer"]:  # the budgets the others ran: like against like
        sec = sec.where((others != "skipped").any(("optimizer", "seed")))
    sps = sec.median(("data_multiple", "seed"))
    n_rep = result.reps or 1000
    keys = [f"{o}|{s}" for o in ds.optimizer.values for s in ds.model_size.values]
    gens = keyed_generators(np.random.default_rng(seed), keys)
    boot = {
        k: _step_time_medians(
            sec.sel(optimizer=k.split("|")[0], model_size=k.split("|")[1]).values.ravel(),
            gens[k],
            n_rep,
        )
        for k in keys
    }
    timed = (
        step_times.ratio_table(timing, baseline=baseline, level=result.level).set_index(
            ["optimizer", "model_size"]
        )
        if timing is not None
        else None
    )

    timed_sizes = set() if timed is None else set(timed.index.get_level_values("model_size"))

    def seconds(o: str, s: str, *, from_timing: bool) -> float:
        # the side-by-side timing's median where the ratio beside it comes from there, so
        # the column agrees with the ratio; else the sweep's runs'
        if from_timing:
            return float(timing["seconds_per_step"].sel(optimizer=o, model_size=s).median())  # type: ignore[index]
        return float(sps.sel(optimizer=o, model_size=s))

    rows = []
    for r in per.itertuples():
        key = (r.optimizer, r.model_size)
        from_timing = timed is not None and (
            key in timed.index or (r.optimizer == baseline and r.model_size in timed_sizes)
        )
        t = seconds(r.optimizer, r.model_size, from_timing=from_timing)
        method = STEP_TIMES_OVER_RUNS
        if timed is not None and key in timed.index:
            c = timed.loc[key]
            ratio, rlo, rhi, method = c.time_ratio, c.ratio_lo, c.ratio_hi, c.method
            ratio_rep = step_times.ratio_draws(
                timing,  # type: ignore[arg-type]
                r.optimizer,
                r.model_size,
                baseline=baseline,
                n=n_rep,
                rng=gens[f"{r.optimizer}|{r.model_size}"],
            )
        else:
            ratio = t / seconds(baseline, r.model_size, from_timing=from_timing)
            ratio_rep = boot[f"{r.optimizer}|{r.model_size}"] / boot[f"{baseline}|{r.model_size}"]
            rlo = rhi = np.nan
            if r.optimizer != baseline and np.isfinite(ratio_rep).any():
                rlo, rhi = (float(v) for v in percentile_interval(ratio_rep, level=result.level))
        rep = reps[(r.optimizer, r.model_size)]
        lo = hi = wlo = whi = np.nan
        if rep is not None and np.isfinite(rep).any():
            tok = np.where(np.isinf(rep), np.nan, rep)
            lo, hi = (float(v) for v in percentile_interval(tok, level=result.level))
            if len(tok) == len(ratio_rep) and np.isfinite(ratio_rep).any():
                wlo, whi = (
                    float(v) for v in percentile_interval(tok / ratio_rep, level=result.level)
                )
        rows.append(
            {
                "optimizer": r.optimizer,
                "model_size": r.model_size,
                "seconds_per_step": t,
                "time_ratio": ratio,
                "ratio_lo": rlo,
                "ratio_hi": rhi,
                "ratio_method": method,
                "token_speedup": r.speedup,
                "token_lo": lo,
                "token_hi": hi,
                "wallclock_speedup": r.speedup / ratio,
                "wallclock_lo": wlo,
                "wallclock_hi": whi,
            }
        )
    return pd.DataFrame(rows)
