"""The limit rule, and identified limits compared across sizes.

- :func:`own_last_decade` and :func:`last_decade_trend`: each size's **own** last decade
  of tokens per parameter (sizes trained to different horizons have different windows);
- :func:`decide_limit`: **the limit rule**, stated before the long design's 2000-token
  data were read. A law's ``A0`` counts when
  :func:`~scalinglab.studies.sparsity.analysis.law_identification` identifies it (route
  ``law``). Otherwise the limit is read as the curve's **plateau** only when an
  equivalence test shows the curve flat over the size's last decade: the last-decade
  relative trend's 90% Student-t interval over seeds lies inside ``+-delta`` per decade,
  ``delta`` the calibrated minimum trend effect (``calibration/<act>/min_relative_trend``,
  :func:`.trends.min_trend_effect`, set on the held-apart half of the paper's curves, the
  same that decides ``relu-decreasing``/``silu-increasing``). Then ``A0`` is the mean
  ratio over that decade with its Student-t interval over seeds (route ``plateau``).
  Otherwise the limit is not identified, with the reason (route ``none``). A law ``A0``
  on its bound is never read as a plateau unless the test passes;
- :func:`limit_scale_slope` and :func:`plateau_scale_slope`: the relative change of an
  identified limit ``A0`` per 10x parameters between two sizes, from the law fits'
  bootstrap draws (route ``law``) or from the seeds' plateau levels (route ``plateau``,
  Welch t); :func:`size_pair_slope` picks by the two sizes' routes and, when they differ
  (one law, one plateau), pairs the law's draws with a bootstrap of the plateau's seeds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.fitting import FitResult
from scalinglab.stats import calibration
from scalinglab.studies.sparsity.analysis import law_limit
from scalinglab.studies.sparsity.seed_means import welch_estimate
from scalinglab.studies.sparsity.trends import relative_trend

#: How :func:`limit_scale_slope` makes its interval (its coverage stated).
LIMIT_SCALE_CI = (
    "the two sizes' group-bootstrap law refits, paired by draw, percentile; over a few runs "
    "per size a percentile bootstrap covers below its nominal level"
)


def _decades(n_small: float, n_large: float) -> float:
    """Decades of parameters between two sizes (positive, or a ValueError)."""
    decades = float(np.log10(n_large / n_small))
    if decades <= 0:
        raise ValueError("large must have more parameters than small")
    return decades


def _relative_per_decade(a, b, decades: float):
    """``(b - a)`` relative to the mean of ``a`` and ``b``, per decade (arrays or floats)."""
    return (b - a) / (0.5 * (a + b)) / decades


def limit_scale_slope(
    small: tuple[FitResult, float],
    large: tuple[FitResult, float],
    *,
    param: str = "A0",
    level: float = 0.95,
) -> Estimate:
    """Relative change of a law's ``param`` per 10x parameters between two sizes.

    Parameters
    ----------
    small, large
        ``(FitResult, n_params)`` of each size; the fits' bootstrap ``draws`` resample
        different runs, so they are independent and paired by index.

    Returns
    -------
    Estimate
        ``(A_large - A_small) / mean(A) / log10(n_large / n_small)``, with the percentile
        interval of the paired draws (none when a fit has no draws).
    """
    (fa, na), (fb, nb) = small, large
    decades = _decades(na, nb)

    def rel(a, b):
        return _relative_per_decade(a, b, decades)

    point = float(rel(fa.params[param], fb.params[param]))
    if fa.draws is None or fb.draws is None:
        return Estimate(point, method="no bootstrap draws: a point estimate")
    k = list(fa.params).index(param)
    n = min(len(fa.draws), len(fb.draws))
    draws = rel(fa.draws[:n, k], fb.draws[:n, list(fb.params).index(param)])
    return Estimate.from_draws(point, draws, level=level, method=LIMIT_SCALE_CI, resamples=n)


# ----------------------------------------------------------------------------- the limit rule


#: Level of the equivalence test's trend interval (two one-sided 5% tests: a 90% interval).
PLATEAU_TREND_LEVEL = 0.90


#: How a limit was identified, as the first words of its note.
ROUTES = ("law", "plateau", "none")


#: The plateau route's method (its interval: Student t over seeds).
PLATEAU_METHOD = "plateau (equivalence over the last decade)"


def own_last_decade(
    curves: pd.DataFrame, *, x: str = "tokens_per_param", window: float = 10.0
) -> pd.DataFrame:
    """The usable rows of each (activation, model) within its own last ``window``-fold of
    ``x`` (``x >= max x / window`` of that size), so sizes trained to different horizons
    each keep their own last decade."""
    use = curves[curves["usable"]]
    end = use.groupby(["activation", "model"])[x].transform("max")
    return use[use[x] >= end / window]


def last_decade_trend(
    curves: pd.DataFrame, *, x: str = "tokens_per_param", level: float = 0.95
) -> Estimate:
    """:func:`relative_trend` over each (activation, model)'s own last decade of ``x``
    (:func:`own_last_decade`); over several sizes, the mean of each size's own trend.

    Raises
    ------
    ValueError
        No run has 3 usable checkpoints in its last decade.
    """
    return relative_trend(own_last_decade(curves, x=x), x=x, level=level)


def plateau_levels(group: pd.DataFrame, *, x: str = "tokens_per_param") -> pd.Series:
    """Per seed, the mean ratio over the size's own last decade (one activation and
    model), indexed by seed."""
    return own_last_decade(group, x=x).groupby("seed")["activation_ratio"].mean()


def decide_limit(
    res: FitResult | None,
    group: pd.DataFrame,
    *,
    delta: float,
    trend: Estimate | None = None,
    x: str = "tokens_per_param",
    level: float = 0.95,
    looks: int = 1,
    looks_why: str = "as seeds were added",
) -> tuple[Estimate, str]:
    """The limit ``A0`` of one (activation, size) by the limit rule (module docstring).

    Parameters
    ----------
    res
        The law fit of the group (None when the law did not fit).
    group
        :func:`~scalinglab.studies.sparsity.analysis.curves_frame` rows of one activation
        and model, every seed.
    delta
        The minimum trend effect, as a fraction of the level per 10x ``x`` (``> 0``).
    trend
        The data's trend the law is checked against (as
        :func:`~scalinglab.studies.sparsity.analysis.law_limit`).
    level
        Level of the plateau limit's Student-t interval.
    looks
        How many times the equivalence test has been read on this size as its seeds grew
        (a later seed block added after a reading that did not pass). The test is
        Bonferroni-corrected over them: its trend interval is at
        ``1 - (1 - PLATEAU_TREND_LEVEL) / looks`` (90% at one look, 95% at two), and the
        note says so for either route.
    looks_why
        Why there is more than one look (and the error rate the looks spend), in the
        note after ``"read at look k of k, "``.

    Returns
    -------
    (Estimate, route)
        ``route`` is one of :data:`ROUTES`; the estimate's note starts with
        ``"route: <route>"`` and gives the reasons; a ``none`` limit is not identified and
        has no value (NaN: the law's point rests on a bound).
    """
    if not delta > 0:
        raise ValueError(f"the minimum trend effect delta must be > 0, got {delta}")
    if looks < 1:
        raise ValueError(f"looks must be >= 1, got {looks}")
    trend_level = 1.0 - (1.0 - PLATEAU_TREND_LEVEL) / looks
    look = f"read at look {looks} of {looks}, {looks_why}" if looks > 1 else ""
    law = None if res is None else law_limit(res, trend=trend)
    if law is not None and law.identified:
        head = "route: law (the law fit identifies A0)"
        note = "; ".join(v for v in (head, look, law.note) if v)
        return dataclasses.replace(law, note=note), "law"
    why_law = "no law fit" if law is None else f"law A0 not identified ({law.note})"
    try:
        flat = last_decade_trend(group, x=x, level=trend_level)
    except ValueError as err:
        flat = None
        why_flat = f"no last-decade trend ({err})"
    if flat is not None:
        if flat.ci is None:
            why_flat = f"the last-decade trend {flat.point:+.3g} per decade has no interval"
        else:
            lo, hi = flat.ci
            how = f"{trend_level:.0%} t over seeds"
            if looks > 1:
                how += f", Bonferroni over {looks} looks"
            shown = f"{flat.point:+.3g} [{lo:+.3g}, {hi:+.3g}] ({how}) per decade"
            if -delta < lo and hi < delta:
                levels = plateau_levels(group, x=x)
                est = calibration.mean_estimate(levels.to_numpy(float), level=level)
                note = (
                    f"route: plateau; {why_law}; {look + '; ' if look else ''}"
                    f"last-decade relative trend {shown} inside "
                    f"+-{delta:.3g}; A0 = the mean ratio over the last decade "
                    f"(x >= {float(own_last_decade(group, x=x)[x].min()):.0f})"
                )
                method = f"{PLATEAU_METHOD}: {est.method}"
                return dataclasses.replace(est, method=method, note=note), "plateau"
            direction = (
                "still rising"
                if lo > 0
                else "still falling"
                if hi < 0
                else "not shown flat (its interval reaches past the minimum effect)"
            )
            why_flat = f"{direction}: last-decade relative trend {shown}, not inside +-{delta:.3g}"
    # No value: the law's point, with a parameter on its bound, is not an estimate of A0
    # (it read 0.012 for u4 at 16000, beside a last-decade mean of 0.31).
    note = f"route: none; {why_law}; {look + '; ' if look else ''}no plateau: {why_flat}"
    return (
        Estimate(
            np.nan,
            method="not identified by the law or the plateau rule",
            identified=False,
            note=note,
            bound=None if law is None else law.bound,
            side=None if law is None else law.side,
        ),
        "none",
    )


#: How :func:`plateau_scale_slope` makes its interval.
PLATEAU_SCALE_CI = (
    "Welch t over the two models' per-seed plateau levels (delta method, Welch-Satterthwaite df)"
)


def plateau_scale_slope(
    small: tuple[Sequence[float] | np.ndarray, float],
    large: tuple[Sequence[float] | np.ndarray, float],
    *,
    level: float = 0.95,
) -> Estimate:
    """Relative change of a plateau limit per 10x parameters between two sizes.

    Parameters
    ----------
    small, large
        ``(per-seed plateau levels, n_params)`` of each size (:func:`plateau_levels`);
        the sizes' seeds are different runs, so independent.

    Returns
    -------
    Estimate
        ``(A_large - A_small) / mean(A) / log10(n_large / n_small)`` of the seed means,
        with its delta-method Welch t interval
        (:func:`~scalinglab.studies.sparsity.seed_means.welch_estimate`).
    """
    (va, na), (vb, nb) = small, large
    decades = _decades(na, nb)

    def rel(m: np.ndarray) -> float:
        return float(_relative_per_decade(m[0], m[1], decades))

    arrs = [np.asarray(va, dtype=float), np.asarray(vb, dtype=float)]
    return welch_estimate(arrs, rel, level=level, method=PLATEAU_SCALE_CI)


#: How :func:`size_pair_slope` makes its interval when the two limits come by different
#: routes (one law, one plateau).
MIXED_SCALE_CI = (
    "the law's group-bootstrap refits paired by draw with Student-t draws of the plateau's "
    "mean level (mean + SE x t on seeds - 1 df), percentile; the law's side is a percentile "
    "bootstrap over a few runs, which covers below its nominal level"
)


def size_pair_slope(
    small: tuple[str, FitResult | Sequence[float], float],
    large: tuple[str, FitResult | Sequence[float], float],
    *,
    level: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """Relative change of an identified limit per 10x parameters between two sizes, by
    the routes that identified them.

    Parameters
    ----------
    small, large
        ``(route, evidence, n_params)`` of each size: route ``"law"`` with its
        :class:`~scalinglab.fitting.FitResult` (bootstrap ``draws``), or ``"plateau"`` with
        its per-seed plateau levels (:func:`plateau_levels`).
    level
        Level of the interval.
    seed
        Seed of the plateau side's Student-t draws when the routes differ (a
        :class:`numpy.random.Generator`); unused otherwise.

    Returns
    -------
    Estimate
        ``(A_large - A_small) / mean(A) / log10(n_large / n_small)``: both law fits by
        :func:`limit_scale_slope` (paired bootstrap draws), both plateaus by
        :func:`plateau_scale_slope` (Welch t), one of each by pairing the law's bootstrap
        draws with as many Student-t draws of the plateau's mean level (``mean + SE t``,
        ``t`` on ``seeds - 1`` df: the t interval's sampling distribution, where a
        bootstrap of 3-5 seed means would be too narrow; percentile interval,
        :data:`MIXED_SCALE_CI`).

    Raises
    ------
    ValueError
        A route other than ``"law"`` or ``"plateau"`` (a limit that is not identified has
        no size comparison), or ``large`` not larger than ``small``.
    """
    (ra, va, na), (rb, vb, nb) = small, large
    for r in (ra, rb):
        if r not in ("law", "plateau"):
            raise ValueError(f"a size comparison needs identified limits (law, plateau): {r!r}")
    if ra == rb == "law":
        assert isinstance(va, FitResult) and isinstance(vb, FitResult)
        return limit_scale_slope((va, na), (vb, nb), level=level)
    if ra == rb == "plateau":
        assert not isinstance(va, FitResult) and not isinstance(vb, FitResult)
        return plateau_scale_slope((va, na), (vb, nb), level=level)
    decades = _decades(na, nb)
    law, levels = (va, vb) if ra == "law" else (vb, va)
    assert isinstance(law, FitResult) and not isinstance(levels, FitResult)
    lv = np.asarray(levels, dtype=float)
    law_point = float(law.params["A0"])

    def rel(a_law, a_plateau):
        a, b = (a_law, a_plateau) if ra == "law" else (a_plateau, a_law)
        return _relative_per_decade(a, b, decades)

    point = float(rel(law_point, lv.mean()))
    if law.draws is None or len(lv) < 2:
        return Estimate(point, method="no bootstrap draws: a point estimate")
    law_draws = law.draws[:, list(law.params).index("A0")]
    rng = np.random.default_rng(seed)
    plateau_draws = calibration.t_mean_draws(lv, n=len(law_draws), rng=rng)
    draws = rel(law_draws, plateau_draws)
    return Estimate.from_draws(
        point, draws, level=level, method=MIXED_SCALE_CI, resamples=len(law_draws)
    )


__all__ = [
    "LIMIT_SCALE_CI",
    "MIXED_SCALE_CI",
    "size_pair_slope",
    "PLATEAU_METHOD",
    "PLATEAU_SCALE_CI",
    "PLATEAU_TREND_LEVEL",
    "ROUTES",
    "decide_limit",
    "last_decade_trend",
    "own_last_decade",
    "plateau_levels",
    "plateau_scale_slope",
    "limit_scale_slope",
]
