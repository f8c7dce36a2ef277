"""What an optimizer sweep costs: measured seconds per step, extrapolated to every run.

:func:`measure_costs` times, on this machine and one torch thread (as the sweep's Dask
tasks run), a short run of every (size, optimizer) of a sweep: seconds per training step
(SOAP's first, preconditioner-building steps included) and seconds per held-out token of
evaluation. Before every timing it also times the ``reference`` cell (by default AdamW
at the ``small`` sweep's largest size, whose seconds per step the committed ``small``
dataset records from its own 2-worker run) and keeps the median ratio of the two over
``repeats`` alternations, so :func:`scaled_costs` scales a probe taken on a busy machine
back to the conditions the ``small`` sweep ran in (two workers on two cores).

:func:`task_seconds` turns the costs into the seconds of every task of the sweep, by
stage (base tuning, re-tuning, final runs and control arms), and :func:`estimate_sweep`
packs each stage longest-first on ``workers`` workers
(:func:`scalinglab.sweeps.makespan`). Coordinate descent is adaptive, so its number of
evaluations is estimated: ``rounds`` full passes over each grid at the smallest size
(each value but the incumbent), and ``retune_evals`` runs per optimizer and re-tuned
cell. Tuning stages are batches of one task per optimizer, so they are packed per batch.

Run ``python -m scalinglab.studies.optimizers.budget medium`` to measure and print the
estimate; ``--out FILE`` writes it as JSON.
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
from typing import Any

import torch

from scalinglab import atomic
from scalinglab.models.corpus import build_corpus, eval_windows
from scalinglab.models.transformer import Transformer
from scalinglab.training.pretrain import heldout_loss, run_pretrain


def step_seconds(sweep: Any, optimizer: str, size: Any, steps: int) -> float:
    """Seconds per step of ``steps`` training steps of ``optimizer`` at ``size`` (the
    sweep's run config at its tuning budget, default settings, one torch thread)."""
    cfg = dataclasses.replace(
        sweep.run_config(optimizer, size, sweep.tune_multiple, {}),
        train_steps=steps,
        n_evals=0,
        final_eval_tokens=0,
    )
    return run_pretrain(cfg, seed=0, num_threads=1).seconds_per_step


def measure_costs(
    sweep: Any, *, steps: int = 20, repeats: int = 3, reference: tuple[Any, str, Any] | None = None
) -> dict:
    """Seconds per training step per (size, optimizer), each against a reference beside it.

    Parameters
    ----------
    sweep
        A :class:`~scalinglab.studies.optimizers.sweep.SweepConfig`.
    steps
        Training steps per timing.
    repeats
        Alternations of (reference, timed cell) per (size, optimizer); the medians are
        kept, and the median of the per-alternation ratios (robust to a load that drifts).
    reference
        ``(sweep, optimizer, size)`` timed before every cell (default: AdamW at the
        ``small`` sweep's largest size).

    Returns
    -------
    dict
        ``{"sizes": {size: {"step_s": {optimizer: s}, "ratio": {optimizer: x},
        "reference_step_s": s, "eval_s_per_token": s, "n_params": N}}, "reference":
        name, "steps", "repeats", "machine", "load_average", "measured_at"}``.
    """
    torch.set_num_threads(1)
    if reference is None:
        from scalinglab.studies.optimizers.sweep import sweep_config

        small = sweep_config("small")
        reference = (small, "adamw", small.sizes[-1])
    load = os.getloadavg()[0]
    ref_sweep, ref_opt, ref_size = reference
    corpus = build_corpus(sweep.corpus)
    out = {}
    for size in sweep.sizes:
        step_s, ratio, refs = {}, {}, []
        for o in sweep.optimizers:
            pairs = []
            for _ in range(repeats):
                r = step_seconds(ref_sweep, ref_opt, ref_size, steps)
                pairs.append((r, step_seconds(sweep, o, size, steps)))
            refs += [r for r, _ in pairs]
            step_s[o] = statistics.median(t for _, t in pairs)
            ratio[o] = statistics.median(t / r for r, t in pairs)
        cfg = sweep.run_config("adamw", size, 1.0, {})
        windows = eval_windows(corpus.heldout, sweep.eval_tokens, sweep.seq_len)
        model = Transformer(cfg.model, seed=0)
        t = time.perf_counter()
        heldout_loss(model, windows)
        eval_s = (time.perf_counter() - t) / windows[:, 1:].numel()
        out[size.name] = {
            "step_s": step_s,
            "ratio": ratio,
            "reference_step_s": statistics.median(refs),
            "eval_s_per_token": eval_s,
            "n_params": cfg.n_params,
        }
        print(f"{size.name}: {json.dumps(out[size.name])}", flush=True)
    return {
        "sizes": out,
        "reference": f"{ref_sweep.compute_class}/{ref_size.name}/{ref_opt}",
        "steps": steps,
        "repeats": repeats,
        "machine": platform.node(),
        "load_average": [load, os.getloadavg()[0]],
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def scaled_costs(costs: dict, reference_s: float) -> dict:
    """``costs`` in the conditions where the reference takes ``reference_s`` per step.

    Each cell's step time becomes its median ratio to the reference times
    ``reference_s``; evaluation is scaled by ``reference_s`` over the size's median
    reference time.
    """
    out = dict(costs, sizes={})
    for name, c in costs["sizes"].items():
        f = reference_s / c["reference_step_s"]
        out["sizes"][name] = dict(
            c,
            step_s={o: v * reference_s for o, v in c["ratio"].items()},
            eval_s_per_token=c["eval_s_per_token"] * f,
        )
    return out


def run_seconds(sweep: Any, costs: dict, cfg: Any) -> float:
    """Seconds of one run of ``cfg`` (a ``PretrainConfig`` of ``sweep``) from ``costs``."""
    size = next(s for s in sweep.sizes if s.d_model == cfg.model.d_model)
    c = costs["sizes"][size.name]
    evals = len(cfg.eval_steps) * cfg.eval_tokens + cfg.final_eval_tokens
    return cfg.steps * c["step_s"][cfg.optimizer] + evals * c["eval_s_per_token"]


def task_seconds(
    sweep: Any, costs: dict, *, rounds: float = 2.0, retune_evals: int = 4
) -> dict[str, list[list[float]]]:
    """Estimated seconds of every task of ``sweep``, by stage, as batches.

    Returns
    -------
    dict
        ``{stage: [batch, ...]}``, each batch a list of task seconds (the tasks of a
        batch run together; batches one after the other).
    """

    def sec(o: str, size: Any, m: float, **kw: Any) -> float:
        return run_seconds(sweep, costs, sweep.run_config(o, size, m, {}, **kw))

    small = sweep.sizes[0]
    coords = lambda o: sweep.tune_coords or tuple(sweep.grid(o))  # noqa: E731
    n_base = {
        o: round(1 + rounds * sum(len(sweep.grid(o)[c]) - 1 for c in coords(o)))
        for o in sweep.optimizers
    }
    base = [
        [sec(o, small, sweep.tune_multiple) for o in sweep.optimizers if i < n_base[o]]
        for i in range(max(n_base.values()))
    ]
    cells = [
        (sz, m)
        for sz in sweep.sizes
        for m in sweep.retune_multiples
        if (sz.name, m) != (small.name, sweep.tune_multiple)
    ]
    retune = [
        [sec(o, sz, m) for o in sweep.optimizers] for sz, m in cells for _ in range(retune_evals)
    ]
    final = [
        sec(o, sz, m)
        for o in sweep.optimizers
        for sz in sweep.sizes
        for m in sweep.multiples
        if sweep.runs_cell(o, sz.name, m)
        for _ in sweep.seeds
    ]
    final += [
        sec(o, sz, m)
        for o in sweep.optimizers
        if o != "adamw"
        for sz in sweep.sizes
        if sz.name in sweep.transfer_sizes
        for m in sweep.data_multiples
        if sweep.runs_cell(o, sz.name, m)
        for _ in sweep.seeds
    ]
    final += [
        sec(o, sz, m, schedule=sweep.control_schedule)
        for o in sweep.optimizers
        for sz in sweep.sizes
        if sz.name in sweep.control_sizes
        for m in sweep.control_multiples
        if sweep.runs_cell(o, sz.name, m)
        for _ in sweep.seeds
    ]
    return {"base tuning": base, "re-tuning": retune, "final runs and controls": [final]}


def estimate_sweep(
    sweep: Any, costs: dict, *, workers: int = 2, rounds: float = 2.0, retune_evals: int = 4
) -> dict:
    """Wall-clock estimate of ``sweep`` on ``workers`` workers from (scaled) costs.

    Returns
    -------
    dict
        ``tasks`` (count per stage), ``core_s`` (per stage and ``total``), ``wall_s``
        (stages and their batches one after the other, each batch packed longest-first),
        ``workers``, ``assumptions``.
    """
    from scalinglab.sweeps import makespan

    stages = task_seconds(sweep, costs, rounds=rounds, retune_evals=retune_evals)
    core = {k: float(sum(sum(b) for b in v)) for k, v in stages.items()}
    core["total"] = float(sum(core.values()))
    wall = float(sum(makespan(b, workers=workers) for v in stages.values() for b in v if b))
    return {
        "tasks": {k: sum(len(b) for b in v) for k, v in stages.items()},
        "core_s": core,
        "wall_s": wall,
        "workers": workers,
        "assumptions": f"{rounds} coordinate-descent passes at the smallest size, "
        f"{retune_evals} re-tuning runs per optimizer and re-tuned cell",
    }


def committed_reference_s() -> float | None:
    """AdamW's median seconds per step at the largest size of the committed ``small`` sweep."""
    import xarray as xr

    from scalinglab.paths import data_dir

    files = sorted((data_dir() / "optimizer_comparison").glob("sweep-small-*.nc"))
    if not files:
        return None
    with xr.open_dataset(files[-1], engine="h5netcdf") as ds:
        v = ds.seconds_per_step.sel(optimizer="adamw").isel(model_size=-1)
        return float(v.where(ds.status.sel(optimizer="adamw").isel(model_size=-1) == "ok").median())


def main(argv: list[str] | None = None) -> None:
    from scalinglab.studies.optimizers.sweep import sweep_config

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("compute_class")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    sweep = sweep_config(args.compute_class)
    costs = measure_costs(sweep, steps=args.steps, repeats=args.repeats)
    costs["estimate_raw"] = estimate_sweep(sweep, costs, workers=args.workers)
    ref = committed_reference_s()
    if ref is not None:
        costs["committed_reference_step_s"] = ref
        costs["estimate"] = estimate_sweep(sweep, scaled_costs(costs, ref), workers=args.workers)
    print(json.dumps({k: v for k, v in costs.items() if k.startswith("estimate")}, indent=2))
    if args.out:
        atomic.write_text(args.out, json.dumps(costs, indent=2) + "\n")


if __name__ == "__main__":
    main()
