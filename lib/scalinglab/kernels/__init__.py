"""Kernels and the harness that times them.

- :mod:`~scalinglab.kernels.gemm_numba`: packed, tiled, register-blocked float32 GEMM
  in numba (tile sizes as parameters) and the textbook triple loop.
- :mod:`~scalinglab.kernels.gemm_triton`: a Triton GEMM, only importable where a
  CUDA device and Triton are present (see :func:`triton_available`).
- :mod:`~scalinglab.kernels.harness`: warm-up, repeats, cache flush, median/IQR,
  load recorded, results as an xarray Dataset.
- :mod:`~scalinglab.kernels.microbench`: FMA, BLAS and copy micro-benchmarks.
- :mod:`~scalinglab.kernels.hardware_probe`: this machine's hardware record, measured
  with them (:func:`~scalinglab.kernels.hardware_probe.measure_hardware`) and cached
  (:func:`~scalinglab.kernels.hardware_probe.hardware_record`).
- :mod:`~scalinglab.kernels.energy`: RAPL/NVML energy where the machine has it.

Importing this package does not compile anything; numba compiles on first call
(and caches to disk).
"""

from __future__ import annotations

import importlib.util


def triton_available() -> bool:
    """True if Triton is installed and torch sees a CUDA device (else skip the Triton GEMM)."""
    if importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


__all__ = ["triton_available"]
