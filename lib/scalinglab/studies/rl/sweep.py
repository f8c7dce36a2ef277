"""The RL-scaling sweep: sizes x design variants x seeds, as Dask tasks, into xarray.

A sweep has two or three stages, each mapped with :func:`scalinglab.sweeps.map_runs`:

1. one warm-up per (model size, seed) (:func:`~scalinglab.studies.rl.run.warm_start`);
   with ``warm_starts`` (the ``v3`` design) one per (model size, warm start), and the
   ``seed`` of a main run is a run index over warm starts x RL seeds: every RL seed of
   a warm start starts from a copy of the same weights (coordinates ``warm_start`` and
   ``rl_seed`` of ``seed`` in the dataset);
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
:mod:`scalinglab.studies.rl.config`. ``python -m scalinglab.studies.rl.sweep v3`` prints
the budget and runs (or resumes) a sweep in this process with a progress bar and an ETA
(:func:`main`, :mod:`~scalinglab.studies.rl.sweep_tracker`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from scalinglab.compute import resolve_device, resolve_scheduler
from scalinglab.studies.rl.config import ENGINE_VERSION, STUDY, RLSweepConfig, sweep_config
from scalinglab.studies.rl.config import SizeSpec as SizeSpec  # pickled configs name it here
from scalinglab.studies.rl.lr_stage import lr_stage_dataset, select_lr
from scalinglab.studies.rl.run import RunResult, WarmStart, run_rl, warm_start
from scalinglab.sweeps import RunCache, cached_sweep, map_runs


@dataclasses.dataclass
class _Tracked:
    """A task function that tells a :class:`~.sweep_tracker.RunTracker` when each run ends
    (in-process runs only: ``scheduler="sync"``)."""

    fn: Callable[[Any], Any]
    stage: str
    tracker: Any

    def __call__(self, item: tuple) -> Any:
        t = time.perf_counter()
        out = self.fn(item)
        self.tracker.done(self.stage, item[0].sizes[item[1]].name, time.perf_counter() - t)
        return out


def _warm_task(item: tuple[RLSweepConfig, int, int]) -> WarmStart:
    sweep, size_i, seed = item
    cfg = sweep.run_config(sweep.sizes[size_i], next(iter(sweep.variants)))
    return warm_start(cfg, seed=seed, device=sweep.device, num_threads=1)


def _rl_task(item: tuple[RLSweepConfig, int, str, int, WarmStart, float]) -> RunResult:
    sweep, size_i, variant, seed, warm, lr_mult = item
    cfg = sweep.run_config(sweep.sizes[size_i], variant, lr_mult=lr_mult)
    return run_rl(cfg, seed=seed, device=sweep.device, num_threads=1, warm=warm)


def warm_task(item: tuple[RLSweepConfig, int, int]) -> WarmStart:
    """One warm-up as the sweep makes it: ``(sweep, size index, warm-start seed)``, one
    thread (the later seed blocks of :mod:`.extension_run` re-make theirs with it)."""
    return _warm_task(item)


def rl_task(item: tuple[RLSweepConfig, int, str, int, WarmStart, float]) -> RunResult:
    """One GRPO run as the sweep runs it: ``(sweep, size index, variant, seed, warm start,
    lr multiplier)``, one thread."""
    return _rl_task(item)


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
    tracker: Any = None,
    shard: tuple[int, int] | None = None,
) -> xr.Dataset:
    """Run every task of ``sweep`` and assemble the dataset.

    ``runs``: the sweep's per-run cache (:func:`scalinglab.sweeps.cached_sweep`); warm-ups
    and GRPO runs found there are not run again, new ones are stored as they finish.
    None: no caching. Main runs go variant by variant, seed by seed, so an interrupted
    sweep has whole seeds of the baseline at every size first; with ``warm_starts``
    (``v3``) variant by variant, size by size, so whole (size, variant) cells land first.
    ``tracker``: a :class:`~scalinglab.studies.rl.sweep_tracker.RunTracker` told of every
    planned run and of each as it ends (progress bar and ETA; ``scheduler="sync"``).
    ``shard=(k, n)``: only the main runs at positions ``k, k + n, ...`` of the order (the
    warm-ups all), so ``n`` processes sharing ``runs`` split the work; the Dataset then
    holds only those runs (the others read "failed"): assemble with a call without it.
    """
    from scalinglab.compute import get_client

    sweep = dataclasses.replace(sweep, device=resolve_device(sweep.device))
    names = [s.name for s in sweep.sizes]
    warm_seeds = sweep.warm_seeds()
    warm_items = [(sweep, i, s) for i in range(len(sweep.sizes)) for s in warm_seeds]
    if sweep.warm_starts:  # v3: whole (size, variant) cells first
        rl_keys = [
            (i, v, s)
            for v in sweep.variants
            for i in range(len(sweep.sizes))
            for s in sweep.seeds
            if names[i] in sweep.runs_at(v)
        ]
    else:
        rl_keys = [
            (i, v, s)
            for v in sweep.variants
            for s in sweep.seeds
            for i in range(len(sweep.sizes))
            if names[i] in sweep.runs_at(v)
        ]
    if shard is not None:
        k, n = shard
        if not 0 <= k < n:
            raise ValueError(f"execute_sweep: shard {k}/{n} needs 0 <= k < n")
        rl_keys = rl_keys[k::n]
    warm_keys = [["warm-up", sweep.sizes[i].name, s] for _, i, s in warm_items]
    warm_fn: Callable[[Any], Any] = _warm_task
    rl_fn: Callable[[Any], Any] = _rl_task
    if tracker is not None:
        if sweep.lr_grid:
            raise ValueError("execute_sweep: a tracker does not cover a learning-rate stage")
        if client is not None or resolve_scheduler(scheduler) != "sync":
            raise ValueError("execute_sweep: a tracker needs scheduler='sync' (runs in process)")
        cached = (
            (lambda k: runs.path(k).exists())
            if runs is not None and runs.enabled
            else (lambda k: False)
        )
        for (_, i, _), k in zip(warm_items, warm_keys, strict=True):
            tracker.add("warm-up", names[i], cached=cached(k))
        for i, v, s in rl_keys:
            tracker.add("GRPO", names[i], cached=cached(["grpo", names[i], v, s]))
        tracker.start()
        warm_fn, rl_fn = (
            _Tracked(_warm_task, "warm-up", tracker),
            _Tracked(_rl_task, "GRPO", tracker),
        )
    own = client is None and scheduler != "sync"
    lr_results: dict = {}
    with get_client(scheduler) if own else contextlib.nullcontext(client) as cl:
        warms, wfail = map_runs(
            warm_fn,
            warm_items,
            runs=runs,
            scheduler=scheduler,
            client=cl,
            desc="warm-up",
            keys=warm_keys,
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
            (sweep, i, v, s, warm_of[(i, sweep.warm_of(s))], mult[i])
            for i, v, s in rl_keys
            if (i, sweep.warm_of(s)) not in werr
        ]
        tagged = bool(sweep.lr_grid)  # the key names the selected learning rate
        results_, rfail = map_runs(
            rl_fn,
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
        (i, v, s): "warm-up failed:\n" + werr[(i, sweep.warm_of(s))]
        for i, v, s in rl_keys
        if (i, sweep.warm_of(s)) in werr
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
    for i in range(len(names)):
        for n_s, s in enumerate(seeds):
            w = warms.get((i, sweep.warm_of(s)))
            if w is not None:
                for k in warm_vars:
                    warm_vars[k][i, n_s] = getattr(w, k.removeprefix("warmup_"))
    cfgs = [
        sweep.run_config(sz, variants[0], lr_mult=lr_mult.get(i, 1.0))
        for i, sz in enumerate(sweep.sizes)
    ]
    run_dims, ev_dims = ("model_size", "variant", "seed"), ("model_size", "variant", "seed", "eval")
    v3_vars, v3_coords, v3_attrs = (
        _warm_start_layout(sweep, arr["pass_rate"]) if sweep.warm_starts else ({}, {}, {})
    )
    ds = xr.Dataset(
        {
            **v3_vars,
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
            **v3_coords,
        },
        attrs={
            "study": STUDY,
            "compute_class": sweep.compute_class,
            "device": sweep.device,
            "n_failed": int((status == "failed").sum()),
            "engine_version": ENGINE_VERSION,
            **v3_attrs,
        },
    )
    return ds


def _warm_start_layout(sweep: RLSweepConfig, pass_rate: np.ndarray) -> tuple[dict, dict, dict]:
    """The ``v3`` layout's extras: ``r0`` (model_size, seed), the pass rate each run's
    warm start reaches on the held-out set before RL (the first evaluation of a run
    without a length cap: the same for both RL seeds of a warm start, as the evaluation
    seed is shared); coordinates ``warm_start(seed)``, ``rl_seed(seed)`` and, per
    variant, ``cap_share`` and the measured shares of held-out and RL prompts the
    length cap binds (``cap_binds_heldout``, ``cap_binds_train``)."""
    from scalinglab.studies.rl.run import problem_sets
    from scalinglab.studies.rl.tasks import cap_binds

    variants = list(sweep.variants)
    plain = [j for j, v in enumerate(variants) if not sweep.variants[v].get("cap_share")]
    first = pass_rate[..., 0][:, plain, :]  # (model_size, plain variant, seed)
    r0 = np.full((first.shape[0], first.shape[2]), np.nan)
    for j in reversed(range(first.shape[1])):  # the first variant that ran wins
        r0 = np.where(np.isfinite(first[:, j]), first[:, j], r0)
    sets = problem_sets(sweep.run_config(sweep.sizes[0], variants[0]))
    share = [float(sweep.variants[v].get("cap_share", 0.0)) for v in variants]
    binds = {
        name: [float(cap_binds(sets[name], share=c).mean()) for c in share]
        for name in ("heldout", "train")
    }
    seeds = list(sweep.seeds)
    return (
        {"r0": (("model_size", "seed"), r0, {"long_name": "held-out pass rate of the warm start"})},
        {
            "warm_start": ("seed", [sweep.warm_of(s) for s in seeds]),
            "rl_seed": ("seed", [sweep.rl_seed_of(s) for s in seeds]),
            "cap_share": ("variant", share),
            "cap_binds_heldout": ("variant", binds["heldout"]),
            "cap_binds_train": ("variant", binds["train"]),
        },
        {
            "warm_starts": sweep.warm_starts,
            "rl_seeds": sweep.rl_seeds,
            "eval_seed": -1 if sweep.eval_seed is None else sweep.eval_seed,
        },
    )


def run_sweep(
    sweep: RLSweepConfig | str = "small",
    *,
    scheduler: str = "",
    client=None,
    rerun: bool = False,
    progress: bool = True,
    tracker: Any = None,
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
    tracker
        A :class:`~scalinglab.studies.rl.sweep_tracker.RunTracker` (progress bar and ETA of
        the runs still to do; ``scheduler="sync"``).

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
            sweep, scheduler=scheduler, client=client, progress=progress, runs=runs, tracker=tracker
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


def finished_run_files(sweep: RLSweepConfig, *, stage: str = "grpo") -> list[Path]:
    """Stored files of the sweep's finished runs of ``stage`` ("grpo" or "warm-up"),
    while the sweep runs (to commit them as they land: the GRPO runs are small, a
    warm-up holds its policy's weights)."""
    runs = RunCache(rl_runs_folder(sweep))
    names = [s.name for s in sweep.sizes]
    if stage == "warm-up":
        keys = [["warm-up", n, w] for n in names for w in sweep.warm_seeds()]
    else:
        keys = [
            ["grpo", n, v, s] for v in sweep.variants for n in sweep.runs_at(v) for s in sweep.seeds
        ]
    return [p for k in keys if (p := runs.path(k)).exists()]


def main(argv: list[str] | None = None) -> None:
    """``python -m scalinglab.studies.rl.sweep v3``: print the budget, then run (or resume)
    the sweep in this process, one run at a time, with a progress bar and an ETA."""
    import argparse
    import sys

    from scalinglab.compute import dataset_path
    from scalinglab.studies.rl.budget import costs_from_runs, estimate_sweep
    from scalinglab.studies.rl.sweep_tracker import RunTracker

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("compute_class")
    ap.add_argument(
        "--costs-from",
        default="medium",
        help="compute class whose committed dataset's recorded timings price the runs",
    )
    ap.add_argument("--list-runs", action="store_true", help="print finished GRPO run files")
    ap.add_argument(
        "--shard",
        default="",
        help="K/N: run only every N-th main run from the K-th (N processes share the "
        "work; a call without --shard then assembles the Dataset)",
    )
    args = ap.parse_args(argv)
    sweep = dataclasses.replace(sweep_config(args.compute_class), device="cpu")
    if args.list_runs:
        print("\n".join(str(p) for p in finished_run_files(sweep)))
        return
    src = sweep_config(args.costs_from)
    with xr.open_dataset(
        dataset_path(STUDY, f"grpo-{src.compute_class}", src.to_dict()), engine="h5netcdf"
    ) as ds:
        costs = costs_from_runs(ds.load())
    est = estimate_sweep(sweep, costs, workers=1)
    print(
        f"budget of {args.compute_class} ({costs['source']}): {est['tasks']} tasks, "
        f"{est['core_s']['total'] / 3600:.2f} core-hours, "
        + ", ".join(f"{k} {v / 3600:.2f} h" for k, v in est["core_s"].items() if k != "total")
        + f"; runs folder {rl_runs_folder(sweep)}",
        file=sys.stderr,
        flush=True,
    )
    tracker = RunTracker(sweep, costs)
    if args.shard:
        k, n = (int(x) for x in args.shard.split("/"))
        execute_sweep(
            sweep,
            scheduler="sync",
            progress=False,
            runs=RunCache(rl_runs_folder(sweep)),
            tracker=tracker,
            shard=(k, n),
        )
        print(f"shard {k}/{n} done; run without --shard to assemble", file=sys.stderr)
        return
    run_sweep(sweep, scheduler="sync", tracker=tracker, progress=False)


if __name__ == "__main__":
    main()
