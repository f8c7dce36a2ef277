"""The optimizer sweep's design: cells it leaves out or adds, the pinned corpus, the
matched-budget reading of the size trend and the pooled schedule control."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.compute import dataset_path
from scalinglab.fitting.speedup import compute_speedups
from scalinglab.paths import data_dir
from scalinglab.studies.optimizers import analysis, controls, matching
from scalinglab.studies.optimizers.config import MEDIUM_CORPUS, check_corpus
from scalinglab.studies.optimizers.sweep import sweep_config


def test_runs_cell_follows_the_medium_design():
    sweep = sweep_config("medium")
    assert sweep.multiples == (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
    for size in ("w16", "w32"):
        assert [m for m in sweep.multiples if sweep.runs_cell("adamw", size, m)] == list(
            sweep.multiples
        )
        assert [m for m in sweep.multiples if sweep.runs_cell("muon", size, m)] == [
            0.5,
            1.0,
            2.0,
            4.0,
        ]
    assert [m for m in sweep.multiples if sweep.runs_cell("soap", "w96", m)] == [1.0]
    assert [m for m in sweep.multiples if sweep.runs_cell("adamw", "w96", m)] == [
        0.5,
        1.0,
        2.0,
        4.0,
    ]


def test_design_fields_are_checked():
    sweep = sweep_config("medium")
    with pytest.raises(ValueError, match="not in the sweep"):
        dataclasses.replace(sweep, others_multiples={"w999": (1.0,)})
    with pytest.raises(ValueError, match="tune_multiple"):
        dataclasses.replace(sweep, others_multiples={"w96": (2.0,)})  # no 1x: nothing tuned
    with pytest.raises(ValueError, match="among data_multiples"):
        dataclasses.replace(sweep, others_multiples={"w96": (1.0, 8.0)})


def test_design_fields_at_their_defaults_keep_older_hashes():
    small = sweep_config("small")
    d = small.to_dict()
    assert not {"baseline_extra_multiples", "others_multiples", "corpus_pin"} & set(d)
    assert small.multiples == small.data_multiples
    assert all(small.runs_cell(o, "s", m) for o in small.optimizers for m in small.multiples)


def test_medium_config_names_its_corpus_without_building_it(monkeypatch):
    import scalinglab.studies.optimizers.config as config

    def refuse(*a, **k):
        raise AssertionError("the pinned config must not build the corpus")

    monkeypatch.setattr(config, "build_corpus", refuse)
    assert sweep_config("medium").to_dict()["corpus_hash"] == MEDIUM_CORPUS


def test_medium_dataset_is_committed_under_its_config(monkeypatch):
    monkeypatch.delenv("SCALINGLAB_ROOT", raising=False)
    if not (data_dir() / "optimizer_comparison").is_dir():
        pytest.skip("no committed data in this checkout")
    path = dataset_path("optimizer_comparison", "sweep-medium", sweep_config("medium").to_dict())
    if not path.exists():
        pytest.skip(f"the medium sweep is still running ({path.name} not committed yet)")
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        assert ds.attrs["corpus_hash"] == MEDIUM_CORPUS
        st = ds.status.load()
    assert (st.sel(optimizer="muon", model_size="w96", data_multiple=2.0) == "skipped").all()
    assert (st.sel(optimizer="adamw", model_size="w32", data_multiple=16.0) != "skipped").all()


def test_a_corpus_other_than_the_pin_is_refused():
    sweep = dataclasses.replace(sweep_config("tiny"), corpus_pin="0" * 64)
    with pytest.raises(RuntimeError, match=r"trained on corpus 000000000000.*\.\[test,lint\]"):
        check_corpus(sweep)
    check_corpus(sweep_config("tiny"))  # no pin: nothing to check


@pytest.mark.slow  # the session's tiny sweep
def test_tiny_sweep_marks_left_out_cells_and_runs_the_extra_budget(optimizer_tiny_sweep):
    sweep, ds = optimizer_tiny_sweep.sweep, optimizer_tiny_sweep.ds
    st = ds.status
    assert list(ds.data_multiple.values) == [0.5, 1.0, 2.0, 4.0]
    assert (
        st.sel(model_size="xs2", data_multiple=0.5).drop_sel(optimizer="adamw") == "skipped"
    ).all()
    assert (st.sel(model_size="xs2", data_multiple=0.5, optimizer="adamw") == "ok").all()
    assert (st.sel(model_size="xs", data_multiple=4.0, optimizer="adamw") == "ok").all()
    assert (
        st.sel(model_size="xs", data_multiple=4.0).drop_sel(optimizer="adamw") == "skipped"
    ).all()
    n_skip = int((st == "skipped").sum())
    assert ds.attrs["n_skipped"] == n_skip and ds.attrs["n_failed"] == 0
    assert np.isnan(ds.final_loss.where(st == "skipped")).all()
    run_any = (st != "skipped").any(["optimizer", "seed"])
    assert not bool(run_any.sel(model_size="xs2", data_multiple=4.0))
    assert sweep.runs_cell("adamw", "xs", 4.0) and not sweep.runs_cell("muon", "xs", 4.0)


def _table(mults_by_size: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    """Losses from a known law per optimizer: AdamW ``2 D^-0.3 + 1``, others faster."""
    rng = np.random.default_rng(0)
    rows = []
    gain = {"adamw": 1.0, "muon": 1.5, "soap": 1.2}
    for size, per in mults_by_size.items():
        for opt, mults in per.items():
            for m in mults:
                for s in range(3):
                    loss = 2 * (gain[opt] * m) ** -0.3 + 1 + rng.normal(0, 0.002)
                    rows.append((opt, size, m, str(s), loss))
    return pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "seed", "loss"])


def test_matched_keeps_the_budgets_every_size_shares():
    full = [0.5, 1.0, 2.0, 4.0]
    t = _table(
        {
            "a": {"adamw": [*full, 8.0], "muon": full, "soap": full},
            "b": {"adamw": full, "muon": [1.0], "soap": [1.0]},
        }
    )
    res = compute_speedups(t, bootstrap=50, seed=0)
    m, keep = matching.matched(res)
    assert keep == [1.0]
    assert set(m.cells.data_multiple) == {1.0} and len(m.cells) == 6
    assert m.draws is not None and m.draws.shape == (50, 6)
    # the kept columns are the original cells' replicates
    for i, r in m.cells.iterrows():
        j = res.cells.index[
            (res.cells.optimizer == r.optimizer)
            & (res.cells.model_size == r.model_size)
            & (res.cells.data_multiple == r.data_multiple)
        ][0]
        np.testing.assert_array_equal(m.draws[:, i], res.draws[:, j])
    per = analysis.speedup_by_size(m)
    muon = per[per.optimizer == "muon"].set_index("model_size").speedup
    assert muon.loc["a"] == pytest.approx(1.5, rel=0.05) and muon.loc["b"] == pytest.approx(
        1.5, rel=0.05
    )
    complete = compute_speedups(
        _table({"a": {"adamw": full, "muon": full}, "b": {"adamw": full, "muon": full}}),
        bootstrap=20,
    )
    same, keep = matching.matched(complete)
    assert same is complete and keep == full


def test_compared_keeps_each_sizes_budgets_the_others_ran():
    full = [0.5, 1.0, 2.0, 4.0]
    t = _table(
        {"a": {"adamw": [*full, 8.0, 16.0], "muon": full}, "b": {"adamw": full, "muon": [1.0]}}
    )
    res = compute_speedups(t, bootstrap=30, seed=0)
    c = matching.compared(res)
    got = c.cells.groupby(["optimizer", "model_size"]).data_multiple.apply(list).to_dict()
    assert got == {
        ("adamw", "a"): full,
        ("adamw", "b"): [1.0],
        ("muon", "a"): full,
        ("muon", "b"): [1.0],
    }
    floor = controls.noise_floor(c).set_index("model_size")
    assert floor.speedup.loc["b"] == pytest.approx(
        float(
            res.cells.query(
                "optimizer == 'adamw' and model_size == 'b' and data_multiple == 1"
            ).speedup.iloc[0]
        )
    )


def _control_ds(n_cells: int, *, flip_main: bool) -> xr.Dataset:
    """Three optimizers x cells x 4 seeds x 4 steps: the main schedule's mid-run ranking is
    reversed at the end when ``flip_main``; the control keeps its order."""
    n_o, S, M, R, E = 3, 1, n_cells, 4, 4
    rng = np.random.default_rng(1)
    base = np.array([3.0, 2.0, 1.0])[:, None, None, None, None] * np.ones((n_o, S, M, R, E))
    steps = np.linspace(2, 1, E)
    main = base * steps + rng.normal(0, 1e-3, (n_o, S, M, R, E))
    if flip_main:
        main[..., E // 2 - 1] = main[::-1, ..., E // 2 - 1]
    ctrl = base * steps + rng.normal(0, 1e-3, (n_o, S, M, R, E))
    dims = ("optimizer", "model_size", "data_multiple", "seed", "step")
    return xr.Dataset(
        {"loss": (dims, main), "control_loss": (dims, ctrl)},
        coords={
            "optimizer": ["a", "b", "c"],
            "model_size": ["s"],
            "data_multiple": [float(2**k) for k in range(M)],
            "seed": list(range(R)),
            "step": range(E),
        },
        attrs={"control_schedule": "constant"},
    )


def test_schedule_control_pools_its_cells():
    out = controls.schedule_control(_control_ds(2, flip_main=True), reps=200, seed=0)
    assert list(out.model_size) == ["s", "s", "pooled"]
    pooled = out.iloc[-1]
    assert pooled["diff"] == pytest.approx(out.iloc[:2]["diff"].mean())
    assert pooled["diff"] == pytest.approx(2.0)  # tau -1 mid-run under the main, 1 under control
    assert pooled.lo > 0
    one = controls.schedule_control(_control_ds(1, flip_main=False), reps=50, seed=0)
    assert "pooled" not in set(one.model_size)


def test_at_sizes_keeps_those_sizes_and_their_replicates():
    full = [0.5, 1.0, 2.0, 4.0]
    t = _table({s: {"adamw": full, "muon": full} for s in ("a", "b", "c")})
    res = compute_speedups(t, bootstrap=20, seed=0)
    two = matching.at_sizes(res, ["a", "c"])
    assert set(two.cells.model_size) == {"a", "c"} and two.draws.shape == (20, len(two.cells))
    keep = res.cells.model_size.isin(["a", "c"]).to_numpy()
    np.testing.assert_array_equal(two.draws, res.draws[:, keep])
    assert matching.at_sizes(res, ["a", "b", "c"]) is res
