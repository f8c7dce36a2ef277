"""The rl_scaling study end to end: the tiny sweep (``tiny_v3``, the default ``v3``
design in miniature), and a user's own logs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scalinglab.runner.pipeline import run_study

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "rl_scaling.py"
CLAIMS = ROOT / "notebooks" / "claims" / "rl_scaling.toml"
# the tiny variant's other resample counts (reps 40, kn_reps 10) for the half-compute and
# early-plateau predictions too: each of their resamples refits twice, and at the default
# 200 they were most of a run's time; the same findings and intervals come out
TINY_PRED = {"pred_reps": 40}


@pytest.fixture
def lab(tmp_path, monkeypatch):
    (tmp_path / "notebooks" / "claims").mkdir(parents=True)
    shutil.copy(NOTEBOOK, tmp_path / "notebooks")
    shutil.copy(CLAIMS, tmp_path / "notebooks" / "claims")
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    return tmp_path


def _findings(result) -> dict:
    data = json.loads((Path(result.run_dir) / "results.json").read_text())
    return {f["name"]: f for f in data["findings"]}


def test_tiny_study_runs_our_own_sweep(lab):
    res = run_study("rl_scaling", variant="tiny", overrides=TINY_PRED)
    assert res.status == "ok", res.error
    found = _findings(res)
    for size in ("s", "m"):
        for p in ("A", "B", "C_mid"):
            f = found[f"scalerl/{size}/{p}"]
            # an interval over the 4 runs, or (tiny's nearly flat curves leave a step
            # whose C_mid sits anywhere between two evaluations) none and not identified
            assert (f["ci"] is not None and f["level"] == 0.95) or (
                not f["identified"] and "outside its refits" in f["note"]
            ), f
            assert f["n"] == 4, f  # 2 warm starts x 2 RL seeds: the interval's n is stated
        assert f"extrapolation/{size}/mae" in found and f"tan/k/{size}" in found
        assert f"scalerl/{size}/A_runs_off_bound" in found
    assert {"tan/Kmax", "tan/N0", "scalerl/A_identified_sizes"} <= set(found)
    assert "tan/holdout_k_error" not in found  # two sizes: nothing to hold out
    assert "ablation/batch_norm/p_improve_A" in found
    for size in ("s", "m"):
        for name in ("A_pred_error", "rmse"):
            assert found[f"scalerl/{size}/{name}"]["ci"] is not None
        # SCALERL-2-final run by run: Student t over the stable runs, or why not
        fin = found[f"scalerl/{size}/final_pred_error"]
        assert fin["method"].startswith("Student t over")
        assert (
            fin["ci"] is not None
            or (not fin["identified"] and "need 3" in fin["note"])
            or ("every resample gave the same value" in fin["note"])
        ), fin
        assert f"phases/{size}/t90_early_error" in found
    share = found["phases/runs/slow_start_share"]
    assert 0.0 <= share["point"] <= 1.0 and share["ci"] is not None
    assert {"plateau/gain_after", "runs/collapsed", "runs/not_taken_off"} <= set(found)
    # the checks that can fail: run by run, held out, the spread split, the coverage
    assert {"scalerl/half_runs/A_abs_error", "tan/heldout_rmse_delta", "runs/unstable"} <= set(
        found
    )
    assert {"coverage/t_at_n", "coverage/percentile_at_n", "tan/s/curvature"} <= set(found)
    # tiny_v3 nests 2 RL seeds in each warm start: base-model and RL spread are separated
    for part in ("warm_start", "rl"):
        f = found[f"spread/final/{part}_sd"]
        assert f["ci"] is not None and "confounded" not in (f["note"] or ""), f
    # no zero-width interval reaches the report
    for f in found.values():
        assert f["ci"] is None or f["ci"][0] < f["ci"][1], f
    ledger = {
        c["id"]: c for c in json.loads((Path(res.run_dir) / "results.json").read_text())["claims"]
    }
    for cid in (
        "SCALERL-1",
        "SCALERL-2",
        "SCALERL-3",
        "SCALERL-4",
        "SCALERL-5",
        "TAN-1",
        "TAN-1-linear",
        "TAN-2",
        "TAN-3",
        "TAN-4",
        "GRPOLAW-1",
        "GRPOLAW-2",
        "GRPOLAW-1-early",
        "GRPOLAW-1-runs",
        "GRPOLAW-1-early-runs",
        "GRPOLAW-3",
        "CONTROL-A",
        "CONTROL-B",
        "CONTROL-B-slope",
    ):
        assert cid in ledger, cid
    # no reuse variant and two sizes: untested, with the reason; the controls are run
    assert ledger["TAN-4"]["verdict"] == "untested" and ledger["TAN-4"]["untested"]
    assert ledger["TAN-3"]["verdict"] == "untested"
    assert ledger["CONTROL-A"]["verdict"] != "untested"
    assert ledger["SCALERL-4"]["findings"] == ["ablation/batch_norm/delta_A"]
    # claims as data: every paper claim is tested outside its paper's regime
    assert ledger["TAN-1"]["scope"] == "paper"
    assert ledger["TAN-1"]["regime"].startswith("outside: ")
    assert ledger["TAN-1"]["verdict"] != "contradicts"  # outside its regime: at our scale
    assert ledger["CONTROL-A"]["scope"] == "project"
    # the default design's reading is kept (tiny runs it) with its {{ }} references filled
    html = (Path(res.run_dir) / "report.html").read_text()
    assert "What the `v3` design" in html or "What the <code>v3</code> design" in html
    assert "{{" not in html and "only-medium" not in html
    assert "What the <code>medium_v2</code> design decides" not in html
    assert "What the <code>small</code> design" not in html
    assert list(lab.glob("data/**/grpo-tiny_v3-*.nc"))  # data/.cache/ for tiny runs


def test_user_logs_give_the_same_analyses(lab):
    rows, rng = [], np.random.default_rng(0)
    c = np.linspace(0, 1e12, 21)
    for n, a in ((1e5, 0.5), (1e6, 0.6), (1e7, 0.7)):
        for seed in range(3):
            y = 0.1 + (a - 0.1) / (1 + (2e11 / np.maximum(c, 1.0)) ** 2.0)
            y[1:] += rng.normal(0, 0.01, c.size - 1)
            y[0] = 0.1
            rows += [
                {"model_size": n, "seed": seed, "compute": ci, "pass_rate": yi}
                for ci, yi in zip(c, y, strict=True)
            ]
    pd.DataFrame(rows).to_csv(lab / "mylogs.csv", index=False)
    res = run_study("rl_scaling", variant="tiny", overrides={"runs": "mylogs.csv", **TINY_PRED})
    assert res.status == "ok", res.error
    found = _findings(res)
    for label, a in (("1e+05", 0.5), ("1e+06", 0.6), ("1e+07", 0.7)):
        assert found[f"scalerl/{label}/A"]["point"] == pytest.approx(a, abs=0.03)
    # no paper's claim (nor this study's design checks) is decided on a user's logs
    assert json.loads((Path(res.run_dir) / "results.json").read_text())["claims"] == []
    assert not list(lab.glob("data/**/*.nc"))  # no sweep was run
