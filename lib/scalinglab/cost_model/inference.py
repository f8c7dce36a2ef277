"""Inference cost: generation FLOPs, KV-cache bytes and Kinetics' test-time cost.

Pure functions, units in the names. Conventions:

- A generated token costs ``2 N`` FLOPs in the weights (one multiply-add per
  parameter) plus attention over the cache: at context length ``c`` the scores
  ``q K^T`` and the weighted sum ``p V`` cost ``2 c d_attn`` FLOPs each per layer,
  ``4 c d_attn`` together, where ``d_attn = n_q_heads * head_dim``.
- The KV cache holds K and V for every layer and position: ``2 n_layer n_ctx
  n_kv_heads head_dim`` elements (grouped-query attention: ``n_kv_heads <= n_q_heads``).
- Kinetics (Sadhukhan et al. 2025, "Kinetics: Rethinking Test-Time Scaling Laws",
  github.com/Infini-AI-Lab/Kinetics, ``cost_model/utils.py::dense_cost``):
  ``eFLOPs = compute_flops + I * memory_bytes`` with ``I`` the hardware's arithmetic
  intensity (562.5 FLOP/byte in their code: the NVIDIA B200's). For ``n`` samples of
  ``L_out`` tokens after a shared prompt of ``L_in`` tokens::

      compute = n (2 N L_out + 2 (2 L_in + L_out) L_out n_layer n_q_heads head_dim)
      memory  = s (2 L_in + n L_out) L_out n_layer n_kv_heads head_dim

  with ``s`` bytes per KV element (2 for bf16): the prompt's cache is read once per
  step for all samples, each sample reads its own generated part. Their code leaves
  the weight reads (``s N L_out`` bytes, shared by the batch) out; pass
  ``include_param_bytes=True`` to add them. This is the continuous form of the
  attention sums (``sum_c c ~ L_in L_out + L_out^2 / 2``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from scalinglab.cost_model.flops import check_positive, scalar_or_array

#: Arithmetic intensity (FLOP/byte) the Kinetics code uses to weigh memory traffic (the
#: NVIDIA B200's).
KINETICS_INTENSITY = 562.5


def attention_context_sum(prompt_len: ArrayLike, gen_len: ArrayLike) -> float | np.ndarray:
    """Sum of context lengths seen by ``gen_len`` generated tokens after a prompt.

    Token ``i`` (0-based) attends to ``prompt_len + i + 1`` positions (itself
    included), so the sum is ``gen_len * prompt_len + gen_len (gen_len + 1) / 2``.
    """
    p = check_positive("prompt_len", prompt_len, allow_zero=True)
    g = check_positive("gen_len", gen_len, allow_zero=True)
    return scalar_or_array(g * p + g * (g + 1.0) / 2.0)


def generation_flops(
    n_params: ArrayLike,
    gen_len: ArrayLike,
    *,
    prompt_len: ArrayLike = 0,
    n_layer: ArrayLike | None = None,
    d_attn: ArrayLike | None = None,
) -> float | np.ndarray:
    """FLOPs to generate ``gen_len`` tokens: ``2 N`` each plus attention reads.

    Parameters
    ----------
    n_params
        Parameters used per token (non-embedding ``N``).
    gen_len
        Generated tokens.
    prompt_len
        Tokens already in the cache (the prompt's own prefill is not counted).
    n_layer, d_attn
        Give both to add attention, ``4 n_layer d_attn`` FLOPs per attended position
        (see :func:`attention_context_sum`); ``d_attn = n_q_heads * head_dim``.

    Returns
    -------
    float or numpy.ndarray
        FLOPs.
    """
    flops = (
        2.0
        * check_positive("n_params", n_params)
        * check_positive("gen_len", gen_len, allow_zero=True)
    )
    if (n_layer is None) != (d_attn is None):
        raise ValueError("the attention term needs both n_layer and d_attn")
    if n_layer is not None:
        ctx = np.asarray(attention_context_sum(prompt_len, gen_len))
        flops = (
            flops
            + 4.0 * check_positive("n_layer", n_layer) * check_positive("d_attn", d_attn) * ctx
        )
    return scalar_or_array(flops)


def kv_cache_bytes(
    n_layer: ArrayLike,
    n_ctx: ArrayLike,
    *,
    n_kv_heads: ArrayLike,
    head_dim: ArrayLike,
    batch: ArrayLike = 1,
    dtype_bytes: int = 2,
) -> float | np.ndarray:
    """Bytes of a KV cache: ``2 n_layer n_ctx n_kv_heads head_dim batch s`` (K and V).

    Parameters
    ----------
    n_layer, n_ctx
        Layers and cached positions per sequence.
    n_kv_heads, head_dim
        Key/value heads (fewer than query heads under grouped-query attention) and
        their width.
    batch
        Sequences held.
    dtype_bytes
        Bytes per element ``s`` (2 for bf16/fp16).
    """
    return scalar_or_array(
        2.0
        * check_positive("n_layer", n_layer)
        * check_positive("n_ctx", n_ctx, allow_zero=True)
        * check_positive("n_kv_heads", n_kv_heads)
        * check_positive("head_dim", head_dim)
        * check_positive("batch", batch)
        * float(check_positive("dtype_bytes", dtype_bytes))
    )


def generation_kv_read_bytes(
    n_layer: ArrayLike,
    gen_len: ArrayLike,
    *,
    prompt_len: ArrayLike = 0,
    n_kv_heads: ArrayLike,
    head_dim: ArrayLike,
    dtype_bytes: int = 2,
) -> float | np.ndarray:
    """Bytes of KV cache read while generating ``gen_len`` tokens (one sequence).

    Each step reads the whole cache of its context (:func:`attention_context_sum`
    positions in total).
    """
    ctx = np.asarray(attention_context_sum(prompt_len, gen_len))
    per_position = np.asarray(
        kv_cache_bytes(
            n_layer, 1, n_kv_heads=n_kv_heads, head_dim=head_dim, dtype_bytes=dtype_bytes
        )
    )
    return scalar_or_array(per_position * ctx)


@dataclass(frozen=True)
class KineticsCost:
    """Kinetics' test-time cost of one problem (all fields scalars or arrays).

    Attributes
    ----------
    compute_flops
        Arithmetic in the weights and in attention.
    memory_bytes
        KV-cache reads (and weight reads when asked for).
    intensity_flop_per_byte
        ``I``, the weight that converts bytes into FLOP-equivalents.
    """

    compute_flops: float | np.ndarray
    memory_bytes: float | np.ndarray
    intensity_flop_per_byte: float

    @property
    def memory_eflops(self) -> float | np.ndarray:
        """Memory traffic in FLOP-equivalents, ``I * memory_bytes``."""
        return self.intensity_flop_per_byte * np.asarray(self.memory_bytes) * 1.0

    @property
    def eflops(self) -> float | np.ndarray:
        """Total cost ``compute_flops + I * memory_bytes`` (Kinetics' eFLOPs)."""
        return scalar_or_array(np.asarray(self.compute_flops) + np.asarray(self.memory_eflops))


def kinetics_cost(
    n_params: ArrayLike,
    prompt_len: ArrayLike,
    gen_len: ArrayLike,
    *,
    n_layer: int,
    n_q_heads: int,
    n_kv_heads: int,
    head_dim: int,
    n_samples: ArrayLike = 1,
    intensity_flop_per_byte: float = KINETICS_INTENSITY,
    kv_dtype_bytes: int = 2,
    include_param_bytes: bool = False,
) -> KineticsCost:
    """Kinetics' test-time cost of ``n_samples`` generations of ``gen_len`` tokens.

    See the module docstring for the formula (it matches ``dense_cost`` in the
    Kinetics code, with ``head_dim * n_layer`` as their ``head_dim``).

    Parameters
    ----------
    n_params
        Parameters ``N``.
    prompt_len, gen_len
        ``L_in`` and ``L_out`` in tokens.
    n_layer, n_q_heads, n_kv_heads, head_dim
        Attention shape.
    n_samples
        Parallel samples sharing the prompt (best-of-N).
    intensity_flop_per_byte
        ``I``; 562.5 in the Kinetics code.
    kv_dtype_bytes
        Bytes per KV element (2: bf16).
    include_param_bytes
        Add one read of the weights per decoding step, ``kv_dtype_bytes * N * L_out``.

    Returns
    -------
    KineticsCost
    """
    n = check_positive("n_params", n_params)
    lin = check_positive("prompt_len", prompt_len, allow_zero=True)
    lout = check_positive("gen_len", gen_len, allow_zero=True)
    samples = check_positive("n_samples", n_samples)
    width_q = float(n_layer) * float(n_q_heads) * float(head_dim)
    width_kv = float(n_layer) * float(n_kv_heads) * float(head_dim)
    compute = samples * (2.0 * n * lout + 2.0 * (2.0 * lin + lout) * lout * width_q)
    memory = float(kv_dtype_bytes) * (2.0 * lin + samples * lout) * lout * width_kv
    if include_param_bytes:
        memory = memory + float(kv_dtype_bytes) * n * lout
    return KineticsCost(
        scalar_or_array(compute), scalar_or_array(memory), float(intensity_flop_per_byte)
    )
