"""Runner end to end on fixture studies: layout, manifest, HTML, atomicity, cache, diff, verify.

Notebook runs are shared through module-scoped fixtures (each costs a kernel start).
The library hash is pinned for this module: other engineers edit ``lib/`` while the
tests run, and the cache-key assertions must not depend on that.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import scalinglab.cli as cli
from scalinglab.runner import manifest as manifest_mod
from scalinglab.runner import store
from scalinglab.runner.batch import run_all
from scalinglab.runner.html import external_references
from scalinglab.runner.manifest import modules_hash
from scalinglab.runner.pipeline import prepare_run, run_study

FIXTURES = Path(__file__).parent / "fixtures" / "studies"
PINNED_MODULES = {"scalinglab.record": "pinned"}
pytestmark = pytest.mark.slow


def _main(*argv: str) -> int:
    return cli.main(list(argv))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    for sub in ("notebooks", "data/fixture", "reports"):
        (root / sub).mkdir(parents=True)
    for name in ("fixture_basic", "fixture_fail"):
        shutil.copy(FIXTURES / f"{name}.py", root / "notebooks")
    (root / "data" / "fixture" / "values.csv").write_text("1.0\n2.0\n4.0\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCALINGLAB_ROOT", str(root))
        mp.setattr(manifest_mod, "library_hashes", lambda cells, where="": PINNED_MODULES)
        yield root


@pytest.fixture(scope="module")
def two_runs(lab):
    """Two runs of the same science, started back to back."""
    a = run_study("fixture_basic", command="pytest run A")
    b = run_study("fixture_basic", command="pytest run B", force=True)
    assert a.status == "ok", a.error
    assert b.status == "ok", b.error
    return a, b


def _manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def test_successful_run_layout_and_manifest(lab, two_runs):
    a, b = two_runs
    assert a.run_dir == lab / "reports" / "fixture_basic" / "default" / a.run_id
    assert sorted(p.name for p in a.run_dir.iterdir()) == [
        "fixture_basic.ipynb",
        "manifest.json",
        "report.html",
        "results.json",
    ]
    m = _manifest(a.run_dir)
    assert (m["study"], m["variant"], m["run_id"], m["status"], m["error"]) == (
        "fixture_basic",
        "default",
        a.run_id,
        "ok",
        None,
    )
    assert m["parameters"]["n"] == 400 and m["parameters"]["levels"] == [0.5, 0.9]
    assert len(m["parameters_hash"]) == 64 and len(m["source_hash"]) == 64
    assert m["input_hashes"] == {
        "data/fixture/values.csv": m["input_hashes"]["data/fixture/values.csv"]
    }
    assert m["lib_modules"] == PINNED_MODULES and m["lib_hash"] == modules_hash(PINNED_MODULES)
    assert m["key_format"] == 2 and m["rendered_from"] is None
    assert m["git_commit"] is None and m["git_dirty"] is False and "diff" not in m
    assert m["environment"]["python"] == sys.version.split()[0]
    assert "numpy" in m["environment"]["packages"]
    assert m["compute_mode"] == "sync" and m["command"] == "pytest run A"
    assert m["duration"] > 0 and m["started"] <= m["finished"]
    timed = [t for t in m["cell_timings"] if t["duration"] is not None]
    assert len(timed) >= 5 and all(t["duration"] >= 0 for t in timed)
    assert any("parameters" in t["tags"] for t in m["cell_timings"])
    html = (a.run_dir / "report.html").read_bytes()
    import hashlib

    assert m["report_html_sha256"] == hashlib.sha256(html).hexdigest()
    assert m["results"] == json.loads((a.run_dir / "results.json").read_text())["findings"]


def test_findings_are_the_notebooks_numbers(two_runs):
    a, _ = two_runs
    found = {f["name"]: f for f in a.findings}
    assert list(found) == ["mean", "quantile/0.5", "quantile/0.9", "n"]
    x = np.random.default_rng(0).normal(0.0, 1.0, 400)  # what the fixture simulates
    assert found["mean"]["point"] == pytest.approx(x.mean(), rel=1e-12)
    assert found["quantile/0.9"]["point"] == pytest.approx(np.quantile(x, 0.9), rel=1e-12)
    lo, hi = found["mean"]["ci"]
    assert lo < found["mean"]["point"] < hi and hi - lo < 0.5
    assert found["mean"]["level"] == 0.95 and found["mean"]["resamples"] == 300
    assert found["mean"]["headline"] is True and found["n"]["ci"] is None


def test_report_html_has_findings_table_figure_and_no_external_urls(two_runs):
    a, _ = two_runs
    page = (a.run_dir / "report.html").read_text()
    body = page[page.index("<body") :]
    assert external_references(page) == []
    assert re.search(r'<img [^>]*src="data:image/png;base64,', page)
    assert "Fixture: mean of a normal sample" in body
    full = body.index('<details class="sl-all">')  # every finding, below the headlines
    table = body[
        body.index('<table class="sl-findings">', full) : body.index(
            "</table>", body.index('<table class="sl-findings">', full)
        )
    ]
    for f in a.findings:
        assert f">{f['name']}<" in table
    lo, hi = a.findings[0]["ci"]
    assert f"[{lo:.4g}, {hi:.4g}]" in table
    assert body.index("sl-findings") < body.index("jp-Cell ")
    assert a.run_id not in page and "papermill" not in page
    # one page: every code cell folded (closed) in it, shown on demand
    folded = re.findall(r'<details class="sl-code"( open)?><summary>code</summary>', body)
    assert len(folded) == 5 and not any(folded)  # parameters, injected parameters, 3 more
    assert ">integers</span>" in body[body.index('<details class="sl-code">') :]
    assert "Show all code" in body and "report-code.html" not in page


def test_two_runs_give_byte_identical_reports_and_distinct_ids(two_runs):
    a, b = two_runs
    assert a.run_id != b.run_id
    assert (a.run_dir / "report.html").read_bytes() == (b.run_dir / "report.html").read_bytes()
    assert _manifest(a.run_dir)["cache_key"] == _manifest(b.run_dir)["cache_key"]


def test_latest_points_to_the_last_good_run(lab, two_runs):
    _, b = two_runs
    link = lab / "reports" / "fixture_basic" / "default" / "latest"
    assert link.is_symlink() and os.readlink(link) == b.run_id
    assert not list(link.parent.glob(".tmp-*"))


def test_cache_key_skip_and_invalidation(lab, two_runs):
    a, b = two_runs
    key = _manifest(b.run_dir)["cache_key"]
    assert prepare_run("fixture_basic").cache_key == key
    batch = run_all(studies=["fixture_basic"], scheduler="sync", progress=False)
    assert [(r.status, r.run_id) for r in batch.results] == [("up-to-date", b.run_id)]
    before = store.list_runs()
    assert _main("run", "fixture_basic") == 0  # up to date: no new run folder
    assert store.list_runs() == before
    assert prepare_run("fixture_basic", overrides={"reps": "301"}).cache_key != key
    assert prepare_run("fixture_basic", variant="tiny").cache_key != key
    nb = lab / "notebooks" / "fixture_basic.py"
    source = nb.read_text()
    try:
        nb.write_text(source.replace("bins=20", "bins=21"))
        assert prepare_run("fixture_basic").cache_key != key
    finally:
        nb.write_text(source)
    data = lab / "data" / "fixture" / "values.csv"
    data.write_text("1.0\n")
    try:
        assert prepare_run("fixture_basic").cache_key != key  # a header `inputs:` file changed
    finally:
        data.write_text("1.0\n2.0\n4.0\n")
    assert prepare_run("fixture_basic").cache_key == key


def test_failing_notebook_keeps_earlier_report_and_latest(lab, capsys):
    # both runs set parameters, so both go to default-custom/ (kept apart from default's latest)
    good = run_study("fixture_fail", overrides={"fail": "false"})
    assert good.status == "ok", good.error
    good_html = (good.run_dir / "report.html").read_bytes()
    assert _main("run", "fixture_fail", "--force", "-p", "seed", "1") == 1
    captured = capsys.readouterr()
    assert "fixture failure on purpose" in captured.err
    vdir = lab / "reports" / "fixture_fail" / "default-custom"
    assert good.run_dir.parent == vdir
    assert os.readlink(vdir / "latest") == good.run_id
    assert (good.run_dir / "report.html").read_bytes() == good_html
    assert _manifest(good.run_dir)["status"] == "ok"
    failed = [p for p in vdir.iterdir() if p.name not in ("latest", good.run_id)]
    assert len(failed) == 1 and not failed[0].name.startswith(".tmp-")
    m = _manifest(failed[0])
    assert m["status"] == "failed"
    assert "RuntimeError: fixture failure on purpose" in m["error"]
    assert [f["name"] for f in m["results"]] == ["draw"]  # findings reached before the error
    executed = (failed[0] / "fixture_fail.ipynb").read_text()
    assert "before the failure" in executed  # the partial executed notebook is kept
    assert "This run failed" in (failed[0] / "report.html").read_text()


def test_interrupted_run_is_marked_and_never_latest(lab, two_runs):
    env = {**os.environ, "SCALINGLAB_ROOT": str(lab)}
    code = (
        "from scalinglab.runner.pipeline import run_study; "
        "r = run_study('fixture_basic', overrides={'sleep_s': '60'}); print(r.status)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    study_dir = lab / "reports" / "fixture_basic"
    vdir = study_dir / "default"
    latest = os.readlink(vdir / "latest")
    custom = study_dir / "default-custom"  # where a run with overrides goes
    custom_latest = os.readlink(custom / "latest") if (custom / "latest").is_symlink() else None
    try:
        deadline = time.monotonic() + 60
        while not list(custom.glob(".tmp-*/fixture_basic.ipynb")):
            assert time.monotonic() < deadline, "the run never started its notebook"
            time.sleep(0.2)
        time.sleep(1.5)  # let the kernel reach the sleeping cell
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out.strip() == "interrupted"
    runs = [r for r in store.list_runs() if r.study == "fixture_basic"]
    stopped = [r for r in runs if _manifest(r.path).get("parameters", {}).get("sleep_s") == 60.0]
    assert len(stopped) == 1 and stopped[0].complete
    m = _manifest(stopped[0].path)
    assert m["status"] == "interrupted" and "SIGTERM" in m["error"]
    assert os.readlink(vdir / "latest") == latest
    now = os.readlink(custom / "latest") if (custom / "latest").is_symlink() else None
    assert now == custom_latest


@pytest.fixture(scope="module")
def shifted_run(lab, two_runs):
    c = run_study("fixture_basic", overrides=[("shift", "1.0")], force=True)
    assert c.status == "ok", c.error
    return c


def test_diff_flags_findings_that_moved(two_runs, shifted_run, capsys):
    a, _ = two_runs
    c = shifted_run
    assert (
        _main(
            "reports",
            "diff",
            str(a.run_dir),
            c.run_id[:-2],  # a unique prefix
            "--format",
            "json",
        )
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    rows = {r["name"]: r for r in d["findings"]}
    assert d["a"] == f"fixture_basic/default/{a.run_id}"
    assert rows["mean"]["moved"] and rows["mean"]["relative"] > 3  # shifted by 1, CI ~0.1 wide
    assert rows["mean"]["delta"] == pytest.approx(1.0, abs=0.25)
    assert "n" not in rows and d["unchanged"] >= 1  # unchanged: only counted
    assert {"what": "parameter", "name": "shift", "a": "0.0", "b": "1.0"} in d["changes"]
    assert d["added"] == [] and d["removed"] == []
    assert (
        _main(
            "reports",
            "diff",
            f"fixture_basic/default/{a.run_id}",
            f"fixture_basic/default/{a.run_id}",
        )
        == 0
    )
    assert "0 of 4 shared findings moved" in capsys.readouterr().out


def test_reports_index_lists_versions_findings_and_diff(lab, two_runs, shifted_run, capsys):
    a, b = two_runs
    index_html = lab / "reports" / "index.html"
    before = index_html.read_text() if index_html.is_file() else None
    assert _main("reports") == 0  # reads only
    assert "fixture_basic/default" in capsys.readouterr().out
    assert (index_html.read_text() if index_html.is_file() else None) == before
    assert _main("reports", "--write-index", "--format", "json") == 0
    listing = json.loads(capsys.readouterr().out)
    idx_html = index_html.read_text()
    idx_json = json.loads((lab / "reports" / "index.json").read_text())
    assert idx_json == listing
    study = next(s for s in idx_json["studies"] if s["study"] == "fixture_basic")
    variants = {v["variant"]: v for v in study["variants"]}
    default = variants["default"]
    good = [r for r in default["runs"] if r["status"] == "ok"]
    assert len(good) >= 2 and default["latest"] == b.run_id  # -p shift 1.0 did not move it
    assert variants["default-custom"]["latest"] == shifted_run.run_id
    assert [f["name"] for f in good[0]["headline"]] == ["mean"]
    assert default["diff"]["b"].endswith(b.run_id) and default["diff"]["changes"] == []
    assert f'href="fixture_basic/default/{a.run_id}/report.html"' in idx_html
    assert (lab / "reports" / "fixture_basic" / "default" / a.run_id / "report.html").is_file()
    assert "shared findings moved beyond their CI half-width" in idx_html
    assert '<table class="sl-summary">' in idx_html and external_references(idx_html) == []


def test_verify_reproduces_a_run_without_touching_reports(lab, two_runs, capsys):
    a, b = two_runs
    before = [r.key for r in store.list_runs()]
    latest = os.readlink(lab / "reports" / "fixture_basic" / "default" / "latest")
    assert _main("verify", f"fixture_basic/default/{a.run_id}") == 0
    out = capsys.readouterr().out
    assert "REPRODUCED" in out and "NOT REPRODUCED" not in out
    assert [r.key for r in store.list_runs()] == before
    assert os.readlink(lab / "reports" / "fixture_basic" / "default" / "latest") == latest


def test_cell_timeout_fails_the_run_and_keeps_latest(lab, two_runs):
    latest = os.readlink(lab / "reports" / "fixture_basic" / "default" / "latest")
    res = run_study("fixture_basic", overrides={"sleep_s": "30"}, cell_timeout=1, force=True)
    assert res.status == "failed" and "timed out" in res.error
    m = _manifest(res.run_dir)
    assert m["status"] == "failed" and res.run_dir.name == res.run_id
    assert (res.run_dir / "fixture_basic.ipynb").is_file()
    assert res.run_dir.parent.name == "default-custom"  # -p sleep_s: not default's parameters
    assert os.readlink(lab / "reports" / "fixture_basic" / "default" / "latest") == latest


def test_inputs_written_by_the_study_are_hashed_after_the_run(lab):
    res = run_study("fixture_basic", variant="tiny", overrides={"write_cache": "true"})
    assert res.status == "ok", res.error
    m = _manifest(res.run_dir)
    assert "data/fixture/cache.csv" in m["input_hashes"]  # created by the run itself
    again = prepare_run("fixture_basic", variant="tiny", overrides={"write_cache": "true"})
    assert again.cache_key == m["cache_key"]  # so an unchanged re-request is up to date
