"""Tables of final losses, the input of the speedup analysis
(:mod:`scalinglab.fitting.speedup`): a user's or a paper's table checked with errors
that name the file, column and row (:func:`validate_table`, :func:`load_loss_table`),
and an optimizer sweep's Dataset as the same table (:func:`sweep_table`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.errors import InputError

#: Columns every loss table has (``seed`` is optional).
REQUIRED = ("optimizer", "model_size", "data_multiple", "loss")


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
    from scalinglab.data.tables import label_column, numeric_column, require_columns

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
    from scalinglab.data.tables import read_table

    return validate_table(read_table(path, required=REQUIRED), file=path)


def sweep_table(ds: Any, *, variable: str = "final_loss") -> pd.DataFrame:
    """The final-loss table of an optimizer sweep Dataset (runs with status ``ok`` only).

    Returns
    -------
    pandas.DataFrame
        Columns ``optimizer, model_size, data_multiple, seed, loss``.
    """
    df = ds[[variable, "status"]].to_dataframe().reset_index()
    df = df[(df["status"] == "ok") & np.isfinite(df[variable])]
    return df.rename(columns={variable: "loss"})[
        ["optimizer", "model_size", "data_multiple", "seed", "loss"]
    ].reset_index(drop=True)
