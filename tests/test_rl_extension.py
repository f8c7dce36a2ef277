"""The v3 seed extension: its design (seeds only), its sizing, and v3 + extension read as one."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
from pathlib import Path

import pytest
import xarray as xr

from scalinglab.compute import dataset_path
from scalinglab.studies.rl import analysis, blocks, extension, extension_run, scope
from scalinglab.studies.rl.config import sweep_config
from scalinglab.studies.rl.grpo import GRPOConfig
from scalinglab.studies.rl.run import WarmupConfig
from scalinglab.studies.rl.stopping import EquivalenceRule, run_outcomes
from scalinglab.studies.rl.sweep import run_sweep

V3_FILE = "data/rl_scaling/grpo-v3-0772a14e38df.nc"
#: The committed v3 Dataset of this checkout (a test may move the data root elsewhere).
V3 = Path(__file__).resolve().parents[1] / V3_FILE


def _v3() -> xr.Dataset:
    with xr.open_dataset(V3, engine="h5netcdf") as ds:
        return ds.load()


def test_extension_blocks_differ_from_v3_only_in_seeds_and_cells():
    v3 = sweep_config("v3")
    ext = extension.extension_blocks()
    assert list(ext) == ["ext-l", "ext-xl"]
    seen = set(v3.seeds)
    pairs = {(v3.warm_of(s), v3.rl_seed_of(s)) for s in v3.seeds}
    for name, b in ext.items():
        back = dataclasses.replace(
            b, sizes=v3.sizes, variants=v3.variants, variant_sizes=v3.variant_sizes, seeds=v3.seeds
        )
        assert back.to_dict() == v3.to_dict(), name
        assert list(b.variants) == ["baseline", "half_lr"]
        (size,) = b.sizes
        assert len(b.seeds) == extension.EXTRA_RUNS[size.name]
        for v in b.variants:  # the same recipe, run for run
            assert b.run_config(size, v) == v3.run_config(size, v)
        assert not seen & set(b.seeds), name  # run indices (rollout streams) are new
        seen |= set(b.seeds)
        warm = [b.warm_of(s) for s in b.seeds]
        assert sorted(set(warm)) == [0, 1] and warm.count(0) == warm.count(1)
        new = {(b.warm_of(s), b.rl_seed_of(s)) for s in b.seeds}
        assert len(new) == len(b.seeds) and not new & pairs
        pairs |= new
        assert b.warm_seeds() == v3.warm_seeds()  # the same warm starts
        assert extension_run.block_path(name, b) != dataset_path(
            "rl_scaling", "grpo-v3", v3.to_dict()
        )
    hashes = {extension_run.block_path(n, b).name for n, b in ext.items()}
    assert len(hashes) == 2
    # a block's run index must start on a warm-start boundary
    with pytest.raises(ValueError, match="multiple of warm_starts"):
        dataclasses.replace(v3, seeds=(5, 6, 7, 8))


def test_sizing_from_v3_stable_shares_and_cost():
    r = extension.extra_runs_needed(1, 4)
    assert r["extra"] == 12 and r["p"] == pytest.approx(0.8416, abs=1e-3)
    assert extension.p_enough(1, 10, 0.25) < extension.TARGET  # 10 would not do
    assert r["p_lo"] < 0.2 < 0.99 < r["p_hi"]  # the Wilson ends, stated in the docstring
    assert extension.extra_runs_needed(2, 4)["extra"] == 4
    assert extension.extra_runs_needed(4, 4)["extra"] == 0
    assert extension.extra_runs_needed(0, 4)["extra"] is None
    table = extension.sizing_table()
    for size in ("l", "xl"):  # the primary arm decides the number of extra runs
        assert table.loc[("baseline", size), "extra"] == extension.EXTRA_RUNS[size]
    # the stable counts the sizing read are the committed v3 data's, by the scope rule
    ds = _v3()
    outcomes = run_outcomes(analysis.curves_frame(ds), rule=EquivalenceRule(min_steps=400))
    tab = scope.run_scope(outcomes)
    for key, (k, n) in extension.V3_STABLE.items():
        assert (tab.loc[key, "stable"], tab.loc[key, "runs"]) == (k, n), key
    cost = extension.measured_cost(ds)
    assert cost.loc[("baseline", "l"), "mean_min"] == pytest.approx(4.5, abs=0.05)
    assert cost.loc[("baseline", "xl"), "mean_min"] == pytest.approx(21.1, abs=0.05)
    hours = extension.planned_core_hours(ds)
    assert hours["baseline"] == pytest.approx(2.3, abs=0.05)
    assert 4 < hours["total"] < 6  # about 5 core-hours, as stated


def test_v3_reads_unchanged_without_extension_runs(tmp_path, monkeypatch):
    """No finished extension run: the report's input is the committed v3 Dataset, as is."""
    from scalinglab.studies.rl.report_data import load_sweep

    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    (tmp_path / "data/rl_scaling").mkdir(parents=True)
    shutil.copy(V3, tmp_path / V3_FILE)
    got = load_sweep(sweep_config("v3"))
    xr.testing.assert_identical(got, _v3())
    assert "block" not in got.coords and "seed_blocks" not in got.attrs


def _tiny(**kw):
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


