"""Tables of final losses, the input of the speedup analysis
(:mod:`scalinglab.fitting.speedup`): an optimizer sweep's Dataset as that table
(:func:`sweep_table`). Reading and checking a user's or a paper's table from a file lives
with the other readers, in :mod:`scalinglab.data.loss_tables`; its :func:`validate_table`,
:func:`load_loss_table` and ``REQUIRED`` are re-exported here for existing callers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scalinglab.data.loss_tables import REQUIRED, load_loss_table, validate_table

__all__ = ["REQUIRED", "load_loss_table", "sweep_table", "validate_table"]


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
