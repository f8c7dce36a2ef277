"""Tidy tables from CSV, Parquet or netCDF, validated column by column.

Every study that reads a user's own logs goes through :func:`read_table` and the
column checks here, so that a bad file gets the same kind of error everywhere:
the file, the column and the 1-based data row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from scalinglab.errors import InputError

TABLE_SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".nc": "netcdf",
    ".nc4": "netcdf",
    ".netcdf": "netcdf",
}


def read_table(path: str | Path, *, required: Iterable[str] = ()) -> pd.DataFrame:
    """Read a tidy table and check that ``required`` columns are present.

    Parameters
    ----------
    path
        ``.csv``, ``.tsv``, ``.parquet`` or ``.nc`` (a netCDF Dataset is flattened
        with ``to_dataframe().reset_index()``, so its dims become columns).
    required
        Column names that must exist.

    Returns
    -------
    pandas.DataFrame
        One row per record, index reset to 0..n-1 (data row ``i`` is row ``i+1``
        in error messages).
    """
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", file=p)
    kind = TABLE_SUFFIXES.get(p.suffix.lower())
    if kind is None:
        raise InputError(
            f"unknown table format {p.suffix!r}; use one of {sorted(TABLE_SUFFIXES)}", file=p
        )
    try:
        if kind == "csv":
            df = pd.read_csv(p)
        elif kind == "tsv":
            df = pd.read_csv(p, sep="\t")
        elif kind == "parquet":
            df = pd.read_parquet(p)
        else:
            import xarray as xr

            with xr.open_dataset(p, engine="h5netcdf") as ds:
                df = ds.load().to_dataframe().reset_index()
    except InputError:
        raise
    except Exception as exc:  # parser errors carry their own line numbers
        raise InputError(f"could not be read as {kind}: {exc}", file=p) from exc
    df = df.reset_index(drop=True)
    require_columns(df, required, file=p)
    return df


def require_columns(df: pd.DataFrame, columns: Iterable[str], *, file: str | Path | None) -> None:
    """Raise naming the first missing column and the columns that do exist."""
    for col in columns:
        if col not in df.columns:
            raise InputError(
                f"missing column; the table has {list(map(str, df.columns))}", file=file, column=col
            )


def numeric_column(
    df: pd.DataFrame,
    column: str,
    *,
    file: str | Path | None,
    allow_nan: bool = False,
    positive: bool = False,
    why_positive: str = "logarithms are taken",
) -> np.ndarray:
    """Return ``df[column]`` as float64, erroring on the first bad row.

    Parameters
    ----------
    allow_nan
        If False, a missing or NaN value is an error naming its row.
    positive
        If True, values must be > 0 (``why_positive`` explains why in the error).

    Returns
    -------
    numpy.ndarray
        Shape ``(len(df),)``, dtype float64.
    """
    require_columns(df, [column], file=file)
    raw = df[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(values) & raw.notna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"not a number: {_plain(raw.iloc[i])}", file=file, column=column, row=i + 1
        )
    if not allow_nan:
        nan = ~np.isfinite(values)
        if nan.any():
            i = int(np.flatnonzero(nan)[0])
            raise InputError(
                f"missing or non-finite value ({_plain(raw.iloc[i])})",
                file=file,
                column=column,
                row=i + 1,
            )
    if positive:
        nonpos = values <= 0
        if nonpos.any():
            i = int(np.flatnonzero(nonpos)[0])
            raise InputError(
                f"value {float(values[i])!r} must be > 0 ({why_positive})",
                file=file,
                column=column,
                row=i + 1,
            )
    return values


def label_column(df: pd.DataFrame, column: str, *, file: str | Path | None) -> np.ndarray:
    """Return ``df[column]`` as strings, erroring on the first empty cell.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(df),)``, dtype object (str).
    """
    require_columns(df, [column], file=file)
    raw = df[column]
    missing = raw.isna().to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise InputError("empty label", file=file, column=column, row=i + 1)
    return raw.astype(str).to_numpy(dtype=object)


def first_row_where(mask: Sequence[bool] | np.ndarray) -> int:
    """1-based data row of the first True in ``mask`` (for error messages)."""
    return int(np.flatnonzero(np.asarray(mask))[0]) + 1


def _plain(value: object) -> str:
    """A cell as an error shows it: a plain number (``nan``, ``inf``, ``-1.5``), a missing
    cell as ``empty``, text quoted; never a numpy repr such as ``np.float64(nan)``."""
    if value is None or value is pd.NA or value is pd.NaT:
        return "empty"
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return f"{float(value):g}"
    return repr(str(value))