def test_extension_runs_resume_and_join_the_base_design(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    base_cfg = _tiny()
    base = run_sweep(base_cfg, scheduler="sync", progress=False)
    ext = extension.extension_blocks(base_cfg)  # sizes s, m stand in for l, xl
    assert [b.seeds for b in ext.values()] == [tuple(range(4, 16)), tuple(range(16, 20))]
    assert blocks.read_design(base, ext) is base  # nothing finished yet
    log = io.StringIO()
    costs = {
        "sizes": {s.name: {"warmup_s": 1.0, "step_s": 0.1, "eval_s": 0.1} for s in base_cfg.sizes}
    }
    left = extension_run.run_extension(ext, base_ds=base, costs=costs, file=log, max_runs=3)
    assert left == 32 - 3 and "ETA" in log.getvalue()
    assert "warm-ups 2 of 2, runs baseline 3 of 12" in extension_run.status_lines(ext)[0]

    joined = blocks.read_design(base, ext)
    assert joined.seed.values.tolist() == list(range(16))  # ext-xl has no finished run yet
    assert joined.block.values.tolist() == ["v3"] * 4 + ["ext-s"] * 12
    for var in ("pass_rate", "r0", "status", "warmup_steps"):  # v3's runs untouched
        xr.testing.assert_identical(
            joined[var].isel(seed=slice(0, 4)).drop_vars("block"), base[var]
        )
    st = joined.status.sel(seed=slice(4, None))
    assert (st.sel(model_size="s", variant="baseline").values[:3] == "ok").all()
    assert (st.sel(model_size="s", variant="baseline").values[3:] == "pending").all()
    assert (st.sel(model_size="m") == "skipped").all() and (
        st.sel(variant="len_cap") == "skipped"
    ).all()
    info = json.loads(joined.attrs["seed_blocks"])
    assert [b["block"] for b in info] == ["v3", "ext-s"]
    assert info[0]["config_hash"] == base.attrs["config_hash"]
    assert (
        info[1]["config_hash"]
        == extension_run.block_path("ext-s", ext["ext-s"]).stem.split("-")[-1]
    )
    assert info[1]["runs_finished"] == 3 and info[1]["train_machine"]
    assert info[1]["git_commit"] == base.attrs["git_commit"]
    # the same warm starts: R0 of the new runs is the base design's
    r0 = joined.r0.sel(model_size="s")
    for s in (4, 5, 6):
        w = int(joined.warm_start.sel(seed=s))
        assert float(r0.sel(seed=s)) == float(r0.sel(seed=2 * w))
    # the analysis reads the new runs with the old ones
    curves = analysis.curves_frame(joined)
    runs = curves.groupby(["model_size", "variant"])["seed"].nunique()
    assert runs[("s", "baseline")] == 7 and runs[("m", "baseline")] == 4
    outcomes = run_outcomes(curves, rule=EquivalenceRule(min_steps=2))
    by_block = blocks.runs_by_block(outcomes, joined.block.to_series())
    assert by_block.loc[("baseline", "s", "ext-s"), "runs"] == 3
    assert by_block.loc[("baseline", "s", "v3"), "runs"] == 4
    text = scope.regime_text(
        scope.run_scope(outcomes), variant="baseline", sizes=["s", "m"], by_block=by_block
    )
    k_v3, k_ext = (int(by_block.loc[("baseline", "s", b), "stable"]) for b in ("v3", "ext-s"))
    assert f"s {k_v3 + k_ext} of 7" in text
    assert f"[v3 {k_v3} of 4, ext-s {k_ext} of 3]" in text and "m 4 of 4" in text

    runs_text = blocks.design_runs_text(
        curves, joined.block.to_series(), variant="baseline", sizes=["s", "m"]
    )
    assert runs_text == "; runs per size and block (baseline): s 7 [v3 4, ext-s 3], m 4"
    assert blocks.design_runs_text(curves, None, variant="baseline", sizes=["s"]) == ""

    # resume: stored warm-ups and runs are not trained again; the next runs in order are
    from scalinglab.studies.rl import sweep as rl_sweep

    calls, real = [], rl_sweep._rl_task

    def spy(item):
        calls.append((item[2], item[3]))
        return real(item)

    def boom(item):
        raise AssertionError("a stored warm-up was made again")

    monkeypatch.setattr(rl_sweep, "_rl_task", spy)
    monkeypatch.setattr(rl_sweep, "_warm_task", boom)
    left = extension_run.run_extension(ext, base_ds=base, costs=costs, file=log, max_runs=2)
    assert calls == [("baseline", 7), ("baseline", 8)] and left == 32 - 5


def test_join_refuses_overlap_and_other_warm_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    base = run_sweep(_tiny(), scheduler="sync", progress=False)
    with pytest.raises(ValueError, match="seed blocks overlap.*repeats seeds \\[0, 1, 2, 3\\]"):
        blocks.join_blocks(base, {"again": base})
    later = base.assign_coords(seed=base.seed.values + 4)
    joined = blocks.join_blocks(base, {"later": later})
    assert joined.sizes["seed"] == 8 and json.loads(joined.attrs["seed_blocks"])[1]["seeds"] == [
        4,
        5,
        6,
        7,
    ]
    moved = later.copy()
    moved["warmup_steps"] = later.warmup_steps + 2
    with pytest.raises(ValueError, match="warm start 0 at s is not the base design's"):
        blocks.join_blocks(base, {"later": moved})
    other_lr = later.assign_coords(lr=later.lr * 2)
    with pytest.raises(ValueError, match="lr at s differs"):
        blocks.join_blocks(base, {"later": other_lr})
