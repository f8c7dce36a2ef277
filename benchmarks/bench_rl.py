"""Benchmark: the RL engine's rollout and training throughput, and where the time goes.

Run (from the repository root; about a minute on one core)::

    .venv/bin/python benchmarks/bench_rl.py                # sizes s, m, l of the small sweep
    .venv/bin/python benchmarks/bench_rl.py --estimate-small   # + runtime estimate of `small`

What it measures, per model size of the ``small`` sweep, on one torch thread (as
the sweep's Dask tasks run), median of ``--repeats`` timings:

1. Rollout tokens/s: :func:`scalinglab.studies.rl.grpo.sample_completions` (KV
   cache, each prompt prefilled once, stop when every row has ended) against a
   plain torch loop on the same model (``no_grad``, the whole sequence recomputed
   for each new token, prompts repeated ``G`` times). Two shapes: the task's own
   (16 prompts x 8, prompt 8 tokens, up to 5 new) and a long one (up to 48 new) where
   the cache matters more. Both run the same number of steps (EOS disabled).
2. Training tokens/s: one GRPO update (:func:`grpo_update`, one minibatch) against a
   plain loop (logits, log-softmax, gather, ``-(A logp).mean()``, backward, AdamW)
   on the same batch; achieved GFLOP/s from the cost model's training FLOPs.
3. Where the time goes: the phase breakdown (rollout, reward, update, evaluation)
   of a short :func:`run_rl` per size, and the top operators of one GRPO step
   under ``torch.profiler`` for the largest size.
4. ``--estimate-small``: warm-up and 30 RL steps per size timed, extrapolated to the
   whole ``small`` sweep on 2 workers (longest-first packing).

Results are printed and written to ``benchmarks/results/rl.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import statistics
import time
from pathlib import Path

import torch

from scalinglab.cost_model.flops import training_flops
from scalinglab.models import EOS, Transformer
from scalinglab.studies.rl.config import sweep_config
from scalinglab.studies.rl.grpo import grpo_update, sample_completions
from scalinglab.studies.rl.run import run_rl, warm_start
from scalinglab.sweeps import makespan

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "rl.json"


def _median_time(fn, repeats: int) -> float:
    fn()  # warm-up call
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


class NoEOS(torch.nn.Module):
    """Output head that never emits EOS (fixed-length generations for timing)."""

    def __init__(self, head: torch.nn.Module) -> None:
        super().__init__()
        self.head = head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.head(x)
        logits[..., EOS] = float("-inf")
        return logits


@torch.no_grad()
def plain_rollout(model, prompts, repeats, max_new, gen):
    seq = prompts.repeat_interleave(repeats, dim=0)
    for _ in range(max_new):
        logits = model(seq)[:, -1]
        nxt = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)
        seq = torch.cat([seq, nxt], dim=1)
    return seq[:, prompts.shape[1] :]


def plain_update(model, opt, prompts, comp, adv):
    seq = torch.cat([prompts, comp], dim=1)
    logits = model(seq[:, :-1])[:, prompts.shape[1] - 1 :]
    logp = torch.log_softmax(logits, -1).gather(-1, comp[..., None]).squeeze(-1)
    loss = -(adv[:, None] * logp).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


def bench_size(sweep, size, *, repeats: int) -> dict:
    cfg = sweep.run_config(size, "baseline")
    g = cfg.grpo
    out = {"n_params": cfg.model.n_params(), "d_model": size.d_model, "n_layer": size.n_layer}
    gen = torch.Generator().manual_seed(0)
    prompts = torch.randint(3, 13, (g.prompts_per_step, cfg.task.prompt_len), generator=gen)
    for label, max_new in (("task", cfg.task.max_answer_len + 1), ("long", 48)):
        mcfg = dataclasses.replace(cfg.model, max_seq_len=cfg.task.prompt_len + max_new)
        model = Transformer(mcfg, seed=0).eval()
        model.lm_head = NoEOS(model.lm_head)  # both loops then run max_new steps
        tokens = g.prompts_per_step * g.group_size * max_new
        ours = _median_time(
            lambda m=model, n=max_new: sample_completions(
                m, prompts, max_new_tokens=n, repeats=g.group_size, generator=gen
            ),
            repeats,
        )
        plain = _median_time(
            lambda m=model, n=max_new: plain_rollout(m, prompts, g.group_size, n, gen), repeats
        )
        out[f"rollout_{label}"] = {
            "max_new": max_new,
            "ours_tok_s": tokens / ours,
            "plain_tok_s": tokens / plain,
            "speedup": plain / ours,
        }
    model = Transformer(cfg.model, seed=0)
    n = g.prompts_per_step * g.group_size
    comp = torch.randint(3, 13, (n, cfg.task.max_answer_len + 1), generator=gen)
    comp[:, -1] = EOS
    rep_prompts = prompts.repeat_interleave(g.group_size, dim=0)
    rewards = (torch.rand(n, generator=gen) < 0.3).double().numpy()
    adv = torch.randn(n, generator=gen)
    one_mb = dataclasses.replace(g, n_minibatches=1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ours = _median_time(
        lambda: grpo_update(model, opt, rep_prompts, comp, rewards, one_mb, generator=gen), repeats
    )
    plain = _median_time(lambda: plain_update(model, opt, rep_prompts, comp, adv), repeats)
    seq = rep_prompts.shape[1] + comp.shape[1] - 1
    flops = float(
        training_flops(
            cfg.model.n_params(), n * seq, n_layer=size.n_layer, n_ctx=seq, d_model=size.d_model
        )
    )
    out["train"] = {
        "tokens": n * seq,
        "ours_tok_s": n * seq / ours,
        "plain_tok_s": n * seq / plain,
        "ours_gflop_s": flops / ours / 1e9,
        "plain_gflop_s": flops / plain / 1e9,
        "speedup": plain / ours,
    }
    return out


def phase_breakdown(sweep, size, steps: int) -> dict:
    cfg = sweep.run_config(size, "baseline")
    cfg = dataclasses.replace(
        cfg,
        grpo=dataclasses.replace(cfg.grpo, steps=steps),
        eval_every=max(1, steps // 2),
        warmup=dataclasses.replace(cfg.warmup, max_steps=20, check_every=20),
    )
    r = run_rl(cfg, seed=0, num_threads=1)
    total = sum(r.timing_s.values())
    return {
        "steps": steps,
        "seconds": r.timing_s,
        "share": {k: v / total for k, v in r.timing_s.items()},
        "per_step_s": (total - r.timing_s["eval"]) / steps,
    }


def profile_step(sweep, size) -> list[dict]:
    from torch.profiler import ProfilerActivity, profile

    cfg = sweep.run_config(size, "baseline")
    g = cfg.grpo
    model = Transformer(cfg.model, seed=0)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    gen = torch.Generator().manual_seed(0)
    prompts = torch.randint(3, 13, (g.prompts_per_step, cfg.task.prompt_len), generator=gen)
    rewards = (torch.rand(g.prompts_per_step * g.group_size, generator=gen) < 0.3).double().numpy()

    def step():
        comp = sample_completions(
            model,
            prompts,
            max_new_tokens=cfg.task.max_answer_len + 1,
            repeats=g.group_size,
            generator=gen,
        )
        grpo_update(
            model, opt, prompts.repeat_interleave(g.group_size, 0), comp, rewards, g, generator=gen
        )

    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            step()
    rows = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in rows)
    return [
        {
            "op": e.key,
            "self_ms_per_step": e.self_cpu_time_total / 3e3,
            "share": e.self_cpu_time_total / total,
            "calls_per_step": e.count / 3,
        }
        for e in rows[:12]
    ]


def estimate_small(steps: int) -> dict:
    """Time warm-ups and ``steps`` RL steps per size; extrapolate the small sweep."""
    sweep = sweep_config("small")
    per = {}
    for size in sweep.sizes:
        cfg = sweep.run_config(size, "baseline")
        t = time.perf_counter()
        w = warm_start(cfg, seed=0, num_threads=1)
        warm_s = time.perf_counter() - t
        short = dataclasses.replace(
            cfg, grpo=dataclasses.replace(cfg.grpo, steps=steps), eval_every=sweep.eval_every
        )
        t = time.perf_counter()
        r = run_rl(short, seed=0, num_threads=1, warm=w)
        rl_s = time.perf_counter() - t
        n_evals = sweep.grpo.steps // sweep.eval_every + 1
        eval_each = r.timing_s["eval"] / len(r.pass_rate)
        full_rl = (rl_s - r.timing_s["eval"]) / steps * sweep.grpo.steps + eval_each * n_evals
        per[size.name] = {
            "warmup_s": warm_s,
            "warmup_steps": w.steps,
            "rl_run_s": full_rl,
            "measured_rl_steps": steps,
        }
        print(
            f"  {size.name}: warm-up {warm_s:.1f} s ({w.steps} steps), "
            f"RL run ~{full_rl:.1f} s for {sweep.grpo.steps} steps"
        )
    tasks = [per[s.name]["warmup_s"] for s in sweep.sizes for _ in sweep.seeds]
    rl = [per[s.name]["rl_run_s"] for s in sweep.sizes for _ in sweep.variants for _ in sweep.seeds]
    workers = 2
    total = makespan(tasks, workers=workers) + makespan(rl, workers=workers)
    return {
        "per_size": per,
        "core_seconds": sum(tasks) + sum(rl),
        "workers": workers,
        "estimated_wall_s": total,
        "n_warmups": len(tasks),
        "n_rl_runs": len(rl),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--phase-steps", type=int, default=20)
    ap.add_argument("--estimate-small", action="store_true")
    ap.add_argument("--estimate-steps", type=int, default=30)
    args = ap.parse_args()
    torch.set_num_threads(1)
    sweep = sweep_config("small")
    res = {
        "machine": platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "threads": 1,
        "sizes": {},
    }
    for size in sweep.sizes:
        b = bench_size(sweep, size, repeats=args.repeats)
        b["phases"] = phase_breakdown(sweep, size, args.phase_steps)
        res["sizes"][size.name] = b
        rt, rl, tr = b["rollout_task"], b["rollout_long"], b["train"]
        ph = b["phases"]["share"]
        print(
            f"size {size.name} (N={b['n_params']:,}): rollout {rt['ours_tok_s']:,.0f} tok/s "
            f"vs plain {rt['plain_tok_s']:,.0f} ({rt['speedup']:.2f}x); long "
            f"{rl['ours_tok_s']:,.0f} vs {rl['plain_tok_s']:,.0f} ({rl['speedup']:.2f}x); "
            f"train {tr['ours_tok_s']:,.0f} tok/s vs plain {tr['plain_tok_s']:,.0f} "
            f"({tr['ours_gflop_s']:.1f} GFLOP/s); phases "
            + ", ".join(f"{k} {v:.0%}" for k, v in ph.items())
        )
    res["profile_top_ops"] = profile_step(sweep, sweep.sizes[-1])
    print(f"top ops of one GRPO step, size {sweep.sizes[-1].name}:")
    for row in res["profile_top_ops"]:
        print(f"  {row['op']:<40s} {row['self_ms_per_step']:8.2f} ms  {row['share']:.0%}")
    if args.estimate_small:
        print("estimating the small sweep:")
        res["small_estimate"] = estimate_small(args.estimate_steps)
        est = res["small_estimate"]
        print(
            f"small sweep: {est['n_warmups']} warm-ups + {est['n_rl_runs']} RL runs, "
            f"{est['core_seconds'] / 60:.1f} core-min, ~{est['estimated_wall_s'] / 60:.1f} min "
            f"on {est['workers']} workers"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2, default=float))
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
