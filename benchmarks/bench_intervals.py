"""Benchmark: scalinglab's interval estimates vs rliable, same data, same run.

Setup (once; rliable is *not* a project dependency, it lives in its own venv and
needs ``pandas<3`` because of its ``arch`` dependency)::

    python3 -m venv /tmp/rliable-venv
    /tmp/rliable-venv/bin/pip install rliable "pandas<3"

Run (from the repository root)::

    .venv/bin/python benchmarks/bench_intervals.py
    # options: --rliable-python PATH (or env RLIABLE_PYTHON), --repeats N

What it does, on one realistic score set (5 algorithms x 10 tasks x 10 runs,
normalized scores with task difficulty and heavy-ish noise), also passed to
rliable in its own shape (dict algorithm -> array (runs, tasks)):

1. IQM 95% percentile CIs, 50,000 replicates, all 5 algorithms: rliable's
   ``get_interval_estimates`` vs ``scalinglab.stats.intervals.interval_estimates``
   (target: >= 50x faster).
2. Probability of improvement, 2,000 replicates, 2 pairs: rliable's
   ``get_interval_estimates(..., metrics.probability_of_improvement)`` vs
   ``pairwise_probability_of_improvement`` (target: >= 500x faster).
3. Extra context: all four metrics at 50,000 replicates for one algorithm, and
   BCa IQM intervals for one algorithm (checks our jackknife matches arch's).

rliable runs in a subprocess with the rliable venv's Python (seeded through the
global NumPy RNG, which is what it uses). Our times are the median of
``--repeats`` calls. CI agreement: our endpoints are recomputed with 20 other
seeds to estimate the Monte-Carlo standard deviation ``sd`` of an endpoint; the
rliable endpoint must lie within ``4 * sd * sqrt(1 + 1/20)`` of our mean
(``|z| < 4``). Results are printed and written to
``benchmarks/results/intervals.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import numpy as np

from scalinglab.data.scores import scores_from_dict
from scalinglab.stats.improvement import pairwise_probability_of_improvement
from scalinglab.stats.intervals import interval_estimates

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "intervals.json"
IQM_REPS, POI_REPS, ALL_METRICS = 50_000, 2_000, ("iqm", "median", "mean", "optimality_gap")
PAIRS = [("alg3", "alg2"), ("alg4", "alg0")]
MC_SEEDS = 20

# Executed by the rliable venv's python: reads the .npz, prints one JSON line.
RLIABLE_HELPER = r"""
import json, sys, time
from importlib import metadata
import numpy as np
from rliable import library as rly, metrics

data = np.load(sys.argv[1])
d = {k: data[k] for k in data.files}
iqm_reps, poi_reps = int(sys.argv[2]), int(sys.argv[3])
pairs = json.loads(sys.argv[4])
out = {"versions": {p: metadata.version(p) for p in ("rliable", "arch", "numpy", "scipy", "pandas")}}

def iqm(x):
    return np.array([metrics.aggregate_iqm(x)])

np.random.seed(0)
t0 = time.perf_counter()
point, ci = rly.get_interval_estimates(d, iqm, reps=iqm_reps)
out["iqm"] = {"seconds": time.perf_counter() - t0,
              "point": {k: float(v[0]) for k, v in point.items()},
              "ci": {k: [float(v[0, 0]), float(v[1, 0])] for k, v in ci.items()}}

np.random.seed(1)
pair_dict = {f"{x}:{y}": (d[x], d[y]) for x, y in pairs}
t0 = time.perf_counter()
point, ci = rly.get_interval_estimates(pair_dict, metrics.probability_of_improvement, reps=poi_reps)
out["poi"] = {"seconds": time.perf_counter() - t0,
              "point": {k: float(v) for k, v in point.items()},
              "ci": {k: [float(np.ravel(v)[0]), float(np.ravel(v)[1])] for k, v in ci.items()}}

first = sorted(d)[0]
def four(x):
    return np.array([metrics.aggregate_iqm(x), metrics.aggregate_median(x),
                     metrics.aggregate_mean(x), metrics.aggregate_optimality_gap(x)])
np.random.seed(2)
t0 = time.perf_counter()
point, ci = rly.get_interval_estimates({first: d[first]}, four, reps=iqm_reps)
out["four_metrics_one_algorithm"] = {
    "seconds": time.perf_counter() - t0, "algorithm": first,
    "point": [float(v) for v in point[first]],
    "ci": [[float(ci[first][0, i]), float(ci[first][1, i])] for i in range(4)]}

np.random.seed(3)
t0 = time.perf_counter()
point, ci = rly.get_interval_estimates({first: d[first]}, iqm, reps=iqm_reps, method="bca")
out["iqm_bca_one_algorithm"] = {
    "seconds": time.perf_counter() - t0, "algorithm": first,
    "point": float(point[first][0]), "ci": [float(ci[first][0, 0]), float(ci[first][1, 0])]}
