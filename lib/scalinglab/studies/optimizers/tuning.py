"""Coordinate descent over discrete hyperparameter grids, as the optimizer paper tunes.

Rule (Wen et al. 2025, section 3): start from a baseline configuration; for each
coordinate in turn, evaluate every other value on its grid with the remaining
coordinates held at the incumbent; move to the best value only if it beats the
incumbent by more than ``tol`` (in objective units: held-out loss); after a full
pass over the coordinates, start another pass if anything moved; stop when a full
pass moves nothing (every single-coordinate change improves by at most ``tol``)
or after ``max_rounds`` passes. A coordinate listed in ``extend`` (e.g. the
learning rate) whose best value is the last (or a non-zero first) of its grid
has its grid extended by that factor beyond the edge, and is swept again, up to
``max_extend`` times per side: a fair comparison needs each optimizer's optimum
inside its grid, not on its edge. Evaluations are cached by configuration, so a
later pass only pays for configurations it has not seen. A non-finite objective
(a diverged run) counts as ``+inf``.

:class:`CoordinateDescent` is an ask/tell state machine, so several searches (one
per optimizer) can run in lockstep with :func:`descend_together`, whose
evaluations of one step go out as a single batch of Dask tasks. Every evaluation
is recorded with the decision it led to; :func:`path_frame` and
:func:`path_dataset` turn the path into a table or an xarray Dataset (the tuning
itself is a result of the study).

Hand-written (rather than Optuna or scikit-learn's grid search) because the paper's
procedure is this specific deterministic rule, a few dozen lines, and its
path must be reported step by step.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
import pandas as pd
import xarray as xr


def config_key(config: Mapping[str, Any]) -> str:
    """A canonical string of a configuration (sorted keys; floats as Python repr)."""
    return json.dumps({k: config[k] for k in sorted(config)}, sort_keys=True, default=str)


def _value(v: float) -> float:
    v = float(v)
    return v if math.isfinite(v) else math.inf


class AskTell:
    """The ask/tell surface of a search (:class:`CoordinateDescent`, and
    :class:`~scalinglab.studies.optimizers.walk.WalkDescent`): a subclass keeps ``cache``
    (configuration key -> objective), ``current`` (the incumbent) and ``status``
    (``"running"`` until it ends) and implements ``_advance`` and ``_pending``."""

    cache: dict[str, float]
    current: dict[str, Any]
    status: str

    def _advance(self) -> None:
        raise NotImplementedError

    def _pending(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    @property
    def done(self) -> bool:
        self._advance()
        return self.status != "running"

    def ask(self) -> list[dict[str, Any]]:
        """Configurations to evaluate next (empty when done)."""
        self._advance()
        return [] if self.status != "running" else self._pending()

    def tell(self, configs: Sequence[Mapping[str, Any]], values: Sequence[float]) -> None:
        """Report objective values of configurations (any subset, any order); a
        non-finite value (a diverged run) counts as ``+inf``."""
        for cfg, v in zip(configs, values, strict=True):
            self.cache[config_key(cfg)] = _value(v)
        self._advance()

    @property
    def best(self) -> dict[str, Any]:
        """The incumbent configuration."""
        return dict(self.current)


@dataclass
class CoordinateDescent(AskTell):
    """One coordinate-descent search.

    Parameters
    ----------
    grid
        Coordinate -> candidate values (tuned coordinates must appear here).
    start
        The starting configuration (may hold coordinates that are not tuned).
    tol
        A move needs an improvement ``> tol``.
    coords
        Coordinates to tune, in visiting order (default: every key of ``grid``).
    max_rounds
        Passes over the coordinates at most.
    neighborhood
        None: every value of a coordinate's grid is a candidate (the paper's sweep);
        ``k``: only the values within ``k`` grid positions of the incumbent (a local
        walk along the grid, used to re-tune at larger scales).
    extend
        Coordinate -> factor: numeric coordinates whose grid grows geometrically when
        the incumbent sits on its edge (``value * factor`` above the top,
        ``value / factor`` below a non-zero bottom).
    max_extend
        Extensions per coordinate and side at most.
    name, stage
        Labels for the path (e.g. optimizer and ``"base"``).
    """

    grid: Mapping[str, Sequence[Any]]
    start: Mapping[str, Any]
    tol: float = 0.0
    coords: Sequence[str] | None = None
    max_rounds: int = 10
    neighborhood: int | None = None
    extend: Mapping[str, float] = field(default_factory=dict)
    max_extend: int = 3
    name: str = ""
    stage: str = ""
    cache: dict[str, float] = field(default_factory=dict)
    path: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.coords = tuple(self.coords if self.coords is not None else self.grid)
        missing = [c for c in self.coords if c not in self.grid]
        if missing:
            raise ValueError(f"coordinates {missing} have no grid")
        if self.tol < 0 or self.max_rounds < 1:
            raise ValueError("need tol >= 0 and max_rounds >= 1")
        if any(f <= 1 for f in self.extend.values()) or self.max_extend < 0:
            raise ValueError("extension factors must be > 1 and max_extend >= 0")
        self.grid = {c: tuple(v) for c, v in self.grid.items()}  # own copy: it may grow
        self.extended: dict[tuple[str, str], int] = {}
        self.current: dict[str, Any] = dict(self.start)
        self.current_value = math.inf
        self.round, self._ci = 1, -1  # _ci = -1: the start is not evaluated yet
        self._moved = False
        self.status = "running"

    # --------------------------------------------------------------- helpers
    def _candidates(self) -> list[dict[str, Any]]:
        c = self.coords[self._ci]
        values = list(self.grid[c])
        cur = self.current.get(c)
        if self.neighborhood is not None and cur in values:
            i = values.index(cur)
            values = values[max(0, i - self.neighborhood) : i + self.neighborhood + 1]
        return [{**self.current, c: v} for v in values if v != cur]

    def _pending(self) -> list[dict[str, Any]]:
        todo = [dict(self.start)] if self._ci < 0 else self._candidates()
        seen, out = set(), []
        for cfg in todo:
            k = config_key(cfg)
            if k not in self.cache and k not in seen:
                seen.add(k)
                out.append(cfg)
        return out

    def _record(self, cfg: Mapping[str, Any], coordinate: str, decision: str) -> None:
        self.path.append(
            {
                "search": self.name,
                "stage": self.stage,
                "round": self.round,
                "coordinate": coordinate,
                "value": cfg.get(coordinate) if coordinate else None,
                "objective": self.cache[config_key(cfg)],
                "config": config_key(cfg),
                "decision": decision,
            }
        )

    def _advance(self) -> None:
        """Take every decision whose evaluations are all cached."""
        while self.status == "running" and not self._pending():
            if self._ci < 0:
                self.current_value = self.cache[config_key(self.start)]
                self._record(self.start, "", "start")
            else:
                c, cands = self.coords[self._ci], self._candidates()
                vals = [self.cache[config_key(x)] for x in cands]
                j = int(np.argmin(vals)) if vals else -1
                move = j >= 0 and vals[j] < self.current_value - self.tol
                for i, x in enumerate(cands):
                    self._record(x, c, "moved" if (move and i == j) else "rejected")
                if move:
                    self.current, self.current_value = cands[j], vals[j]
                    self._moved = True
                if self._extend(c):
                    continue  # sweep the same coordinate again over its new value
            self._ci += 1
            if self._ci == len(self.coords):
                if not self._moved:
                    self.status = "converged"
                elif self.round >= self.max_rounds:
                    self.status = "max_rounds"
                else:
                    self.round, self._ci, self._moved = self.round + 1, 0, False

    def _extend(self, c: str) -> bool:
        """Grow ``c``'s grid past the incumbent if it sits on an edge; True if grown."""
        if c not in self.extend:
            return False
        g, v, f = list(self.grid[c]), self.current.get(c), float(self.extend[c])
        if v == max(g) and self.extended.get((c, "up"), 0) < self.max_extend:
            side, new = "up", v * f
        elif v == min(g) and v > 0 and self.extended.get((c, "down"), 0) < self.max_extend:
            side, new = "down", v / f
        else:
            return False
        self.extended[(c, side)] = self.extended.get((c, side), 0) + 1
        self.grid[c] = tuple(sorted([*g, float(f"{new:.6g}")]))
        return True

    # --------------------------------------------------------------- results
    def edge_warnings(self) -> list[str]:
        """Coordinates whose chosen value is the first or last of its grid (a first value
        of 0, e.g. no warmup or no weight decay, is a natural end and not flagged)."""
        out = []
        for c in self.coords:
            g = list(self.grid[c])
            v = self.current.get(c)
            if len(g) > 2 and (v == g[-1] or (v == g[0] and v != 0)):
                out.append(
                    f"{self.name or 'search'}: {c}={self.current.get(c)} is at the edge "
                    f"of its grid {g}"
                )
        return out


