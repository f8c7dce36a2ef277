"""Tables of final losses: a user's table, or a paper's released file, checked row by row.

The speedup analysis (:mod:`scalinglab.fitting.speedup`, ``scalinglab speedup``) and the
optimizer study read their input here, so that a bad file gets the same error from both:
the file, the column and the 1-based data row.

Two layouts are read:

- the **loss table**: columns ``optimizer, model_size, data_multiple, loss`` and
  optionally ``seed`` (one row per run; :func:`validate_table`, :func:`load_loss_table`);
- the **released file** of Wen et al. 2025 (``final_losses.csv`` under
  ``data/published/fantastic_optimizers/``): columns ``optimizer, model_size,
  chinchilla, final_c4en_loss``, one row per (optimizer, size, multiple), the best run of
  that setting's hyperparameter sweep (:func:`read_released`).

:func:`read_loss_table` tells them apart by their columns: a file with ``chinchilla`` or
``final_c4en_loss`` and without the loss table's ``data_multiple``/``loss`` is a released
file, and a column it lacks is named by its released name.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from scalinglab.data.tables import label_column, numeric_column, read_table, require_columns
from scalinglab.errors import InputError
from scalinglab.paths import resolve_input

#: Columns every loss table has (``seed`` is optional).
REQUIRED = ("optimizer", "model_size", "data_multiple", "loss")
#: Columns of the paper's released ``final_losses.csv`` (Wen et al. 2025).
RELEASED_COLUMNS = ("optimizer", "model_size", "chinchilla", "final_c4en_loss")
#: Released name -> loss-table name.
RELEASED_RENAME = {"chinchilla": "data_multiple", "final_c4en_loss": "loss"}


def validate_table(df: pd.DataFrame, *, file: str | Path | None = None) -> pd.DataFrame:
    """Check and normalise a table of final losses.

    Columns ``optimizer, model_size, data_multiple, loss`` and optionally ``seed``.
    Errors name the file, column and 1-based data row.

    Returns
    -------
    pandas.DataFrame
        Columns ``optimizer, model_size`` (str), ``data_multiple, loss`` (float),
        ``seed`` (str, ``"0"`` when absent), ``row`` (1-based data row).
    """
    require_columns(df, REQUIRED, file=file)
    if len(df) == 0:
        raise InputError("the table has no rows", file=file)
    out = pd.DataFrame(
        {
            "optimizer": label_column(df, "optimizer", file=file),
            "model_size": label_column(df, "model_size", file=file),
            "data_multiple": numeric_column(
                df, "data_multiple", file=file, positive=True, why_positive="the law takes D^-alpha"
            ),
            "loss": numeric_column(
                df,
                "loss",
                file=file,
                positive=True,
                why_positive="a cross-entropy loss is positive",
            ),
            "seed": label_column(df, "seed", file=file)
            if "seed" in df.columns
            else np.full(len(df), "0", dtype=object),
            "row": np.arange(1, len(df) + 1),
        }
    )
    dup = out.duplicated(["optimizer", "model_size", "data_multiple", "seed"], keep="first")
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        r = out.iloc[i]
        what = (
            f"optimizer {r.optimizer!r}, model_size {r.model_size!r}, "
            f"data_multiple {r.data_multiple:g}"
        )
        if "seed" in df.columns:
            raise InputError(
                f"duplicate run ({what}, seed {r.seed!r})", file=file, column="seed", row=i + 1
            )
        raise InputError(
            f"duplicate run ({what}); add a 'seed' column to tell repeated runs apart",
            file=file,
            column="data_multiple",
            row=i + 1,
        )
    return out


def load_loss_table(path: str | Path) -> pd.DataFrame:
    """Read and validate a CSV/Parquet/netCDF table of final losses (:func:`validate_table`)."""
    return validate_table(read_table(path, required=REQUIRED), file=path)


def is_released(columns: pd.Index | list[str]) -> bool:
    """Whether a table's columns are the released file's rather than a loss table's."""
    cols = set(map(str, columns))
    return bool(cols & set(RELEASED_RENAME)) and not (cols & {"data_multiple", "loss"})


def released_frame(df: pd.DataFrame, *, file: str | Path | None) -> pd.DataFrame:
    """A released table (already read) in the loss table's columns, rows as in the file.

    A missing column is named by its released name (``final_c4en_loss``, not ``loss``).
    """
    missing = [c for c in RELEASED_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column of the paper's released format (columns "
            f"{', '.join(RELEASED_COLUMNS)}); the table has {list(map(str, df.columns))}",
            file=file,
            column=missing[0],
        )
    return df[list(RELEASED_COLUMNS)].rename(columns=RELEASED_RENAME).reset_index(drop=True)


def read_released(path: str | Path, *, max_multiple: float = 8.0) -> pd.DataFrame:
    """The paper's released final losses as a speedup table.

    Parameters
    ----------
    path
        ``final_losses.csv`` as released (columns ``optimizer, model_size, chinchilla,
        final_c4en_loss``) or a table already in the loss-table layout.
    max_multiple
        Keep data multiples up to this (the paper's speedup fits use 1-8x Chinchilla;
        the 16x runs came later and only for four optimizers).

    Returns
    -------
    pandas.DataFrame
        ``optimizer, model_size, data_multiple, loss``, one row per cell.
    """
    t = read_loss_table(path, max_multiple=max_multiple)
    return t[t.data_multiple <= max_multiple][list(REQUIRED)].reset_index(drop=True)


def read_loss_table(path: str | Path, *, max_multiple: float = 8.0) -> pd.DataFrame:
    """A validated table of final losses: the paper's released file or a loss table.

    A relative ``path`` that does not exist in the working directory is looked up from
    the repository root (:func:`scalinglab.paths.resolve_input`), as notebooks name
    committed files. Errors name the file, the column in the file's own layout (a
    released file's ``final_c4en_loss``, a loss table's ``loss``) and the data row.

    Parameters
    ----------
    max_multiple
        A released file's rows are kept up to this data multiple (the paper's speedup
        fits use 1-8x Chinchilla; the 16x runs came later and only for four
        optimizers); a loss table keeps every row.

    Returns
    -------
    pandas.DataFrame
        As :func:`validate_table` (its ``row`` column is the file's data row).
    """
    path = resolve_input(path)
    df = read_table(path)
    released = is_released(df.columns)
    if released:
        df = released_frame(df, file=path)
    try:
        t = validate_table(df, file=path)
    except InputError as exc:
        back = {v: k for k, v in RELEASED_RENAME.items()}
        if not released or exc.column not in back:
            raise
        raise InputError(exc.reason, file=path, column=back[exc.column], row=exc.row) from None
    if released:
        t = t[t.data_multiple <= max_multiple].reset_index(drop=True)
    return t
