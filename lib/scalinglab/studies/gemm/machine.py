"""The machine the GEMM study reports on: its committed record and the spread of its timings.

Two things a timing finding needs beyond one process's repeats:

- **Which machine.** :func:`study_hardware` reuses the hardware record committed under
  ``data/hardware/`` (the machine the committed sweep ran on) unless asked to
  re-measure, so running the study on another CPU does not silently swap the roofs
  under the committed timings.
- **How much a re-run moves.** Repeats inside one process share its state (thread
  placement, frequency, the neighbours' load) and give intervals that a re-run of
  identical code falls outside of. :func:`run_spread` measures the hardware figures
  (FMA peak, BLAS sgemm) and the tiled kernel against BLAS in ``processes`` separate
  processes started one after another; :func:`over_processes` gives the median over
  processes with a bootstrap over processes, and :func:`between_process_sigma` the
  spread of a cell's median across processes (used to widen the sweep's per-cell
  intervals, :mod:`scalinglab.studies.gemm.analysis`).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import xarray as xr

from scalinglab.cost_model import HardwareRecord
from scalinglab.cost_model.hardware import hardware_path, load_hardware, machine_key
from scalinglab.errors import ParameterError
from scalinglab.paths import data_dir
from scalinglab.stats.bootstrap import percentile_interval, resample_groups
from scalinglab.sweeps import cached_dataset

STUDY = "gemm_cost_model"
SPREAD_VERSION = 2


def all_thread_peak(hw: HardwareRecord) -> HardwareRecord:
    """The record with its arithmetic peak set to the measured all-thread FMA rate.

    Older records took the higher of the all-thread rate and ``threads x`` the
    one-thread rate (on a shared 2-core machine, twice a burst that one core
    reached alone); a record whose provenance holds ``fma_all_threads_flop_per_s``
    gets that measured rate (or BLAS's, if higher) as its peak. Others are returned as is.
    """
    fma_all = hw.provenance.get("fma_all_threads_flop_per_s") if hw.provenance else None
    if fma_all is None:
        return hw
    peak = max(float(fma_all), float(hw.blas_flop_per_s or 0.0))
    return replace(hw, peak_flop_per_s=peak, fma_flop_per_s=float(fma_all))


def study_hardware(
    spec: str = "", *, remeasure: bool = False, quick: bool = False
) -> tuple[HardwareRecord, str]:
    """:func:`_study_hardware` with the peak the measured all-thread rate (:func:`all_thread_peak`)."""
    hw, note = _study_hardware(spec, remeasure=remeasure, quick=quick)
    return all_thread_peak(hw), note


def _study_hardware(
    spec: str = "", *, remeasure: bool = False, quick: bool = False
) -> tuple[HardwareRecord, str]:
    """The hardware record the study uses, and a sentence saying where it came from.

    Parameters
    ----------
    spec
        ``""``: the committed record (below); otherwise as
        :func:`scalinglab.studies.gemm.sweep.resolve_hardware` (a published device
        name or a record ``.json``).
    remeasure
        Measure this machine now (and cache the record unless ``quick``).
    quick
        Quick micro-benchmark settings when measuring (tests).

    Without ``spec`` or ``remeasure``: this machine's committed record if there is
    one, else the only committed record (the machine the committed sweep ran on,
    named in the sentence), else a measurement now.
    """
    from scalinglab.kernels.hardware_probe import hardware_record

    if spec:
        from scalinglab.studies.gemm.sweep import resolve_hardware

        hw = resolve_hardware(spec, quick=quick)
        return hw, f"hardware record {spec!r} ({hw.source})"
    if remeasure:
        hw = hardware_record(refresh=True, quick=quick)
        return hw, (
            f"measured now on this machine ({machine_key()}), as asked; kept in "
            "data/.cache/hardware/ (copy it to data/hardware/ to commit it)"
        )
    own = hardware_path()
    if own.exists():
        return load_hardware(own), f"committed record of this machine ({own.name})"
    committed = sorted((data_dir() / "hardware").glob("*.json"))
    if len(committed) == 1:
        hw = load_hardware(committed[0])
        return hw, (
            f"committed record {committed[0].name}: measured on {hw.name}, not on this "
            f"machine ({machine_key()}); pass remeasure_hardware=True to measure here"
        )
    if committed:
        raise ParameterError(
            f"no committed hardware record for this machine ({machine_key()}) and several "
            f"others ({', '.join(p.name for p in committed)}): choose one with hardware=PATH "
            "or measure with remeasure_hardware=True"
        )
    hw = hardware_record(quick=quick)
    return hw, f"measured now on this machine ({machine_key()}): nothing was committed"


def spread_applies(spread: xr.Dataset, hw: HardwareRecord) -> tuple[bool, str]:
    """Whether a recorded re-run spread may qualify timings of the machine ``hw`` describes.

    It may not when it was recorded on another machine, or under overload (the
    1-min load average above the core count in most of its processes: BLAS then
    runs at a small fraction of the record's rate, and the spread measures the
    neighbours). Returns the answer and a sentence saying why.
    """
    where = str(spread.attrs.get("machine", "?"))
    cores = int(spread.attrs.get("cpu_count", 0) or 0)
    loads = np.asarray(spread["load_before"].values, dtype=float).ravel()
    if where != hw.name:
        return False, (
            f"the spread was recorded on {where}, not on {hw.name} (the sweep's machine)"
        )
    if cores and loads.size and float(np.median(loads)) > cores:
        return False, (
            f"the spread was recorded under overload (median 1-min load "
            f"{float(np.median(loads)):.1f} on {cores} cores)"
        )
    return True, f"the spread was recorded on {where}, the sweep's machine"


@dataclass(frozen=True)
class SpreadConfig:
    """What the between-process measurement runs (its hash is the cache key)."""

    processes: int
    repeats: int
    shape: tuple[int, int, int]
    tiles: tuple[tuple[int, int, int], ...]
    flush_bytes: int
    quick_hardware: bool
    seed: int
    version: int = SPREAD_VERSION

    def to_dict(self) -> dict:
        """JSON-able form."""
        d = asdict(self)
        d["shape"] = list(self.shape)
        d["tiles"] = [list(t) for t in self.tiles]
        return d


def committed_sweep_config(
    compute_class: str, *, seed: int = 0, flush_mib: float = -1.0, rerun: bool = False
):
    """The sweep config of a compute class, as committed when a committed sweep has it.

    Two settings follow the machine: the cache flush (1.25x the last-level cache) and
    the tiles (whole register blocks, 12x32 with AVX-512, 6x16 with AVX2). On another
    CPU they, and the cache key, would change and the study would re-time the sweep
    instead of reading the committed one. Unless ``rerun`` or an explicit
    ``flush_mib``, a committed ``data/gemm_cost_model/sweep-*.nc`` whose config differs
    from this machine's only in ``flush_bytes`` and ``tiles`` is taken as it was run.

    Returns
    -------
    (SweepConfig, (mr, nr))
        The config, and the register block its tiles were built from (the kernel
        model counts work in those blocks).
    """
    from scalinglab.kernels.microkernel import MR, NR
    from scalinglab.studies.gemm.sweep import SweepConfig, sweep_config

    cfg = sweep_config(compute_class, seed=seed, flush_mib=flush_mib)
    if rerun or flush_mib >= 0:
        return cfg, (MR, NR)
    want = {k: v for k, v in cfg.to_dict().items() if k not in ("flush_bytes", "tiles")}
    for path in sorted((data_dir() / STUDY).glob("sweep-*.nc")):
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            stored = json.loads(ds.attrs.get("config", "{}"))
        if {k: v for k, v in stored.items() if k not in ("flush_bytes", "tiles")} != want:
            continue
        tiles = tuple(tuple(int(x) for x in t) for t in stored["tiles"])
        if len(tiles) != len(cfg.tiles):
            continue
        mr = MR * tiles[0][0] // cfg.tiles[0][0]
        nr = NR * tiles[0][1] // cfg.tiles[0][1]
        return SweepConfig(**{**stored, "shapes": cfg.shapes, "tiles": tiles}), (mr, nr)
    return cfg, (MR, NR)


def spread_config(
    compute_class: str, *, seed: int = 0, processes: int = -1, flush_mib: float = -1.0
) -> SpreadConfig:
    """The spread measurement of a compute class (the sweep's largest square shape and
    three of its tiles, its cache flush; ``processes < 0``: the class default, 2 for
    tiny, 6 for small)."""
    sweep, _ = committed_sweep_config(compute_class, seed=seed, flush_mib=flush_mib)
    square = [s for s in sweep.shapes if s[0] == s[1] == s[2]]
    shape = max(square or sweep.shapes, key=lambda s: s[0] * s[1] * s[2])
    tiles = tuple(sweep.tiles[i] for i in sorted({0, len(sweep.tiles) // 2, len(sweep.tiles) - 1}))
    tiny = compute_class == "tiny"
    return SpreadConfig(
        processes=processes if processes > 0 else (2 if tiny else 6),
        repeats=2 if tiny else 3,
        shape=tuple(shape),
        tiles=tiles,
        flush_bytes=sweep.flush_bytes,
        quick_hardware=tiny,
        seed=seed,
    )


def _one_process(cfg: dict) -> dict:
    """Everything one process measures (runs in a fresh, spawned process)."""
    from scalinglab.kernels.gemm_numba import gemm_tiled, warm_up
    from scalinglab.kernels.hardware_probe import measure_hardware
    from scalinglab.kernels.harness import CacheFlusher, benchmark

    load = os.getloadavg()[0]
    warm_up()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # busy-machine note: load is recorded
        hw = measure_hardware(quick=cfg["quick_hardware"], seed=cfg["seed"])
    m, n, k = cfg["shape"]
    rng = np.random.default_rng(cfg["seed"])
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    cases = [{"tile_m": t[0], "tile_n": t[1], "tile_k": t[2]} for t in cfg["tiles"]]
    first = cases[0]
    raw = benchmark(
        {
            "numba_tiled": lambda c: (
                lambda: gemm_tiled(a, b, tile_m=c["tile_m"], tile_n=c["tile_n"], tile_k=c["tile_k"])
            ),
            "blas": lambda c: (lambda: a @ b) if c == first else None,
        },
        cases,
        repeats=cfg["repeats"],
        warmup=1,
        flusher=CacheFlusher(cfg["flush_bytes"]),
        progress=False,
        energy=False,
    )
    return {
        "fma": hw.fma_flop_per_s,
        "blas_peak": hw.blas_flop_per_s,
        "load": load,
        "tiled": raw["seconds"].sel(impl="numba_tiled").values,
        "blas": raw["seconds"].sel(impl="blas").values[0],
    }


def run_spread(cfg: SpreadConfig) -> xr.Dataset:
    """Measure in ``cfg.processes`` fresh processes, one after another.

    Returns
    -------
    xarray.Dataset
        ``fma_flop_per_s``, ``blas_flop_per_s``, ``load_before`` (process);
        ``tiled_seconds`` (process, tile, repeat); ``blas_seconds`` (process, repeat).
    """
    ctx = multiprocessing.get_context("spawn")
    out = []
    for _ in range(cfg.processes):
        with ctx.Pool(1) as pool:
            out.append(pool.apply(_one_process, (cfg.to_dict(),)))
    tiles = np.array(cfg.tiles)
    return xr.Dataset(
        {
            "fma_flop_per_s": ("process", [o["fma"] for o in out]),
            "blas_flop_per_s": ("process", [o["blas_peak"] for o in out]),
            "load_before": ("process", [o["load"] for o in out]),
            "tiled_seconds": (
                ("process", "tile", "repeat"),
                np.stack([o["tiled"] for o in out]),
                {"units": "s"},
            ),
            "blas_seconds": (
                ("process", "repeat"),
                np.stack([o["blas"] for o in out]),
                {"units": "s"},
            ),
        },
        coords={
            "process": np.arange(cfg.processes),
            "repeat": np.arange(cfg.repeats),
            "tile": ["x".join(map(str, t)) for t in cfg.tiles],
            "tile_m": ("tile", tiles[:, 0]),
            "tile_n": ("tile", tiles[:, 1]),
            "tile_k": ("tile", tiles[:, 2]),
        },
        attrs={
            "shape": "x".join(map(str, cfg.shape)),
            "machine": machine_key(),
            "cpu_count": os.cpu_count() or 1,
        },
    )


def cached_spread(cfg: SpreadConfig, *, rerun: bool = False) -> xr.Dataset:
    """:func:`run_spread` through ``data/gemm_cost_model/spread-<hash>.nc``."""
    return cached_dataset(STUDY, "spread", cfg.to_dict(), lambda: run_spread(cfg), rerun=rerun)


def per_process(ds: xr.Dataset) -> dict[str, np.ndarray]:
    """Per-process figures, each ``(process,)``.

    - ``roof_flop_per_s``: the arithmetic roof a process measures, the larger of its
      FMA probe and its BLAS sgemm rate (both are achieved rates, so each is a lower
      bound of the machine's peak; a BLAS rate above the probe means the probe
      under-read the peak in that process).
    - ``blas_over_fma_probe``: BLAS sgemm over the FMA probe (a ratio of two measured
      rates, not a fraction of a physical peak: it can exceed 1).
    - ``tiled_fraction_of_blas``: BLAS median time over the best tile's median time at
      the spread's shape.
    """
    tiled = np.nanmedian(ds["tiled_seconds"].values, axis=2).min(axis=1)
    blas = np.nanmedian(ds["blas_seconds"].values, axis=1)
    fma = np.asarray(ds["fma_flop_per_s"].values, float)
    blas_rate = np.asarray(ds["blas_flop_per_s"].values, float)
    return {
        "roof_flop_per_s": np.fmax(fma, blas_rate),
        "blas_over_fma_probe": blas_rate / fma,
        "tiled_fraction_of_blas": blas / tiled,
    }


def over_processes(
    values: np.ndarray, *, reps: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """Median over processes ``(process,)`` and its percentile bootstrap over processes."""
    v = np.asarray(values, float)
    rng = np.random.default_rng(seed)
    boot = np.median(v[resample_groups(rng, v.size, reps)], axis=1)
    lo, hi = percentile_interval(boot, level=level)
    return float(np.median(v)), (float(lo), float(hi))


def between_process_sigma(ds: xr.Dataset) -> float:
    """Standard deviation across processes of a cell's log median time, pooled over the
    spread's cells (tiles and BLAS): the noise a new process adds to a cell's median."""
    cells = np.log(np.nanmedian(ds["tiled_seconds"].values, axis=2))  # (process, tile)
    blas = np.log(np.nanmedian(ds["blas_seconds"].values, axis=1))[:, None]
    both = np.concatenate([cells, blas], axis=1)
    if both.shape[0] < 2:
        return 0.0
    return float(np.sqrt(np.mean(np.var(both, axis=0, ddof=1))))


def spread_path(cfg: SpreadConfig) -> Path:
    """Where :func:`cached_spread` keeps ``cfg``'s measurement."""
    from scalinglab.compute import dataset_path

    return dataset_path(STUDY, "spread", cfg.to_dict())


def rerun_interval(
    point: float, per_process: np.ndarray, *, level: float = 0.95
) -> tuple[float, float]:
    """Interval of a figure measured in one process, from its spread over processes.

    ``point`` is one process's figure (e.g. the committed hardware record's);
    ``per_process`` ``(process,)`` the same figure measured in separate processes. A
    single process's value scatters log-normally around the machine's, with the
    standard deviation ``s`` of ``log(per_process)``; the interval is
    ``point * exp(+-t * s)`` with ``t`` Student's quantile on ``process - 1`` degrees
    of freedom (so it always holds ``point``; a re-run lands inside it with
    probability about ``P(|Z| < z / sqrt 2)``, 0.83 at 95%).
    """
    from scipy.stats import t as student_t

    v = np.asarray(per_process, float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size < 2:
        raise ValueError("a re-run interval needs the figure from at least 2 processes")
    half = float(student_t.ppf(0.5 + level / 2, v.size - 1) * np.std(np.log(v), ddof=1))
    return float(point * np.exp(-half)), float(point * np.exp(half))


def rerun_coverage(
    ds: xr.Dataset, *, reps: int = 500, level: float = 0.95, seed: int = 0
) -> dict[str, dict[str, float]]:
    """How often a re-run's point lands inside one run's interval, with and without the
    between-process widening.

    Every ordered pair of processes ``(i, j)``: process ``i`` plays the report
    (its point and interval), process ``j`` the re-run of identical code. The
    between-process noise (``between_process_sigma``) and the re-run spread come from
    the *other* processes only, so no pair checks itself against its own spread.

    Returns
    -------
    dict
        Per figure (``tiled_fraction_of_blas``, ``roof_flop_per_s``):
        ``within_process`` (the repeats of one process only; None where one process
        gives no interval), ``between_processes`` (as the study computes it), and
        ``pairs``.
    """
    from scalinglab.studies.gemm.analysis import speed_ratio

    n = ds.sizes["process"]
    if n < 4:
        raise ValueError(f"re-run coverage needs at least 4 processes, got {n}")
    per = per_process(ds)
    best = np.nanmedian(ds["tiled_seconds"].values, axis=2).argmin(axis=1)
    hits = {"tiled_within": [], "tiled_between": [], "roof_between": []}
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            others = [k for k in range(n) if k not in (i, j)]
            sigma = between_process_sigma(ds.isel(process=others))
            blas_i = ds["blas_seconds"].values[i]
            tiled_i = ds["tiled_seconds"].values[i, best[i]]
            target = per["tiled_fraction_of_blas"][j]
            for key, s in (("tiled_within", 0.0), ("tiled_between", sigma)):
                _, (lo, hi) = speed_ratio(
                    blas_i, tiled_i, reps=reps, level=level, seed=seed, between_sigma=s
                )
                hits[key].append(lo <= target <= hi)
            roof = per["roof_flop_per_s"]
            lo, hi = rerun_interval(roof[i], roof[others], level=level)
            hits["roof_between"].append(lo <= roof[j] <= hi)
    pairs = n * (n - 1)
    return {
        "tiled_fraction_of_blas": {
            "within_process": float(np.mean(hits["tiled_within"])),
            "between_processes": float(np.mean(hits["tiled_between"])),
            "pairs": pairs,
        },
        "roof_flop_per_s": {
            "within_process": None,
            "between_processes": float(np.mean(hits["roof_between"])),
            "pairs": pairs,
        },
    }
