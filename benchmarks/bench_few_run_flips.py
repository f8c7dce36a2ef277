"""Benchmark: IE-1's few-run flip rates, against the whole-array rescan they replaced.

Run (from the repository root)::

    .nox/dev/bin/python benchmarks/bench_few_run_flips.py            # Atari 200M, 200 replicates
    # options: --reps N (outer replicates), --repeats N (timed runs of each)

:func:`scalinglab.stats.few_run_flips.distinct_positions` draws ``k`` distinct runs per
task by redrawing the rows that repeat a run. The baseline here is the plain algorithm it
replaced: after every redraw, sort the whole position array again along its short ``k``
axis to find the rows that still repeat. The current one rechecks only the rows it has
just redrawn (pairwise comparisons), in the same order, so both give the same positions
bit for bit (checked here on every timed run, and in
``tests/test_stats_few_run_flips.py``).

Two measurements, each the median of ``--repeats`` runs, on the committed Atari 200M
scores (``data/published/rliable/atari_200m/scores.csv``: 8 algorithms, 55 tasks):

1. **positions**: one batch of the outer bootstrap's draws, shape ``(50, 400, 3, 55)``
   (50 replicates x 400 few-run draws x 3 runs x 55 tasks, 11 runs per task);
2. **rates**: :func:`~scalinglab.stats.few_run_flips.few_run_flip_rates` end to end
   (2,000 point draws, ``--reps`` outer replicates x 400 draws), with the module's
   ``distinct_positions`` swapped for the baseline; the two results must be identical.

Prints a table with the ratio baseline / current and writes
``benchmarks/results/few_run_flips.json`` (with the load average before and after: the
machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from scalinglab.stats import few_run_flips  # noqa: E402
from scalinglab.studies.intervals.classifiers import load_or_run  # noqa: E402
from scalinglab.studies.intervals.published import in_repo  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "few_run_flips.json"
SCORES = "data/published/rliable/atari_200m/scores.csv"
REFERENCES = "data/published/rliable/atari_200m/references.csv"
CURRENT = few_run_flips.distinct_positions


def rescan_positions(
    rng: np.random.Generator, counts: np.ndarray, *, size: tuple[int, ...], k: int
) -> np.ndarray:
    """The baseline: redraw every row with a repeat, rescanning the whole array."""
    counts = np.asarray(counts, dtype=np.int64)
    pos = np.floor(rng.random((*size, k, counts.size)) * counts).astype(np.int64)
    if k == 1:
        return pos
    while True:
        bad = (np.diff(np.sort(pos, axis=-2), axis=-2) == 0).any(axis=-2)
        n_bad = int(bad.sum())
        if not n_bad:
            return pos
        limit = np.broadcast_to(counts, bad.shape)[bad][:, None]
        fresh = np.floor(rng.random((n_bad, k)) * limit)
        np.moveaxis(pos, -2, -1)[bad] = fresh.astype(np.int64)


def timed(fn, repeats: int) -> tuple[float, object]:
    """Median wall seconds of ``fn()`` over ``repeats`` runs, and its last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def bench_positions(scores: xr.DataArray, repeats: int) -> dict:
    counts = (~np.isnan(scores.values)).sum(axis=1).min(axis=0)  # runs per task
    shape = {"size": (50, 400), "k": 3}
    base_s, base = timed(
        lambda: rescan_positions(np.random.default_rng(0), counts, **shape), repeats
    )
    cur_s, cur = timed(lambda: CURRENT(np.random.default_rng(0), counts, **shape), repeats)
    if not np.array_equal(base, cur):
        raise SystemExit("positions differ from the baseline's: the draws changed")
    return {"baseline_s": base_s, "current_s": cur_s, "ratio": base_s / cur_s}


def bench_rates(scores: xr.DataArray, reps: int, repeats: int) -> dict:
    def rates():
        return few_run_flips.few_run_flip_rates(
            scores, n_runs=3, draws=2000, reps=reps, inner_draws=400, rng=np.random.default_rng(0)
        )

    try:
        few_run_flips.distinct_positions = rescan_positions
        base_s, base = timed(rates, repeats)
    finally:
        few_run_flips.distinct_positions = CURRENT
    cur_s, cur = timed(rates, repeats)
    xr.testing.assert_identical(base, cur)
    return {"baseline_s": base_s, "current_s": cur_s, "ratio": base_s / cur_s, "reps": reps}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=200, help="outer replicates of the rates")
    p.add_argument("--repeats", type=int, default=3, help="timed runs of each")
    args = p.parse_args(argv)
    scores = load_or_run(
        in_repo(SCORES),
        compute_class="small",
        seed=0,
        scheduler="sync",
        rerun=False,
        nan="error",
        references=in_repo(REFERENCES),
    )
    load0 = os.getloadavg()
    rows = {
        "positions": bench_positions(scores, args.repeats),
        "rates": bench_rates(scores, args.reps, args.repeats),
    }
    out = {
        "scores": SCORES,
        "shape": dict(scores.sizes),
        "repeats": args.repeats,
        "results": rows,
        "load_before": load0,
        "load_after": os.getloadavg(),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    print(f"{'measurement':<12} {'baseline s':>11} {'current s':>10} {'ratio':>7}")
    for name, r in rows.items():
        print(f"{name:<12} {r['baseline_s']:>11.3f} {r['current_s']:>10.3f} {r['ratio']:>7.2f}")
    print(f"load average {load0[0]:.1f} before, {out['load_after'][0]:.1f} after")
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
