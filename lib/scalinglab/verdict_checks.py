"""Checks a verdict must pass before the ledger signs it.

Four rules, each applied by :func:`scalinglab.claims.decide` (this module is pure: it
imports nothing from the package and works on plain numbers):

**Falsifiable rules** (:func:`check_falsifiable`). A finding may declare its *support*:
the values it can take by construction (a pass@k coverage gain is ``>= 0``; the slope of
a quantity that never decreases is ``>= 0``; a share lies in ``[0, 1]``). A rule is
refused (:class:`UnfalsifiableRule`) when the values that would contradict it, within
that support, have no width: "gain > 0" on a gain that is ``>= 0`` could only be
contradicted by a gain of exactly 0, so any data "reproduce" it. The claim must state
the effect that would contradict it instead: a minimum meaningful effect ("gain >
0.02") or an equivalence band.

**Room left to a bound** (:func:`saturation`). A bounded quantity (a share or a
probability in ``[0, 1]``, a coverage that cannot pass 1, any stated physical bound) can
only move as far as its bound: a finding records that room (``room``, in its own units:
the largest effect it could still show). When the claim's minimum meaningful effect (its
threshold: ``greater`` than ``v > 0``, or ``less`` than ``v < 0``) exceeds the room, the
data cannot test it whatever the system does: the verdict is ``not identified
(saturated: room X < minimum effect Y)``, never a contradiction.

**Monte Carlo error** (:func:`mc_guard`). A bootstrap bound is itself an estimate: with
``R`` resamples its Monte Carlo standard error is recorded next to it (``mc_se``). A
verdict whose deciding bound lies within :data:`MC_SE_MULTIPLE` Monte Carlo standard
errors of the rule's threshold would flip with the resampling seed; it reads
``inconclusive (Monte Carlo)``. So does an undecided verdict with a bound that close to
a threshold it would decide by (another seed could decide it; :func:`deciding_bounds`
with ``"inconclusive"`` names those ends), so that the verdict is the same under every
resampling seed. A claim with several findings reads it only when some seed could decide
the claim (:func:`reachable`): every finding could reproduce, or one finding's
contradiction, its end pushed out by its Monte Carlo error (:func:`shrunk`), would
survive Holm's correction. Otherwise (one finding admits both sides far from every
threshold; a near exclusion among several findings that Holm would not keep) the claim is
plainly ``inconclusive`` under any seed, the near finding's reason still given.

**Multiplicity** (:func:`holm_contradictions`). A claim decided by several findings (one
per size, one per pair) *reproduces* only when every interval lies on the claim's side
(an intersection-union test: no correction needed). It is *contradicted* when some
finding excludes it, which is a union of tests: the p-values of the excluding findings
are Holm-adjusted over all of the claim's findings (``statsmodels`` ``multipletests``),
and only those still below ``alpha = 1 - level`` contradict. A p-value is read off the
interval on the distribution it was built from (``se`` from the half-width on the
threshold's side, ``|point - threshold| / se`` read on Student t with the finding's
``df`` for a t interval, on the normal otherwise; two-sided), so a lone interval that
just excludes the threshold has ``p`` about ``alpha``. The distribution matters only for
Holm's smaller thresholds: at 3 seeds (2 df) a distance of 10 standard errors has
p = 0.0099 on t and 2e-23 on the normal.

A *family* of claims (one claim per size or per pair, each with one finding:
:func:`scalinglab.claims.decide_all`) is corrected in both directions, one Holm
correction each: the claims that exclude their claim by their :func:`contradiction_p`,
those that reproduce it by their :func:`support_p`; a decision whose adjusted p exceeds
``alpha`` reads ``inconclusive``. So "holds at w48 and w64" carries the same family-wise
error rate as "differs at w48".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

#: A deciding bound this many Monte Carlo standard errors or closer to its threshold
#: gives ``inconclusive (Monte Carlo)``.
MC_SE_MULTIPLE = 2.0
MC_INCONCLUSIVE = "inconclusive (Monte Carlo)"


class UnfalsifiableRule(ValueError):
    """A claim's rule that no possible value of its finding could fail."""


