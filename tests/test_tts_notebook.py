"""The test_time_scaling study end to end: the tiny study through the runner, and a user's table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scalinglab.runner.pipeline import run_study
from scalinglab.textfmt import fmt_num

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "test_time_scaling.py"


@pytest.fixture
def lab(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    shutil.copy(NOTEBOOK, tmp_path / "notebooks")
    (tmp_path / "notebooks" / "claims").mkdir()
    shutil.copy(
        ROOT / "notebooks" / "claims" / "test_time_scaling.toml", tmp_path / "notebooks" / "claims"
    )
    (tmp_path / "data" / "hardware").mkdir(parents=True)
    for f in (ROOT / "data" / "hardware").glob("*.json"):
        shutil.copy(f, tmp_path / "data" / "hardware")
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    return tmp_path


def _results(result) -> tuple[dict, dict]:
    data = json.loads((Path(result.run_dir) / "results.json").read_text())
    return ({f["name"]: f for f in data["findings"]}, {c["id"]: c for c in data["claims"]})


def test_tiny_study_samples_its_own_policies(lab):
    res = run_study("test_time_scaling", variant="tiny")
    assert res.status == "ok", res.error
    found, ledger = _results(res)
    for s in ("s", "m", "l"):
        for name in (
            f"coverage/{s}/k1",
            f"coverage/{s}/k16",
            f"law/{s}/a",
            f"law/{s}/b",
            f"extrapolation/{s}/error",
            f"ceiling/{s}/never_solved",
        ):
            assert found[name]["ci"] is not None, name
        # where every resample plateaus at the same k the zero-width interval is refused
        plateau = found[f"majority/{s}/k_plateau"]
        assert plateau["ci"] is not None or "zero width" in (plateau.get("note") or "")
        assert found[f"coverage/{s}/k16"]["point"] > found[f"coverage/{s}/k1"]["point"]
        # the KV share is the cost formula at the measured lengths: a value, no interval
        assert found[f"cost/{s}/kv_share"]["ci"] is None
        assert 0 < found[f"cost/{s}/kv_share"]["point"] < 1
        assert found[f"cost/{s}/own_length_over_mean_length"]["point"] >= 1 - 1e-12
    for pair in ("m_vs_s", "l_vs_m", "l_vs_s"):  # the order check, with paired intervals
        assert found[f"quality/{pair}/pass1_gain"]["ci"] is not None, pair
    assert {
        "cost/overrate_small",
        "cost/flops/adv_small_vs_large",
        "cost/eflops/adv_small_vs_large",
        "cost/disagree_share",
    } <= set(found)
    # the papers' claims on tiny policies: outside their regime, never "contradicts"
    # KIN-1's sign is set by the cost formula: shown as a check, never decided
    assert ledger["KIN-1"]["verdict"] == "untested"
    assert "set by the cost formula" in ledger["KIN-1"]["reason"]
    for cid in ("LLM-1", "LLM-3", "LLM-4", "LLM-5"):
        assert ledger[cid]["verdict"] in (
            "holds at our scale",
            "differs at our scale",
            "inconclusive",
            "inconclusive (Monte Carlo)",
            "not identified",
        ), cid
        assert ledger[cid]["scope"] == "paper" and ledger[cid]["regime"].startswith("outside")
    for cid in ("LLM-2", "KIN-2", "KIN-4"):  # cannot fail, or cannot be tested here
        assert ledger[cid]["verdict"] == "untested", cid
    # the size-choice claims are decided exactly when the largest is the stronger policy
    gain = found["quality/l_vs_s/pass1_gain"]
    stronger = gain["ci"][0] > 0
    assert ("ordered/flops_upsample_small_vs_large_k1" in found) == stronger
    for cid in ("LLM-6", "KIN-3"):
        assert (ledger[cid]["verdict"] != "untested") == stronger, cid
    assert ledger["ORDER-1"]["scope"] == "project"
    # prose names findings; the report shows them with their intervals, as recorded
    page = (Path(res.run_dir) / "report.html").read_text()
    gain = found["majority/s/cov_gain"]
    assert "{{" not in page and f"size <code>s</code> gains {fmt_num(gain['point'])} [" in page
    # the samples (with provenance) and the policies (with their sidecars) are cached
    nc = list(lab.glob("data/.cache/test_time_scaling/samples-tiny-*.nc"))
    assert nc and len(list(lab.glob("data/.cache/test_time_scaling/policies/*.json"))) == 3


def test_users_table_gets_coverage_laws(lab):
    rng, rows = np.random.default_rng(0), []
    for m, q in (("big", 0.3), ("small", 0.1)):
        for p in range(40):
            pp = rng.beta(q * 2, 2 * (1 - q))
            rows += [(m, p, s, int(rng.random() < pp)) for s in range(64)]
    table = lab / "mine.csv"
    pd.DataFrame(rows, columns=["model", "problem", "sample", "correct"]).to_csv(table, index=False)
    res = run_study(
        "test_time_scaling",
        variant="tiny",
        overrides={"samples": str(table), "reps": 50, "fit_reps": 10},
    )
    assert res.status == "ok", res.error
    found, ledger = _results(res)
    assert found["coverage/big/k16"]["point"] > found["coverage/big/k1"]["point"]
    assert "law/small/b" in found and "cost/overrate_small" not in found
    # a user's samples: only this project's checks of their sampler, no paper attribution
    assert "KIN-1" not in ledger and set(ledger) == {"LLM-1", "LLM-3", "LLM-4", "LLM-5"}
    assert all(c["scope"] == "project" and "Brown" not in c["paper"] for c in ledger.values())


def test_the_regime_names_the_sampled_policies_sizes():
    import xarray as xr

    from scalinglab.studies.tts import cost as ttc

    ds = xr.Dataset(
        coords={
            "size": ["s", "m"],
            "n_params": ("size", [24736.0, 147904.0]),
            "n_layer": ("size", [2, 3]),
            "n_head": ("size", [2, 4]),
            "d_model": ("size", [32, 64]),
        }
    )
    assert ttc.params_text(ds) == "25k-148k"
    assert ttc.params_text(ds.isel(size=[0])) == "25k"
    assert ttc.params_text(xr.Dataset(coords={"size": ["s"]})) == "unknown-size"
