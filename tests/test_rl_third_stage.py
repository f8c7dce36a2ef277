"""The v3 design's third stage: new base models at s and xl (cells, seeds and warm starts
only), their place in the runner's plan and in the joined design, and the sizing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import xarray as xr

from scalinglab.studies.rl import extension_run, second_stage, third_stage
from scalinglab.studies.rl.blocks import join_blocks
from scalinglab.studies.rl.config import sweep_config

DATA = Path(__file__).resolve().parents[1] / "data/rl_scaling"


def test_third_stage_blocks_differ_from_v3_only_in_cells_seeds_and_warm_starts():
    v3 = sweep_config("v3")
    blocks = third_stage.third_stage_blocks()
    assert list(blocks) == ["ext-ws-s", "ext-ws-xl"]
    assert list(third_stage.design_blocks()) == [*second_stage.design_blocks(), *blocks]
    earlier = set(v3.seeds).union(*(set(c.seeds) for c in second_stage.design_blocks().values()))
    seen: set[int] = set()
    for name, b in blocks.items():
        back = dataclasses.replace(
            b,
            sizes=v3.sizes,
            variants=v3.variants,
            variant_sizes=v3.variant_sizes,
            seeds=v3.seeds,
            warm_starts=v3.warm_starts,
            warm_start0=0,
        )
        assert back.to_dict() == v3.to_dict()  # the v3 recipe, nothing else
        assert [s.name for s in b.sizes] == [name.removeprefix("ext-ws-")]
        assert list(b.variants) == ["baseline"]
        # new base models (warm-start seeds 2-7), one RL seed each, new rollout streams
        assert b.warm_seeds() == list(range(2, 8))
        assert [b.warm_of(s) for s in b.seeds] == list(range(2, 8))
        assert not (earlier | seen) & set(b.seeds)
        seen |= set(b.seeds)
    # a config without a later first warm start keeps its hash (the committed data's key)
    assert "warm_start0" not in v3.to_dict()
    paths = {extension_run.block_path(n, c).name for n, c in third_stage.design_blocks().items()}
    assert len(paths) == 5


def test_the_runner_plans_the_new_base_models_last_and_checks_none_against_v3():
    blocks = third_stage.design_blocks()
    plan = extension_run._plan(blocks)
    assert plan[: len(extension_run._plan(second_stage.design_blocks()))] == (
        extension_run._plan(second_stage.design_blocks())
    )
    assert plan[-12:] == [
        (n, "baseline", s) for n in ("ext-ws-s", "ext-ws-xl") for s in blocks[n].seeds
    ]
    with xr.open_dataset(DATA / "grpo-v3-0772a14e38df.nc", engine="h5netcdf") as ds:
        base = ds.load()
    # warm start 2 was never made by v3: nothing to match, so no error
    extension_run.check_warm(base, "s", 2, object())


def test_new_base_models_join_the_design_as_warm_starts_of_their_own():
    with xr.open_dataset(DATA / "grpo-v3-0772a14e38df.nc", engine="h5netcdf") as ds:
        base = ds.load()
    b = third_stage.third_stage_blocks()["ext-ws-s"]
    fake = base.sel(model_size=["s"], variant=["baseline"]).isel(seed=slice(0, 2))
    fake = fake.assign_coords(
        seed=list(b.seeds[:2]), warm_start=("seed", [b.warm_of(s) for s in b.seeds[:2]])
    )
    fake.attrs["config_hash"] = "test"
    joined = join_blocks(base, {"ext-ws-s": fake})
    ws = joined.warm_start.sel(seed=list(b.seeds[:2])).values
    assert list(ws) == [2, 3] and set(joined.warm_start.values) == {0, 1, 2, 3}
    assert (joined.status.sel(seed=list(b.seeds[:2]), model_size="xl") == "skipped").all()


def test_the_sizing_rule_picks_the_fewest_warm_starts_with_power_at_least_0_8():
    power = {w: third_stage.rise_power(w, -0.42, sims=4000)[0] for w in (6, 8)}
    assert power[6] < 0.8 <= power[8]
    low, high = third_stage.rise_power(8, 0.0, sims=4000)
    assert low < 0.05 and high < 0.05  # no rise: each end rejects about 2.5%


def test_the_committed_design_has_eight_base_models_at_s_and_xl():
    """The third stage's stored blocks join v3 and its first two stages: s and xl each
    read 8 base models (warm starts 0-7), m and l keep their 2."""
    from scalinglab.studies.rl.config import sweep_config
    from scalinglab.studies.rl.report_data import load_sweep

    ds = load_sweep(sweep_config("v3"))
    ok = ds.status.sel(variant="baseline") == "ok"
    for size, warm in {"s": range(8), "m": range(2), "l": range(2), "xl": range(8)}.items():
        got = set(ds.warm_start.values[ok.sel(model_size=size).values].tolist())
        assert got == set(warm), size
