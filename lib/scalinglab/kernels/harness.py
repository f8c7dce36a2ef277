"""The benchmark harness every kernel is timed with.

For each case and implementation: build the call (inputs allocated outside the
timing), run it ``warmup`` times untimed (numba compiles on first call), then
``repeats`` timed calls, each preceded by a cache flush: a write over a buffer
larger than the last-level cache, so every timed call starts with its operands in
main memory, as in a real workload (without it small problems look several times
faster). The machine's load average (``os.getloadavg``) is recorded before and
after each case: on a shared machine, numbers taken under load are noisy and say
so. Results are an :class:`xarray.Dataset` with dims ``impl``, ``case`` and
``repeat``; each case's labels (``M``, ``N``, ``K``, tile sizes...) are coords
along ``case``. Summaries are medians and interquartile ranges.

``time.perf_counter_ns`` is the clock; the harness is hand-written because the
standard tools (``timeit``, pytest-benchmark) neither flush caches between calls
nor return xarray results.
"""

from __future__ import annotations

import contextlib
import os
import platform
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
from tqdm import tqdm

from scalinglab.kernels.energy import EnergyMeter

#: Flush buffer used when the cache size cannot be read (64 MiB).
FALLBACK_FLUSH_BYTES = 64 * 2**20

#: A kernel factory: given a case (a mapping of labels), return a zero-argument
#: callable that runs the kernel once, or None when the kernel does not apply.
KernelFactory = Callable[[Mapping[str, Any]], Callable[[], object] | None]


def last_level_cache_bytes() -> int | None:
    """Size of the largest CPU cache in bytes (Linux sysfs), or None if unknown."""
    sizes = []
    for f in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        txt = f.read_text().strip().upper()
        mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(txt[-1:], 1)
        digits = txt.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * mult)
    return max(sizes) if sizes else None


def default_flush_bytes() -> int:
    """A flush buffer just larger than the last-level cache (1.25x), else 64 MiB."""
    llc = last_level_cache_bytes()
    return int(1.25 * llc) if llc else FALLBACK_FLUSH_BYTES


class CacheFlusher:
    """Evicts the caches by writing every cache line of a large buffer.

    Parameters
    ----------
    nbytes
        Buffer size; it should exceed the last-level cache (see
        :func:`default_flush_bytes`). 0 disables flushing.
    """

    def __init__(self, nbytes: int) -> None:
        if nbytes < 0:
            raise ValueError(f"flush buffer size must be >= 0, got {nbytes}")
        self.nbytes = int(nbytes)
        self.calls = 0
        self._buf = np.zeros(self.nbytes // 8, dtype=np.int64) if self.nbytes else None

    def __call__(self) -> None:
        """Touch (read and write) the whole buffer once."""
        self.calls += 1
        if self._buf is not None:
            self._buf += 1


def summarize(seconds: np.ndarray, *, axis: int = -1) -> dict[str, np.ndarray]:
    """Median, quartiles and interquartile range of timings, ignoring NaN.

    Parameters
    ----------
    seconds
        Timings, repeats along ``axis``.

    Returns
    -------
    dict
        ``median_s``, ``q25_s``, ``q75_s``, ``iqr_s`` (arrays with ``axis`` removed).
        Quartiles use NumPy's default (linear) interpolation.
    """
    x = np.asarray(seconds, dtype=float)
    with warnings.catch_warnings():  # all-NaN rows (kernel not applicable) give NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        q25, med, q75 = np.nanquantile(x, [0.25, 0.5, 0.75], axis=axis)
    return {"median_s": med, "q25_s": q25, "q75_s": q75, "iqr_s": q75 - q25}


def time_call(
    fn: Callable[[], object],
    *,
    repeats: int,
    warmup: int = 1,
    flush: Callable[[], None] | None = None,
) -> np.ndarray:
    """Time ``fn()`` ``repeats`` times after ``warmup`` untimed calls.

    ``flush`` (if given) runs before every timed call, outside the timing.

    Returns
    -------
    numpy.ndarray
        Shape ``(repeats,)``, seconds.
    """
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got {repeats}, {warmup}")
    for _ in range(warmup):
        fn()
    out = np.empty(repeats)
    for r in range(repeats):
        if flush is not None:
            flush()
        t0 = time.perf_counter_ns()
        fn()
        out[r] = (time.perf_counter_ns() - t0) * 1e-9
    return out


def _case_coords(cases: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, list]]:
    keys: list[str] = []
    for c in cases:
        keys.extend(k for k in c if k not in keys)
    coords = {}
    for key in keys:
        values = [c.get(key) for c in cases]
        if any(v is None for v in values):
            raise ValueError(f"case label {key!r} is missing from some cases")
        coords[key] = ("case", values)
    return coords


