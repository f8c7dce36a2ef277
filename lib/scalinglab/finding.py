"""A finding: a named number with its interval and how it was made, and the checks its
numbers pass.

:class:`Finding` is what :func:`scalinglab.record.record` keeps for each finding and
``results.json`` stores (:meth:`Finding.to_json`: strict JSON, a non-finite number as
``null`` with a note saying why). Before it is kept, its numbers pass the checks here,
each raising with the finding's name: every number is a number (:func:`as_float`); its
point lies inside its interval (:func:`check_inside`); a zero-width interval is refused
with a :class:`ZeroWidthInterval` error unless a reason for having none is stated
(:func:`zero_width`); its degrees of freedom, room left to a bound and support are well
formed (:func:`checked_df`, :func:`checked_room`, :func:`checked_support`).
:func:`t_df` gives the degrees of freedom of a Student-t interval whose producer did not
state them. The rules a report's findings obey together (headlines, identification)
are :mod:`scalinglab.record`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from scalinglab.findings_view import findings_html
from scalinglab.textfmt import json_safe


@dataclass(frozen=True)
class Finding:
    """One recorded finding: a named number with its interval and how it was made."""

    name: str
    point: float
    ci: tuple[float, float] | None = None
    level: float | None = None
    method: str | None = None
    resamples: int | None = None
    unit: str | None = None
    description: str | None = None
    headline: bool = False
    identified: bool = True
    note: str | None = None
    bound: float | None = None
    side: str | None = None
    #: Monte Carlo standard errors of the interval's ends (resampled intervals).
    mc_se: tuple[float, float] | None = None
    #: ``(lo, hi)`` the finding can take by construction (a rule none could fail is refused).
    support: tuple[float, float] | None = None
    #: Sample size the interval rests on (seeds, runs, draws): where its coverage is read.
    n: int | None = None
    #: Room left between a bounded quantity's level and its bound (the largest effect it
    #: could still show): a claim asking more reads "not identified (saturated)".
    room: float | None = None
    #: Degrees of freedom of a Student-t interval (None: read as normal); a claim's
    #: p-value for Holm's correction is read on this t distribution.
    df: float | None = None

    def to_json(self) -> dict:
        """The finding as strict JSON: a non-finite number becomes ``None`` and ``note``
        says why (NaN points and intervals stay NaN in memory)."""
        d = asdict(self)
        d["ci"] = None if self.ci is None else [self.ci[0], self.ci[1]]
        for key in ("mc_se", "support"):
            v = getattr(self, key)
            d[key] = None if v is None else [x if math.isfinite(x) else None for x in v]
        bad = []
        if not math.isfinite(self.point):
            bad.append("point")
        if self.ci is not None and not all(math.isfinite(c) for c in self.ci):
            bad.append("interval")
        if bad:
            why = f"{' and '.join(bad)} undefined on these data (not a finite number; null in JSON)"
            d["note"] = f"{self.note}; {why}" if self.note else why
        return json_safe(d)

    def _repr_html_(self) -> str:
        return findings_html([self])


#: Words of a method text that name a Student-t (or Welch) interval.
_T_METHODS = ("student t", "student-t", "welch")


def t_df(method: str | None, n: int | None) -> float | None:
    """The degrees of freedom to read a t interval on when its producer did not state
    them: ``n - 1`` for a method text naming Student t or Welch with a sample size
    ``n >= 2`` (exact for a one-sample t over ``n`` units; for Welch, with ``n`` the
    smaller group, the least Welch-Satterthwaite df can be, so conservative); None
    otherwise (the interval is read as normal)."""
    if method is None or n is None or int(n) < 2:
        return None
    text = method.lower()
    return float(int(n) - 1) if any(w in text for w in _T_METHODS) else None


def checked_df(name: str, df: object) -> float | None:
    """``df`` as a float (None stays None); raise unless it is a number above 0."""
    if df is None:
        return None
    v = as_float(df, "df", name)
    if not v > 0:
        raise ValueError(
            f"record({name!r}): df must be > 0 (a t interval's degrees of freedom), got {v}"
        )
    return v


def as_float(x: object, what: str, name: str) -> float:
    """``x`` as a float; a ``TypeError`` naming the finding and the field otherwise."""
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise TypeError(f"record({name!r}): {what} must be a number, got {x!r}") from exc
    return v


def check_inside(name: str, point: float, lo: float, hi: float) -> None:
    """Raise when ``point`` lies outside ``[lo, hi]``.

    Beyond round-off and optimizer tolerance: a relative 1e-6 of the values (a
    refit at a bound may stop ~1e-7 short of where the point fit did).
    """
    if any(math.isnan(v) for v in (point, lo, hi)):
        return
    slack = 1e-6 * max(abs(lo), abs(hi), abs(point), 1e-300)
    if point < lo - slack or point > hi + slack:
        raise ValueError(
            f"record({name!r}): point {point!r} lies outside its interval [{lo!r}, {hi!r}]. "
            "A percentile interval that excludes its own point estimate means the statistic "
            "is biased or selects (a max over noisy cells): re-select inside each resample, "
            "or report a statistic whose interval covers it."
        )


def checked_room(name: str, room: float) -> float:
    """``room`` (left to a bound) as a float; raise unless it is a number >= 0."""
    r = as_float(room, "room", name)
    if not r >= 0:
        raise ValueError(f"record({name!r}): room (left to the bound) must be >= 0, got {r}")
    return r


def checked_support(name: str, support: Sequence[float]) -> tuple[float, float]:
    """``support`` as ``(lo, hi)`` floats; raise unless it is two numbers with lo <= hi."""
    if len(support) != 2:
        raise ValueError(f"record({name!r}): support must be (lo, hi), got {support!r}")
    lo, hi = (as_float(v, "support", name) for v in support)
    if not lo <= hi:
        raise ValueError(f"record({name!r}): support lower end {lo} exceeds upper end {hi}")
    return lo, hi


def zero_width(
    name: str, lo: float, hi: float, method: str | None, reason: str | None, *, identified: bool
) -> str | None:
    """The note of a zero-width interval dropped for a stated reason, None for an interval
    of positive width; raise :class:`ZeroWidthInterval` when no reason is stated.

    A statistic with sampling error is never pinned exactly: every resample gave the same
    value, so ``[x, x]`` does not cover. Either the method is wrong for these data (use
    one that covers at this sample size) or there is a reason the number has no interval
    (a grid value every resample lands on; a quantity at its bound), which the caller
    states (``no_interval``); a not-identified estimate is pinned by its bound, which is
    its reason.
    """
    if math.isnan(lo) or math.isnan(hi) or lo != hi:
        return None
    head = f"interval [{lo:g}, {hi:g}] refused: zero width"
    if reason is not None and str(reason).strip():
        return f"{head}, so none is shown: {reason}"
    if not identified:
        return f"{head}, so none is shown: not identified (pinned by its bound)"
    raise ZeroWidthInterval(
        f"record({name!r}): {head} (method: {method or 'not stated'}): every resample gave "
        "the same value, so it does not cover. Use a method that covers at this sample size "
        "(Wilson or Clopper-Pearson for a share at 0 or n successes, "
        "scalinglab.stats.calibration.share_with_floor; a Student t interval for a mean over "
        "seeds), or state why this number has no interval: "
        "record(..., no_interval='reason') or Estimate(..., no_interval='reason')"
    )


class ZeroWidthInterval(ValueError):
    """A finding's interval had zero width and the caller stated no reason for it."""
