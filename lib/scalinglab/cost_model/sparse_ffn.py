"""Cost of an activation-sparse FFN step: FLOPs, bytes and the ideal speedup.

An FFN ``y = W_down f(W_up x)`` (``W_up: d_ff x d_model``; a gated FFN adds
``W_gate``) evaluated only on its active neurons reads only their rows/columns of
the weights. At activation ratio ``a`` (fraction of the ``d_ff`` neurons active
per token) and a batch of ``b`` tokens with independent activations, a kernel that
gathers the active weights once for the whole batch must read the *union* of the
active sets, a fraction ``1 - (1 - a)^b`` of the neurons (this module's formula;
``docs/studies/sparsity_laws.md``). Batch 1 is memory-bound, so the ideal speedup is
about ``1 / a``; it shrinks quickly with batch.

Counting convention: ``n_matrices`` weight matrices of ``d_model x d_ff`` (2 for
a plain FFN, 3 for a gated one); FLOPs ``2 d_model`` per active neuron per matrix
per token; bytes = active weights + the batch's input and output activations.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from scalinglab.cost_model.flops import check_positive, scalar_or_array
from scalinglab.cost_model.hardware import HardwareRecord
from scalinglab.cost_model.roofline import roofline_seconds


def union_activation_ratio(activation_ratio: ArrayLike, batch: ArrayLike) -> float | np.ndarray:
    """Fraction of neurons active for at least one of ``batch`` tokens: ``1 - (1 - a)^b``."""
    a = np.asarray(activation_ratio, dtype=float)
    if np.any((a < 0) | (a > 1)) or np.any(~np.isfinite(a)):
        raise ValueError(f"activation_ratio must be in [0, 1], got {activation_ratio!r}")
    b = check_positive("batch", batch)
    return scalar_or_array(1.0 - (1.0 - a) ** b)


def sparse_ffn_flops(
    d_model: ArrayLike,
    d_ff: ArrayLike,
    *,
    activation_ratio: ArrayLike,
    batch: ArrayLike = 1,
    n_matrices: int = 2,
    union: bool = True,
) -> float | np.ndarray:
    """FLOPs of one sparse FFN step over ``batch`` tokens.

    Parameters
    ----------
    d_model, d_ff
        FFN input and hidden widths.
    activation_ratio
        ``a`` in [0, 1]; 1 gives the dense FFN, ``2 n_matrices d_model d_ff batch``.
    batch
        Tokens ``b`` in the step.
    n_matrices
        2 for ``W_up, W_down``; 3 with a gate.
    union
        True: every token is computed on the union of active neurons (a gathered
        GEMM, fraction ``1 - (1 - a)^b``); False: each token only on its own ``a``.

    Returns
    -------
    float or numpy.ndarray
        FLOPs.
    """
    b = check_positive("batch", batch)
    frac = (
        union_activation_ratio(activation_ratio, b)
        if union
        else np.asarray(union_activation_ratio(activation_ratio, 1))
    )
    return scalar_or_array(
        2.0
        * float(n_matrices)
        * check_positive("d_model", d_model)
        * check_positive("d_ff", d_ff)
        * np.asarray(frac)
        * b
    )


def sparse_ffn_bytes(
    d_model: ArrayLike,
    d_ff: ArrayLike,
    *,
    activation_ratio: ArrayLike,
    batch: ArrayLike = 1,
    n_matrices: int = 2,
    dtype_bytes: int = 4,
) -> float | np.ndarray:
    """Minimum bytes of one sparse FFN step: the union's weights plus activations.

    ``s (n_matrices d_model d_ff (1 - (1 - a)^b) + 2 b d_model)``: each active
    neuron's weights are read once for the whole batch; the batch's input is read
    and its output written once.
    """
    b = check_positive("batch", batch)
    d_model = check_positive("d_model", d_model)
    frac = np.asarray(union_activation_ratio(activation_ratio, b))
    weights = float(n_matrices) * d_model * check_positive("d_ff", d_ff) * frac
    return scalar_or_array(float(dtype_bytes) * (weights + 2.0 * b * d_model))


def sparse_ffn_speedup(
    d_model: ArrayLike,
    d_ff: ArrayLike,
    *,
    activation_ratio: ArrayLike,
    hw: HardwareRecord,
    batch: ArrayLike = 1,
    n_matrices: int = 2,
    dtype_bytes: int = 4,
) -> float | np.ndarray:
    """Ideal speedup of the sparse over the dense FFN under the roofline of ``hw``.

    Dense and sparse steps are each timed by :func:`roofline_seconds` from their
    FLOPs (:func:`sparse_ffn_flops`, union) and bytes (:func:`sparse_ffn_bytes`);
    at batch 1 this is close to ``1 / a``.
    """
    kw = dict(batch=batch, n_matrices=n_matrices)
    dense = roofline_seconds(
        sparse_ffn_flops(d_model, d_ff, activation_ratio=1.0, **kw),
        sparse_ffn_bytes(d_model, d_ff, activation_ratio=1.0, dtype_bytes=dtype_bytes, **kw),
        hw,
    )
    sparse = roofline_seconds(
        sparse_ffn_flops(d_model, d_ff, activation_ratio=activation_ratio, **kw),
        sparse_ffn_bytes(
            d_model, d_ff, activation_ratio=activation_ratio, dtype_bytes=dtype_bytes, **kw
        ),
        hw,
    )
    return scalar_or_array(np.asarray(dense) / np.asarray(sparse))
