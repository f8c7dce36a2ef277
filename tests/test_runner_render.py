"""Render-only runs: a markdown edit gives a new report from the latest run's executed
notebook and findings, without a kernel; ``status`` says "prose changed" first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from scalinglab.runner import manifest as manifest_mod
from scalinglab.runner import pipeline
from scalinglab.runner.pipeline import run_study
from scalinglab.runner.render import render_source
from scalinglab.runner.status import study_status

FIXTURES = Path(__file__).parent / "fixtures" / "studies"
pytestmark = pytest.mark.slow


@pytest.fixture
def lab(tmp_path, monkeypatch):
    for sub in ("notebooks", "data/fixture", "reports"):
        (tmp_path / sub).mkdir(parents=True)
    shutil.copy(FIXTURES / "fixture_basic.py", tmp_path / "notebooks")
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    # other work edits lib/ while the tests run: the library part of the key is pinned
    monkeypatch.setattr(manifest_mod, "library_hashes", lambda cells, where="": {"x": "pinned"})
    return tmp_path


def _edit(root: Path, old: str, new: str) -> None:
    nb = root / "notebooks" / "fixture_basic.py"
    text = nb.read_text()
    assert old in text
    nb.write_text(text.replace(old, new, 1))


def _code_cells(run_dir: Path) -> list[tuple]:
    nb = nbformat.read(run_dir / "fixture_basic.ipynb", as_version=4)
    return [
        (c.source, c.execution_count, json.dumps(c.outputs, sort_keys=True))
        for c in nb.cells
        if c.cell_type == "code"
    ]


def test_a_prose_edit_re_renders_without_running_the_notebook(lab, monkeypatch):
    first = run_study("fixture_basic", variant="tiny", force=False)
    assert first.status == "ok", first.error
    assert study_status("fixture_basic", "tiny").state == "up-to-date"

    _edit(lab, "bootstraps the mean.", "bootstraps the mean (a sentence edited).")
    params = '# %% tags=["parameters"]'
    _edit(lab, params, f"# %% [markdown]\n# A new paragraph.\n\n{params}")
    s = study_status("fixture_basic", "tiny")
    assert s.state == "prose changed", s.reasons
    assert any("markdown" in r for r in s.reasons)
    assert f"re-renders it from {first.run_id}" in s.notes[-1]

    def no_kernel(*args, **kwargs):
        raise AssertionError("a prose edit must not execute the notebook")

    monkeypatch.setattr(pipeline, "execute_study", no_kernel)
    second = run_study("fixture_basic", variant="tiny", force=False)
    assert second.status == "ok", second.error
    assert second.rendered_from == first.run_id and second.run_id != first.run_id
    assert second.findings == first.findings
    assert (second.run_dir / "results.json").read_bytes() == (
        first.run_dir / "results.json"
    ).read_bytes()
    assert _code_cells(second.run_dir) == _code_cells(first.run_dir)  # no cell re-ran
    page = (second.run_dir / "report.html").read_text()
    assert "a sentence edited" in page and "A new paragraph." in page
    assert "bootstraps the mean.</p>" not in page
    assert not (second.run_dir / "report-code.html").exists()
    m = json.loads((second.run_dir / "manifest.json").read_text())
    assert m["rendered_from"] == first.run_id and m["status"] == "ok"
    assert (
        m["execution_key"]
        == json.loads((first.run_dir / "manifest.json").read_text())["execution_key"]
    )
    assert (lab / "reports/fixture_basic/tiny/latest").resolve() == second.run_dir.resolve()
    assert study_status("fixture_basic", "tiny").state == "up-to-date"

    # a code edit is not prose: nothing to re-render, the notebook must run
    _edit(lab, 'record("n", x.size)', 'record("n", int(x.size))')
    s = study_status("fixture_basic", "tiny")
    assert s.state == "stale" and any("code" in r for r in s.reasons)
    assert render_source(pipeline.prepare_run("fixture_basic", variant="tiny")) is None
    tried = run_study("fixture_basic", variant="tiny", force=False)  # a failed run, recorded
    assert tried.status == "failed" and "must not execute" in tried.error


def test_a_re_rendered_report_equals_a_full_run_of_the_same_notebook(lab, monkeypatch):
    first = run_study("fixture_basic", variant="tiny")
    assert first.status == "ok", first.error
    _edit(lab, "bootstraps the mean.", "bootstraps the mean, again.")
    rendered = run_study("fixture_basic", variant="tiny", force=False)
    assert rendered.rendered_from == first.run_id
    calls = []
    real = pipeline.execute_study
    monkeypatch.setattr(pipeline, "execute_study", lambda *a, **k: calls.append(1) or real(*a, **k))
    full = run_study("fixture_basic", variant="tiny", force=True)  # --force always executes
    assert full.status == "ok" and full.rendered_from is None and calls == [1]
    assert (full.run_dir / "report.html").read_bytes() == (
        rendered.run_dir / "report.html"
    ).read_bytes()
    assert full.findings == rendered.findings


def test_run_all_re_renders_a_prose_edit_instead_of_executing_it(lab, monkeypatch):
    from scalinglab.runner import batch

    first = run_study("fixture_basic", variant="tiny", force=False)
    assert first.status == "ok", first.error
    _edit(lab, "bootstraps the mean.", "bootstraps the mean (edited for run --all).")

    def no_kernel(*args, **kwargs):
        raise AssertionError("a prose edit must not execute the notebook")

    monkeypatch.setattr(pipeline, "execute_study", no_kernel)
    monkeypatch.setattr(batch, "_execute", no_kernel)  # nor go to a worker
    out = batch.run_all(studies=["fixture_basic"], variant="tiny", scheduler="sync")
    (res,) = out.results
    assert res.status == "ok", res.error
    assert res.rendered_from == first.run_id
    assert "edited for run --all" in (res.run_dir / "report.html").read_text()
