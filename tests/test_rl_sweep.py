"""The RL sweep: dataset layout, caching, failure reporting, Dask == in-process."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import xarray as xr

from scalinglab.compute import dataset_path
from scalinglab.studies.rl import sweep as rl_sweep
from scalinglab.studies.rl.config import SizeSpec, sweep_config
from scalinglab.studies.rl.grpo import GRPOConfig
from scalinglab.studies.rl.run import WarmupConfig
from scalinglab.studies.rl.sweep import execute_sweep, run_sweep


def _mini(**kw):
    base = sweep_config(
        "tiny",
        sizes=(SizeSpec("a", 16, 1, 2), SizeSpec("b", 32, 1, 2)),
        seeds=(0,),
        warmup=WarmupConfig(max_steps=4, check_every=2, check_prompts=8, check_k=1),
        grpo=GRPOConfig(steps=4, prompts_per_step=2, group_size=4),
        n_sft=64,
        n_train=32,
        n_heldout=8,
        eval_every=2,
        eval_k=1,
    )
    return dataclasses.replace(base, **kw)


def test_compute_classes_meet_the_protocol():
    small = sweep_config("small")
    n = [small.run_config(s, "baseline").model.n_params() for s in small.sizes]
    assert len(n) >= 3 and max(n) / min(n) >= 10 and n == sorted(n)
    assert len(small.seeds) >= 3
    assert list(small.variants)[0] == "baseline" and len(small.variants) >= 3
    assert {"loss_agg", "adv_norm"} <= {k for v in small.variants.values() for k in v}
    tiny = sweep_config("tiny")
    assert tiny.grpo.steps < small.grpo.steps and len(tiny.sizes) >= 3
    with pytest.raises(ValueError, match="compute_class"):
        sweep_config("huge")
    lrs = [small.run_config(s, "baseline").grpo.lr for s in small.sizes]
    assert lrs == sorted(lrs, reverse=True)  # lr ~ 1 / width


@pytest.mark.slow
def test_sweep_dataset_layout_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    sweep = _mini()
    ds = run_sweep(sweep, scheduler="sync", progress=False)
    assert dict(ds.sizes) == {"model_size": 2, "variant": 2, "seed": 1, "eval": 3, "step": 4}
    assert ds.status.values.tolist() == [[["ok"], ["ok"]], [["ok"], ["ok"]]]
    assert ds.eval_step.values.tolist() == [0, 2, 4]
    assert ds.samples.sel(variant="baseline").values.tolist() == [0, 16, 32]
    assert np.all(ds.flops.isel(eval=0) == 0) and np.all(ds.flops.diff("eval") > 0)
    assert ds.n_params.values[1] > ds.n_params.values[0]
    # a bigger model costs more per step, on the same schedule
    assert float(ds.step_flops.sel(model_size="b").mean()) > float(
        ds.step_flops.sel(model_size="a").mean()
    )
    np.testing.assert_allclose(ds.flops.isel(eval=-1), ds.step_flops.sum("step"), rtol=1e-12)
    assert np.all((ds.pass_rate >= 0) & (ds.pass_rate <= 1))
    # both variants start from the same warmed-up policy: same R0
    r0 = ds.pass_rate.isel(eval=0)
    np.testing.assert_array_equal(r0.sel(variant="baseline"), r0.sel(variant="sample_agg"))
    path = dataset_path(rl_sweep.STUDY, "grpo-tiny", sweep.to_dict())
    assert path.exists() and str(path).startswith(str(tmp_path))
    assert xr.open_dataset(path, engine="h5netcdf").attrs["config_hash"]

    def boom(*a, **k):
        raise AssertionError("should have reused the cache")

    monkeypatch.setattr(rl_sweep, "execute_sweep", boom)
    again = run_sweep(sweep, scheduler="sync", progress=False)
    xr.testing.assert_identical(again.pass_rate, ds.pass_rate)


@pytest.mark.slow
def test_crashed_runs_are_reported_not_dropped(monkeypatch, capsys):
    real_run, real_warm = rl_sweep.run_rl, rl_sweep.warm_start

    def flaky_run(cfg, **kw):
        if cfg.grpo.loss_agg == "sample" and cfg.model.d_model == 16:
            raise RuntimeError("simulated crash in GRPO")
        return real_run(cfg, **kw)

    def flaky_warm(cfg, **kw):
        if cfg.model.d_model == 32:
            raise RuntimeError("simulated crash in warm-up")
        return real_warm(cfg, **kw)

    monkeypatch.setattr(rl_sweep, "run_rl", flaky_run)
    monkeypatch.setattr(rl_sweep, "warm_start", flaky_warm)
    ds = execute_sweep(_mini(), scheduler="sync", progress=False)
    st = ds.status.sel(seed=0)
    assert st.sel(model_size="a", variant="baseline") == "ok"
    assert st.sel(model_size="a", variant="sample_agg") == "failed"
    assert (st.sel(model_size="b") == "failed").all()
    assert ds.attrs["n_failed"] == 3
    err = ds.error.sel(seed=0)
    assert "simulated crash in GRPO" in str(err.sel(model_size="a", variant="sample_agg").item())
    assert "warm-up failed" in str(err.sel(model_size="b", variant="baseline").item())
    assert ds.pass_rate.sel(model_size="a", variant="sample_agg").isnull().all()
    assert ds.pass_rate.sel(model_size="a", variant="baseline").notnull().all()
    assert ds.warmup_steps.sel(model_size="b").isnull().all()
    out = capsys.readouterr().out
    assert out.count("FAILED run") == 3 and "simulated crash in GRPO" in out


@pytest.mark.slow
def test_dask_workers_give_the_in_process_result():
    from scalinglab.compute import get_client

    sweep = _mini(sizes=(SizeSpec("a", 16, 1, 2),))
    local = execute_sweep(sweep, scheduler="sync", progress=False)
    with get_client("", n_workers=1) as client:
        remote = execute_sweep(sweep, client=client, progress=False)
    for name in ("pass_rate", "flops", "step_flops", "train_reward", "warmup_flops"):
        np.testing.assert_array_equal(local[name].values, remote[name].values, err_msg=name)
    assert remote.status.values.ravel().tolist() == ["ok", "ok"]


def test_medium_is_the_redesign_the_claims_need():
    med = sweep_config("medium")
    n = [med.run_config(s, "baseline").model.n_params() for s in med.sizes]
    assert len(n) >= 4 and max(n) / min(n) >= 30 and n == sorted(n)
    assert len(med.seeds) >= 5 and 3 <= len(med.lr_grid) <= 5 and med.lr_steps > 0
    assert med.warmup.target_lo <= 0.05  # a slow start can show
    # every main run trains its full budget: the plateau is judged afterwards, not used to
    # stop (stopping on it ended runs still climbing or already falling in medium_v1)
    assert med.plateau is None and med.run_config(med.sizes[0], "baseline").plateau is None
    assert med.lr_steps >= 500 and len(med.lr_seeds) >= 3
    s = med.sizes[1]
    assert med.run_config(s, "half_lr").grpo.lr == pytest.approx(
        med.run_config(s, "baseline").grpo.lr / 2
    )
    cap = med.run_config(s, "len_cap")
    assert cap.gen_len <= med.task.max_answer_len  # the 4-digit sums cannot end
    fresh, reuse = med.run_config(s, "baseline"), med.run_config(s, "reuse")
    assert fresh.pool >= med.grpo.steps * med.grpo.prompts_per_step  # never a prompt twice
    assert reuse.pool * 4 <= fresh.pool  # several epochs over the fixed pool
    assert {"sample_agg", "batch_norm"} <= set(med.variants)
    # the default report's committed data is still found under the same config hash
    small = sweep_config("small")
    assert dataset_path(rl_sweep.STUDY, "grpo-small", small.to_dict()).exists()
    # ... and so is the first medium design's, whose report stays reproducible
    v1 = sweep_config("medium_v1")
    assert v1.plateau is not None and v1.lr_steps == 300
    assert dataset_path(rl_sweep.STUDY, "grpo-medium", v1.to_dict()).exists()
    assert v1.to_dict() != med.to_dict()


def test_budget_from_a_finished_sweeps_recorded_timings():
    from scalinglab.studies.rl.budget import costs_from_runs, estimate_sweep

    v1 = sweep_config("medium_v1")
    with xr.open_dataset(
        dataset_path(rl_sweep.STUDY, "grpo-medium", v1.to_dict()), engine="h5netcdf"
    ) as ds:
        costs = costs_from_runs(ds.load())
    sizes = costs["sizes"]
    assert list(sizes) == ["s", "m", "l", "xl"]
    step = [sizes[k]["step_s"] for k in sizes]
    assert step == sorted(step) and step[0] > 0  # wider policies take longer per step
    assert sizes["s"]["runs"] == 30 and sizes["xl"]["runs"] == 5
    est = {k: estimate_sweep(sweep_config(k), costs) for k in ("medium", "medium_v1")}
    # the redesign trains the same 70 main runs; its longer learning-rate stage costs more
    assert est["medium"]["tasks"]["GRPO runs"] == est["medium_v1"]["tasks"]["GRPO runs"] == 70
    lr = [est[k]["core_s"]["learning-rate stage"] for k in ("medium_v1", "medium")]
    assert lr[1] > lr[0]
    assert est["medium"]["wall_s"] < 4 * 3600  # the issue's budget, on 2 idle workers


@pytest.mark.slow
def test_learning_rate_stage_selects_per_size_and_runs_resume_from_the_cache(tmp_path):
    from scalinglab.studies.rl.stopping import PlateauRule
    from scalinglab.sweeps import RunCache

    sweep = _mini(
        lr_grid=(0.5, 2.0),
        lr_seeds=(0,),
        lr_steps=2,
        grpo=GRPOConfig(steps=8, prompts_per_step=2, group_size=4),
        variants={"baseline": {}, "half_lr": {"lr_scale": 0.5}},
        variant_sizes={"half_lr": ("a",)},
        plateau=PlateauRule(
            min_steps=0, window_frac=0.9, min_points=3, min_gain=-1.0, tol=1.0, patience=1
        ),
    )
    runs = RunCache(tmp_path / "runs")
    ds = execute_sweep(sweep, scheduler="sync", progress=False, runs=runs)
    assert ds.status.sel(model_size="b", variant="half_lr").values.tolist() == ["skipped"]
    assert ds.status.sel(variant="baseline").values.ravel().tolist() == ["ok", "ok"]
    assert ds.attrs["n_failed"] == 0
    assert ds.lr_pass_rate.dims == ("model_size", "lr_mult", "lr_seed", "lr_eval")
    chosen = ds.lr_mult_selected.values
    assert set(chosen) <= {0.5, 2.0}
    rule = np.array([sweep.rule_lr(s) for s in sweep.sizes])
    np.testing.assert_allclose(ds.lr.values, rule * chosen)
    assert ds.stopped_early.sel(variant="baseline").all()  # the always-plateau rule
    assert ds.pass_rate.isel(eval=-1).isnull().all()  # padded after the stop
    assert runs.count() == 2 + 4 + 3  # warm-ups, learning-rate runs, GRPO runs

    def boom(item):
        raise AssertionError("a cached run was recomputed")

    import scalinglab.studies.rl.sweep as mod

    orig = (mod._warm_task, mod._lr_task, mod._rl_task)
    try:
        mod._warm_task = mod._lr_task = mod._rl_task = boom
        again = execute_sweep(sweep, scheduler="sync", progress=False, runs=runs)
    finally:
        mod._warm_task, mod._lr_task, mod._rl_task = orig
    xr.testing.assert_identical(again.pass_rate, ds.pass_rate)
    xr.testing.assert_identical(again.lr_pass_rate, ds.lr_pass_rate)


def _tiny_v3(**kw):
    base = sweep_config(
        "tiny_v3",
        warmup=WarmupConfig(max_steps=4, check_every=2, check_prompts=8, check_k=1),
        grpo=GRPOConfig(steps=4, prompts_per_step=2, group_size=4),
        n_sft=64,
        n_train=32,
        n_heldout=16,
        eval_every=2,
        eval_k=1,
    )
    return dataclasses.replace(base, **kw)


def test_v3_is_the_design_of_issue_31():
    v3 = sweep_config("v3")
    n = [v3.run_config(s, "baseline").model.n_params() for s in v3.sizes]
    assert len(n) == 4 and max(n) / min(n) >= 30 and n == sorted(n)
    assert v3.warm_starts == 2 and v3.rl_seeds >= 2  # each warm start has >= 2 RL seeds
    assert [v3.warm_of(s) for s in v3.seeds] == [0, 0, 1, 1]
    assert [v3.rl_seed_of(s) for s in v3.seeds] == [0, 1, 0, 1]
    assert 0.1 <= v3.warmup.target_lo <= 0.2 and v3.warmup_fine[1] <= 2
    assert v3.grpo.steps == 4000 and (v3.grpo.prompts_per_step, v3.grpo.group_size) == (16, 8)
    assert v3.eval_every == 50 and v3.n_heldout == 512 and v3.eval_seed is not None
    assert v3.plateau is None and not v3.lr_grid  # every run trains its 4000 steps
    assert v3.n_train >= v3.grpo.steps * v3.grpo.prompts_per_step  # fresh prompts
    assert list(v3.variants)[:2] == ["baseline", "half_lr"]
    for s in v3.sizes:
        base, half = v3.run_config(s, "baseline"), v3.run_config(s, "half_lr")
        assert base.grpo.lr == pytest.approx(v3.rule_lr(s)) and half.grpo.lr == base.grpo.lr / 2
        assert base.eval_seed == v3.eval_seed and base.warmup_fine_every > 0
    for v in ("len_cap", "batch_norm"):
        assert len(v3.runs_at(v)) == 2
    assert v3.run_config(v3.sizes[0], "batch_norm").grpo.adv_norm == "batch"
    # the older classes keep their config hashes (their committed data stay theirs)
    for cls, name in (
        ("small", "grpo-small"),
        ("medium", "grpo-medium"),
        ("medium_v1", "grpo-medium"),
    ):
        assert dataset_path(rl_sweep.STUDY, name, sweep_config(cls).to_dict()).exists(), cls
    assert sweep_config("small").warm_of(2) == 2 and sweep_config("small").warm_seeds() == [0, 1, 2]
    with pytest.raises(ValueError, match="warm starts"):
        dataclasses.replace(v3, seeds=(0, 1, 2))
    # the budget counts one warm-up per (size, warm start) and every run at 4000 steps
    from scalinglab.studies.rl.budget import estimate_sweep

    costs = {"sizes": {s.name: {"warmup_s": 10.0, "step_s": 0.1, "eval_s": 1.0} for s in v3.sizes}}
    est = estimate_sweep(v3, costs, workers=1)
    assert est["tasks"] == {"warm-up": 8, "learning-rate stage": 0, "GRPO runs": 48}
    assert est["core_s"]["GRPO runs"] == pytest.approx(48 * (4000 * 0.1 + 81 * 1.0))
    assert v3.n_tasks() == 8 + 48


def test_v3_layout_order_and_resume_run_by_run(tmp_path, monkeypatch):
    import io

    from scalinglab.studies.rl.sweep_tracker import RunTracker
    from scalinglab.sweeps import RunCache

    sweep = _tiny_v3()
    costs = {
        "sizes": {s.name: {"warmup_s": 1.0, "step_s": 0.1, "eval_s": 0.1} for s in sweep.sizes}
    }
    calls: list[tuple] = []
    real = rl_sweep._rl_task

    def spy(item):
        calls.append((item[0].sizes[item[1]].name, item[2], item[3]))
        return real(item)

    monkeypatch.setattr(rl_sweep, "_rl_task", spy)
    runs, log = RunCache(tmp_path / "runs"), io.StringIO()
    ds = execute_sweep(
        sweep,
        scheduler="sync",
        progress=False,
        runs=runs,
        tracker=RunTracker(sweep, costs, file=log, bar=False),
    )
    assert dict(ds.sizes) == {"model_size": 2, "variant": 4, "seed": 4, "eval": 3, "step": 4}
    assert ds.warm_start.values.tolist() == [0, 0, 1, 1]
    assert ds.rl_seed.values.tolist() == [0, 1, 0, 1]
    assert ds.r0.dims == ("model_size", "seed") and ds.attrs["n_failed"] == 0
    assert ds.status.sel(model_size="m", variant="len_cap").values.tolist() == ["skipped"] * 4
    # whole cells first: the baseline at every size, then half_lr, then the ablations
    assert [c[1] for c in calls] == ["baseline"] * 8 + ["half_lr"] * 8 + ["len_cap"] * 4 + [
        "batch_norm"
    ] * 4
    assert [c[0] for c in calls[:8]] == ["s"] * 4 + ["m"] * 4
    # one warm-up per (size, warm start); its RL seeds start from copies of it
    assert runs.count() == 2 * 2 + len(calls)
    for w in (0, 1):
        seeds = ds.seed.where(ds.warm_start == w, drop=True).values
        same = ds.warmup_steps.sel(seed=seeds)
        assert (same == same.isel(seed=0)).all()
        start = ds.pass_rate.isel(eval=0).sel(variant=["baseline", "half_lr"], seed=seeds)
        assert (start == ds.r0.sel(seed=seeds)).all()  # one R0: same policy, same eval draws
    # the RL seeds differ: different batches sampled
    tr = ds.train_reward.sel(variant="baseline")
    assert not np.array_equal(tr.sel(seed=0).values, tr.sel(seed=1).values) or np.all(tr == 0)
    assert 0 <= float(ds.cap_binds_heldout.sel(variant="len_cap")) <= 1
    assert float(ds.cap_binds_heldout.sel(variant="baseline")) == 0
    lines = log.getvalue().splitlines()
    assert "28 runs to do (0 stored)" in lines[0] and sum("ETA" in x for x in lines) == 28
    # a restart trains only what is missing
    missing = [["grpo", "m", "half_lr", 3], ["warm-up", "s", 1]]
    for key in missing:
        runs.path(key).unlink()
    calls.clear()
    log = io.StringIO()
    again = execute_sweep(
        sweep,
        scheduler="sync",
        progress=False,
        runs=runs,
        tracker=RunTracker(sweep, costs, file=log, bar=False),
    )
    assert calls == [("m", "half_lr", 3)]
    assert "2 runs to do (26 stored)" in log.getvalue()
    # the re-run run and re-trained warm-up reproduce their first results exactly
    for name in ("pass_rate", "train_reward", "r0", "warmup_steps", "warmup_check"):
        np.testing.assert_array_equal(again[name].values, ds[name].values, err_msg=name)


def test_v3_shards_split_the_runs_and_the_assembly_runs_nothing(tmp_path, monkeypatch):
    from scalinglab.sweeps import RunCache

    sweep = _tiny_v3(grpo=GRPOConfig(steps=2, prompts_per_step=2, group_size=4))
    calls: list[tuple] = []
    real = rl_sweep._rl_task

    def spy(item):
        calls.append((item[0].sizes[item[1]].name, item[2], item[3]))
        return real(item)

    monkeypatch.setattr(rl_sweep, "_rl_task", spy)
    runs = RunCache(tmp_path / "runs")
    parts = []
    for k in (0, 1):
        calls.clear()
        execute_sweep(sweep, scheduler="sync", progress=False, runs=runs, shard=(k, 2))
        parts.append(list(calls))
    assert len(parts[0]) == len(parts[1]) == 12 and not set(parts[0]) & set(parts[1])
    # each shard gets half of every cell (alternate runs of the size-by-size order)
    assert sorted(c[2] for c in parts[0] if c[:2] == ("s", "baseline")) == [0, 2]
    calls.clear()
    ds = execute_sweep(sweep, scheduler="sync", progress=False, runs=runs)
    assert calls == [] and ds.attrs["n_failed"] == 0
    with pytest.raises(ValueError, match="shard"):
        execute_sweep(sweep, scheduler="sync", progress=False, runs=runs, shard=(2, 2))
