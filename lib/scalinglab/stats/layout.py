"""Validation of labelled score arrays before any statistic touches them.

The classic rliable mistake is a wrong axis: passing ``(tasks, runs)`` or
``(runs, episodes)`` where ``(runs, tasks)`` was meant silently gives absurdly
narrow intervals. Here scores are an :class:`xarray.DataArray` whose dims are
*named*; :func:`check_scores` accepts them in any order, transposes them to
``(algorithm, run, task[, step])`` and refuses anything else with a message
saying which dims it found and how to fix them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from scalinglab.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

#: Dims every score array must have, in canonical order.
SCORE_DIMS = ("algorithm", "run", "task")


def _fail(message: str) -> None:
    raise InputError(message)


def _label(value: object) -> object:
    """Plain Python label (so messages read 'B', not np.str_('B'))."""
    return value.item() if isinstance(value, np.generic) else value


def check_scores(
    scores: xr.DataArray,
    *,
    required: Sequence[str] = SCORE_DIMS,
    optional: Sequence[str] = (),
    what: str = "scores",
) -> xr.DataArray:
    """Validate dims, labels and values; return the array in canonical dim order.

    Parameters
    ----------
    scores
        Float scores with dims ``required`` (any order) plus any of ``optional``.
        NaN marks an absent run.
    required, optional
        Dim names.
    what
        Name used in error messages.

    Returns
    -------
    xarray.DataArray
        Float64, dims ``(*required, *optional present)``, every dim with a
        coordinate (positions 0..n-1 where there was none).

    Raises
    ------
    scalinglab.errors.InputError
        Not a DataArray; a missing or unexpected dim; repeated labels; a
        non-numeric dtype; a task without any present run for some algorithm
        (naming the algorithm and the task); infinite scores.
    """
    if not isinstance(scores, xr.DataArray):
        _fail(
            f"{what} must be an xarray.DataArray with dims {tuple(required)}, got "
            f"{type(scores).__name__}; wrap a (runs, tasks) array per algorithm with "
            "scalinglab.data.scores.scores_from_dict or xr.DataArray(x, dims=...)"
        )
    dims = tuple(map(str, scores.dims))
    missing = [d for d in required if d not in dims]
    extra = [d for d in dims if d not in required and d not in optional]
    if missing or extra:
        hint = ""
        if extra:
            hint = (
                f"; unexpected dim(s) {extra}: rename the one that indexes runs/seeds "
                "to 'run' and the one that indexes tasks/games to 'task', and reduce "
                "others (e.g. episodes: .mean('episode'); steps: .isel(step=-1))"
            )
        _fail(
            f"{what} must have dims {tuple(required)}"
            + (f" (optionally {tuple(optional)})" if optional else "")
            + f", got {dims}"
            + (f"; missing {missing}" if missing else "")
            + hint
        )
    if not np.issubdtype(scores.dtype, np.number) or np.issubdtype(
        scores.dtype, np.complexfloating
    ):
        _fail(f"{what} must be numeric, got dtype {scores.dtype}")
    order = [*required, *[d for d in optional if d in dims]]
    out = scores.transpose(*order).astype(float)
    for dim in order:
        if dim not in out.coords:
            out = out.assign_coords({dim: np.arange(out.sizes[dim])})
        labels = out.indexes[dim]
        if labels.has_duplicates:
            dup = labels[labels.duplicated()][0]
            _fail(f"{what}: label {_label(dup)!r} appears more than once along dim {dim!r}")
    values = out.values
    if np.isinf(values).any():
        where = np.argwhere(np.isinf(values))[0]
        cell = ", ".join(
            f"{d} {_label(out.coords[d].values[i])!r}" for d, i in zip(order, where, strict=True)
        )
        _fail(f"{what}: infinite score at {cell}")
    if "run" in order and "task" in order:
        run_ax = order.index("run")
        present = (~np.isnan(values)).sum(axis=run_ax)
        if (present == 0).any():
            other = [d for d in order if d != "run"]
            where = np.argwhere(present == 0)[0]
            cell = ", ".join(
                f"{d} {_label(out.coords[d].values[i])!r}"
                for d, i in zip(other, where, strict=True)
            )
            _fail(f"{what}: no present (non-NaN) run for {cell}")
        if present.max() == 1 and out.sizes["run"] == 1:
            warnings.warn(
                f"{what} have a single run per task: stratified bootstrap intervals have "
                "zero width. Did you swap the 'run' and 'task' dims?",
                UserWarning,
                stacklevel=3,
            )
    return out


def algorithm_tables(scores: xr.DataArray) -> dict[str, np.ndarray]:
    """Per-algorithm ``(run, task)`` tables of a checked ``(algorithm, run, task)`` array.

    Returns
    -------
    dict
        ``{str(algorithm): ndarray of shape (runs, tasks)}`` in coordinate order.
    """
    names = [str(a) for a in scores.coords["algorithm"].values]
    if len(set(names)) != len(names):
        _fail(f"algorithm names are not unique as strings: {names}")
    return {name: scores.values[i] for i, name in enumerate(names)}


def wide_table(ds: xr.Dataset, *, columns: str = "metric", digits: int = 3) -> pd.DataFrame:
    """A dataset of per-cell statistics as a table with readable flat column names.

    ``ds.to_dataframe().unstack(columns)`` gives tuple headers such as
    ``('point', 'iqm')``, which HTML shows as raw Python; here each column is
    ``"<label> <variable>"`` (``"iqm point"``, ``"iqm lo"``, ...), grouped by label.

    Parameters
    ----------
    ds
        Variables sharing a dim ``columns`` and one other dim (the rows).
    columns
        The dim spread across columns.

    Returns
    -------
    pandas.DataFrame
        Rows: the other dim; columns: ``len(ds[columns]) * len(ds.data_vars)``.
    """
    frame = (
        ds.to_dataframe()
        .drop(columns=[c for c in ds.coords if c not in ds.dims], errors="ignore")
        .unstack(columns)
    )
    frame = frame.reorder_levels([1, 0], axis=1)
    labels = [str(v) for v in ds[columns].values]
    names = list(ds.data_vars)
    frame = frame[[(lab, v) for lab in labels for v in names]]
    frame.columns = [f"{lab} {v}" for lab, v in frame.columns]
    return frame.round(digits)