def thread_counts() -> dict[str, int]:
    """Threads numba and the BLAS library will use (what the timings ran on)."""
    out = {"cpu_count": os.cpu_count() or 1}
    try:
        import numba

        out["numba_threads"] = int(numba.get_num_threads())
    except ImportError:  # pragma: no cover - numba is a dependency
        pass
    try:
        from threadpoolctl import threadpool_info

        blas = [p for p in threadpool_info() if p.get("user_api") == "blas"]
        if blas:
            out["blas_threads"] = int(blas[0]["num_threads"])
    except ImportError:  # pragma: no cover - comes with scikit-learn
        pass
    return out


def benchmark(
    kernels: Mapping[str, KernelFactory],
    cases: Sequence[Mapping[str, Any]],
    *,
    repeats: int = 5,
    warmup: int = 1,
    flush_bytes: int | None = None,
    progress: bool = True,
    flusher: CacheFlusher | None = None,
    energy: bool = False,
) -> xr.Dataset:
    """Time every kernel on every case.

    Parameters
    ----------
    kernels
        ``{impl name: factory}``; ``factory(case)`` returns the call to time (with
        its inputs already built) or None if the kernel does not apply to the case.
    cases
        Label mappings, e.g. ``{"M": 64, "N": 64, "K": 64, "tile": "16x16x64"}``;
        every case must have the same keys (they become coords along ``case``).
    repeats, warmup
        Timed and untimed calls per (impl, case).
    flush_bytes
        Cache-flush buffer; default :func:`default_flush_bytes`; 0 disables.
    flusher
        An existing :class:`CacheFlusher` to reuse (overrides ``flush_bytes``).
    energy
        Measure each cell's energy (all its timed and warm-up calls and flushes)
        with :class:`~scalinglab.kernels.energy.EnergyMeter` where the machine
        allows; ``attrs["energy"]`` says what was used or why it could not be.

    Returns
    -------
    xarray.Dataset
        ``seconds`` (impl, case, repeat), NaN where a kernel does not apply;
        ``median_s``, ``q25_s``, ``q75_s``, ``iqr_s`` (impl, case);
        ``load_before``, ``load_after`` (impl, case): 1-minute load averages;
        ``energy_j`` (impl, case): joules per cell, NaN where not measured.
        Attrs: repeats, warmup, flush_bytes, thread counts, CPU, timer.
    """
    if not kernels or not cases:
        raise ValueError("benchmark needs at least one kernel and one case")
    coords = _case_coords(cases)
    if flusher is None:
        flusher = CacheFlusher(default_flush_bytes() if flush_bytes is None else flush_bytes)
    impls = list(kernels)
    seconds = np.full((len(impls), len(cases), repeats), np.nan)
    load = np.full((2, len(impls), len(cases)), np.nan)
    joules = np.full((len(impls), len(cases)), np.nan)
    energy_note = "not requested"
    bar = tqdm(total=len(impls) * len(cases), desc="benchmark", disable=not progress, unit="case")
    try:
        for j, case in enumerate(cases):
            for i, impl in enumerate(impls):
                fn = kernels[impl](case)
                if fn is not None:
                    load[0, i, j] = os.getloadavg()[0]
                    meter = EnergyMeter() if energy else None
                    with meter or contextlib.nullcontext():
                        seconds[i, j] = time_call(fn, repeats=repeats, warmup=warmup, flush=flusher)
                    load[1, i, j] = os.getloadavg()[0]
                    if meter is not None:
                        energy_note = meter.reason
                        joules[i, j] = np.nan if meter.joules is None else meter.joules
                bar.update(1)
    finally:
        bar.close()
    stats = summarize(seconds, axis=-1)
    ds = xr.Dataset(
        {
            "seconds": (("impl", "case", "repeat"), seconds, {"units": "s"}),
            **{k: (("impl", "case"), v, {"units": "s"}) for k, v in stats.items()},
            "load_before": (("impl", "case"), load[0], {"long_name": "1-min load average"}),
            "load_after": (("impl", "case"), load[1], {"long_name": "1-min load average"}),
            "energy_j": (("impl", "case"), joules, {"units": "J"}),
        },
        coords={
            "impl": impls,
            "case": np.arange(len(cases)),
            "repeat": np.arange(repeats),
            **coords,
        },
        attrs={
            "repeats": repeats,
            "warmup": warmup,
            "flush_bytes": flusher.nbytes,
            "energy": energy_note,
            "timer": "time.perf_counter_ns",
            "cpu": platform.processor() or platform.machine(),
            **thread_counts(),
        },
    )
    return ds
