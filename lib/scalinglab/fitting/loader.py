"""Fit inputs: a table (or arrays) -> ``x``, ``y`` and groups, validated for a law.

Every problem is reported as :class:`scalinglab.errors.InputError` naming the
file (when there is one), the column and the 1-based data row: non-numeric or
missing values, ``x <= 0`` where the law takes logs or real powers, ``y <= 0``
under the log-residual Huber objective, fewer points (or fewer distinct inputs) than
free parameters, and a group with a single point (a group is one run/curve, the unit the bootstrap
resamples; a single point cannot be a curve).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from scalinglab.data.tables import label_column, numeric_column, read_table
from scalinglab.errors import InputError
from scalinglab.fitting.laws import Law


@dataclass(frozen=True)
class FitData:
    """Points to fit.

    Attributes
    ----------
    x
        Inputs, shape ``(n, k)`` in the law's ``x_names`` order.
    y
        Observations, shape ``(n,)``.
    groups
        Integer group codes in ``[0, n_groups)``, shape ``(n,)``.
    group_labels
        Label of each group code (sorted first-appearance order).
    x_names, y_name, group_name
        Column names (for messages); ``group_name`` is None when each point is
        its own group.
    source
        File the data came from, if any.
    rows
        1-based data row of each point in ``source``, shape ``(n,)``.
    """

    x: np.ndarray
    y: np.ndarray
    groups: np.ndarray
    group_labels: tuple[str, ...]
    x_names: tuple[str, ...]
    y_name: str = "y"
    group_name: str | None = None
    source: str | None = None
    rows: np.ndarray | None = None

    @property
    def n_points(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_groups(self) -> int:
        return len(self.group_labels)

    def row(self, i: int) -> int:
        """1-based source row of point ``i``."""
        return int(self.rows[i]) if self.rows is not None else i + 1

    def group_masks(self) -> dict[str, np.ndarray]:
        """Boolean mask of each group's points, by label."""
        return {lab: self.groups == g for g, lab in enumerate(self.group_labels)}

    def subset(self, mask: np.ndarray) -> FitData:
        """The points where ``mask`` is True, groups re-coded to the ones present."""
        mask = np.asarray(mask, dtype=bool)
        present = np.unique(self.groups[mask])
        recode = np.full(self.n_groups, -1)
        recode[present] = np.arange(present.size)
        rows = self.rows[mask] if self.rows is not None else np.flatnonzero(mask) + 1
        return replace(
            self,
            x=self.x[mask],
            y=self.y[mask],
            groups=recode[self.groups[mask]],
            group_labels=tuple(self.group_labels[g] for g in present),
            rows=rows,
        )


def _codes(labels: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
    codes, uniques = pd.factorize(pd.Series(labels, dtype=object), sort=False)
    return codes.astype(np.int64), tuple(str(u) for u in uniques)


def _format_label(v: float) -> str:
    return f"{v:g}"


def from_arrays(
    x: np.ndarray | Sequence[np.ndarray],
    y: np.ndarray,
    *,
    groups: np.ndarray | Sequence | None = None,
    x_names: Sequence[str] | None = None,
    y_name: str = "y",
    group_name: str | None = None,
    source: str | Path | None = None,
    rows: np.ndarray | None = None,
) -> FitData:
    """Build :class:`FitData` from arrays, erroring on non-finite values.

    Parameters
    ----------
    x
        Shape ``(n,)`` (one input), ``(n, k)``, or a sequence of k ``(n,)`` arrays.
    y
        Shape ``(n,)``.
    groups
        Labels, shape ``(n,)``; None makes each point its own group.
    """
    if isinstance(x, list | tuple):
        x = np.column_stack([np.asarray(c, dtype=float) for c in x])
    xa = np.asarray(x, dtype=float)
    if xa.ndim == 1:
        xa = xa[:, None]
    ya = np.asarray(y, dtype=float).reshape(-1)
    names = tuple(x_names) if x_names is not None else tuple(f"x{j}" for j in range(xa.shape[1]))
    src = None if source is None else str(source)
    if len(names) != xa.shape[1]:
        raise InputError(
            f"x has {xa.shape[1]} column(s) but {len(names)} name(s) {names}", file=src
        )
    if xa.shape[0] != ya.shape[0]:
        raise InputError(f"x has {xa.shape[0]} rows but y has {ya.shape[0]}", file=src)
    rws = np.arange(1, ya.shape[0] + 1) if rows is None else np.asarray(rows)
    for j, name in enumerate(names):
        bad = ~np.isfinite(xa[:, j])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"missing or non-finite value ({float(xa[i, j]):g})",
                file=src,
                column=name,
                row=int(rws[i]),
            )
    bad = ~np.isfinite(ya)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"missing or non-finite value ({float(ya[i]):g})",
            file=src,
            column=y_name,
            row=int(rws[i]),
        )
    if groups is None:
        codes, labels = np.arange(ya.shape[0]), tuple(str(int(r)) for r in rws)
    else:
        garr = np.asarray(groups, dtype=object).reshape(-1)
        if garr.shape[0] != ya.shape[0]:
            raise InputError(f"groups has {garr.shape[0]} rows but y has {ya.shape[0]}", file=src)
        codes, labels = _codes(garr)
    return FitData(
        x=xa,
        y=ya,
        groups=codes,
        group_labels=labels,
        x_names=names,
        y_name=y_name,
        group_name=group_name if groups is not None else None,
        source=src,
        rows=rws,
    )


