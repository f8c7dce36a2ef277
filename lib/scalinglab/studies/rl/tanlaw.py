"""Tan et al.'s law as Tan et al. fit it, and the test that can fail it.

Tan et al. fit ``log10 L = -k log10 C + E0`` with ``L = 1 - pass@1`` on held-out
problems and ``C`` the RL compute, one straight line per model size on log-log axes
(they then model ``k(N)`` across sizes, :mod:`.kn`). Here each run gets that line
(:func:`per_run_power_laws`: ordinary least squares of ``log10 L`` on ``log10 C`` over
its evaluations with ``C > 0`` and ``L > 0``) and three things are read from it:

- ``k`` per size (:func:`k_by_size`): the mean over the size's runs with a Student-t
  interval (seeds are few: a percentile bootstrap over 3-5 seeds under-covers), and
  the rise of ``k`` from the smallest to the largest size (:func:`k_rise`, Welch over
  warm starts);
- the curvature: the quadratic term of ``log10 L`` in ``log10 C`` (per decade
  squared), zero if the law holds; its mean per size with a Student-t interval;
- held-out error (:func:`heldout_comparison`): the line fitted on the first
  ``fit_frac`` of each run's compute predicts the later evaluations; its RMSE in pass
  rate against that of ScaleRL's sigmoid fitted on the same window
  (:func:`.halfruns.per_run_half_fits`, ``rmse_later``). ``k > 0`` holds for any run that
  improves; "the power law predicts the rest of a run about as well as the sigmoid"
  can fail, and is what TAN-1 is decided by.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.studies.rl import units
from scalinglab.studies.rl.scope import JUDGED


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Slope, intercept and the quadratic term of y in x (centred)."""
    slope, icept = np.polyfit(x, y, 1)
    quad = np.polyfit(x - x.mean(), y, 2)[0] if x.size >= 4 else np.nan
    return float(slope), float(icept), float(quad)


def per_run_power_laws(
    curves: pd.DataFrame,
    *,
    fit_frac: float = 0.5,
    transient_frac: float = 0.1,
    hold_out: int = JUDGED,
) -> pd.DataFrame:
    """Tan et al.'s line for every run, on all of it and on its first ``fit_frac``.

    Parameters
    ----------
    curves
        One row per evaluation (``model_size, n_params, variant, seed, compute,
        pass_rate``).
    fit_frac, transient_frac
        The held-out split, as :func:`.halfruns.per_run_half_fits` (the half fit uses
        compute in ``[transient_frac, fit_frac]`` x the run's final compute, the
        sigmoid's window; the full fit uses every point, as Tan et al.).
    hold_out
        The run's last evaluations left out of the later window, as the sigmoid's
        (:func:`.halfruns.per_run_half_fits`), so both laws are scored on the same points.

    Returns
    -------
    pandas.DataFrame
        One row per run: ``model_size, n_params, variant, seed, k`` (minus the slope),
        ``E0``, ``curvature`` (quadratic term per decade squared), ``n_points``,
        ``rmse_later_power`` (the half line's RMSE in pass rate on the evaluations
        after the half; NaN with fewer than 3 points in the half).
    """
    rows = []
    for (size, var, sd), g in curves.groupby(["model_size", "variant", "seed"], sort=False):
        g = g.sort_values("compute")
        c, r = g["compute"].to_numpy(float), g["pass_rate"].to_numpy(float)
        ok = (c > 0) & (r < 1)
        row = {
            "model_size": size,
            "n_params": float(g["n_params"].iloc[0]),
            "variant": var,
            "seed": sd,
            "n_points": int(ok.sum()),
        }
        if "warm_start" in g:
            row["warm_start"] = g["warm_start"].iloc[0]
        if ok.sum() < 3:
            rows.append(row | {"k": np.nan, "E0": np.nan, "curvature": np.nan})
            continue
        x, y = np.log10(c[ok]), np.log10(1.0 - r[ok])
        slope, icept, quad = _line(x, y)
        cmax = float(c.max())
        half = ok & (c >= transient_frac * cmax) & (c <= fit_frac * cmax)
        later = c > fit_frac * cmax
        later[c.size - hold_out :] &= hold_out == 0
        rmse = np.nan
        if half.sum() >= 3 and later.any():
            s_h, i_h, _ = _line(np.log10(c[half]), np.log10(1.0 - r[half]))
            pred = 1.0 - 10 ** (i_h + s_h * np.log10(c[later]))
            rmse = float(np.sqrt(np.mean((pred - r[later]) ** 2)))
        rows.append(row | {"k": -slope, "E0": icept, "curvature": quad, "rmse_later_power": rmse})
    return pd.DataFrame(rows)