class Search(Protocol):
    """What :func:`descend_together` drives: an ask/tell search (e.g. :class:`CoordinateDescent`,
    :class:`~scalinglab.studies.optimizers.walk.WalkDescent`)."""

    def ask(self) -> list[dict[str, Any]]: ...

    def tell(self, configs: Sequence[Mapping[str, Any]], values: Sequence[float]) -> None: ...


S = TypeVar("S", bound=Search)


def descend_together(
    searches: Mapping[str, S], evaluate: Callable[[list[tuple[str, dict[str, Any]]]], list[float]]
) -> dict[str, S]:
    """Run several searches in lockstep until all are done.

    Parameters
    ----------
    searches
        Label -> search (anything with ``ask`` and ``tell``: :class:`Search`).
    evaluate
        Called with ``[(label, config), ...]`` (one batch per step, all searches
        together) and returning the objective of each.
    """
    while True:
        batch = [(label, cfg) for label, s in searches.items() for cfg in s.ask()]
        if not batch:
            return dict(searches)
        values = evaluate(batch)
        for label, s in searches.items():
            mine = [(cfg, v) for (lab, cfg), v in zip(batch, values, strict=True) if lab == label]
            if mine:
                s.tell([c for c, _ in mine], [v for _, v in mine])


def coordinate_descent(
    objective: Callable[[dict[str, Any]], float],
    grid: Mapping[str, Sequence[Any]],
    start: Mapping[str, Any],
    *,
    tol: float = 0.0,
    coords: Sequence[str] | None = None,
    max_rounds: int = 10,
    neighborhood: int | None = None,
    extend: Mapping[str, float] | None = None,
) -> CoordinateDescent:
    """Run one search with a plain objective ``config -> value``; return the finished search."""
    s = CoordinateDescent(
        grid=grid,
        start=start,
        tol=tol,
        coords=coords,
        max_rounds=max_rounds,
        neighborhood=neighborhood,
        extend=dict(extend or {}),
    )
    descend_together({"": s}, lambda batch: [objective(c) for _, c in batch])
    return s


