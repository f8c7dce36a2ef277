"""Report versions a reader can follow: diff ordering, the previous differing version, the index."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from scalinglab.cli import reports as cli_reports
from scalinglab.runner import index, store
from scalinglab.runner.diff import diff_claims, diff_findings, diff_text, previous_differing


def _f(name, point, lo=None, hi=None):
    return {
        "name": name,
        "point": point,
        "ci": None if lo is None else [lo, hi],
        "level": 0.95,
        "headline": name == "a",
    }


def test_rows_are_ordered_moved_changed_unchanged_and_unchanged_are_counted():
    a = [
        _f("same1", 1.0, 0.5, 1.5),
        _f("small", 1.0, 0.0, 2.0),
        _f("big", 1.0, 0.9, 1.1),
        _f("mid", 1.0, 0.8, 1.2),
        _f("same2", 2.0),
        _f("ci_only", 1.0, 0.5, 1.5),
    ]
    b = [
        _f("same1", 1.0, 0.5, 1.5),
        _f("small", 1.2, 0.2, 2.2),
        _f("big", 2.0, 1.9, 2.1),
        _f("mid", 1.5, 1.3, 1.7),
        _f("same2", 2.0),
        _f("ci_only", 1.0, 0.4, 1.6),
    ]
    d = diff_findings(a, b)
    assert [r["name"] for r in d["findings"]] == [
        "big",
        "mid",
        "small",
        "ci_only",
        "same1",
        "same2",
    ]
    assert d["moved"] == ["big", "mid"]  # |delta|/hw = 10 then 2.5
    assert d["changed"] == ["big", "mid", "small", "ci_only"] and d["unchanged"] == 2
    text = diff_text({"a": "s/v/1", "b": "s/v/2", "verdicts": [], **d})
    assert "same1" not in text and "same2" not in text
    assert (
        "2 of 6 shared findings moved beyond their CI half-width; 2 changed within it; "
        "2 unchanged" in text
    )


def test_a_finding_without_interval_moves_only_beyond_numerical_noise():
    a = [_f("blas", 1.0), _f("real", 1.0), _f("zero", 0.0), _f("off", 0.0), _f("inf", 2.0)]
    b = [_f("blas", 1.0 + 1e-9), _f("real", 1.001), _f("zero", 1e-14), _f("off", 1e-3)]
    b.append(_f("inf", float("inf")))
    d = diff_findings(a, b)
    assert set(d["moved"]) == {"real", "off", "inf"}
    assert set(d["changed"]) == {"blas", "real", "zero", "off", "inf"}  # still listed


def test_verdict_changes_lead_the_diff():
    ca = [
        {"id": "x", "verdict": "reproduces"},
        {"id": "y", "verdict": "inconclusive"},
        {"id": "gone", "verdict": "untested"},
    ]
    cb = [
        {"id": "x", "verdict": "reproduces"},
        {"id": "y", "verdict": "contradicts"},
        {"id": "new", "verdict": "reproduces"},
    ]
    v = diff_claims(ca, cb)
    assert v == [
        {"id": "y", "verdict_a": "inconclusive", "verdict_b": "contradicts"},
        {"id": "new", "verdict_a": None, "verdict_b": "reproduces"},
        {"id": "gone", "verdict_a": "untested", "verdict_b": None},
    ]
    d = diff_findings([_f("m", 1.0, 0.9, 1.1)], [_f("m", 3.0, 2.9, 3.1)])
    text = diff_text({"a": "s/v/1", "b": "s/v/2", "verdicts": v, **d})
    assert text.index("verdicts that changed") < text.index("MOVED")


def _run(root, run_id, findings, claims=(), status="ok", commit=None):
    d = root / "study" / "default" / run_id
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(
        json.dumps(
            {
                "study": "study",
                "variant": "default",
                "run_id": run_id,
                "status": status,
                "results": findings,
                "git_commit": commit,
                "git_dirty": False,
            }
        )
    )
    (d / "results.json").write_text(json.dumps({"findings": findings, "claims": list(claims)}))
    return d


@pytest.fixture
def versions(tmp_path):
    root = tmp_path / "reports"
    c_old = [{"id": "k", "paper": "P", "statement": "s", "verdict": "inconclusive"}]
    c_new = [{"id": "k", "paper": "P", "statement": "s", "verdict": "reproduces"}]
    r1 = _run(root, "20260101T000000Z-a", [_f("a", 0.47, 0.40, 0.55)], c_old)
    r2 = _run(root, "20260102T000000Z-b", [_f("a", 0.80, 0.70, 0.82)], c_new)
    _run(root, "20260102T120000Z-x", [], status="failed")
    r3 = _run(root, "20260103T000000Z-c", [_f("a", 0.80, 0.70, 0.82)], c_new)
    r4 = _run(root, "20260104T000000Z-d", [_f("a", 0.80, 0.70, 0.82)], c_new)
    store.set_latest(r4)
    return root, (r1, r2, r3, r4)


def test_previous_differing_skips_identical_versions_and_failed_runs(versions):
    root, (r1, r2, r3, r4) = versions
    assert previous_differing(r4) == (r1.resolve(), 2)
    assert previous_differing(r2) == (r1.resolve(), 0)
    assert previous_differing(r1) == (None, 0)


def test_cli_diff_of_a_study_compares_with_the_last_real_change(versions, monkeypatch, capsys):
    root, (r1, r2, r3, r4) = versions
    monkeypatch.setattr(store, "reports_dir", lambda: root)
    args = argparse.Namespace(reports_cmd="diff", runs=["study"], format="table", diff_format=None)
    assert cli_reports.main(args) == 0
    out = capsys.readouterr().out
    assert "20260101T000000Z-a" in out and "20260104T000000Z-d" in out
    assert "2 identical version(s) in between skipped" in out
    assert out.index("verdicts that changed") < out.index("MOVED")
    assert re.search(r"\nk +inconclusive +reproduces\n", out)
    args.runs = ["20260102T000000Z-b", "20260103T000000Z-c"]
    assert cli_reports.main(args) == 0
    assert (
        "0 of 1 shared findings moved beyond their CI half-width; 0 changed within it; "
        "1 unchanged" in capsys.readouterr().out
    )


def test_index_shows_ledger_moves_and_commit_subjects(versions, monkeypatch):
    root, _ = versions
    monkeypatch.setattr(
        index, "commit_subjects", lambda commits, **kw: {"abc": "Kernel: tiled loop reordered"}
    )
    for p in root.glob("study/default/2026*"):
        m = json.loads((p / "manifest.json").read_text())
        m["git_commit"] = "abc"
        (p / "manifest.json").write_text(json.dumps(m))
    idx = index.collect(reports_root=root)
    v = idx["studies"][0]["variants"][0]
    runs = {r["run_id"]: r for r in v["runs"]}
    assert runs["20260102T000000Z-b"]["moved"] == 1
    assert runs["20260103T000000Z-c"]["changed"] == 0
    assert runs["20260101T000000Z-a"]["moved"] is None
    assert runs["20260101T000000Z-a"]["claims_summary"] == {"inconclusive": 1}
    assert [c["verdict"] for c in v["claims"]] == ["reproduces"]
    assert v["diff"]["a"].endswith("20260101T000000Z-a")
    page = index.render_html(idx)
    assert "Kernel: tiled loop reordered" in page
    assert "1 moved beyond their interval (1 changed)" in page
    assert "Claims ledger of the latest version: 1 reproduces" in page
    assert "identical to the previous" in page
    text = index.listing_text(idx)
    assert text.startswith("study / default: claims ledger 1 reproduces")


def test_index_leaves_out_variants_git_ignores_as_a_fresh_clone_would(versions):
    import shutil
    import subprocess

    root, _ = versions
    repo = root.parent
    tiny = root / "study" / "tiny"
    shutil.copytree(root / "study" / "default", tiny, symlinks=True)
    assert {v["variant"] for v in index.collect(reports_root=root)["studies"][0]["variants"]} == {
        "default",
        "tiny",
    }  # outside a repository nothing is ignored
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("reports/*/tiny/\n")
    variants = index.collect(reports_root=root)["studies"][0]["variants"]
    assert [v["variant"] for v in variants] == ["default"]
    assert len(variants[0]["runs"]) == 5
