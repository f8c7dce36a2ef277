"""The long design (:func:`~scalinglab.studies.sparsity.long_config.long_configs`), run and cached.

Every size of the design is a sweep of its own, cached by
:func:`scalinglab.sweeps.cached_sweep` as ``data/sparsity_laws/sweep-<class>-long-<model>-<hash>.nc``
with its per-run cache (``data/sparsity_laws/.runs/...``, keyed ``[model, activation,
seed]`` as :func:`~scalinglab.studies.sparsity.sweep.execute_sweep` keys them), so it
resumes run by run. A (size, activation) group's missing seeds are trained together
(:func:`~scalinglab.studies.sparsity.stacked.train_stacked`).

On this machine (CPU, each run a task on a local Dask cluster, resumable):

.. code-block:: bash

    nice -n 19 python -m scalinglab.studies.sparsity.long_runs run --class small
    # one size only (size xs, the design's CPU size; sizes cached from a GPU are read)
    nice -n 19 python -m scalinglab.studies.sparsity.long_runs run --class small --size size-xs

On a machine with a GPU but another Python (whose standard library, hence corpus,
differs), the runs are trained from a bundle made here (the package, the corpus as this
Python builds it, the provenance of this checkout):

.. code-block:: bash

    # here: into a folder that travels to the GPU machine
    python -m scalinglab.studies.sparsity.long_runs bundle --device cuda DEST
    # there, in DEST: the graph check, then every (size, activation) group in its own
    # process, stopping at a deadline; finished runs and logs are tarred to OUT
    PYTHONPATH=lib python3 -m scalinglab.studies.sparsity.long_runs device \
        --corpus .device/corpus-small.pkl.gz --out "$OUT" --deadline 330
    # or one size, its later seed block in the same stack (K seeds cost about what 1 does)
    PYTHONPATH=lib python3 -m scalinglab.studies.sparsity.long_runs device \
        --corpus .device/corpus-small.pkl.gz --out "$OUT" --size size-m --with-later \
        --deadline 565
    # here: unpack the tar at the repository root, then assemble (no training)
    python -m scalinglab.studies.sparsity.long_runs run --device cuda

A group still training 25 s before the deadline saves its state in its run folder and
exits; the next ``device`` call, with that folder carried, resumes it
(``stacked.train_stacked``'s ``state_path``). ``--size size-m`` limits a call to one size,
``--later`` trains the sizes' later seed blocks.

Each group prints its step, its training and wall ms per step, a wall-time ETA and the
clock at every checkpoint. The lent machine's side (bundle, graph check, deadline) is in
:mod:`~scalinglab.studies.sparsity.device_runs`; the width-depth families are run by
:mod:`~scalinglab.studies.sparsity.wd_runs` (``run --design wd`` or ``wd16``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import xarray as xr

from scalinglab.compute import resolve_device
from scalinglab.errors import ParameterError
from scalinglab.studies.sparsity import device_runs, stacked, sweep, sweep_dataset, wd_runs
from scalinglab.studies.sparsity.config import STUDY, SparsitySweepConfig
from scalinglab.studies.sparsity.long_blocks import (
    DEVICE_INFO,
    cached_block,
    design_blocks,
    join_seed_blocks,
    runs_folder,
    sweep_key,
)
from scalinglab.studies.sparsity.long_config import (
    long_configs,
    long_extra_configs,
    long_horizons,
    plateau_looks,
)
from scalinglab.sweeps import RunCache, cached_sweep


def train_group(
    cfg: SparsitySweepConfig,
    activation: str,
    *,
    runs: RunCache,
    progress: bool = True,
    cuda_graph: bool = True,
    stop_at: float | None = None,
    also: tuple[tuple[SparsitySweepConfig, RunCache], ...] = (),
) -> list[str]:
    """Train the seeds of ``cfg``'s single model with ``activation`` not yet in ``runs``.

    Returns the error messages of failed seeds (the others are stored in ``runs``). With
    ``stop_at`` (a ``time.time()``), the group stops there and saves its state in the run
    folder (:func:`state_file`), returning one message saying so; the next call resumes.

    ``also`` holds other seed blocks of the same size (``(config, its RunCache)``, each
    ``cfg`` with other ``seeds``, e.g. :func:`long_extra_configs`): their missing seeds
    join the same stack (on a GPU K seeds cost about what one does) and each seed's run
    is stored in its own block's cache, so every block keeps its key and provenance.
    """
    (spec,) = cfg.models
    blocks = ((cfg, runs), *also)
    for other, _ in also:
        if dataclasses.replace(other, seeds=cfg.seeds) != cfg:
            raise ValueError(f"a block trained with {spec.name} differs beyond its seeds")
    home: dict[int, RunCache] = {}
    for block_cfg, block_runs in blocks:
        for s in block_cfg.seeds:
            if s in home:
                raise ValueError(f"seed {s} is in two blocks of {spec.name}")
            if not block_runs.load([spec.name, activation, s])[0]:
                home[s] = block_runs
    todo = tuple(home)
    if not todo:
        return []
    path = state_file(runs, activation, todo)
    try:
        out = stacked.train_stacked(
            cfg,
            spec,
            activation,
            todo,
            progress=progress,
            cuda_graph=cuda_graph,
            state_path=path,
            stop_at=stop_at,
        )
    except stacked.Stopped as stop:
        return [f"{spec.name}/{activation}: {stop}"]
    errors = []
    for s, res in out.items():
        if isinstance(res, str):
            errors.append(res)
        else:
            home[s].save([spec.name, activation, s], res)
    if path is not None:
        path.unlink(missing_ok=True)
    return errors


def state_file(runs: RunCache, activation: str, seeds: tuple[int, ...]) -> Path | None:
    """Where a (size, activation) group's stopped state is kept: its run folder."""
    if runs.folder is None:
        return None
    return runs.folder / f"state-{activation}-seeds{'-'.join(map(str, seeds))}.pt"


