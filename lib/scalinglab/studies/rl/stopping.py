"""When has a GRPO run plateaued? The stopping rule of the RL sweep's long runs.

A run evaluates its held-out pass rate every few steps. The rule (Nimmaturi et al.'s
"training beyond the plateau buys little", made operational) looks at the evaluations
in the last ``window_frac`` (20%) of the run's compute so far and fits a straight
line of pass rate against compute there (ordinary least squares):

- ``gain`` = slope x the window's compute span: what the last 20% of compute bought;
- ``se`` = the slope's standard error x the span (from the line's residuals, so it
  is the evaluations' own noise, common random numbers included).

The run has *plateaued* at an evaluation when, with at least ``min_steps`` steps and
``min_points`` evaluations in the window,

1. it has taken off: the window's mean pass rate exceeds R0 (the pass rate at step 0)
   by at least ``min_gain`` (a run still in its slow start is flat too, but is not on
   a plateau), and
2. the window's gain is within its noise: ``gain < max(z * se, tol)`` (``tol``, 0.02,
   is ScaleRL's noise floor on the asymptote: a gain below it is not worth the
   compute whatever its standard error).

It stops once that has held at ``patience`` consecutive evaluations (so one noisy
evaluation does not end a run), or at the step budget. The rule sees only the
evaluations made so far: it is a decision a practitioner could take during the run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class PlateauRule:
    """Parameters of the plateau stopping rule (see the module docstring).

    Attributes
    ----------
    min_steps
        No stop before this RL step.
    window_frac
        The window: evaluations within the last ``window_frac`` of compute so far.
    min_points
        Fewest evaluations in the window for a decision.
    min_gain
        The window's mean must exceed R0 by this much (the run has taken off).
    tol
        A gain below this is a plateau whatever its noise.
    z
        A gain below ``z`` standard errors is within noise.
    patience
        Consecutive plateaued evaluations before the run stops.
    """

    min_steps: int = 400
    window_frac: float = 0.2
    min_points: int = 4
    min_gain: float = 0.1
    tol: float = 0.02
    z: float = 2.0
    patience: int = 3

    def __post_init__(self) -> None:
        if not 0.0 < self.window_frac < 1.0:
            raise ValueError(f"PlateauRule: window_frac must be in (0, 1), got {self.window_frac}")
        if self.min_points < 3 or self.patience < 1 or self.min_steps < 0:
            raise ValueError("PlateauRule: min_points >= 3, patience >= 1, min_steps >= 0")

    def to_dict(self) -> dict:
        return asdict(self)


def window_gain(
    compute: np.ndarray, rate: np.ndarray, *, window_frac: float = 0.2
) -> tuple[float, float, int]:
    """Gain over the last ``window_frac`` of compute and its standard error.

    Parameters
    ----------
    compute, rate
        (E,) cumulative compute and pass rate of the evaluations so far, in order.
    window_frac
        Share of the latest compute that forms the window.

    Returns
    -------
    gain, se, n
        ``slope * span``, ``se(slope) * span`` and the number of evaluations in the
        window (``nan`` gain and se when fewer than 3).
    """
    c = np.asarray(compute, dtype=float)
    r = np.asarray(rate, dtype=float)
    if c.shape != r.shape or c.ndim != 1:
        raise ValueError("compute and rate must be 1-d arrays of the same length")
    if c.size == 0:
        return float("nan"), float("nan"), 0
    w = c >= (1.0 - window_frac) * c[-1]
    x, y = c[w], r[w]
    n = int(w.sum())
    span = float(x.max() - x.min()) if n else 0.0
    if n < 3 or span <= 0:
        return float("nan"), float("nan"), n
    xc = x - x.mean()
    sxx = float(xc @ xc)
    slope = float(xc @ (y - y.mean())) / sxx
    resid = y - y.mean() - slope * xc
    se_slope = float(np.sqrt(resid @ resid / (n - 2) / sxx))
    return slope * span, se_slope * span, n


def plateaued(steps: np.ndarray, compute: np.ndarray, rate: np.ndarray, rule: PlateauRule) -> bool:
    """Whether the latest evaluation meets the plateau criterion (before ``patience``).

    Parameters
    ----------
    steps, compute, rate
        (E,) step, cumulative compute and pass rate of the evaluations so far, the
        first at step 0 (R0).
    rule
        The rule's parameters.
    """
    steps = np.asarray(steps)
    if steps.size == 0 or steps[-1] < rule.min_steps:
        return False
    gain, se, n = window_gain(compute, rate, window_frac=rule.window_frac)
    if n < rule.min_points or not np.isfinite(gain):
        return False
    r = np.asarray(rate, dtype=float)
    w = np.asarray(compute, dtype=float) >= (1.0 - rule.window_frac) * float(compute[-1])
    if r[w].mean() - r[0] < rule.min_gain:
        return False
    return bool(gain < max(rule.z * se, rule.tol))


def should_stop(
    steps: np.ndarray, compute: np.ndarray, rate: np.ndarray, rule: PlateauRule
) -> bool:
    """True when the last ``rule.patience`` evaluations all met :func:`plateaued`."""
    e = len(steps)
    if e < rule.patience:
        return False
    return all(
        plateaued(steps[:k], compute[:k], rate[:k], rule)
        for k in range(e - rule.patience + 1, e + 1)
    )


def run_outcomes(curves: pd.DataFrame, *, drop: float = 0.1) -> pd.DataFrame:
    """How each run ended: its peak, its last evaluation, and whether it fell back.

    The plateau rule stops a run whose last-window gain is within its noise; a
    *falling* window passes that test too, so a run that is losing what it learned
    (or collapsing) is stopped as if it had plateaued. This table makes that visible.

    Parameters
    ----------
    curves
        One row per evaluation: ``model_size, variant, seed, step, pass_rate``
        (the step-0 row is the run's R0).
    drop
        A last evaluation this far below the run's peak counts as ``declined``
        (0.1: five times ScaleRL's 0.02 noise floor, about nine standard errors of
        an evaluation on 2,048 samples).

    Returns
    -------
    pandas.DataFrame
        One row per run: ``model_size, variant, seed, last_step, R0, peak,
        peak_step, final, declined`` (final < peak - ``drop``) and ``collapsed``
        (final at or below R0: the run lost everything GRPO gave it).
    """
    rows = []
    for (size, variant, seed), g in curves.groupby(["model_size", "variant", "seed"], sort=False):
        g = g.sort_values("step")
        rate = g["pass_rate"].to_numpy(float)
        k = int(np.nanargmax(rate))
        rows.append(
            {
                "model_size": size,
                "variant": variant,
                "seed": seed,
                "last_step": int(g["step"].iloc[-1]),
                "R0": float(rate[0]),
                "peak": float(rate[k]),
                "peak_step": int(g["step"].iloc[k]),
                "final": float(rate[-1]),
                "declined": bool(rate[-1] < rate[k] - drop),
                "collapsed": bool(rate[-1] <= rate[0]),
            }
        )
    return pd.DataFrame(rows)
