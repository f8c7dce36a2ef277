"""The long design (:func:`~scalinglab.studies.sparsity.config.long_configs`), run and cached.

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
clock at every checkpoint.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import pickle
import platform
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import xarray as xr

from scalinglab.compute import dataset_path, resolve_device
from scalinglab.errors import ParameterError
from scalinglab.models import corpus as corpus_mod
from scalinglab.paths import repo_root
from scalinglab.studies.sparsity import stacked, sweep, sweep_dataset
from scalinglab.studies.sparsity.config import (
    STUDY,
    SparsitySweepConfig,
    long_configs,
    long_extra_configs,
    long_horizons,
    plateau_looks,
)
from scalinglab.sweeps import RUNS_DIR, RunCache, cached_sweep
from scalinglab.sweeps import join_seed_blocks as join_blocks

#: File beside a run folder's pickles describing the machine that trained them.
DEVICE_INFO = "device.json"
_MODULE = "scalinglab.studies.sparsity.long_runs"


def sweep_key(cfg: SparsitySweepConfig) -> dict:
    """The cache key of ``cfg`` (as :func:`~scalinglab.studies.sparsity.sweep.run_sweep`)."""
    return {**cfg.to_dict(), "corpus_hash": sweep.build_corpus(cfg.corpus).content_hash}


def runs_folder(cfg: SparsitySweepConfig) -> Path:
    """The per-run cache folder of ``cfg``'s sweep."""
    path = dataset_path(STUDY, f"sweep-{cfg.compute_class}", sweep_key(cfg))
    return path.parent / RUNS_DIR / path.stem


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


def cached_block(
    cfg: SparsitySweepConfig, *, devices: tuple[str, ...] = ("cpu", "cuda")
) -> xr.Dataset | None:
    """The cached Dataset of one block of the design trained on any of ``devices`` (in
    order; ``cfg`` with its ``device`` replaced by each), or None. Never trains."""
    from scalinglab.compute import load_dataset

    for device in devices:
        c = dataclasses.replace(cfg, device=device)
        key = sweep_key(c)
        ds = load_dataset(dataset_path(STUDY, f"sweep-{c.compute_class}", key), key)
        if ds is not None:
            return ds
    return None


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
    a size's later seed block (:func:`~scalinglab.studies.sparsity.config.long_extra_configs`)
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
    (:attr:`~scalinglab.studies.sparsity.config.LongHorizon.previous`), when that one is
    cached; its Dataset then carries ``design_tokens_per_param`` (the horizon not yet
    trained), so a reading can say so. A size read at its design horizon carries
    ``plateau_looks`` (:func:`~scalinglab.studies.sparsity.config.plateau_looks`): the looks
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


def join_seed_blocks(first: xr.Dataset, later: xr.Dataset) -> xr.Dataset:
    """One size's seed blocks as one Dataset (concatenated along ``seed``,
    :func:`scalinglab.sweeps.join_seed_blocks`).

    The first block's attrs are kept; ``seed_blocks`` records every block's seeds,
    config hash and training machine (JSON), so each seed's provenance stays readable.
    """
    return join_block_datasets({"first": first, "later": later})


def join_block_datasets(blocks: dict[str, xr.Dataset]) -> xr.Dataset:
    """Seed blocks ``{block name: Dataset}``, in order, as one Dataset
    (:func:`scalinglab.sweeps.join_seed_blocks`; ``seed_blocks`` records every block's
    seeds, config hash, training machine and commit)."""
    return join_blocks(blocks, info=_block_info)


def _block_info(name: str, ds: xr.Dataset) -> dict:
    return {
        "seeds": [int(v) for v in ds["seed"].values],
        "config_hash": ds.attrs.get("config_hash"),
        "train_machine": ds.attrs.get("train_machine"),
        "git_commit": ds.attrs.get("git_commit"),
    }


# ----------------------------------------------------------------------------- elsewhere
def export_corpus(compute_class: str, path: Path) -> None:
    """Pickle the design's corpus (as this Python builds it) for another machine."""
    (cfg, *_) = long_configs(compute_class).values()  # every size shares it
    c = sweep.build_corpus(cfg.corpus)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb", compresslevel=6) as fh:
        pickle.dump(c, fh, protocol=pickle.HIGHEST_PROTOCOL)


