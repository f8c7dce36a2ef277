"""Measuring this machine's roofs: the hardware record's micro-benchmarks, run and cached.

The cost model (:mod:`scalinglab.cost_model.hardware`) describes a machine by a
:class:`~scalinglab.cost_model.HardwareRecord` and stores it; measuring one runs kernels
(FMA chains, BLAS sgemm, a streaming copy from :mod:`scalinglab.kernels.microbench`,
thread counts from :mod:`scalinglab.kernels.harness`), so it lives here, next to them:

- :func:`measure_hardware`: run the micro-benchmarks now (about 10 s; 1 s ``quick``).
- :func:`hardware_record`: this machine's committed record (``data/hardware/``), an
  earlier measurement (git-ignored ``data/.cache/hardware/``), or a fresh measurement
  kept there (unless ``quick``). A measurement never lands in ``data/hardware/``, the
  studies' inputs: committing one is a deliberate copy.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from scalinglab.cost_model.hardware import (
    HardwareRecord,
    hardware_path,
    load_hardware,
    machine_key,
    save_hardware,
)
from scalinglab.kernels import microbench
from scalinglab.kernels.harness import thread_counts
from scalinglab.paths import data_dir
from scalinglab.provenance import environment


def measure_hardware(*, quick: bool = False, seed: int = 0) -> HardwareRecord:
    """Measure this machine's roofs (float32) with the micro-benchmarks.

    Parameters
    ----------
    quick
        Smaller, shorter runs (about 1 s instead of about 10 s): for tests.
    seed
        Seed of the random BLAS operands.

    Returns
    -------
    HardwareRecord
        ``fma_flop_per_s`` is the measured all-thread FMA rate (not the number of
        threads times the one-thread rate: on a shared machine that doubles a burst
        one core reached alone); ``peak_flop_per_s`` is the higher of that and BLAS
        (both are achieved rates, so each is a lower bound of the peak); provenance
        holds both FMA rates, the settings, threads, load averages and package
        versions.
    """
    settings = (
        {"passes": 200, "blas_n": 512, "copy_bytes": 1 << 26, "repeats": 2}
        if quick
        else {"passes": 2000, "blas_n": 2048, "copy_bytes": 1 << 29, "repeats": 5}
    )
    load_before = os.getloadavg()
    if load_before[0] >= 0.5:
        warnings.warn(
            f"measuring the hardware record while the machine is busy (1-min load "
            f"{load_before[0]:.2f}): BLAS and bandwidth will read low; re-measure on an idle "
            "machine with hardware_record(refresh=True)",
            RuntimeWarning,
            stacklevel=2,
        )
    threads = thread_counts()
    fma_all = microbench.fma_flop_per_s(passes=settings["passes"], repeats=settings["repeats"])
    fma_one = microbench.fma_flop_per_s(
        passes=settings["passes"], repeats=4 * settings["repeats"], threads=1
    )
    fma = fma_all  # the measured all-thread rate (not threads x the one-thread rate)
    blas = microbench.blas_sgemm_flop_per_s(
        n=settings["blas_n"], repeats=settings["repeats"], seed=seed
    )
    copy = microbench.copy_bytes_per_s(nbytes=settings["copy_bytes"], repeats=settings["repeats"])
    return HardwareRecord(
        name=machine_key(),
        peak_flop_per_s=max(fma, blas),
        mem_bytes_per_s=copy,
        dtype="float32",
        source="measured",
        blas_flop_per_s=blas,
        fma_flop_per_s=fma,
        n_cores=threads.get("cpu_count"),
        provenance={
            "method": "best of repeats: numba FMA chains on registers (peak = the measured "
            "all-thread rate; the one-thread rate is kept beside it); numpy float32 "
            "matmul on all BLAS threads; numba parallel streaming copy (read + "
            "write bytes)",
            "fma_all_threads_flop_per_s": fma_all,
            "fma_one_thread_flop_per_s": fma_one,
            "settings": settings,
            "threads": threads,
            "load_before": list(load_before),
            "load_after": list(os.getloadavg()),
            "environment": environment(),
        },
    )


def measured_path(key: str | None = None) -> Path:
    """``data/.cache/hardware/<machine key>.json``: where a measurement made now is kept.

    Git-ignored and outside every study's input globs (``data/hardware/*.json``), so
    measuring this machine never changes another study's inputs or findings; a record
    becomes committed only when someone copies it into ``data/hardware/``.
    """
    return data_dir() / ".cache" / "hardware" / f"{key or machine_key()}.json"


def hardware_record(*, refresh: bool = False, quick: bool = False) -> HardwareRecord:
    """This machine's record: committed, cached from an earlier measurement, or measured now.

    Parameters
    ----------
    refresh
        Measure again even if a record exists.
    quick
        Use :func:`measure_hardware`'s quick settings when measuring; a quick
        record is returned but not cached (it would shadow a full measurement).

    Returns
    -------
    HardwareRecord
        In this order: the committed record of this machine
        (``data/hardware/<key>.json``, :func:`~scalinglab.cost_model.hardware.hardware_path`);
        an earlier measurement (:func:`measured_path`); a measurement made now, kept at
        :func:`measured_path` unless ``quick``. Nothing is ever written to
        ``data/hardware/``: to commit a measurement, copy the file there.
    """
    committed, cached = hardware_path(), measured_path()
    if not refresh:
        for path in (committed, cached):
            if path.exists():
                return load_hardware(path)
    record = measure_hardware(quick=quick)
    if not quick:
        save_hardware(record, cached)
    return record
