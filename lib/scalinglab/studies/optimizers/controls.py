"""Analyses of the control arms (:mod:`scalinglab.studies.optimizers.arms`) and the noise floor.

- :func:`transfer_effect`: each optimizer's geometric-mean speedup over AdamW with AdamW's
  learning rate and weight decay, over the same at its own tuned optimum, per size. The
  transfer runs enter :func:`~scalinglab.fitting.speedup.compute_speedups` as extra
  optimizers (``<name>@adamw``) of the same table, so both speedups invert the same AdamW
  fit, and replicate ``r`` of the ratio pairs the two speedups' replicate ``r`` (same AdamW
  refit; each cell's seeds resampled on their own). Below 1: the optimizer loses that
  much of its speedup when it is not tuned for itself.
- :func:`schedule_control`: Kendall's tau between the ranking halfway through training and
  at the end, for the main (decaying) schedule and for the control schedule at the same
  cells and seeds, and their difference, with one bootstrap over seeds shared by both (the
  runs of a seed share initialisation and data order). If mid-run rankings mislead
  *because of the decay*, the control's tau is higher (difference above 0).
- :func:`noise_floor`: the baseline's speedup over itself per size (its interval is the
  noise floor of every speedup there) and the minimum detectable speedup, the ratio a
  two-sided test at the interval's level detects with 80% power:
  ``exp(h (z_(1-a/2) + z_0.8) / z_(1-a/2))`` with ``h`` the interval's larger
  half-width in log units.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy.stats import norm

from scalinglab.fitting.loss_table import sweep_table
from scalinglab.fitting.speedup import SpeedupResult, compute_speedups
from scalinglab.stats.bootstrap import percentile_interval, resample_groups

TRANSFER_SUFFIX = "@adamw"


def transfer_table(ds: xr.Dataset) -> pd.DataFrame:
    """Final losses of the transfer arm as a speedup table (optimizer ``<name>@adamw``)."""
    df = ds[["transfer_final_loss", "transfer_status"]].to_dataframe().reset_index()
    df = df[(df.transfer_status == "ok") & np.isfinite(df.transfer_final_loss)]
    df = df.rename(columns={"transfer_final_loss": "loss"})
    df["optimizer"] = df["optimizer"] + TRANSFER_SUFFIX
    return df[["optimizer", "model_size", "data_multiple", "seed", "loss"]].reset_index(drop=True)


def transfer_effect(
    ds: xr.Dataset, *, baseline: str = "adamw", reps: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[pd.DataFrame, SpeedupResult]:
    """Speedup with AdamW's hyperparameters over the speedup at the own optimum, per size.

    Returns
    -------
    table, result
        ``table``: optimizer, model_size, tuned, transferred (geometric-mean speedups over
        the data multiples), ratio (transferred / tuned), lo, hi. ``result``: the
        speedups of the combined table.
    """
    from scalinglab.studies.optimizers.analysis import geomean_by_size

    table = pd.concat([sweep_table(ds), transfer_table(ds)], ignore_index=True)
    res = compute_speedups(table, baseline=baseline, bootstrap=reps, level=level, seed=seed)
    per, draws = geomean_by_size(res)
    sp = {(r.optimizer, r.model_size): r.speedup for r in per.itertuples()}
    rows = []
    for (name, size), trans in sp.items():
        if not name.endswith(TRANSFER_SUFFIX):
            continue
        o = name.removesuffix(TRANSFER_SUFFIX)
        tuned = sp.get((o, size), np.nan)
        lo = hi = np.nan
        a, b = draws.get((name, size)), draws.get((o, size))
        if a is not None and b is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = a / b
            ratio = np.where(np.isfinite(ratio), ratio, np.nan)
            if np.isfinite(ratio).sum() >= 2:
                lo, hi = (float(v) for v in percentile_interval(ratio, level=level))
        rows.append(
            {
                "optimizer": o,
                "model_size": size,
                "tuned": tuned,
                "transferred": trans,
                "ratio": trans / tuned,
                "lo": lo,
                "hi": hi,
            }
        )
    return pd.DataFrame(rows), res


def _tau_rows(loss: np.ndarray, idx: np.ndarray | None, mid: int, last: int):
    """Tau between step ``mid`` and ``last`` of ``loss`` ``(O, seeds, steps)``, and replicates."""
    from scalinglab.studies.optimizers.analysis import kendall_tau

    mean = loss.mean(axis=1)
    tau = float(kendall_tau(mean[:, mid][None], mean[:, last][None])[0])
    if idx is None:
        return tau, None
    boot = loss[:, idx].mean(axis=2)  # (O, R, steps)
    return tau, kendall_tau(boot[:, :, mid].T, boot[:, :, last].T)


def schedule_control(
    ds: xr.Dataset, *, reps: int = 1000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """Mid-run ranking agreement under the main schedule and the control schedule.

    Returns
    -------
    pandas.DataFrame
        model_size, data_multiple, step (the mid-run evaluation, ``last // 2``),
        tau_main, tau_control, diff (control - main), lo, hi (of diff), schedule, seeds
        (the seeds resampled: the interval's ``n``);
        with two or more control cells a last row ``model_size="pooled"`` (data_multiple
        NaN, step -1) holds the means over the cells, its interval from the same seed
        resamples in every cell (tau moves in steps of ``2 / (O (O - 1))`` per cell, so
        one cell of four optimizers can hardly decide a claim); empty when ``ds`` has
        no control arm.
    """
    if "control_loss" not in ds:
        return pd.DataFrame()
    dims = ("optimizer", "model_size", "data_multiple", "seed", "step")
    main = ds["loss"].transpose(*dims).values
    ctrl = ds["control_loss"].transpose(*dims).values
    rows: list[dict] = []
    draws: list[np.ndarray | None] = []
    for j, s in enumerate(ds.model_size.values):
        for k, m in enumerate(ds.data_multiple.values):
            a, b = main[:, j, k], ctrl[:, j, k]
            if not np.isfinite(b).any():
                continue
            valid = np.flatnonzero(
                np.isfinite(a).all(axis=(0, 1)) & np.isfinite(b).all(axis=(0, 1))
            )
            if len(valid) < 2:
                continue
            last = int(valid[-1])
            mid = last // 2
            n_seed = a.shape[1]
            idx = (
                resample_groups(np.random.default_rng(seed), n_seed, reps) if n_seed >= 2 else None
            )
            t_main, r_main = _tau_rows(a, idx, mid, last)
            t_ctrl, r_ctrl = _tau_rows(b, idx, mid, last)
            lo = hi = np.nan
            if r_main is not None and r_ctrl is not None:
                lo, hi = (float(v) for v in percentile_interval(r_ctrl - r_main, level=level))
            rows.append(
                {
                    "model_size": str(s),
                    "data_multiple": float(m),
                    "step": mid,
                    "tau_main": t_main,
                    "tau_control": t_ctrl,
                    "diff": t_ctrl - t_main,
                    "lo": lo,
                    "hi": hi,
                    "schedule": ds.attrs.get("control_schedule", ""),
                    "seeds": int(n_seed),
                }
            )
            draws.append(None if r_main is None or r_ctrl is None else r_ctrl - r_main)
    if len(rows) >= 2:  # pooled: the mean over cells, seeds resampled jointly in every cell
        lo = hi = np.nan
        have = [d for d in draws if d is not None]
        if len(have) == len(draws):
            lo, hi = (float(v) for v in percentile_interval(np.mean(have, axis=0), level=level))
        rows.append(
            {
                "model_size": "pooled",
                "data_multiple": np.nan,
                "step": -1,
                "tau_main": float(np.mean([r["tau_main"] for r in rows])),
                "tau_control": float(np.mean([r["tau_control"] for r in rows])),
                "diff": float(np.mean([r["diff"] for r in rows])),
                "lo": lo,
                "hi": hi,
                "schedule": rows[0]["schedule"],
                "seeds": min(int(r["seeds"]) for r in rows),
            }
        )
    return pd.DataFrame(rows)


def noise_floor(result: SpeedupResult, *, power: float = 0.8) -> pd.DataFrame:
    """The baseline's speedup over itself per size, and the minimum detectable speedup.

    Returns
    -------
    pandas.DataFrame
        model_size, speedup (geometric mean over multiples), lo, hi, halfwidth (the larger
        of ``1 - lo`` and ``hi - 1``), mde (see the module docstring; NaN without an
        interval).
    """
    from scalinglab.studies.optimizers.analysis import speedup_by_size

    per = speedup_by_size(result)
    per = per[per.optimizer == result.baseline]
    z_a = norm.ppf(0.5 + result.level / 2)
    z_b = norm.ppf(power)
    rows = []
    for r in per.itertuples():
        h_log = max(-np.log(r.lo), np.log(r.hi)) if np.isfinite([r.lo, r.hi]).all() else np.nan
        rows.append(
            {
                "model_size": r.model_size,
                "speedup": r.speedup,
                "lo": r.lo,
                "hi": r.hi,
                "halfwidth": max(1 - r.lo, r.hi - 1) if np.isfinite(h_log) else np.nan,
                "mde": float(np.exp(h_log * (z_a + z_b) / z_a)) if np.isfinite(h_log) else np.nan,
            }
        )
    return pd.DataFrame(rows)
