"""The sparse FFN kernel timed offline, as data: one explicit launch, one committed file.

A report that times the kernel while it renders gets the machine's load of that minute
(seven committed reports read 0.92x to 1.46x for the same real-mask speedup). Here the
timing is its own command,

.. code-block:: bash

    python -m scalinglab.studies.sparsity.time_kernel            # one timing run
    python -m scalinglab.studies.sparsity.time_kernel --cores 1  # pinned to core 1

and each launch writes ``data/sparsity_laws/kernel-timings-<UTC time>.nc`` (the benchmark's
per-call seconds, dims ``d_ff, impl, case, repeat``), with the machine (host, CPU
model, core count), the cores the process was pinned to (``os.sched_setaffinity``),
the load average before and after, thread counts and the usual provenance. Beside the
timings each file holds the **deterministic proxy** the timings are compared with: the
union fraction of the masks actually read (``union_ratio``) and the bytes the dense and
the sparse FFN must read (:func:`scalinglab.cost_model.sparse_ffn_bytes` at that union),
whose ratio is the memory-bound ideal speedup.

Widths: ``d_model = 1024`` and 2048, 4096, 8192 hidden units (gated: three matrices,
24-96 MiB of float32 weights, beyond the caches, so the dense FFN streams memory and a
call is milliseconds, not per-call overhead).

:func:`load_timings` reads every committed file; :func:`between_run_speedups` gives, per
cell, each timing run's speedup (dense median over sparse median) and the median and
range *over runs*: the interval a re-timing on another day has to respect, which a
bootstrap over one process's repeats is not.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.compute import save_dataset
from scalinglab.paths import data_dir
from scalinglab.studies.sparsity.config import STUDY

#: File name pattern of a timing run under ``data/sparsity_laws/``.
PATTERN = "kernel-timings-*.nc"
WIDTHS = (2048, 4096, 8192)
RATIOS = (0.065, 0.1, 0.2, 0.4)  # 0.065: the paper's 93.5% sparsity
BATCHES = (1, 4)


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (else :func:`platform.processor`)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _bytes_read(d_model: int, d_ff: int, union, batch, n_matrices: int) -> np.ndarray:
    """Bytes one call must read and write (float32): the weights of the union of active
    neurons once, plus the batch's input and output, as
    :func:`scalinglab.cost_model.sparse_ffn_bytes` counts them, but at the union
    fraction actually read (not the one predicted from the per-token ratio)."""
    union, batch = np.asarray(union, float), np.asarray(batch, float)
    return 4.0 * (n_matrices * d_model * d_ff * union + 2.0 * batch * d_model)


def time_kernel(
    *,
    d_model: int = 1024,
    widths: Sequence[int] = WIDTHS,
    ratios: Sequence[float] = RATIOS,
    batches: Sequence[int] = BATCHES,
    repeats: int = 9,
    cores: Sequence[int] = (0,),
    seed: int = 0,
    progress: bool = False,
) -> xr.Dataset:
    """Time the dense and sparse FFN at every width, pinned to ``cores``.

    Parameters
    ----------
    d_model, widths, ratios, batches, repeats, seed
        As :func:`scalinglab.kernels.sparse_ffn.benchmark_sparse_ffn` takes them, for
        each ``d_ff`` in ``widths``.
    cores
        CPU cores this process is pinned to; torch and numba use that many threads.

    Returns
    -------
    xarray.Dataset
        ``seconds`` ``(d_ff, impl, case, repeat)`` and the harness's summaries,
        ``union_ratio`` ``(d_ff, case)``, ``dense_bytes`` ``(d_ff)``, ``sparse_bytes``
        ``(d_ff, case)`` and ``bytes_speedup`` (their ratio); attrs ``machine``,
        ``cpu_model``, ``cpu_count``, ``cores``, ``load_before``, ``load_after``
        (1-minute load averages), ``started_utc``.
    """
    import numba
    import torch

    from scalinglab.kernels.sparse_ffn import benchmark_sparse_ffn

    cores = sorted(int(c) for c in cores)
    if not cores:
        raise ValueError("cores must name at least one CPU core")
    os.sched_setaffinity(0, cores)
    torch.set_num_threads(len(cores))
    numba.set_num_threads(min(len(cores), numba.config.NUMBA_NUM_THREADS))
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_before = os.getloadavg()[0]
    parts = []
    for f in widths:
        ds = benchmark_sparse_ffn(
            d_model,
            int(f),
            ratios=ratios,
            batches=batches,
            repeats=repeats,
            seed=seed,
            progress=progress,
        )
        n_mat = int(ds.attrs["n_matrices"])
        b = ds["batch"].values.astype(float)
        dense_b = _bytes_read(d_model, int(f), 1.0, b, n_mat)
        sparse_b = _bytes_read(d_model, int(f), ds["union_ratio"].values, b, n_mat)
        ds = ds.assign(
            sparse_bytes=("case", sparse_b),
            dense_bytes=("case", dense_b),
            bytes_speedup=("case", dense_b / sparse_b),
        )
        parts.append(ds.drop_attrs() if hasattr(ds, "drop_attrs") else ds)
        print(f"d_ff {f}: timed", file=sys.stderr, flush=True)
    out = xr.concat(parts, dim=pd.Index(list(widths), name="d_ff"), join="outer")
    out.attrs = {
        "study": STUDY,
        "what": "sparse FFN kernel timings (one timing run)",
        "d_model": d_model,
        "n_matrices": 3,
        "machine": platform.node(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count() or 0,
        "cores": ",".join(map(str, cores)),
        "torch_threads": torch.get_num_threads(),
        "torch_version": str(torch.__version__),
        "numba_version": str(numba.__version__),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "started_utc": started,
        "repeats": repeats,
        "seed": seed,
    }
    return out


def save_timings(ds: xr.Dataset, folder: Path | None = None) -> Path:
    """Write ``ds`` as ``<folder>/kernel-timings-<started_utc>.nc`` with provenance."""
    folder = folder or data_dir() / STUDY
    stamp = ds.attrs["started_utc"].replace("-", "").replace(":", "")
    config = {k: ds.attrs[k] for k in ("d_model", "repeats", "seed", "cores", "started_utc")}
    config["widths"] = [int(v) for v in ds["d_ff"].values]
    return save_dataset(ds, folder / f"kernel-timings-{stamp}.nc", config=config)


def load_timings(folder: Path | None = None) -> list[xr.Dataset]:
    """Every committed timing run (``data/sparsity_laws/kernel-timings-*.nc``), oldest first."""
    folder = folder or data_dir() / STUDY
    out = []
    for path in sorted(folder.glob(PATTERN)):
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            out.append(ds.load())
    return out


def between_run_speedups(runs: Sequence[xr.Dataset]) -> pd.DataFrame:
    """Per cell (``d_ff, batch, ratio, impl``): each run's speedup and their spread.

    A run's speedup is the dense median over the implementation's median (the harness's
    ``median_s``). Returns one row per cell: ``n_runs``, ``speedup`` (median over runs),
    ``speedup_min``/``speedup_max`` (range over runs: with 3 runs, the interval a
    fourth run falls inside with probability 1/2), ``union_ratio`` and
    ``bytes_speedup`` (the deterministic proxy, identical in every run of one seed), and
    the runs' largest 1-minute load average.
    """
    if not runs:
        raise ValueError("no kernel timing runs: run python -m scalinglab.studies.sparsity.time_kernel")
    rows = []
    for k, ds in enumerate(runs):
        load = max(float(ds.attrs["load_before"]), float(ds.attrs["load_after"]))
        for f in ds["d_ff"].values:
            cell = ds.sel(d_ff=f)
            dense = cell["median_s"].sel(impl="dense").values
            for impl in [str(i) for i in cell["impl"].values if i != "dense"]:
                sp = dense / cell["median_s"].sel(impl=impl).values
                for j in range(cell.sizes["case"]):
                    rows.append(
                        {
                            "run": k,
                            "d_ff": int(f),
                            "batch": int(cell["batch"].values[j]),
                            "ratio": float(cell["ratio"].values[j]),
                            "impl": impl,
                            "speedup": float(sp[j]),
                            "union_ratio": float(cell["union_ratio"].values[j]),
                            "bytes_speedup": float(cell["bytes_speedup"].values[j]),
                            "load": load,
                        }
                    )
    per_run = pd.DataFrame(rows)
    keys = ["d_ff", "batch", "ratio", "impl"]
    return (
        per_run.groupby(keys, sort=True)
        .agg(
            n_runs=("run", "nunique"),
            speedup=("speedup", "median"),
            speedup_min=("speedup", "min"),
            speedup_max=("speedup", "max"),
            union_ratio=("union_ratio", "mean"),
            bytes_speedup=("bytes_speedup", "mean"),
            max_load=("load", "max"),
        )
        .reset_index()
    )


def runs_summary(runs: Sequence[xr.Dataset]) -> pd.DataFrame:
    """One row per timing run: when, where, pinned cores, load before and after."""
    return pd.DataFrame(
        [
            {
                "started_utc": ds.attrs["started_utc"],
                "machine": ds.attrs["machine"],
                "cpu_model": ds.attrs["cpu_model"],
                "cores": ds.attrs["cores"],
                "load_before": float(ds.attrs["load_before"]),
                "load_after": float(ds.attrs["load_after"]),
                "git_commit": ds.attrs.get("git_commit", ""),
            }
            for ds in runs
        ]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m scalinglab.studies.sparsity.time_kernel",
        description="Time the sparse FFN kernel once and save the timings under data/.",
    )
    ap.add_argument("--cores", default="0", help="comma-separated CPU cores to pin to")
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    ap.add_argument("--d-model", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--out", type=Path, default=None, help="folder (default data/sparsity_laws)")
    args = ap.parse_args(argv)
    ds = time_kernel(
        d_model=args.d_model,
        widths=[int(w) for w in args.widths.split(",")],
        repeats=args.repeats,
        cores=[int(c) for c in args.cores.split(",")],
    )
    path = save_timings(ds, args.out)
    print(f"{path}: load {ds.attrs['load_before']:.2f} -> {ds.attrs['load_after']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
