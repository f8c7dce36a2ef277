"""Runner batch mode: studies as Dask tasks on a LocalCluster and on a separately started
``dask scheduler`` + ``dask worker`` (real processes on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import scalinglab.cli as cli
from scalinglab.runner.batch import run_all

FIXTURES = Path(__file__).parent / "fixtures" / "studies"
DASK = Path(sys.executable).with_name("dask")
pytestmark = pytest.mark.slow


def _root(tmp_path: Path, names: list[str]) -> Path:
    for sub in ("notebooks", "data/fixture", "reports"):
        (tmp_path / sub).mkdir(parents=True)
    for name in names:
        shutil.copy(FIXTURES / f"{name}.py", tmp_path / "notebooks")
    return tmp_path


def _manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def test_batch_on_a_local_cluster_runs_every_study(tmp_path, monkeypatch):
    root = _root(tmp_path, ["fixture_basic", "fixture_second"])
    monkeypatch.setenv("SCALINGLAB_ROOT", str(root))
    batch = run_all(variant="tiny", n_workers=2, command="pytest batch")
    assert batch.ok, batch.summary()
    assert [(r.study, r.variant, r.status) for r in batch.results] == [
        ("fixture_basic", "tiny", "ok"),
        ("fixture_second", "tiny", "ok"),
    ]
    seeds = {"fixture_basic": 0, "fixture_second": 7}
    for r in batch.results:
        assert r.run_dir == root / "reports" / r.study / "tiny" / r.run_id
        m = _manifest(r.run_dir)
        assert m["status"] == "ok" and m["executor"] == "LocalCluster"
        assert m["parameters"]["n"] == 100 and m["command"] == "pytest batch"
        x = np.random.default_rng(seeds[r.study]).normal(0.0, 1.0, 100)
        assert m["results"][0]["point"] == pytest.approx(x.mean(), rel=1e-12)
        assert os.readlink(r.run_dir.parent / "latest") == r.run_id
    assert "fixture_second  tiny     ok" in batch.summary()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def test_batch_on_a_separately_started_scheduler_and_worker(tmp_path, monkeypatch, capsys):
    from dask.distributed import Client

    root = _root(tmp_path / "repo", ["fixture_basic", "fixture_fail"])
    monkeypatch.setenv("SCALINGLAB_ROOT", str(root))
    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {**os.environ, "SCALINGLAB_ROOT": str(root)}
    logs = tmp_path / "logs"
    logs.mkdir()
    procs = []
    try:
        procs.append(
            subprocess.Popen(
                [
                    str(DASK),
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    address.rsplit(":", 1)[1],
                    "--no-dashboard",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=open(logs / "scheduler.log", "w"),
                cwd=tmp_path,
            )
        )
        procs.append(
            subprocess.Popen(
                [
                    str(DASK),
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "1",
                    "--no-dashboard",
                    "--name",
                    "pytest-worker",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=open(logs / "worker.log", "w"),
                cwd=tmp_path,
            )
        )
        deadline = time.monotonic() + 60
        while True:  # the scheduler needs a moment before it accepts connections
            try:
                with Client(address, timeout="5s") as client:
                    client.wait_for_workers(1, timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        code = cli.main(["run", "--all", "--variant", "tiny", "--scheduler", address])
        out = capsys.readouterr().out
        assert code == 1, out  # fixture_fail failed, so the batch exits non-zero
        assert "fixture_basic  tiny     ok" in out
        assert "fixture_fail   tiny     failed" in out and "fixture failure on purpose" in out
        basic = root / "reports" / "fixture_basic" / "tiny" / "latest"
        m = _manifest(basic)
        assert m["status"] == "ok" and m["executor"] == address
        failed = [p for p in (root / "reports" / "fixture_fail" / "tiny").iterdir()]
        assert len(failed) == 1 and _manifest(failed[0])["status"] == "failed"
        assert (root / "reports" / "index.html").is_file()
    finally:
        for proc in reversed(procs):
            _stop(proc)
    assert all(p.poll() is not None for p in procs)
