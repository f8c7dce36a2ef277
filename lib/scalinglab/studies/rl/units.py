"""The unit of an interval over RL runs: the base model (warm start), not the run.

The v3 design warms 2 base models a size (``warm_start``) and trains several RL seeds
from each (``rl_seed``). Runs from one warm start share their base model, and what the
claims are about (a model size trained with RL) varies between base models far more than
between RL seeds of one. On the committed runs, ``k`` of Tan's line at l is -0.19 on the
20 runs of warm start 0 and 0.43 on the 20 of warm start 1 (within-warm-start SDs 0.13
and 0.06). A Student t over runs takes those 40 runs as 40 draws of size l, and its
interval is far too narrow: it describes these two base models, not the size.

Here an interval over runs is taken over the **warm starts' means** (each the mean of its
runs' values): Student t on ``units - 1`` degrees of freedom, or Welch's t for a
difference of two sizes. With 2 warm starts a size that is 1 degree of freedom: as wide as
two base models allow, which is what the design can tell about a size. A pooled statistic
(over sizes) has one unit per (size, warm start) and is the mean of those units, each
size weighing by its number of units; the sizes are fixed strata, so its standard error
comes from the units' spread *within* their sizes (pooled) and has ``units - sizes``
degrees of freedom (Cochran, *Sampling Techniques*, ch. 5). A design without
``warm_start`` (each seed warmed on its own: ``small``, ``medium``) keeps the run as its
unit, with the same strata.

Hand-written because it is a two-stage mean and a t quantile. A mixed model
(statsmodels' ``MixedLM``) would pool the between-model variance over sizes under an
equal-variance assumption these data do not support (the between-warm-start spread of
``k`` ranges over 0.09-0.44 across sizes) and its degrees of freedom are approximate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats as sps

from scalinglab.stats.calibration import t_interval

#: The columns that name a base model: a warm start is one model of one size.
UNIT_KEYS = ("model_size", "warm_start")


@dataclass(frozen=True)
class UnitValues:
    """One value per unit of ``column``.

    Attributes
    ----------
    values
        ``(n_units,)``: each warm start's mean over its runs, or each run's value.
    strata
        ``(n_units,)``: each unit's model size (its stratum); None: one stratum.
    n_runs
        Runs behind them (finite values only).
    clustered
        Whether the units are warm starts (else runs).
    """

    values: np.ndarray
    n_runs: int
    clustered: bool
    strata: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of units."""
        return int(self.values.size)

    @property
    def label(self) -> str:
        """``"warm starts"`` or ``"runs"``."""
        return "warm starts" if self.clustered else "runs"

    @property
    def n_strata(self) -> int:
        """Number of sizes (strata) among the units."""
        return 1 if self.strata is None else int(np.unique(self.strata).size)

    def describe(self) -> str:
        """How the units were formed, for a method text."""
        h = self.n_strata
        strata = f" in {h} sizes" if h > 1 else ""
        df = f"; sizes as strata, df {self.n - h}" if h > 1 else ""
        if not self.clustered:
            return f"{self.n} runs{strata}" + (
                f" (sizes as strata, df {self.n - h})" if h > 1 else ""
            )
        return f"{self.n} warm starts{strata} (each the mean of its runs; {self.n_runs} runs{df})"


def unit_values(frame: pd.DataFrame, column: str) -> UnitValues:
    """The units' values of ``column`` in ``frame`` (one row per run, NaN rows dropped).

    With a ``warm_start`` column the unit is ``(model_size, warm_start)`` and its value
    the mean over its runs; otherwise each run is a unit. The units' strata are their
    model sizes (when ``frame`` has ``model_size``).

    Raises
    ------
    ValueError
        When some runs have a ``warm_start`` and others do not (runs of two designs).
    """
    rows = frame[np.isfinite(frame[column].to_numpy(float))]
    clustered = "warm_start" in rows and bool(rows["warm_start"].notna().any())
    if clustered and rows["warm_start"].isna().any():
        raise ValueError(
            f"{column}: {int(rows['warm_start'].isna().sum())} run(s) without a warm_start "
            "among runs that have one: one design's runs only"
        )
    strata = None
    if clustered and "model_size" in rows:
        means = rows.groupby(list(UNIT_KEYS), sort=True)[column].mean()
        values = means.to_numpy(float)
        strata = means.index.get_level_values("model_size").to_numpy()
    elif clustered:
        values = rows.groupby("warm_start", sort=True)[column].mean().to_numpy(float)
    else:
        values = rows[column].to_numpy(float)
        strata = rows["model_size"].to_numpy() if "model_size" in rows else None
    return UnitValues(values, int(len(rows)), clustered, strata)


def t_over_units(units: UnitValues, *, level: float) -> tuple[float, float, float]:
    """Mean of the units and its Student-t interval, sizes as strata.

    One stratum: the plain t interval on ``n - 1`` df. Several: the standard error of
    the mean from the units' deviations from their own size's mean (pooled), on
    ``n - sizes`` df. NaN ends without a degree of freedom.
    """
    x = units.values
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    df = x.size - units.n_strata
    if df < 1:
        return float(x.mean()), float("nan"), float("nan")
    if units.n_strata == 1:
        lo, hi = t_interval(x, level=level)
        return float(x.mean()), float(lo), float(hi)
    dev = x - pd.Series(x).groupby(units.strata).transform("mean").to_numpy(float)
    se = float(np.sqrt(np.sum(dev**2) / df / x.size))
    half = float(sps.t.ppf(0.5 + level / 2, df)) * se
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def welch_over_units(a: UnitValues, b: UnitValues, *, level: float) -> tuple[float, float, float]:
    """``mean(a) - mean(b)`` over units with Welch's t interval (Welch-Satterthwaite df).

    Both need at least 2 units; the caller checks.
    """
    x, y = a.values, b.values
    va, vb = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se = float(np.sqrt(va + vb))
    df = (va + vb) ** 2 / (va**2 / (x.size - 1) + vb**2 / (y.size - 1)) if se > 0 else 1.0
    half = float(sps.t.ppf(0.5 + level / 2, df)) * se
    d = float(x.mean() - y.mean())
    return d, d - half, d + half