def load_table(path: str | Path, *, x: Sequence[str], y: str, group: str | None = None) -> FitData:
    """Read CSV/Parquet/netCDF columns into :class:`FitData`.

    Errors (missing file or column, non-numeric or missing value, empty group
    label) name the file, column and row. Law-specific checks are in
    :func:`check_data`.
    """
    df = read_table(path, required=[*x, y, *([group] if group else [])])
    cols = [numeric_column(df, c, file=path) for c in x]
    yv = numeric_column(df, y, file=path)
    labels = label_column(df, group, file=path) if group else None
    return from_arrays(
        cols, yv, groups=labels, x_names=list(x), y_name=y, group_name=group, source=path
    )


def default_groups(law: Law, data: FitData) -> FitData:
    """Apply the law's default grouping when the user gave none (``group_by_x``)."""
    if data.group_name is not None or law.group_by_x is None:
        return data
    j = law.group_by_x
    codes, labels = _codes(np.array([_format_label(v) for v in data.x[:, j]], dtype=object))
    return replace(data, groups=codes, group_labels=labels, group_name=data.x_names[j])


def check_data(law: Law, data: FitData, *, log_y: bool, n_free: int) -> None:
    """Raise :class:`InputError` if ``data`` cannot be fitted by ``law``.

    Parameters
    ----------
    log_y
        Whether residuals are taken between logs (then y must be > 0).
    n_free
        Number of free parameters (fewer points than this is an error).
    """
    src = data.source
    if data.x.shape[1] != len(law.x_names):
        raise InputError(
            f"law {law.name!r} takes {len(law.x_names)} input(s) "
            f"{', '.join(law.x_names)}; got {data.x.shape[1]} ({', '.join(data.x_names)})",
            file=src,
        )
    for j, positive in enumerate(law.x_positive):
        if positive and (data.x[:, j] <= 0).any():
            i = int(np.flatnonzero(data.x[:, j] <= 0)[0])
            raise InputError(
                f"value {float(data.x[i, j])!r} must be > 0 (law {law.name!r} takes logs "
                f"or real powers of {law.x_names[j]})",
                file=src,
                column=data.x_names[j],
                row=data.row(i),
            )
    if log_y and (data.y <= 0).any():
        i = int(np.flatnonzero(data.y <= 0)[0])
        raise InputError(
            f"value {float(data.y[i])!r} must be > 0 (the Huber objective uses log "
            "residuals; use --objective ls)",
            file=src,
            column=data.y_name,
            row=data.row(i),
        )
    if data.n_points < n_free:
        raise InputError(
            f"{data.n_points} points for {n_free} free parameters of law "
            f"{law.name!r}; need at least as many points as parameters",
            file=src,
            column=data.y_name,
        )
    design = data.x if not law.has_groups else np.column_stack([data.x, data.groups])
    distinct = np.unique(design, axis=0)
    if distinct.shape[0] < n_free:
        at = ", ".join(f"{n}={float(v):g}" for n, v in zip(data.x_names, distinct[0], strict=False))
        same_y = np.ptp(data.y) == 0
        raise InputError(
            (
                f"all {data.n_points} points are identical ({at}, {data.y_name}="
                f"{float(data.y[0]):g})"
                if distinct.shape[0] == 1 and same_y
                else f"the {data.n_points} points have only {distinct.shape[0]} distinct "
                f"input(s) ({', '.join(data.x_names)}"
                + (f"; all at {at}" if distinct.shape[0] == 1 else "")
                + ")"
            )
            + f"; law {law.name!r} has {n_free} free parameters and needs at least "
            f"{n_free} distinct inputs to identify them (repeated points at one input "
            "only measure its noise)",
            file=src,
            column=data.x_names[0] if len(data.x_names) == 1 else None,
        )
    if data.group_name is not None:
        counts = np.bincount(data.groups, minlength=data.n_groups)
        if (counts < 2).any():
            g = int(np.flatnonzero(counts < 2)[0])
            i = int(np.flatnonzero(data.groups == g)[0])
            raise InputError(
                f"group {data.group_labels[g]!r} has a single point; a group is a "
                "run/curve and needs at least 2 points",
                file=src,
                column=data.group_name,
                row=data.row(i),
            )
