"""The hardware record: a machine's peak FLOP/s and memory bandwidth, with where they came from.

A :class:`HardwareRecord` is either

- **measured** on this machine by micro-benchmarks
  (:func:`scalinglab.kernels.hardware_probe.measure_hardware`): FMA throughput on
  registers (the arithmetic peak), NumPy/BLAS sgemm (what a tuned library reaches) and a
  parallel streaming copy (memory bandwidth); cached as JSON with provenance under
  ``data/hardware/`` (:func:`hardware_path`, :func:`save_hardware`, :func:`load_hardware`)
  so that every study on the machine uses the same numbers
  (:func:`scalinglab.kernels.hardware_probe.hardware_record`); or
- **published** for a named device (:func:`named_device`), for planning: vendor
  datasheet figures, dense (no structured sparsity), per dtype.

This module only describes and stores records; it measures nothing (the measuring code
lives with the kernels it runs, in :mod:`scalinglab.kernels.hardware_probe`).

Units are in the field names: ``*_flop_per_s`` (FLOP/s), ``*_bytes_per_s`` (bytes/s).
"""

from __future__ import annotations

import json
import os
import platform
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scalinglab import atomic
from scalinglab.paths import data_dir

#: Published dense peaks (FLOP/s) per dtype and memory bandwidth (bytes/s).
#: Sources: NVIDIA H100 and H200 datasheets (SXM), A100 datasheet (SXM 80GB),
#: Ada Lovelace architecture whitepaper (RTX 4090; tensor rates with FP32 accumulate).
PUBLISHED: dict[str, dict[str, Any]] = {
    "H100 SXM": {
        "peak_flop_per_s": {
            "float32": 67e12,
            "tf32": 494.7e12,
            "bfloat16": 989.4e12,
            "float16": 989.4e12,
            "fp8": 1978.9e12,
        },
        "mem_bytes_per_s": 3.35e12,
        "source": "NVIDIA H100 Tensor Core GPU datasheet (SXM5, dense)",
    },
    "H200 SXM": {
        "peak_flop_per_s": {
            "float32": 67e12,
            "tf32": 494.7e12,
            "bfloat16": 989.4e12,
            "float16": 989.4e12,
            "fp8": 1978.9e12,
        },
        "mem_bytes_per_s": 4.8e12,
        "source": "NVIDIA H200 Tensor Core GPU datasheet (SXM, dense)",
    },
    "A100 SXM 80GB": {
        "peak_flop_per_s": {
            "float32": 19.5e12,
            "tf32": 156e12,
            "bfloat16": 312e12,
            "float16": 312e12,
        },
        "mem_bytes_per_s": 2.039e12,
        "source": "NVIDIA A100 Tensor Core GPU datasheet (SXM 80GB, dense)",
    },
    "RTX 4090": {
        "peak_flop_per_s": {"float32": 82.6e12, "bfloat16": 165.2e12, "float16": 165.2e12},
        "mem_bytes_per_s": 1.008e12,
        "source": "NVIDIA Ada Lovelace architecture whitepaper (dense, FP32 accumulate)",
    },
}


@dataclass(frozen=True)
class HardwareRecord:
    """Roofs of one machine for one dtype.

    Attributes
    ----------
    name
        Device or host description.
    peak_flop_per_s
        Arithmetic roof in FLOP/s (measured: the FMA micro-benchmark, or BLAS if higher).
    mem_bytes_per_s
        Memory roof in bytes/s.
    dtype
        Element type the FLOP/s refer to.
    source
        ``"measured"`` or ``"published"``.
    blas_flop_per_s, fma_flop_per_s
        Measured sgemm and FMA throughput (measured records only).
    n_cores
        CPU cores used (measured records only).
    provenance
        How and when it was made: micro-benchmark settings, threads, versions, datasheet.
    """

    name: str
    peak_flop_per_s: float
    mem_bytes_per_s: float
    dtype: str = "float32"
    source: str = "published"
    blas_flop_per_s: float | None = None
    fma_flop_per_s: float | None = None
    n_cores: int | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for f in ("peak_flop_per_s", "mem_bytes_per_s"):
            v = getattr(self, f)
            if not (isinstance(v, int | float) and v > 0):
                raise ValueError(f"{f} must be a positive number, got {v!r}")

    @property
    def ridge_flop_per_byte(self) -> float:
        """Ridge point: ``peak_flop_per_s / mem_bytes_per_s``."""
        return self.peak_flop_per_s / self.mem_bytes_per_s

    @property
    def blas_fraction_of_peak(self) -> float | None:
        """How close BLAS sgemm gets to the FMA peak (measured records)."""
        if self.blas_flop_per_s is None or self.fma_flop_per_s is None:
            return None
        return self.blas_flop_per_s / self.fma_flop_per_s

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (inverse of :meth:`from_json`)."""
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> HardwareRecord:
        """Build from :meth:`to_json` output (unknown keys are an error)."""
        return cls(**d)


def named_device(name: str, *, dtype: str = "bfloat16") -> HardwareRecord:
    """The published record of a named device (see :data:`PUBLISHED`), for planning.

    Raises
    ------
    KeyError
        Unknown device or dtype (the message lists the known ones).
    """
    if name not in PUBLISHED:
        raise KeyError(f"unknown device {name!r}; known: {sorted(PUBLISHED)}")
    spec = PUBLISHED[name]
    peaks = spec["peak_flop_per_s"]
    if dtype not in peaks:
        raise KeyError(f"{name}: no published peak for {dtype!r}; known: {sorted(peaks)}")
    return HardwareRecord(
        name=name,
        peak_flop_per_s=float(peaks[dtype]),
        mem_bytes_per_s=float(spec["mem_bytes_per_s"]),
        dtype=dtype,
        source="published",
        provenance={"source": spec["source"]},
    )


def machine_key() -> str:
    """File-name key of this machine: CPU model and core count, e.g. ``intel-xeon-processor-2c``."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1]
                break
    except OSError:
        pass
    slug = re.sub(r"[^a-z0-9]+", "-", re.sub(r"\(r\)|\(tm\)", "", model.lower())).strip("-")
    return f"{slug or 'cpu'}-{os.cpu_count() or 1}c"


def hardware_path(key: str | None = None) -> Path:
    """``data/hardware/<machine key>.json``."""
    return data_dir() / "hardware" / f"{key or machine_key()}.json"


def save_hardware(record: HardwareRecord, path: Path | None = None) -> Path:
    """Write ``record`` as JSON (atomically) to ``path`` or :func:`hardware_path`."""
    path = Path(path) if path is not None else hardware_path()
    atomic.write_text(path, json.dumps(record.to_json(), indent=2, sort_keys=True) + "\n")
    return path


def load_hardware(path: Path) -> HardwareRecord:
    """Read a record written by :func:`save_hardware`."""
    return HardwareRecord.from_json(json.loads(Path(path).read_text()))
