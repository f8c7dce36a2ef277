"""What an RL sweep costs: measured seconds per size, extrapolated to the whole sweep.

:func:`measure_costs` times, on this machine and one torch thread (as the sweep's
tasks run), one warm-up and a short GRPO run per model size of a sweep: seconds
per warm-up, per GRPO step (rollout, reward and update) and per held-out
evaluation. :func:`estimate_sweep` turns those into the seconds of every task of
the sweep (warm-ups, the learning-rate stage, the main runs at their full step
budget: an upper bound when the plateau rule stops runs early) and packs them on
``workers`` workers with :func:`scalinglab.sweeps.makespan`.

:func:`costs_from_runs` reads the same per-size seconds from a finished sweep's
recorded timings instead (the ``medium`` redesign is estimated from the first
``medium`` sweep's 122 runs, not from 50 steps timed on a loaded machine).

Run ``python -m scalinglab.studies.rl.budget medium`` to measure and print the
estimate; ``--out FILE`` writes the measurement as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import time
from pathlib import Path

import numpy as np

from scalinglab import atomic
from scalinglab.studies.rl.run import run_rl, warm_start


def measure_costs(sweep, *, steps: int = 50, seed: int = 0) -> dict:
    """Seconds per warm-up, GRPO step and evaluation, per size of ``sweep``.

    Parameters
    ----------
    sweep
        An :class:`~scalinglab.studies.rl.config.RLSweepConfig`.
    steps
        GRPO steps timed per size (evaluations every ``sweep.eval_every``).
    seed
        Run seed of the timed runs.

    Returns
    -------
    dict
        ``{"sizes": {name: {"warmup_s", "warmup_steps", "step_s", "eval_s",
        "n_params"}}, "steps": steps, "machine": ..., "measured_at": ...}``.
    """
    out = {}
    for size in sweep.sizes:
        cfg = sweep.run_config(size, next(iter(sweep.variants)))
        cfg = dataclasses.replace(
            cfg, grpo=dataclasses.replace(cfg.grpo, steps=steps), plateau=None
        )
        t = time.perf_counter()
        warm = warm_start(cfg, seed=seed, device="cpu", num_threads=1)
        warm_s = time.perf_counter() - t
        r = run_rl(cfg, seed=seed, device="cpu", num_threads=1, warm=warm)
        n_eval = len(r.eval_step)
        out[size.name] = {
            "warmup_s": warm_s,
            "warmup_steps": warm.steps,
            "step_s": (r.timing_s["rollout"] + r.timing_s["reward"] + r.timing_s["update"]) / steps,
            "eval_s": r.timing_s["eval"] / n_eval,
            "n_params": cfg.model.n_params(),
        }
        print(f"{size.name}: {json.dumps(out[size.name])}", flush=True)
    return {
        "sizes": out,
        "steps": steps,
        "machine": platform.node(),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def costs_from_runs(ds, *, quantile: float = 0.25) -> dict:
    """Seconds per warm-up, GRPO step and evaluation per size, from a finished sweep.

    Each run of the sweep recorded its seconds of rollout, reward, update and
    evaluation; a run sharing the machine with other work is slower, so the estimate
    takes a lower ``quantile`` over a size's runs (0.25: the quarter of runs that had
    the machine most to themselves) rather than the mean.

    Parameters
    ----------
    ds
        A sweep's Dataset (:func:`~scalinglab.studies.rl.sweep.to_dataset`: dims
        ``model_size, variant, seed, eval, step``, timing variables ``rollout_s``,
        ``reward_s``, ``update_s``, ``eval_s`` and ``warmup_wall_s``).
    quantile
        The quantile over runs taken as the idle-machine cost.

    Returns
    -------
    dict
        ``{"sizes": {name: {"warmup_s", "warmup_steps", "step_s", "eval_s",
        "n_params", "runs"}}, "source": ...}``, the shape :func:`estimate_sweep` reads.
    """
    steps = ds.train_reward.notnull().sum("step")
    evals = ds.pass_rate.notnull().sum("eval")
    step_s = (ds.rollout_s + ds.reward_s + ds.update_s) / steps.where(steps > 0)
    eval_s = ds.eval_s / evals.where(evals > 0)
    out = {}
    for size in ds.model_size.values:
        per_step = step_s.sel(model_size=size).values.ravel()
        per_eval = eval_s.sel(model_size=size).values.ravel()
        ok = np.isfinite(per_step) & np.isfinite(per_eval)
        out[str(size)] = {
            "warmup_s": float(np.quantile(ds.warmup_wall_s.sel(model_size=size), quantile)),
            "warmup_steps": float(ds.warmup_steps.sel(model_size=size).mean()),
            "step_s": float(np.quantile(per_step[ok], quantile)),
            "eval_s": float(np.quantile(per_eval[ok], quantile)),
            "n_params": int(ds.n_params.sel(model_size=size)),
            "runs": int(ok.sum()),
        }
    return {
        "sizes": out,
        "source": f"recorded timings of sweep {ds.attrs.get('config_hash', '?')}, "
        f"{quantile:.2f} quantile over runs",
    }


def run_seconds(sweep, costs: dict, size: str, *, steps: int | None = None) -> float:
    """Estimated seconds of one GRPO run of ``size`` (``steps``: the sweep's by default),
    its evaluations included."""
    steps = sweep.grpo.steps if steps is None else steps
    c = costs["sizes"][size]
    n_eval = len({0, *range(sweep.eval_every, steps + 1, sweep.eval_every), steps})
    return steps * c["step_s"] + n_eval * c["eval_s"]


def task_seconds(sweep, costs: dict) -> dict[str, list[float]]:
    """Estimated seconds of every task of ``sweep``, by stage.

    Main runs are counted at their full step budget (``sweep.grpo.steps``), so with
    a plateau rule the estimate is an upper bound.

    Returns
    -------
    dict
        ``{"warm-up": [...], "learning-rate stage": [...], "GRPO runs": [...]}``.
    """
    c = costs["sizes"]
    warm = [c[s.name]["warmup_s"] for s in sweep.sizes for _ in sweep.warm_seeds()]

    def run_s(name: str, steps: int) -> float:
        return run_seconds(sweep, costs, name, steps=steps)

    lr = [
        run_s(s.name, sweep.lr_steps)
        for s in sweep.sizes
        for _ in sweep.lr_grid
        for _ in sweep.lr_seeds
    ]
    main = [
        run_s(s.name, sweep.grpo.steps)
        for v in sweep.variants
        for s in sweep.sizes
        if s.name in sweep.runs_at(v)
        for _ in sweep.seeds
    ]
    return {"warm-up": warm, "learning-rate stage": lr, "GRPO runs": main}


def estimate_sweep(sweep, costs: dict, *, workers: int = 2) -> dict:
    """Wall-clock estimate of ``sweep`` on ``workers`` workers from measured costs.

    Returns
    -------
    dict
        ``tasks`` (count per stage), ``core_s`` (summed task seconds per stage and
        ``total``) and ``wall_s`` (the stages run one after the other, each packed
        longest-first onto the workers).
    """
    from scalinglab.sweeps import makespan

    stages = task_seconds(sweep, costs)
    core = {k: float(sum(v)) for k, v in stages.items()}
    core["total"] = float(sum(core.values()))
    wall = float(sum(makespan(v, workers=workers) for v in stages.values() if v))
    return {
        "tasks": {k: len(v) for k, v in stages.items()},
        "core_s": core,
        "wall_s": wall,
        "workers": workers,
    }


def main(argv: list[str] | None = None) -> None:
    from scalinglab.studies.rl.config import sweep_config

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("compute_class")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    sweep = sweep_config(args.compute_class)
    costs = measure_costs(sweep, steps=args.steps)
    costs["estimate"] = estimate_sweep(sweep, costs, workers=args.workers)
    print(json.dumps(costs["estimate"], indent=2))
    if args.out:
        atomic.write_text(args.out, json.dumps(costs, indent=2) + "\n")


if __name__ == "__main__":
    main()
