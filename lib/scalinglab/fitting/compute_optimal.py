"""Compute-optimal model size and data for a Chinchilla-style law, with bootstrap intervals.

For ``L(N, D) = E + A N^-alpha + B D^-beta`` and a training budget of ``C = k N D`` FLOPs
(``k = 6``: a forward and backward pass per parameter and token, Kaplan et al. 2020),
minimizing ``L`` along ``D = C / (k N)`` gives (Hoffmann et al. 2022, eq. 4)::

    N_opt = G (C / k)^(beta / (alpha + beta)),   D_opt = G^-1 (C / k)^(alpha / (alpha + beta)),
    G = (alpha A / (beta B))^(1 / (alpha + beta)),

and the loss there. Intervals come from the fit's bootstrap draws: the formula is applied
to every draw (:func:`scalinglab.fitting.derive`) and the percentile interval taken, so
they carry the parameters' joint uncertainty (``A`` and ``alpha`` are strongly correlated;
intervals of the parameters alone would not say that).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from scalinglab.errors import InputError
from scalinglab.fitting.group_bootstrap import derive
from scalinglab.fitting.result import Derived, FitResult

#: Training FLOPs per parameter and token (forward + backward).
FLOPS_PER_PARAM_TOKEN = 6.0
#: Parameters a law needs for the closed form.
CHINCHILLA_PARAMS = ("E", "A", "B", "alpha", "beta")


def optimal_allocation(
    params: Mapping[str, float], flops: Any, *, k: float = FLOPS_PER_PARAM_TOKEN
) -> dict[str, np.ndarray]:
    """``N_opt``, ``D_opt``, ``D_opt / N_opt`` and the loss at ``C = flops``.

    Parameters
    ----------
    params
        ``E, A, B, alpha, beta`` of ``L = E + A N^-alpha + B D^-beta``.
    flops
        Budget(s) ``C``, a scalar or an array of shape ``(m,)``.
    k
        FLOPs per parameter and token (``C = k N D``).

    Returns
    -------
    dict
        ``N, D, tokens_per_param, loss``, each of ``flops``'s shape; NaN where the law
        has no interior optimum (``A, B, alpha, beta`` not all > 0).
    """
    E, A, B, a, b = (float(params[n]) for n in CHINCHILLA_PARAMS)
    c = np.asarray(flops, dtype=float) / k
    if not (A > 0 and B > 0 and a > 0 and b > 0):
        nan = np.full(c.shape, np.nan)
        return {"N": nan, "D": nan, "tokens_per_param": nan, "loss": nan}
    G = (a * A / (b * B)) ** (1.0 / (a + b))
    N = G * c ** (b / (a + b))
    D = c / N
    return {"N": N, "D": D, "tokens_per_param": D / N, "loss": E + A * N**-a + B * D**-b}


def check_chinchilla(result: FitResult) -> None:
    """Raise :class:`InputError` unless ``result``'s law has Chinchilla's parameters."""
    missing = [n for n in CHINCHILLA_PARAMS if n not in result.params]
    if missing:
        raise InputError(
            f"compute-optimal N and D need a Chinchilla-style law L = E + A N^-alpha + "
            f"B D^-beta (parameters {', '.join(CHINCHILLA_PARAMS)}); law {result.law!r} "
            f"has {', '.join(result.params)}"
        )


def compute_optimal(
    result: FitResult, flops: float, *, k: float = FLOPS_PER_PARAM_TOKEN
) -> dict[str, Derived]:
    """Compute-optimal ``N``, ``D``, tokens per parameter and loss at budget ``flops``.

    Parameters
    ----------
    result
        A fit of a Chinchilla-style law; with bootstrap draws, each quantity gets the
        percentile interval of the formula over the draws (at ``result.level``).
    flops
        The budget ``C`` in FLOPs (> 0).
    k
        FLOPs per parameter and token.

    Returns
    -------
    dict
        ``name -> Derived`` (scalar point, ``ci`` None without draws).
    """
    check_chinchilla(result)
    if not (np.isfinite(flops) and flops > 0):
        raise InputError(f"the compute budget C must be a positive number of FLOPs, got {flops}")
    out = {}
    for name in ("N", "D", "tokens_per_param", "loss"):

        def fn(p: Mapping[str, float], name: str = name) -> float:
            return float(optimal_allocation(p, flops, k=k)[name])

        if result.draws is None:
            out[name] = Derived(np.asarray(fn(result.params)), None, None)
        else:
            out[name] = derive(fn, result)
    return out