def contradicting_set(expect: str, region: tuple[float, float]) -> list[tuple[float, float]]:
    """The values of the effect that contradict a rule, as closed intervals.

    Parameters
    ----------
    expect
        ``"greater"``, ``"less"``, ``"equal"`` or ``"between"``.
    region
        The claimed values ``(a, b)`` (:meth:`scalinglab.claims.Claim.region`).
    """
    a, b = region
    if expect == "greater":
        return [(-math.inf, a)]
    if expect == "less":
        return [(b, math.inf)]
    return [(-math.inf, a), (b, math.inf)]


def check_falsifiable(
    *, where: str, rule: str, expect: str, region: tuple[float, float], support: Sequence[float]
) -> None:
    """Refuse a rule that no value in ``support`` could fail.

    Parameters
    ----------
    where
        Who asks (named in the error), e.g. ``"claim('LLM-5') on majority/s/cov_gain"``.
    rule
        The rule in words (named in the error).
    expect, region
        The rule (see :func:`contradicting_set`).
    support
        ``(lo, hi)``: the values the finding can take by construction (``inf`` for none).

    Raises
    ------
    UnfalsifiableRule
        When the contradicting values inside ``support`` are empty or a single point.
    """
    s_lo, s_hi = (float(v) for v in support)
    if not s_lo <= s_hi:
        raise ValueError(f"{where}: support (lo, hi) has lo > hi: {tuple(support)!r}")
    widths = [min(hi, s_hi) - max(lo, s_lo) for lo, hi in contradicting_set(expect, region)]
    if max(widths) > 0:
        return
    raise UnfalsifiableRule(
        f"{where}: the rule '{rule}' cannot fail: the finding only takes values in "
        f"[{s_lo:g}, {s_hi:g}] by construction, and no value of positive width there "
        "would contradict the rule. State the effect that would contradict it: a minimum "
        "meaningful effect (e.g. 'greater' than 0.02 rather than 0) or an equivalence band."
    )


def minimum_effect(expect: str, region: tuple[float, float]) -> float | None:
    """The smallest effect a rule calls meaningful, as a magnitude: ``v`` for
    ``greater`` than ``v > 0``, ``-v`` for ``less`` than ``v < 0``; None for other rules
    (an equivalence band, a threshold on the other side of 0), which ask for no effect."""
    a, b = region
    if expect == "greater" and a > 0:
        return float(a)
    if expect == "less" and b < 0:
        return float(-b)
    return None


def saturation(expect: str, region: tuple[float, float], room: float | None) -> str | None:
    """Why a bounded finding cannot test a rule, or None.

    Parameters
    ----------
    expect, region
        The rule (:meth:`scalinglab.claims.Claim.region`).
    room
        The finding's room left between its level and its bound, in its units (``>= 0``;
        None: unbounded, never saturated). For an equivalence band (``"equal"``) it is
        the largest departure from the claim's value the finding could still show, and
        the band's half-width is what it must exceed (a finding pinned within the band
        by its bound cannot contradict the claim).

    Returns
    -------
    str or None
        ``"saturated: room X < minimum effect Y"`` when the room is smaller than the
        rule's minimum meaningful effect (:func:`minimum_effect`); None otherwise.
    """
    a, b = region
    need = minimum_effect(expect, region)
    what = "minimum effect"
    if expect == "equal" and math.isfinite(a) and math.isfinite(b):
        # an equivalence band: only a departure from the claim's value by more than the
        # band's half-width contradicts it, so a finding that can depart by less (its
        # room, read from the claim's value) cannot fail it
        need, what = (b - a) / 2, "the band's half-width"
    if room is None or need is None:
        return None
    r = float(room)
    if not r >= 0:
        raise ValueError(f"room must be >= 0 (left to the bound), got {room!r}")
    if r < need:
        return f"saturated: room {r:.3g} < {what} {need:g}"
    return None


