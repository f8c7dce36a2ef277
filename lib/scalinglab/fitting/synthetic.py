"""Synthetic data from a law with known parameters (tests, benchmarks, examples).

:func:`simulate` evaluates a law at given inputs and adds noise from an explicit
seed; :func:`chinchilla_design` makes a Chinchilla-like IsoFLOP design (model
sizes and token counts on a few compute budgets, like Hoffmann et al.'s
Figure 4 that Epoch digitized) for the benchmark and the README example.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from scalinglab.fitting.laws import Law
from scalinglab.fitting.registry import get_law

#: Epoch's replication estimates (Besiroglu et al. 2024), used as the truth of the example.
EPOCH_CHINCHILLA = {"E": 1.82, "A": 482.0, "B": 2085.0, "alpha": 0.348, "beta": 0.366}


def law_values(
    law: str | Law, params: Mapping[str, float], x: np.ndarray, groups: np.ndarray | None = None
) -> np.ndarray:
    """The law's y at inputs ``x`` ``(n, k)`` for reported ``params``; shape ``(n,)``.

    Per-group parameters are given as ``{"E0": array (G,)}`` with ``groups``
    integer codes ``(n,)``.
    """
    law = get_law(law)
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    cols = []
    for p in law.params:
        v = np.atleast_1d(np.asarray(params[p.name], dtype=float))
        cols.append(p.to_internal(v))
    theta = np.concatenate(cols)[None, :]
    n_groups = max(
        (c.size for c, p in zip(cols, law.params, strict=True) if p.per_group), default=1
    )
    g = np.zeros(x.shape[0], dtype=np.int64) if groups is None else np.asarray(groups)
    v = law.fn(**law.call_kwargs(x, theta, g, n_groups))[0]
    return np.exp(v) if law.space == "log" else v


def simulate(
    law: str | Law,
    params: Mapping[str, float],
    x: np.ndarray,
    *,
    seed: int,
    noise: float,
    kind: str = "log",
    groups: np.ndarray | None = None,
    group_noise: float = 0.0,
) -> np.ndarray:
    """Noisy observations of a law, shape ``(n,)``.

    Parameters
    ----------
    kind
        ``"log"``: multiplicative noise ``y * exp(noise * z)``; ``"abs"``:
        additive ``y + noise * z`` with ``z`` standard normal.
    group_noise
        Extra noise shared by all points of a group (a run's offset), same kind.
    """
    rng = np.random.default_rng(seed)
    y = law_values(law, params, x, groups if get_law(law).has_groups else None)
    z = noise * rng.standard_normal(y.shape)
    if group_noise and groups is not None:
        z = z + group_noise * rng.standard_normal(int(np.max(groups)) + 1)[groups]
    return y * np.exp(z) if kind == "log" else y + z


def chinchilla_design(
    *,
    n_budgets: int = 10,
    per_budget: int = 25,
    seed: int = 0,
    flops: tuple[float, float] = (3e18, 3e21),
    n_range: tuple[float, float] = (6e7, 1.6e10),
):
    """IsoFLOP design: ``per_budget`` model sizes on each of ``n_budgets`` compute budgets.

    Returns
    -------
    N, D, budget
        Parameters, tokens (``C / (6 N)``) and the budget index of each point,
        each shape ``(n_budgets * per_budget,)``.
    """
    rng = np.random.default_rng(seed)
    budgets = np.geomspace(*flops, n_budgets)
    N = np.exp(rng.uniform(np.log(n_range[0]), np.log(n_range[1]), (n_budgets, per_budget)))
    D = budgets[:, None] / (6.0 * N)
    b = np.repeat(np.arange(n_budgets), per_budget)
    return N.ravel(), D.ravel(), b
