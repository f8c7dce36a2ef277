"""Task mapping (sync and Dask) and the config-keyed experiment cache."""

from __future__ import annotations

import os

import numpy as np
import pytest
import xarray as xr

from scalinglab import compute
from scalinglab.provenance import config_hash
from scalinglab.sweeps import cached_dataset


def _square_or_fail(x: int) -> int:
    if x == 3:
        raise RuntimeError("task three breaks")
    return x * x


def test_map_tasks_sync_reports_failures_in_order():
    results, failures = compute.map_tasks(
        _square_or_fail, [1, 2, 3, 4], scheduler="sync", progress=False
    )
    assert results == [1, 4, None, 16]
    assert [f.index for f in failures] == [2]
    assert "task three breaks" in failures[0].error


def test_map_tasks_hands_each_success_to_on_result_as_it_finishes():
    seen = []
    results, failures = compute.map_tasks(
        _square_or_fail,
        [1, 2, 3, 4],
        scheduler="sync",
        progress=False,
        on_result=lambda i, v: seen.append((i, v)),
    )
    assert seen == [(0, 1), (1, 4), (3, 16)]  # the failed task is not handed on
    assert [f.index for f in failures] == [2]


def test_resolve_device():
    import torch

    assert compute.resolve_device("cpu") == "cpu"
    assert compute.resolve_device("cuda:1") == "cuda:1"
    assert compute.resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.slow
def test_map_tasks_on_local_cluster_matches_sync():
    with compute.get_client("", n_workers=2) as client:
        results, failures = compute.map_tasks(
            _square_or_fail, list(range(6)), client=client, progress=False
        )
    assert results == [0, 1, 4, None, 16, 25]
    assert [f.config for f in failures] == [3]


def test_scheduler_env_var_is_honoured(monkeypatch):
    monkeypatch.setenv(compute.SCHEDULER_ENV, "tcp://10.0.0.1:8786")
    assert compute.resolve_scheduler("") == "tcp://10.0.0.1:8786"
    assert compute.resolve_scheduler("sync") == "sync"
    assert compute.compute_mode("") == "tcp://10.0.0.1:8786"


@pytest.mark.slow
def test_cached_dataset_reuses_and_reruns(monkeypatch, tmp_path):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    calls = []

    def make():
        calls.append(1)
        return xr.Dataset({"v": ("seed", np.arange(3.0) + len(calls))})

    cfg = {"seeds": 3, "version": "1"}
    a = cached_dataset("study", "runs", cfg, make)
    b = cached_dataset("study", "runs", cfg, make)
    assert len(calls) == 1
    xr.testing.assert_identical(a, b)
    assert a.attrs["config_hash"] == config_hash(cfg)
    assert (tmp_path / "data" / "study" / f"runs-{config_hash(cfg)}.nc").exists()
    c = cached_dataset("study", "runs", cfg, make, rerun=True)
    assert len(calls) == 2 and float(c["v"][0]) == 2.0
    cached_dataset("study", "runs", {**cfg, "seeds": 4}, make)
    assert len(calls) == 3, "a changed config must recompute"


def _listening_addresses(proc) -> list[str]:
    """Every TCP address this process and its children listen on."""
    import psutil

    found = []
    for p in [proc, *proc.children(recursive=True)]:
        try:
            conns = p.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        found += [c.laddr.ip for c in conns if c.status == psutil.CONN_LISTEN]
    return found


@pytest.mark.slow
def test_local_cluster_and_dashboard_listen_on_loopback_only():
    import psutil

    me = psutil.Process()
    before = set(_listening_addresses(me))
    with compute.get_client("", n_workers=1) as client:
        assert client.dashboard_link  # the dashboard is on, only not reachable from outside
        during = _listening_addresses(me)
    opened = [ip for ip in during if ip not in before] or during
    assert opened, "the cluster opened no listening socket"
    assert all(ip in ("127.0.0.1", "::1") for ip in during), during


def _worker_env() -> dict:
    import os

    return {k: os.environ.get(k) for k in ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS")}


@pytest.mark.slow
def test_local_cluster_workers_keep_glibcs_malloc_defaults(monkeypatch):
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with compute.get_client("", n_workers=1) as client:
        env = next(iter(client.run(_worker_env).values()))
    # Dask's nanny would set 65536 (memory handed back after every step); the rest of its
    # pre-spawn environment (one BLAS thread per worker) stays
    assert env == {"MALLOC_TRIM_THRESHOLD_": None, "OMP_NUM_THREADS": "1"}


def _start_orphan(_: int) -> int:
    """In a worker: start a long child, as a notebook's kernel is, and leave it running."""
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid


@pytest.mark.slow
def test_closing_a_local_cluster_leaves_no_worker_or_child_process_behind():
    import psutil

    with compute.get_client("", n_workers=1, close_timeout=5) as client:
        child = client.submit(_start_orphan, 0, pure=False).result()
        (worker,) = client.run(os.getpid).values()
        procs = [psutil.Process(child), psutil.Process(worker)]
        assert all(p.is_running() for p in procs)
    gone, alive = psutil.wait_procs(procs, timeout=10)
    assert not alive, f"left running after the cluster closed: {alive}"


def test_close_local_cluster_kills_what_a_timed_out_close_leaves():
    import subprocess
    import sys

    import psutil

    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    proc = psutil.Process(worker.pid)

    class Stuck:  # a cluster whose close times out, as a loaded one did after Ctrl-C
        workers = {"w": type("Nanny", (), {"pid": worker.pid})()}

        def close(self, timeout=None):
            raise TimeoutError(f"still closing after {timeout} s")

    try:
        compute.close_local_cluster(Stuck(), None, timeout=5)
        assert not proc.is_running()
    finally:
        worker.kill()


def test_get_client_host_opts_in_to_other_interfaces():
    import inspect

    params = inspect.signature(compute.get_client).parameters
    assert params["host"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["host"].default == "127.0.0.1"


def test_saved_sweeps_are_compressed_losslessly(tmp_path):
    import numpy as np
    import xarray as xr

    from scalinglab.compute import compressed_encoding, save_dataset

    trace = np.full((6, 2000), np.nan)
    trace[:, :300] = np.random.default_rng(0).normal(size=(6, 300))
    ds = xr.Dataset(
        {"trace": (("run", "step"), trace), "status": ("run", ["ok"] * 6)},
        coords={"run": np.arange(6)},
    )
    assert set(compressed_encoding(ds)) == {"trace"}  # strings are left alone
    path = save_dataset(ds, tmp_path / "s.nc", config={"a": 1})
    assert path.stat().st_size < trace.nbytes / 3
    with xr.open_dataset(path, engine="h5netcdf") as saved:
        back = saved.load()
    back.attrs = {}
    xr.testing.assert_identical(back, ds)  # values, dims, coords: all as written


def test_config_dict_keeps_an_older_configs_hash_until_a_new_field_is_used():
    import dataclasses

    from scalinglab.provenance import config_dict

    @dataclasses.dataclass(frozen=True)
    class Old:
        steps: int = 10

    @dataclasses.dataclass(frozen=True)
    class New:
        steps: int = 10
        lr_grid: tuple = ()  # added later; () behaves as before it existed

    def key(cfg, version="1"):
        return config_hash(
            config_dict(cfg, engine_version=version, omit_if_default={"lr_grid": ()})
        )

    assert key(New()) == config_hash(config_dict(Old(), engine_version="1", omit_if_default={}))
    assert key(New(lr_grid=(0.5, 1.0))) != key(New())
    assert key(New(), version="2") != key(New())
