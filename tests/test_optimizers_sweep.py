"""The tiny optimizer study end to end: tune, train, cache, speedups, rankings, wall clock."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalinglab.fitting.loss_table import sweep_table
from scalinglab.fitting.speedup import compute_speedups
from scalinglab.studies.optimizers.analysis import (
    family_gap,
    leader_table,
    ranking_agreement,
    size_trend,
    wallclock_table,
)
from scalinglab.studies.optimizers.sweep import cell_hparams, run_sweep, sweep_config

# every test here shares a module fixture that trains or sweeps for tens of seconds
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny(optimizer_tiny_sweep):
    """``sweep_config("tiny")``, trained once for the session (``conftest.py``)."""
    shared = optimizer_tiny_sweep
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCALINGLAB_ROOT", str(shared.root))
        yield shared.sweep, shared.ds, shared.root


def test_dataset_dims_coords_and_provenance(tiny):
    sweep, ds, root = tiny
    assert dict(ds["loss"].sizes) == {
        "optimizer": len(sweep.optimizers),
        "model_size": 2,
        "data_multiple": len(sweep.multiples),
        "seed": 2,
        "step": sweep.n_evals,
    }
    assert list(ds.optimizer.values) == list(sweep.optimizers)
    ran = ds.status != "skipped"  # cells the design leaves out (tests/test_optimizers_design.py)
    assert (ds.status.values[ran.values] == "ok").all() and int(ds.attrs["n_failed"]) == 0
    assert np.isfinite(ds.final_loss.values[ran.values]).all()
    assert len(ds.attrs["corpus_hash"]) == 64 and ds.attrs["config_hash"]
    assert list(root.glob("data/**/optimizer_comparison/sweep-tiny-*.nc"))
    n = ds.n_params.values
    assert n[1] / n[0] > 1.8
    np.testing.assert_allclose(
        ds.tokens.values / (20 * n[:, None] * ds.data_multiple.values), 1.0, rtol=0.05
    )
    # the last evaluation is the end of training, at the schedule's end
    assert (ds.train_step.values[..., -1] == ds.steps.values).all()
    assert (ds.lr_factor.values[..., -1][ran.values] == 0.0).all()
    # more data -> lower final loss, on average (AdamW: it runs every budget at xs)
    fl = ds.final_loss.sel(optimizer="adamw", model_size="xs").mean("seed")
    assert fl.notnull().all() and (fl.diff("data_multiple") < 0).all()


def test_tuned_hyperparameters_and_path(tiny):
    sweep, ds, _ = tiny
    assert ds.sizes["evaluation"] > 0
    stages = set(ds.tuning_stage.values)
    assert {"base xs 1x", "retune xs2 1x"} <= stages
    for o in sweep.optimizers:
        assert ds.lr.sel(optimizer=o).values.min() in sweep.grid(o)["lr"]
    # cached: a second call loads the same numbers without retraining
    again = run_sweep(sweep, scheduler="sync", progress=False)
    np.testing.assert_array_equal(again.final_loss.values, ds.final_loss.values)


def test_cell_hparams_take_nearest_retuned_multiple():
    sweep = sweep_config("tiny", retune_multiples=(1.0, 2.0))
    tuned = {
        ("adamw", "xs", 1.0): {"lr": 1},
        ("adamw", "xs", 2.0): {"lr": 2},
        ("adamw", "xs2", 1.0): {"lr": 3},
        ("adamw", "xs2", 2.0): {"lr": 4},
    }
    assert cell_hparams(sweep, tuned, "adamw", sweep.sizes[1], 4.0) == {"lr": 4}
    assert cell_hparams(sweep, tuned, "adamw", sweep.sizes[0], 1.0) == {"lr": 1}


def test_analyses_run_on_the_sweep(tiny):
    _, full, _ = tiny
    # AdamW and Muon alone (every optimizer's tuning and runs are its own: this is the
    # two-optimizer sweep), so the family gap below has no scalar side
    ds = full.sel(optimizer=["adamw", "muon"])
    table = sweep_table(ds)
    assert len(table) == int((ds.status != "skipped").sum())
    res = compute_speedups(table, bootstrap=100, seed=0)
    assert set(res.fits) == {"xs", "xs2"}
    assert set(res.cells.status) <= {"ok", "below_asymptote", "no_baseline_fit"}
    per, trend = size_trend(res, dict(zip(ds.model_size.values, ds.n_params.values, strict=True)))
    assert set(trend.optimizer) == {"adamw", "muon"}
    assert len(per) == 4 and (per.n_params > 0).all()
    gap = family_gap(res, {"muon": "matrix", "nadamw": "scalar"})
    assert gap.empty  # no scalar optimizer besides the baseline in this sweep
    # with the baseline counted among the scalars (at 1), the ratio is Muon's own speedup
    with_base = family_gap(res, {"muon": "matrix"}, with_baseline=True).set_index("model_size")
    from scalinglab.studies.optimizers.analysis import geomean_by_size

    gm = geomean_by_size(res)[0]
    mean = gm[gm.complete].set_index(["optimizer", "model_size"]).speedup
    for s, r in with_base.iterrows():
        assert r.ratio == pytest.approx(mean[("muon", s)]) and r.scalar == "adamw"
        assert r.lo <= r.ratio <= r.hi
    tau = ranking_agreement(ds, reps=50)
    final = tau[tau.step == tau.groupby(["model_size", "data_multiple"]).step.transform("max")]
    assert (final.tau == 1.0).all()  # the end agrees with itself
    assert leader_table(ds).leader.isin(["adamw", "muon"]).all()
    wc = wallclock_table(ds, res)
    base = wc[wc.optimizer == "adamw"]
    np.testing.assert_allclose(base.time_ratio, 1.0)
    assert (wc.seconds_per_step > 0).all()
    other = wc[wc.optimizer != "adamw"]
    assert (other.ratio_lo <= other.time_ratio).all() and (other.time_ratio <= other.ratio_hi).all()
    assert (other.ratio_hi > other.ratio_lo).all()  # runs differ in time: a real interval
    again = wallclock_table(ds, res)
    pd.testing.assert_frame_equal(wc, again)  # seeded: same interval every call
    assert (other.ratio_method.str.startswith("percentile bootstrap over the sweep")).all()
    # a side-by-side timing replaces the runs' ratios where it covers a cell
    from scalinglab.studies.optimizers import step_times

    sweep = sweep_config("tiny")
    timing = step_times.measure(
        sweep, steps=2, rounds=2, optimizers=("adamw", "muon"), progress=False
    )
    assert dict(timing.seconds_per_step.sizes) == {"model_size": 2, "optimizer": 2, "round": 2}
    assert (timing.seconds_per_step > 0).all() and timing.attrs["rounds"] == 2
    timed = wallclock_table(ds, res, timing=timing)
    want = step_times.ratio_table(timing).set_index(["optimizer", "model_size"])
    for r in timed[timed.optimizer == "muon"].itertuples():
        assert r.time_ratio == pytest.approx(want.loc[("muon", r.model_size), "time_ratio"])
        assert r.ratio_method.startswith("timed side by side")
        assert r.wallclock_speedup == pytest.approx(r.token_speedup / r.time_ratio)
        # the seconds shown beside the ratio are the timing's own, not the runs'
        med = float(timing.seconds_per_step.sel(optimizer="muon", model_size=r.model_size).median())
        assert r.seconds_per_step == pytest.approx(med)
    # the baseline's row reads its own timing on both sides: a ratio of exactly 1
    for r in timed[timed.optimizer == "adamw"].itertuples():
        assert r.time_ratio == pytest.approx(1.0) and r.wallclock_speedup == pytest.approx(
            r.token_speedup
        )
