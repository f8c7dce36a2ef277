"""Tuning walks that end only when the optimum is strictly inside the values tried.

The ``medium`` sweep re-tuned the learning rate by a capped local walk (two rounds, one
grid step each): AdamW stopped on the edge of what it had tried at w96. Here a walk has
no round cap that can stop it on an edge:

- **Walk** (one coordinate): evaluate the start, then both neighbours on the coordinate's
  ladder; while the best value tried is the lowest (highest) tried, try the next value
  below (above) it. It ends ``"interior"`` when the best value is strictly inside the
  tried values (both neighbours tried and worse, ties counting as worse only if they
  are not strictly better). A ladder with a ``factor`` grows geometrically past its ends
  (the learning rate); a ladder without one ends at its last value. An optimum at such
  an end is ``"at_limit"`` when the end is a limit of the feasible range (no warmup, no
  weight decay, beta1 0: nothing lies beyond, so the optimum over what can be run has
  been found, a constrained optimum) and ``"at_bound"`` when the end is only where the
  ladder was cut (beta2 0.5, beta1 0.999: a value beyond it could be better). A hard
  safety cap on evaluations (``max_evals``) ends a walk still on an edge ``"on_edge"``.
  ``"at_bound"`` and ``"on_edge"`` are *flagged*: such a setting keeps its size's
  verdicts "not identified"; ``"at_limit"`` is reported, not flagged.
- **WalkDescent** (coordinate descent made of walks, the paper's procedure with this
  rule): walk each coordinate in turn from the incumbent; repeat the pass while anything
  moved; at most ``max_passes`` passes (a descent still moving at the cap is flagged
  ``"max_passes"``). With one coordinate it is one walk.

Both are ask/tell state machines like
:class:`~scalinglab.studies.optimizers.tuning.CoordinateDescent` (so
:func:`~scalinglab.studies.optimizers.tuning.descend_together` runs several in lockstep
and :func:`~scalinglab.studies.optimizers.tuning.path_frame` reads their paths): the
objective of a configuration is whatever the caller reports (the sweep reports the mean
final loss over its tuning seeds). A non-finite objective (a diverged run) counts as
``+inf``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scalinglab.studies.optimizers.tuning import AskTell, config_key

#: The walk's end states.
STATUSES = ("running", "interior", "at_limit", "at_bound", "on_edge", "max_passes")
#: The end states that are not flagged (the optimum is inside, or at a feasible limit).
SETTLED = ("interior", "at_limit")


def _round(v: float) -> float:
    return float(f"{v:.6g}")


@dataclass(frozen=True)
class Ladder:
    """The ordered candidate values of one coordinate.

    Parameters
    ----------
    values
        Candidate values (sorted here; the walk's start is added when missing).
    factor
        None: the ladder ends at its first and last values. ``f > 1``: it grows past
        either end by ``x f`` / ``/ f`` (positive values only), without limit but the
        walk's ``max_evals``.
    limits
        The ends of the ladder that are limits of the feasible range (e.g. ``(0.0,)``
        for warmup): an optimum there is ``"at_limit"``, not flagged. Each must be the
        first or last value of a ladder without ``factor``.
    """

    values: tuple[float, ...]
    factor: float | None = None
    limits: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("a ladder needs at least one value")
        if self.factor is not None and (self.factor <= 1 or min(self.values) <= 0):
            raise ValueError("a growing ladder needs factor > 1 and positive values")
        ends = (min(self.values), max(self.values))
        if self.limits and (self.factor is not None or not set(self.limits) <= set(ends)):
            raise ValueError(
                f"limits {self.limits} must be ends {ends} of a ladder that does not grow"
            )

    def below(self, v: float) -> float | None:
        """The next value below ``v``, or None at a fixed end."""
        lower = [x for x in self.values if x < v]
        if lower:
            return max(lower)
        return _round(v / self.factor) if self.factor else None

    def above(self, v: float) -> float | None:
        """The next value above ``v``, or None at a fixed end."""
        upper = [x for x in self.values if x > v]
        if upper:
            return min(upper)
        return _round(v * self.factor) if self.factor else None


def lr_ladder(start: float, factor: float = 2.0) -> Ladder:
    """A learning-rate ladder: ``start * factor**k`` for every integer ``k``."""
    return Ladder((_round(start),), factor)


@dataclass
class WalkDescent(AskTell):
    """Coordinate descent by walks that end interior (see the module docstring).

    Parameters
    ----------
    ladders
        Coordinate -> :class:`Ladder`; walked in this order.
    start
        The starting configuration (may hold coordinates that are not walked).
    max_evals
        Safety cap: configurations evaluated per walk at most.
    max_passes
        Passes over the coordinates at most.
    name, stage
        Labels of the path (optimizer; e.g. ``"walk w48 1x"``).
    cache
        Configuration key -> objective, shared with any earlier search (e.g. the same
        cell's lr walk), so a configuration is never evaluated twice.
    """

    ladders: Mapping[str, Ladder]
    start: Mapping[str, Any]
    max_evals: int = 8
    max_passes: int = 3
    name: str = ""
    stage: str = ""
    cache: dict[str, float] = field(default_factory=dict)
    path: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.max_evals < 3 or self.max_passes < 1:
            raise ValueError("need max_evals >= 3 (a start and two neighbours), max_passes >= 1")
        missing = [c for c in self.ladders if c not in self.start]
        if missing:
            raise ValueError(f"the start has no value for the walked coordinates {missing}")
        self.coords = tuple(self.ladders)
        self.current: dict[str, Any] = dict(self.start)
        self.pass_, self._ci = 1, 0
        self._moved = False
        self._tried: dict[float, float] = {}  # the walk in hand: value -> objective
        self.walk_status: dict[str, str] = {}  # coordinate -> end state of its last walk
        self.status = "running"

    # ------------------------------------------------------------------ one walk
    def _cfg(self, v: float) -> dict[str, Any]:
        return {**self.current, self.coords[self._ci]: v}

    def _wanted(self) -> list[float]:
        """Values the walk in hand needs next (empty: it can decide)."""
        c = self.coords[self._ci]
        lad, v0 = self.ladders[c], self.current[c]
        if not self._tried:
            return [v0]
        best = self._best_value()
        lo, hi = min(self._tried), max(self._tried)
        out = []
        if best == lo and (b := lad.below(lo)) is not None:
            out.append(b)
        if best == hi and (a := lad.above(hi)) is not None:
            out.append(a)
        return out

    def _best_value(self) -> float:
        # lowest objective; a tie goes to the incumbent, then to the value tried first
        inc = self.current[self.coords[self._ci]]
        return min(self._tried, key=lambda v: (self._tried[v], v != inc))

    def _pending(self) -> list[dict[str, Any]]:
        return [self._cfg(v) for v in self._wanted() if config_key(self._cfg(v)) not in self.cache]

    def _take_cached(self) -> None:
        for v in self._wanted():
            k = config_key(self._cfg(v))
            if k in self.cache and v not in self._tried:
                self._tried[v] = self.cache[k]

    def _record(self, v: float, decision: str) -> None:
        c = self.coords[self._ci]
        cfg = self._cfg(v)
        self.path.append(
            {
                "search": self.name,
                "stage": self.stage,
                "round": self.pass_,
                "coordinate": c,
                "value": v,
                "objective": self._tried[v],
                "config": config_key(cfg),
                "decision": decision,
            }
        )

    def _advance(self) -> None:
        while self.status == "running":
            self._take_cached()
            wanted = self._wanted()
            if wanted and len(self._tried) >= self.max_evals:
                self._end_walk()  # the safety cap: end this walk where it stands (flagged)
            elif self._pending():
                return
            elif not wanted:
                self._end_walk()
            # else every wanted value was cached: the walk goes on

    def _end_walk(self) -> None:
        c = self.coords[self._ci]
        lad, inc = self.ladders[c], self.current[c]
        best = self._best_value()
        lo, hi = min(self._tried), max(self._tried)
        if lo < best < hi:
            state = "interior"
        elif (best == lo and lad.below(lo) is None) or (best == hi and lad.above(hi) is None):
            state = "at_limit" if best in lad.limits else "at_bound"
        else:
            state = "on_edge"
        for v in self._tried:  # in the order tried: the start first
            self._record(v, "start" if v == inc else ("moved" if v == best else "rejected"))
        if best != inc:
            self._moved = True
            self.current = self._cfg(best)
        self.walk_status[c] = state
        self._tried = {}
        self._ci += 1
        if self._ci == len(self.coords):
            if not self._moved or len(self.coords) == 1:
                self.status = "done"
            elif self.pass_ >= self.max_passes:
                self.status = "max_passes"
            else:
                self.pass_, self._ci, self._moved = self.pass_ + 1, 0, False

    # ------------------------------------------------------------------ results
    @property
    def flagged(self) -> bool:
        """Whether any coordinate ended off the interior and off a feasible limit, or the
        passes ran out."""
        return self.status == "max_passes" or any(
            s not in SETTLED for s in self.walk_status.values()
        )

    def edge_warnings(self) -> list[str]:
        """One line per flagged coordinate (and one if the passes ran out)."""
        who = f"{self.name or 'search'} ({self.stage})"
        out = [
            f"{who}: {c}={self.current[c]} is {s.replace('_', ' ')}"
            for c, s in self.walk_status.items()
            if s not in SETTLED
        ]
        if self.status == "max_passes":
            out.append(f"{who}: still moving after {self.max_passes} passes")
        return out


def walk_table(path: Any) -> Any:
    """Each walk of a tuning path as one row: what it tried, its optimum, interior or not.

    Parameters
    ----------
    path
        :func:`~scalinglab.studies.optimizers.tuning.path_frame` of walk searches (one row
        per evaluation; a walk is the rows of one ``search, stage, round, coordinate``).

    Returns
    -------
    pandas.DataFrame
        One row per walk: ``search, stage, round, coordinate``, ``values`` and
        ``objectives`` (tried, sorted by value), ``best`` (the value of the lowest
        objective; a tie goes to the walk's start), ``interior`` (the best is strictly
        inside the values tried: the walk's own rule, so a walk ended by the safety cap or
        at a fixed end of its ladder reads False, flagged).
    """
    import pandas as pd

    rows = []
    keys = ["search", "stage", "round", "coordinate"]
    for key, g in path[path.coordinate != ""].groupby(keys, sort=False):
        vals = [float(v) for v in g["value"]]
        obj = [float(o) for o in g["objective"]]
        start = [float(v) for v, d in zip(g["value"], g["decision"], strict=True) if d == "start"]
        order = sorted(range(len(vals)), key=lambda i: vals[i])
        best_i = min(range(len(vals)), key=lambda i: (obj[i], not start or vals[i] != start[0]))
        best = vals[best_i]
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "values": [vals[i] for i in order],
                "objectives": [obj[i] for i in order],
                "best": best,
                "interior": min(vals) < best < max(vals),
            }
        )
    return pd.DataFrame(rows)
