"""Cluster runs without a shared filesystem, and Ctrl-C or SIGTERM on ``run --all``.

A real ``dask scheduler`` and two ``dask worker`` processes, each started in its own empty
directory and each with its own copy of the repository (``SCALINGLAB_WORKER_ROOT``): what
the studies write must come back to the client's checkout, and a worker without the
repository must stop the batch at once.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import scalinglab.cli as cli
from scalinglab.runner.worker import WORKER_ROOT_ENV

FIXTURES = Path(__file__).parent / "fixtures" / "studies"
DASK = Path(sys.executable).with_name("dask")
pytestmark = pytest.mark.slow


def _checkout(root: Path) -> Path:
    for sub in ("notebooks", "data/fixture", "reports"):
        (root / sub).mkdir(parents=True)
    shutil.copy(FIXTURES / "fixture_basic.py", root / "notebooks")
    shutil.copy(FIXTURES / "fixture_basic.py", root / "notebooks" / "fixture_copy.py")
    return root


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_cluster(tmp_path: Path, worker_roots: list[Path]) -> tuple[str, list]:
    from dask.distributed import Client

    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {k: v for k, v in os.environ.items() if k != "SCALINGLAB_ROOT"}
    procs = [
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
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    for i, wroot in enumerate(worker_roots):
        cwd = tmp_path / f"worker-{i}-cwd"
        cwd.mkdir()  # each worker starts in its own empty directory
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
                    f"w{i}",
                ],
                env={**env, WORKER_ROOT_ENV: str(wroot)},
                cwd=cwd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    deadline = time.monotonic() + 90
    while True:
        try:
            with Client(address, timeout="5s") as client:
                client.wait_for_workers(len(worker_roots), timeout=90)
            return address, procs
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _stop(procs: list) -> None:
    for proc in reversed(procs):
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=20)


def _runs(root: Path) -> list[Path]:
    """Every run folder under ``root/reports``, unfinished ``.tmp-`` ones included."""
    return sorted(p for p in (root / "reports").glob("*/*/*") if p.name != "latest") + sorted(
        (root / "reports").glob("*/*/.tmp-*")
    )


def test_reports_and_data_come_back_from_workers_without_a_shared_filesystem(
    tmp_path, monkeypatch, capsys
):
    client_root = _checkout(tmp_path / "client")
    worker_roots = [_checkout(tmp_path / f"worker-{i}-repo") for i in range(2)]
    monkeypatch.setenv("SCALINGLAB_ROOT", str(client_root))
    address, procs = _start_cluster(tmp_path, worker_roots)
    try:
        code = cli.main(
            [
                "run",
                "--all",
                "--variant",
                "tiny",
                "--scheduler",
                address,
                "-p",
                "write_cache",
                "true",
            ]
        )
    finally:
        _stop(procs)
    out = capsys.readouterr().out
    assert code == 0, out
    for study in ("fixture_basic", "fixture_copy"):
        latest = client_root / "reports" / study / "tiny-custom" / "latest"  # -p write_cache
        m = json.loads((latest / "manifest.json").read_text())
        assert m["status"] == "ok" and m["executor"] == address
        assert m["results"][0]["name"] == "mean"
        assert (latest / "report.html").stat().st_size > 10_000
        assert (latest / f"{study}.ipynb").is_file()
    assert not [p for p in _runs(client_root) if p.name.startswith(".tmp-")]
    assert (client_root / "reports" / "index.html").is_file()
    # the experiment data a worker wrote in its own checkout came back, byte for byte
    cache = client_root / "data" / "fixture" / "cache.csv"
    written = [w / "data" / "fixture" / "cache.csv" for w in worker_roots]
    assert cache.is_file() and any(
        w.is_file() and w.read_bytes() == cache.read_bytes() for w in written
    )
    for w in worker_roots:  # the workers' own reports folders stay empty
        assert _runs(w) == []


def test_a_worker_without_the_repository_fails_the_batch_at_once(tmp_path, monkeypatch, capsys):
    client_root = _checkout(tmp_path / "client")
    empty = tmp_path / "no-repo"
    empty.mkdir()
    monkeypatch.setenv("SCALINGLAB_ROOT", str(client_root))
    address, procs = _start_cluster(tmp_path, [_checkout(tmp_path / "w0"), empty])
    try:
        code = cli.main(["run", "--all", "--variant", "tiny", "--scheduler", address])
    finally:
        _stop(procs)
    err = capsys.readouterr().err
    assert code == 2
    assert "worker(s) without the repository" in err and str(empty) in err
    assert _runs(client_root) == [] and _runs(tmp_path / "w0") == []  # no study started


def _sleeping(scratch: Path) -> set[str]:
    """The executed notebooks under ``scratch`` whose sleeping cell has started (papermill
    saves the notebook as each cell starts, marked running)."""
    out = set()
    for nb in scratch.glob("scalinglab-run-*/**/*.ipynb"):
        try:
            cells = json.loads(nb.read_text())["cells"]
        except (OSError, ValueError, KeyError):  # being written
            continue
        for cell in cells:
            status = cell.get("metadata", {}).get("papermill", {}).get("status")
            if status == "running" and "time.sleep(sleep_s)" in "".join(cell["source"]):
                out.add(nb.name)
    return out


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _kernels_using(folder: Path) -> list[str]:
    """Command lines of live processes that name a file under ``folder`` (a notebook
    kernel started with its connection file there)."""
    import psutil

    out = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = " ".join(proc.info.get("cmdline") or [])
        if str(folder) in cmd and "ipykernel" in cmd:
            out.append(cmd)
    return out


@pytest.mark.parametrize(
    ("signum", "whole_group", "exit_code"),
    [
        # what Ctrl-C sends: SIGINT to the whole process group
        (signal.SIGINT, True, 130),
        # what `kill` and a cluster scheduler send: SIGTERM to the command's process
        (signal.SIGTERM, False, 143),
    ],
    ids=["ctrl-c", "sigterm"],
)
def test_stopping_run_all_records_interrupted_runs_cleans_up_and_rewrites_the_index(
    tmp_path, signum, whole_group, exit_code
):
    root = _checkout(tmp_path / "repo")
    scratch = tmp_path / "tmp"  # the workers' private run folders, where we can watch them
    scratch.mkdir()
    env = {**os.environ, "SCALINGLAB_ROOT": str(root), "TMPDIR": str(scratch)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scalinglab",
            "run",
            "--all",
            "--variant",
            "tiny",
            "--workers",
            "2",
            "-p",
            "sleep_s",
            "600",
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # as in a terminal: a shell without job control starts background commands with
        # SIGINT ignored, and Python then never raises KeyboardInterrupt
        preexec_fn=_default_sigint,
    )
    try:
        # cluster up, both notebooks sleeping in their first cells
        deadline = time.monotonic() + 120
        while len(_sleeping(scratch)) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "the notebooks never reached their sleep"
            time.sleep(0.5)
        time.sleep(3)  # the cell's imports, then into the sleep
        assert proc.poll() is None
        assert _kernels_using(scratch), "no kernel found running in the workers' folders"
        if whole_group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        # The notebooks sleep 600 s: ending well before that means the stop reached them.
        # The bound leaves room for the cluster's shutdown on a loaded 2-core machine
        # (90 s was exceeded there at a load average of 8).
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == exit_code, (out, err)
    assert "Traceback" not in err, err
    # nothing left behind: no private run folder, no kernel connection file, no kernel
    left = [p.name for p in scratch.iterdir() if p.name.startswith("scalinglab-run-")]
    left += [p.name for p in scratch.rglob("*.json")]  # kernel connection files
    assert left == [], err
    deadline = time.monotonic() + 10  # a killed kernel may take a moment to be reaped
    while _kernels_using(scratch) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _kernels_using(scratch) == []
    runs = _runs(root)
    assert [p.parent.parent.name for p in runs] == ["fixture_basic", "fixture_copy"]
    for run in runs:
        assert not run.name.startswith(".tmp-")
        m = json.loads((run / "manifest.json").read_text())
        assert m["status"] == "interrupted" and m["results"] == []
        assert ("SIGTERM" if signum == signal.SIGTERM else "Ctrl-C") in m["error"]
        assert not (run.parent / "latest").exists()
    assert "interrupted" in out
    index = json.loads((root / "reports" / "index.json").read_text())
    assert "interrupted" in json.dumps(index)


def test_sigterm_on_run_all_stops_the_runs_on_a_real_clusters_workers(tmp_path, monkeypatch):
    """A scheduler's SIGTERM reaches only the client: the studies it sent must still stop on
    the (separately started) workers, which stay up, and leave no private folder behind."""
    client_root = _checkout(tmp_path / "client")
    worker_roots = [_checkout(tmp_path / f"worker-{i}-repo") for i in range(2)]
    scratch = tmp_path / "tmp"  # the workers' temporary folder, where we can watch them
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    address, procs = _start_cluster(tmp_path, worker_roots)
    env = {**os.environ, "SCALINGLAB_ROOT": str(client_root)}
    env.pop("TMPDIR")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scalinglab",
            "run",
            "--all",
            "--variant",
            "tiny",
            "--scheduler",
            address,
            "-p",
            "sleep_s",
            "600",
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_sleeping(scratch)) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "the notebooks never reached their sleep"
            time.sleep(0.5)
        time.sleep(3)
        assert proc.poll() is None and _kernels_using(scratch)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 143, (out, err)
        assert all(p.poll() is None for p in procs)  # the cluster itself stays up
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (
            _kernels_using(scratch) or list(scratch.glob("scalinglab-run-*"))
        ):
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            proc.kill()
        _stop(procs)
    assert _kernels_using(scratch) == []
    assert list(scratch.glob("scalinglab-run-*")) == []
    runs = _runs(client_root)
    assert [p.parent.parent.name for p in runs] == ["fixture_basic", "fixture_copy"]
    for run in runs:
        m = json.loads((run / "manifest.json").read_text())
        assert m["status"] == "interrupted" and "SIGTERM" in m["error"]