def execute_stacked(
    cfg: SparsitySweepConfig, runs: RunCache, *, progress: bool = True
) -> xr.Dataset:
    """Every run of ``cfg`` (one model) from ``runs``, training the missing ones stacked."""
    errors: dict = {}
    for a in cfg.activations:
        for msg in train_group(cfg, a, runs=runs, progress=progress):
            seed = int(msg.split("/seed")[1].split(":")[0])
            errors[(0, a, seed)] = msg
    done = {}
    for a in cfg.activations:
        for s in cfg.seeds:
            hit, value = runs.load([cfg.models[0].name, a, s])
            if hit:
                done[(0, a, s)] = value
    ds = sweep_dataset.to_dataset(cfg, done, errors)
    info = runs.folder / DEVICE_INFO if runs.folder is not None else None
    ds.attrs["train_engine"] = "stacked seeds (torch.func.vmap), studies.sparsity.stacked"
    if info is not None and info.exists():
        ds.attrs["train_machine"] = info.read_text()
    return ds


def run_long(
    compute_class: str = "small",
    *,
    device: str = "cpu",
    scheduler: str = "",
    rerun: bool = False,
    progress: bool = True,
    sizes: tuple[str, ...] = (),
    devices: tuple[str, ...] = ("cpu", "cuda"),
) -> dict[str, xr.Dataset]:
    """The long design's Datasets, ``{"size-<model>": Dataset}``, cached (resumable);
    a size's later seed block (:func:`~scalinglab.studies.sparsity.long_config.long_extra_configs`)
    as ``"size-<model>/later"``, a Dataset of its own.

    A block already cached for any of ``devices`` (:func:`cached_block`: e.g. s and m,
    trained on a lent GPU, when this call trains on the CPU) is read, never retrained
    (unless ``rerun``). A size whose Dataset is not cached trains its missing runs here:
    on the CPU as tasks of :func:`~scalinglab.studies.sparsity.sweep.run_sweep`
    (``scheduler`` as there), on a GPU stacked by (size, activation). Sizes in order,
    smallest first, each saved as soon as its runs are done. ``sizes`` (e.g.
    ``("size-xs",)``) limits the call to those sizes (both their blocks).

    Raises
    ------
    ParameterError
        One of ``sizes`` is not a size of the design (a ``ValueError``).
    """
    out = {}
    design_blocks(compute_class, device=device, sizes=sizes)  # unknown sizes raise here
    blocks = list(long_configs(compute_class, device=device).items())
    blocks += [
        (f"{n}/later", c) for n, c in long_extra_configs(compute_class, device=device).items()
    ]
    for name, cfg in blocks:
        if sizes and name.split("/")[0] not in sizes:
            continue
        if not rerun:
            found = cached_block(cfg, devices=devices)
            if found is not None:
                out[name] = found
                continue
        cfg = dataclasses.replace(cfg, device=resolve_device(cfg.device))
        if cfg.device == "cpu":
            out[name] = sweep.run_sweep(cfg, scheduler=scheduler, rerun=rerun, progress=progress)
            continue

        def execute(runs: RunCache, cfg: SparsitySweepConfig = cfg) -> xr.Dataset:
            return execute_stacked(cfg, runs, progress=progress)

        out[name] = cached_sweep(
            STUDY, f"sweep-{cfg.compute_class}", sweep_key(cfg), execute, rerun=rerun
        )
    return out


