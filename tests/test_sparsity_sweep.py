"""The sparsity sweep: schedule, determinism, dataset layout, failures, cache."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scalinglab.studies.sparsity.sweep import (
    ModelSpec,
    data_seed,
    estimate_seconds,
    execute_sweep,
    run_sweep,
    sweep_config,
    train_run,
)


def _micro(**kw):
    """Smaller than tiny: one 1-layer model, 24 steps of 8 x 32 tokens, 3 checkpoints."""
    base = dict(
        models=(ModelSpec("a", 16, 1, 2, family="both"),),
        seeds=(0,),
        tokens=6144,
        n_checkpoints=3,
        first_checkpoint=0.25,
        eval_tokens=256,
        baselines=("topk",),
    )
    return sweep_config("tiny", **{**base, **kw})


def test_checkpoint_schedule_is_geometric_and_ends_at_the_last_step():
    cfg = sweep_config("small")
    steps = cfg.checkpoint_steps()
    assert steps[-1] == cfg.steps == 1_500_000 // (16 * 128)
    assert steps == sorted(set(steps)) and len(steps) == cfg.n_checkpoints
    ratios = np.diff(np.log(steps))
    assert np.allclose(ratios, ratios.mean(), atol=0.05)
    assert steps[0] == round(0.08 * cfg.steps)


def test_compute_classes():
    for name in ("tiny", "small", "medium", "large"):
        cfg = sweep_config(name)
        fams = {m.family for m in cfg.models}
        assert {"both"} <= fams and cfg.compute_class == name
    small = sweep_config("small")
    wd = [m for m in small.models if m.family in ("width_depth", "both")]
    n = [small.model_config(m, "relu").n_params() for m in wd]
    assert max(n) / min(n) < 1.15  # width-depth shapes at about the same parameter count
    assert len({m.d_model / m.n_layer for m in wd}) == len(wd)
    with pytest.raises(ValueError):
        sweep_config("huge")


def test_data_order_depends_only_on_seed():
    assert data_seed(3) == data_seed(3) != data_seed(4)


@pytest.mark.slow
def test_run_is_deterministic_and_measures_every_checkpoint():
    cfg = _micro()
    a = train_run(cfg, cfg.models[0], "relu", 0)
    b = train_run(cfg, cfg.models[0], "relu", 0)
    for field in ("loss", "train_loss", "activation_ratio", "cett_target", "layer_ratio"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert list(a.steps) == cfg.checkpoint_steps()
    assert a.loss[-1] < a.loss[0]  # it learns
    assert np.all(a.ppl_ratio <= 1.0 + cfg.p / 100 + 1e-12)
    assert set(a.baseline_ratio) == {"topk", "cett"}
    assert np.all(np.isfinite(a.ffn_off_loss)) and a.ffn_off_loss[-1] > a.loss[-1]
    c = train_run(cfg, cfg.models[0], "relu", 1)
    assert not np.array_equal(a.loss, c.loss)


def test_invalid_configs_fail_early():
    with pytest.raises(ValueError, match="divisible"):
        _micro(models=(ModelSpec("bad", 18, 1, 4),))  # 18 is not divisible by 4 heads
    with pytest.raises(ValueError):
        _micro(activations=("gelu",))
    with pytest.raises(ValueError):
        _micro(baselines=("cett",))
    with pytest.raises(ValueError):
        _micro(models=(ModelSpec("a", 16, 1, 2), ModelSpec("a", 16, 2, 2)))


@pytest.mark.slow
def test_dataset_layout_and_failed_runs_are_reported(capsys, monkeypatch):
    from scalinglab.studies.sparsity import sweep as sparsity_sweep

    real = sparsity_sweep.train_run

    def flaky(cfg, spec, activation, seed, **kw):
        if spec.name == "bad":
            raise RuntimeError("simulated worker failure")
        return real(cfg, spec, activation, seed, **kw)

    monkeypatch.setattr(sparsity_sweep, "train_run", flaky)
    cfg = _micro(
        models=(
            ModelSpec("a", 16, 1, 2, family="both"),
            ModelSpec("b", 16, 2, 2, family="width_depth"),
            ModelSpec("bad", 16, 1, 2, family="size"),
        ),
        activations=("relu", "silu"),
    )
    ds = execute_sweep(cfg, scheduler="sync", progress=False)
    assert dict(ds.sizes) == {
        "activation": 2,
        "model": 3,
        "seed": 1,
        "checkpoint": 3,
        "layer": 2,
        "sparsity_method": 2,
    }
    assert (ds.status.sel(model="bad") == "failed").all()
    assert "simulated" in str(ds.error.sel(model="bad", activation="relu", seed=0).values)
    assert ds.loss.sel(model="bad").isnull().all()
    assert (ds.status.sel(model=["a", "b"]) == "ok").all()
    assert ds.layer_ratio.sel(model="a", layer=1).isnull().all()  # 1-layer model
    assert ds.layer_ratio.sel(model="b").notnull().all()
    assert list(ds.in_size_sweep.values) == [True, False, True]
    assert list(ds.in_width_depth.values) == [True, True, False]
    assert np.array_equal(ds.tokens.values, np.array(cfg.checkpoint_steps()) * 8 * 32)
    assert ds.attrs["n_failed"] == 2
    fin = ds.final_ratio.sel(model="a", sparsity_method="cett")
    last = ds.activation_ratio.sel(model="a").isel(checkpoint=-1)
    assert np.array_equal(fin.values, last.values)
    printed = capsys.readouterr()
    assert "FAILED run model=bad" in printed.out + printed.err


@pytest.mark.slow
def test_run_sweep_is_cached(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    cfg = _micro(tokens=2048, n_checkpoints=2, baselines=())
    first = run_sweep(cfg, scheduler="sync", progress=False)
    assert list(tmp_path.glob("data/**/sparsity_laws/sweep-tiny-*.nc"))
    second = run_sweep(cfg, scheduler="sync", progress=False)
    printed = capsys.readouterr()
    assert "reusing" in printed.out + printed.err
    assert np.array_equal(first.activation_ratio.values, second.activation_ratio.values)


def test_estimate_packs_longest_runs_first():
    cfg = dataclasses.replace(
        _micro(),
        activations=("relu",),
        seeds=(0, 1),
        models=(ModelSpec("a", 16, 1, 2), ModelSpec("b", 16, 2, 2)),
    )
    # per run: a = 1 s/step * 24 steps + 0 = 24 s; b = 48 s; 4 runs on 2 workers -> 72 s
    est = estimate_seconds(cfg, {"a": (1.0, 0.0), "b": (2.0, 0.0)}, workers=2)
    assert est == pytest.approx(72.0)


class _Killed(BaseException):
    """A killed sweep (not an ``Exception``: map_tasks does not turn it into a failed run)."""


@pytest.mark.slow
def test_a_killed_sweep_resumes_run_by_run_with_the_same_result(tmp_path, monkeypatch):
    from scalinglab.studies.sparsity import sweep as sparsity_sweep

    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    cfg = _micro(tokens=2048, n_checkpoints=2, baselines=(), seeds=(0, 1))  # 4 runs
    real, done = sparsity_sweep.train_run, []

    def counted(cfg, spec, activation, seed, **kw):
        if kill_after is not None and len(done) == kill_after:
            raise _Killed
        done.append((activation, seed))
        return real(cfg, spec, activation, seed, **kw)

    monkeypatch.setattr(sparsity_sweep, "train_run", counted)
    kill_after = 2
    with pytest.raises(_Killed):
        run_sweep(cfg, scheduler="sync", progress=False)
    runs_dirs = list(tmp_path.glob("data/**/sparsity_laws/.runs/sweep-tiny-*"))
    assert len(done) == 2 and not list(tmp_path.rglob("*.nc"))
    assert len(runs_dirs) == 1 and len(list(runs_dirs[0].glob("*.pkl"))) == 2
    first_two, kill_after = list(done), None
    done.clear()
    ds = run_sweep(cfg, scheduler="sync", progress=False)
    assert len(done) == 2 and not set(done) & set(first_two), "only the 2 unfinished runs ran"
    assert (ds.status == "ok").all()
    fresh = execute_sweep(cfg, scheduler="sync", progress=False)  # uninterrupted, no cache
    for v in ("loss", "train_loss", "activation_ratio", "layer_ratio", "ffn_off_loss"):
        np.testing.assert_array_equal(ds[v].values, fresh[v].values)
    assert not runs_dirs[0].exists() and len(list(tmp_path.rglob("sweep-tiny-*.nc"))) == 1
