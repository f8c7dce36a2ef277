"""The redesigned optimizer sweep: its control arms end to end (tiny), the medium design,
distinct-window sampling, the deduplicated corpus and the budget estimate."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from scalinglab.compute import dataset_path
from scalinglab.fitting.loss_table import sweep_table
from scalinglab.fitting.speedup import compute_speedups
from scalinglab.models.corpus import CorpusConfig, PermutedWindows, build_corpus
from scalinglab.models.installed_text import dedup
from scalinglab.paths import data_dir
from scalinglab.studies.optimizers import budget, controls
from scalinglab.studies.optimizers.arms import arm_runs
from scalinglab.studies.optimizers.sweep import (
    PAPER_SUBSET,
    cell_hparams,
    planned_epochs,
    sweep_config,
)


@pytest.fixture(scope="module")
def arms(optimizer_tiny_sweep):
    """``sweep_config("tiny")`` with both arms, trained once for the session (``conftest.py``)."""
    shared = optimizer_tiny_sweep
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCALINGLAB_ROOT", str(shared.root))
        yield shared.sweep, shared.ds


def _others(sweep):
    """The optimizers other than the baseline (those the transfer arm runs)."""
    return [o for o in sweep.optimizers if o != "adamw"]


@pytest.mark.slow  # the module's tiny sweep with both arms
def test_transfer_arm_runs_with_adamws_lr_and_weight_decay(arms):
    sweep, ds = arms
    st = ds.transfer_status
    assert len(_others(sweep)) >= 2
    run = st.sel(model_size="xs", optimizer=_others(sweep))
    assert (run.sel(data_multiple=list(sweep.data_multiples)) == "ok").all()
    assert (run.sel(data_multiple=4.0) == "skipped").all()  # AdamW's extra budget only
    assert (st.sel(model_size="xs2") == "skipped").all()
    assert (st.sel(optimizer="adamw") == "skipped").all()
    for m in sweep.data_multiples:
        adamw = ds.sel(optimizer="adamw", model_size="xs", data_multiple=m)
        for o in _others(sweep):
            cell = ds.sel(optimizer=o, model_size="xs", data_multiple=m)
            assert float(cell.transfer_lr) == float(adamw.lr)
            assert float(cell.transfer_weight_decay) == float(adamw.weight_decay)
            # identical hyperparameters give the identical (reused) run, else a new one
            same = float(cell.lr) == float(cell.transfer_lr) and float(cell.weight_decay) == float(
                cell.transfer_weight_decay
            )
            equal = np.array_equal(cell.final_loss.values, cell.transfer_final_loss.values)
            assert same == equal


@pytest.mark.slow  # the module's tiny sweep with both arms
def test_schedule_control_holds_the_lr_and_is_paired(arms):
    sweep, ds = arms
    ok = ds.control_status.sel(model_size="xs2", data_multiple=2.0)
    assert (ok == "ok").all()
    assert (ds.control_status.sel(model_size="xs") == "skipped").all()
    lrf = ds.control_lr_factor.sel(model_size="xs2", data_multiple=2.0).values
    assert np.all(lrf[..., -1] == 1.0)  # constant after warmup, to the end
    main_lrf = ds.lr_factor.sel(model_size="xs2", data_multiple=2.0).values
    assert np.all(main_lrf[..., -1] == 0.0)
    sc = controls.schedule_control(ds, reps=200, seed=0)
    assert len(sc) == 1
    r = sc.iloc[0]
    assert (r.model_size, r.data_multiple, r.schedule) == ("xs2", 2.0, "constant")
    assert -1 <= r.tau_main <= 1 and -1 <= r.tau_control <= 1
    assert math.isclose(r["diff"], r.tau_control - r.tau_main)
    assert r.lo <= r.hi


@pytest.mark.slow  # the module's tiny sweep with both arms
def test_transfer_effect_pairs_against_the_same_adamw_fit(arms):
    sweep, ds = arms
    table, res = controls.transfer_effect(ds, reps=200, seed=0)
    assert set(table.optimizer) == set(_others(sweep)) and set(table.model_size) == {"xs"}
    main = compute_speedups(sweep_table(ds), bootstrap=200, seed=0)
    assert res.fits["xs"]["E"] == main.fits["xs"]["E"]  # AdamW's fit is unchanged
    for r in table.itertuples():
        assert math.isclose(r.ratio, r.transferred / r.tuned)
        if np.isfinite([r.lo, r.hi]).all():
            assert r.lo <= r.hi


@pytest.mark.slow  # the module's tiny sweep with both arms
def test_noise_floor_is_adamw_against_itself(arms):
    _, ds = arms
    res = compute_speedups(sweep_table(ds), bootstrap=200, seed=0)
    nf = controls.noise_floor(res)
    assert list(nf.model_size) == ["xs", "xs2"]
    for r in nf.itertuples():
        assert abs(r.speedup - 1) < 0.05
        if np.isfinite(r.mde):
            assert r.mde > 1 + r.halfwidth * 0.9 and r.lo <= 1 <= r.hi


@pytest.mark.slow  # the module's tiny sweep with both arms
def test_arms_are_listed_once_per_run(arms):
    sweep, ds = arms
    tuned = {
        (o, s, m): cell_hparams_from_ds(ds, o, s, m)
        for o in sweep.optimizers
        for s in ds.model_size.values
        for m in sweep.data_multiples
    }
    runs = arm_runs(sweep, tuned)
    n_transfer = len(_others(sweep)) * len(sweep.data_multiples) * len(sweep.seeds)
    n_control = len(sweep.optimizers) * len(sweep.control_multiples) * len(sweep.seeds)
    assert sum(a == "transfer" for a, *_ in runs) == n_transfer
    assert sum(a == "control" for a, *_ in runs) == n_control
    assert all(cfg.schedule == "constant" for a, *_, cfg in runs if a == "control")
    assert cell_hparams(sweep, tuned, "muon", sweep.sizes[0], 1.0) == tuned[("muon", "xs", 1.0)]


def cell_hparams_from_ds(ds, o, s, m):
    import json

    return json.loads(ds.hparams.sel(optimizer=o, model_size=s, data_multiple=m).item())


@pytest.mark.slow  # the module's tiny sweep with both arms
def test_epochs_are_recorded_and_match_the_sampler(arms):
    sweep, ds = arms
    corpus = build_corpus(sweep.corpus)
    windows = corpus.train.size // (sweep.seq_len + 1)
    want = ds.steps.values * ds.batch_size.values[:, None] / windows
    ran = (
        (ds.status != "skipped").any(["optimizer", "seed"]).transpose("model_size", "data_multiple")
    )
    want = np.where(ran.values, want, np.nan)  # NaN: a budget no optimizer runs at that size
    assert np.isnan(want).sum() == 1  # xs2 at 4x
    np.testing.assert_allclose(ds.epochs.values, want)
    np.testing.assert_allclose(planned_epochs(sweep), want)


@pytest.mark.slow  # builds the small corpus (its hash is part of the config)
def test_small_config_still_finds_its_committed_dataset(monkeypatch):
    monkeypatch.delenv("SCALINGLAB_ROOT", raising=False)
    cfg = sweep_config("small").to_dict()
    assert not {"sampler", "transfer_sizes", "control_schedule"} & set(cfg)
    path = dataset_path("optimizer_comparison", "sweep-small", cfg)
    if not (data_dir() / "optimizer_comparison").is_dir():
        pytest.skip("no committed data in this checkout")
    assert path.exists(), f"the small sweep's hash changed: {path.name}"


def test_medium_design_meets_the_issue():
    sweep = sweep_config("medium")
    n = [sweep.run_config("adamw", s, 1.0, {}).n_params for s in sweep.sizes]
    assert len(n) >= 4 and n == sorted(n)
    assert n[-1] >= 200_000 and n[-1] / n[0] >= 16
    assert {s.n_layer for s in sweep.sizes} == {2}  # the stated rule: width is the only knob
    assert all(s.d_model // s.n_head == 8 for s in sweep.sizes)
    assert set(PAPER_SUBSET) <= set(sweep.optimizers)
    assert sweep.sampler == "permuted" and sweep.corpus.sources == ("installed",)
    assert sweep.transfer_sizes and sweep.control_schedule == "constant"


@pytest.mark.slow  # builds the installed-text corpus (minutes the first time, then cached)
@pytest.mark.slow  # builds the medium corpus (minutes on a fresh checkout)
def test_no_medium_run_repeats_data():
    sweep = sweep_config("medium")
    ep = planned_epochs(sweep)
    assert ep.shape == (len(sweep.sizes), len(sweep.multiples))
    assert np.nanmax(ep) <= 1.0, ep
    # NaN exactly where no optimizer runs
    none = [
        [not any(sweep.runs_cell(o, s.name, m) for o in sweep.optimizers) for m in sweep.multiples]
        for s in sweep.sizes
    ]
    np.testing.assert_array_equal(np.isnan(ep), none)
    assert np.isnan(ep).sum() == 4  # w48 and w96 at 8x and 16x


def test_permuted_windows_never_repeat_within_an_epoch():
    tokens = np.arange(1000, dtype=np.uint16)
    w = PermutedWindows(tokens, 9, generator=torch.Generator().manual_seed(3))
    assert w.n_windows == 100
    starts = []
    for _ in range(25):  # 100 windows in batches of 4: exactly one epoch
        x, y = w.batch(4)
        assert torch.equal(x[:, 1:], y[:, :-1])
        starts += (x[:, 0] % 1000).tolist()
    assert sorted(starts) == list(range(0, 1000, 10)) and w.epochs == 1.0
    w.batch(4)
    assert w.epochs > 1.0
    a = PermutedWindows(tokens, 9, generator=torch.Generator().manual_seed(3)).batch(8)[0]
    b = PermutedWindows(tokens, 9, generator=torch.Generator().manual_seed(3)).batch(8)[0]
    c = PermutedWindows(tokens, 9, generator=torch.Generator().manual_seed(4)).batch(8)[0]
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_dedup_keeps_the_first_copy_and_drops_empties():
    docs = [("a", "x = 1\n"), ("b", "  \n"), ("c", "x = 1"), ("d", "y"), ("e", "y\n\n")]
    assert dedup(docs) == [("a", "x = 1\n"), ("d", "y")]


def test_installed_source_is_known_and_other_corpora_unchanged():
    cfg = CorpusConfig(sources=("installed",))
    assert cfg.sources == ("installed",)
    with pytest.raises(ValueError):
        CorpusConfig(sources=("nope",))


def test_budget_counts_every_task_and_packs_them():
    sweep = dataclasses.replace(
        sweep_config("medium"),
        sizes=sweep_config("medium").sizes[:2],
        transfer_sizes=("w16",),
        control_sizes=("w32",),
        baseline_extra_multiples={"w16": (8.0,)},
        others_multiples={"w32": (1.0, 4.0)},
    )
    costs = {
        "sizes": {
            s.name: {
                "step_s": {o: 0.01 * (i + 1) for o in sweep.optimizers},
                "ratio": {o: 0.5 * (i + 1) for o in sweep.optimizers},
                "eval_s_per_token": 1e-6,
                "reference_step_s": 0.02,
            }
            for i, s in enumerate(sweep.sizes)
        }
    }
    stages = budget.task_seconds(sweep, costs, rounds=1, retune_evals=2)
    n_o, n_m, n_s = len(sweep.optimizers), len(sweep.data_multiples), len(sweep.seeds)
    main = (n_o * n_m + 1) + (n_m + (n_o - 1) * 2)  # w16: + AdamW at 8x; w32: others at 1x, 4x
    final = main * n_s + (n_o - 1) * n_m * n_s + n_o * len(sweep.control_multiples) * n_s
    assert len(stages["final runs and controls"][0]) == final
    assert sum(len(b) for b in stages["re-tuning"]) == n_o * 2  # w32 at 1x, two runs each
    est = budget.estimate_sweep(sweep, costs, workers=2, rounds=1, retune_evals=2)
    assert est["core_s"]["total"] / 2 <= est["wall_s"] <= est["core_s"]["total"]
    half = budget.estimate_sweep(
        sweep, budget.scaled_costs(costs, 0.01), workers=2, rounds=1, retune_evals=2
    )
    assert math.isclose(half["wall_s"], est["wall_s"] / 2)
