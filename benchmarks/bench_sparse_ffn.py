"""Benchmark: sparse FFN (active neurons only) vs the dense FFN, next to the ideal speedup.

Run (from the repository root, on an otherwise idle machine if you can)::

    .venv/bin/python benchmarks/bench_sparse_ffn.py
    # options: --d-model 4096 --d-ff 16384 --plain --batches 1,8
    #          --ratios 1,0.7,0.5,0.3,0.2,0.1,0.05,0.02 --repeats 7 --threads 1
    #          --flush-mib 600 --out benchmarks/results/sparse_ffn.json
    #          --processes 8   (repeat in 8 separate processes: intervals over processes,
    #                           and how often a re-run's point lands inside them)

What it does: a gated FFN (``W_gate, W_up``: F x D, ``W_down``: D x F, float32;
``--plain`` drops the gate) with random weights; for every batch size and
activation ratio ``a`` each token gets ``round(a F)`` active neurons at random
(tokens independent, so a batch reads the union, ``1 - (1 - a)^b`` of the
neurons). Implementations, timed with the shared harness (warm-up, a cache flush
larger than the last-level cache before every timed call, median and IQR):

- ``dense``: the torch dense FFN (three GEMMs on all neurons), the baseline;
- ``sparse_torch``: :class:`~scalinglab.kernels.sparse_ffn.SparseFFN` gathering
  the union's rows into preallocated buffers, then GEMMs;
- ``sparse_numba``: the streaming numba kernel (no weight copies);
- ``gather_fresh``: gathering into freshly allocated tensors (``W[idx]``), to show
  why the buffers are preallocated.

The active set is given (as from an activation predictor): finding it is not
timed. Measured speedup = dense median / implementation median (range from the
quartiles); the ideal speedup is the cost model's roofline ratio
(:func:`scalinglab.cost_model.sparse_ffn_speedup` on this machine's hardware
record). The crossover is the largest activation ratio where an implementation
is no slower than dense (interpolated in log a between measured ratios).
Writes ``benchmarks/results/sparse_ffn.json`` (and the timing Dataset as
``sparse_ffn.nc``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numba
import torch

from scalinglab.compute import save_dataset
from scalinglab.kernels.hardware_probe import hardware_record
from scalinglab.kernels.harness import default_flush_bytes
from scalinglab.kernels.sparse_ffn import benchmark_sparse_ffn
from scalinglab.provenance import git_commit, git_dirty
from scalinglab.studies.sparsity import kernel_spread as ks
from scalinglab.studies.sparsity.kernel_speed import crossover, speedup_table

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "sparse_ffn.json"
SPARSE = ("sparse_torch", "sparse_numba", "gather_fresh")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--d-model", type=int, default=4096)
    p.add_argument("--d-ff", type=int, default=16384)
    p.add_argument("--plain", action="store_true", help="no gate (2 matrices)")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--ratios", default="1,0.7,0.5,0.3,0.2,0.1,0.05,0.02")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1, help="torch and numba threads")
    p.add_argument("--flush-mib", type=float, default=None, help="default: 1.25 x LLC")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--processes",
        type=int,
        default=1,
        help="repeat the benchmark in N separate processes; intervals resample them "
        "and, from 4 on, the re-run coverage is reported",
    )
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    ratios = sorted((float(r) for r in args.ratios.split(",")), reverse=True)
    flush_bytes = default_flush_bytes() if args.flush_mib is None else int(args.flush_mib * 2**20)
    torch.set_num_threads(args.threads)
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    if os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1):
        print(
            f"warning: machine busy (1-min load {os.getloadavg()[0]:.2f}); timings are noisy "
            "and recorded with their load"
        )

    t_start = time.perf_counter()
    hw = hardware_record()
    coverage = None
    if args.processes > 1:
        ds = ks.run_over_processes(
            args.d_model,
            args.d_ff,
            ratios=ratios,
            batches=batches,
            gated=not args.plain,
            repeats=args.repeats,
            processes=args.processes,
            threads=args.threads,
            flush_bytes=flush_bytes,
            seed=args.seed,
        )
        per_process = ks.per_process_speedups(ds, hw)
        table = ks.speedup_over_processes(per_process, reps=2000, seed=args.seed)
        if args.processes >= 4:
            coverage = ks.rerun_coverage(per_process, seed=args.seed)
            print(
                f"re-run coverage: one half's point inside the other half's 95% interval "
                f"in {100 * coverage['inside']:.0f}% of {coverage['cells']} comparisons "
                f"({coverage['half']} processes per half)"
            )
    else:
        ds = benchmark_sparse_ffn(
            args.d_model,
            args.d_ff,
            ratios=ratios,
            batches=batches,
            gated=not args.plain,
            repeats=args.repeats,
            flush_bytes=flush_bytes,
            seed=args.seed,
        )
        table = speedup_table(ds, hw)
    rows, summary = [], {}
    for b in batches:
        tb = table[table["batch"] == b]
        print(
            f"\nbatch {b}: d_model {args.d_model}, d_ff {args.d_ff}, "
            f"{ds.attrs['n_matrices']} matrices, {args.threads} thread(s)"
        )
        wide = tb.pivot_table(
            index="ratio", columns="impl", values=["speedup", "fraction_of_ideal"]
        ).sort_index(ascending=False)
        first = tb.drop_duplicates("ratio").set_index("ratio").sort_index(ascending=False)
        print(
            f"  {'a':>5} {'union':>6} {'dense ms':>9} {'ideal':>6} "
            + " ".join(f"{i:>14}" for i in SPARSE)
        )
        for a in wide.index:
            print(
                f"  {a:5.2f} {first.loc[a, 'union_ratio']:6.3f} "
                f"{1e3 * first.loc[a, 'dense_s']:9.2f} {first.loc[a, 'ideal']:6.1f} "
                + " ".join(
                    f"{wide.loc[a, ('speedup', i)]:6.2f}x "
                    f"({100 * wide.loc[a, ('fraction_of_ideal', i)]:3.0f}%)"
                    for i in SPARSE
                )
            )
        per_impl = {}
        for impl in SPARSE:
            ti = tb[tb["impl"] == impl].sort_values("ratio", ascending=False)
            cross = crossover(ti["ratio"].to_numpy(), ti["speedup"].to_numpy())
            print(f"  crossover {impl}: a <= {cross}")
            per_impl[impl] = {
                k: ti[k].tolist()
                for k in (
                    "sparse_s",
                    "speedup",
                    "speedup_lo",
                    "speedup_hi",
                    "fraction_of_ideal",
                    "fraction_of_roofline",
                )
            }
            per_impl[impl]["crossover_ratio"] = cross
        rows.append(
            {
                "batch": b,
                "ratios": first.index.tolist(),
                "union_ratio": first["union_ratio"].tolist(),
                "dense_median_s": first["dense_s"].tolist(),
                "ideal_speedup": first["ideal"].tolist(),
                "load_max": float(tb["load"].max()),
                "impls": per_impl,
            }
        )
        summary[f"batch{b}"] = {
            impl: {
                "crossover_ratio": per_impl[impl]["crossover_ratio"],
                **{
                    f"speedup_at_{a:g}": sp
                    for a, sp in zip(first.index, per_impl[impl]["speedup"], strict=True)
                    if a in (0.5, 0.1, 0.05, 0.02)
                },
                **{
                    f"fraction_of_ideal_at_{a:g}": fr
                    for a, fr in zip(first.index, per_impl[impl]["fraction_of_ideal"], strict=True)
                    if a in (0.1, 0.02)
                },
            }
            for impl in SPARSE
        }
    print("\n" + json.dumps(summary, indent=2))
    settings = {
        "d_model": args.d_model,
        "d_ff": args.d_ff,
        "n_matrices": ds.attrs["n_matrices"],
        "batches": batches,
        "ratios": ratios,
        "repeats": args.repeats,
        "warmup": 1,
        "flush_bytes": flush_bytes,
        "threads": args.threads,
        "seed": args.seed,
        "processes": args.processes,
        "dtype": "float32",
    }
    out = {
        "benchmark": "sparse_ffn",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_commit": git_commit(),
        "git_dirty": git_dirty(),
        "hardware": hw.to_json(),
        "settings": settings,
        "load_average_end": list(os.getloadavg()),
        "results": rows,
        "summary": summary,
        "rerun_coverage": coverage,
        "wall_s": time.perf_counter() - t_start,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    save_dataset(ds, args.out.with_suffix(".nc"), config={"benchmark": "sparse_ffn", **settings})
    print(f"wrote {args.out} in {out['wall_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
