"""Benchmark: ``scalinglab intervals`` on a 10M-row scores table, new loader vs the old one.

Run (from the repository root)::

    .venv/bin/python benchmarks/bench_big_scores.py            # 10M rows, --reps 10
    # options: --rows N (default 10,000,000), --reps R, --skip-old

What it does: writes a tidy Parquet table of ``--rows`` scores (5 algorithms x
20 tasks x rows/100 runs, categorical labels, seeded normal scores) in a
temporary folder, then measures, each in a fresh process (so peak memory is that
path's own, ``ru_maxrss``):

1. **old**: the loader as it was before chunked assembly (labels as one Python
   string per row, ``dict.fromkeys`` over rows, a ``groupby(...).agg(set)``
   completeness check and a MultiIndex ``to_xarray``), reproduced below;
2. **new**: :func:`scalinglab.data.scores.load_scores` (categorical labels,
   scattered from integer codes);
3. **intervals**: ``load_scores`` then IQM/median/mean/optimality-gap CIs with
   ``--reps`` stratified-bootstrap replicates (what ``scalinglab intervals
   FILE --reps R`` does), resampling in batches bounded by
   :data:`scalinglab.stats.bootstrap.BATCH_BYTES`.

The old and new loaders must give the identical DataArray (checked on a 100k-row
slice). Prints a table and writes ``benchmarks/results/big_scores.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "big_scores.json"
ALGORITHMS, TASKS = 5, 20


def write_table(path: Path, rows: int, *, seed: int = 0) -> None:
    """A tidy ``algorithm, task, run, score`` Parquet table of ``rows`` rows."""
    runs = rows // (ALGORITHMS * TASKS)
    rng = np.random.default_rng(seed)
    n = ALGORITHMS * TASKS * runs
    alg = pd.Categorical.from_codes(
        np.repeat(np.arange(ALGORITHMS), TASKS * runs), [f"alg{i}" for i in range(ALGORITHMS)]
    )
    task = pd.Categorical.from_codes(
        np.tile(np.repeat(np.arange(TASKS), runs), ALGORITHMS), [f"task{j}" for j in range(TASKS)]
    )
    score = rng.normal(size=n) + np.repeat(np.arange(ALGORITHMS) * 0.1, TASKS * runs)
    pd.DataFrame(
        {
            "algorithm": alg,
            "task": task,
            "run": np.tile(np.arange(runs), ALGORITHMS * TASKS),
            "score": score,
        }
    ).to_parquet(path, index=False)


def old_load(path: Path) -> xr.DataArray:
    """The pre-change loader's work on a valid table (same checks, same result)."""
    from scalinglab.data.tables import label_column, numeric_column, read_table

    raw = read_table(path, required=["algorithm", "task", "run", "score"])
    df = pd.DataFrame(
        {
            "algorithm": label_column(raw, "algorithm", file=path),
            "task": label_column(raw, "task", file=path),
            "run": label_column(raw, "run", file=path),
            "score": numeric_column(raw, "score", file=path, allow_nan=True),
        }
    )
    df["file"] = str(path)
    df["row"] = np.arange(1, len(df) + 1)
    as_num = pd.to_numeric(df["run"], errors="coerce")
    df["run"] = as_num.astype(np.int64)
    assert not df.duplicated(["algorithm", "task", "run"]).any()
    algorithms = list(dict.fromkeys(df["algorithm"]))
    tasks = list(dict.fromkeys(df["task"]))
    have = df.groupby("algorithm", sort=False)["task"].agg(set)
    assert all(set(tasks) <= have[a] for a in algorithms)
    _ = [str(p) for p in dict.fromkeys(df["file"])]
    da = df.set_index(["algorithm", "run", "task"])["score"].to_xarray()
    da = da.reindex(algorithm=algorithms, task=tasks).transpose("algorithm", "run", "task")
    return da.astype(float).rename("score")


def new_load(path: Path) -> xr.DataArray:
    from scalinglab.data.scores import load_scores

    return load_scores(path)


def intervals(path: Path, reps: int) -> xr.DataArray:
    from scalinglab.stats.intervals import interval_estimates

    scores = new_load(path)
    return interval_estimates(scores, reps=reps, rng=np.random.default_rng(0), progress=False)


def _measure(queue: mp.Queue, which: str, path: str, reps: int) -> None:
    import scalinglab.data.scores  # noqa: F401  imports are not what is measured
    import scalinglab.data.tables  # noqa: F401
    import scalinglab.stats.intervals  # noqa: F401

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    t0 = time.perf_counter()
    {"old": old_load, "new": new_load}.get(which, lambda p: intervals(p, reps))(Path(path))
    seconds = time.perf_counter() - t0
    queue.put((seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10, before))


def measure(which: str, path: Path, reps: int) -> dict:
    """Seconds and peak resident memory (MiB; total, and above the process after its
    imports) of one path, in a fresh process."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_measure, args=(queue, which, str(path), reps))
    proc.start()
    seconds, peak, before = queue.get()
    proc.join()
    return {
        "seconds": round(seconds, 2),
        "peak_mib": round(peak, 1),
        "peak_above_imports_mib": round(peak - before, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--skip-old", action="store_true", help="only the new paths")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-big-scores-") as tmp:
        small, big = Path(tmp) / "small.parquet", Path(tmp) / "big.parquet"
        write_table(small, 100_000)
        xr.testing.assert_equal(old_load(small), new_load(small))
        write_table(big, args.rows)
        out = {
            "rows": args.rows,
            "reps": args.reps,
            "shape": [ALGORITHMS, args.rows // 100, TASKS],
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
            "load_average": [round(x, 1) for x in os.getloadavg()],
        }
        out["new_load"] = measure("new", big, args.reps)
        out["intervals"] = measure("intervals", big, args.reps)
        if not args.skip_old:
            out["old_load"] = measure("old", big, args.reps)
            out["load_speedup"] = round(out["old_load"]["seconds"] / out["new_load"]["seconds"], 1)
            out["load_memory_ratio"] = round(
                out["old_load"]["peak_above_imports_mib"]
                / max(1.0, out["new_load"]["peak_above_imports_mib"]),
                1,
            )
    for key in ("old_load", "new_load", "intervals"):
        if key in out:
            print(
                f"{key:<10} {out[key]['seconds']:>8.1f} s  {out[key]['peak_mib']:>8.0f} MiB peak "
                f"({out[key]['peak_above_imports_mib']:.0f} MiB above the imports)"
            )
    if "load_speedup" in out:
        print(
            f"loading: {out['load_speedup']}x faster, {out['load_memory_ratio']}x less memory "
            "(above the imports)"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
