"""The walk protocol of the ``matched`` sweep: every optimizer tuned to an interior optimum.

A sweep whose config names ``tune_seeds`` is tuned by walks
(:mod:`scalinglab.studies.optimizers.walk`) instead of the capped coordinate descent of
:func:`scalinglab.studies.optimizers.sweep._tune`. The objective of a configuration is
its mean final held-out loss over the tuning seeds (never an evaluation seed); every
walk ends with its optimum strictly inside the values it tried, or is flagged. AdamW
goes first at every cell, because under ``embed_head="adamw"`` every other optimizer's
embeddings, head and norms are trained by AdamW at AdamW's tuned settings of that cell.

Phases (each a lockstep of searches, AdamW alone first, then the others together):

A. **Learning rate per size** at ``tune_multiple``, sizes in increasing order, each
   walk starting from the previous size's optimum (the first from ``walk_start``).
B. **Every coordinate at the largest size**: ``lr`` and ``final_coords[optimizer]``
   (beta1, beta2, weight decay, warmup; Muon's momentum for its betas) by coordinate
   descent of walks, at most ``walk_max_passes`` passes.
C. **Learning rate again at the smaller sizes** with the largest size's other settings
   (from phase A's optimum: free when phase B moved nothing but the learning rate).
D. **Learning rate per budget** (``budget_retune``): at those (size, multiple) cells,
   from the size's ``tune_multiple`` optimum, for every optimizer that runs the cell.

:func:`plan` lists the tuning walks and final runs of the design and
:func:`estimate_seconds` prices them from a committed dataset's measured run times;
:class:`SweepProgress` prints the whole sweep's progress and ETA after every batch.

Run ``python -m scalinglab.studies.optimizers.matched`` to print the estimate,
``... --run`` to run (or resume) the sweep (:mod:`.matched`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from scalinglab.studies.optimizers.config import WALK_LIMITS, SizeSpec, SweepConfig
from scalinglab.studies.optimizers.walk import Ladder, WalkDescent, lr_ladder
from scalinglab.training.optimizers import default_hparams


def embed_head(sweep: SweepConfig, adamw_hp: dict[str, Any] | None) -> dict[str, Any]:
    """The embedding/head keys of a non-AdamW optimizer at a cell (``{}`` without the rule)."""
    if sweep.embed_head != "adamw" or adamw_hp is None:
        return {}
    return {
        "eh_lr": adamw_hp["lr"],
        "eh_beta1": adamw_hp["beta1"],
        "eh_beta2": adamw_hp["beta2"],
        "eh_weight_decay": adamw_hp["weight_decay"],
    }


def _ladders(sweep: SweepConfig, optimizer: str, start: dict, coords: tuple[str, ...]) -> dict:
    table = sweep.ladders()
    out: dict[str, Ladder] = {}
    for c in coords:
        if c == "lr":
            out[c] = lr_ladder(float(start["lr"]), sweep.walk_lr_factor)
        else:
            values = tuple(sorted({*table[c], start[c]}))
            ends = (values[0], values[-1])
            limits = tuple(v for v in WALK_LIMITS.get(c, ()) if v in ends)
            out[c] = Ladder(values, limits=limits)
    return out


def tune_walks(
    sweep: SweepConfig, evaluate: Callable[[SizeSpec, float, str], Callable[[list], list[float]]]
) -> tuple[dict, list[WalkDescent]]:
    """Phases A-D: ``{(optimizer, size_name, multiple): hparams}`` and every search.

    ``evaluate(size, multiple, desc)`` returns the batch objective for
    :func:`~scalinglab.studies.optimizers.tuning.descend_together`: ``[(optimizer,
    config), ...] -> [mean final loss over the tuning seeds, ...]``.
    """
    from scalinglab.studies.optimizers.tuning import descend_together

    opts = sweep.optimizers
    others = [o for o in opts if o != "adamw"]
    m1 = sweep.tune_multiple
    big = sweep.sizes[-1]
    tuned: dict[tuple[str, str, float], dict[str, Any]] = {}
    searches: list[WalkDescent] = []

    def run(
        size: SizeSpec,
        m: float,
        starts: dict[str, dict[str, Any]],
        coords: Mapping[str, tuple[str, ...]],
        stage: str,
    ) -> None:
        for group in (["adamw"], others):
            group = [o for o in group if o in starts and sweep.runs_cell(o, size.name, m)]
            if not group:
                continue
            eh = embed_head(sweep, tuned.get(("adamw", size.name, m)))
            walks = {}
            for o in group:
                start = {**starts[o], **(eh if o != "adamw" else {})}
                walks[o] = WalkDescent(
                    _ladders(sweep, o, start, coords[o]),
                    start,
                    max_evals=sweep.walk_max_evals,
                    max_passes=sweep.walk_max_passes,
                    name=o,
                    stage=stage,
                )
            descend_together(walks, evaluate(size, m, f"{stage}: {', '.join(group)}"))
            for o, w in walks.items():
                tuned[(o, size.name, m)] = w.best
                searches.append(w)

    lr_only = {o: ("lr",) for o in opts}
    prev = {o: {**default_hparams(o), **sweep.walk_start.get(o, {})} for o in opts}
    for sz in sweep.sizes:  # A
        run(sz, m1, prev, lr_only, f"A lr {sz.name} {m1:g}x")
        prev = {o: tuned[(o, sz.name, m1)] for o in opts}
    full = {o: ("lr", *sweep.final_coords.get(o, ())) for o in opts}
    run(big, m1, prev, full, f"B all {big.name} {m1:g}x")  # B
    final = {o: tuned[(o, big.name, m1)] for o in opts}
    for sz in sweep.sizes[:-1]:  # C
        starts = {o: {**final[o], "lr": tuned[(o, sz.name, m1)]["lr"]} for o in opts}
        run(sz, m1, starts, lr_only, f"C lr {sz.name} {m1:g}x")
    for name, mults in sweep.budget_retune.items():  # D
        sz = next(s for s in sweep.sizes if s.name == name)
        for m in mults:
            if m == m1:
                continue
            starts = {o: tuned[(o, name, m1)] for o in opts}
            run(sz, m, starts, lr_only, f"D lr {name} {m:g}x")
    return tuned, searches


# ------------------------------------------------------------------------------ cost
#: Evaluations a walk is assumed to make (start, both neighbours, one step on): the
#: estimate's one assumption about adaptive tuning; phase B adds ``2`` per coordinate
#: and pass, phase C only where phase B moved a setting (assumed: half the optimizers).
WALK_EVALS = 4


def plan(sweep: SweepConfig) -> list[dict[str, Any]]:
    """Every planned run of the design, tuning runs estimated: one row per kind of run.

    Returns
    -------
    list of dict
        ``{"phase", "optimizer", "size", "multiple", "runs"}``; ``runs`` may be
        fractional (an expected count of tuning runs).
    """
    rows: list[dict[str, Any]] = []

    def add(phase: str, o: str, size: str, m: float, runs: float) -> None:
        rows.append({"phase": phase, "optimizer": o, "size": size, "multiple": m, "runs": runs})

    n_t = len(sweep.tune_seeds)
    m1 = sweep.tune_multiple
    big = sweep.sizes[-1].name
    for o in sweep.optimizers:
        for sz in sweep.sizes:
            add("A", o, sz.name, m1, WALK_EVALS * n_t)
            if sz.name != big:
                add("C", o, sz.name, m1, 0.5 * (WALK_EVALS - 1) * n_t)
        k = len(sweep.final_coords.get(o, ()))
        add("B", o, big, m1, 1.5 * (2 * k + 1) * n_t)
        for name, mults in sweep.budget_retune.items():
            for m in mults:
                if m != m1 and sweep.runs_cell(o, name, m):
                    add("D", o, name, m, WALK_EVALS * n_t)
        for sz in sweep.sizes:
            for m in sweep.multiples:
                if sweep.runs_cell(o, sz.name, m):
                    add("final", o, sz.name, m, len(sweep.seeds))
    for o in sweep.optimizers:  # control arms, as :func:`.arms.arm_runs` makes them
        for sz in sweep.sizes:
            for m in sweep.data_multiples:
                if not sweep.runs_cell(o, sz.name, m):
                    continue
                n = 0
                if o != "adamw" and sz.name in sweep.transfer_sizes:
                    n += len(sweep.seeds)
                if sz.name in sweep.control_sizes and m in sweep.control_multiples:
                    n += len(sweep.seeds)
                if n:
                    add("arms", o, sz.name, m, n)
    return rows


def seconds_per_token(committed: xr.Dataset, sweep: SweepConfig) -> dict[tuple[str, str], float]:
    """Training seconds per token of each (optimizer, size) of ``sweep``, from ``committed``.

    Measured: the committed runs' median ``train_seconds / tokens`` (all multiples and
    seeds). A size of ``sweep`` the committed dataset lacks is interpolated (or
    extrapolated) as a power law in non-embedding parameters between the two nearest
    committed sizes; an optimizer it lacks takes AdamW's (the paper's NAdamW costs what
    AdamW costs: one more multiply-add per element).
    """
    per = (committed.train_seconds / committed.tokens).median("seed")
    per = per.median("data_multiple")  # (optimizer, model_size)
    n_c = committed.n_params.values.astype(float)
    out = {}
    for sz in sweep.sizes:
        n = float(sweep.run_config("adamw", sz, 1.0, {}).model.n_params())
        for o in sweep.optimizers:
            src = o if o in committed.optimizer.values else "adamw"
            y = per.sel(optimizer=src).values.astype(float)
            ok = np.isfinite(y)
            xs, ys = np.log(n_c[ok]), np.log(y[ok])
            i = int(np.clip(np.searchsorted(xs, math.log(n)), 1, len(xs) - 1))
            slope = (ys[i] - ys[i - 1]) / (xs[i] - xs[i - 1])
            out[(o, sz.name)] = float(math.exp(ys[i - 1] + slope * (math.log(n) - xs[i - 1])))
    return out


def estimate_seconds(sweep: SweepConfig, committed: xr.Dataset) -> dict[str, Any]:
    """Core-seconds of the design by phase, priced by :func:`seconds_per_token`.

    Evaluation passes are left out (under 15% of a run at the smallest size, 2% at the
    largest); the committed timings were taken on a machine shared with other work, so
    the estimate is pessimistic for idle cores.
    """
    spt = seconds_per_token(committed, sweep)
    by_phase: dict[str, float] = {}
    runs: dict[str, float] = {}
    for r in plan(sweep):
        sz = next(s for s in sweep.sizes if s.name == r["size"])
        cfg = sweep.run_config("adamw", sz, r["multiple"], {})
        tokens = cfg.steps * sz.batch_size * sweep.seq_len
        sec = r["runs"] * tokens * spt[(r["optimizer"], r["size"])]
        by_phase[r["phase"]] = by_phase.get(r["phase"], 0.0) + sec
        runs[r["phase"]] = runs.get(r["phase"], 0.0) + r["runs"]
    total = sum(by_phase.values())
    return {
        "core_seconds": by_phase,
        "runs": runs,
        "total_core_hours": total / 3600,
        "hours_on_2_cores": total / 3600 / 2,
    }


def committed_medium() -> xr.Dataset | None:
    """The committed ``medium`` dataset (the timings the estimate is priced from), or None."""
    from scalinglab.studies.optimizers.config import sweep_config
    from scalinglab.sweeps import dataset_path

    path = dataset_path("optimizer_comparison", "sweep-medium", sweep_config("medium").to_dict())
    return xr.open_dataset(path) if path.exists() else None


def committed_results(committed: xr.Dataset, sweep: SweepConfig) -> dict[tuple[str, int], Any]:
    """The finished final runs of a committed dataset, by run key, as ``PretrainResult``.

    ``sweep`` is the config the dataset was made with. A new sweep that asks for a run
    with the same key (same :class:`~scalinglab.training.pretrain.PretrainConfig` and seed)
    takes it from here instead of training it again (in the ``matched`` design: AdamW at
    w32 and w48, where the batch is unchanged, when its tuned settings land on the
    committed ones). The arms are not reused.
    """
    from scalinglab.training.pretrain import PretrainResult

    out: dict[tuple[str, int], Any] = {}
    sizes = {s.name: s for s in sweep.sizes}
    for o in committed.optimizer.values:
        for size in committed.model_size.values:
            for m in committed.data_multiple.values:
                cell = committed.sel(optimizer=o, model_size=size, data_multiple=m)
                hp = json.loads(str(cell.hparams.values))
                cfg = sweep.run_config(str(o), sizes[str(size)], float(m), hp)
                ev = cell.train_step.values
                n = int((ev >= 0).sum())
                for seed in committed.seed.values:
                    r = cell.sel(seed=seed)
                    if str(r.status.values) != "ok":
                        continue
                    key = (json.dumps(cfg.to_dict(), sort_keys=True, default=str), int(seed))
                    out[key] = PretrainResult(
                        eval_step=ev[:n].copy(),
                        eval_tokens_seen=cell.tokens_seen.values[:n].copy(),
                        eval_loss=r.loss.values[:n].copy(),
                        eval_lr=r.lr_factor.values[:n].copy(),
                        train_loss=r.train_loss.values[:n].copy(),
                        final_loss=float(r.final_loss),
                        status="ok",
                        steps=int(cell.steps),
                        tokens=int(cell.tokens),
                        n_params=int(cell.n_params),
                        seconds_per_step=float(r.seconds_per_step),
                        tokens_per_s=float(r.tokens_per_s),
                        train_seconds=float(r.train_seconds),
                        optimizer_state_bytes=int(r.optimizer_state_bytes),
                        hparams=cfg.to_dict()["hparams"],
                        corpus_hash=str(committed.attrs.get("corpus_hash", "")),
                        device=str(committed.attrs.get("device", "cpu")),
                        epochs=float(cell.epochs),
                    )
    return out


class SweepProgress:
    """The whole sweep's progress and ETA, printed after every batch of runs.

    Progress is counted in estimated core-seconds (:func:`seconds_per_token` times each
    finished run's tokens) against :func:`estimate_seconds`'s total (tuning walks are
    adaptive, so the total is an estimate); the ETA divides what is left by the rate
    measured over the runs this process trained (runs found in the run cache are done
    but not timed).
    """

    def __init__(
        self, sweep: SweepConfig, committed: xr.Dataset, clock: Callable[[], float] = time.time
    ) -> None:
        self.sweep, self.clock = sweep, clock
        self.spt = seconds_per_token(committed, sweep)
        self.total = sum(estimate_seconds(sweep, committed)["core_seconds"].values())
        self.size_of = {s.d_model: s.name for s in sweep.sizes}
        self.done = self.fresh = 0.0
        self.n_done = self.n_fresh = 0
        self.t0 = clock()

    def cost(self, cfg: Any) -> float:
        """Estimated core-seconds of one run."""
        size = self.size_of[cfg.model.d_model]
        return cfg.steps * cfg.batch_size * cfg.seq_len * self.spt[(cfg.optimizer, size)]

    def update(self, cached: Sequence[Any], trained: Sequence[Any]) -> str:
        """Count finished runs (configs); return (and print) the progress line."""
        for cfg in cached:
            self.done += self.cost(cfg)
        for cfg in trained:
            c = self.cost(cfg)
            self.done += c
            self.fresh += c
        self.n_done += len(cached) + len(trained)
        self.n_fresh += len(trained)
        wall = self.clock() - self.t0
        frac = min(self.done / self.total, 1.0)
        left = max(self.total - self.done, 0.0)
        eta = left * wall / self.fresh if self.fresh > 0 else math.nan
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.clock()))
        eta_s = "?" if not math.isfinite(eta) else f"{eta / 3600:.1f} h"
        line = (
            f"[sweep {stamp} UTC] {self.n_done} runs done ({self.n_fresh} trained here), "
            f"{100 * frac:.1f}% of the estimated {self.total / 3600:.1f} core-hours; "
            f"ETA {eta_s} at this process's rate"
        )
        print(line, flush=True)
        return line