def use_corpus(path: Path) -> None:
    """Make every builder in this process return the pickled corpus for its config."""
    with gzip.open(path, "rb") as fh:
        stored = pickle.load(fh)

    def build(config: corpus_mod.CorpusConfig | None = None):
        config = corpus_mod.CorpusConfig() if config is None else config
        if config != stored.config:
            raise ValueError(f"{path} holds the corpus of {stored.config}, not {config}")
        return stored

    for mod in (sweep, stacked, sweep_dataset, corpus_mod):
        mod.build_corpus = build  # type: ignore[attr-defined]


def _device_info() -> dict:
    import torch

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda_device": torch.cuda.get_device_name() if torch.cuda.is_available() else "",
        "cpu_count": os.cpu_count(),
        "host": platform.node(),
    }


def check_graph(device: str = "cuda", *, steps: int = 40, tol: float = 1e-3) -> bool:
    """Whether the CUDA-graph training step matches the eager one on ``device``.

    Trains the tiny long design's model ``s`` (ReLU, 2 seeds, ``steps`` steps) both ways
    and compares every checkpoint's training and held-out loss (largest absolute
    difference at most ``tol``); prints the differences.
    """
    cfg = long_configs("tiny")["size-s"]
    cfg = dataclasses.replace(
        cfg, device=device, tokens=steps * cfg.batch_size * cfg.seq_len, n_checkpoints=3
    )
    runs = [
        stacked.train_stacked(cfg, cfg.models[0], "relu", (0, 1), cuda_graph=g)
        for g in (False, True)
    ]
    diffs = []
    for s in (0, 1):
        a, b = runs[0][s], runs[1][s]
        if isinstance(a, str) or isinstance(b, str):
            print(f"graph check: a run failed: {a if isinstance(a, str) else b}", flush=True)
            return False
        diffs += [abs(a.train_loss - b.train_loss).max(), abs(a.loss - b.loss).max()]
    worst = float(max(diffs))
    print(f"graph check: largest |eager - graph| loss difference {worst:.2e}", flush=True)
    return worst <= tol


#: Seconds before a device call's deadline at which its groups stop and save their state.
_SAVE_MARGIN_S = 25.0


def run_device(
    compute_class: str,
    corpus: Path,
    out: Path,
    *,
    deadline_s: float,
    device: str = "cuda",
    sizes: tuple[str, ...] = (),
    later: bool = False,
    with_later: bool = False,
) -> int:
    """Every (size, activation) group in its own process; stop them at ``deadline_s``.

    ``sizes`` (e.g. ``("size-m",)``) limits it to those sizes (default: every size);
    ``later`` trains the sizes' later seed blocks (:func:`long_extra_configs`) instead;
    ``with_later`` trains each size's first and later blocks in one stack per activation
    (``train_group``'s ``also``: each block still cached and assembled on its own).
    Each group stops :data:`_SAVE_MARGIN_S` before the deadline and saves its state in
    its run folder (it travels in the tar), so the next call resumes it.

    The CUDA-graph step is checked against the eager one first
    (:func:`check_graph`, on the tiny corpus); the groups use it only when they agree.

    Finished runs are in the run folders; those folders and the groups' logs are tarred to
    ``out/long-runs.tar.gz`` (paths relative to the repository root). Returns the number
    of groups that did not finish.
    """
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    graph_ok = check_graph() if resolve_device("auto").startswith("cuda") else False
    print(f"graph check done at {time.time() - t0:.0f} s: use graphs {graph_ok}", flush=True)
    use_corpus(corpus)
    root = repo_root()
    procs, folders = [], []
    extra = design_blocks(compute_class, device=device, later=True) if with_later else {}
    for name, cfg in design_blocks(compute_class, device=device, sizes=sizes, later=later).items():
        info = {**_device_info(), "cuda_graph": graph_ok}
        for block in (cfg, extra[name]) if name in extra else (cfg,):
            folder = runs_folder(block)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / DEVICE_INFO).write_text(json.dumps(info, sort_keys=True))
            folders.append(folder)
        for a in cfg.activations:
            log = runs_folder(cfg) / f"log-{a}.txt"
            cmd = [sys.executable, "-m", _MODULE, "group", "--class", compute_class]
            cmd += ["--size", name, "--activation", a, "--corpus", str(corpus)]
            cmd += ["--device", device]
            cmd += [] if graph_ok else ["--no-graph"]
            cmd += ["--later"] if later else []
            cmd += ["--with-later"] if name in extra else []
            cmd += ["--stop-at", f"{t0 + deadline_s - _SAVE_MARGIN_S:.0f}"]
            env = {**os.environ, "OMP_NUM_THREADS": "1"}
            procs.append(
                (
                    f"{name}/{a}",
                    subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env),
                )
            )
    unfinished = 0
    for label, p in procs:
        try:
            p.wait(timeout=max(1.0, deadline_s - (time.time() - t0)))
            print(f"{label}: exit {p.returncode} at {time.time() - t0:.0f} s", flush=True)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            unfinished += 1
            print(f"{label}: stopped at the deadline ({deadline_s:.0f} s)", flush=True)
    with tarfile.open(out / "long-runs.tar.gz", "w:gz") as tar:
        for folder in folders:
            tar.add(folder, arcname=str(folder.relative_to(root)))
    for folder in folders:
        for log in sorted(folder.glob("log-*.txt")):
            lines = log.read_text().splitlines()
            print(f"== {log.relative_to(root)}", *lines[-6:], sep="\n")
    return unfinished


