"""Starting points of a fit, in the optimizer's coordinates.

Both the multi-start fit (:mod:`scalinglab.fitting.multistart`) and the group
bootstrap's ``starts="grid"`` refits (:mod:`scalinglab.fitting.group_bootstrap`)
start from the same matrix; it lives here so that neither engine imports the other's
internals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from scalinglab.fitting.laws import product_grid
from scalinglab.fitting.problem import Problem


def start_matrix(
    problem: Problem, starts: np.ndarray | Mapping[str, Sequence[float]] | None
) -> np.ndarray:
    """Starts in internal free coordinates, clipped into the bounds.

    Parameters
    ----------
    problem
        The bound law, data and objective (``P`` parameters, ``F`` of them free).
    starts
        ``None``: the law's initialization grid; a mapping ``name -> values``
        (reported units; the full product, every free parameter named); or
        reported values of shape ``(S, P)``.

    Returns
    -------
    numpy.ndarray
        Shape ``(S, F)``: non-finite entries set to 0, then clipped to ``problem.lo``,
        ``problem.hi``.

    Raises
    ------
    ValueError
        A mapping that misses a free parameter, or an array without ``P`` columns.
    """
    law, data = problem.law, problem.data
    if starts is None:
        full = law.starts(data.x, data.y, data.groups, data.n_groups)
    elif isinstance(starts, Mapping):
        missing = [
            n for j, n in enumerate(problem.names) if not problem.fixed_mask[j] and n not in starts
        ]
        if missing:
            raise ValueError(f"starts has no values for {missing}")
        grid = product_grid(**{n: starts.get(n, [np.nan]) for n in problem.names})
        full = np.column_stack([p.to_internal(grid[:, j]) for j, p in enumerate(problem.params)])
    else:
        rep = np.atleast_2d(np.asarray(starts, dtype=float))
        if rep.shape[1] != problem.P:
            raise ValueError(f"starts must have {problem.P} columns ({problem.names})")
        full = np.column_stack([p.to_internal(rep[:, j]) for j, p in enumerate(problem.params)])
    free = full[:, problem.free]
    lo, hi = problem.lo, problem.hi
    return np.clip(np.where(np.isfinite(free), free, 0.0), lo, hi)
