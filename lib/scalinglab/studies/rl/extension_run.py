"""Run the ``v3`` seed extension (:mod:`.extension`, :mod:`.second_stage`, then
:mod:`.third_stage`) run by run:
resumable, progress and ETA.

.. code-block:: bash

    cd <repo> && PYTHONPATH=$PWD/lib setsid nohup nice -n 19 \\
        python -m scalinglab.studies.rl.extension_run run >> rl-ext-sweep.log 2>&1 &
    # on two cores: the warm-ups first, then two processes sharing the runs
    python -m scalinglab.studies.rl.extension_run run --max-runs 0
    python -m scalinglab.studies.rl.extension_run run --part 0/2 >> rl-ext-0.log 2>&1 &
    python -m scalinglab.studies.rl.extension_run run --part 1/2 >> rl-ext-1.log 2>&1 &
    python -m scalinglab.studies.rl.extension_run status      # runs done per cell, folders
    python -m scalinglab.studies.rl.extension_run list-runs   # files to commit (git add -f)

One worker (one torch thread), in this process. First the blocks' warm-ups (each re-made
from its seed and checked against the warm-up step and check pass rate the base design
recorded for that warm start: a mismatch stops the runner, as the runs would not start
from the same policies), then the GRPO runs cell by cell in :data:`.extension.ORDER`.
Each finished warm-up and run is stored at once in its block's run folder
(``data/rl_scaling/.runs/grpo-v3-ext-<size>-<hash>/``, with ``provenance.json`` of the
commit it started from and ``device.json`` of the machine), so a restart resumes where it
stopped; a run that raises is logged and retried on the next start. Each finished run
logs its seconds against the estimate and the ETA (:class:`.sweep_tracker.RunTracker`,
priced from the base design's recorded timings). When every run of a block is stored,
``run`` assembles the block's Dataset (``data/rl_scaling/grpo-v3-ext-<size>-<hash>.nc``)
and the run folder is removed (commit the ``.nc``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import xarray as xr

from scalinglab.compute import dataset_path
from scalinglab.studies.rl import extension, third_stage
from scalinglab.studies.rl.config import STUDY, RLSweepConfig, sweep_config
from scalinglab.sweeps import RUNS_DIR, RunCache, cached_sweep

#: Beside a block's run pickles: the machine that trained them.
DEVICE_INFO = "device.json"


def block_name(name: str) -> str:
    """The stored name of block ``name`` (``ext-l`` -> ``grpo-v3-ext-l``)."""
    return f"grpo-{extension.BASE}-{name}"


def block_path(name: str, block: RLSweepConfig) -> Path:
    """The block's Dataset file ``data/rl_scaling/grpo-v3-<name>-<hash>.nc``."""
    return dataset_path(STUDY, block_name(name), block.to_dict())


def runs_folder(name: str, block: RLSweepConfig) -> Path:
    """The block's per-run cache folder (while it runs)."""
    path = block_path(name, block)
    return path.parent / RUNS_DIR / path.stem


def base_dataset(base: RLSweepConfig | None = None) -> xr.Dataset:
    """The stored Dataset of the base design (never trained here)."""
    base = sweep_config(extension.BASE) if base is None else base
    path = dataset_path(STUDY, f"grpo-{base.compute_class}", base.to_dict())
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        return ds.load()


def _device_info() -> dict:
    import torch

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu_count": os.cpu_count(),
        "host": platform.node(),
        "machine": platform.machine(),
    }


def check_warm(base_ds: xr.Dataset, size: str, warm: int, got) -> None:
    """Raise ``RuntimeError`` unless the re-made warm start ``warm`` at ``size`` took the
    warm-up steps and reached the check pass rate the base design recorded. A new base
    model (:mod:`.third_stage`: a warm start the base design never made) has no record
    to match; the recipe that stopped it is the base design's."""
    seeds = base_ds.seed.values[base_ds.warm_start.values == warm]
    if seeds.size == 0:
        return
    rec = base_ds.sel(model_size=size, seed=seeds[0])
    want = (int(rec.warmup_steps), float(rec.warmup_check))
    if (int(got.steps), float(got.check)) != want:
        raise RuntimeError(
            f"warm start {warm} at {size}: re-made with {got.steps} steps and check "
            f"{got.check:.6f}, the base design recorded {want[0]} steps and {want[1]:.6f}; "
            "the extension's runs would not start from the same policy"
        )


