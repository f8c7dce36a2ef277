"""The one shape in which a number with an interval leaves the library.

Every statistics, fitting and study-analysis function that produces a number with an
interval returns an :class:`Estimate`: its point, its interval, the level and the method
that made the interval, how many resamples it rests on, and whether the data identify
it. :func:`scalinglab.record.record` takes an ``Estimate`` as it is, so the method and
level a report prints are the ones the library used, never re-typed in a notebook.

The module also holds the one identifiability rule of the library
(:data:`BOUND_SHARE`, :func:`identified_by_share`): a fitted parameter at one of its
bounds in at least that share of bootstrap refits is not identified by the data.

It imports nothing from the package (a base room): ``stats``, ``fitting``, the studies
and ``record`` all build on it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Share of bootstrap refits at a bound from which a parameter is not identified.
BOUND_SHARE = 0.2
#: The resampling method of :meth:`Estimate.from_draws` when none is named.
PERCENTILE = "bootstrap, percentile"


def identified_by_share(share_at_bound: float, *, threshold: float = BOUND_SHARE) -> bool:
    """The library's identifiability rule: identified when fewer than ``threshold`` of the
    bootstrap refits sit on a bound (``share_at_bound`` in ``[0, 1]``; NaN counts as not
    identified)."""
    s = float(share_at_bound)
    return bool(s < threshold) if not math.isnan(s) else False


def quantile_mc_se(draws: Sequence[float] | np.ndarray, q: float) -> float:
    """Monte Carlo standard error of the ``q`` quantile of ``R`` bootstrap draws.

    Distribution-free, from order statistics: the number of draws below the true
    quantile is Binomial(R, q), so the quantile's position moves by about
    ``s = sqrt(R q (1 - q))`` ranks from one set of resamples to the next; the standard
    error is half the spread of the draws ``s`` ranks either side,
    ``(x_(Rq + s) - x_(Rq - s)) / 2``.

    Parameters
    ----------
    draws
        Shape ``(R,)``, finite.
    q
        In ``(0, 1)``.

    Returns
    -------
    float
        NaN for fewer than 2 draws.
    """
    x = np.sort(np.asarray(draws, dtype=float).ravel())
    r = x.size
    if r < 2:
        return math.nan
    s = math.sqrt(r * q * (1 - q))
    lo_i = int(np.clip(math.floor(r * q - s), 0, r - 1))
    hi_i = int(np.clip(math.ceil(r * q + s), 0, r - 1))
    return float(x[hi_i] - x[lo_i]) / 2


def bound_share_note(what: str, share_at_bound: float, bound: Any = None) -> str:
    """The reason written next to a parameter the rule calls not identified, e.g.
    ``"A at its bound 1 in 35% of bootstrap refits"``."""
    where = "its bound" if bound is None else f"its bound {bound}"
    return f"{what} at {where} in {100 * float(share_at_bound):.0f}% of bootstrap refits"


@dataclass(frozen=True)
class Estimate:
    """A number, its interval and how the interval was made.

    Attributes
    ----------
    point
        The point estimate (NaN when undefined on these data; say why in ``note``).
    lo, hi
        The interval's ends, or both None for a point estimate without interval.
    level
        Two-sided confidence level of the interval (None without one).
    method
        How the interval was made, in words, e.g. ``"bootstrap over prompts,
        percentile"``; for a point estimate, how the point was made.
    resamples
        Number of bootstrap resamples (or refits) the interval rests on.
    identified
        False when the data do not pin the number (a fitted parameter on a bound).
    bound, side
        The bound it sits on and which one (``"lower"``/``"upper"``), when known.
    note
        Why it is NaN or not identified, or any caveat, in words.
    mc_se
        Monte Carlo standard errors of ``(lo, hi)`` (:func:`quantile_mc_se` for a
        bootstrap's percentile ends; None for an interval without resampling error). A
        verdict decided by a bound within two of them is "inconclusive (Monte Carlo)".
    n
        The sample size the interval rests on (seeds, runs, repeats, draws of a share):
        the ``n`` at which a report states the method's simulated coverage
        (:mod:`scalinglab.stats.method_coverage`); None when not known.
    room
        For a bounded quantity (a share in ``[0, 1]``, a coverage that cannot pass 1, any
        stated physical bound): the room left between its current level and the bound,
        in this number's units, i.e. the largest effect it could still show (``>= 0``).
        A claim whose minimum meaningful effect exceeds it reads "not identified
        (saturated)" (:func:`scalinglab.verdict_checks.saturation`); None: unbounded.
    no_interval
        Why this number may come without an interval (e.g. a grid value every resample
        lands on; a quantity at its bound): when its interval has zero width,
        :func:`scalinglab.record.record` drops it and shows this reason. Without a
        reason, a zero-width interval of an identified estimate is refused (an error).
    df
        Degrees of freedom of a Student-t interval (``n - 1`` over ``n`` seeds; Welch's
        Satterthwaite df for a difference): a claim's p-value for Holm's correction
        (:mod:`scalinglab.verdict_checks`) is read on this t distribution. None: the
        interval is read as normal (a bootstrap over many units).
    """

    point: float
    lo: float | None = None
    hi: float | None = None
    level: float | None = None
    method: str | None = None
    resamples: int | None = None
    identified: bool = True
    bound: float | None = None
    note: str | None = None
    side: str | None = None
    mc_se: tuple[float, float] | None = None
    n: int | None = None
    room: float | None = None
    no_interval: str | None = None
    df: float | None = None

    def __post_init__(self) -> None:
        if (self.lo is None) != (self.hi is None):
            raise ValueError(f"Estimate: give both ends of the interval or neither ({self!r})")
        if self.lo is not None and self.level is None:
            raise ValueError("Estimate: an interval must state its level")
        if self.side not in (None, "lower", "upper"):
            raise ValueError(f"Estimate: side must be 'lower', 'upper' or None, got {self.side!r}")
        # plain Python numbers, so equality, hashing and JSON behave (no 0-d arrays)
        object.__setattr__(self, "point", float(self.point))
        for name in ("lo", "hi", "level", "bound"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, float(v))
        if self.resamples is not None:
            object.__setattr__(self, "resamples", int(self.resamples))
        if self.n is not None:
            if int(self.n) < 1:
                raise ValueError(f"Estimate: n must be at least 1, got {self.n}")
            object.__setattr__(self, "n", int(self.n))
        if self.mc_se is not None:
            object.__setattr__(self, "mc_se", (float(self.mc_se[0]), float(self.mc_se[1])))
        if self.no_interval is not None and not str(self.no_interval).strip():
            raise ValueError("Estimate: no_interval needs its reason")
        if self.room is not None:
            room = float(self.room)
            if not room >= 0:
                raise ValueError(f"Estimate: room must be >= 0 (room left to a bound), got {room}")
            object.__setattr__(self, "room", room)
        if self.df is not None:
            df = float(self.df)
            if not df > 0:
                raise ValueError(
                    f"Estimate: df must be > 0 (a t interval's degrees of freedom), got {df}"
                )
            object.__setattr__(self, "df", df)
        object.__setattr__(self, "identified", bool(self.identified))

    @property
    def ci(self) -> tuple[float, float] | None:
        """``(lo, hi)``, or None without an interval."""
        if self.lo is None or self.hi is None:
            return None
        return float(self.lo), float(self.hi)

    def replace(self, **changes: Any) -> Estimate:
        """A copy with ``changes`` applied (e.g. ``identified=False, note=...``)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_draws(
        cls,
        point: float,
        draws: Sequence[float] | np.ndarray,
        *,
        level: float,
        method: str = PERCENTILE,
        resamples: int | None = None,
        **extra: Any,
    ) -> Estimate:
        """The percentile interval of bootstrap ``draws`` around ``point``.

        Parameters
        ----------
        point
            The statistic on the original data.
        draws
            Shape ``(R,)``: the statistic on each resample; NaN draws (a failed
            refit, an undefined resample) are left out.
        level
            Two-sided level; the interval is the ``(1 - level) / 2`` and
            ``(1 + level) / 2`` quantiles of the finite draws.
        method
            Words for the resampling scheme (``", percentile"`` is the interval).
        resamples
            Number reported; default: the number of non-NaN draws.
        extra
            Other fields (``identified``, ``note``, ...).

        Returns
        -------
        Estimate
            With NaN ends (and a note) when no draw is finite.
        """
        d = np.asarray(draws, dtype=float).ravel()
        ok = ~np.isnan(d)
        n = int(ok.sum())
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1), got {level}")
        if n == 0:
            lo = hi = math.nan
            extra.setdefault("note", "no resample gave a defined value")
        else:
            q = [(1 - level) / 2, (1 + level) / 2]
            lo, hi = (float(v) for v in np.quantile(d[ok], q))
            extra.setdefault("mc_se", tuple(quantile_mc_se(d[ok], p) for p in q))
        return cls(
            float(point),
            lo,
            hi,
            level=float(level),
            method=method,
            resamples=n if resamples is None else resamples,
            **extra,
        )

    @classmethod
    def from_cell(cls, cell: Any, **extra: Any) -> Estimate:
        """One cell of a labelled result (an ``xarray.Dataset`` with scalar ``point``,
        ``lo`` and ``hi`` after ``.sel``), with the ``level``, ``method`` and ``reps``
        its function stored in ``attrs`` (and ``n``, the sample size, when stored): how
        the library's xarray results
        (``interval_estimates``, ``few_run_variability``, ``ci_width_ratio``,
        ``pairwise_probability_of_improvement``, ...) become estimates. Variables
        ``mc_se_lo`` and ``mc_se_hi``, when the result has them, become ``mc_se``."""
        attrs = cell.attrs
        missing = [k for k in ("level", "method") if k not in attrs]
        if missing:
            raise ValueError(
                f"Estimate.from_cell: the result's attrs lack {', '.join(missing)} "
                "(the function that made it must state how)"
            )
        if "mc_se_lo" in cell and "mc_se_hi" in cell and "mc_se" not in extra:
            extra["mc_se"] = (float(cell["mc_se_lo"]), float(cell["mc_se_hi"]))
        if "n" in attrs and "n" not in extra:
            extra["n"] = int(attrs["n"])
        return cls(
            float(cell["point"]),
            float(cell["lo"]),
            float(cell["hi"]),
            level=float(attrs["level"]),
            method=str(attrs["method"]),
            resamples=int(attrs["reps"]) if "reps" in attrs else None,
            **extra,
        )

    def to_json(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict (non-finite numbers as None)."""
        out = dataclasses.asdict(self)
        if self.mc_se is not None:
            out["mc_se"] = [None if not math.isfinite(v) else v for v in self.mc_se]
        for k, v in out.items():
            if isinstance(v, float) and not math.isfinite(v):
                out[k] = None
        return out

    def __str__(self) -> str:
        if self.lo is None:
            return f"{self.point:.4g}"
        return f"{self.point:.4g} [{self.lo:.4g}, {self.hi:.4g}]"
