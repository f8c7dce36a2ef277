"""Benchmark: what a user waits for at the command line, whole process, against rliable.

1. Start-up: ``scalinglab --help`` (the console script), median wall time of
   ``--repeats`` runs (target: under 0.3 s).
2. ``scalinglab intervals`` on the Atari 100k scores of Agarwal et al. 2021 (the paper's
   own data, ``/work/shared/published/rliable/atari_100k`` or ``--atari DIR``): 7
   algorithms x 26 games (5-100 runs), human-normalized with ``--references``, IQM,
   median, mean and optimality gap with 50,000 stratified-bootstrap replicates, as one
   process from the shell, against a script doing the same with rliable
   (``get_interval_estimates`` for the four metrics of each algorithm, the paper's
   usage), also one whole process, started the same way in the same run (target:
   ours at least 40x faster).

rliable is not a project dependency: it runs with the Python of its own virtual
environment (see ``bench_intervals.py``'s header: ``python3 -m venv /tmp/rliable-venv &&
/tmp/rliable-venv/bin/pip install rliable "pandas<3"``), given by ``--rliable-python`` or
``RLIABLE_PYTHON``. Without it, only our times are reported. Results are printed and
written to ``benchmarks/results/cli.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "cli.json"
ATARI = Path("/work/shared/published/rliable/atari_100k")
ALGORITHMS = ("DER", "DrQ", "DrQ(eps)", "OTRainbow", "PlayVirtual", "SPR", "SimPLe")
METRICS = "iqm,median,mean,optimality_gap"
REPS = 50_000

# Run by the rliable venv's python, as one whole process: the paper's usage.
RLIABLE_SCRIPT = r"""
import json, sys
import numpy as np
from rliable import library as rly, metrics

folder, reps = sys.argv[1], int(sys.argv[2])
algs = json.loads(sys.argv[3])
human = json.load(open(f"{folder}/HUMAN.json"))
random = json.load(open(f"{folder}/RANDOM.json"))
games = sorted(human)
scores = {}
for a in algs:
    raw = json.load(open(f"{folder}/{a}.json"))
    x = np.array([raw[g] for g in games], dtype=float).T  # (runs, games)
    lo = np.array([random[g][0] for g in games]); hi = np.array([human[g][0] for g in games])
    scores[a] = (x - lo) / (hi - lo)

def four(x):
    return np.array([metrics.aggregate_iqm(x), metrics.aggregate_median(x),
                     metrics.aggregate_mean(x), metrics.aggregate_optimality_gap(x)])

np.random.seed(0)
point, ci = rly.get_interval_estimates(scores, four, reps=reps)
print(json.dumps({a: {"iqm": [float(point[a][0]), float(ci[a][0, 0]), float(ci[a][1, 0])]}
                  for a in algs}))
"""


def wall(cmd: list[str], repeats: int, **kw) -> tuple[float, list[float], str]:
    """Median wall seconds of ``repeats`` runs of ``cmd`` (each must succeed), the CPU
    seconds (user + system) of each run, and the last stdout."""
    times, cpu, out = [], [], ""
    for _ in range(repeats):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(round(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, 3))
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[:3]} failed: {proc.stderr[-2000:]}")
        out = proc.stdout
    return statistics.median(times), cpu, out


def references_csv(folder: Path, path: Path) -> Path:
    human = json.loads((folder / "HUMAN.json").read_text())
    random = json.loads((folder / "RANDOM.json").read_text())
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task", "random", "reference"])
        for game in sorted(human):
            w.writerow([game, random[game][0], human[game][0]])
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rliable-python", default=os.environ.get("RLIABLE_PYTHON", "/tmp/rliable-venv/bin/python")
    )
    parser.add_argument("--atari", type=Path, default=ATARI)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    script = Path(sys.executable).with_name("scalinglab")
    load = os.getloadavg()

    t_help, help_cpu, _ = wall([str(script), "--help"], max(5, args.repeats))
    print(
        f"scalinglab --help: {t_help:.3f} s wall, {statistics.median(help_cpu):.3f} s CPU "
        f"(medians of {len(help_cpu)}; target < 0.3 s)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        refs = references_csv(args.atari, Path(tmp) / "refs.csv")
        files = [str(args.atari / f"{a}.json") for a in ALGORITHMS]
        ours_cmd = [
            str(script),
            "intervals",
            *files,
            "--references",
            str(refs),
            "--metrics",
            METRICS,
            "--reps",
            str(REPS),
            "--seed",
            "0",
        ]
        t_ours, ours_cpu, ours_out = wall(ours_cmd, args.repeats)
    ours = json.loads(ours_out)
    print(
        f"scalinglab intervals, Atari 100k, {len(ALGORITHMS)} algorithms x 4 metrics, "
        f"{REPS:,} resamples: {t_ours:.2f} s whole process, {statistics.median(ours_cpu):.2f} s "
        f"CPU (medians of {args.repeats})"
    )

    result = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_before": list(load),
            "load_after": list(os.getloadavg()),
        },
        "help_seconds": t_help,
        "help_cpu_seconds": help_cpu,
        "intervals_seconds": t_ours,
        "intervals_cpu_seconds": ours_cpu,
        "intervals_command": " ".join(["scalinglab", *ours_cmd[1:]]).replace(
            str(args.atari), "ATARI"
        ),
        "ours_iqm": {
            a: [ours["metrics"][a]["iqm"]["point"], *ours["metrics"][a]["iqm"]["ci"]]
            for a in ALGORITHMS
        },
    }
    if Path(args.rliable_python).exists():
        t_rl, rl_cpu, rl_out = wall(
            [
                args.rliable_python,
                "-c",
                RLIABLE_SCRIPT,
                str(args.atari),
                str(REPS),
                json.dumps(ALGORITHMS),
            ],
            1,
        )
        cpu_ratio = rl_cpu[0] / statistics.median(ours_cpu)
        result.update(
            {
                "rliable_seconds": t_rl,
                "rliable_cpu_seconds": rl_cpu,
                "rliable_iqm": json.loads(rl_out),
                "ratio": t_rl / t_ours,
                "cpu_ratio": cpu_ratio,
            }
        )
        print(
            f"rliable, same work, whole process: {t_rl:.1f} s wall, {rl_cpu[0]:.1f} s CPU -> "
            f"ours {t_rl / t_ours:.1f}x faster wall, {cpu_ratio:.1f}x CPU (target >= 40x)"
        )
        for a in ALGORITHMS:
            print(
                f"  IQM {a:12s} ours {result['ours_iqm'][a]}  rliable {result['rliable_iqm'][a]['iqm']}"
            )
    else:
        print(f"no rliable at {args.rliable_python}: ratio not measured")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