def _plan(blocks: dict[str, RLSweepConfig]) -> list[tuple[str, str, int]]:
    """(block name, variant, seed) of every GRPO run. The first stage's blocks (the
    leading blocks that run both :data:`.extension.ARMS`, their sizes in the order of
    :data:`.extension.EXTRA_RUNS`) go cell by cell in :data:`.extension.ORDER`; every
    later block (:mod:`.second_stage`, :mod:`.third_stage`) follows, variant by variant."""
    names = list(blocks)
    k = 0
    while k < min(len(names), len(extension.EXTRA_RUNS)) and (
        tuple(blocks[names[k]].variants) == extension.ARMS
    ):
        k += 1
    first = dict(zip(extension.EXTRA_RUNS, names[:k], strict=False))
    plan = [
        (first[size], v, s)
        for v, size in extension.ORDER
        if size in first
        for s in blocks[first[size]].seeds
    ]
    for n in names[k:]:
        plan += [(n, v, s) for v in blocks[n].variants for s in blocks[n].seeds]
    return plan


def run_extension(
    blocks: dict[str, RLSweepConfig] | None = None,
    *,
    base_ds: xr.Dataset | None = None,
    costs: dict | None = None,
    file=None,
    max_runs: int | None = None,
    part: tuple[int, int] = (0, 1),
) -> int:
    """Train the extension's missing warm-ups and runs (one at a time, each stored at
    once), then assemble each complete block. Returns the number of runs still missing
    (of this part).

    ``max_runs``: stop after that many GRPO runs (0: the warm-ups only). ``costs``: the
    tracker's price list (default: :func:`.budget.costs_from_runs` of ``base_ds``).
    ``part``: ``(i, n)`` runs every n-th missing run from the i-th, so n processes share
    the runs (each run is stored by one of them); only part 0 makes warm-ups, so make
    them first (``max_runs=0``) before starting the other parts.
    """
    i_part, n_parts = part
    if not 0 <= i_part < n_parts:
        raise ValueError(f"run_extension: part {i_part}/{n_parts} is not one of 0..{n_parts - 1}")
    from scalinglab.studies.rl.budget import costs_from_runs
    from scalinglab.studies.rl.sweep import rl_task, warm_task
    from scalinglab.studies.rl.sweep_tracker import RunTracker

    blocks = third_stage.design_blocks() if blocks is None else blocks
    base_ds = base_dataset() if base_ds is None else base_ds
    costs = costs_from_runs(base_ds) if costs is None else costs
    caches = {}
    for n, b in blocks.items():
        caches[n] = RunCache(runs_folder(n, b))
        if block_path(n, b).exists():
            continue
        caches[n].provenance(b.to_dict())  # kept from the first start of the block
        folder = runs_folder(n, b)
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / DEVICE_INFO).exists():
            (folder / DEVICE_INFO).write_text(json.dumps(_device_info(), sort_keys=True))
    first = next(iter(blocks.values()))
    tracker = RunTracker(first, costs, file=file, bar=False)
    todo_warm = []
    for n, b in blocks.items():
        size = b.sizes[0].name
        for w in b.warm_seeds():
            cached = block_path(n, b).exists() or caches[n].path(["warm-up", size, w]).exists()
            tracker.add("warm-up", size, cached=cached)
            if not cached and i_part == 0:
                todo_warm.append((n, w))
    plan = [
        (n, v, s)
        for n, v, s in _plan(blocks)
        if not block_path(n, blocks[n]).exists()
        and not caches[n].path(["grpo", blocks[n].sizes[0].name, v, s]).exists()
    ][i_part::n_parts]
    for n, _v, _s in plan[:max_runs]:
        tracker.add("GRPO", blocks[n].sizes[0].name, cached=False)
    tracker.start()
    for n, w in todo_warm:
        b, size = blocks[n], blocks[n].sizes[0].name
        t = time.perf_counter()
        warm = warm_task((b, 0, w))
        check_warm(base_ds, size, w, warm)
        caches[n].save(["warm-up", size, w], warm)
        tracker.done("warm-up", size, time.perf_counter() - t)
    missing = len(plan)
    for n, v, s in plan[:max_runs]:
        b, size = blocks[n], blocks[n].sizes[0].name
        hit, warm = caches[n].load(["warm-up", size, b.warm_of(s)])
        if not hit:
            raise RuntimeError(
                f"{n}: warm start {b.warm_of(s)} at {size} is not stored (part 0 makes the "
                "warm-ups: run it first with --max-runs 0)"
            )
        t = time.perf_counter()
        try:
            res = rl_task((b, 0, v, s, warm, 1.0))
        except Exception:  # logged; retried on the next start
            print(f"FAILED {n} {v} seed {s}:\n{traceback.format_exc()}", file=file, flush=True)
            continue
        caches[n].save(["grpo", size, v, s], res)
        missing -= 1
        tracker.done("GRPO", size, time.perf_counter() - t)
        print(
            f"stored {n} {v} seed {s} (warm {b.warm_of(s)}, RL seed {b.rl_seed_of(s)}): "
            f"last pass rate {res.pass_rate[-1]:.3f}, peak {np.max(res.pass_rate):.3f}",
            file=file,
            flush=True,
        )
    for n, b in blocks.items():
        if not block_path(n, b).exists() and all(
            caches[n].path(["grpo", b.sizes[0].name, v, s]).exists()
            for v in b.variants
            for s in b.seeds
        ):
            assemble(n, b)
            print(f"assembled {block_path(n, b)}", file=file, flush=True)
    return missing


