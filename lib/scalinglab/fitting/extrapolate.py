"""Extrapolation check: fit on the cheap part, report the error on the rest, with a CI.

Every study validates its law this way (fit on the first half of compute and
predict the full run; fit the smaller models and predict the largest). The
error's CI comes from the group bootstrap: each replicate refits on resampled
training groups and scores on resampled held-out groups, so it reflects both
the fit's uncertainty and which held-out runs happened to be observed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from scalinglab.errors import InputError
from scalinglab.fitting.laws import Law
from scalinglab.fitting.loader import FitData
from scalinglab.fitting.multistart import fit, make_problem
from scalinglab.fitting.result import FitResult
from scalinglab.stats.bootstrap import percentile_interval, resample_groups
from scalinglab.textfmt import json_number

METRICS = ("mae", "rmse", "mape", "max")


def _score(y: np.ndarray, pred: np.ndarray, w: np.ndarray, metric: str) -> np.ndarray:
    """Weighted error per row; ``y`` ``(m,)``, ``pred`` ``(R, m)``, ``w`` ``(R, m)`` -> ``(R,)``."""
    err = pred - y
    tot = np.maximum(w.sum(axis=-1), 1e-300)
    if metric == "mae":
        return (w * np.abs(err)).sum(axis=-1) / tot
    if metric == "rmse":
        return np.sqrt((w * err**2).sum(axis=-1) / tot)
    if metric == "mape":
        return (w * np.abs(err / y)).sum(axis=-1) / tot
    return np.where(w > 0, np.abs(err), -np.inf).max(axis=-1)


@dataclass
class ExtrapolationResult:
    """Held-out error of a fit on a training subset.

    Attributes
    ----------
    metric
        ``"mae"``, ``"rmse"``, ``"mape"`` (fraction) or ``"max"`` (absolute).
    error, ci
        Held-out error and its percentile CI over bootstrap replicates.
    y_test, y_pred
        Held-out observations and predictions of the training fit, ``(m,)``.
    fit
        The fit on the training subset (with its own bootstrap draws).
    """

    metric: str
    error: float
    ci: tuple[float, float] | None
    n_train: int
    n_test: int
    y_test: np.ndarray
    y_pred: np.ndarray
    fit: FitResult
    level: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "metric": self.metric,
            "error": json_number(self.error),
            "ci": (None if self.ci is None else [json_number(self.ci[0]), json_number(self.ci[1])]),
            "level": self.level,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "train_fit": self.fit.to_dict(),
        }


def split_mask(
    data: FitData, *, cut: float | None = None, column: int | str = 0, holdout: str | None = None
) -> np.ndarray:
    """Training mask ``(n,)``: ``x[column] <= cut``, or all but the group with the largest ``x``.

    Parameters
    ----------
    cut
        Train on points whose input ``column`` is at most ``cut``.
    column
        Input index or name.
    holdout
        ``"largest_group"``: hold out the group whose mean of ``column`` is largest.
    """
    j = data.x_names.index(column) if isinstance(column, str) else int(column)
    if (cut is None) == (holdout is None):
        raise ValueError("give exactly one of cut= or holdout=")
    if cut is not None:
        return data.x[:, j] <= cut
    if holdout != "largest_group":
        raise ValueError(f"holdout must be 'largest_group', got {holdout!r}")
    means = np.bincount(data.groups, data.x[:, j], data.n_groups) / np.bincount(data.groups)
    return data.groups != int(np.argmax(means))


def extrapolation_check(
    law: str | Law,
    data: FitData,
    *,
    train: np.ndarray | None = None,
    cut: float | None = None,
    column: int | str = 0,
    holdout: str | None = None,
    metric: str = "mae",
    bootstrap: int = 200,
    seed: int = 0,
    level: float = 0.95,
    **fit_kwargs: Any,
) -> ExtrapolationResult:
    """Fit ``law`` on a training subset of ``data`` and score predictions on the rest.

    Parameters
    ----------
    train
        Boolean mask ``(n,)`` of training points; or use ``cut``/``column`` or
        ``holdout`` (see :func:`split_mask`).
    metric
        One of ``mae``, ``rmse``, ``mape``, ``max``.
    bootstrap, seed, level
        Replicates for the error's CI (0: no CI), seed and level.
    fit_kwargs
        Passed to :func:`scalinglab.fitting.multistart.fit` (objective, fixed, bounds, n_jobs, ...).
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    problem = make_problem(
        law, data, objective=fit_kwargs.get("objective"), fixed=fit_kwargs.get("fixed")
    )
    data = problem.data  # with the law's default groups
    mask = (
        split_mask(data, cut=cut, column=column, holdout=holdout)
        if train is None
        else np.asarray(train, dtype=bool)
    )
    if mask.all() or not mask.any():
        raise InputError("the split leaves no training or no held-out points", file=data.source)
    tr, te = data.subset(mask), data.subset(~mask)
    res = fit(law, tr, bootstrap=bootstrap, seed=seed, level=level, **fit_kwargs)
    if problem.law.has_groups:
        unknown = sorted(set(te.group_labels) - set(tr.group_labels))
        if unknown:
            raise InputError(
                f"law {problem.law.name!r} has per-group parameters; held-out "
                f"group(s) {unknown} have no training points to fit them",
                file=data.source,
                column=data.group_name,
            )
    g_te = np.array(te.group_labels, dtype=object)[te.groups] if problem.law.has_groups else None
    y_pred = res.predict(te.x, groups=g_te)
    point = float(_score(te.y, y_pred[None, :], np.ones((1, te.n_points)), metric)[0])
    ci = None
    if bootstrap:
        rng = np.random.default_rng([seed, 1])  # held-out resampling, independent of the refits
        idx = resample_groups(rng, te.n_groups, bootstrap)
        counts = np.zeros((bootstrap, te.n_groups))
        np.add.at(counts, (np.repeat(np.arange(bootstrap), te.n_groups), idx.ravel()), 1.0)
        preds = res.predict_draws(te.x, groups=g_te)
        scores = _score(te.y, preds, counts[:, te.groups], metric)
        scores[~np.all(np.isfinite(preds), axis=1)] = np.nan
        lo, hi = percentile_interval(scores, level=level)
        ci = (float(lo), float(hi))
    return ExtrapolationResult(
        metric=metric,
        error=point,
        ci=ci,
        n_train=tr.n_points,
        n_test=te.n_points,
        y_test=te.y,
        y_pred=y_pred,
        fit=res,
        level=level,
    )
