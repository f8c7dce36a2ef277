"""Per-run scores of several algorithms on several tasks, read and validated into xarray.

Result: a float :class:`xarray.DataArray` with dims ``(algorithm, run, task)``
(``(algorithm, run, task, step)`` with ``step="all"``), NaN marking an *absent*
run. Ragged run counts per task are padded with NaN; the statistics in
:mod:`scalinglab.stats` treat NaN as absent, never as a score.

Accepted inputs (one path, several paths, or a directory, whose supported files
are read in name order; all are merged):

- Tidy table, ``.csv``/``.tsv``/``.parquet``/``.pq``: columns ``algorithm, task,
  run, score`` and optionally ``step``. With ``step``, ``step="last"`` (default)
  keeps, per algorithm, the rows at that algorithm's largest step (runs without a
  row at that step become absent, with a warning); ``step="all"`` keeps a
  ``step`` dim.
- rliable-style JSON, ``.json``: one file per algorithm, the algorithm's name is
  the file stem, content ``{task: [score of run 0, run 1, ...]}``; ``null`` or
  ``NaN`` is a NaN score.
- netCDF, ``.nc``/``.nc4``/``.netcdf``: a variable ``score`` (or the only data
  variable) with dims ``algorithm, run, task`` (optionally ``step``), or a tidy
  table stored as 1-D variables. NaN cells are NaN scores unless the variable
  has the attribute ``absent_is_nan=1`` (written by :func:`save_scores`), in
  which case they are absent runs.

NaN scores in a file: ``nan="error"`` (default) raises naming the file, the
algorithm, task and run (and the row for tables); ``nan="drop"`` warns with the
count and the first such cell, and treats them as absent runs. Duplicate
``(algorithm, task, run[, step])`` records, non-numeric or infinite scores, and
an algorithm lacking a task that others have are errors.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.data.plain_scores import NAN_POLICIES
from scalinglab.data.score_files import (
    KEYS,
    NETCDF_SUFFIXES,
    SCORE_COLUMNS,
    SUFFIXES,
    expand_paths,
    from_table,
    read_json,
    read_netcdf,
    run_labels,
)
from scalinglab.data.tables import label_column, numeric_column, read_table
from scalinglab.errors import InputError

__all__ = [
    "NAN_POLICIES",
    "SUFFIXES",
    "load_references",
    "load_scores",
    "save_scores",
    "scores_from_dict",
]


def _label(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


def _where(rec: pd.Series) -> str:
    cell = ", ".join(
        f"{k} {_label(rec[k])!r}" for k in (*KEYS, "step") if k in rec and pd.notna(rec[k])
    )
    return cell


def _row(rec: pd.Series) -> int | None:
    return None if rec["row"] is None or pd.isna(rec["row"]) else int(rec["row"])


def _raise_at(rec: pd.Series, message: str) -> None:
    row = _row(rec)
    raise InputError(
        f"{_where(rec)}: {message}",
        file=rec["file"],
        column=None if row is None else "score",
        row=row,
    )


def _select_step(df: pd.DataFrame, step: str) -> pd.DataFrame:
    if step == "all":
        return df
    last = df.groupby("algorithm", sort=False)["step"].transform("max")
    keep = df[df["step"] == last]
    runs = df.drop_duplicates(KEYS)
    lacking = len(runs) - len(keep.drop_duplicates(KEYS))
    if lacking:
        warnings.warn(
            f"{lacking} run(s) have no score at their algorithm's last step and are "
            "treated as absent (use step='all' to keep every step)",
            UserWarning,
            stacklevel=3,
        )
    return keep.drop(columns="step")


def load_scores(
    paths: str | Path | Sequence[str | Path], *, nan: str = "error", step: str = "last"
) -> xr.DataArray:
    """Read score files into a ``(algorithm, run, task)`` DataArray.

    Parameters
    ----------
    paths
        A file, a directory (its supported files), or a list of either.
    nan
        ``"error"`` or ``"drop"`` (see the module docstring).
    step
        ``"last"`` or ``"all"``, for tables with a ``step`` column.

    Returns
    -------
    xarray.DataArray
        Named ``score``, dims ``(algorithm, run, task)`` (plus ``step`` with
        ``step="all"``), float64, NaN = absent run. Algorithms and tasks keep
        their order of first appearance; runs are sorted. attrs: ``sources``,
        ``nan_policy``, ``dropped_nan``, ``absent_is_nan=1``.

    Raises
    ------
    scalinglab.errors.InputError
        Naming the file and column/row or algorithm/task/run of the problem.
    """
    if nan not in NAN_POLICIES:
        raise InputError(f"unknown NaN policy {nan!r}; choose from {list(NAN_POLICIES)}")
    if step not in ("last", "all"):
        raise InputError(f"unknown step selection {step!r}; choose 'last' or 'all'")
    files = expand_paths(paths)
    frames, absent_ok = [], []
    for path in files:
        suffix = path.suffix.lower()
        if suffix == ".json":
            frames.append(read_json(path))
            absent_ok.append(False)
        elif suffix in NETCDF_SUFFIXES:
            df, ok = read_netcdf(path)
            frames.append(df)
            absent_ok.append(ok)
        else:
            frames.append(from_table(read_table(path, required=SCORE_COLUMNS), path, None))
            absent_ok.append(False)
    with_step = ["step" in f.columns for f in frames]
    if any(with_step) and not all(with_step):
        raise InputError(
            "some files have a 'step' column and others do not",
            file=frames[with_step.index(False)]["file"].iloc[0],
        )
    frames = [f[f["score"].notna()] if ok else f for f, ok in zip(frames, absent_ok, strict=True)]
    df = pd.concat(frames, ignore_index=True)
    if df.empty:
        raise InputError("no score in the file(s)", file=files[0])
    df["run"] = run_labels(df["run"])
    infinite = np.isinf(df["score"].to_numpy())
    if infinite.any():
        _raise_at(df[infinite].iloc[0], f"score is not finite ({df['score'][infinite].iloc[0]})")
    missing = df["score"].isna().to_numpy()
    if missing.any():
        first = df[missing].iloc[0]
        if nan == "error":
            _raise_at(
                first, "score is NaN (use nan='drop' / --nan drop to treat NaN runs as absent)"
            )
        row = "" if _row(first) is None else f" (row {_row(first)})"
        warnings.warn(
            f"{int(missing.sum())} NaN score(s) dropped and treated as absent runs; first: "
            f"file {first['file']}, {_where(first)}{row}",
            UserWarning,
            stacklevel=2,
        )
        df = df[~missing]
    keys = KEYS + (["step"] if all(with_step) else [])
    dup = df.duplicated(keys, keep=False).to_numpy()
    if dup.any():
        first = df[dup].iloc[0]
        same = df[dup & (df[keys] == first[keys]).all(axis=1).to_numpy()]
        places = "; ".join(
            f"file {r['file']}" + ("" if _row(r) is None else f" row {_row(r)}")
            for _, r in same.iterrows()
        )
        raise InputError(f"duplicate record for {_where(first)}: {places}")
    if all(with_step):
        df = _select_step(df, step)
    return _assemble(
        df,
        sources=[str(p) for p in pd.unique(df["file"].astype(str))],
        nan=nan,
        dropped=int(missing.sum()),
    )


def _codes(values: pd.Series, *, sort: bool) -> tuple[np.ndarray, list]:
    """Integer codes of ``values`` and their labels (first-appearance order, or sorted)."""
    labels = pd.unique(
        values.to_numpy() if not isinstance(values.dtype, pd.CategoricalDtype) else values
    )
    labels = [_label(v) for v in labels]
    if sort:
        labels = sorted(labels)
    return pd.Index(labels).get_indexer(values), labels


def _assemble(df: pd.DataFrame, *, sources: list[str], nan: str, dropped: int) -> xr.DataArray:
    """Scatter the (already checked, duplicate-free) records into a dense array: vectorized,
    memory of the result plus a few int arrays (no MultiIndex, no per-row Python objects)."""
    a_code, algorithms = _codes(df["algorithm"], sort=False)
    t_code, tasks = _codes(df["task"], sort=False)
    n_a, n_t = len(algorithms), len(tasks)
    have = np.zeros((n_a, n_t), dtype=bool)
    have[a_code, t_code] = True
    for a in np.flatnonzero(~have.all(axis=1)):
        lacking = [tasks[t] for t in np.flatnonzero(~have[a])]
        files = sorted(set(df["file"].astype(str)[a_code == a]))
        raise InputError(
            f"algorithm {algorithms[a]!r} has no score for task {lacking[0]!r} "
            f"({len(lacking)} task(s) missing; every algorithm needs every task)",
            file=files[0],
        )
    r_code, runs = _codes(df["run"], sort=True)
    dims = ["algorithm", "run", "task"]
    shape, index = [n_a, len(runs), n_t], [a_code, r_code, t_code]
    coords: dict[str, Any] = {"algorithm": algorithms, "run": runs, "task": tasks}
    if "step" in df.columns:
        s_code, steps = _codes(df["step"], sort=True)
        dims.append("step")
        shape.append(len(steps))
        index.append(s_code)
        coords["step"] = steps
    values = np.full(shape, np.nan)
    values[tuple(index)] = df["score"].to_numpy(dtype=float)
    if runs and isinstance(runs[0], str):  # as xarray's MultiIndex path made them
        coords["run"] = np.array(runs, dtype=object)
    da = xr.DataArray(values, dims=dims, coords=coords, name="score")
    da.attrs = {"sources": sources, "nan_policy": nan, "dropped_nan": dropped, "absent_is_nan": 1}
    return da


def load_references(path: str | Path) -> tuple[dict[str, float], dict[str, float]]:
    """Per-task ``random`` and ``reference`` scores for :func:`scalinglab.stats.normalize`.

    Parameters
    ----------
    path
        A table (``.csv``, ``.tsv``, ``.parquet``, ``.nc``) with columns ``task,
        random, reference``: one row per task, finite numbers, ``reference != random``.

    Returns
    -------
    tuple of dict
        ``({task: random}, {task: reference})``.

    Raises
    ------
    scalinglab.errors.InputError
        A missing column, an empty task, a non-numeric score, a repeated task, or
        equal random and reference scores, naming the file, column and row.
    """
    df = read_table(path, required=["task", "random", "reference"])
    tasks = label_column(df, "task", file=path)
    lo = numeric_column(df, "random", file=path)
    hi = numeric_column(df, "reference", file=path)
    seen: dict[str, int] = {}
    for i, task in enumerate(tasks):
        if task in seen:
            raise InputError(
                f"task {task!r} repeats row {seen[task] + 1}", file=path, column="task", row=i + 1
            )
        seen[task] = i
        if lo[i] == hi[i]:
            raise InputError(
                f"random and reference scores of task {task!r} are equal "
                f"({float(lo[i])!r}): nothing to normalize by",
                file=path,
                column="reference",
                row=i + 1,
            )
    return (dict(zip(tasks, lo.tolist(), strict=True)), dict(zip(tasks, hi.tolist(), strict=True)))


def save_scores(scores: xr.DataArray, path: str | Path) -> Path:
    """Write scores to netCDF so that :func:`load_scores` reads NaN cells as absent runs."""
    da = scores.copy()
    da.name = "score"
    da.attrs = {k: v for k, v in da.attrs.items() if k != "sources"} | {"absent_is_nan": 1}
    path = Path(path)
    da.to_dataset().to_netcdf(path, engine="h5netcdf")
    return path


def scores_from_dict(
    score_dict: Mapping[str, np.ndarray], *, tasks: Sequence[str] | None = None
) -> xr.DataArray:
    """Convert rliable's ``{algorithm: array (runs, tasks)}`` to a scores DataArray.

    Algorithms may have different run counts (padded with NaN = absent).

    Returns
    -------
    xarray.DataArray
        Dims ``(algorithm, run, task)``.
    """
    if not score_dict:
        raise InputError("no algorithm in the score dict")
    arrays = {str(k): np.asarray(v, dtype=float) for k, v in score_dict.items()}
    for name, arr in arrays.items():
        if arr.ndim != 2:
            raise InputError(
                f"algorithm {name!r}: expected a (runs, tasks) array, got shape {arr.shape}"
            )
    n_tasks = {a.shape[1] for a in arrays.values()}
    if len(n_tasks) != 1:
        raise InputError(f"algorithms have different numbers of tasks: {sorted(n_tasks)}")
    m = n_tasks.pop()
    labels = list(tasks) if tasks is not None else [f"task{j}" for j in range(m)]
    if len(labels) != m:
        raise InputError(f"{len(labels)} task labels for {m} task columns")
    runs = max(a.shape[0] for a in arrays.values())
    out = np.full((len(arrays), runs, m), np.nan)
    for i, arr in enumerate(arrays.values()):
        out[i, : arr.shape[0]] = arr
    return xr.DataArray(
        out,
        dims=("algorithm", "run", "task"),
        coords={"algorithm": list(arrays), "run": np.arange(runs), "task": labels},
        name="score",
    )
