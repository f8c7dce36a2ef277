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

The ``medium`` sweep's first run used the rule to *stop* runs and it misfired: the
test passes on a noisy rise and on a decline alike, so runs were stopped while still
climbing or while collapsing. The sweep now trains every run to its full step budget
and applies the rule afterwards (:func:`plateau_onset`, :func:`run_outcomes` with a
``rule``): the step at which it would have stopped the run, and what the run gained
after that step, which is Nimmaturi et al.'s "training beyond the plateau buys
little" tested on the same runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from scalinglab.studies.rl import units


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


@dataclass(frozen=True)
class EquivalenceRule(PlateauRule):
    """The plateau as an equivalence test: the window's gain is shown to be small.

    :class:`PlateauRule` calls a window flat when its gain is *not significantly*
    positive (``gain < max(z se, tol)``), which a noisy rise over 4-5 evaluations
    passes. Here the one-sided upper confidence bound of the gain,
    ``gain + t_{level, n-2} se`` (Student t on the window's ``n`` evaluations), must lie
    below ``tol``: the run has shown that the last ``window_frac`` of its compute bought
    less than ScaleRL's noise floor. Only for judging finished runs (the sweeps' configs
    keep :class:`PlateauRule`).

    Attributes
    ----------
    level
        One-sided confidence level of the gain's upper bound.
    """

    level: float = 0.95

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.5 < self.level < 1.0:
            raise ValueError(f"EquivalenceRule: level must be in (0.5, 1), got {self.level}")

    def flat(self, gain: float, se: float, n: int) -> bool:
        """Whether a window's ``gain`` (standard error ``se``, ``n`` evaluations) is
        shown to be below ``tol``."""
        return bool(gain + float(sps.t.ppf(self.level, n - 2)) * se < self.tol)


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
    if isinstance(rule, EquivalenceRule):
        return rule.flat(gain, se, n)
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


def plateau_onset(
    steps: np.ndarray, compute: np.ndarray, rate: np.ndarray, rule: PlateauRule
) -> int:
    """The evaluation at which ``rule`` would have stopped the run, judged afterwards.

    Parameters
    ----------
    steps, compute, rate
        (E,) step, cumulative compute and pass rate of a whole run's evaluations, the
        first at step 0.
    rule
        The plateau rule.

    Returns
    -------
    int
        Index of the first evaluation at which :func:`should_stop` holds on the
        evaluations up to it (what a run stopped by the rule would have seen), or -1
        when the rule never fires.
    """
    steps, compute, rate = (np.asarray(a) for a in (steps, compute, rate))
    streak = 0  # consecutive plateaued evaluations: each prefix is judged once
    for k in range(1, len(steps) + 1):
        streak = streak + 1 if plateaued(steps[:k], compute[:k], rate[:k], rule) else 0
        if streak >= rule.patience:
            return k - 1
    return -1


