"""FLOPs and bytes of GEMMs and of transformer training: the counts every study uses.

Pure functions of sizes, vectorised over NumPy arrays (pass arrays to count a whole
sweep at once). Units are in the names: ``*_flops`` are floating-point operations
(a fused multiply-add counts as 2), ``*_bytes`` are bytes, ``*_flop_per_s`` rates.

Formulas (see ``docs/studies/kernels_cost_models.md``):

- GEMM ``C[m, n] = A[m, k] @ B[k, n]``: ``2 m n k`` FLOPs; the minimum traffic is
  reading A and B and writing C once, ``s (m k + k n + m n)`` bytes for elements of
  ``s`` bytes.
- Transformer (Kaplan et al. 2020): non-embedding parameters
  ``N = 2 n_layer d_model (2 d_attn + d_ff)``, which is ``12 n_layer d_model^2`` for
  ``d_attn = d_model`` and ``d_ff = 4 d_model``.
- Training: ``C = 6 N D`` FLOPs for ``D`` tokens; with the attention term (PaLM,
  Chowdhery et al. 2022, appendix B) ``6 N + 12 n_layer n_ctx d_attn`` FLOPs per token.
- Model FLOPs utilisation: ``MFU = tokens_per_s * flops_per_token / peak_flop_per_s``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def check_positive(name: str, value: ArrayLike, *, allow_zero: bool = False) -> np.ndarray:
    """``value`` as a float array, checked finite and > 0 (>= 0 with ``allow_zero``).

    Parameters
    ----------
    name
        Argument name, for the error message.
    value
        Scalar or array of any shape; the result has the same shape.

    Raises
    ------
    ValueError
        Some element is non-finite, negative, or zero without ``allow_zero``.
    """
    arr = np.asarray(value, dtype=float)
    bad = arr < 0 if allow_zero else arr <= 0
    if np.any(bad) or np.any(~np.isfinite(arr)):
        need = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {need}, got {value!r}")
    return arr


def scalar_or_array(x: np.ndarray) -> float | np.ndarray:
    """A Python float for scalar inputs, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x


def gemm_flops(m: ArrayLike, n: ArrayLike, k: ArrayLike) -> float | np.ndarray:
    """FLOPs of ``C[m, n] = A[m, k] @ B[k, n]``: ``2 m n k`` (one multiply, one add).

    Parameters
    ----------
    m, n, k
        Matrix sizes (scalars or broadcastable arrays), each >= 1.

    Returns
    -------
    float or numpy.ndarray
        FLOPs, the broadcast shape of the inputs.
    """
    m, n, k = check_positive("m", m), check_positive("n", n), check_positive("k", k)
    return scalar_or_array(2.0 * m * n * k)


def gemm_min_bytes(
    m: ArrayLike, n: ArrayLike, k: ArrayLike, *, dtype_bytes: int = 4
) -> float | np.ndarray:
    """Minimum bytes a GEMM moves: read A and B, write C once, ``s (m k + k n + m n)``.

    Parameters
    ----------
    m, n, k
        Matrix sizes (scalars or broadcastable arrays).
    dtype_bytes
        Bytes per element ``s`` (4 for float32, 2 for bfloat16).

    Returns
    -------
    float or numpy.ndarray
        Bytes.
    """
    m, n, k = check_positive("m", m), check_positive("n", n), check_positive("k", k)
    s = float(check_positive("dtype_bytes", dtype_bytes))
    return scalar_or_array(s * (m * k + k * n + m * n))


def gemm_intensity(
    m: ArrayLike, n: ArrayLike, k: ArrayLike, *, dtype_bytes: int = 4
) -> float | np.ndarray:
    """Arithmetic intensity of a GEMM at minimum traffic, in FLOP per byte."""
    return scalar_or_array(
        np.asarray(gemm_flops(m, n, k))
        / np.asarray(gemm_min_bytes(m, n, k, dtype_bytes=dtype_bytes))
    )