def deciding_bounds(
    expect: str, region: tuple[float, float], ci: Sequence[float], verdict: str
) -> list[tuple[int, float]]:
    """Which interval ends decide a verdict, each with the threshold it is compared to.

    Parameters
    ----------
    verdict
        ``"reproduces"`` or ``"contradicts"``: the ends that decided it;
        ``"inconclusive"``: the ends that *would* decide it either way (another
        resampling seed moving one of them past its threshold decides the claim).

    Returns
    -------
    list of (end, threshold)
        ``end`` 0 for ``lo``, 1 for ``hi``, without repeats; empty for verdicts no bound
        decides.
    """
    a, b = region
    hi = float(ci[1])
    if verdict == "reproduces":
        if expect == "greater":
            return [(0, a)]
        if expect == "less":
            return [(1, b)]
        return [(0, a), (1, b)]
    if verdict == "contradicts":
        if expect == "greater":
            return [(1, a)]
        if expect == "less":
            return [(0, b)]
        return [(1, a)] if hi < a else [(0, b)]
    if verdict == "inconclusive":
        # a band is contradicted past either edge, whichever side the interval is on now
        against = (
            deciding_bounds(expect, region, ci, "contradicts")
            if expect in ("greater", "less")
            else [(1, a), (0, b)]
        )
        return list(dict.fromkeys(deciding_bounds(expect, region, ci, "reproduces") + against))
    return []


def sides(expect: str, region: tuple[float, float], lo: float, hi: float) -> tuple[bool, bool]:
    """Whether the interval ``[lo, hi]`` lies inside the claimed region, and whether it
    excludes it: the one rule behind a reproduction and a contradiction.

    ``greater``: inside when ``lo > a``, outside when ``hi <= a``; ``less``: inside when
    ``hi < b``, outside when ``lo >= b``; a band ``[a, b]``: inside when the interval is
    within it, outside when it lies wholly past either edge. Both False: the interval
    admits both sides.
    """
    a, b = region
    if expect == "greater":
        return lo > a, hi <= a
    if expect == "less":
        return hi < b, lo >= b
    return (lo >= a and hi <= b), (hi < a or lo > b)


def _errors(mc_se: Sequence[float | None] | None) -> list[float | None]:
    """Monte Carlo errors of ``(lo, hi)``, None for an end without a finite one."""
    return [
        float(x) if x is not None and math.isfinite(float(x)) else None
        for x in (mc_se or (None, None))
    ]


def shrunk(
    ci: Sequence[float], mc_se: Sequence[float | None] | None, *, multiple: float = MC_SE_MULTIPLE
) -> tuple[float, float]:
    """The interval with each end moved ``multiple`` Monte Carlo standard errors inwards
    (an end without one stays put): the ends another resampling seed plausibly gives
    that lie deepest on either side of a threshold between them. It reproduces when some
    seed could reproduce, excludes when some seed could exclude (:func:`reachable`), and
    its contradiction p-value is the smallest another seed plausibly gives
    (:func:`contradiction_p` reads only the end on the threshold's side)."""
    se_lo, se_hi = _errors(mc_se)
    return (float(ci[0]) + multiple * (se_lo or 0.0), float(ci[1]) - multiple * (se_hi or 0.0))


def mc_guard(
    expect: str,
    region: tuple[float, float],
    ci: Sequence[float],
    mc_se: Sequence[float | None] | None,
    verdict: str,
    *,
    multiple: float = MC_SE_MULTIPLE,
) -> str | None:
    """Why a verdict is within Monte Carlo error of flipping, or None.

    Parameters
    ----------
    ci
        ``(lo, hi)``.
    mc_se
        Monte Carlo standard errors of ``(lo, hi)`` (None: not a resampled bound).
    verdict
        ``"reproduces"``, ``"contradicts"`` or ``"inconclusive"``: the ends
        :func:`deciding_bounds` names for it are checked; others pass through: None.
    """
    if not mc_se:
        return None
    errors = _errors(mc_se)
    for end, threshold in deciding_bounds(expect, region, ci, verdict):
        se = errors[end]
        if se is None or not math.isfinite(threshold):
            continue
        gap = abs(float(ci[end]) - threshold)
        if gap <= multiple * se:
            which = "lower" if end == 0 else "upper"
            return (
                f"its {which} bound {float(ci[end]):.4g} lies {gap:.2g} from the threshold "
                f"{threshold:.4g}, within {multiple:g} Monte Carlo standard errors "
                f"({se:.2g} each): another resampling seed could "
                + ("decide it" if verdict == "inconclusive" else "flip it")
            )
    return None


