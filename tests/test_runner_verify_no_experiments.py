"""``scalinglab verify`` never runs an experiment: a re-run reads the committed results
under ``data/`` or is refused, naming the dataset it would have computed (issue 28: a
``verify --seeds`` of the GEMM study once re-timed its whole sweep into ``data/``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import scalinglab.cli as cli
from scalinglab.compute import NO_EXPERIMENTS_ENV, dataset_path
from scalinglab.errors import ExperimentRefused, StudyError
from scalinglab.runner import manifest as manifest_mod
from scalinglab.runner.pipeline import run_study
from scalinglab.runner.seeds import seed_robustness
from scalinglab.runner.verify import experiments_refused, refused_experiment
from scalinglab.sweeps import RunCache, cached_dataset, map_runs

FIXTURES = Path(__file__).parent / "fixtures" / "seed_studies"


def _files(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture()
def lab(tmp_path, monkeypatch):
    root = tmp_path / "lab"
    for sub in ("notebooks", "reports", "data"):
        (root / sub).mkdir(parents=True)
    monkeypatch.setenv("SCALINGLAB_ROOT", str(root))
    monkeypatch.delenv(NO_EXPERIMENTS_ENV, raising=False)
    return root


def test_a_cached_dataset_is_read_but_never_computed_under_verify(lab):
    calls = []

    def compute():
        calls.append(1)
        return xr.Dataset({"x": ("run", np.arange(3.0))})

    cached_dataset("st", "runs", {"seed": 0}, compute)  # committed before verify
    before = _files(lab / "data")
    with experiments_refused():
        again = cached_dataset("st", "runs", {"seed": 0}, compute)  # read: allowed
        with pytest.raises(ExperimentRefused) as err:
            cached_dataset("st", "runs", {"seed": 1}, compute)
    assert calls == [1] and again["x"].values.tolist() == [0.0, 1.0, 2.0]
    path = dataset_path("st", "runs", {"seed": 1})
    assert f"data/st/{path.name}" in str(err.value) and "seed=1" in str(err.value)
    assert _files(lab / "data") == before  # nothing written, not even a run folder
    assert NO_EXPERIMENTS_ENV not in __import__("os").environ  # restored on exit


def test_runs_not_stored_are_not_computed_under_verify(lab):
    runs = RunCache(lab / "data" / "st" / ".runs" / "x")
    with experiments_refused(), pytest.raises(ExperimentRefused, match=r"data/st/\.runs/x"):
        map_runs(lambda i: i, [1, 2], keys=[1, 2], runs=runs, scheduler="sync", progress=False)
    assert not (lab / "data" / "st").exists()


def test_refused_experiment_is_found_in_a_rerun_error():
    err = "PapermillExecutionError ...\nExperimentRefused: refused to run an experiment: data/a.nc (config 1)\nmore"
    assert refused_experiment(err) == "refused to run an experiment: data/a.nc (config 1)"
    assert refused_experiment("ValueError: boom") is None and refused_experiment(None) is None


def test_seed_robustness_refuses_a_seed_that_keys_an_experiment(tmp_path):
    d = tmp_path / "s" / "default" / "r1"
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(
        json.dumps(
            {
                "study": "s",
                "variant": "default",
                "run_id": "r1",
                "status": "ok",
                "parameters": {"seed": 0},
            }
        )
    )
    (d / "results.json").write_text(json.dumps({"findings": [], "claims": []}))
    msg = (
        "ExperimentRefused: refused to run an experiment: data/s/sweep-abc.nc (config abc, seed=1)"
    )
    with pytest.raises(
        StudyError, match=r"parameter 'seed' is not an analysis seed.*sweep-abc\.nc"
    ):
        seed_robustness(d, [1, 2], rerun=lambda m, o: ("failed", msg, []))


@pytest.mark.slow
def test_verify_seeds_refuses_an_experiment_seed_and_writes_nothing_under_data(
    lab, monkeypatch, capsys
):
    shutil.copy(FIXTURES / "fixture_keyed_seed.py", lab / "notebooks")
    monkeypatch.setattr(manifest_mod, "library_hashes", lambda cells, where="": {"x": "pinned"})
    a = run_study("fixture_keyed_seed", command="pytest")
    assert a.status == "ok", a.error
    committed = _files(lab / "data")
    assert len(committed) == 1  # the experiment's dataset, as committed
    capsys.readouterr()
    assert cli.main(["verify", str(a.run_dir), "--seeds", "1,2"]) == 2
    err = capsys.readouterr().err
    assert "not an analysis seed" in err and "data/fixture_keyed_seed/runs-" in err
    assert _files(lab / "data") == committed  # no new dataset, no run folder
    # the plain verify reads the committed dataset and reproduces every finding
    assert cli.main(["verify", str(a.run_dir), "-q"]) == 0
    assert _files(lab / "data") == committed
