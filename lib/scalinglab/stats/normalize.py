"""Normalization of raw scores with per-task reference scores.

``normalized = (raw - random) / (reference - random)`` per task, so 0 is the
random (or baseline) score and 1 the reference (for Atari: human) score. The
reference and random scores are inputs: an :class:`xarray.DataArray` with a
``task`` dim, or a ``{task: value}`` mapping.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from scalinglab.errors import InputError

__all__ = ["normalize"]


def _per_task(values: xr.DataArray | Mapping, tasks: list, what: str) -> np.ndarray:
    """Values for ``tasks`` in that order, shape ``(len(tasks),)``."""
    if isinstance(values, xr.DataArray):
        if values.dims != ("task",):
            raise InputError(f"{what} scores must have the single dim 'task', got {values.dims}")
        lookup = dict(
            zip(values.coords["task"].values.tolist(), values.values.tolist(), strict=True)
        )
    elif isinstance(values, Mapping):
        lookup = dict(values)
    else:
        raise InputError(
            f"{what} scores must be a DataArray with dim 'task' or a {{task: value}} mapping, "
            f"got {type(values).__name__}"
        )
    out = np.empty(len(tasks))
    for i, task in enumerate(tasks):
        if task not in lookup:
            raise InputError(f"no {what} score for task {task!r}")
        try:
            out[i] = float(lookup[task])
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"{what} score for task {task!r} is not a number: {lookup[task]!r}"
            ) from exc
        if not np.isfinite(out[i]):
            raise InputError(f"{what} score for task {task!r} is not finite: {out[i]!r}")
    return out


def normalize(
    raw: xr.DataArray, *, random: xr.DataArray | Mapping, reference: xr.DataArray | Mapping
) -> xr.DataArray:
    """Normalize scores per task: ``(raw - random) / (reference - random)``.

    Parameters
    ----------
    raw
        Scores with a ``task`` dim (any other dims, e.g. ``algorithm``, ``run``).
    random, reference
        Per-task scores, as a DataArray with dim ``task`` or a mapping from
        task label to value. Every task of ``raw`` needs both.

    Returns
    -------
    xarray.DataArray
        Same dims and coords as ``raw``; NaN (absent runs) stays NaN.

    Raises
    ------
    scalinglab.errors.InputError
        ``raw`` has no ``task`` dim, a task lacks a random or reference score,
        or ``reference == random`` for a task (naming it).
    """
    if not isinstance(raw, xr.DataArray) or "task" not in raw.dims:
        raise InputError("raw scores must be an xarray.DataArray with a 'task' dim")
    tasks = (
        raw.coords["task"].values.tolist()
        if "task" in raw.coords
        else list(range(raw.sizes["task"]))
    )
    lo = _per_task(random, tasks, "random")
    hi = _per_task(reference, tasks, "reference")
    same = hi == lo
    if same.any():
        task = tasks[int(np.flatnonzero(same)[0])]
        raise InputError(
            f"reference and random scores are equal ({hi[same][0]!r}) for task {task!r}; "
            "the normalization would divide by zero"
        )
    lo_da = xr.DataArray(lo, dims=("task",))
    hi_da = xr.DataArray(hi, dims=("task",))
    out = (raw.astype(float).drop_vars("task", errors="ignore") - lo_da) / (hi_da - lo_da)
    out = out.transpose(*raw.dims).assign_coords(raw.coords)
    out.attrs = {**raw.attrs, "normalized": "(raw - random) / (reference - random) per task"}
    out.name = raw.name
    return out