def reachable(
    expect: str,
    region: tuple[float, float],
    ci: Sequence[float],
    mc_se: Sequence[float | None] | None,
    *,
    multiple: float = MC_SE_MULTIPLE,
) -> set[str]:
    """The decided verdicts a finding's interval gives under another resampling seed.

    Each end may move by up to ``multiple`` of its Monte Carlo standard errors, either
    way (an end without one stays put): :func:`sides` of the :func:`shrunk` interval.

    Returns
    -------
    set of str
        A subset of ``{"reproduces", "contradicts"}``; empty for an interval that admits
        both sides of the rule however its ends move within their Monte Carlo error.
    """
    inside, outside = sides(expect, region, *shrunk(ci, mc_se, multiple=multiple))
    return {v for v, ok in (("reproduces", inside), ("contradicts", outside)) if ok}


def _reference(df: float | None) -> Any:
    """The distribution an interval's ends are quantiles of: Student t on ``df`` degrees
    of freedom, or the normal when ``df`` is None (a bootstrap over many units)."""
    return norm if df is None else student_t(float(df))


def contradiction_p(
    expect: str,
    region: tuple[float, float],
    point: float,
    ci: Sequence[float],
    level: float,
    *,
    df: float | None = None,
) -> float:
    """Two-sided p-value of "the effect lies outside the claimed region", from the
    interval (1.0 when the point is inside the region).

    ``se`` is the half-width on the threshold's side divided by the reference
    distribution's ``(1+level)/2`` quantile, and the p-value is read on the same
    distribution: Student t on ``df`` degrees of freedom for a t interval (at 3 seeds the
    normal's tails would make a p-value far too small for Holm's smaller thresholds),
    the normal when ``df`` is None. At the interval's end the p-value is ``1 - level``
    either way. A zero half-width gives 0 (a point excluded with no spread).
    """
    a, b = region
    ref = _reference(df)
    z = float(ref.ppf(0.5 + level / 2))
    lo, hi = float(ci[0]), float(ci[1])
    if expect == "greater" or (expect in ("equal", "between") and point < a):
        dist, half = a - point, hi - point
    elif expect == "less" or (expect in ("equal", "between") and point > b):
        dist, half = point - b, point - lo
    else:
        return 1.0
    if dist < 0:
        return 1.0
    if half <= 0:
        return 0.0
    return float(2 * ref.sf(dist / (half / z)))


def support_p(
    expect: str,
    region: tuple[float, float],
    point: float,
    ci: Sequence[float],
    level: float,
    *,
    df: float | None = None,
) -> float:
    """Two-sided p-value of "the effect lies inside the claimed region" being wrong: the
    mirror of :func:`contradiction_p`, on the same reference distribution (Student t on
    ``df``, else normal; 1.0 when the point is outside the region). For a region with two
    finite ends (``equal``, ``between``) both ends must be excluded: the larger of the
    two p-values. A zero half-width gives 0.
    """
    a, b = region
    ref = _reference(df)
    z = float(ref.ppf(0.5 + level / 2))
    lo, hi = float(ci[0]), float(ci[1])
    if not a <= point <= b:
        return 1.0

    def one(dist: float, half: float) -> float:
        if half <= 0:
            return 0.0 if dist > 0 else 1.0
        return float(min(1.0, 2 * ref.sf(dist / (half / z))))

    ps = []
    if math.isfinite(a):
        ps.append(one(point - a, point - lo))
    if math.isfinite(b):
        ps.append(one(b - point, hi - point))
    return max(ps) if ps else 1.0


def holm_contradictions(pvalues: Sequence[float], *, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Which of a claim's findings still contradict it after Holm's correction.

    Parameters
    ----------
    pvalues
        Shape ``(k,)``: one contradiction p-value per deciding finding
        (:func:`contradiction_p`; 1.0 for a finding that does not exclude the claim).
    alpha
        Family-wise error rate (``1 - level``).

    Returns
    -------
    (reject, adjusted)
        Boolean array ``(k,)`` and the Holm-adjusted p-values ``(k,)``.
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, dtype=float)
    reject, adjusted, _, _ = multipletests(p, alpha=alpha, method="holm")
    return np.asarray(reject, dtype=bool), np.asarray(adjusted, dtype=float)
