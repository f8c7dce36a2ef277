"""The v3 extension's second stage at l: its block (cells and seeds only), its place in the
runner's plan, the runner's parts, and the resampling that sized it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import xarray as xr

from scalinglab.fitting import identification
from scalinglab.studies.rl import analysis, extension, extension_run, second_stage
from scalinglab.studies.rl.blocks import join_blocks
from scalinglab.studies.rl.config import sweep_config
from scalinglab.studies.rl.stopping import EquivalenceRule, run_outcomes

DATA = Path(__file__).resolve().parents[1] / "data/rl_scaling"


def test_second_stage_block_differs_from_v3_only_in_cells_and_seeds():
    v3 = sweep_config("v3")
    first = extension.extension_blocks()
    ((name, b),) = second_stage.second_stage_blocks().items()
    assert name == "ext-l2" and list(second_stage.design_blocks()) == [*first, name]
    back = dataclasses.replace(
        b, sizes=v3.sizes, variants=v3.variants, variant_sizes=v3.variant_sizes, seeds=v3.seeds
    )
    assert back.to_dict() == v3.to_dict()
    assert [s.name for s in b.sizes] == ["l"] and list(b.variants) == ["baseline"]
    (size,) = b.sizes
    assert b.run_config(size, "baseline") == v3.run_config(size, "baseline")
    earlier = set(v3.seeds).union(*(set(c.seeds) for c in first.values()))
    assert b.seeds == tuple(range(20, 44)) and not earlier & set(b.seeds)
    warm = [b.warm_of(s) for s in b.seeds]
    assert warm.count(0) == warm.count(1) == second_stage.EXTRA // 2
    pairs = {(v3.warm_of(s), v3.rl_seed_of(s)) for s in v3.seeds}
    for c in first.values():
        pairs |= {(c.warm_of(s), c.rl_seed_of(s)) for s in c.seeds}
    new = {(b.warm_of(s), b.rl_seed_of(s)) for s in b.seeds}
    assert len(new) == len(b.seeds) and not new & pairs  # new RL seeds from each warm start
    assert b.warm_seeds() == v3.warm_seeds()
    paths = {extension_run.block_path(n, c).name for n, c in second_stage.design_blocks().items()}
    assert len(paths) == 3


def test_plan_keeps_the_first_stage_order_and_parts_share_every_run_once():
    blocks = second_stage.design_blocks()
    plan = extension_run._plan(blocks)
    first = extension.extension_blocks()
    old = [
        (n, v, s) for v, size in extension.ORDER for n in [f"ext-{size}"] for s in first[n].seeds
    ]
    assert plan[: len(old)] == old  # the first stage's order, as it ran
    assert plan[len(old) :] == [("ext-l2", "baseline", s) for s in range(20, 44)]
    parts = [plan[i::2] for i in range(2)]
    assert sorted(parts[0] + parts[1]) == sorted(plan) and not set(parts[0]) & set(parts[1])
    with pytest.raises(ValueError, match="part 2/2"):
        extension_run.run_extension(blocks, base_ds=xr.Dataset(), costs={}, part=(2, 2))


@pytest.mark.parametrize("part", ["2/2", "x/2", "1"])
def test_the_command_line_refuses_a_part_that_is_not_one(part, capsys):
    with pytest.raises(SystemExit) as exc:
        extension_run.main(["status", "--part", part])
    assert exc.value.code == 2 and "--part" in capsys.readouterr().err


def test_second_stage_joins_with_half_lr_skipped():
    """A block of one arm joins the design: its seeds read "skipped" in the other arm."""
    with xr.open_dataset(DATA / "grpo-v3-0772a14e38df.nc", engine="h5netcdf") as ds:
        base = ds.load()
    b = second_stage.second_stage_blocks()["ext-l2"]
    fake = base.sel(model_size=["l"], variant=["baseline"]).isel(seed=slice(0, 4))
    fake = fake.assign_coords(seed=list(b.seeds[:4]))
    fake.attrs["config_hash"] = "test"
    joined = join_blocks(base, {"ext-l2": fake})
    st = joined.status.sel(seed=list(b.seeds[:4]))
    assert (st.sel(model_size="l", variant="baseline") == "ok").all()
    assert (st.sel(model_size="l", variant="half_lr") == "skipped").all()
    assert (st.sel(model_size="xl") == "skipped").all()


def _l_baseline():
    from scalinglab.studies.rl.blocks import read_design

    with xr.open_dataset(DATA / "grpo-v3-0772a14e38df.nc", engine="h5netcdf") as ds:
        base = ds.load()
    design = read_design(base, extension.extension_blocks())
    curves = analysis.curves_frame(design)
    c = curves[(curves["variant"] == "baseline") & (curves["model_size"] == "l")]
    out = run_outcomes(c, rule=EquivalenceRule(min_steps=400))
    return c, set(out.loc[~out["unstable"].astype(bool), "seed"].astype(int))


def test_resampled_identification_without_extra_runs_is_the_direct_fit():
    c, stable = _l_baseline()
    got = second_stage.resampled_identification(c, stable_seeds=stable, extra=0, sims=1, reps=200)
    _, fits = analysis.fit_scalerl(c[c["seed"].isin(stable)], reps=200, seed=1)
    direct = identification(fits[("baseline", "l")], "A")
    assert got["p"] == float(direct.identified) and got["median_share"] == direct.share_at_bound
    # the stage's premise: 5 stable runs at l, A not identified (over 20% of refits at 1)
    assert len(stable) == 5 and got["p"] == 0.0 and got["median_share"] > 0.2
    with pytest.raises(ValueError, match="whole pair"):
        second_stage.resampled_identification(c, stable_seeds=stable, extra=3, sims=1)