def cached_long(
    compute_class: str = "small", *, devices: tuple[str, ...] = ("cpu", "cuda")
) -> dict[str, xr.Dataset]:
    """The long design's Datasets that are cached (never trains; may be empty).

    A config's ``device`` is in its cache key, so each size is looked up once per device
    in ``devices``, in order, and the first cached one is kept: a design trained on a GPU
    (committed from a lent machine) is read as well as one trained here. A size whose
    design horizon has no cached first block is read at the horizon it extends
    (:attr:`~scalinglab.studies.sparsity.long_config.LongHorizon.previous`), when that one is
    cached; its Dataset then carries ``design_tokens_per_param`` (the horizon not yet
    trained), so a reading can say so. A size read at its design horizon carries
    ``plateau_looks`` (:func:`~scalinglab.studies.sparsity.long_config.plateau_looks`): the looks
    its limit rule is corrected over.
    """

    def find(configs: dict[str, SparsitySweepConfig]) -> dict[str, xr.Dataset]:
        found = {name: cached_block(cfg, devices=devices) for name, cfg in configs.items()}
        return {name: ds for name, ds in found.items() if ds is not None}

    def read(previous: bool) -> dict[str, xr.Dataset]:
        out = find(long_configs(compute_class, previous=previous))
        later = find(long_extra_configs(compute_class, previous=previous))
        for name, extra in later.items():
            if name in out:
                out[name] = join_seed_blocks(out[name], extra)
        return out

    out = read(previous=False)
    design = long_configs(compute_class)
    looks = plateau_looks(compute_class)  # by model name
    for name, ds in out.items():
        ds.attrs["plateau_looks"] = looks.get(design[name].models[0].name, 1)
    horizons = long_horizons(compute_class)  # by model name
    for name, ds in read(previous=True).items():
        if name not in out:
            ds.attrs["design_tokens_per_param"] = round(horizons[design[name].models[0].name])
            out[name] = ds
    return {name: out[name] for name in design if name in out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scalinglab.studies.sparsity.long_runs")
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export-corpus", help="pickle the design's corpus for another machine")
    e.add_argument("path", type=Path)
    d = sub.add_parser("device", help="train every group in parallel until a deadline")
    d.add_argument("--corpus", type=Path, required=True)
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--deadline", type=float, default=330.0, help="seconds")
    d.add_argument("--size", action="append", default=[], help="only this size (repeatable)")
    d.add_argument("--later", action="store_true", help="the sizes' later seed blocks")
    d.add_argument("--with-later", action="store_true", help="first and later blocks in one stack")
    g = sub.add_parser("group", help="train one (size, activation) group's missing seeds")
    g.add_argument("--size", required=True)
    g.add_argument("--activation", required=True)
    g.add_argument("--corpus", type=Path)
    g.add_argument("--no-graph", action="store_true", help="train eagerly on a GPU")
    g.add_argument("--later", action="store_true", help="the size's later seed block")
    g.add_argument("--with-later", action="store_true", help="its later block in the stack")
    g.add_argument("--stop-at", type=float, default=None, help="time.time() to stop and save")
    r = sub.add_parser("run", help="train the missing runs here and save the Datasets")
    r.add_argument("--scheduler", default="", help="'' a local cluster, 'sync' in-process")
    r.add_argument("--size", action="append", default=[], help="only this size (repeatable)")
    r.add_argument(
        "--design",
        choices=("sizes", "wd", "wd16"),
        default="sizes",
        help="the sizes (default) or a width-depth family: at 8000 (its --size: wd-u2, "
        "wd-u4) or at 16000 (wd16-u4, wd16-xs; with --seed)",
    )
    r.add_argument(
        "--seed",
        type=int,
        action="append",
        default=[],
        help="--design wd16: this seed only (repeatable; trained in the order given)",
    )
    b = sub.add_parser("bundle", help="the package, corpus and provenance for another machine")
    b.add_argument("dest", type=Path)
    for p in (e, d, g, b, r):
        p.add_argument("--class", dest="compute_class", default="small")
        p.add_argument("--device", default="cuda" if p in (d, g, b) else "cpu")
    args = ap.parse_args(argv)
    try:
        return _command(args)
    except ParameterError as err:  # an unknown size or shape: said, no traceback
        print(f"{ap.prog} {args.cmd}: error: {err}", file=sys.stderr)
        return 2


def _command(args: argparse.Namespace) -> int:
    """Run one parsed command of :func:`main`."""
    if args.cmd == "export-corpus":
        device_runs.export_corpus(args.compute_class, args.path)
    elif args.cmd == "bundle":
        device_runs.make_bundle(args.compute_class, args.dest, device=args.device)
    elif args.cmd == "device":
        return device_runs.run_device(
            args.compute_class,
            args.corpus,
            args.out,
            deadline_s=args.deadline,
            device=args.device,
            sizes=tuple(args.size),
            later=args.later,
            with_later=args.with_later,
        )
    elif args.cmd == "group":
        import torch

        torch.set_num_threads(1)
        if args.corpus:
            device_runs.use_corpus(args.corpus)
        blocks = design_blocks(
            args.compute_class, device=args.device, sizes=(args.size,), later=args.later
        )
        cfg = blocks[args.size]
        also: tuple[tuple[SparsitySweepConfig, RunCache], ...] = ()
        if args.with_later:
            extra = design_blocks(args.compute_class, device=args.device, later=True)
            if args.size in extra:
                also = ((extra[args.size], RunCache(runs_folder(extra[args.size]))),)
        errors = train_group(
            cfg,
            args.activation,
            runs=RunCache(runs_folder(cfg)),
            cuda_graph=not args.no_graph,
            stop_at=args.stop_at,
            also=also,
        )
        print(*errors, sep="\n")
        return 1 if errors else 0
    else:
        if args.seed and args.design != "wd16":
            raise ParameterError("--seed chooses runs of the width-depth family at 16000 only")
        if args.design == "wd16":
            runs = wd_runs.run_long_wd16(
                args.compute_class,
                scheduler=args.scheduler,
                shapes=tuple(args.size),
                seeds=tuple(args.seed),
            )
            found = {f"{shape}/seed-{sd}": ds for (shape, sd), ds in runs.items()}
        elif args.design == "wd":
            found = wd_runs.run_long_wd(
                args.compute_class, scheduler=args.scheduler, shapes=tuple(args.size)
            )
        else:
            found = run_long(
                args.compute_class,
                device=args.device,
                scheduler=args.scheduler,
                sizes=tuple(args.size),
            )
        for name, ds in found.items():
            print(name, ds.attrs.get("config_hash"), int(ds.attrs.get("n_failed", -1)), "failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
