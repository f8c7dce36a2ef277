"""The long design trained on a machine lent elsewhere (a GPU with another Python).

Its standard library, hence the corpus, differs from this machine's, so the runs are
trained from a bundle made here (:func:`make_bundle`: the package, the corpus as this
Python builds it, :func:`export_corpus`, and this checkout's provenance in each block's
run folder). There, :func:`run_device` checks the CUDA-graph step against the eager one
(:func:`check_graph`) and trains every (size, activation) group in its own process
(``long_runs group``) until a deadline, tarring finished runs and logs; a group still
training near the deadline saves its state, and the next call resumes it. Back here,
``long_runs run --device cuda`` assembles the Datasets and trains nothing. The commands
are in :mod:`~scalinglab.studies.sparsity.long_runs`.
"""

from __future__ import annotations

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

from scalinglab.compute import resolve_device
from scalinglab.models import corpus as corpus_mod
from scalinglab.paths import repo_root
from scalinglab.studies.sparsity import stacked, sweep, sweep_dataset
from scalinglab.studies.sparsity.long_blocks import (
    DEVICE_INFO,
    design_blocks,
    runs_folder,
    sweep_key,
)
from scalinglab.studies.sparsity.long_config import long_configs, long_extra_configs

#: The module whose ``group`` command a device call starts per (size, activation).
MODULE = "scalinglab.studies.sparsity.long_runs"


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
            cmd = [sys.executable, "-m", MODULE, "group", "--class", compute_class]
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