def run_outcomes(
    curves: pd.DataFrame,
    *,
    drop: float = 0.1,
    rule: PlateauRule | None = None,
    last: int = 3,
    hold_out: int = 1,
) -> pd.DataFrame:
    """How each run ended: its peak, its last evaluation, and whether it fell back.

    The plateau rule stops a run whose last-window gain is within its noise; a
    *falling* window passes that test too, so a run that is losing what it learned
    (or collapsing) is stopped as if it had plateaued. This table makes that visible,
    and tells a collapse (the run rose, then fell back to its R0 or below) from a run
    that never took off (still in its slow start at the end).

    Parameters
    ----------
    curves
        One row per evaluation: ``model_size, variant, seed, step, pass_rate``
        (the step-0 row is the run's R0).
    drop
        A last evaluation this far below the run's peak counts as ``declined``
        (0.1: five times ScaleRL's 0.02 noise floor, about nine standard errors of
        an evaluation on 2,048 samples).
    rule
        With a rule, the plateau judged afterwards (:func:`plateau_onset`) is added;
        ``curves`` then needs a ``compute`` column.
    last
        Evaluations averaged for the rate at the plateau's onset and at the run's end
        (one evaluation is noisy).
    hold_out
        The run's last evaluations left out of ``end_mean``: the last one decides
        ``unstable`` (the scope rule, :data:`.scope.JUDGED`), so a stable run's last
        evaluation is high by selection and would inflate the gain.

    Returns
    -------
    pandas.DataFrame
        One row per run: ``model_size, variant, seed, last_step, R0, peak,
        peak_step, final, declined`` (final < peak - ``drop``), ``unstable`` (the
        same: a run that lost more than ``drop`` from its peak is outside the scope of
        ScaleRL's and Nimmaturi et al.'s laws, reported apart), ``took_off`` (peak at
        least ``drop`` above R0) and ``collapsed`` (final below R0 / 2, or at or below
        R0 after taking off: the run lost everything GRPO gave it). With ``rule``:
        ``plateau_step`` (NaN when the rule never fires; the rule's ``min_gain`` keeps
        a slow start from reading as a plateau), ``at_plateau`` and ``end_mean`` (means of the ``last`` evaluations up
        to the onset and of the ``last`` before the ``hold_out`` held out) and
        ``gain_after_plateau`` (their difference: what training past the plateau
        bought; NaN without a plateau, for an unstable run, or when the run ended
        within ``last + hold_out`` evaluations of it, as a run the rule stopped does).
    """
    rows = []
    for (size, variant, seed), g in curves.groupby(["model_size", "variant", "seed"], sort=False):
        g = g.sort_values("step")
        rate = g["pass_rate"].to_numpy(float)
        k = int(np.nanargmax(rate))
        row = {
            "model_size": size,
            "variant": variant,
            "seed": seed,
            **({"warm_start": g["warm_start"].iloc[0]} if "warm_start" in g else {}),
            "last_step": int(g["step"].iloc[-1]),
            "R0": float(rate[0]),
            "peak": float(rate[k]),
            "peak_step": int(g["step"].iloc[k]),
            "final": float(rate[-1]),
            "declined": bool(rate[-1] < rate[k] - drop),
            "unstable": bool(rate[-1] < rate[k] - drop),
            "took_off": bool(rate[k] >= rate[0] + drop),
            "collapsed": bool(
                rate[-1] < rate[0] / 2 or (rate[-1] <= rate[0] and rate[k] >= rate[0] + drop)
            ),
        }
        if rule is not None:
            steps = g["step"].to_numpy()
            onset = plateau_onset(steps, g["compute"].to_numpy(float), rate, rule)
            kept = rate[: len(rate) - hold_out] if hold_out else rate
            end = float(np.mean(kept[-last:]))
            # a run that ended within `last` evaluations of its onset (one the rule
            # stopped) shows nothing of what came after it
            # an unstable run (declined) is out of the plateau claim's scope: its fall
            # is reported as such, not as what training past a plateau bought
            past = 0 <= onset < len(kept) - last and not row["unstable"]
            at = float(np.mean(rate[max(0, onset + 1 - last) : onset + 1])) if past else np.nan
            row |= {
                "plateau_step": float(steps[onset]) if onset >= 0 else np.nan,
                "at_plateau": at,
                "end_mean": end,
                "gain_after_plateau": end - at,
            }
        rows.append(row)
    return pd.DataFrame(rows)


def gain_after_plateau(outcomes: pd.DataFrame, *, level: float = 0.95) -> dict:
    """Mean pass rate gained after the plateau's onset, with a Student-t interval over runs.

    The runs are few (those whose plateau is shown and that continued past it), so the
    interval is Student t (a percentile bootstrap of a mean of 5 values covers about 85%
    at a nominal 95%: :mod:`scalinglab.stats.calibration`).

    Parameters
    ----------
    outcomes
        :func:`run_outcomes` with a ``rule`` (one row per run).
    level
        Confidence level of the interval.

    Returns
    -------
    dict
        ``mean``, ``ci`` (lo, hi), ``n_runs`` (runs with a gain: a plateau and
        evaluations after it), ``n_plateau`` (stable runs where the rule fired),
        ``n_unstable`` (runs more than ``drop`` below their peak at the end: reported
        apart, never counted as plateaus), ``n_total``
        and ``share_gaining`` (runs that gained more than 0.02 after their onset: the
        rule would have stopped them too early). ``mean`` and ``ci`` are NaN with
        fewer than 3 runs. With a ``warm_start`` column the interval's unit is the
        base model: the gains are averaged within each (size, warm start) first and
        ``mean`` and its t interval are taken over those means (``n_units``; runs from
        one base model are not independent draws).
    """
    g = outcomes["gain_after_plateau"].dropna().to_numpy(float)
    unstable = (
        outcomes["unstable"].astype(bool)
        if "unstable" in outcomes
        else pd.Series(False, index=outcomes.index)
    )
    out: dict[str, Any] = {
        "n_runs": int(g.size),
        "n_plateau": int((outcomes["plateau_step"].notna() & ~unstable).sum()),
        "n_unstable": int(unstable.sum()),
        "n_total": len(outcomes),
        "share_gaining": float(np.mean(g > 0.02)) if g.size else float("nan"),
    }
    u = units.unit_values(outcomes.dropna(subset=["gain_after_plateau"]), "gain_after_plateau")
    out["n_units"], out["clustered"], out["units"] = u.n, u.clustered, u.describe()
    out["df"] = u.df
    if g.size < 3 or u.n - u.n_strata < 2:
        return out | {"mean": float("nan"), "ci": (float("nan"), float("nan"))}
    mean, lo, hi = units.t_over_units(u, level=level)
    return out | {"mean": mean, "ci": (lo, hi)}
