"""Tuning curves of the walk protocol: what each walk tried, its optimum, and the flags.

The ``matched`` sweep tunes by walks (:mod:`.walk`, :mod:`.protocol`) whose paths are in
its dataset (``tuning_*`` over ``evaluation``). Here:

- :func:`path_table`: the path as a table (one row per evaluation);
- :func:`curves`: one row per walk (:func:`.walk.walk_table`) with its phase, size and
  budget read off the stage (``"A lr w32 1x"``), its end state (``interior``,
  ``on edge``: the optimum is the last value tried on a ladder that goes on, e.g. the
  learning rate, where the walk hit its safety cap; ``at bound``: the optimum is where a
  fixed ladder was cut, e.g. beta2 0.5; ``at limit``: the optimum is a limit of the
  feasible range, e.g. warmup 0, a constrained optimum that is not flagged) and
  whether it is ``final`` (the last
  walk of that coordinate at that cell: its value is the one the cell trains with);
- :func:`cell_flags`: for each tuned cell (optimizer, size, budget), the flagged
  settings it trains with: its own final walks, and those it inherits (a budget re-tuned
  only in its learning rate keeps the rest of its size's 1x settings; a smaller size
  keeps the largest size's betas, weight decay and warmup), plus a coordinate descent
  still moving at its pass cap;
- :func:`speedup_flags`: the flags a speedup at (optimizer, size, budget) rests on (its
  own cell's and the baseline's at that size). A speedup with a flag is "not identified".
- :func:`descent_flags`: the same rule for the capped coordinate descent of the ``small``
  and ``medium`` sweeps (stages ``"base w16 1x"``, ``"retune w96 1x"``): a tuned setting
  that is the lowest or highest value its stage tried is flagged (``at limit`` excepted);
- :func:`size_flags`: every flag a size's findings rest on, for either protocol (any
  optimizer's tuned cell at that size, at the budget every size is tuned at). A size with
  a flag has no identified speedup: the speedup of an optimizer tuned less than it could
  be, or over a baseline tuned less, measures the tuning, not the optimizer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import xarray as xr

from scalinglab.studies.optimizers.walk import walk_table

#: Phases in the order they run (a later walk of a coordinate at a cell replaces it).
PHASES = ("A", "B", "C", "D")


def path_table(ds: xr.Dataset) -> pd.DataFrame:
    """The tuning path of a sweep's dataset: one row per evaluation (columns without the
    ``tuning_`` prefix: ``search, stage, round, coordinate, value, objective, config,
    decision, step, incumbent``)."""
    path = ds[[v for v in ds.data_vars if str(v).startswith("tuning_")]].to_dataframe()
    path.columns = [str(c).removeprefix("tuning_") for c in path.columns]
    return path.reset_index(drop=True)


def search_space(sweep: Any) -> pd.DataFrame:
    """What a sweep's tuning could try, as a table: for the walk protocol (a sweep with
    tuning seeds) one row per walked setting with its ladder (and its feasible limit,
    :data:`.config.WALK_LIMITS`); for coordinate descent one row per optimizer, a column
    per hyperparameter with its grid."""
    from scalinglab.studies.optimizers.config import WALK_LIMITS

    def show(vals: Iterable[float]) -> str:
        return ", ".join(f"{v:g}" for v in vals)

    if sweep.tune_seeds:
        return pd.DataFrame(
            [
                {"setting": k, "ladder": show(v), "feasible limit": show(WALK_LIMITS.get(k, ()))}
                for k, v in sweep.ladders().items()
            ]
        ).set_index("setting")
    grids = {o: {k: show(v) for k, v in sweep.grid(o).items()} for o in sweep.optimizers}
    return pd.DataFrame(grids).T.fillna("")


def parse_stage(stage: str) -> tuple[str, str, float]:
    """``"A lr w32 1x"`` -> ``("A", "w32", 1.0)``.

    Raises
    ------
    ValueError
        A stage not written ``<phase> <what> <size> <multiple>x``.
    """
    parts = str(stage).split()
    if len(parts) != 4 or parts[0] not in PHASES or not parts[3].endswith("x"):
        raise ValueError(f"tuning stage {stage!r} is not '<phase A-D> <what> <size> <m>x'")
    return parts[0], parts[2], float(parts[3][:-1])


def curves(
    path: pd.DataFrame,
    *,
    ladders: Mapping[str, Sequence[float]],
    max_passes: int,
    limits: Mapping[str, Sequence[float]] | None = None,
) -> pd.DataFrame:
    """One row per walk of a walk-protocol path, with its end state.

    Parameters
    ----------
    path
        :func:`path_table` of a walk-protocol sweep.
    ladders
        Fixed ladders of the coordinates other than ``lr`` (the protocol's
        ``config.WALK_LADDERS`` with the sweep's ``walk_ladders``: ``SweepConfig.ladders()``); ``lr`` grows without end.
    max_passes
        The sweep's ``walk_max_passes``: a descent over several coordinates whose last
        pass still moved at that cap is flagged ``still moving``.
    limits
        Ladder ends that are limits of the feasible range (the config's ``WALK_LIMITS``):
        an optimum there reads ``at limit`` (a constrained optimum, not flagged).

    Returns
    -------
    pandas.DataFrame
        :func:`.walk.walk_table`'s columns (``search`` is the optimizer) plus ``phase,
        size, multiple``, ``status`` (``interior``, ``at limit``, ``on edge``, ``at
        bound``; only ``on edge`` and ``at bound`` are flagged),
        ``final`` (bool), ``still_moving`` (bool, the walk's descent).
    """
    table = walk_table(path)
    if not len(table):
        return table
    parsed = [parse_stage(s) for s in table.stage]
    table["phase"] = [p[0] for p in parsed]
    table["size"] = [p[1] for p in parsed]
    table["multiple"] = [p[2] for p in parsed]
    status = []
    for r in table.itertuples():
        if r.interior:
            status.append("interior")
            continue
        if r.coordinate == "lr":
            status.append("on edge")
            continue
        lad = [float(v) for v in ladders.get(r.coordinate, ())] + list(r.values)
        end = min(lad) if r.best == min(r.values) else max(lad)
        if r.best != end:
            status.append("on edge")
        elif end in [float(v) for v in (limits or {}).get(r.coordinate, ())]:
            status.append("at limit")
        else:
            status.append("at bound")
    table["status"] = status
    moving = set()
    for key, g in path[path.coordinate != ""].groupby(["search", "stage"], sort=False):
        last = g[g["round"] == g["round"].max()]
        if (
            g.coordinate.nunique() > 1
            and g["round"].max() >= max_passes
            and (last.decision == "moved").any()
        ):
            moving.add(key)
    table["still_moving"] = [
        (s, st) in moving for s, st in zip(table.search, table.stage, strict=True)
    ]
    order = {p: i for i, p in enumerate(PHASES)}
    table["_o"] = [order[p] for p in table.phase]
    last = (
        table.sort_values(["_o", "round"])
        .groupby(["search", "size", "multiple", "coordinate"], sort=False)
        .tail(1)
    )
    table["final"] = table.index.isin(last.index)
    return table.drop(columns="_o")


def cell_flags(
    table: pd.DataFrame, *, sizes: Sequence[str], tune_multiple: float
) -> dict[tuple[str, str, float], list[str]]:
    """The flagged settings each tuned cell trains with (empty list: every one interior).

    Parameters
    ----------
    table
        :func:`curves`.
    sizes
        The sweep's sizes, smallest first (the last one's settings reach the others).
    tune_multiple
        The budget every size is tuned at (other budgets re-walk the learning rate only).

    Returns
    -------
    dict
        ``(optimizer, size, multiple) -> ["lr on edge (C lr w32 1x)", ...]``.
    """
    if not len(table):
        return {}
    own: dict[tuple[str, str, float], dict[str, str]] = {}
    moving: dict[tuple[str, str, float], list[str]] = {}
    for r in table[table.final].itertuples():
        key = (str(r.search), str(r.size), float(r.multiple))
        if r.status not in ("interior", "at limit"):
            own.setdefault(key, {})[r.coordinate] = f"{r.coordinate} {r.status} ({r.stage})"
        else:
            own.setdefault(key, {})[r.coordinate] = ""
        if r.still_moving:
            moving.setdefault(key, []).append(f"still moving after its passes ({r.stage})")
    big = sizes[-1]
    out = {}
    for o, size, m in own:
        chain = [(o, size, m)]
        if m != tune_multiple:
            chain.append((o, size, tune_multiple))
        if size != big:
            chain.append((o, big, tune_multiple))
        merged: dict[str, str] = {}
        extra: list[str] = []
        for key in reversed(chain):  # the cell's own walks last: they replace inherited ones
            merged.update(own.get(key, {}))
            extra += moving.get(key, [])
        out[(o, size, m)] = [v for v in merged.values() if v] + sorted(set(extra))
    return out


def _nearest(flags: Mapping[tuple[str, str, float], list[str]], o: str, size: str, m: float):
    have = [k[2] for k in flags if k[0] == o and k[1] == size]
    if not have:
        return None
    return (o, size, min(have, key=lambda x: (abs(math.log(x / m)), x)))


def speedup_flags(
    flags: Mapping[tuple[str, str, float], list[str]],
    optimizers: Iterable[str],
    size: str,
    multiple: float,
    *,
    baseline: str = "adamw",
) -> list[str]:
    """The flags a speedup at ``(size, multiple)`` of ``optimizers`` rests on: each one's
    cell (the nearest tuned budget at that size, as the sweep assigns settings) and every
    tuned cell of the baseline at that size (its ``L(D)`` fit uses all its budgets)."""
    out: list[str] = []
    for o in optimizers:
        if o == baseline:
            continue
        key = _nearest(flags, o, size, multiple)
        out += [f"{o}: {f}" for f in (flags.get(key, []) if key else [])]
    for k, fl in flags.items():
        if k[0] == baseline and k[1] == size:
            out += [f"{baseline} {k[2]:g}x: {f}" for f in fl]
    return list(dict.fromkeys(out))


def overview(
    table: pd.DataFrame, flags: Mapping[tuple[str, str, float], list[str]]
) -> pd.DataFrame:
    """The final walks as the report shows them: one row per (optimizer, size, budget,
    coordinate): values tried, objectives (mean over the tuning seeds), the optimum, the
    end state, and whether the cell trains with any flagged setting."""
    if not len(table):
        return pd.DataFrame()
    t = table[table.final].copy()
    t["tried"] = [", ".join(f"{v:g}" for v in vs) for vs in t["values"]]
    t["objective"] = [", ".join(f"{v:.4f}" for v in vs) for vs in t["objectives"]]
    t["cell flagged"] = [
        bool(flags.get((str(o), str(s), float(m))))
        for o, s, m in zip(t.search, t["size"], t.multiple, strict=True)
    ]
    cols = [
        "search",
        "size",
        "multiple",
        "coordinate",
        "stage",
        "tried",
        "objective",
        "best",
        "status",
        "cell flagged",
    ]
    return t[cols].rename(columns={"search": "optimizer"}).reset_index(drop=True)


def descent_flags(
    path: pd.DataFrame, *, limits: Mapping[str, Sequence[float]] | None = None
) -> dict[tuple[str, str], dict[str, str]]:
    """The flagged settings of each stage of a coordinate-descent sweep.

    Parameters
    ----------
    path
        :func:`path_table` of a sweep tuned by
        :class:`~scalinglab.studies.optimizers.tuning.CoordinateDescent` (stages
        ``"<base|retune> <size> <multiple>x"``).
    limits
        Feasible limits (``WALK_LIMITS``): an optimum there is not flagged.

    Returns
    -------
    dict
        ``(optimizer, stage) -> {coordinate: flag}`` for every coordinate the stage
        tuned, the flag ``""`` when its optimum lies strictly inside the values the stage
        tried (or at a feasible limit), else ``"beta2=0.95, the lowest of 0.95-0.999
        (base w16 1x)"``. The optimum is the stage's best configuration.
    """
    out: dict[tuple[str, str], dict[str, str]] = {}
    for (search, stage), g in path.groupby(["search", "stage"], sort=False):
        cfgs = [json.loads(c) for c in g["config"]]
        best = cfgs[int(g["objective"].astype(float).to_numpy().argmin())]
        flags: dict[str, str] = {}
        for c in dict.fromkeys(x for x in g["coordinate"] if x):
            tried = sorted({float(cfg[c]) for cfg in cfgs if c in cfg})
            v = float(best[c])
            if len(tried) < 2 or tried[0] < v < tried[-1]:
                flags[c] = ""
            elif v == tried[0] and v in [float(x) for x in (limits or {}).get(c, ())]:
                flags[c] = ""  # a constrained optimum: nothing below it can be run
            else:
                side = "lowest" if v == tried[0] else "highest"
                flags[c] = f"{c}={v:g}, the {side} of {tried[0]:g}-{tried[-1]:g} ({stage})"
        out[(str(search), str(stage))] = flags
    return out


def size_flags(
    ds: xr.Dataset,
    *,
    ladders: Mapping[str, Sequence[float]],
    max_passes: int,
    limits: Mapping[str, Sequence[float]] | None,
    tune_multiple: float,
) -> dict[str, list[str]]:
    """Every flagged setting a size's findings rest on (empty list: none).

    Parameters
    ----------
    ds
        A sweep's dataset (``model_size`` smallest first; its ``tuning_*`` path).
    ladders, max_passes, limits
        The walk protocol's ladders, pass cap and limits (:func:`curves`); ``limits``
        also for a coordinate-descent sweep (:func:`descent_flags`).
    tune_multiple
        The budget every size is tuned at.

    Returns
    -------
    dict
        ``size -> ["adamw: beta2 at bound (B all w96 1x)", ...]``: each optimizer's flags
        at the size's ``tune_multiple`` cell. A walk-protocol sweep's come from
        :func:`cell_flags`; a coordinate-descent sweep's from its base stage (whose
        settings every size keeps), replaced coordinate by coordinate by the size's own
        re-tuning stage.
    """
    sizes = [str(s) for s in ds.model_size.values]
    if not any(str(v).startswith("tuning_") for v in ds.data_vars):
        return {s: [] for s in sizes}
    path = path_table(ds)
    out: dict[str, list[str]] = {s: [] for s in sizes}
    if len(path) and str(path.stage.iloc[0]).split()[0] in PHASES:
        table = curves(path, ladders=ladders, max_passes=max_passes, limits=limits)
        for (o, size, m), fl in cell_flags(table, sizes=sizes, tune_multiple=tune_multiple).items():
            if m == tune_multiple and size in out:
                out[size] += [f"{o}: {f}" for f in fl]
        return out
    per_stage = descent_flags(path, limits=limits)
    for o in dict.fromkeys(o for o, _ in per_stage):
        stages = [st for oo, st in per_stage if oo == o]
        base = {
            k: v for st in stages if st.startswith("base") for k, v in per_stage[(o, st)].items()
        }
        for size in sizes:
            merged = dict(base)
            for st in stages:
                parts = st.split()
                if parts[0] != "base" and parts[1] == size and parts[2] == f"{tune_multiple:g}x":
                    merged.update(per_stage[(o, st)])
            out[size] += [f"{o}: {v}" for v in merged.values() if v]
    return out
