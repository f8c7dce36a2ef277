"""The RL-scaling sweep: sizes x design variants x seeds, as Dask tasks, into xarray.

A sweep has two or three stages, each mapped with :func:`scalinglab.sweeps.map_runs`:

1. one warm-up per (model size, seed) (:func:`~scalinglab.studies.rl.run.warm_start`);
2. (``medium``) a short GRPO learning-rate sweep per size: ``lr_grid`` multipliers of
   the width rule (:mod:`~scalinglab.studies.rl.config`), ``lr_seeds`` seeds,
   ``lr_steps`` steps each; the multiplier chosen by
   :func:`~scalinglab.studies.rl.lr_stage.select_lr` is used for that size's main
   runs, and the whole sweep is kept in the dataset (``lr_pass_rate``) as a result;
3. one GRPO run per (model size, variant, seed), started from that warm-up, so
   the variants of a size and seed share their starting policy and R0 (paired
   ablations) and the warm-up is paid once. ``variant_sizes`` can restrict a
   variant to some sizes (the other cells are ``status`` "skipped").

Each task sets torch to one thread (also in ``scheduler="sync"``), so a result
does not depend on where it ran. A task that raises is reported in the dataset
(``status`` "failed" and its traceback in ``error``; its values NaN) and printed,
never dropped. Results are cached under ``data/rl_scaling/`` by the hash of the
sweep config (which includes :data:`ENGINE_VERSION`) through
:func:`scalinglab.sweeps.cached_sweep`, which also keeps every finished warm-up and
GRPO run while the sweep runs, so an interrupted sweep resumes run by run.

The sweep's config, its compute classes and the learning-rate rule:
:mod:`scalinglab.studies.rl.config`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path

import numpy as np
import xarray as xr

from scalinglab.compute import resolve_device
from scalinglab.studies.rl.config import ENGINE_VERSION, STUDY, RLSweepConfig, sweep_config
from scalinglab.studies.rl.config import SizeSpec as SizeSpec  # pickled configs name it here
from scalinglab.studies.rl.lr_stage import lr_stage_dataset, select_lr
from scalinglab.studies.rl.run import RunResult, WarmStart, run_rl, warm_start
from scalinglab.sweeps import RunCache, cached_sweep, map_runs


def _warm_task(item: tuple[RLSweepConfig, int, int]) -> WarmStart:
    sweep, size_i, seed = item
    cfg = sweep.run_config(sweep.sizes[size_i], next(iter(sweep.variants)))
    return warm_start(cfg, seed=seed, device=sweep.device, num_threads=1)


def _rl_task(item: tuple[RLSweepConfig, int, str, int, WarmStart, float]) -> RunResult:
    sweep, size_i, variant, seed, warm, lr_mult = item
    cfg = sweep.run_config(sweep.sizes[size_i], variant, lr_mult=lr_mult)
    return run_rl(cfg, seed=seed, device=sweep.device, num_threads=1, warm=warm)


def _lr_task(item: tuple[RLSweepConfig, int, float, int, WarmStart]) -> RunResult:
    sweep, size_i, lr_mult, seed, warm = item
    cfg = sweep.lr_config(sweep.sizes[size_i], lr_mult)
    return run_rl(cfg, seed=seed, device=sweep.device, num_threads=1, warm=warm)


def execute_sweep(
    sweep: RLSweepConfig,
    *,
    scheduler: str = "",
    client=None,
    progress: bool = True,
    runs: RunCache | None = None,
) -> xr.Dataset:
    """Run every task of ``sweep`` and assemble the dataset.

    ``runs``: the sweep's per-run cache (:func:`scalinglab.sweeps.cached_sweep`); warm-ups
    and GRPO runs found there are not run again, new ones are stored as they finish.
    None: no caching. Main runs go variant by variant, seed by seed, so an interrupted
    sweep has whole seeds of the baseline at every size first.
    """
    from scalinglab.compute import get_client

    sweep = dataclasses.replace(sweep, device=resolve_device(sweep.device))
    names = [s.name for s in sweep.sizes]
    warm_seeds = sorted(set(sweep.seeds) | set(sweep.lr_seeds))
    warm_items = [(sweep, i, s) for i in range(len(sweep.sizes)) for s in warm_seeds]
    rl_keys = [
        (i, v, s)
        for v in sweep.variants
        for s in sweep.seeds
        for i in range(len(sweep.sizes))
        if names[i] in sweep.runs_at(v)
    ]
    own = client is None and scheduler != "sync"
    lr_results: dict = {}
    with get_client(scheduler) if own else contextlib.nullcontext(client) as cl:
        warms, wfail = map_runs(
            _warm_task,
            warm_items,
            runs=runs,
            scheduler=scheduler,
            client=cl,
            desc="warm-up",
            keys=[["warm-up", sweep.sizes[i].name, s] for _, i, s in warm_items],
            progress=progress,
        )
        warm_of = {
            (it[1], it[2]): w for it, w in zip(warm_items, warms, strict=True) if w is not None
        }
        werr = {(f.config[1], f.config[2]): f.error for f in wfail}
        mult = dict.fromkeys(range(len(sweep.sizes)), 1.0)
        if sweep.lr_grid:
            lr_items = [
                (sweep, i, m, s, warm_of[(i, s)])
                for i in range(len(sweep.sizes))
                for m in sweep.lr_grid
                for s in sweep.lr_seeds
                if (i, s) not in werr
            ]
            lr_runs, lr_fail = map_runs(
                _lr_task,
                lr_items,
                runs=runs,
                scheduler=scheduler,
                client=cl,
                desc="learning-rate stage",
                progress=progress,
                keys=[["lr", names[i], m, s] for _, i, m, s, _ in lr_items],
            )
            for f in lr_fail:
                print(
                    f"FAILED learning-rate run size={names[f.config[1]]} x{f.config[2]} "
                    f"seed={f.config[3]}: {f.error.strip().splitlines()[-1]}"
                )
            lr_results = {
                (it[1], it[2], it[3]): r
                for it, r in zip(lr_items, lr_runs, strict=True)
                if r is not None
            }
            mult = {i: select_lr(sweep, lr_results, i) for i in range(len(sweep.sizes))}
        todo = [
            (sweep, i, v, s, warm_of[(i, s)], mult[i]) for i, v, s in rl_keys if (i, s) not in werr
        ]
        tagged = bool(sweep.lr_grid)  # the key names the selected learning rate
        results_, rfail = map_runs(
            _rl_task,
            todo,
            runs=runs,
            scheduler=scheduler,
            client=cl,
            desc="GRPO runs",
            keys=[
                ["grpo", sweep.sizes[i].name, v, s, *([m] if tagged else [])]
                for _, i, v, s, _, m in todo
            ],
            progress=progress,
        )
    failed = {f.index for f in rfail}
    results = {
        (it[1], it[2], it[3]): r
        for n, (it, r) in enumerate(zip(todo, results_, strict=True))
        if n not in failed
    }
    errors = {
        (i, v, s): "warm-up failed:\n" + werr[(i, s)] for i, v, s in rl_keys if (i, s) in werr
    }
    errors.update({(f.config[1], f.config[2], f.config[3]): f.error for f in rfail})
    for (i, v, s), err in errors.items():
        print(
            f"FAILED run size={sweep.sizes[i].name} variant={v} seed={s}: "
            f"{err.strip().splitlines()[-1]}"
        )
    ds = to_dataset(sweep, results, errors, warm_of, lr_mult=mult)
    if sweep.lr_grid:
        ds = ds.merge(lr_stage_dataset(sweep, lr_results))
    return ds


def to_dataset(
    sweep: RLSweepConfig,
    results: dict,
    errors: dict,
    warms: dict,
    *,
    lr_mult: dict[int, float] | None = None,
) -> xr.Dataset:
    """Assemble runs into a Dataset (dims ``model_size, variant, seed, eval, step``).

    A run that stopped early (plateau rule) has NaN after its last evaluation and
    step; a (size, variant) the sweep does not run is ``status`` "skipped".

    Parameters
    ----------
    results
        ``(size_index, variant, seed) -> RunResult`` of the runs that finished.
    errors
        ``(size_index, variant, seed) -> traceback`` of the runs that failed.
    warms
        ``(size_index, seed) -> WarmStart`` (None where the warm-up failed).
    lr_mult
        ``size_index -> multiplier`` of the width rule's learning rate used (1).
    """
    lr_mult = lr_mult or {}
    names = [s.name for s in sweep.sizes]
    variants, seeds = list(sweep.variants), list(sweep.seeds)
    steps = sweep.grpo.steps
    ev_steps = sorted({0, *range(sweep.eval_every, steps + 1, sweep.eval_every), steps})
    shape = (len(names), len(variants), len(seeds))
    e, s_ = len(ev_steps), steps
    arr = {k: np.full((*shape, e), np.nan) for k in ("pass_rate", "flops", "wall_s")}
    per = {
        k: np.full((*shape, s_), np.nan)
        for k in ("train_reward", "mean_length", "clip_frac", "zero_adv_frac", "step_flops")
    }
    timing = {k: np.full(shape, np.nan) for k in ("rollout_s", "reward_s", "update_s", "eval_s")}
    status = np.full(shape, "failed", dtype=object)
    for j, v in enumerate(variants):
        for i, name in enumerate(names):
            if name not in sweep.runs_at(v):
                status[i, j] = "skipped"
    error = np.full(shape, "", dtype=object)
    stopped = np.zeros(shape, dtype=bool)
    for (i, v, s), r in results.items():
        j, k = variants.index(v), seeds.index(s)
        ne, ns = len(r.eval_step), len(r.step_flops)
        if list(r.eval_step) != ev_steps[:ne] or not (ne == e or sweep.plateau is not None):
            raise RuntimeError(f"eval schedule {list(r.eval_step)} != expected {ev_steps}")
        arr["pass_rate"][i, j, k, :ne], arr["flops"][i, j, k, :ne] = r.pass_rate, r.eval_flops
        arr["wall_s"][i, j, k, :ne] = r.eval_wall_s
        for name in per:
            per[name][i, j, k, :ns] = getattr(r, name)
        for name in timing:
            timing[name][i, j, k] = r.timing_s[name[:-2]]
        stopped[i, j, k] = getattr(r, "stopped_early", False)
        status[i, j, k] = "ok"
    for (i, v, s), err in errors.items():
        error[i, variants.index(v), seeds.index(s)] = err
    warm_vars = {
        k: np.full((len(names), len(seeds)), np.nan)
        for k in ("warmup_steps", "warmup_flops", "warmup_wall_s", "warmup_check")
    }
    for (i, s), w in warms.items():
        if w is not None:
            for k in warm_vars:
                warm_vars[k][i, seeds.index(s)] = getattr(w, k.removeprefix("warmup_"))
    cfgs = [
        sweep.run_config(sz, variants[0], lr_mult=lr_mult.get(i, 1.0))
        for i, sz in enumerate(sweep.sizes)
    ]
    run_dims, ev_dims = ("model_size", "variant", "seed"), ("model_size", "variant", "seed", "eval")
    ds = xr.Dataset(
        {
            "pass_rate": (ev_dims, arr["pass_rate"], {"long_name": "held-out pass rate (mean@k)"}),
            **{k: (("model_size", "variant", "seed", "step"), v) for k, v in per.items()},
            **{k: (run_dims, v) for k, v in timing.items()},
            **{k: (("model_size", "seed"), v) for k, v in warm_vars.items()},
            "status": (run_dims, status.astype(str)),
            "error": (run_dims, error.astype(str)),
            **({"stopped_early": (run_dims, stopped)} if sweep.plateau is not None else {}),
        },
        coords={
            "model_size": names,
            "variant": variants,
            "seed": seeds,
            "eval": np.arange(e),
            "step": np.arange(1, s_ + 1),
            "eval_step": ("eval", np.array(ev_steps)),
            "samples": (
                ("variant", "eval"),
                np.array(
                    [
                        [st * c.grpo.prompts_per_step * c.grpo.group_size for st in ev_steps]
                        for c in (sweep.run_config(sweep.sizes[0], v) for v in variants)
                    ]
                ),
                {"long_name": "completions sampled"},
            ),
            "flops": (ev_dims, arr["flops"], {"units": "FLOP", "long_name": "RL compute"}),
            "wall_s": (ev_dims, arr["wall_s"], {"units": "s"}),
            "n_params": ("model_size", [c.model.n_params() for c in cfgs]),
            "n_params_total": ("model_size", [c.model.n_params(non_embedding=False) for c in cfgs]),
            "d_model": ("model_size", [s.d_model for s in sweep.sizes]),
            "n_layer": ("model_size", [s.n_layer for s in sweep.sizes]),
            "lr": ("model_size", [c.grpo.lr for c in cfgs]),
            **(
                {
                    "lr_mult_selected": (
                        "model_size",
                        [lr_mult.get(i, 1.0) for i in range(len(names))],
                    )
                }
                if sweep.lr_grid
                else {}
            ),
            **(
                {
                    "prompt_pool": (
                        "variant",
                        [sweep.run_config(sweep.sizes[0], v).pool for v in variants],
                    ),
                    "gen_len": (
                        "variant",
                        [sweep.run_config(sweep.sizes[0], v).gen_len for v in variants],
                    ),
                }
                if sweep.plateau is not None or sweep.lr_grid
                else {}
            ),
            "variant_overrides": ("variant", [json.dumps(sweep.variants[v]) for v in variants]),
        },
        attrs={
            "study": STUDY,
            "compute_class": sweep.compute_class,
            "device": sweep.device,
            "n_failed": int((status == "failed").sum()),
            "engine_version": ENGINE_VERSION,
        },
    )
    return ds


def run_sweep(
    sweep: RLSweepConfig | str = "small",
    *,
    scheduler: str = "",
    client=None,
    rerun: bool = False,
    progress: bool = True,
) -> xr.Dataset:
    """The sweep's dataset, from ``data/rl_scaling/`` when its config is unchanged.

    Parameters
    ----------
    sweep
        A config or a compute-class name.
    scheduler, client
        Where tasks run (:func:`scalinglab.compute.get_client`): ``""`` a local
        cluster, ``"sync"`` in-process, or a scheduler address.
    rerun
        Recompute even when cached (runs of an interrupted attempt are still reused).

    Returns
    -------
    xarray.Dataset
        See :func:`to_dataset`; ``status``/``error`` say which runs failed.
    """
    if isinstance(sweep, str):
        sweep = sweep_config(sweep)
    sweep = dataclasses.replace(sweep, device=resolve_device(sweep.device))
    return cached_sweep(
        STUDY,
        f"grpo-{sweep.compute_class}",
        sweep.to_dict(),
        lambda runs: execute_sweep(
            sweep, scheduler=scheduler, client=client, progress=progress, runs=runs
        ),
        rerun=rerun,
    )


def rl_runs_folder(sweep: RLSweepConfig) -> Path:
    """Where the sweep keeps its finished runs while it runs
    (``data/rl_scaling/.runs/grpo-<class>-<hash>/``; gone once the combined Dataset exists)."""
    from scalinglab.compute import dataset_path
    from scalinglab.sweeps import RUNS_DIR

    sweep = dataclasses.replace(sweep, device=resolve_device(sweep.device))
    path = dataset_path(STUDY, f"grpo-{sweep.compute_class}", sweep.to_dict())
    return path.parent / RUNS_DIR / path.stem
