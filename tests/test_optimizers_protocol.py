"""The matched sweep's walk protocol on a synthetic loss surface (no training), its cost."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import xarray as xr

from scalinglab.studies.optimizers.config import MATCHED_SIZES, sweep_config
from scalinglab.studies.optimizers.protocol import (
    SweepProgress,
    estimate_seconds,
    plan,
    seconds_per_token,
    tune_walks,
)
from scalinglab.sweeps import dataset_path

SWEEP = sweep_config("matched")
WIDTH = {s.name: s.d_model for s in MATCHED_SIZES}
BEST_BETA1 = {"adamw": 0.8, "nadamw_paper": 0.9, "soap": 0.95}


def lr_opt(optimizer, size, m):
    """A synthetic optimum: down with width and budget, Muon and SOAP higher than AdamW."""
    base = {"adamw": 0.004, "nadamw_paper": 0.004, "muon": 0.016, "soap": 0.032}[optimizer]
    by_size = {"w32": 2.0, "w48": 1.0, "w64": 1.0, "w96": 0.5}[size]
    return base * by_size * (2.0 if m < 1 else 1.0) / (2.0 if m >= 4 else 1.0)


def loss(optimizer, size, m, cfg):
    x = math.log2(cfg["lr"] / lr_opt(optimizer, size, m))
    out = x**2 + 0.01 * WIDTH[size] / m
    if optimizer in BEST_BETA1:
        out += 20 * (cfg["beta1"] - BEST_BETA1[optimizer]) ** 2
    out += 4 * (cfg["weight_decay"] - 0.05) ** 2 + 2 * (cfg["warmup"] - 0.05) ** 2
    if optimizer == "muon":
        out += 10 * (cfg["momentum"] - 0.95) ** 2
    return out


def _tune(sweep=SWEEP):
    log = []

    def evaluate(size, m, desc):
        def fn(batch):
            log.append((size.name, m, [o for o, _ in batch], [c for _, c in batch]))
            return [loss(o, size.name, m, c) for o, c in batch]

        return fn

    tuned, searches = tune_walks(sweep, evaluate)
    return tuned, searches, log


def test_every_walk_ends_interior_at_the_synthetic_optimum():
    tuned, searches, _ = _tune()
    assert searches and not [w for s in searches for w in s.edge_warnings() if "lr=" in w]
    for (o, size, m), hp in tuned.items():
        assert hp["lr"] == pytest.approx(lr_opt(o, size, m)), (o, size, m)
    # every optimizer at every size at 1x, and the budget cells the design re-tunes
    for o in SWEEP.optimizers:
        for s in MATCHED_SIZES:
            assert (o, s.name, 1.0) in tuned
    assert ("muon", "w32", 8.0) in tuned and ("adamw", "w32", 16.0) in tuned
    assert ("muon", "w32", 16.0) not in tuned  # Muon does not run 16x


def test_the_largest_size_tunes_the_other_settings_and_they_reach_every_size():
    tuned, searches, _ = _tune()
    for o, b1 in BEST_BETA1.items():
        for s in MATCHED_SIZES:
            assert tuned[(o, s.name, 1.0)]["beta1"] == b1
    for s in MATCHED_SIZES:
        assert tuned[("muon", s.name, 1.0)]["momentum"] == 0.95
        assert tuned[("adamw", s.name, 1.0)]["weight_decay"] == 0.05
    big = [s for s in searches if s.stage.startswith("B ")]
    assert {s.name for s in big} == set(SWEEP.optimizers)
    assert all(s.walk_status.get("beta1", "interior") == "interior" for s in big)


def test_adamw_goes_first_and_its_settings_train_every_embedding_and_head():
    tuned, _, log = _tune()
    seen_adamw = set()
    for size, m, opts, _cfgs in log:
        if opts[0] == "adamw":
            assert set(opts) == {"adamw"}
            seen_adamw.add((size, m))
            continue
        assert (size, m) in seen_adamw  # AdamW was tuned at this cell before the others
    for (o, size, m), hp in tuned.items():
        if o == "adamw":
            assert "eh_lr" not in hp
            continue
        a = tuned[("adamw", size, m)]
        assert (hp["eh_lr"], hp["eh_beta1"], hp["eh_beta2"], hp["eh_weight_decay"]) == (
            a["lr"],
            a["beta1"],
            a["beta2"],
            a["weight_decay"],
        )


def test_an_unreachable_optimum_is_flagged_not_hidden():
    sweep = dataclasses.replace(SWEEP, walk_max_evals=3)
    _, searches, _ = _tune(sweep)
    assert any("on edge" in w for s in searches for w in s.edge_warnings())


def test_tuning_seeds_must_not_be_evaluation_seeds():
    with pytest.raises(ValueError, match="tuning seeds"):
        sweep_config("matched", tune_seeds=(0, 100))


def test_matched_design_one_batch_and_committed_datasets_still_found():
    assert {s.batch_size for s in SWEEP.sizes} == {16}
    assert SWEEP.embed_head == "adamw" and set(SWEEP.tune_seeds) == {100, 101}
    # the redesign's fields leave the committed design's config hash alone
    cfg = sweep_config("medium").to_dict()
    assert dataset_path("optimizer_comparison", "sweep-medium", cfg).exists()


def _committed():
    cfg = sweep_config("medium").to_dict()
    return xr.open_dataset(dataset_path("optimizer_comparison", "sweep-medium", cfg))


def test_plan_counts_every_final_run_and_the_estimate_prices_them():
    rows = plan(SWEEP)
    finals = sum(r["runs"] for r in rows if r["phase"] == "final")
    cells = sum(
        SWEEP.runs_cell(o, s.name, m)
        for o in SWEEP.optimizers
        for s in SWEEP.sizes
        for m in SWEEP.multiples
    )
    assert finals == cells * len(SWEEP.seeds)
    committed = _committed()
    spt = seconds_per_token(committed, SWEEP)
    # w64 lies between w48 and w96 (a power law in parameters between them)
    assert spt[("adamw", "w48")] < spt[("adamw", "w64")] < spt[("adamw", "w96")]
    per = (committed.train_seconds / committed.tokens).median("seed").median("data_multiple")
    assert spt[("muon", "w48")] == pytest.approx(float(per.sel(optimizer="muon", model_size="w48")))
    est = estimate_seconds(SWEEP, committed)
    assert set(est["core_seconds"]) == {"A", "B", "C", "D", "final", "arms"}
    assert est["hours_on_2_cores"] == pytest.approx(sum(est["core_seconds"].values()) / 7200)


def test_progress_reports_share_done_and_eta():
    committed = _committed()
    times = [0.0]
    prog = SweepProgress(SWEEP, committed, clock=lambda: times[-1])
    times.append(100.0)
    cfg = SWEEP.run_config("adamw", MATCHED_SIZES[-1], 1.0, {})
    line = prog.update([], [cfg])
    share = prog.cost(cfg) / prog.total
    assert f"{100 * share:.1f}%" in line
    eta_h = (prog.total - prog.cost(cfg)) * 100.0 / prog.cost(cfg) / 3600
    assert f"ETA {eta_h:.1f} h" in line
    assert np.isfinite(prog.total)


def test_committed_runs_are_reused_only_where_the_key_is_unchanged():
    import json

    from scalinglab.studies.optimizers.protocol import committed_results
    from scalinglab.studies.optimizers.sweep import _Runner

    committed = _committed()
    reuse = committed_results(committed, sweep_config("medium"))
    n_ok = int((committed.status == "ok").sum())
    assert len(reuse) == n_ok
    sizes = {s.name: s for s in MATCHED_SIZES}
    cell = committed.sel(optimizer="adamw", data_multiple=1.0)
    # AdamW at w32 with the committed settings: same batch, same config -> same key
    hp = json.loads(str(cell.hparams.sel(model_size="w32").values))
    key = _Runner.key(SWEEP.run_config("adamw", sizes["w32"], 1.0, hp), 1)
    assert reuse[key].final_loss == float(cell.final_loss.sel(model_size="w32", seed=1))
    assert list(reuse[key].eval_loss) == list(cell.loss.sel(model_size="w32", seed=1).values)
    # w96 changed its batch (32 -> 16): nothing committed there has a matched key
    hp96 = json.loads(str(cell.hparams.sel(model_size="w96").values))
    assert _Runner.key(SWEEP.run_config("adamw", sizes["w96"], 1.0, hp96), 1) not in reuse
