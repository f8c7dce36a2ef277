"""The exponentiated power law of coverage (Large Language Monkeys, Brown et al. 2024).

``coverage(k) = exp(a * k^b)`` with ``a < 0`` and ``b < 0``: the log of coverage is a power
law in the number of samples k. Declared here, apart from
:mod:`scalinglab.fitting.builtin_laws` (which holds the training-scaling laws), and
registered with them by :mod:`scalinglab.fitting.registry`, so ``scalinglab fit exp_power``
finds it; :mod:`scalinglab.fitting.coverage_law` fits coverage curves with it.
"""

from __future__ import annotations

import numpy as np

from scalinglab.fitting.laws import Law, Param

NAME = "exp_power"


def _fn(k, a, b):
    return a * np.exp(b * np.log(k))


def _jac(k, a, b):
    kb = np.exp(b * np.log(k))
    v = a * kb
    return v, {"a": np.broadcast_to(kb, v.shape), "b": v * np.log(k)}


def _init(x, y, groups, n_groups):
    """Starts: a grid plus the log-log line through ``log(-log y)`` against ``log k``."""
    grid = [(a, b) for a in (-0.05, -0.3, -1.0, -3.0) for b in (-0.05, -0.3, -0.8)]
    k, ly = x[:, 0], np.log(np.clip(y, 1e-12, 1 - 1e-12))
    ok = ly < 0
    if ok.sum() >= 2:
        slope, icpt = np.polyfit(np.log(k[ok]), np.log(-ly[ok]), 1)
        grid.append((-float(np.exp(icpt)), float(np.clip(slope, -4.9, -1e-4))))
    return np.array(grid, dtype=float)


LAW = Law(
    name=NAME,
    formula="coverage = exp(a * k^b)",
    x_names=("k",),
    params=(Param("a", bounds=(-50.0, 0.0)), Param("b", bounds=(-5.0, 0.0))),
    fn=_fn,
    jac=_jac,
    space="log",
    init=_init,
    objective="huber",
    x_positive=(True,),
    description="exponentiated power law of coverage in samples k (Brown et al. 2024)",
)
