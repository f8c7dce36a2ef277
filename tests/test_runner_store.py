"""Runner: run ids, atomic folders, ``latest``, lookup, cache key, diff and HTML (no kernels)."""

from __future__ import annotations

import math
import re
import secrets
from datetime import UTC, datetime

import nbformat
import pytest

from scalinglab.errors import StudyError
from scalinglab.runner import store
from scalinglab.runner.diff import diff_findings
from scalinglab.runner.html import export_html, external_references, provenance_header
from scalinglab.runner.manifest import cache_key, execution_key, input_hashes, prose_hash
from scalinglab.runner.verify import compare_findings

RUN_ID = re.compile(r"^\d{8}T\d{6}Z-(?:[0-9a-f]{7}|nogit)(?:-dirty)?-[0-9a-f]{6}$")


def test_run_id_format():
    rid = store.new_run_id(
        commit="0123456789abcdef", dirty=True, now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    )
    assert rid.startswith("20260102T030405Z-0123456-dirty-")
    assert RUN_ID.match(rid)
    assert RUN_ID.match(store.new_run_id())


def test_many_runs_in_the_same_second_get_distinct_folders(tmp_path):
    ids = [store.allocate_run("s", "v", reports_root=tmp_path)[0] for _ in range(300)]
    assert len(set(ids)) == 300
    assert len(list((tmp_path / "s" / "v").iterdir())) == 300


def test_id_clashes_are_retried(tmp_path, monkeypatch):
    fixed = datetime(2026, 1, 1, tzinfo=UTC)

    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):
            return fixed

    suffixes = iter(["aaaaaa", "aaaaaa", "bbbbbb", "bbbbbb", "cccccc"])
    monkeypatch.setattr(store, "datetime", Clock)
    monkeypatch.setattr(store.secrets, "token_hex", lambda n: next(suffixes))
    first, tmp1 = store.allocate_run("s", "v", reports_root=tmp_path)
    second, _ = store.allocate_run("s", "v", reports_root=tmp_path)  # .tmp-...aaaaaa exists
    assert first.endswith("aaaaaa") and second.endswith("bbbbbb")
    store.finalize_run(tmp1, first)
    # a finished run's name also counts: the next "bbbbbb" clashes with the .tmp, then "cccccc"
    third, _ = store.allocate_run("s", "v", reports_root=tmp_path)
    assert third.endswith("cccccc")


def test_latest_is_a_relative_symlink_replaced_atomically(tmp_path):
    a = tmp_path / "s" / "v" / "run-a"
    b = tmp_path / "s" / "v" / "run-b"
    for d in (a, b):
        d.mkdir(parents=True)
        store.write_json(d / "manifest.json", {"status": "ok"})
    link = store.set_latest(a)
    assert link.is_symlink() and str(link.readlink()) == "run-a"
    store.set_latest(b)
    assert str(link.readlink()) == "run-b"
    assert store.latest_run("s", "v", reports_root=tmp_path) == b.resolve()
    assert sorted(p.name for p in (tmp_path / "s" / "v").iterdir()) == ["latest", "run-a", "run-b"]


def test_resolve_run_by_path_key_latest_and_prefix(tmp_path):
    runs = []
    for rid in ("20260101T000000Z-nogit-aaaaaa", "20260101T000000Z-nogit-abbbbb"):
        d = tmp_path / "st" / "default" / rid
        d.mkdir(parents=True)
        store.write_json(d / "manifest.json", {"status": "ok", "run_id": rid})
        runs.append(d)
    store.set_latest(runs[1])
    assert store.resolve_run(str(runs[0]), reports_root=tmp_path) == runs[0].resolve()
    assert store.resolve_run(f"st/default/{runs[0].name}", reports_root=tmp_path) == runs[0]
    assert store.resolve_run("st/default/latest", reports_root=tmp_path) == runs[1]
    assert store.resolve_run("20260101T000000Z-nogit-ab", reports_root=tmp_path) == runs[1]
    with pytest.raises(StudyError, match="matches 2 runs"):
        store.resolve_run("20260101T000000Z", reports_root=tmp_path)
    with pytest.raises(StudyError, match="no run matches"):
        store.resolve_run("1999", reports_root=tmp_path)


def test_cache_key_changes_with_each_ingredient_and_prose_only_with_markdown():
    base = dict(
        cells=["code:x = 1", "markdown:# T"],
        parameters={"seed": 0},
        inputs={"a.csv": "h"},
        lock="L",
        lib="B",
    )
    key = execution_key(**base)
    assert key == execution_key(**dict(base))
    for field, other in [
        ("cells", ["code:x = 2", "markdown:# T"]),
        ("parameters", {"seed": 1}),
        ("inputs", {"a.csv": "h2"}),
        ("lock", "L2"),
        ("lib", "B2"),
    ]:
        assert execution_key(**{**base, field: other}) != key, field
    prose = ["code:x = 1", "markdown:# T, edited"]
    assert execution_key(**{**base, "cells": prose}) == key  # markdown is not executed
    assert prose_hash(prose) != prose_hash(base["cells"])
    assert prose_hash(["code:x = 2", "markdown:# T"]) == prose_hash(base["cells"])
    full = cache_key(execution=key, prose=prose_hash(base["cells"]))
    assert full != cache_key(execution=key, prose=prose_hash(prose))
    assert full != cache_key(execution="other", prose=prose_hash(base["cells"]))