def design_blocks(
    compute_class: str, *, device: str = "cuda", sizes: tuple[str, ...] = (), later: bool = False
) -> dict[str, SparsitySweepConfig]:
    """The design's configs by size (``sizes`` only, when given), first or later blocks.

    Raises :class:`~scalinglab.errors.ParameterError` (a ``ValueError``) naming the sizes the block has when one of ``sizes`` is not
    among them.
    """
    configs = (long_extra_configs if later else long_configs)(compute_class, device=device)
    unknown = [s for s in sizes if s not in configs]
    if unknown:
        block = "later seed blocks" if later else "sizes"
        raise ParameterError(
            f"the {compute_class} long design has no {unknown}: its {block} are {list(configs)}"
        )
    return {n: c for n, c in configs.items() if not sizes or n in sizes}


def make_bundle(compute_class: str, dest: Path, *, device: str = "cuda") -> None:
    """What another machine needs to train the design, in ``dest`` (a repository root there).

    ``dest/lib/scalinglab`` (this package), ``dest/.device/corpus-<class>.pkl.gz`` and the
    tiny one (:func:`export_corpus`; the graph check's corpus is built there), and each
    size's (and later seed block's) run folder ``dest/data/sparsity_laws/.runs/<name>-<hash>/`` holding the
    provenance of *this* checkout (code and commit), which the assembled Dataset keeps.
    """
    import shutil

    from scalinglab.provenance import provenance_attrs

    if (dest / "lib").exists():
        shutil.rmtree(dest / "lib")
    shutil.copytree(
        repo_root() / "lib" / "scalinglab",
        dest / "lib" / "scalinglab",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    export_corpus(compute_class, dest / ".device" / f"corpus-{compute_class}.pkl.gz")
    blocks = [*long_configs(compute_class, device=device).values()]
    blocks += long_extra_configs(compute_class, device=device).values()
    for cfg in blocks:
        key = sweep_key(cfg)
        folder = dest / runs_folder(cfg).relative_to(repo_root())
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "provenance.json").write_text(json.dumps(provenance_attrs(key), sort_keys=True))


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
        export_corpus(args.compute_class, args.path)
    elif args.cmd == "bundle":
        make_bundle(args.compute_class, args.dest, device=args.device)
    elif args.cmd == "device":
        return run_device(
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
            use_corpus(args.corpus)
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
        from scalinglab.studies.sparsity import wd_runs

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