def k_by_size(
    laws: pd.DataFrame, sizes: Sequence[str], *, variant: str, level: float = 0.95
) -> pd.DataFrame:
    """``k`` and the curvature per size: means over the size's units (warm starts, or
    runs without them: :mod:`.units`), Student-t intervals over the units.

    Returns
    -------
    pandas.DataFrame
        Indexed by size: ``n_params, runs, k, k_lo, k_hi, curvature, curvature_lo,
        curvature_hi`` and per column ``<col>_units, <col>_method, <col>_clustered`` (the
        interval's units, method text, and whether the units are warm starts).
    """
    rows = []
    for s in sizes:
        g = laws[(laws["model_size"] == s) & (laws["variant"] == variant)]
        row: dict = {"model_size": s, "n_params": float(g["n_params"].iloc[0]), "runs": len(g)}
        for col in ("k", "curvature"):
            u = units.unit_values(g, col)
            row[col], row[f"{col}_lo"], row[f"{col}_hi"] = units.t_over_units(u, level=level)
            row[f"{col}_units"], row[f"{col}_method"] = u.n, f"Student t over {u.describe()}"
            row[f"{col}_clustered"] = u.clustered
        rows.append(row)
    return pd.DataFrame(rows).set_index("model_size")


def k_rise(
    laws: pd.DataFrame, sizes: Sequence[str], *, variant: str, level: float = 0.95
) -> Estimate:
    """``k`` of the largest size minus ``k`` of the smallest, Welch's t interval.

    When ``laws`` has a ``warm_start`` column (several RL seeds from one base model),
    the unit is the warm start: ``k`` is averaged over each warm start's runs first and
    Welch's t is taken over those means, since runs from one base model are not
    independent draws of the size (with 2 warm starts a size, 1-2 degrees of freedom:
    wide, and honest about what the design can tell). Otherwise each run is a unit. Not
    identified with fewer than 2 units at either size.
    """
    rows = laws[laws["variant"] == variant]
    a = units.unit_values(rows[rows["model_size"] == sizes[-1]], "k")
    b = units.unit_values(rows[rows["model_size"] == sizes[0]], "k")
    unit = a.label
    if a.n < 2 or b.n < 2:
        return Estimate(
            float(a.values.mean() - b.values.mean()) if a.n and b.n else float("nan"),
            identified=False,
            note=f"{a.n} and {b.n} {unit} at the largest and smallest size (need 2 each)",
        )
    d, lo, hi = units.welch_over_units(a, b, level=level)
    return Estimate(
        d,
        lo,
        hi,
        level=level,
        method=f"Welch t over {a.n} and {b.n} {unit}"
        + (
            f" (k averaged over each warm start's runs; {a.n_runs} and {b.n_runs} runs)"
            if a.clustered
            else ""
        ),
        n=int(min(a.n, b.n)),
    )


def heldout_comparison(laws: pd.DataFrame, half_runs: pd.DataFrame) -> pd.DataFrame:
    """The power law against the sigmoid on each run's later evaluations.

    Parameters
    ----------
    laws
        :func:`per_run_power_laws`.
    half_runs
        :func:`.halfruns.per_run_half_fits` on the same curves and split.

    Returns
    -------
    pandas.DataFrame
        One row per run with both errors: ``model_size, variant, seed,
        rmse_later_power, rmse_later_sigmoid, delta`` (power - sigmoid: > 0, the
        sigmoid predicts better) and ``sigmoid_wins``.
    """
    keys = ["model_size", "variant", "seed"]
    extra = ["warm_start"] if "warm_start" in laws else []
    m = laws[keys + extra + ["rmse_later_power"]].merge(
        half_runs[keys + ["rmse_later"]].rename(columns={"rmse_later": "rmse_later_sigmoid"}),
        on=keys,
    )
    m = m.dropna(subset=["rmse_later_power", "rmse_later_sigmoid"]).reset_index(drop=True)
    m["delta"] = m["rmse_later_power"] - m["rmse_later_sigmoid"]
    m["sigmoid_wins"] = m["delta"] > 0
    return m


def comparison_estimate(comp: pd.DataFrame, *, level: float = 0.95) -> Estimate:
    """The mean of the held-out RMSE difference (power law - sigmoid), Student t over
    units (each run is one comparison: its own fits on its own split; runs of one warm
    start are averaged first, :mod:`.units`)."""
    u = units.unit_values(comp, "delta")
    if u.n < 2:
        return Estimate(
            float("nan"), identified=False, note=f"{u.n} {u.label} with both held-out errors"
        )
    point, lo, hi = units.t_over_units(u, level=level)
    return Estimate(
        point, lo, hi, level=level, method=f"Student t over {u.describe()}", n=u.n, df=u.df
    )
