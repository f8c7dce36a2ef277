"""Benchmark: sampling throughput of the test-time scaling study, and the budget it sets.

Run (from the repository root; a minute on one core once the policies exist)::

    .nox/tests/bin/python benchmarks/bench_tts_sampling.py            # class small
    .nox/tests/bin/python benchmarks/bench_tts_sampling.py --class medium

Per size of the class, on one torch thread (as the study's blocks run): samples/s of
:func:`scalinglab.studies.tts.sampling.sample_nucleus` at the class's batch (its
``batch_sequences`` sequences per pass, prompts x samples), median of ``--repeats``
timings, and the time the class's samples would take on one worker
(``n_prompts x n_samples / rate``). Policies are loaded from ``data/`` (trained first
if missing, which takes minutes). Results go to ``benchmarks/results/tts_sampling.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from scalinglab.studies.rl.measure import torch_threads
from scalinglab.studies.tts.policies import load_or_train, rl_class
from scalinglab.studies.tts.sampling import heldout, sample_nucleus, tts_config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--class", dest="compute_class", default="small")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    cfg = tts_config(args.compute_class)
    sweep = rl_class(cfg.compute_class)
    probs = heldout(cfg)
    per = max(1, cfg.batch_sequences // cfg.n_samples)
    ids = probs.prompt_tensor()[:per]
    out = {"compute_class": cfg.compute_class, "batch_sequences": cfg.batch_sequences, "sizes": {}}
    with torch_threads(1):
        for s in cfg.size_names:
            model, _ = load_or_train(sweep, s, seed=cfg.policy_seed)
            times = []
            for r in range(args.repeats):
                gen = torch.Generator().manual_seed(r)
                t0 = time.perf_counter()
                rows = sample_nucleus(
                    model,
                    ids,
                    max_new_tokens=sweep.task.max_answer_len + 1,
                    repeats=min(cfg.n_samples, cfg.batch_sequences),
                    temperature=cfg.temperature,
                    top_p=cfg.top_p,
                    generator=gen,
                )
                times.append(time.perf_counter() - t0)
            rate = rows.shape[0] / statistics.median(times)
            total = cfg.n_prompts * cfg.n_samples / rate
            out["sizes"][s] = {"samples_per_s": rate, "class_samples_s": total}
            print(
                f"{s}: {rate:,.0f} samples/s; the class's {cfg.n_prompts} x {cfg.n_samples} "
                f"samples: {total:.0f} s on one worker"
            )
    path = Path(__file__).parent / "results" / "tts_sampling.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