def transformer_params(
    n_layer: ArrayLike,
    d_model: ArrayLike,
    *,
    d_ff: ArrayLike | None = None,
    d_attn: ArrayLike | None = None,
    vocab_size: int = 0,
    n_ctx: int = 0,
    include_embeddings: bool = False,
) -> float | np.ndarray:
    """Parameter count of a decoder-only transformer (weights only, no biases or norms).

    ``N = 2 n_layer d_model (2 d_attn + d_ff)``: per layer ``4 d_model d_attn`` for the
    Q, K, V and output projections and ``2 d_model d_ff`` for the two FFN matrices.

    Parameters
    ----------
    n_layer, d_model
        Depth and width.
    d_ff
        FFN width; default ``4 d_model``.
    d_attn
        Total attention width (heads x head dim); default ``d_model``.
    vocab_size, n_ctx
        Token and position embedding sizes, counted only with ``include_embeddings``.
    include_embeddings
        Add ``(vocab_size + n_ctx) d_model`` (Kaplan's N excludes them).

    Returns
    -------
    float or numpy.ndarray
        Parameters.
    """
    n_layer = check_positive("n_layer", n_layer)
    d_model = check_positive("d_model", d_model)
    d_ff = 4.0 * d_model if d_ff is None else check_positive("d_ff", d_ff)
    d_attn = d_model if d_attn is None else check_positive("d_attn", d_attn)
    n = 2.0 * n_layer * d_model * (2.0 * d_attn + d_ff)
    if include_embeddings:
        n = n + (float(vocab_size) + float(n_ctx)) * d_model
    return scalar_or_array(n)


def training_flops_per_token(
    n_params: ArrayLike,
    *,
    n_layer: ArrayLike | None = None,
    n_ctx: ArrayLike | None = None,
    d_model: ArrayLike | None = None,
) -> float | np.ndarray:
    """Training FLOPs per token: ``6 N``, plus ``12 n_layer n_ctx d_model`` for attention.

    The attention term (PaLM's MFU accounting) is added only when all of
    ``n_layer``, ``n_ctx`` and ``d_model`` are given; ``d_model`` stands for the
    attention width (heads x head dim).
    """
    flops = 6.0 * check_positive("n_params", n_params)
    given = [x is not None for x in (n_layer, n_ctx, d_model)]
    if any(given) and not all(given):
        raise ValueError("the attention term needs all of n_layer, n_ctx and d_model")
    if all(given):
        flops = flops + 12.0 * check_positive("n_layer", n_layer) * check_positive(
            "n_ctx", n_ctx
        ) * check_positive("d_model", d_model)
    return scalar_or_array(flops)


def training_flops(
    n_params: ArrayLike,
    tokens: ArrayLike,
    *,
    n_layer: ArrayLike | None = None,
    n_ctx: ArrayLike | None = None,
    d_model: ArrayLike | None = None,
) -> float | np.ndarray:
    """Training compute in FLOPs: ``C = 6 N D`` (+ the attention term, see
    :func:`training_flops_per_token`).

    Parameters
    ----------
    n_params
        Non-embedding parameters ``N``.
    tokens
        Training tokens ``D``.
    n_layer, n_ctx, d_model
        Give all three to include attention: ``(6 N + 12 n_layer n_ctx d_model) D``.

    Returns
    -------
    float or numpy.ndarray
        FLOPs.
    """
    per_token = training_flops_per_token(n_params, n_layer=n_layer, n_ctx=n_ctx, d_model=d_model)
    tokens = check_positive("tokens", tokens, allow_zero=True)
    return scalar_or_array(np.asarray(per_token) * tokens)


def mfu(
    tokens_per_s: ArrayLike,
    *,
    n_params: ArrayLike,
    peak_flop_per_s: ArrayLike,
    n_layer: ArrayLike | None = None,
    n_ctx: ArrayLike | None = None,
    d_model: ArrayLike | None = None,
) -> float | np.ndarray:
    """Model FLOPs utilisation: achieved training FLOP/s over the hardware peak.

    ``MFU = tokens_per_s * (6 N + 12 n_layer n_ctx d_model) / peak_flop_per_s``
    (the attention term only when its sizes are given). Rematerialisation is not
    counted, as in PaLM.

    Parameters
    ----------
    tokens_per_s
        Training throughput in tokens per second.
    n_params
        Non-embedding parameters.
    peak_flop_per_s
        Peak of the hardware, e.g. ``HardwareRecord.peak_flop_per_s``.

    Returns
    -------
    float or numpy.ndarray
        A fraction (1.0 = peak).
    """
    per_token = training_flops_per_token(n_params, n_layer=n_layer, n_ctx=n_ctx, d_model=d_model)
    rate = check_positive("tokens_per_s", tokens_per_s, allow_zero=True)
    peak = check_positive("peak_flop_per_s", peak_flop_per_s)
    return scalar_or_array(rate * np.asarray(per_token) / peak)
