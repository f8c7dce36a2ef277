"""The cached-sweep helper: per-run cache, resume after a kill, provenance, runtime estimate."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from scalinglab import sweeps
from scalinglab.provenance import config_hash
from scalinglab.sweeps import RunCache, cached_sweep, makespan, map_runs


class Killed(BaseException):
    """Stands for Ctrl-C / a killed process: not an ``Exception``, so not a task failure."""


def _counting(calls: list, *, kill_after: int | None = None, fail: set | None = None):
    def fn(x: int) -> int:
        if kill_after is not None and len(calls) == kill_after:
            raise Killed
        calls.append(x)
        if fail and x in fail:
            raise RuntimeError(f"run {x} breaks")
        return x * x

    return fn


def test_a_killed_map_resumes_run_by_run(tmp_path):
    runs = RunCache(tmp_path / "runs")
    items = [1, 2, 3, 4]
    keys = [{"x": x} for x in items]
    calls: list[int] = []
    with pytest.raises(Killed):
        map_runs(
            _counting(calls, kill_after=2),
            items,
            keys=keys,
            runs=runs,
            scheduler="sync",
            progress=False,
        )
    assert calls == [1, 2] and runs.count() == 2  # each finished run was stored at once
    calls.clear()
    results, failures = map_runs(
        _counting(calls), items, keys=keys, runs=runs, scheduler="sync", progress=False
    )
    assert calls == [3, 4], "only the runs that had not finished are computed"
    assert results == [1, 4, 9, 16] and failures == []
    calls.clear()
    again, _ = map_runs(
        _counting(calls), items, keys=keys, runs=runs, scheduler="sync", progress=False
    )
    assert calls == [] and again == results


def test_failed_runs_are_reported_not_stored_and_retried(tmp_path):
    runs = RunCache(tmp_path / "runs")
    calls: list[int] = []
    results, failures = map_runs(
        _counting(calls, fail={2}),
        [1, 2, 3],
        keys=[1, 2, 3],
        runs=runs,
        scheduler="sync",
        progress=False,
    )
    assert results == [1, None, 9]
    assert [f.index for f in failures] == [1] and "run 2 breaks" in failures[0].error
    calls.clear()
    results, failures = map_runs(
        _counting(calls), [1, 2, 3], keys=[1, 2, 3], runs=runs, scheduler="sync", progress=False
    )
    assert calls == [2] and results == [1, 4, 9] and failures == []


def test_failure_indices_refer_to_the_items_when_some_were_cached(tmp_path):
    runs = RunCache(tmp_path / "runs")
    runs.save(10, 100)
    runs.save(20, 400)
    _, failures = map_runs(
        _counting([], fail={30}),
        [10, 20, 30],
        keys=[10, 20, 30],
        runs=runs,
        scheduler="sync",
        progress=False,
    )
    assert [(f.index, f.config) for f in failures] == [(2, 30)]


def test_disabled_cache_stores_nothing(tmp_path):
    calls: list[int] = []
    for _ in range(2):
        map_runs(_counting(calls), [1, 2], keys=[1, 2], runs=None, scheduler="sync", progress=False)
    assert calls == [1, 2, 1, 2]
    with pytest.raises(ValueError, match="keys"):
        map_runs(_counting(calls), [1, 2], keys=[1], runs=None, scheduler="sync")


def test_a_torn_run_file_is_run_again(tmp_path):
    runs = RunCache(tmp_path / "runs")
    runs.save({"a": 1}, np.arange(3))
    hit, value = runs.load({"a": 1})
    assert hit and np.array_equal(value, np.arange(3))
    runs.path({"a": 1}).write_bytes(b"\x80\x05trunc")
    assert runs.load({"a": 1}) == (False, None)
    assert runs.load({"a": 2}) == (False, None)


def _sweep_execute(calls: list, *, kill_after: int | None = None):
    fn = _counting(calls, kill_after=kill_after)

    def execute(runs: RunCache) -> xr.Dataset:
        res, _ = map_runs(
            fn,
            [1, 2, 3, 4],
            keys=[["seed", s] for s in (1, 2, 3, 4)],
            runs=runs,
            scheduler="sync",
            progress=False,
        )
        return xr.Dataset(
            {"v": ("seed", np.array(res, dtype=float))}, coords={"seed": [1, 2, 3, 4]}
        )

    return execute


@pytest.mark.slow
def test_cached_sweep_resumes_then_saves_with_start_provenance_and_reuses(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    starts = iter(["first-start", "second-start", "third-start"])

    def fake_provenance(config):
        return {"config": "{}", "config_hash": config_hash(config), "git_commit": next(starts)}

    monkeypatch.setattr(sweeps, "provenance_attrs", fake_provenance)
    cfg = {"sizes": [1, 2], "version": "1"}
    calls: list[int] = []
    with pytest.raises(Killed):
        cached_sweep("study", "sweep-tiny", cfg, _sweep_execute(calls, kill_after=2))
    folder = tmp_path / "data" / "study" / sweeps.RUNS_DIR / f"sweep-tiny-{config_hash(cfg)}"
    assert calls == [1, 2] and len(list(folder.glob("*.pkl"))) == 2
    assert not (tmp_path / "data" / "study" / f"sweep-tiny-{config_hash(cfg)}.nc").exists()
    calls.clear()
    ds = cached_sweep("study", "sweep-tiny", cfg, _sweep_execute(calls))
    assert calls == [3, 4], "the resumed sweep computes only the 2 runs left"
    assert ds["v"].values.tolist() == [1.0, 4.0, 9.0, 16.0]
    assert ds.attrs["git_commit"] == "first-start"  # credited to the code it started from
    assert ds.attrs["config_hash"] == config_hash(cfg)
    assert not folder.exists() and not folder.parent.exists()  # the Dataset holds the runs now
    calls.clear()
    again = cached_sweep("study", "sweep-tiny", cfg, _sweep_execute(calls))
    printed = capsys.readouterr()
    assert calls == [] and "reusing data/study/sweep-tiny-" in printed.out + printed.err
    xr.testing.assert_identical(again, ds)
    rerun = cached_sweep("study", "sweep-tiny", cfg, _sweep_execute(calls), rerun=True)
    assert calls == [1, 2, 3, 4] and rerun.attrs["git_commit"] == "second-start"


def test_a_fresh_start_is_credited_to_its_own_code(tmp_path, monkeypatch):
    """A run folder without runs (killed before any finished) does not keep old provenance."""
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    starts = iter(["first", "second"])
    monkeypatch.setattr(
        sweeps,
        "provenance_attrs",
        lambda config: {"config_hash": config_hash(config), "git_commit": next(starts)},
    )
    cfg = {"n": 1}
    with pytest.raises(Killed):
        cached_sweep("study", "s", cfg, _sweep_execute([], kill_after=0))
    ds = cached_sweep("study", "s", cfg, _sweep_execute([]))
    assert ds.attrs["git_commit"] == "second"


def test_makespan_packs_longest_first():
    assert makespan([3, 3, 2, 2, 2], workers=2) == 7  # LPT: {3, 2, 2} and {3, 2}
    assert makespan([3, 3, 2, 2, 2], workers=1) == 12
    assert makespan([5, 1, 1], workers=4) == 5
    assert makespan([], workers=2) == 0
    with pytest.raises(ValueError):
        makespan([1.0], workers=0)


def _block(seeds, *, failed=0, h="h"):
    ds = xr.Dataset({"loss": ("seed", np.arange(len(seeds), dtype=float))}, coords={"seed": seeds})
    ds.attrs.update(config_hash=h, n_failed=failed)
    return ds


def test_seed_blocks_join_along_seed_with_each_blocks_provenance():
    import json

    blocks = {"a": _block([0, 1], failed=1, h="ha"), "b": _block([2], failed=2, h="hb")}
    out = sweeps.join_seed_blocks(
        blocks, info=lambda n, d: {"block": n, "h": d.attrs["config_hash"]}
    )
    assert list(out.seed.values) == [0, 1, 2]
    assert json.loads(out.attrs["seed_blocks"]) == [
        {"block": "a", "h": "ha"},
        {"block": "b", "h": "hb"},
    ]
    assert out.attrs["n_failed"] == 3 and out.attrs["config_hash"] == "ha"
    with pytest.raises(ValueError, match=r"seed blocks overlap: c repeats seeds \[1\] of \['a'\]"):
        sweeps.join_seed_blocks({**blocks, "c": _block([1, 5])}, info=lambda n, d: {})