def test_input_hashes_cover_path_parameters_and_header_globs(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.csv").write_text("1\n")
    (tmp_path / "data" / "b.csv").write_text("2\n")
    outside = tmp_path.parent / f"outside-{secrets.token_hex(3)}.csv"
    outside.write_text("3\n")
    try:
        h = input_hashes(
            {"data": "data/a.csv", "other": str(outside), "n": 3, "s": "nope"},
            ["data/b*.csv"],
            root=tmp_path,
        )
    finally:
        outside.unlink()
    # a file outside the repository (a user's own scores) counts, keyed by absolute path
    assert sorted(h) == sorted(["data/a.csv", "data/b.csv", str(outside.resolve())])
    (tmp_path / "data" / "a.csv").write_text("changed\n")
    assert input_hashes({"data": "data/a.csv"}, [], root=tmp_path)["data/a.csv"] != h["data/a.csv"]


def test_diff_flags_moves_relative_to_ci_half_width():
    a = [
        {"name": "m", "point": 1.0, "ci": [0.8, 1.2]},
        {"name": "small", "point": 1.0, "ci": [0.0, 2.0]},
        {"name": "count", "point": 5.0, "ci": None},
        {"name": "gone", "point": 0.0, "ci": None},
    ]
    b = [
        {"name": "m", "point": 1.5, "ci": [1.2, 1.8]},
        {"name": "small", "point": 1.5, "ci": [0.5, 2.5]},
        {"name": "count", "point": 5.0, "ci": None},
        {"name": "new", "point": 0.0, "ci": None},
    ]
    d = diff_findings(a, b)
    rows = {r["name"]: r for r in d["findings"]}
    # half-widths 0.2 and 0.3 -> mean 0.25; delta 0.5 -> 2 half-widths
    assert rows["m"]["delta"] == pytest.approx(0.5)
    assert rows["m"]["half_width"] == pytest.approx(0.25)
    assert rows["m"]["relative"] == pytest.approx(2.0)
    assert rows["m"]["moved"] is True
    assert rows["small"]["relative"] == pytest.approx(0.5) and rows["small"]["moved"] is False
    assert "count" not in rows and d["unchanged"] == 1  # unchanged findings are only counted
    assert d["added"] == ["new"] and d["removed"] == ["gone"] and d["moved"] == ["m"]


def test_verify_comparison_is_exact_and_nan_aware():
    nan = math.nan
    a = [{"name": "x", "point": 0.1, "ci": [0.0, 0.2]}, {"name": "y", "point": nan, "ci": None}]
    same = compare_findings(a, [dict(f) for f in a])
    assert all(r["same"] for r in same)
    off = compare_findings(a, [{"name": "x", "point": 0.1, "ci": [0.0, 0.2 + 1e-15]}])
    assert [r["same"] for r in off] == [False, False]  # CI end differs; y missing


def _notebook(cell_id: str, stamp: str):
    png = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
        "AAAABJRU5ErkJggg=="
    )
    nb = nbformat.v4.new_notebook()
    md = nbformat.v4.new_markdown_cell("# Title\n\n$x^2$")
    code = nbformat.v4.new_code_cell("print(1)")
    code.outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})
    ]
    code.execution_count = 1
    code.metadata["papermill"] = {"start_time": stamp, "duration": 0.1}
    code.metadata["execution"] = {"iopub.status.busy": stamp}
    md.id, code.id = cell_id + "a", cell_id + "b"
    nb.cells = [md, code]
    nb.metadata["papermill"] = {"start_time": stamp}
    return nb


