"""The RL study's findings before they are recorded: :class:`Named` (a name, an
:class:`~scalinglab.estimate.Estimate` and how it is shown), :func:`record_all`, the
interval methods the findings modules name, and :func:`estimate_of`, the one place an RL
estimate is made from a point and an interval.

The findings themselves live by concept: :mod:`.findings_runs` (how runs ended, the
plateau, the learning-rate stage), :mod:`.findings_fits` (the sigmoid, half compute,
k(N)), :mod:`.findings_phases` (the reward trajectory's phases),
:mod:`.findings_ablations` (ablations and data reuse), :mod:`.scope` (the stable runs
ScaleRL's fits use) and :mod:`.sound_findings`; :mod:`.findings` re-exports them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scalinglab.estimate import Estimate
from scalinglab.finding import Finding
from scalinglab.record import record
from scalinglab.stats.calibration import share_with_floor

#: Intervals that resample whole seeds of a size (sigmoid, half compute, k(N), phases).
#: A seed is one run; in the ``v3`` design the runs of a size are 2 warm starts x 2 RL
#: seeds, resampled as if independent (the ``n`` recorded is the number of runs, so the
#: report's coverage table states the percentile bootstrap's simulated coverage there).
OVER_SEEDS = "bootstrap over seeds (whole runs), percentile"
OVER_RUNS = "bootstrap over runs, percentile"
RUNS_WITHIN_SIZE = "stratified bootstrap over runs (within size), percentile"
#: Paired differences (variant - baseline, one per seed sharing a warm-up), their mean
#: per size, then the mean over sizes; seeds resampled within each size, percentile
#: (:func:`scalinglab.stats.group_means.mean_of_group_means`). The ``n`` recorded is the
#: fewest seeds of a size: the report's coverage table states this scheme's simulated
#: coverage there (``paired-bootstrap-sizes`` in :mod:`scalinglab.stats.method_coverage`).
PAIRED = (
    "paired percentile bootstrap over seeds within sizes "
    "(mean over sizes of each size's mean difference)"
)
#: The same paired differences with a Student-t interval, Welch-Satterthwaite degrees
#: of freedom over sizes (:func:`scalinglab.stats.group_means.mean_of_group_means_t`):
#: it covers at 3-5 seeds a size where the bootstrap above does not.
PAIRED_T = "paired Student t over seeds (Welch-Satterthwaite df over sizes)"
RLIABLE = "stratified bootstrap (rliable)"


@dataclass(frozen=True)
class Named:
    """One finding before it is recorded: its name, its estimate and how it is shown.

    Attributes
    ----------
    name
        The finding's stable name, e.g. ``"scalerl/s/A"``.
    estimate
        The number with its interval and method (a point without interval for counts).
    description, unit
        Shown in the findings table.
    headline
        Shown in the index and the forest plot (dropped by ``record`` when the estimate
        is not identified).
    """

    name: str
    estimate: Estimate
    description: str
    unit: str | None = None
    headline: bool = False


def record_all(items: Iterable[Named]) -> list[Finding]:
    """Record every item with :func:`scalinglab.record.record`, in order; a headline
    whose estimate has no interval on these data (too few runs) is recorded as an
    ordinary finding, with its note (a zero-width interval with its ``no_interval``
    reason, from :func:`checked`, is dropped and demoted by ``record`` itself)."""
    return [
        record(
            n.name,
            n.estimate,
            description=n.description,
            unit=n.unit,
            headline=n.headline and n.estimate.ci is not None,
        )
        for n in items
    ]


def ci_of(row: Any, col: str) -> tuple[float, float]:
    return float(row[f"{col}_lo"]), float(row[f"{col}_hi"])


def unstable_fit(
    point: float, ci: tuple[float, float], note: str | None
) -> tuple[tuple[float, float] | None, str | None]:
    """``(ci, note)`` of a pooled fit's number; a point outside its own resampled interval
    (the fit changes when whole runs are resampled: few runs, or runs that disagree) has
    no interval and is not identified, with the reason."""
    lo, hi = ci
    if not (np.isfinite(point) and np.isfinite(lo) and np.isfinite(hi)):
        return ci, note
    slack = 1e-6 * max(abs(lo), abs(hi), abs(point), 1e-300)
    if lo - slack <= point <= hi + slack:
        return ci, note
    why = (
        f"the point {point:.3g} lies outside its resampled interval [{lo:.3g}, {hi:.3g}]: "
        "the pooled fit is not stable when whole runs are resampled"
    )
    return None, "; ".join(x for x in (note, why) if x)


def estimate_of(
    point: float,
    ci: Sequence[float] | None,
    *,
    n: int | None = None,
    share_n: int | None = None,
    **kw: Any,
) -> Estimate:
    """An estimate with interval ``ci`` (or none) over ``n`` seeds or runs: the sample
    size at which the report states the method's coverage (None: not recorded; an
    interval then reads "sample size not recorded" in the coverage table). The interval
    then passes :func:`checked`; ``share_n`` as there."""
    lo, hi = (None, None) if ci is None else (float(ci[0]), float(ci[1]))
    est = Estimate(float(point), lo, hi, n=None if n is None or n < 1 else int(n), **kw)
    return checked(est, share_n=share_n)


def checked(est: Estimate, *, share_n: int | None = None) -> Estimate:
    """``est`` with its one degenerate-interval check.

    Ends that are not finite give no interval (the reason in the note). An interval of
    zero width (every resample gave the same value) is, for a share counted over
    ``share_n`` draws, widened to the Wilson interval of that share
    (:func:`~scalinglab.stats.calibration.share_with_floor`); any other is handed to
    :func:`scalinglab.record.record` with its reason (``no_interval``), which drops it
    there, as it does for every study (an interval within rounding of zero width is
    made exactly ``[point, point]`` first, so that ``record`` sees it as such).
    """
    if est.lo is None or est.hi is None:
        return est
    lo, hi = est.lo, est.hi
    if not (np.isfinite(lo) and np.isfinite(hi)):
        why = "no finite resampled interval"
        return est.replace(
            lo=None, hi=None, mc_se=None, note="; ".join(x for x in (est.note, why) if x)
        )
    if hi - lo > 1e-12 * max(1.0, abs(est.point)):
        return est
    if share_n and 0 <= est.point <= 1:
        return share_with_floor(est, n=int(share_n))
    why = "every resample gave the same value"
    return est.replace(lo=est.point, hi=est.point, mc_se=None, no_interval=why)


def reinterval(est: Estimate, **changes: Any) -> Estimate:
    """``est`` with ``changes`` (:meth:`~scalinglab.estimate.Estimate.replace`), then its
    degenerate-interval check (:func:`checked`)."""
    return checked(est.replace(**changes))
