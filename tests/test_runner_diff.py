"""Report versions a reader can follow: diff ordering, the previous differing version, the index."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from scalinglab.runner import index, store
from scalinglab.runner.diff import (
    change_kind,
    diff_claims,
    diff_findings,
    diff_html,
    diff_runs,
    diff_text,
    previous_differing,
)


def _f(name, point, lo=None, hi=None):
    return {
        "name": name,
        "point": point,
        "ci": None if lo is None else [lo, hi],
        "level": 0.95,
        "headline": name == "a",
    }


def test_rows_are_ordered_moved_then_changed_and_unchanged_are_only_counted():
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
    assert [r["name"] for r in d["findings"]] == ["big", "mid", "small", "ci_only"]
    assert d["moved"] == ["big", "mid"]  # |delta|/hw = 10 then 2.5
    assert d["changed"] == ["big", "mid", "small", "ci_only"] and d["unchanged"] == 2
    ci_only = d["findings"][-1]
    assert ci_only["point_changed"] is False and change_kind(ci_only) == "interval"
    text = diff_text({"a": "s/v/1", "b": "s/v/2", "verdicts": [], **d})
    assert "same1" not in text and "same2" not in text
    assert (
        "2 of 6 shared findings moved beyond their CI half-width; 2 changed within it; "
        "2 unchanged (within rtol 1e-06)" in text
    )


def test_numerical_noise_is_not_a_change_and_the_threshold_is_settable():
    a = [
        _f("blas", 1.0),
        _f("real", 1.0),
        _f("zero", 0.0),
        _f("off", 0.0),
        _f("inf", 2.0),
        _f("near_zero", 0.0018155309, -0.0326452964, 0.0407964703),  # rl_scaling, two BLAS
        _f("ci_noise", 0.4390867, 0.38173068, 0.52907359),
    ]
    b = [
        _f("blas", 1.0 + 1e-8),
        _f("real", 1.001),
        _f("zero", 1e-14),
        _f("off", 1e-3),
        _f("inf", float("inf")),
        _f("near_zero", 0.0018155388, -0.0326452947, 0.0407964895),
        _f("ci_noise", 0.4390867, 0.38173043, 0.52907359),
    ]
    d = diff_findings(a, b)
    assert set(d["moved"]) == {"real", "off", "inf"}
    assert set(d["changed"]) == {"real", "off", "inf"} and d["unchanged"] == 4
    strict = diff_findings(a, b, rtol=0.0, atol=0.0)
    assert set(strict["changed"]) == {n["name"] for n in a}  # every bit differs somewhere
    loose = diff_findings(a, b, rtol=0.01)
    assert set(loose["changed"]) == {"inf", "off"}  # 0.1% and 1e-14 are within 1%
    with pytest.raises(ValueError, match="rtol"):
        diff_findings(a, b, rtol=-1)


def test_an_interval_that_moves_with_its_point_unchanged_is_listed():
    d = diff_findings([_f("m", 1.0, 0.9, 1.1)], [_f("m", 1.0, 0.5, 1.5)])
    [row] = d["findings"]
    assert not row["moved"] and not row["point_changed"] and d["unchanged"] == 0
    d = diff_findings([_f("m", 1.0, 0.9, 1.1)], [_f("m", 1.0)])  # the interval is gone
    assert d["changed"] == ["m"]


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


def _cli(*argv: str) -> int:
    import scalinglab.cli as cli

    return cli.main(list(argv))


def test_cli_diff_of_a_study_compares_with_the_last_real_change(versions, monkeypatch, capsys):
    root, (r1, r2, r3, r4) = versions
    monkeypatch.setattr(store, "reports_dir", lambda: root)
    assert _cli("reports", "diff", "study") == 0
    out = capsys.readouterr().out
    assert "20260101T000000Z-a" in out and "20260104T000000Z-d" in out
    assert "2 identical version(s) in between skipped" in out
    assert out.index("verdicts that changed") < out.index("MOVED")
    assert re.search(r"\nk +inconclusive +reproduces\n", out)
    assert _cli("reports", "diff", "20260102T000000Z-b", "20260103T000000Z-c") == 0
    assert (
        "0 of 1 shared findings moved beyond their CI half-width; 0 changed within it; "
        "1 unchanged" in capsys.readouterr().out
    )


def _params(run_dir, **fields):
    m = json.loads((run_dir / "manifest.json").read_text())
    m.update(fields)
    (run_dir / "manifest.json").write_text(json.dumps(m))


def test_diff_names_what_differs_between_the_runs_first(versions, monkeypatch, capsys):
    """After ``-p confidence 0.9 -p method bca`` the diff says so before any finding."""
    root, (r1, r2, r3, r4) = versions
    base = {"seed": 0, "confidence": 0.95, "method": "percentile", "reps": 100}
    _params(
        r1,
        parameters=base,
        input_hashes={"data/x.csv": "a" * 64, "data/old.csv": "c" * 64},
        lib_hash="1" * 64,
        lock_hash="l" * 64,
        git_commit="aaaaaaa1",
        environment={"python": "3.11.7", "packages": {"numpy": "2.1.0", "scipy": "1.14"}},
    )
    _params(
        r2,
        parameters={**base, "confidence": 0.9, "method": "bca"},
        input_hashes={"data/x.csv": "b" * 64, "data/new.csv": "d" * 64},
        lib_hash="2" * 64,
        lock_hash="l" * 64,
        git_commit="bbbbbbb2",
        git_dirty=True,
        environment={"python": "3.11.7", "packages": {"numpy": "2.2.0", "scipy": "1.14"}},
    )
    d = diff_runs(r1, r2)
    changes = {(c["what"], c["name"]): (c["a"], c["b"]) for c in d["changes"]}
    assert changes == {
        ("parameter", "confidence"): ("0.95", "0.9"),
        ("parameter", "method"): ("'percentile'", "'bca'"),
        ("input", "data/x.csv"): ("a" * 12, "b" * 12),
        ("input", "data/old.csv"): ("c" * 12, "(absent)"),
        ("input", "data/new.csv"): ("(absent)", "d" * 12),
        ("library", "lib_hash"): ("1" * 12, "2" * 12),
        ("commit", "git"): ("aaaaaaa", "bbbbbbb + uncommitted changes"),
        ("package", "numpy"): ("2.1.0", "2.2.0"),
    }
    monkeypatch.setattr(store, "reports_dir", lambda: root)
    assert _cli("reports", "diff", r1.name, r2.name) == 0
    out = capsys.readouterr().out
    assert re.search(r"\nparameter +confidence +0\.95 +0\.9\n", out)
    assert re.search(r"\nparameter +method +'percentile' +'bca'\n", out)
    assert out.index("what differs between the runs") < out.index("verdicts that changed")
    assert out.index("verdicts that changed") < out.index("MOVED")
    assert _cli("reports", "diff", r3.name, r4.name, "--format", "json") == 0
    same = json.loads(capsys.readouterr().out)
    assert same["changes"] == [] and same["findings"] == [] and same["unchanged"] == 1
    page = diff_html(d)
    assert "What differs between the runs" in page and "&#39;bca&#39;" in page
    assert page.index("What differs") < page.index("Verdicts that changed")


def test_cli_diff_threshold_is_settable(versions, monkeypatch, capsys):
    root, (r1, r2, r3, r4) = versions
    m = json.loads((r4 / "manifest.json").read_text())
    m["results"][0]["point"] *= 1 + 1e-8  # another machine's BLAS
    (r4 / "manifest.json").write_text(json.dumps(m))
    monkeypatch.setattr(store, "reports_dir", lambda: root)
    assert _cli("reports", "diff", r3.name, r4.name) == 0
    assert "0 changed within it; 1 unchanged" in capsys.readouterr().out
    assert _cli("reports", "diff", r3.name, r4.name, "--rtol", "0") == 0
    assert "1 changed within it; 0 unchanged (within rtol 0)" in capsys.readouterr().out
    assert _cli("reports", "diff", "--rtol", "-1", r3.name, r4.name) == 2
    assert "--rtol and --atol must be >= 0" in capsys.readouterr().err


@pytest.mark.parametrize("which", ["a", "b"])
@pytest.mark.parametrize("how", ["garbage", "not a manifest", "missing"])
def test_a_corrupt_manifest_is_an_error_naming_the_file(versions, monkeypatch, capsys, which, how):
    root, (r1, r2, r3, r4) = versions
    bad = r1 if which == "a" else r2
    monkeypatch.setattr(store, "reports_dir", lambda: root)
    specs = [str(r1), str(r2)]
    if how == "garbage":
        (bad / "manifest.json").write_text('{"study": "study", "results": [')
    elif how == "not a manifest":
        (bad / "manifest.json").write_text('{"results": 3}')
    else:
        (bad / "manifest.json").unlink()
    assert _cli("reports", "diff", *specs) == 2
    err = capsys.readouterr().err
    named = bad if how == "missing" else bad / "manifest.json"  # missing: not a run folder
    assert str(named) in err and "removed" not in err
    assert err.count("\n") == 1, err


def test_a_corrupt_latest_manifest_fails_the_study_diff(versions, monkeypatch, capsys):
    root, (r1, r2, r3, r4) = versions
    (r4 / "manifest.json").write_text("\x00\x01 not json")
    monkeypatch.setattr(store, "reports_dir", lambda: root)
    assert _cli("reports", "diff", "study") == 2
    captured = capsys.readouterr()
    assert str(r4 / "manifest.json") in captured.err and "corrupt" in captured.err
    assert "removed" not in captured.out


def test_a_corrupt_results_file_is_an_error_not_every_claim_removed(versions, monkeypatch, capsys):
    root, (r1, r2, r3, r4) = versions
    (r2 / "results.json").write_text('{"findings": [], "claims": [{"id"')
    monkeypatch.setattr(store, "reports_dir", lambda: root)
    assert _cli("reports", "diff", r1.name, r2.name) == 2
    assert str(r2 / "results.json") in capsys.readouterr().err


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
    text = index.listing_text(idx, detail=True)
    assert text.startswith("study / default: 1 reproduces\nversion (* latest)")


def test_index_leaves_out_variants_git_ignores_as_a_fresh_clone_would(versions):
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


def _started(run_dir, when):
    _params(run_dir, started=when, title="A study")


@pytest.fixture
def two_studies(versions):
    """``study`` (last run 2026-01-04) and ``other`` (one newer run, a hostile statement)."""
    root, runs = versions
    for i, r in enumerate(runs, start=1):
        _started(r, f"2026-01-0{i}T00:00:00Z")
    other = root / "other" / "default" / "20260201T000000Z-e"
    other.parent.mkdir(parents=True)
    shutil.copytree(runs[0], other)
    claims = [
        {"id": "o", "paper": "P", "statement": "<script>x</script>", "verdict": "contradicts"}
    ]
    (other / "results.json").write_text(json.dumps({"findings": [], "claims": claims}))
    _params(other, study="other", run_id=other.name, started="2026-02-01T00:00:00Z")
    store.set_latest(other)
    return root, runs, other


def test_index_opens_with_a_one_screen_summary_newest_first(two_studies, monkeypatch):
    from scalinglab.runner.html import external_references
    from scalinglab.runner.pages import stylesheet
    from scalinglab.textfmt import json_safe

    root, runs, other = two_studies
    monkeypatch.setattr(
        index, "_state", lambda s, v, r, **_: "stale" if s == "study" else "up-to-date"
    )
    idx = index.collect(reports_root=root, with_state=True)
    assert [(r["study"], r["variant"]) for r in idx["summary"]] == [
        ("other", "default"),
        ("study", "default"),
    ]
    study_row = idx["summary"][1]
    assert study_row["verdicts"] == {"reproduces": 1} and study_row["state"] == "stale"
    assert study_row["last_run"] == "2026-01-04T00:00:00Z" and study_row["versions"] == 5
    assert [s["study"] for s in idx["studies"]] == ["other", "study"]
    page = index.render_html(json_safe(idx))
    summary = page[page.index('<table class="sl-summary">') : page.index("</table>")]
    assert page.index('<table class="sl-summary">') < page.index("<h3")  # summary first
    assert summary.index("other / default") < summary.index("study / default")
    rows = summary.split("<tr><td")[1:]
    assert "other / default" in rows[0] and "study / default" in rows[1]
    counts = [re.findall(r'<td class="sl-n">(\d*)</td>', r) for r in rows]
    # a column per verdict some variant has, in VERDICTS order: reproduces, contradicts
    assert counts == [["", "1"], ["1", ""]]
    assert "stale" in rows[1] and "up-to-date" in rows[0] and "2026-01-04 00:00" in rows[1]
    assert 'href="study/default/20260104T000000Z-d/report.html"' in rows[1]
    first_rule = stylesheet().splitlines()[0]
    assert page.count(first_rule) == 1  # the one stylesheet, inlined once
    assert "<script>x" not in page and "&lt;script&gt;x" in page
    assert external_references(page) == []


def test_index_shows_a_corrupt_run_as_corrupt(two_studies):
    root, runs, _ = two_studies
    (runs[1] / "manifest.json").write_text("{broken")
    idx = index.collect(reports_root=root)
    run = next(
        r
        for s in idx["studies"]
        for v in s["variants"]
        for r in v["runs"]
        if r["run_id"] == runs[1].name
    )
    assert run["status"] == "corrupt" and str(runs[1] / "manifest.json") in run["error"]
    assert "corrupt" in index.render_html(idx)
    (runs[3] / "results.json").write_text('{"claims": [')  # the latest version's ledger
    page = index.render_html(index.collect(reports_root=root))
    assert f"Claims ledger unreadable: file {runs[3] / 'results.json'}: corrupt results" in page
    assert "no published claims declared" not in page.split('id="study/default"')[1]


def test_reports_lists_without_writing(two_studies, monkeypatch, capsys):
    root, runs, _ = two_studies
    monkeypatch.setenv("SCALINGLAB_ROOT", str(root.parent))
    assert _cli("reports") == 0
    out = capsys.readouterr().out
    assert not (root / "index.html").exists() and not (root / "index.json").exists()
    lines = out.splitlines()
    assert len(lines) == 4 and max(map(len, lines)) <= 120, out
    assert lines[2].startswith("other/default ") and lines[3].startswith("study/default ")
    assert _cli("reports", "--limit", "1") == 0
    out = capsys.readouterr().out
    assert "study/default" not in out and out.rstrip().endswith("(1 more; --limit)")
    assert _cli("reports", "study", "--limit", "2") == 0
    out = capsys.readouterr().out
    assert "other" not in out and "20260104T000000Z-d*" in out and "20260103T000000Z-c" in out
    assert "20260102T000000Z-b" not in out and "(3 older versions; --limit)" in out
    assert _cli("reports", "study", "--format", "json") == 0
    assert [s["study"] for s in json.loads(capsys.readouterr().out)["studies"]] == ["study"]
    assert _cli("reports", "nosuch") == 2
    assert "no reports of study 'nosuch'" in capsys.readouterr().err
    assert not (root / "index.html").exists()
    assert _cli("reports", "--write-index") == 0
    assert (root / "index.html").is_file() and (root / "index.json").is_file()
    assert "wrote " in capsys.readouterr().out


def test_nox_reports_session_writes_the_index_explicitly():
    from pathlib import Path

    noxfile = (Path(__file__).resolve().parents[1] / "noxfile.py").read_text()
    session = noxfile[noxfile.index("def reports(") : noxfile.index("def tests(")]
    assert '"reports", "--write-index"' in session


def test_index_marks_a_retired_variant_and_keeps_its_versions(two_studies, monkeypatch):
    root, runs, _ = two_studies
    why = "its design runs as the default variant since 2026-11-28"
    real = index._state
    monkeypatch.setattr(index, "_retired", lambda s, v: why if s == "other" else None)
    told = []
    monkeypatch.setattr(
        index, "_state", lambda s, v, r, *, retired: told.append(retired) or "up-to-date"
    )
    idx = index.collect(reports_root=root, with_state=True)
    assert sorted(map(str, told)) == sorted(map(str, [why, None]))  # read once, passed on
    other = next(s for s in idx["studies"] if s["study"] == "other")["variants"][0]
    study = next(s for s in idx["studies"] if s["study"] == "study")["variants"][0]
    assert other["retired"] == why and study["retired"] is None
    assert len(study["runs"]) == 5 and len(other["runs"]) == 1
    page = index.render_html(idx)
    assert f"Retired: {why}" in page and page.count("Retired:") == 1
    monkeypatch.undo()
    assert real("other", "default", root, retired=why) == index.RETIRED