@pytest.mark.slow
def test_html_is_self_contained_deterministic_and_starts_with_findings():
    findings = [
        {
            "name": "iqm/adam",
            "point": 0.5,
            "ci": [0.4, 0.61],
            "level": 0.95,
            "method": "percentile",
            "resamples": 1000,
            "headline": True,
        }
    ]
    header = provenance_header(
        title="T",
        description="D",
        study="s",
        variant="default",
        parameters={"seed": 0},
        commit="abc1234def",
        dirty=True,
        version="9.9",
        findings=findings,
    )
    one = export_html(_notebook("x1", "2026-01-01T00:00:00"), title="T", header=header)
    two = export_html(_notebook("y2", "2027-02-02T11:11:11"), title="T", header=header)
    assert one == two
    assert external_references(one) == []
    assert external_references('<script src="https://cdn.example/x.js"></script>') != []
    assert re.search(r'<img [^>]*src="data:image/png;base64,', one)
    folded = one[one.index('<details class="sl-code"><summary>code</summary>') :]
    assert '<div class="jp-CodeMirrorEditor' in folded and ">print</span>" in folded
    assert folded.index("</details>") < folded.index("jp-OutputArea")  # outputs stay shown
    unsafe = _notebook("z", "t")
    unsafe.cells[1].source = 'print("<script>alert(1)</script>")'
    page = export_html(unsafe, title="T", header=header)
    assert "<script>alert(1)" not in page and "&lt;/script&gt;" in page  # code is escaped
    body = one[one.index("<body") :]
    assert body.index("iqm/adam") < body.index("jp-Cell")  # findings above the notebook
    assert "[0.4, 0.61]" in body and "abc1234def" in body and "uncommitted" in body


def test_git_state_records_commit_dirty_flag_and_diff(tmp_path, monkeypatch):
    import subprocess

    from scalinglab.runner.manifest import git_state

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "notebooks").mkdir()
    nb = tmp_path / "notebooks" / "s.py"
    nb.write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    clean = git_state()
    assert len(clean["commit"]) == 40 and clean["dirty"] is False and "diff" not in clean
    nb.write_text("x = 2\n")
    dirty = git_state()
    assert dirty["commit"] == clean["commit"] and dirty["dirty"] is True
    assert "-x = 1" in dirty["diff"] and "+x = 2" in dirty["diff"]
    rid = store.new_run_id(commit=dirty["commit"], dirty=True)
    assert rid.split("-")[1] == clean["commit"][:7] and "-dirty-" in rid


def test_normalisation_drops_progress_bars_but_keeps_other_output():
    from scalinglab.runner.html import normalise_notebook

    nb = _notebook("z", "t")
    code = nb.cells[1]
    code.outputs = [
        nbformat.v4.new_output(
            "stream",
            name="stderr",
            text="sweep:  25%|##5       | 8/32 [00:00<00:01, 32.65task/s]\r"
            "sweep: 100%|##########| 32/32 [00:01<00:00, 30.1task/s]\n",
        ),
        nbformat.v4.new_output("stream", name="stderr", text="UserWarning: 5% | of runs dropped\n"),
        nbformat.v4.new_output("stream", name="stdout", text="100%|##| 1/1 [00:00<00:00]\n"),
    ]
    out = normalise_notebook(nb).cells[1].outputs
    assert [o["text"].split(":")[0] for o in out] == ["UserWarning", "100%|##| 1/1 [00"]
    assert [c.id for c in normalise_notebook(nb).cells] == ["cell-0", "cell-1"]
    assert "papermill" not in normalise_notebook(nb).metadata
    assert nb.cells[1].outputs[0]["name"] == "stderr"  # the input notebook is not modified


def test_unfinished_runs_read_as_running_killed_or_incomplete(tmp_path):
    import json
    import subprocess
    import sys

    run_id, tmp = store.allocate_run("s", "v", reports_root=tmp_path)
    assert store.unfinished_state(tmp) == store.RunStatus.RUNNING  # owned by this (live) process
    # a process that has exited: its folder was left by a hard kill
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    owner = json.loads((tmp / store.OWNER).read_text())
    (tmp / store.OWNER).write_text(json.dumps({**owner, "pid": int(dead.stdout)}))
    assert store.unfinished_state(tmp) == store.RunStatus.KILLED
    (tmp / store.OWNER).write_text(json.dumps({**owner, "host": "elsewhere"}))
    assert store.unfinished_state(tmp) == store.RunStatus.INCOMPLETE
    (tmp / store.OWNER).unlink()
    assert store.unfinished_state(tmp) == store.RunStatus.INCOMPLETE
    final = store.finalize_run(tmp, run_id)
    assert not (final / store.OWNER).exists()


def test_prune_keeps_findings_of_every_run_and_the_latest_whole(tmp_path):
    runs = []
    for name in ("20260101T000000Z-a", "20260102T000000Z-b", "20260103T000000Z-c"):
        d = tmp_path / "s" / "v" / name
        d.mkdir(parents=True)
        for f in ("report.html", "report-code.html", "s.ipynb", "results.json", "manifest.json"):
            (d / f).write_text("{}")
        runs.append(d)
    store.set_latest(runs[1])  # latest need not be the newest (a later run failed)
    removed = store.prune_html(keep=1, reports_root=tmp_path)
    assert sorted(p.name for p in removed) == ["report-code.html", "report.html", "s.ipynb"]
    assert not (runs[0] / "report.html").exists() and (runs[0] / "results.json").exists()
    assert (runs[1] / "report.html").exists() and (runs[2] / "report.html").exists()
    assert (runs[0] / "manifest.json").exists()
    with pytest.raises(ValueError, match="keep"):
        store.prune_html(keep=0, reports_root=tmp_path)
