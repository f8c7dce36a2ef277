"""The residual plot of a fit: residuals against fitted values and each input, and a
normal Q-Q plot (statsmodels' ``qqplot``), written as PNG or SVG.

Residuals are in the objective's residual space (:class:`scalinglab.fitting.report.FitReport`):
``log y - log model`` for the Huber objective (its threshold ``delta`` drawn as dashed
lines: points outside count linearly), ``y - model`` for least squares. Points are
coloured by group (the bootstrap's resampling unit) when there are at most 20 groups.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scalinglab import atomic
from scalinglab.errors import InputError
from scalinglab.fitting.report import FitReport
from scalinglab.fitting.result import FitResult

#: File types :func:`save_residual_plot` writes.
PLOT_SUFFIXES = (".png", ".svg")
#: Above this many groups the points are drawn in one colour.
MAX_COLOURED_GROUPS = 20


def check_plot_path(path: str | Path) -> Path:
    """Raise :class:`InputError` unless ``path`` is a ``.png``/``.svg`` in an existing folder."""
    p = Path(path)
    if p.suffix.lower() not in PLOT_SUFFIXES:
        raise InputError(
            f"--plot writes {' or '.join(s[1:].upper() for s in PLOT_SUFFIXES)}; "
            f"name the file with {' or '.join(PLOT_SUFFIXES)}, got {p.suffix or 'no suffix'!r}",
            file=p,
        )
    if not p.parent.is_dir():
        raise InputError("--plot: the folder does not exist", file=p)
    return p


def residual_figure(result: FitResult, report: FitReport):
    """A matplotlib ``Figure``: one panel per input and for the fitted values, and a Q-Q.

    Parameters
    ----------
    result, report
        The fit (its data attached) and its :func:`scalinglab.fitting.report.fit_report`.
    """
    import statsmodels.api as sm
    from matplotlib.figure import Figure

    problem = result.problem
    if problem is None:
        raise ValueError("result has no problem attached (loaded from JSON?)")
    data = problem.data
    r = report.residuals
    panels = [("fitted " + data.y_name, report.fitted)] + [
        (name, data.x[:, j]) for j, name in enumerate(data.x_names)
    ]
    fig = Figure(figsize=(3.6 * (len(panels) + 1), 3.4), layout="constrained")
    axes = fig.subplots(1, len(panels) + 1, squeeze=False)[0]
    coloured = 1 < data.n_groups <= MAX_COLOURED_GROUPS
    delta = problem.objective.delta if problem.objective.log_space else None
    for ax, (label, u) in zip(axes, panels, strict=False):
        if coloured:
            for g, lab in enumerate(data.group_labels):
                sel = data.groups == g
                ax.scatter(u[sel], r[sel], s=10, label=lab)
        else:
            ax.scatter(u, r, s=10)
        if np.all(u > 0) and u.max() / u.min() > 20:
            ax.set_xscale("log")
        ax.axhline(0.0, color="k", lw=0.8)
        if delta is not None:
            for s in (-delta, delta):
                ax.axhline(s, color="grey", lw=0.6, ls="--")
        ax.set_xlabel(label)
        ax.set_ylabel(f"residual, {report.residual_space}")
    sm.qqplot(r, line="s", ax=axes[-1], markersize=3)
    axes[-1].set_title("normal Q-Q")
    if coloured:
        axes[0].legend(fontsize=6, ncol=2, title=data.group_name, title_fontsize=6)
    fig.suptitle(
        f"{result.law}: residuals ({report.n} points; rms {np.sqrt(np.mean(r**2)):.3g})",
        fontsize=10,
    )
    return fig


def save_residual_plot(result: FitResult, report: FitReport, path: str | Path) -> Path:
    """Write :func:`residual_figure` to ``path`` (``.png`` or ``.svg``), atomically.

    The file is written beside ``path`` under a temporary name and renamed, so an
    existing file is replaced whole or not at all.
    """
    p = check_plot_path(path)
    fig = residual_figure(result, report)
    with atomic.replacing(p, suffix=p.suffix) as tmp:
        fig.savefig(tmp, format=p.suffix[1:].lower(), dpi=120)
    return p
