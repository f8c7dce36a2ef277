"""The optimizer-comparison sweep: tune every optimizer fairly, then train every cell.

Phases (each a batch of Dask tasks through :func:`scalinglab.compute.map_tasks`,
every task one :func:`~scalinglab.training.pretrain.run_pretrain` with
``num_threads=1``; the objective is the final held-out loss):

1. **Base tuning**: coordinate descent (:mod:`scalinglab.studies.optimizers.tuning`) per
   optimizer over its whole grid (:data:`~scalinglab.training.optimizers.OPTIMIZER_TABLE`)
   at the smallest size and ``tune_multiple``, seed ``tune_seed``; all optimizers
   in lockstep so each step is one batch of tasks.
2. **Re-tuning**: at every larger size (and at the smallest size for the other
   ``retune_multiples``) only ``retune_coords`` (learning rate, warmup) move, by a
   local walk along their grids (``neighborhood=1``) from the base optimum.
   A cell (size, multiple) takes the hyperparameters tuned at its size and the
   nearest re-tuned multiple (in log scale).
3. **Final runs**: every (optimizer, size, multiple, seed) with its tuned
   hyperparameters. A run already made during tuning (same config and seed) is
   reused, not recomputed.

Results: an xarray Dataset with dims ``optimizer, model_size, data_multiple, seed,
step`` (``step`` indexes the evaluation points; ``train_step`` and ``tokens_seen``
give their position), the tuned hyperparameters as variables over ``(optimizer,
model_size, data_multiple)``, timing per run, and the tuning path (dim
``evaluation``, variables ``tuning_*``). Cached under ``data/optimizer_comparison/``
by the hash of the sweep config (incl. the corpus hash and engine version) with
:func:`scalinglab.sweeps.cached_sweep`, which also keeps every finished run (tuning
and final) while the sweep runs: an interrupted sweep resumes run by run, its
coordinate descents replaying from the stored runs. A failed or diverged run is
kept, with its ``status`` and ``error``, never dropped.

Control arms (``medium``, and ``tiny`` for the tests; :mod:`.arms`): a hyperparameter
transfer arm (each optimizer with AdamW's tuned learning rate and weight decay) and a
constant-learning-rate schedule control, run in the same batch as the final runs.

Compute classes (:func:`~scalinglab.studies.optimizers.config.sweep_config`, re-exported
here with the config): ``tiny`` (tests, well under a minute),
``small`` (the default report on 2 CPU cores: three sizes of 3.4k, 13.9k and 25.2k
non-embedding parameters (7.5x), multiples 1, 2, 4, 8, six optimizers, three
seeds), ``medium`` (the redesign of issue #14: four sizes over 33x up to 222k, a
deduplicated corpus no run repeats, the paper's four optimizers, the control arms;
about 4 hours on 2 cores, resumable run by run) and ``large`` (GPU or cluster).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
from typing import Any

import numpy as np
import xarray as xr

from scalinglab.compute import resolve_device
from scalinglab.models.corpus import build_corpus
from scalinglab.studies.optimizers.arms import arm_dataset, arm_runs
from scalinglab.studies.optimizers.config import MEDIUM_SIZES as MEDIUM_SIZES
from scalinglab.studies.optimizers.config import PAPER_SUBSET as PAPER_SUBSET
from scalinglab.studies.optimizers.config import SizeSpec as SizeSpec
from scalinglab.studies.optimizers.config import SweepConfig as SweepConfig
from scalinglab.studies.optimizers.config import cell_hparams as cell_hparams
from scalinglab.studies.optimizers.config import check_corpus
from scalinglab.studies.optimizers.config import planned_epochs as planned_epochs
from scalinglab.studies.optimizers.config import sweep_config as sweep_config
from scalinglab.studies.optimizers.tuning import CoordinateDescent, descend_together, path_dataset
from scalinglab.sweeps import RunCache, cached_sweep, map_runs
from scalinglab.training.optimizers import OPTIMIZER_TABLE, default_hparams
from scalinglab.training.pretrain import (
    ENGINE_VERSION,
    PretrainConfig,
    PretrainResult,
    run_pretrain,
)

STUDY = "optimizer_comparison"


# --------------------------------------------------------------------------- tasks
def _run_task(item: tuple[PretrainConfig, int, str]) -> PretrainResult:
    cfg, seed, device = item
    return run_pretrain(cfg, seed=seed, device=device, num_threads=1)


class _Runner:
    """Runs pretraining tasks in batches and remembers every result by (config, seed).

    ``runs``: the sweep's per-run cache (runs found there are not run again).
    """

    def __init__(
        self,
        sweep: SweepConfig,
        client: Any,
        scheduler: str,
        progress: bool,
        runs: RunCache | None = None,
    ) -> None:
        self.sweep, self.client, self.scheduler, self.progress = sweep, client, scheduler, progress
        self.runs = runs
        self.results: dict[tuple[str, int], PretrainResult] = {}
        self.errors: dict[tuple[str, int], str] = {}
        self.tracker: Any = None  # protocol.SweepProgress: the whole sweep's progress and ETA
        self.reusable: dict[tuple[str, int], PretrainResult] = {}  # committed runs by key

    @staticmethod
    def key(cfg: PretrainConfig, seed: int) -> tuple[str, int]:
        return json.dumps(cfg.to_dict(), sort_keys=True, default=str), int(seed)

    def run(self, items: list[tuple[PretrainConfig, int]], desc: str) -> list[float]:
        todo, seen = [], set()
        for cfg, seed in items:
            k = self.key(cfg, seed)
            if k not in self.results and k in self.reusable:
                self.results[k] = self.reusable[k]  # a committed run with this very key
            if k not in self.results and k not in self.errors and k not in seen:
                seen.add(k)
                todo.append((cfg, seed, self.sweep.device))
        if todo:
            keys = [[*self.key(cfg, seed), device] for cfg, seed, device in todo]
            cached = [k for k in keys if self.runs is not None and self.runs.load(k)[0]]
            res, fails = map_runs(
                _run_task,
                todo,
                runs=self.runs,
                keys=keys,
                scheduler=self.scheduler,
                client=self.client,
                desc=desc,
                progress=self.progress,
            )
            failed = {f.index: f.error for f in fails}
            for i, (cfg, seed, _) in enumerate(todo):
                if i in failed:
                    self.errors[self.key(cfg, seed)] = failed[i]
                    print(
                        f"FAILED {cfg.optimizer} {cfg.data_multiple:g}x seed={seed}: "
                        f"{failed[i].strip().splitlines()[-1]}"
                    )
                else:
                    self.results[self.key(cfg, seed)] = res[i]
            if self.tracker is not None:
                hit = {json.dumps(k, default=str) for k in cached}
                was = [json.dumps(k, default=str) in hit for k in keys]
                self.tracker.update(
                    [t[0] for t, w in zip(todo, was, strict=True) if w],
                    [t[0] for t, w in zip(todo, was, strict=True) if not w],
                )
        out = []
        for cfg, seed in items:
            r = self.results.get(self.key(cfg, seed))
            out.append(math.inf if r is None or not math.isfinite(r.final_loss) else r.final_loss)
        return out


def _tune(sweep: SweepConfig, runner: _Runner) -> tuple[dict, list[CoordinateDescent]]:
    """Phases 1 and 2: ``{(optimizer, size_name, multiple): hparams}`` and every search."""
    small = sweep.sizes[0]
    base = {
        o: CoordinateDescent(
            grid=sweep.grid(o),
            start=default_hparams(o),
            tol=sweep.tune_tol,
            coords=sweep.tune_coords,
            max_rounds=sweep.tune_max_rounds,
            neighborhood=sweep.tune_neighborhood,
            extend=sweep.tune_extend,
            name=o,
            stage=f"base {small.name} {sweep.tune_multiple:g}x",
        )
        for o in sweep.optimizers
    }

    def evaluate(size: SizeSpec, mult: float, desc: str):
        def fn(batch):
            items = [
                (sweep.run_config(opt, size, mult, cfg), sweep.tune_seed) for opt, cfg in batch
            ]
            return runner.run(items, desc)

        return fn

    descend_together(base, evaluate(small, sweep.tune_multiple, "tuning"))
    tuned = {(o, small.name, sweep.tune_multiple): base[o].best for o in sweep.optimizers}
    searches = list(base.values())
    cells = [
        (sz, m)
        for sz in sweep.sizes
        for m in sweep.retune_multiples
        if (sz.name, m) != (small.name, sweep.tune_multiple)
    ]
    for sz, m in cells:  # one lockstep group per cell (its runs share a size and budget)
        group = {
            o: CoordinateDescent(
                grid=base[o].grid,
                start=base[o].best,
                tol=sweep.tune_tol,
                coords=sweep.retune_coords,
                neighborhood=1,
                extend=sweep.tune_extend,
                max_rounds=sweep.retune_max_rounds,
                name=o,
                stage=f"retune {sz.name} {m:g}x",
            )
            for o in sweep.optimizers
        }
        descend_together(group, evaluate(sz, m, f"re-tuning {sz.name} {m:g}x"))
        tuned.update({(o, sz.name, m): group[o].best for o in sweep.optimizers})
        searches.extend(group.values())
    return tuned, searches


def _tune_walks(sweep: SweepConfig, runner: _Runner) -> tuple[dict, list]:
    """The walk protocol (:mod:`.protocol`): objectives are means over ``tune_seeds``."""
    from scalinglab.studies.optimizers.protocol import tune_walks

    n = len(sweep.tune_seeds)

    def evaluate(size: SizeSpec, mult: float, desc: str):
        def fn(batch):
            items = [
                (sweep.run_config(opt, size, mult, cfg), s)
                for opt, cfg in batch
                for s in sweep.tune_seeds
            ]
            vals = runner.run(items, desc)
            return [float(np.mean(vals[i * n : (i + 1) * n])) for i in range(len(batch))]

        return fn

    return tune_walks(sweep, evaluate)


def execute_sweep(
    sweep: SweepConfig,
    *,
    scheduler: str = "",
    client: Any = None,
    progress: bool = True,
    runs: RunCache | None = None,
) -> xr.Dataset:
    """Run every phase of ``sweep`` and assemble the dataset (see :func:`to_dataset`).

    ``runs``: the sweep's per-run cache (:func:`scalinglab.sweeps.cached_sweep`); None:
    no caching.
    """
    from scalinglab.compute import get_client

    sweep = dataclasses.replace(sweep, device=resolve_device(sweep.device))
    check_corpus(sweep)
    own = client is None and scheduler != "sync"
    with get_client(scheduler) if own else contextlib.nullcontext(client) as cl:
        runner = _Runner(sweep, cl, scheduler, progress, runs)
        if sweep.tune_seeds and progress:
            from scalinglab.studies.optimizers.protocol import SweepProgress, committed_medium

            committed = committed_medium()
            if committed is not None:
                runner.tracker = SweepProgress(sweep, committed)
                from scalinglab.studies.optimizers.protocol import committed_results

                runner.reusable = committed_results(committed, sweep_config("medium"))
                print(f"{len(runner.reusable)} committed runs reusable where keys match")
        tuned, searches = _tune_walks(sweep, runner) if sweep.tune_seeds else _tune(sweep, runner)
        cells = [
            (o, sz, m, s)
            for o in sweep.optimizers
            for sz in sweep.sizes
            for m in sweep.multiples
            if sweep.runs_cell(o, sz.name, m)
            for s in sweep.seeds
        ]
        items = [
            (sweep.run_config(o, sz, m, cell_hparams(sweep, tuned, o, sz, m)), s)
            for o, sz, m, s in cells
        ]
        arms = [(cfg, s) for *_, s, cfg in arm_runs(sweep, tuned)]
        # longest first (a FLOP proxy), so the workers stay busy to the end
        todo = sorted(
            items + arms, key=lambda it: -it[0].steps * it[0].batch_size * it[0].model.n_params()
        )
        runner.run(todo, "final runs and controls" if arms else "final runs")
    return to_dataset(sweep, tuned, searches, runner)


def to_dataset(
    sweep: SweepConfig, tuned: dict, searches: list[CoordinateDescent], runner: _Runner
) -> xr.Dataset:
    """Assemble the final runs (dims ``optimizer, model_size, data_multiple, seed, step``)."""
    O_, S, M, R = sweep.optimizers, sweep.sizes, sweep.multiples, sweep.seeds
    E = sweep.n_evals
    run_shape = (len(O_), len(S), len(M), len(R))
    curve = {k: np.full((*run_shape, E), np.nan) for k in ("loss", "train_loss", "lr_factor")}
    per_run = {
        k: np.full(run_shape, np.nan)
        for k in (
            "final_loss",
            "seconds_per_step",
            "tokens_per_s",
            "train_seconds",
            "optimizer_state_bytes",
        )
    }
    status = np.full(run_shape, "failed", dtype=object)
    error = np.full(run_shape, "", dtype=object)
    cell_shape = (len(O_), len(S), len(M))
    hp_json = np.full(cell_shape, "", dtype=object)
    hp_num = {k: np.full(cell_shape, np.nan) for k in ("lr", "weight_decay", "warmup")}
    steps = np.zeros((len(S), len(M)), dtype=np.int64)
    tokens = np.zeros((len(S), len(M)), dtype=np.int64)
    train_step = np.full((len(S), len(M), E), -1, dtype=np.int64)
    for i, o in enumerate(O_):
        for j, sz in enumerate(S):
            for k, m in enumerate(M):
                hp = cell_hparams(sweep, tuned, o, sz, m)
                cfg = sweep.run_config(o, sz, m, hp)
                full = cfg.to_dict()["hparams"]
                hp_json[i, j, k] = json.dumps(full, sort_keys=True)
                for name in hp_num:
                    hp_num[name][i, j, k] = float(full[name])
                steps[j, k], tokens[j, k] = cfg.steps, cfg.steps * cfg.batch_size * cfg.seq_len
                ev = cfg.eval_steps
                train_step[j, k, : len(ev)] = ev
                if not sweep.runs_cell(o, sz.name, m):
                    status[i, j, k, :] = "skipped"  # left out by design (see the config)
                    continue
                for l_, s in enumerate(R):
                    key = runner.key(cfg, s)
                    if key in runner.errors:
                        error[i, j, k, l_] = runner.errors[key]
                        continue
                    r = runner.results[key]
                    n = len(r.eval_loss)
                    curve["loss"][i, j, k, l_, :n] = r.eval_loss
                    curve["train_loss"][i, j, k, l_, :n] = r.train_loss
                    curve["lr_factor"][i, j, k, l_, :n] = r.eval_lr
                    for name in per_run:
                        per_run[name][i, j, k, l_] = float(getattr(r, name))
                    status[i, j, k, l_] = r.status
    from scalinglab.cost_model import training_flops

    models = [sweep.run_config("adamw", sz, 1.0, {}).model for sz in S]
    n_params = np.array([mdl.n_params() for mdl in models])
    flops = np.array(
        [
            [
                training_flops(
                    n_params[j],
                    tokens[j, k],
                    n_layer=S[j].n_layer,
                    n_ctx=sweep.seq_len,
                    d_model=S[j].d_model,
                )
                for k in range(len(M))
            ]
            for j in range(len(S))
        ]
    )
    run_dims = ("optimizer", "model_size", "data_multiple", "seed")
    cell_dims = ("optimizer", "model_size", "data_multiple")
    corpus = build_corpus(sweep.corpus)
    ds = xr.Dataset(
        {
            "loss": (
                (*run_dims, "step"),
                curve["loss"],
                {"long_name": "held-out loss (nats/byte)"},
            ),
            "train_loss": ((*run_dims, "step"), curve["train_loss"]),
            "lr_factor": ((*run_dims, "step"), curve["lr_factor"]),
            **{k: (run_dims, v) for k, v in per_run.items()},
            "status": (run_dims, status.astype(str)),
            "error": (run_dims, error.astype(str)),
            "hparams": (cell_dims, hp_json.astype(str)),
            **{k: (cell_dims, v) for k, v in hp_num.items()},
        },
        coords={
            "optimizer": list(O_),
            "model_size": [s.name for s in S],
            "data_multiple": np.array(M, dtype=float),
            "seed": list(R),
            "step": np.arange(E),
            "family": ("optimizer", [OPTIMIZER_TABLE[o]["family"] for o in O_]),
            "n_params": ("model_size", n_params),
            "n_params_total": ("model_size", [mdl.n_params(non_embedding=False) for mdl in models]),
            "d_model": ("model_size", [s.d_model for s in S]),
            "n_layer": ("model_size", [s.n_layer for s in S]),
            "batch_size": ("model_size", [s.batch_size for s in S]),
            "steps": (("model_size", "data_multiple"), steps),
            "tokens": (("model_size", "data_multiple"), tokens),
            "flops": (("model_size", "data_multiple"), flops, {"units": "FLOP"}),
            "train_step": (("model_size", "data_multiple", "step"), train_step),
            "epochs": (
                ("model_size", "data_multiple"),
                planned_epochs(sweep),
                {"long_name": "passes over the training stream per run"},
            ),
            "tokens_seen": (
                ("model_size", "data_multiple", "step"),
                train_step * np.array([s.batch_size for s in S])[:, None, None] * sweep.seq_len,
            ),
        },
        attrs={
            "study": STUDY,
            "compute_class": sweep.compute_class,
            "device": sweep.device,
            "schedule": sweep.schedule,
            "tokens_per_param": sweep.tokens_per_param,
            "seq_len": sweep.seq_len,
            "engine_version": ENGINE_VERSION,
            "n_failed": int(((status != "ok") & (status != "skipped")).sum()),
            "n_skipped": int((status == "skipped").sum()),
            **corpus.describe(),
        },
    )
    path = path_dataset(searches).rename(
        {
            k: f"tuning_{k}"
            for k in (
                "search",
                "stage",
                "round",
                "coordinate",
                "value",
                "objective",
                "config",
                "decision",
                "incumbent",
            )
        }
    )
    warnings = [w for s in searches for w in s.edge_warnings()]
    ds.attrs["tuning_warnings"] = "\n".join(warnings)
    arms = arm_dataset(sweep, tuned, runner)
    if arms.data_vars:
        ds = ds.assign(arms.data_vars).assign_attrs(arms.attrs)
    if sweep.sampler != "uniform":
        ds.attrs["sampler"] = sweep.sampler
    return xr.merge([ds, path], combine_attrs="override")


def run_sweep(
    sweep: SweepConfig | str = "small",
    *,
    scheduler: str = "",
    client: Any = None,
    rerun: bool = False,
    progress: bool = True,
) -> xr.Dataset:
    """The sweep's dataset, from ``data/optimizer_comparison/`` when its config is unchanged.

    Parameters
    ----------
    sweep
        A config or a compute-class name.
    scheduler, client
        ``""`` a local cluster, ``"sync"`` in-process, or a scheduler address.
    rerun
        Recompute even when cached (runs of an interrupted attempt are still reused).
    """
    if isinstance(sweep, str):
        sweep = sweep_config(sweep)
    sweep = dataclasses.replace(sweep, device=resolve_device(sweep.device))
    return cached_sweep(
        STUDY,
        f"sweep-{sweep.compute_class}",
        sweep.to_dict(),
        lambda runs: execute_sweep(
            sweep, scheduler=scheduler, client=client, progress=progress, runs=runs
        ),
        rerun=rerun,
    )
