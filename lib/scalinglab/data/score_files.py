"""The score files :func:`scalinglab.data.scores.load_scores` reads, one reader per
format, each returning the file's records as a tidy frame.

Records have columns ``algorithm``, ``task``, ``run``, ``score`` (and ``step`` when
the file has one), plus ``file`` and ``row`` (the table row, for error messages;
None for JSON and netCDF). The formats (tables, rliable-style JSON, netCDF) are
described in :mod:`scalinglab.data.scores`; this module only reads and locates:
validation across files is the loader's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.data.tables import TABLE_SUFFIXES, label_column, numeric_column, require_columns
from scalinglab.errors import InputError

TABLE_FILE_SUFFIXES = {s for s, k in TABLE_SUFFIXES.items() if k != "netcdf"}
NETCDF_SUFFIXES = {s for s, k in TABLE_SUFFIXES.items() if k == "netcdf"}
#: File suffixes :func:`load_scores` reads.
SUFFIXES = tuple(sorted(TABLE_FILE_SUFFIXES | NETCDF_SUFFIXES | {".json"}))
KEYS = ["algorithm", "task", "run"]
SCORE_COLUMNS = [*KEYS, "score"]


def expand_paths(paths: str | Path | Sequence[str | Path]) -> list[Path]:
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    if not items:
        raise InputError("no score file given")
    files: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in SUFFIXES)
            if not found:
                raise InputError(f"directory has no score file ({', '.join(SUFFIXES)})", file=p)
            files.extend(found)
        elif not p.exists():
            raise InputError("no such file", file=p)
        elif p.suffix.lower() not in SUFFIXES:
            raise InputError(
                f"unknown score file format {p.suffix!r}; use one of {list(SUFFIXES)}", file=p
            )
        else:
            files.append(p)
    return files


def run_labels(labels: pd.Series) -> pd.Series:
    """Run labels as int where they all are integers, else as str."""
    if isinstance(labels.dtype, pd.CategoricalDtype):  # decide on the distinct labels only
        cats = labels.cat.categories
        as_num = pd.to_numeric(pd.Series(cats), errors="coerce")
        if as_num.notna().all() and (as_num == np.round(as_num)).all():
            codes = labels.cat.codes.to_numpy()
            return pd.Series(as_num.to_numpy(np.int64)[codes], index=labels.index)
        return labels
    as_num = pd.to_numeric(labels, errors="coerce")
    if as_num.notna().all() and (as_num == np.round(as_num)).all():
        return as_num.astype(np.int64)
    return labels.astype(str)


def _labels(df: pd.DataFrame, column: str, path: Path) -> pd.Series:
    """``df[column]`` as categorical str labels (one Python string per distinct label, not
    per row: a 10M-row table stays small), erroring on the first empty cell."""
    require_columns(df, [column], file=path)
    raw = df[column]
    missing = raw.isna().to_numpy()
    if missing.any():
        raise InputError(
            "empty label", file=path, column=column, row=int(np.flatnonzero(missing)[0]) + 1
        )
    cat = raw.astype("category")
    names = [str(c) for c in cat.cat.categories]
    if len(set(names)) != len(names):  # e.g. 1 and "1": let str() merge them
        return pd.Series(label_column(df, column, file=path), index=df.index)
    return cat.cat.rename_categories(names)


def _constant(value: str, n: int) -> pd.Categorical:
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), [value])


def from_table(df: pd.DataFrame, path: Path, rows: np.ndarray | None) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "algorithm": _labels(df, "algorithm", path),
            "task": _labels(df, "task", path),
            "run": _labels(df, "run", path),
            "score": numeric_column(df, "score", file=path, allow_nan=True),
        }
    )
    if "step" in df.columns:
        out["step"] = numeric_column(df, "step", file=path)
    out["file"] = _constant(str(path), len(out))
    out["row"] = np.arange(1, len(df) + 1) if rows is None else rows
    return out


def read_json(path: Path) -> pd.DataFrame:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not a JSON text file (byte {exc.start} is not UTF-8); expected "
            "{task: [run scores]}",
            file=path,
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON at line {exc.lineno}: {exc.msg}", file=path) from exc
    if not isinstance(data, dict):
        raise InputError(
            f"expected an object {{task: [run scores]}} (one file per algorithm), "
            f"got {type(data).__name__}",
            file=path,
        )
    if not data:
        raise InputError(f"no task in the file (algorithm {path.stem!r})", file=path)
    records = []
    for task, runs in data.items():
        if not isinstance(runs, list) or not runs:
            raise InputError(
                f"algorithm {path.stem!r}, task {task!r}: expected a non-empty list of run "
                f"scores, got {json.dumps(runs)[:60]}",
                file=path,
            )
        for i, value in enumerate(runs):
            if value is None:
                value = math.nan
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(
                    f"algorithm {path.stem!r}, task {task!r}, run {i}: score is not a number: "
                    f"{json.dumps(value)[:60]}",
                    file=path,
                )
            records.append((path.stem, str(task), i, float(value)))
    df = pd.DataFrame(records, columns=SCORE_COLUMNS)
    df["file"] = str(path)
    df["row"] = None
    return df


def read_netcdf(path: Path) -> tuple[pd.DataFrame, bool]:
    """Records of a netCDF file and whether NaN cells mean absent runs."""
    try:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            ds = ds.load()
    except Exception as exc:
        raise InputError(f"could not be read as netCDF: {exc}", file=path) from exc
    if all(c in ds.variables for c in SCORE_COLUMNS) and ds["score"].ndim == 1:
        return from_table(ds.to_dataframe().reset_index(), path, None), False
    names = list(ds.data_vars)
    if "score" in names:
        da = ds["score"]
    elif len(names) == 1:
        da = ds[names[0]]
    else:
        raise InputError(f"no variable 'score' and several data variables {names}", file=path)
    dims = set(map(str, da.dims))
    required = {"algorithm", "run", "task"}
    if not required <= dims or not dims <= required | {"step"}:
        raise InputError(
            f"variable {da.name!r} must have dims (algorithm, run, task[, step]), got "
            f"{tuple(da.dims)}; rename the dim that indexes seeds to 'run' and the one "
            "that indexes tasks to 'task'",
            file=path,
        )
    if not np.issubdtype(da.dtype, np.number):
        raise InputError(f"variable {da.name!r} is not numeric (dtype {da.dtype})", file=path)
    absent_is_nan = bool(int(da.attrs.get("absent_is_nan", 0)))
    for dim in da.dims:
        if dim not in da.coords:
            da = da.assign_coords({dim: np.arange(da.sizes[dim])})
    df = da.astype(float).to_dataframe(name="score").reset_index()
    df = df[[*KEYS, *(["step"] if "step" in dims else []), "score"]]
    df["algorithm"] = df["algorithm"].astype(str)
    df["task"] = df["task"].astype(str)
    df["file"] = str(path)
    df["row"] = None
    return df, absent_is_nan