print(json.dumps(out))
"""


def make_scores(seed: int = 2021) -> dict[str, np.ndarray]:
    """5 algorithms x 10 tasks x 10 runs of normalized scores, as rliable's dict."""
    rng = np.random.default_rng(seed)
    difficulty = rng.uniform(0.3, 1.5, size=10)
    skill = np.array([0.6, 0.75, 0.85, 0.95, 1.15])
    return {
        f"alg{a}": skill[a] * difficulty * rng.lognormal(0.0, 0.35, size=(10, 10))
        + rng.normal(0.0, 0.05, size=(10, 10))
        for a in range(5)
    }


def run_rliable(python: str, score_dict: dict[str, np.ndarray]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.npz"
        np.savez(path, **score_dict)
        proc = subprocess.run(
            [
                python,
                "-c",
                RLIABLE_HELPER,
                str(path),
                str(IQM_REPS),
                str(POI_REPS),
                json.dumps(PAIRS),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    if proc.returncode != 0:
        sys.exit(f"rliable helper failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def timed(fn, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def agreement(ours_mc: np.ndarray, theirs: np.ndarray) -> dict:
    """z-scores of rliable's endpoints against our Monte-Carlo distribution of them."""
    mean, sd = ours_mc.mean(axis=0), ours_mc.std(axis=0, ddof=1)
    z = (np.asarray(theirs) - mean) / (sd * np.sqrt(1 + 1 / ours_mc.shape[0]))
    return {
        "ours_mean": mean.tolist(),
        "mc_sd": sd.tolist(),
        "z": z.tolist(),
        "max_abs_z": float(np.max(np.abs(z))),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rliable-python", default=os.environ.get("RLIABLE_PYTHON", "/tmp/rliable-venv/bin/python")
    )
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if not Path(args.rliable_python).exists():
        print(
            f"no rliable python at {args.rliable_python}; see the setup at the top of "
            "benchmarks/bench_intervals.py",
            file=sys.stderr,
        )
        return 2

    score_dict = make_scores()
    scores = scores_from_dict(score_dict)
    algs = list(score_dict)
    print(
        f"data: {len(algs)} algorithms x {scores.sizes['task']} tasks x "
        f"{scores.sizes['run']} runs; running rliable ({args.rliable_python}) ...",
        flush=True,
    )
    theirs = run_rliable(args.rliable_python, score_dict)

    def ours_iqm(seed=0, method="percentile", data=scores, metrics=("iqm",)):
        return interval_estimates(
            data, metrics=metrics, reps=IQM_REPS, method=method, rng=np.random.default_rng(seed)
        )

    def ours_poi(seed=0):
        return pairwise_probability_of_improvement(
            scores, PAIRS, reps=POI_REPS, rng=np.random.default_rng(seed)
        )

    first = theirs["four_metrics_one_algorithm"]["algorithm"]
    one = scores.sel(algorithm=[first])
    t_iqm, iqm = timed(ours_iqm, args.repeats)
    t_poi, poi = timed(ours_poi, args.repeats)
    t_four, four = timed(lambda: ours_iqm(data=one, metrics=ALL_METRICS), args.repeats)
    t_bca, bca = timed(lambda: ours_iqm(data=one, method="bca"), args.repeats)

    # Monte-Carlo spread of our endpoints over other seeds
    iqm_mc = np.array(
        [
            np.r_[d.lo.values[:, 0], d.hi.values[:, 0]]
            for d in (ours_iqm(seed=100 + s) for s in range(MC_SEEDS))
        ]
    )
    poi_mc = np.array(
        [np.r_[d.lo.values, d.hi.values] for d in (ours_poi(seed=100 + s) for s in range(MC_SEEDS))]
    )
    bca_mc = np.array(
        [
            np.r_[d.lo.values[:, 0], d.hi.values[:, 0]]
            for d in (ours_iqm(seed=100 + s, data=one, method="bca") for s in range(MC_SEEDS))
        ]
    )
    labels = [f"{x}:{y}" for x, y in PAIRS]
    their_iqm = np.r_[
        [theirs["iqm"]["ci"][a][0] for a in algs], [theirs["iqm"]["ci"][a][1] for a in algs]
    ]
    their_poi = np.r_[
        [theirs["poi"]["ci"][p][0] for p in labels], [theirs["poi"]["ci"][p][1] for p in labels]
    ]
    their_bca = np.array(theirs["iqm_bca_one_algorithm"]["ci"])

    point_diff = max(
        max(abs(iqm.point.sel(algorithm=a).item() - theirs["iqm"]["point"][a]) for a in algs),
        max(abs(poi.point.sel(pair=p).item() - theirs["poi"]["point"][p]) for p in labels),
        float(np.max(np.abs(four.point.values[0] - theirs["four_metrics_one_algorithm"]["point"]))),
    )
    res = {
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
        },
        "versions": {
            "ours": {p: metadata.version(p) for p in ("numpy", "scipy", "xarray")},
            "rliable_env": theirs["versions"],
        },
        "data": {
            "algorithms": len(algs),
            "tasks": scores.sizes["task"],
            "runs": scores.sizes["run"],
            "generator": "make_scores(seed=2021)",
        },
        "iqm_ci": {
            "reps": IQM_REPS,
            "algorithms": len(algs),
            "rliable_s": theirs["iqm"]["seconds"],
            "ours_s": t_iqm,
            "speedup": theirs["iqm"]["seconds"] / t_iqm,
            "target": 50,
            "ci": {
                a: {
                    "rliable": theirs["iqm"]["ci"][a],
                    "ours": [iqm.lo.sel(algorithm=a).item(), iqm.hi.sel(algorithm=a).item()],
                }
                for a in algs
            },
            "agreement": agreement(iqm_mc, their_iqm),
        },
        "probability_of_improvement": {
            "reps": POI_REPS,
            "pairs": labels,
            "rliable_s": theirs["poi"]["seconds"],
            "ours_s": t_poi,
            "speedup": theirs["poi"]["seconds"] / t_poi,
            "target": 500,
            "ci": {
                p: {
                    "rliable": theirs["poi"]["ci"][p],
                    "ours": [poi.lo.sel(pair=p).item(), poi.hi.sel(pair=p).item()],
                }
                for p in labels
            },
            "agreement": agreement(poi_mc, their_poi),
        },
        "four_metrics_one_algorithm": {
            "reps": IQM_REPS,
            "algorithm": first,
            "rliable_s": theirs["four_metrics_one_algorithm"]["seconds"],
            "ours_s": t_four,
            "speedup": theirs["four_metrics_one_algorithm"]["seconds"] / t_four,
        },
        "iqm_bca_one_algorithm": {
            "reps": IQM_REPS,
            "algorithm": first,
            "rliable_s": theirs["iqm_bca_one_algorithm"]["seconds"],
            "ours_s": t_bca,
            "speedup": theirs["iqm_bca_one_algorithm"]["seconds"] / t_bca,
            "ci": {"rliable": their_bca.tolist(), "ours": [bca.lo.item(), bca.hi.item()]},
            "agreement": agreement(bca_mc, their_bca),
        },
        "max_point_estimate_difference": point_diff,
        "repeats": args.repeats,
    }
    ok_speed = (
        res["iqm_ci"]["speedup"] >= 50 and res["probability_of_improvement"]["speedup"] >= 500
    )
    ok_ci = all(
        res[k]["agreement"]["max_abs_z"] < 4
        for k in ("iqm_ci", "probability_of_improvement", "iqm_bca_one_algorithm")
    )
    res["pass"] = {
        "speed": bool(ok_speed),
        "ci_agreement": bool(ok_ci),
        "points_equal": bool(point_diff < 1e-9),
    }

    for key, title in (
        ("iqm_ci", f"IQM CI, {IQM_REPS} reps, {len(algs)} algorithms"),
        ("probability_of_improvement", f"P(X>Y), {POI_REPS} reps, {len(PAIRS)} pairs"),
        ("four_metrics_one_algorithm", f"4 metrics, {IQM_REPS} reps, 1 algorithm"),
        ("iqm_bca_one_algorithm", f"IQM BCa, {IQM_REPS} reps, 1 algorithm"),
    ):
        r = res[key]
        target = f"  (target >= {r['target']}x)" if "target" in r else ""
        print(
            f"{title:<40} rliable {r['rliable_s']:8.3f} s   ours {r['ours_s']:8.4f} s   "
            f"speedup {r['speedup']:8.1f}x{target}"
        )
    print("\nCI endpoints (rliable vs ours):")
    for key in ("iqm_ci", "probability_of_improvement"):
        for name, v in res[key]["ci"].items():
            print(
                f"  {key:<28} {name:<10} rliable [{v['rliable'][0]:.4f}, {v['rliable'][1]:.4f}]"
                f"   ours [{v['ours'][0]:.4f}, {v['ours'][1]:.4f}]"
            )
    v = res["iqm_bca_one_algorithm"]["ci"]
    print(
        f"  {'iqm BCa':<28} {first:<10} rliable [{v['rliable'][0]:.4f}, {v['rliable'][1]:.4f}]"
        f"   ours [{v['ours'][0]:.4f}, {v['ours'][1]:.4f}]"
    )
    for key in ("iqm_ci", "probability_of_improvement", "iqm_bca_one_algorithm"):
        print(
            f"max |z| of rliable endpoints vs our Monte-Carlo spread, {key}: "
            f"{res[key]['agreement']['max_abs_z']:.2f}"
        )
    print(f"max point-estimate difference: {point_diff:.2e}")
    print(f"pass: {res['pass']}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    tmp = RESULTS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(res, indent=2) + "\n")
    tmp.replace(RESULTS)
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0 if (ok_speed and ok_ci) else 1


if __name__ == "__main__":
    sys.exit(main())
