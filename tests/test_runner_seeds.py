"""Seed robustness (issue 28): ``verify --seeds`` re-runs a report's analysis with other
resampling seeds and lists every verdict that changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import scalinglab.cli as cli
from scalinglab.errors import ParameterError, StudyError
from scalinglab.runner import manifest as manifest_mod
from scalinglab.runner.pipeline import run_study
from scalinglab.runner.seeds import compare_verdicts, parse_seeds, seed_robustness

FIXTURES = Path(__file__).parent / "fixtures" / "seed_studies"


def test_parse_seeds():
    assert parse_seeds("1,2") == [1, 2] and parse_seeds(" 3 ") == [3]
    with pytest.raises(ParameterError, match="'x' is not an integer"):
        parse_seeds("1,x")
    with pytest.raises(ParameterError, match="at least one"):
        parse_seeds(",")


def test_compare_verdicts_marks_changes_and_missing_claims():
    recorded = [{"id": "a", "verdict": "reproduces"}, {"id": "b", "verdict": "inconclusive"}]
    reruns = {
        "1": [{"id": "a", "verdict": "reproduces"}, {"id": "b", "verdict": "inconclusive"}],
        "2": [{"id": "a", "verdict": "inconclusive"}, {"id": "c", "verdict": "reproduces"}],
    }
    rows = {r["id"]: r for r in compare_verdicts(recorded, reruns)}
    assert rows["a"]["changed"]
    assert rows["a"]["verdicts"] == {"1": "reproduces", "2": "inconclusive"}
    assert rows["b"]["changed"]  # missing under seed 2
    assert rows["c"]["changed"] and rows["c"]["recorded"] is None


def test_an_undecided_claim_whose_label_alone_moves_is_listed_apart_not_as_a_change():
    mc = "inconclusive (Monte Carlo)"
    recorded = [{"id": "w", "verdict": "inconclusive"}, {"id": "d", "verdict": mc}]
    reruns = {
        "1": [{"id": "w", "verdict": "inconclusive"}, {"id": "d", "verdict": mc}],
        "2": [{"id": "w", "verdict": mc}, {"id": "d", "verdict": "reproduces"}],
    }
    rows = {r["id"]: r for r in compare_verdicts(recorded, reruns)}
    # undecided under every seed: the decision holds, only the label moves
    assert not rows["w"]["changed"] and rows["w"]["label_only"]
    # decided under one seed: a real change, whatever the other labels
    assert rows["d"]["changed"] and not rows["d"]["label_only"]


def _fake_run(tmp_path, params, claims, status="ok"):
    d = tmp_path / "s" / "default" / "r1"
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(
        json.dumps(
            {
                "study": "s",
                "variant": "default",
                "run_id": "r1",
                "status": status,
                "parameters": params,
            }
        )
    )
    (d / "results.json").write_text(json.dumps({"findings": [], "claims": claims}))
    return d


def test_seed_robustness_keeps_the_other_parameters_and_changes_only_the_seed(tmp_path):
    run = _fake_run(tmp_path, {"seed": 0, "reps": 7}, [{"id": "a", "verdict": "reproduces"}])
    seen = []

    def rerun(manifest, overrides):
        seen.append(overrides)
        v = "reproduces" if overrides["seed"] == 1 else "inconclusive"
        return "ok", None, [{"id": "a", "verdict": v}]

    res = seed_robustness(run, [1, 2], rerun=rerun)
    assert seen == [{"seed": 1, "reps": 7}, {"seed": 2, "reps": 7}]
    assert not res.stable and [r["id"] for r in res.changed] == ["a"]
    assert "1 verdict(s) change with the seed" in res.text()
    with pytest.raises(StudyError, match="no parameter 'analysis_seed'"):
        seed_robustness(run, [1], param="analysis_seed", rerun=rerun)


def test_a_failed_rerun_is_not_called_stable(tmp_path):
    run = _fake_run(tmp_path, {"seed": 0}, [{"id": "a", "verdict": "reproduces"}])
    res = seed_robustness(run, [1], rerun=lambda m, o: ("failed", "boom", []))
    assert not res.stable and res.failures == ["seed=1: failed: boom"]


@pytest.mark.slow
def test_verify_seeds_on_a_fixture_study_lists_the_verdict_that_flips(
    tmp_path, monkeypatch, capsys
):
    root = tmp_path / "lab"
    for sub in ("notebooks", "reports"):
        (root / sub).mkdir(parents=True)
    shutil.copy(FIXTURES / "fixture_seeds.py", root / "notebooks")
    monkeypatch.setenv("SCALINGLAB_ROOT", str(root))
    monkeypatch.setattr(manifest_mod, "library_hashes", lambda cells, where="": {"x": "pinned"})
    a = run_study("fixture_seeds", command="pytest")
    assert a.status == "ok", a.error
    recorded = {
        c["id"]: c["verdict"]
        for c in json.loads((a.run_dir / "results.json").read_text())["claims"]
    }
    assert recorded["far"] == "reproduces"
    seeds = "1,2,3,4,5,6"
    code = cli.main(["verify", str(a.run_dir), "--seeds", seeds, "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert out["changed"] == ["near"] and code == 1  # 'far' never moves
    assert set(out["claims"][0]["verdicts"]) == set(seeds.split(","))
    # verify writes no report of its own: only the study's folder and the stylesheet every
    # report links (written by the first run) are there
    listed = sorted(p.name for p in (root / "reports").iterdir())
    assert [n for n in listed if not n.startswith("report-")] == ["fixture_seeds"]
    assert all(n.endswith(".css") for n in listed if n.startswith("report-"))
