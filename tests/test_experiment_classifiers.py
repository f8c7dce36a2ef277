"""The classifiers benchmark of the interval-estimates study (tiny configs, in-process)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from scalinglab.errors import ParameterError
from scalinglab.studies.intervals import classifiers as C

# every test here shares a module fixture that trains or sweeps for tens of seconds
pytestmark = pytest.mark.slow

SMALL = dict(algorithms=("sgd", "lbfgs"), tasks=("iris", "wine", "xor"), runs=4)


def _run(config, **kw):
    return C.run_experiment(config, scheduler="sync", progress=False, **kw)


@pytest.fixture(scope="module")
def tiny():
    return _run(C.experiment_config("tiny", seed=0))


@pytest.fixture(scope="module")
def small_cfg():
    return C.experiment_config("tiny", seed=3, **SMALL)


@pytest.fixture(scope="module")
def small(small_cfg):
    return _run(small_cfg)


def test_tiny_shapes_dims_coords(tiny):
    cfg = C.experiment_config("tiny")
    assert len(cfg["tasks"]) >= 8
    assert tiny["score"].dims == ("algorithm", "run", "task")
    assert tiny["accuracy"].shape == (len(cfg["algorithms"]), cfg["runs"], len(cfg["tasks"]))
    assert list(tiny.algorithm.values) == cfg["algorithms"]
    assert list(tiny.task.values) == cfg["tasks"]
    assert list(tiny.run.values) == list(range(cfg["runs"]))
    assert tiny["reference_accuracy"].dims == ("run", "task")
    assert tiny["reference"].dims == ("task",) and tiny["chance"].dims == ("task",)
    assert not np.isnan(tiny["accuracy"]).any() and not np.isnan(tiny["reference_accuracy"]).any()
    acc = tiny["accuracy"].values
    assert ((acc >= 0) & (acc <= 1)).all()
    # runs differ (a run is a real seed): not every cell is constant over runs
    assert float(tiny["accuracy"].std("run").max()) > 0


def test_compute_classes_grow():
    sizes = [C.experiment_config(c) for c in ("tiny", "small", "medium", "large")]
    assert [s["runs"] for s in sizes] == sorted(s["runs"] for s in sizes)
    assert sizes[1]["runs"] >= 20 and len(sizes[1]["tasks"]) >= 8
    assert len(sizes[1]["algorithms"]) >= 4


def test_same_seed_identical_other_seed_differs(small, small_cfg):
    again = _run(small_cfg)
    xr.testing.assert_identical(small, again)
    other = _run(C.experiment_config("tiny", seed=4, **SMALL))
    assert not np.array_equal(small["accuracy"].values, other["accuracy"].values)


def test_order_and_chunking_independent(small, small_cfg):
    n = len(C.build_items(small_cfg, chunk_runs=1))
    perm = np.random.default_rng(1).permutation(n)
    shuffled = _run(small_cfg, chunk_runs=1, items_order=perm)
    xr.testing.assert_identical(small, shuffled)


def test_cell_independent_of_other_algorithms_and_tasks(small, small_cfg):
    sub = _run(C.experiment_config("tiny", seed=3, algorithms=("lbfgs",), tasks=("xor",), runs=4))
    np.testing.assert_array_equal(
        sub["accuracy"].sel(algorithm="lbfgs", task="xor").values,
        small["accuracy"].sel(algorithm="lbfgs", task="xor").values,
    )


def test_normalization_hand_checkable(small):
    # iris: three balanced classes of 50 -> majority rate exactly 1/3
    assert small["chance"].sel(task="iris") == pytest.approx(1 / 3)
    a = float(small["accuracy"].sel(algorithm="sgd", run=2, task="wine"))
    ref = float(np.mean(small["reference_accuracy"].sel(task="wine").values))
    chance = 71 / 178  # wine: class sizes 59, 71, 48
    assert float(small["score"].sel(algorithm="sgd", run=2, task="wine")) == pytest.approx(
        (a - chance) / (ref - chance)
    )


def test_reasonable_learner_well_above_chance(small):
    # wine is easy: L-BFGS with 5 iterations and the SVM reference both beat chance (~0.40) widely
    assert float(small["accuracy"].sel(algorithm="lbfgs", task="wine").mean()) > 0.85
    assert float(small["reference"].sel(task="wine")) > 0.9
    assert float(small["score"].sel(algorithm="lbfgs", task="wine").mean()) > 0.8
    # and the linear baseline cannot learn XOR (stays near chance) while the SVM can
    assert float(small["reference"].sel(task="xor")) > 0.85


def test_seeds_follow_names_not_positions():
    a = C.derived_seed(0, "iris", 1, "adam")
    assert a == C.derived_seed(0, "iris", 1, "adam")
    assert (
        len(
            {
                a,
                C.derived_seed(0, "iris", 2, "adam"),
                C.derived_seed(0, "wine", 1, "adam"),
                C.derived_seed(1, "iris", 1, "adam"),
                C.derived_seed(0, "iris", 1, "sgd"),
            }
        )
        == 5
    )


def test_bad_config_and_failures_are_loud():
    with pytest.raises(ParameterError, match="compute_class"):
        C.experiment_config("huge")
    with pytest.raises(ParameterError, match="unknown task"):
        C.experiment_config("tiny", tasks=("mnist",))
    with pytest.raises(ParameterError, match="unknown experiment options"):
        C.experiment_config("tiny", epochs=3)
    cfg = C.experiment_config("tiny", algorithms=("sgd",), tasks=("iris",), runs=1)
    cfg["max_iter"] = -1  # every MLP fit fails (the SVM reference has no budget)
    with pytest.raises(
        RuntimeError, match=r"1 benchmark task\(s\) failed:\n  sgd on iris, runs \[0\]"
    ):
        _run(cfg)


def test_cached_dataset_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    first = C.benchmark(compute_class="tiny", scheduler="sync", progress=False)
    files = list(tmp_path.glob("data/**/interval_estimates/classifiers-tiny-*.nc"))
    assert len(files) == 1
    assert first.attrs["config_hash"] in files[0].name

    def boom(*a, **k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(C, "run_experiment", boom)
    again = C.benchmark(compute_class="tiny", scheduler="sync", progress=False)
    xr.testing.assert_identical(first, again)
    with pytest.raises(AssertionError, match="recomputed"):
        C.benchmark(compute_class="tiny", scheduler="sync", progress=False, rerun=True)


def test_load_or_run_normalizes_user_scores_by_references(tmp_path):
    scores = tmp_path / "s.csv"
    scores.write_text("algorithm,task,run,score\na,x,0,5\na,x,1,7\na,y,0,0.2\na,y,1,0.4\n")
    refs = tmp_path / "r.csv"
    refs.write_text("task,random,reference\nx,5,9\ny,0,0.4\n")
    out = C.load_or_run(str(scores), references=str(refs), progress=False)
    np.testing.assert_allclose(out.sel(algorithm="a", task="x").values, [0.0, 0.5])
    np.testing.assert_allclose(out.sel(algorithm="a", task="y").values, [0.5, 1.0])
    assert "normalized by" in out.attrs["source"]
    with pytest.raises(ParameterError, match="pass scores"):
        C.load_or_run("", references=str(refs), progress=False)


class _Killed(BaseException):
    """A killed benchmark (not an ``Exception``, so not a failed task)."""


def test_a_killed_benchmark_resumes_chunk_by_chunk(tmp_path, monkeypatch, small):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    real, done, kill_after = C.fit_item, [], [5]

    def counted(item):
        if kill_after and len(done) == kill_after[0]:
            raise _Killed
        done.append(item)
        return real(item)

    monkeypatch.setattr(C, "fit_item", counted)
    config = C.experiment_config("tiny", seed=3, **SMALL)  # the `small` fixture's benchmark
    monkeypatch.setattr(C, "experiment_config", lambda compute_class, seed: config)
    with pytest.raises(_Killed):
        C.benchmark(compute_class="tiny", seed=3, scheduler="sync", progress=False)
    first, kill_after[:] = list(done), []
    done.clear()
    ds = C.benchmark(compute_class="tiny", seed=3, scheduler="sync", progress=False)
    n_items = len(C.build_items(config))
    assert len(first) == 5 and len(done) == n_items - 5, "only the unfinished chunks ran"
    assert not set(done) & set(first)
    xr.testing.assert_identical(ds["score"].drop_attrs(), small["score"].drop_attrs())
