"""Benchmark: the numba tiled GEMM vs NumPy/OpenBLAS sgemm vs the textbook loop, same run.

Run (from the repository root, on an otherwise idle machine if you can)::

    .venv/bin/python benchmarks/bench_gemm.py
    # options: --sizes 1024,1536,2048  --repeats 7  --tiles 96x128x256,144x256x384
    #          --naive-max 1024  --flush-mib 600  --out benchmarks/results/gemm.json
    .venv/bin/python benchmarks/bench_gemm.py --reruns 8        # re-run coverage (below)
    .venv/bin/python benchmarks/bench_gemm.py --reruns 0 --spread data/gemm_cost_model/spread-*.nc

Re-run coverage (``--reruns P``): the study's timing and hardware figures are measured
in ``P`` separate processes one after another
(:func:`scalinglab.studies.gemm.machine.run_spread`, the study's ``small`` settings),
and every ordered pair of processes checks whether the second's point lands inside the
first's interval, computed as the study does (repeats of one process widened by the
between-process noise of the *other* processes), and as it was before (repeats of one
process only). Written to ``benchmarks/results/gemm_reruns.json``. Target: a re-run lands
inside the interval as a rule (at least 80% of pairs at 95%).

Targets (``studies/kernels_cost_models.md``): the tiled kernel reaches >= 60% of
BLAS at 1024-2048 on all cores; the textbook loop stays under 5%; BLAS itself
reaches about 85% of the machine's FMA peak.

What it does: measures the machine's FMA peak and copy bandwidth
(:func:`scalinglab.kernels.hardware_probe.measure_hardware`), then times every
implementation on each square size with the shared harness (warm-up so numba's
JIT is never timed, a cache flush larger than the last-level cache before every
timed call, median and IQR over repeats). Implementations run back to back per
size, so each ratio compares numbers taken under the same conditions; the load
average before and after each cell is recorded. Ratios are of medians, with a
range from the quartiles (``q25 / q75`` to ``q75 / q25``). Results are printed and
written to ``benchmarks/results/gemm.json`` (plus the full timing Dataset as
``gemm.nc`` beside it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from scalinglab.compute import save_dataset
from scalinglab.cost_model import gemm_flops
from scalinglab.kernels.gemm_numba import DEFAULT_TILE, gemm_naive, gemm_tiled, warm_up
from scalinglab.kernels.hardware_probe import measure_hardware
from scalinglab.kernels.harness import benchmark, default_flush_bytes
from scalinglab.provenance import git_commit, git_dirty

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "gemm.json"


def _operands(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((n, n), dtype=np.float32),
        rng.standard_normal((n, n), dtype=np.float32),
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1024,1536,2048")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--tiles", default=DEFAULT_TILE.label, help="comma-separated MxNxK tiles")
    p.add_argument("--naive-max", type=int, default=1024, help="largest size for the textbook loop")
    p.add_argument("--flush-mib", type=float, default=None, help="default: 1.25 x LLC")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument(
        "--reruns",
        type=int,
        default=-1,
        help="re-run coverage over this many fresh processes (0: --spread data)",
    )
    p.add_argument("--spread", type=Path, default=None, help="a spread-*.nc to analyse")
    p.add_argument("--compute-class", default="small")
    args = p.parse_args(argv)
    if args.reruns >= 0:
        return reruns(args)
    sizes = [int(s) for s in args.sizes.split(",")]
    tiles = [tuple(int(x) for x in t.split("x")) for t in args.tiles.split(",")]
    flush_bytes = default_flush_bytes() if args.flush_mib is None else int(args.flush_mib * 2**20)

    t_start = time.perf_counter()
    warm_up()
    hw = measure_hardware()
    print(
        f"hardware: FMA peak {hw.fma_flop_per_s / 1e9:.1f} GFLOP/s, BLAS "
        f"{hw.blas_flop_per_s / 1e9:.1f} GFLOP/s ({100 * hw.blas_fraction_of_peak:.0f}% of "
        f"peak), copy {hw.mem_bytes_per_s / 1e9:.1f} GB/s"
    )

    data: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def ops(case):
        n = case["M"]
        if n not in data:
            data.clear()  # one size in memory at a time
            data[n] = _operands(n, args.seed)
        return data[n]

    def blas(case):
        a, b = ops(case)
        return lambda: a @ b

    def tiled(t):
        def factory(case):
            a, b = ops(case)
            return lambda: gemm_tiled(a, b, tile_m=t[0], tile_n=t[1], tile_k=t[2])

        return factory

    def naive(case):
        if case["M"] > args.naive_max:
            return None
        a, b = ops(case)
        return lambda: gemm_naive(a, b)

    kernels = {
        "blas": blas,
        **{f"numba_tiled[{t[0]}x{t[1]}x{t[2]}]": tiled(t) for t in tiles},
        "numba_naive": naive,
    }
    cases = [{"M": n, "N": n, "K": n} for n in sizes]
    ds = benchmark(kernels, cases, repeats=args.repeats, warmup=1, flush_bytes=flush_bytes)

    rows = []
    for j, n in enumerate(sizes):
        flops = gemm_flops(n, n, n)
        cell = ds.isel(case=j)
        blas_med = float(cell["median_s"].sel(impl="blas"))
        row = {
            "size": n,
            "load_before": float(cell["load_before"].max()),
            "load_after": float(cell["load_after"].max()),
            "impls": {},
        }
        for impl in ds["impl"].values:
            med = float(cell["median_s"].sel(impl=impl))
            if not np.isfinite(med):
                continue
            q25, q75 = float(cell["q25_s"].sel(impl=impl)), float(cell["q75_s"].sel(impl=impl))
            bq25 = float(cell["q25_s"].sel(impl="blas"))
            bq75 = float(cell["q75_s"].sel(impl="blas"))
            row["impls"][str(impl)] = {
                "median_s": med,
                "iqr_s": q75 - q25,
                "gflop_per_s": flops / med / 1e9,
                "fraction_of_blas": blas_med / med,
                "fraction_of_blas_range": [bq25 / q75, bq75 / q25],
                "fraction_of_fma_peak": flops / med / hw.fma_flop_per_s,
            }
        rows.append(row)
        print(f"\nn={n}  (load {row['load_before']:.2f} -> {row['load_after']:.2f})")
        for impl, r in row["impls"].items():
            print(
                f"  {impl:28s} {r['gflop_per_s']:8.1f} GFLOP/s  {100 * r['fraction_of_blas']:6.1f}% "
                f"of BLAS [{100 * r['fraction_of_blas_range'][0]:.0f}-"
                f"{100 * r['fraction_of_blas_range'][1]:.0f}]  "
                f"{100 * r['fraction_of_fma_peak']:5.1f}% of peak"
            )
    tiled = [
        r["impls"][k]["fraction_of_blas"]
        for r in rows
        for k in r["impls"]
        if k.startswith("numba_tiled")
    ]
    naive = [
        r["impls"]["numba_naive"]["fraction_of_blas"] for r in rows if "numba_naive" in r["impls"]
    ]
    summary = {
        "target_tiled_ge_60pct_of_blas": bool(tiled and min(tiled) >= 0.60),
        "min_tiled_fraction_of_blas": min(tiled) if tiled else None,
        "target_naive_lt_5pct_of_blas": bool(naive and max(naive) < 0.05),
        "max_naive_fraction_of_blas": max(naive) if naive else None,
        "blas_fraction_of_fma_peak": hw.blas_fraction_of_peak,
    }
    print("\n" + json.dumps(summary, indent=2))
    out = {
        "benchmark": "gemm",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_commit": git_commit(),
        "git_dirty": git_dirty(),
        "hardware": hw.to_json(),
        "settings": {
            "repeats": args.repeats,
            "warmup": 1,
            "flush_bytes": flush_bytes,
            "tiles": [list(t) for t in tiles],
            "naive_max": args.naive_max,
            "threads": {
                k: ds.attrs[k]
                for k in ("cpu_count", "numba_threads", "blas_threads")
                if k in ds.attrs
            },
        },
        "load_average_end": list(os.getloadavg()),
        "results": rows,
        "summary": summary,
        "wall_s": time.perf_counter() - t_start,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    save_dataset(ds, args.out.with_suffix(".nc"), config={"benchmark": "gemm", **out["settings"]})
    print(f"wrote {args.out} in {out['wall_s']:.0f} s")
    return 0


def reruns(args: argparse.Namespace) -> int:
    """Re-run coverage of the study's timing and hardware intervals (module docstring)."""
    import xarray as xr

    from scalinglab.studies.gemm import machine

    t_start = time.perf_counter()
    if args.reruns == 0:
        if args.spread is None:
            raise SystemExit("--reruns 0 needs --spread FILE")
        with xr.open_dataset(args.spread, engine="h5netcdf") as ds:
            ds = ds.load()
        source = str(args.spread)
    else:
        cfg = machine.spread_config(args.compute_class, seed=args.seed, processes=args.reruns)
        ds = machine.run_spread(cfg)
        source = f"{args.reruns} fresh processes ({args.compute_class} settings)"
    coverage = machine.rerun_coverage(ds, seed=args.seed)
    out = {
        "benchmark": "gemm_reruns",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_commit": git_commit(),
        "git_dirty": git_dirty(),
        "source": source,
        "machine": ds.attrs.get("machine"),
        "load_before": [float(x) for x in ds["load_before"].values],
        "between_process_sigma": machine.between_process_sigma(ds),
        "per_process": {k: [float(x) for x in v] for k, v in machine.per_process(ds).items()},
        "coverage": coverage,
        "target_rerun_inside_ge_80pct": all(
            c["between_processes"] >= 0.8 for c in coverage.values()
        ),
        "wall_s": time.perf_counter() - t_start,
    }
    print(json.dumps(out["coverage"], indent=2))
    path = args.out.with_name("gemm_reruns.json") if args.out == RESULTS else args.out
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path} in {out['wall_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