def path_frame(
    searches: Sequence[CoordinateDescent] | Mapping[str, CoordinateDescent],
) -> pd.DataFrame:
    """Every evaluation of the searches, in order: one row each.

    Columns: ``search, stage, round, coordinate, value, objective, config, decision``
    (``"start"``, ``"moved"`` or ``"rejected"``), ``step`` (running index) and
    ``incumbent`` (the objective of the incumbent after that row).
    """
    items = searches.values() if isinstance(searches, Mapping) else searches
    rows = [r for s in items for r in s.path]
    df = pd.DataFrame(
        rows,
        columns=[
            "search",
            "stage",
            "round",
            "coordinate",
            "value",
            "objective",
            "config",
            "decision",
        ],
    )
    df["value"] = df["value"].map(lambda v: "" if v is None or v != v else str(v))
    df["step"] = np.arange(len(df))
    inc = []
    best: dict[tuple[str, str], float] = {}
    for r in df.itertuples():
        key = (r.search, r.stage)
        if r.decision in ("start", "moved"):
            best[key] = r.objective
        inc.append(best.get(key, math.nan))
    df["incumbent"] = inc
    return df


def path_dataset(
    searches: Sequence[CoordinateDescent] | Mapping[str, CoordinateDescent],
) -> xr.Dataset:
    """:func:`path_frame` as an xarray Dataset with dim ``evaluation``."""
    df = path_frame(searches).rename(columns={"step": "evaluation"}).set_index("evaluation")
    for col in ("search", "stage", "coordinate", "value", "config", "decision"):
        df[col] = df[col].astype(str)
    return xr.Dataset.from_dataframe(df)
