"""The cost model: the one place every study counts FLOPs, bytes and time.

Pure functions with units in their names (``*_flops``, ``*_bytes``, ``*_seconds``,
``*_flop_per_s``), vectorised over NumPy arrays:

- :mod:`~scalinglab.cost_model.flops`: GEMM FLOPs and bytes, transformer parameters,
  training FLOPs (6ND with the attention term), MFU.
- :mod:`~scalinglab.cost_model.inference`: generation FLOPs, KV-cache bytes,
  Kinetics' test-time cost.
- :mod:`~scalinglab.cost_model.sparse_ffn`: sparse-FFN FLOPs, bytes and ideal speedup.
- :mod:`~scalinglab.cost_model.tiled_gemm`: the work of a tiled GEMM on its busiest thread.
- :mod:`~scalinglab.cost_model.roofline`: roofline time, ridge point, attainable FLOP/s.
- :mod:`~scalinglab.cost_model.hardware`: the hardware record (measured or published),
  stored as JSON; measuring one is :mod:`scalinglab.kernels.hardware_probe`'s job, so the
  cost model runs no kernel and imports none.
"""

from scalinglab.cost_model.flops import (
    gemm_flops,
    gemm_intensity,
    gemm_min_bytes,
    mfu,
    training_flops,
    training_flops_per_token,
    transformer_params,
)
from scalinglab.cost_model.hardware import HardwareRecord, named_device
from scalinglab.cost_model.inference import (
    KineticsCost,
    attention_context_sum,
    generation_flops,
    generation_kv_read_bytes,
    kinetics_cost,
    kv_cache_bytes,
)
from scalinglab.cost_model.roofline import (
    arithmetic_intensity,
    attainable_flop_per_s,
    bound,
    fraction_of_roofline,
    ridge_point,
    roofline_seconds,
)
from scalinglab.cost_model.sparse_ffn import (
    sparse_ffn_bytes,
    sparse_ffn_flops,
    sparse_ffn_speedup,
    union_activation_ratio,
)
from scalinglab.cost_model.tiled_gemm import tiled_gemm_counts

__all__ = [
    "HardwareRecord",
    "KineticsCost",
    "arithmetic_intensity",
    "attainable_flop_per_s",
    "attention_context_sum",
    "bound",
    "fraction_of_roofline",
    "gemm_flops",
    "gemm_intensity",
    "gemm_min_bytes",
    "generation_flops",
    "generation_kv_read_bytes",
    "kinetics_cost",
    "kv_cache_bytes",
    "mfu",
    "named_device",
    "ridge_point",
    "roofline_seconds",
    "sparse_ffn_bytes",
    "sparse_ffn_flops",
    "sparse_ffn_speedup",
    "tiled_gemm_counts",
    "training_flops",
    "training_flops_per_token",
    "transformer_params",
    "union_activation_ratio",
]
