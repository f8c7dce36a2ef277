"""Losses that rise with more data: every such cell found and diagnosed from the runs.

Training on twice the data at a tuned learning rate should not end at a higher
held-out loss. When a sweep's seed-mean final loss does rise from a data multiple
``k`` to the next one, the cause matters: a defect (an unstable recipe, a
learning rate cut off by its grid) is to be fixed; a finding (seed noise,
overfitting a repeated corpus) is to be stated with its evidence.
:func:`rising_losses` finds every such cell and gathers, per cell, what tells
the causes apart:

- the paired change of the final held-out loss per seed (the same seed trains
  at both multiples), its mean with a bootstrap interval over seeds and its
  median: an interval that holds 0 is seed noise; a median that falls while the
  mean rises is one seed's run;
- the change of the final *training* loss: held-out up while training down, past
  one epoch, is overfitting; both up is an optimisation problem;
- epochs of the longer run, and whether its learning rate sits on an edge of the
  grid the tuning searched.

:func:`diagnose` turns those into one stated cause per cell (rules in its
docstring); nothing is hidden, a cell the rules cannot explain is ``unexplained``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.stats.bootstrap import percentile_interval, resample_groups

#: Causes :func:`diagnose` can state, in the order its rules try them.
CAUSES = ("one seed", "seed noise", "overfitting", "optimisation", "unexplained")


def _last(values: np.ndarray) -> np.ndarray:
    """Last finite value along the final axis (NaN where none)."""
    v = np.asarray(values, float)
    ok = np.isfinite(v)
    idx = np.where(ok.any(-1), v.shape[-1] - 1 - np.argmax(ok[..., ::-1], -1), 0)
    out = np.take_along_axis(v, idx[..., None], -1)[..., 0]
    return np.where(ok.any(-1), out, np.nan)


def lr_grid(ds: xr.Dataset, optimizer: str) -> np.ndarray:
    """Learning rates the tuning of ``optimizer`` evaluated (sorted; empty if not logged)."""
    if "tuning_search" not in ds:
        return np.array([])
    sel = (ds["tuning_search"].values == optimizer) & (ds["tuning_coordinate"].values == "lr")
    vals = ds["tuning_value"].values[sel]
    return np.unique(np.array([float(v) for v in vals if v != ""], float))


def rising_losses(
    ds: xr.Dataset,
    *,
    epochs: np.ndarray | None = None,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Every (optimizer, size, k -> next multiple) whose seed-mean final loss rises.

    Parameters
    ----------
    ds
        An optimizer sweep (dims ``optimizer, model_size, data_multiple, seed, step``;
        ``final_loss``, ``train_loss``, ``lr``; optional coordinate ``epochs``
        ``(model_size, data_multiple)`` and the tuning log).
    epochs
        Passes over the training stream, ``(model_size, data_multiple)``, for a
        sweep that does not carry them (e.g. from ``planned_epochs``).

    Returns
    -------
    pandas.DataFrame
        One row per rising cell: ``optimizer, model_size, from_multiple,
        to_multiple, n_seeds, delta`` (mean paired change of the held-out loss),
        ``delta_lo, delta_hi``, ``delta_median``, ``train_delta`` (mean paired change
        of the final training loss), ``epochs`` (of the longer run, NaN if not
        recorded), ``lr``, ``lr_on_grid_edge`` and ``seed_deltas`` (a tuple).
    """
    rng = np.random.default_rng(seed)
    final = ds["final_loss"].transpose("optimizer", "model_size", "data_multiple", "seed")
    train = _last(
        ds["train_loss"].transpose("optimizer", "model_size", "data_multiple", "seed", "step")
    )
    mults = [float(m) for m in ds["data_multiple"].values]
    if epochs is None and "epochs" in ds.coords:
        epochs = ds["epochs"].transpose("model_size", "data_multiple").values
    rows = []
    for i, opt in enumerate(ds["optimizer"].values):
        grid = lr_grid(ds, str(opt))
        for j, size in enumerate(ds["model_size"].values):
            for a in range(len(mults) - 1):
                lo_l, hi_l = final.values[i, j, a], final.values[i, j, a + 1]
                paired = np.isfinite(lo_l) & np.isfinite(hi_l)
                if paired.sum() < 2 or np.mean(hi_l[paired]) <= np.mean(lo_l[paired]):
                    continue
                d = hi_l[paired] - lo_l[paired]
                draws = d[resample_groups(rng, d.size, reps)].mean(1)
                ci = percentile_interval(draws, level=level)
                lr = float(ds["lr"].values[i, j, a + 1])
                rows.append(
                    {
                        "optimizer": str(opt),
                        "model_size": str(size),
                        "from_multiple": mults[a],
                        "to_multiple": mults[a + 1],
                        "n_seeds": int(d.size),
                        "delta": float(d.mean()),
                        "delta_lo": float(ci[0]),
                        "delta_hi": float(ci[1]),
                        "delta_median": float(np.median(d)),
                        "train_delta": float(
                            np.nanmean(train[i, j, a + 1][paired] - train[i, j, a][paired])
                        ),
                        "epochs": float(epochs[j, a + 1]) if epochs is not None else np.nan,
                        "lr": lr,
                        "lr_on_grid_edge": bool(grid.size and lr in (grid[0], grid[-1])),
                        "seed_deltas": tuple(float(x) for x in d),
                    }
                )
    return pd.DataFrame(rows)


def diagnose(table: pd.DataFrame) -> pd.DataFrame:
    """One stated cause per rising cell of :func:`rising_losses`.

    Rules, first match wins:

    1. ``one seed``: the median paired change is not positive (most seeds improve
       with more data; one run's rise carries the mean);
    2. ``seed noise``: the interval of the mean paired change holds 0;
    3. ``overfitting``: the longer run passes the data more than once and its
       training loss falls while the held-out loss rises;
    4. ``optimisation``: the training loss rises too (the longer run optimises
       worse, e.g. an unstable learning rate; ``lr_on_grid_edge`` says whether
       the tuning could have found another);
    5. ``unexplained``.

    Returns
    -------
    pandas.DataFrame
        ``table`` with a ``cause`` column (one of :data:`CAUSES`).
    """
    out = table.copy()
    causes = []
    for r in out.to_dict("records"):
        if r["delta_median"] <= 0.0:
            causes.append("one seed")
        elif r["delta_lo"] <= 0.0 <= r["delta_hi"]:
            causes.append("seed noise")
        elif r["epochs"] > 1.0 and r["train_delta"] < 0.0:
            causes.append("overfitting")
        elif r["train_delta"] > 0.0:
            causes.append("optimisation")
        else:
            causes.append("unexplained")
    out["cause"] = causes
    return out


__all__ = ["CAUSES", "diagnose", "lr_grid", "rising_losses"]
