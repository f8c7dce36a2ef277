"""Benchmark: training throughput of each optimizer, and the runtime of the ``small`` study.

Run (from the repository root; a few minutes on one core)::

    .venv/bin/python benchmarks/bench_optimizers.py                 # sizes of the small sweep
    .venv/bin/python benchmarks/bench_optimizers.py --estimate-small

What it measures, on one torch thread (as the sweep's Dask tasks run):

1. Training tokens/s per optimizer and model size: :func:`run_pretrain` (our loop:
   schedule, gradient clipping, the optimizer bundle; evaluation and batch
   sampling excluded from its clock) against a plain torch loop on the same model
   (``torch.optim.AdamW``, forward, cross-entropy, backward, step on pre-sampled
   batches), interleaved in the same run, median of ``--repeats``. The ratio
   ``ours / plain AdamW`` is the cost of each optimizer (and of our loop) per token.
2. ``--estimate-small``: the runtime of the whole ``small`` sweep from these
   per-step times: the final runs (every optimizer, size, multiple, seed: their
   exact step counts), base tuning (evaluations estimated from the grid sizes and
   ``--rounds`` passes) and re-tuning (``--retune-evals`` per optimizer and size),
   plus the measured evaluation time per run, packed on 2 workers (longest first).

Results are printed and written to ``benchmarks/results/optimizers.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from scalinglab.models import Transformer
from scalinglab.models.corpus import build_corpus, eval_windows, sample_batch
from scalinglab.studies.optimizers.sweep import sweep_config
from scalinglab.sweeps import makespan
from scalinglab.training.optimizers import default_hparams, hparam_grid
from scalinglab.training.pretrain import heldout_loss, run_pretrain

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "optimizers.json"


def plain_adamw_tok_s(model_cfg, batch_size: int, steps: int, lr: float) -> float:
    """Tokens/s of a plain torch AdamW loop on pre-sampled batches."""
    corpus = build_corpus(sweep_config("small").corpus)
    g = torch.Generator().manual_seed(0)
    batches = [
        sample_batch(corpus.train, batch_size, model_cfg.max_seq_len, generator=g)
        for _ in range(steps)
    ]
    model = Transformer(model_cfg, seed=0)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    t = time.perf_counter()
    for x, y in batches:
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return steps * batch_size * model_cfg.max_seq_len / (time.perf_counter() - t)


def measure(sweep, steps: int, repeats: int) -> dict:
    out: dict = {}
    for size in sweep.sizes:
        base = sweep.run_config("adamw", size, 1.0, {})
        tok_per_step = size.batch_size * sweep.seq_len
        mult = steps * tok_per_step / base.target_tokens
        row = {
            "n_params": base.n_params,
            "d_model": size.d_model,
            "n_layer": size.n_layer,
            "batch_tokens": tok_per_step,
            "optimizers": {},
        }
        plain = []
        ours: dict[str, list] = {o: [] for o in sweep.optimizers}
        for _ in range(repeats):  # interleaved, so background load hits all alike
            plain.append(
                plain_adamw_tok_s(
                    base.model, size.batch_size, steps, default_hparams("adamw")["lr"]
                )
            )
            for o in sweep.optimizers:
                cfg = dataclasses.replace(
                    sweep.run_config(o, size, 1.0, {}),
                    data_multiple=mult,
                    n_evals=1,
                    final_eval_tokens=sweep.eval_tokens,
                )
                r = run_pretrain(cfg, seed=0, num_threads=1)
                ours[o].append((r.tokens_per_s, r.seconds_per_step))
        p = statistics.median(plain)
        row["plain_adamw_tok_s"] = p
        for o in sweep.optimizers:
            tok = statistics.median(v[0] for v in ours[o])
            row["optimizers"][o] = {
                "tok_s": tok,
                "ratio_to_plain_adamw": tok / p,
                "seconds_per_step": statistics.median(v[1] for v in ours[o]),
            }
        cfg = sweep.run_config("adamw", size, 1.0, {})
        model = Transformer(cfg.model, seed=0)
        corpus = build_corpus(sweep.corpus)
        w_eval = eval_windows(corpus.heldout, sweep.eval_tokens, sweep.seq_len)
        w_final = eval_windows(corpus.heldout, sweep.final_eval_tokens, sweep.seq_len)
        t = time.perf_counter()
        heldout_loss(model, w_eval)
        e1 = time.perf_counter() - t
        t = time.perf_counter()
        heldout_loss(model, w_final)
        row["eval_seconds_per_run"] = sweep.n_evals * e1 + time.perf_counter() - t
        out[size.name] = row
        print(
            f"{size.name:>3} N={base.n_params:>6} plain AdamW {p / 1e3:7.1f}k tok/s | "
            + " | ".join(
                f"{o} {row['optimizers'][o]['tok_s'] / 1e3:.1f}k ({row['optimizers'][o]['ratio_to_plain_adamw']:.2f}x)"
                for o in sweep.optimizers
            ),
            flush=True,
        )
    return out


def estimate_small(sweep, sizes: dict, rounds: float, retune_evals: int, workers: int) -> dict:
    def run_s(o, size, mult):
        cfg = sweep.run_config(o, size, mult, {})
        m = sizes[size.name]
        return cfg.steps * m["optimizers"][o]["seconds_per_step"] + m["eval_seconds_per_run"]

    finals = [
        run_s(o, sz, m)
        for o in sweep.optimizers
        for sz in sweep.sizes
        for m in sweep.multiples
        if sweep.runs_cell(o, sz.name, m)
        for _ in sweep.seeds
    ]
    tuning = []
    for o in sweep.optimizers:
        n = 1 + rounds * sum(len(v) - 1 for v in hparam_grid(o).values())
        tuning += [run_s(o, sweep.sizes[0], sweep.tune_multiple)] * round(n)
        for sz in sweep.sizes[1:]:
            tuning += [run_s(o, sz, sweep.tune_multiple)] * retune_evals
    # tuning phases run as batches of a few tasks: pack each optimizer's runs alone
    wall = makespan(finals, workers=workers) + sum(tuning) / workers * 1.25
    return {
        "final_runs": len(finals),
        "final_core_s": sum(finals),
        "tuning_runs_est": len(tuning),
        "tuning_core_s": sum(tuning),
        "workers": workers,
        "estimated_wall_s": wall,
        "assumptions": f"{rounds} coordinate-descent passes at the smallest size, "
        f"{retune_evals} re-tuning runs per optimizer and larger size, "
        "tuning batches 80% efficient on the workers",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100, help="steps per timing (default 100)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--estimate-small", action="store_true")
    ap.add_argument("--rounds", type=float, default=2.5)
    ap.add_argument("--retune-evals", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    sweep = sweep_config("small")
    t0 = time.time()
    sizes = measure(sweep, args.steps, args.repeats)
    result = {
        "machine": platform.machine(),
        "torch": torch.__version__,
        "threads": 1,
        "load_average_at_start": os.getloadavg()[0],
        "steps_per_timing": args.steps,
        "repeats": args.repeats,
        "sizes": sizes,
    }
    if args.estimate_small:
        est = estimate_small(sweep, sizes, args.rounds, args.retune_evals, args.workers)
        result["estimate_small"] = est
        print(
            f"small sweep: {est['final_runs']} final runs ({est['final_core_s'] / 60:.1f} "
            f"core-min), ~{est['tuning_runs_est']} tuning runs ({est['tuning_core_s'] / 60:.1f} "
            f"core-min); estimated {est['estimated_wall_s'] / 60:.1f} min on "
            f"{args.workers} workers"
        )
    result["benchmark_seconds"] = time.time() - t0
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2))
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
