"""The sparsity-laws study end to end through ``scalinglab run`` (tiny variant).

The notebooks are copied into a temporary repository root (``SCALINGLAB_ROOT``), so
the sweep cache and the reports land there, never in the checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from scalinglab.paths import PACKAGE_DIR
from scalinglab.stats.coverage_report import stated_on_data

pytestmark = pytest.mark.slow

REPO = PACKAGE_DIR.parent.parent


def test_tiny_study_through_the_runner(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copytree(REPO / "notebooks", root / "notebooks")
    # the paper's released curves: the trend sizes are calibrated on half of them
    shutil.copytree(REPO / "data" / "published", root / "data" / "published")
    hw = REPO / "data" / "hardware"
    if hw.exists():  # reuse the machine's record instead of measuring it again
        shutil.copytree(hw, root / "data" / "hardware")
    env = {**os.environ, "SCALINGLAB_ROOT": str(root)}
    env.pop("SCALINGLAB_RESULTS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "scalinglab.cli", "run", "sparsity_laws", "--variant", "tiny"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dir = (root / "reports" / "sparsity_laws" / "tiny" / "latest").resolve()
    findings = {
        f["name"]: f for f in json.loads((run_dir / "results.json").read_text())["findings"]
    }
    for act in ("relu", "silu"):
        for name in (
            f"trend/{act}/slope_per_decade",
            f"width_depth/{act}/slope_per_decade",
            f"size/{act}/slope_per_decade",
            f"law/{act}/m/A0",
            f"method/{act}/cett",
        ):
            f = findings[name]
            lo, hi = f["ci"]
            assert np.isfinite([f["point"], lo, hi]).all() and lo <= hi, f
            assert f["level"] == 0.95 and f["method"], f
            if name.startswith("law/"):  # the law fit's group bootstrap over runs
                assert f["resamples"] == 100 and "covers below" in f["method"], f
            else:  # means and slopes over seeds: Student t, which covers at 3 seeds
                assert f["method"].startswith("Student t over seeds"), f
    # the coverage of those intervals at 3 and 5 seeds, simulated on the run's own slopes
    for n in (3, 5):
        assert 0 < findings[f"coverage/student_t/n{n}"]["point"] <= 1
    for name in (
        "loss/relu_minus_silu",
        "kernel/sparse_numba/speedup_at_0.02",
        "kernel/sparse_torch/speedup_at_0.02",
    ):
        assert name in findings
    # activation ratios are fractions, and the sweep was cached under data/.cache/ (tiny)
    for act in ("relu", "silu"):
        assert 0.0 <= findings[f"method/{act}/cett"]["point"] <= 1.0
    cache = root / "data" / ".cache" / "sparsity_laws"
    assert list(cache.glob("sweep-tiny-*.nc"))
    assert not list((root / "data" / "sparsity_laws").glob("sweep-tiny-*.nc"))
    # the long-horizon probe ran and was cached beside the sweep
    assert list(cache.glob("sweep-tiny-horizon-*.nc"))
    # the claims ledger decides every claim of the study file, and no A0 headline rests
    # on a limit that is not identified
    claims = {c["id"]: c for c in json.loads((run_dir / "results.json").read_text())["claims"]}
    assert set(claims) == {
        "relu-decreasing",
        "silu-increasing",
        "relu-limit",
        "silu-limit",
        "weak-scale-relu",
        "weak-scale-silu",
        "deeper-sparser",
        "relu-silu-loss",
        "sparse-speedup",
        "sparse-speedup-real-masks",
    }
    # the matched design decides the size and width-depth claims (it ran: tiny sizes at
    # equal tokens per parameter, a second width-depth family), each cached apart
    assert len(list(cache.glob("sweep-tiny-matched-*.nc"))) == 3
    # the width-depth claim is about the limit: it reads the long width-depth family,
    # which the tiny class does not have, so it is untested and says why (the matched
    # design's mid-transient shapes are shown, and decide nothing)
    wd = claims["deeper-sparser"]
    assert wd["verdict"] == "untested", wd
    assert "tiny class has no long width-depth family" in wd["reason"], wd
    # the paper's claims on our small models: scoped, tested outside the paper's regime,
    # so they hold or differ at our scale and never contradict (notebooks/claims/)
    for c in claims.values():
        assert c["scope"] == "paper" and c["regime"].split(":")[0] in ("outside", "proxy"), c
        assert c["verdict"] != "contradicts", c
    # trends are decided against the minimum effect set on half of the paper's curves
    assert claims["relu-decreasing"]["value"] == pytest.approx(
        -findings["calibration/relu/min_relative_trend"]["point"]
    )
    # the size and limit claims are read on the long design's identified limits (the tiny
    # report trains its long design; a limit left unidentified leaves the claim untested)
    assert len(list(cache.glob("sweep-tiny-long-*.nc"))) == 2
    for act in ("relu", "silu"):
        for model in ("s", "m"):
            assert f"long/{act}/{model}/A0" in findings
        c = claims[f"weak-scale-{act}"]
        if c["verdict"] == "untested":
            assert "not identified at two sizes" in c["reason"], c
        else:  # the tiny design's two sizes: one pair
            assert {e["name"] for e in c["evidence"]} == {f"long/{act}/scale/s-m/A0_relative_slope"}
        lim = claims[f"{act}-limit"]
        assert lim["verdict"] != "untested", lim
        # each size's horizon and seeds, read from the runs, in the claim's regime
        assert re.search(
            r"s to 20 tokens per parameter \(2 seeds, [0-9.]+ passes over the corpus\), "
            r"m to 20 \(2 seeds, [0-9.]+ passes\)",
            lim["regime"],
        ), lim["regime"]
        # every limit names the route of the limit rule that decided it
        for model in ("s", "m"):
            a0 = findings[f"long/{act}/{model}/A0"]
            assert a0["note"].split(";")[0].split(" (")[0] in (
                "route: law",
                "route: plateau",
                "route: none",
            ), a0
            assert (a0["note"].startswith("route: none")) == (not a0["identified"]), a0
            if a0["note"].startswith("route: law") and a0["ci"]:
                # its group bootstrap's coverage, simulated on these runs, with its runs
                said = stated_on_data(a0["method"])
                assert said is not None and said[1] == a0["n"] == 2, a0
            assert f"long/{act}/{model}/loss_change_last_decade" in findings
        # both ratios, per size, and the trend thresholds from half of the paper's curves
        assert f"ratios/main/{act}/m/ppl1/slope_per_decade" in findings
        assert findings[f"calibration/{act}/min_relative_trend"]["point"] > 0
    assert "ratios/main/relu/m/nonzero/slope_per_decade" in findings
    assert "ratios/main/silu/m/nonzero/slope_per_decade" not in findings  # always 1
    # the mid-transient width-depth slopes at both parameter counts are shown (findings)
    assert {"width_depth/relu/slope_per_decade", "width_depth_25k/relu/slope_per_decade"} <= set(
        findings
    )
    for act in ("relu", "silu"):
        f = findings[f"matched/{act}/scale/relative_slope"]
        assert f["ci"][0] <= f["point"] <= f["ci"][1] and f["headline"], f
    for f in findings.values():
        assert not (f["headline"] and not f["identified"]), f
    # kernel intervals from separate processes
    assert "2 separate processes" in findings["kernel/sparse_numba/speedup_at_0.02"]["method"]
    # the kernel on the trained toy model's own masks, next to matched random masks
    assert list(cache.glob("masks-tiny-*.nc"))
    for kind in ("cett", "nonzero"):
        for source in ("real", "random"):
            f = findings[f"kernel/{source}_masks/{kind}/batch1/speedup"]
            assert f["ci"][0] <= f["point"] <= f["ci"][1], f
        assert f"kernel/real_over_random/{kind}/batch4" in findings
    assert claims["sparse-speedup-real-masks"]["verdict"] != "untested"
    horizon = findings["horizon/relu/slope_per_decade/whole"]
    assert np.isfinite(horizon["point"]) and horizon["ci"][0] <= horizon["ci"][1]
    assert (run_dir / "report.html").stat().st_size > 10_000
