"""The long design: its configs, the stacked-seed engine, run-by-run resumption, kernel timings."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.studies.sparsity import long_blocks, long_runs, stacked, time_kernel
from scalinglab.studies.sparsity.long_config import LONG_HORIZONS, long_configs, long_extra_configs
from scalinglab.studies.sparsity.sweep import ModelSpec, sweep_config, train_run
from scalinglab.sweeps import RunCache


def _micro(**kw):
    """One 1-layer model, 24 steps of 8 x 32 tokens, 3 checkpoints."""
    base = dict(
        models=(ModelSpec("a", 16, 1, 2, family="size"),),
        seeds=(0, 1),
        tokens=6144,
        n_checkpoints=3,
        first_checkpoint=0.25,
        eval_tokens=256,
        baselines=("topk",),
    )
    return sweep_config("tiny", **{**base, **kw})


def test_long_design_trains_three_sizes_to_at_least_500_tokens_per_parameter():
    cfgs = long_configs("small")
    assert list(cfgs) == ["size-xs", "size-s", "size-m"]
    for cfg in cfgs.values():
        n = cfg.model_config(cfg.models[0], "relu").n_params()
        horizon = LONG_HORIZONS[cfg.models[0].name]
        assert cfg.tokens / n == pytest.approx(horizon.tokens_per_param, rel=1e-3)
        assert horizon.tokens_per_param >= 500
        assert len(cfg.seeds) >= 3 and set(cfg.activations) == {"relu", "silu"}
        grid = np.array(cfg.checkpoint_steps()) * cfg.batch_size * cfg.seq_len / n
        assert grid[0] == pytest.approx(2.0, rel=0.1) and len(grid) == horizon.n_checkpoints
    cuda = long_configs("small", device="cuda")["size-m"]
    assert cuda.to_dict()["device"] == "cuda" != cfgs["size-m"].to_dict()["device"]


def test_stacked_seeds_train_the_same_runs_as_one_at_a_time():
    cfg = _micro()
    spec = cfg.models[0]
    together = stacked.train_stacked(cfg, spec, "relu", (0, 1))
    for seed in (0, 1):
        alone = train_run(cfg, spec, "relu", seed)
        got = together[seed]
        assert not isinstance(got, str)
        np.testing.assert_array_equal(got.steps, alone.steps)
        np.testing.assert_allclose(got.train_loss, alone.train_loss, atol=1e-4)
        np.testing.assert_allclose(got.loss, alone.loss, atol=1e-4)
        np.testing.assert_allclose(got.natural_ratio, alone.natural_ratio, atol=2e-3)
    # the two seeds are different runs, not copies
    assert abs(together[0].loss[-1] - together[1].loss[-1]) > 1e-4


def test_a_group_resumes_run_by_run(tmp_path, monkeypatch):
    cfg = _micro(seeds=(0, 1, 2))
    runs = RunCache(tmp_path)
    calls = []
    real = stacked.train_stacked

    def spy(cfg_, spec, act, seeds, **kw):
        calls.append(seeds)
        return real(cfg_, spec, act, seeds, **kw)

    monkeypatch.setattr(stacked, "train_stacked", spy)
    partial = long_runs.train_group(_micro(seeds=(0, 2)), "relu", runs=runs, progress=False)
    assert partial == [] and calls == [(0, 2)]
    assert long_runs.train_group(cfg, "relu", runs=runs, progress=False) == []
    assert calls == [(0, 2), (1,)]  # only the missing seed is trained
    ds = long_runs.execute_stacked(cfg, runs, progress=False)
    assert calls[-1] == (0, 1, 2)  # silu: all three
    assert ds["status"].sel(activation="relu").values.ravel().tolist() == ["ok"] * 3
    assert ds.attrs["train_engine"].startswith("stacked")


def test_a_stopped_group_resumes_from_its_saved_state_bit_for_bit(tmp_path):
    cfg = _micro()
    spec = cfg.models[0]
    straight = stacked.train_stacked(cfg, spec, "relu", (0, 1))
    state = tmp_path / "state.pt"
    stops = []
    for _ in range(30):  # a stop_at in the past stops after one step, every call
        try:
            resumed = stacked.train_stacked(
                cfg, spec, "relu", (0, 1), state_path=state, stop_at=0.0
            )
            break
        except stacked.Stopped as stop:
            stops.append(stop.step)
    assert stops == list(range(1, cfg.steps))  # one step a call, across every checkpoint
    for seed in (0, 1):
        a, b = straight[seed], resumed[seed]
        assert not isinstance(a, str) and not isinstance(b, str)
        np.testing.assert_array_equal(a.steps, b.steps)
        for name in ("train_loss", "loss", "activation_ratio", "layer_ratio", "natural_ratio"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        assert a.baseline_ratio == b.baseline_ratio
    with pytest.raises(ValueError, match=r"state\.pt holds the state of another run"):
        stacked.train_stacked(cfg, spec, "silu", (0, 1), state_path=state)
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"junk")
    with pytest.raises(ValueError, match=r"bad\.pt is not a readable saved state"):
        stacked.train_stacked(cfg, spec, "relu", (0, 1), state_path=bad)
    assert bad.read_bytes() == b"junk"  # nothing written over it


def test_a_group_stopped_at_its_deadline_keeps_its_state_until_it_finishes(tmp_path):
    cfg = _micro()
    runs = RunCache(tmp_path)
    msg = long_runs.train_group(cfg, "relu", runs=runs, progress=False, stop_at=0.0)
    path = long_runs.state_file(runs, "relu", (0, 1))
    assert msg == [f"a/relu: stopped at step 1 of {cfg.steps}; state saved to {path}"]
    assert path.exists() and not runs.load(["a", "relu", 0])[0]
    assert long_runs.train_group(cfg, "relu", runs=runs, progress=False) == []
    assert runs.load(["a", "relu", 0])[0] and not path.exists()


def test_a_later_block_trained_in_the_same_stack_is_stored_in_its_own_cache(tmp_path):
    first, later = _micro(seeds=(0, 1)), _micro(seeds=(2,))
    runs_a, runs_b = RunCache(tmp_path / "a"), RunCache(tmp_path / "b")
    also = ((later, runs_b),)
    assert long_runs.train_group(first, "relu", runs=runs_a, progress=False, also=also) == []
    assert [runs_a.load(["a", "relu", s])[0] for s in (0, 1, 2)] == [True, True, False]
    hit, got = runs_b.load(["a", "relu", 2])
    assert hit and not runs_b.load(["a", "relu", 0])[0]
    alone = stacked.train_stacked(later, later.models[0], "relu", (2,))[2]
    assert not isinstance(alone, str)
    np.testing.assert_allclose(got.loss, alone.loss, atol=1e-4)
    np.testing.assert_allclose(got.natural_ratio, alone.natural_ratio, atol=2e-3)
    assert long_runs.execute_stacked(later, runs_b, progress=False)["seed"].values.tolist() == [2]
    with pytest.raises(ValueError, match="seed 1 is in two blocks"):
        long_runs.train_group(first, "silu", runs=runs_a, also=((_micro(seeds=(1,)), runs_b),))
    with pytest.raises(ValueError, match="differs beyond its seeds"):
        other = _micro(seeds=(2,), tokens=3072)
        long_runs.train_group(first, "silu", runs=runs_a, also=((other, runs_b),))


def test_bytes_proxy_is_the_union_fraction_of_the_weights():
    dense = time_kernel._bytes_read(1024, 8192, 1.0, 1.0, 3)
    sparse = time_kernel._bytes_read(1024, 8192, 0.1, 1.0, 3)
    assert dense == 4.0 * (3 * 1024 * 8192 + 2 * 1024)
    assert dense / sparse == pytest.approx(10.0, rel=1e-3)  # activations are negligible


def _timing_run(dense_s, sparse_s, load):
    cases = pd.MultiIndex.from_arrays([[1, 4], [0.1, 0.1]], names=["batch", "ratio"])
    med = np.array([[dense_s, dense_s], [sparse_s, 2 * sparse_s]])[None]  # (d_ff, impl, case)
    ds = xr.Dataset(
        {
            "median_s": (("d_ff", "impl", "case"), med),
            "union_ratio": (("d_ff", "case"), [[0.1, 0.34]]),
            "bytes_speedup": (("d_ff", "case"), [[9.9, 2.9]]),
        },
        coords={
            "d_ff": [2048],
            "impl": ["dense", "sparse_torch"],
            "batch": ("case", cases.get_level_values(0)),
            "ratio": ("case", cases.get_level_values(1)),
        },
        attrs={"load_before": load, "load_after": load},
    )
    return ds


def test_between_run_speedups_are_median_and_range_over_runs():
    runs = [_timing_run(1.0, 0.5, 1.0), _timing_run(1.0, 0.25, 3.0), _timing_run(1.0, 0.2, 2.0)]
    t = time_kernel.between_run_speedups(runs)
    one = t[(t["batch"] == 1)].iloc[0]
    assert (one["n_runs"], one["speedup"], one["speedup_min"], one["speedup_max"]) == (
        3,
        4.0,
        2.0,
        5.0,
    )
    assert one["max_load"] == 3.0 and one["bytes_speedup"] == pytest.approx(9.9)
    four = t[(t["batch"] == 4)].iloc[0]
    assert four["speedup"] == 2.0
    with pytest.raises(ValueError, match="no kernel timing runs"):
        time_kernel.between_run_speedups([])


def test_the_cached_long_design_is_found_whatever_device_trained_it(tmp_path, monkeypatch):
    # the committed design was trained on a GPU: its device is in the cache key, so a
    # look-up under the CPU key alone found nothing and the report left A0 untested
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    from scalinglab.compute import dataset_path, save_dataset

    assert long_runs.cached_long("small") == {}
    cfg = long_configs("small", device="cuda")["size-m"]
    key = long_blocks.sweep_key(cfg)
    save_dataset(
        xr.Dataset({"x": ("i", np.arange(3.0))}),
        dataset_path("sparsity_laws", f"sweep-{cfg.compute_class}", key),
        config=key,
    )
    got = long_runs.cached_long("small")
    assert list(got) == ["size-m"]
    np.testing.assert_array_equal(got["size-m"]["x"].values, [0.0, 1.0, 2.0])
    assert long_runs.cached_long("small", devices=("cpu",)) == {}


def test_a_later_seed_block_is_read_with_the_first_and_keeps_its_provenance():
    extra = long_extra_configs("small", device="cuda")
    first = long_configs("small", device="cuda")
    for name, cfg in extra.items():
        assert set(cfg.seeds).isdisjoint(first[name].seeds)
        assert long_blocks.sweep_key(cfg) != long_blocks.sweep_key(first[name])
    a = xr.Dataset({"x": ("seed", [1.0, 2.0])}, coords={"seed": [0, 1]})
    a.attrs.update(config_hash="aaa", train_machine="gpu-a", n_failed=0)
    b = xr.Dataset({"x": ("seed", [3.0])}, coords={"seed": [2]})
    b.attrs.update(config_hash="bbb", train_machine="gpu-b", n_failed=1)
    got = long_blocks.join_seed_blocks(a, b)
    np.testing.assert_array_equal(got["seed"].values, [0, 1, 2])
    np.testing.assert_array_equal(got["x"].values, [1.0, 2.0, 3.0])
    blocks = json.loads(got.attrs["seed_blocks"])
    assert [b["config_hash"] for b in blocks] == ["aaa", "bbb"]
    assert [b["train_machine"] for b in blocks] == ["gpu-a", "gpu-b"]
    assert got.attrs["n_failed"] == 1
    with pytest.raises(ValueError, match="overlap"):
        long_blocks.join_seed_blocks(a, a)


def test_a_device_call_trains_only_the_sizes_named_and_names_the_ones_it_knows():
    assert list(long_blocks.design_blocks("small", sizes=("size-m",))) == ["size-m"]
    later = long_blocks.design_blocks("small", later=True)
    assert list(later) == ["size-xs", "size-m"]
    assert all(later[f"size-{m}"].seeds == LONG_HORIZONS[m].later_seeds for m in ("xs", "m"))
    with pytest.raises(ValueError, match=r"no \['size-x'\].*\['size-xs', 'size-s', 'size-m'\]"):
        long_blocks.design_blocks("small", sizes=("size-x",))
    with pytest.raises(ValueError, match="later seed blocks are"):
        long_blocks.design_blocks("small", sizes=("size-s",), later=True)


def test_a_size_whose_design_is_not_trained_is_read_at_the_horizon_it_extends(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    from scalinglab.compute import dataset_path, save_dataset

    def store(cfg, x):
        key = long_blocks.sweep_key(cfg)
        ds = xr.Dataset({"x": ("seed", [x] * len(cfg.seeds))}, coords={"seed": list(cfg.seeds)})
        save_dataset(
            ds, dataset_path("sparsity_laws", f"sweep-{cfg.compute_class}", key), config=key
        )

    old = long_configs("small", device="cuda", previous=True)["size-m"]
    assert old.tokens < long_configs("small")["size-m"].tokens  # m's design extends 500
    store(old, 1.0)
    store(long_extra_configs("small", device="cuda", previous=True)["size-m"], 2.0)
    got = long_runs.cached_long("small")["size-m"]
    assert got["seed"].values.tolist() == [0, 1, 2, 3, 4]
    assert got.attrs["design_tokens_per_param"] == 2000
    # once the design's own first block is there, it is read instead
    store(long_configs("small", device="cuda")["size-m"], 9.0)
    got = long_runs.cached_long("small")["size-m"]
    assert got["x"].values.tolist() == [9.0] * 3 and "design_tokens_per_param" not in got.attrs