def assemble(name: str, block: RLSweepConfig) -> xr.Dataset:
    """The block's Dataset from its stored runs (saved with the provenance of its start;
    the run folder removed), as :func:`.sweep.run_sweep` would assemble it."""
    from scalinglab.studies.rl.sweep import execute_sweep

    folder = runs_folder(name, block)
    info = folder / DEVICE_INFO
    machine = info.read_text() if info.exists() else ""

    def execute(runs: RunCache) -> xr.Dataset:
        ds = execute_sweep(block, scheduler="sync", progress=False, runs=runs)
        if machine:
            ds.attrs["train_machine"] = machine
        return ds

    return cached_sweep(STUDY, block_name(name), block.to_dict(), execute)


def status_lines(blocks: dict[str, RLSweepConfig] | None = None) -> list[str]:
    """Per block: stored Dataset or runs done per arm, and its run folder."""
    blocks = third_stage.design_blocks() if blocks is None else blocks
    out = []
    for n, b in blocks.items():
        size = b.sizes[0].name
        if block_path(n, b).exists():
            out.append(f"{n}: complete, {block_path(n, b)}")
            continue
        cache = RunCache(runs_folder(n, b))
        done = {
            v: sum(cache.path(["grpo", size, v, s]).exists() for s in b.seeds) for v in b.variants
        }
        warm = sum(cache.path(["warm-up", size, w]).exists() for w in b.warm_seeds())
        arms = ", ".join(f"{v} {k} of {len(b.seeds)}" for v, k in done.items())
        out.append(f"{n}: warm-ups {warm} of {b.warm_starts}, runs {arms}; {runs_folder(n, b)}")
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m scalinglab.studies.rl.extension_run {run,status,list-runs}``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("run", "status", "list-runs"))
    ap.add_argument(
        "--part", default="0/1", help="i/n: this process runs every n-th run from the i-th"
    )
    ap.add_argument(
        "--max-runs", type=int, default=None, help="stop after this many runs (0: warm-ups only)"
    )
    args = ap.parse_args(argv)
    try:
        i_part, n_parts = (int(x) for x in args.part.split("/"))
    except ValueError:
        ap.error(f"--part {args.part!r}: expected i/n, e.g. 0/2")
    if not 0 <= i_part < n_parts:
        ap.error(f"--part {args.part!r}: i must be one of 0..n-1")
    blocks = third_stage.design_blocks()
    if args.command == "status":
        print("\n".join(status_lines(blocks)))
        return
    if args.command == "list-runs":
        for n, b in blocks.items():
            folder = runs_folder(n, b)
            if folder.is_dir():
                print("\n".join(str(p) for p in sorted(folder.iterdir())))
            elif block_path(n, b).exists():
                print(block_path(n, b))
        return
    base = base_dataset()
    hours = extension.planned_core_hours(base)
    print(
        "v3 seed extension: "
        + ", ".join(f"{n} seeds {b.seeds[0]}-{b.seeds[-1]}" for n, b in blocks.items())
        + "; first stage planned "
        + ", ".join(f"{k} {v:.2f} core-h" for k, v in hours.items()),
        file=sys.stderr,
        flush=True,
    )
    left = run_extension(
        blocks, base_ds=base, file=sys.stderr, max_runs=args.max_runs, part=(i_part, n_parts)
    )
    print(f"extension: {left} runs still missing", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
