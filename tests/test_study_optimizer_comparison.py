"""The optimizer-comparison study end to end through ``scalinglab run`` (tiny variant).

The notebook is copied into a temporary repository root (``SCALINGLAB_ROOT``), so the
sweep cache and the reports land there, never in the checkout. The tiny sweep itself is
trained once for the session (``optimizer_tiny_sweep`` in ``conftest.py``, the same
``sweep_config("tiny")`` in process, as the tiny variant's ``scheduler: sync`` runs it) and
put in that root's cache: the notebook must find it there and reuse it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.compute import TINY_CACHE
from scalinglab.fitting.loss_table import sweep_table
from scalinglab.paths import PACKAGE_DIR

pytestmark = pytest.mark.slow

STUDY = "optimizer_comparison"
REPO = PACKAGE_DIR.parent.parent


def _run(root: Path, *args: str) -> tuple[list[dict], Path]:
    env = {**os.environ, "SCALINGLAB_ROOT": str(root)}
    env.pop("SCALINGLAB_RESULTS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "scalinglab.cli", "run", STUDY, "--variant", "tiny", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    folder = "tiny-user" if "runs" in args else "tiny"  # user data has its own folder
    run_dir = (root / "reports" / STUDY / folder / "latest").resolve()
    return json.loads((run_dir / "results.json").read_text())["findings"], run_dir


def test_tiny_study_and_own_table(tmp_path, optimizer_tiny_sweep):
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(REPO / "notebooks" / f"{STUDY}.py", root / f"{STUDY}.py")
    (root / "notebooks").mkdir()
    shutil.move(root / f"{STUDY}.py", root / "notebooks" / f"{STUDY}.py")
    (root / "notebooks" / "claims").mkdir()
    shutil.copy(REPO / "notebooks" / "claims" / f"{STUDY}.toml", root / "notebooks" / "claims")
    shared = optimizer_tiny_sweep
    seeded = root / shared.path.relative_to(shared.root)
    seeded.parent.mkdir(parents=True)
    shutil.copy2(shared.path, seeded)
    findings, run_dir = _run(root)
    by = {f["name"]: f for f in findings}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "ok"
    for o in ("nadamw", "muon", "soap", "lion", "scion"):
        assert f"speedup_mean/{o}/xs2" in by and f"step_time_ratio/{o}/xs2" in by
        assert f"size_slope/{o}" in by
    assert "ranking/tau_midrun/xs2/2x" in by and "matrix_over_scalar/xs2" in by
    # the redesign's pieces, exercised by the tiny class: data seen once, both control arms
    assert 0 < by["data/epochs_max"]["point"] < 1
    assert "ranking/tau_gain_constant/xs2/2x" in by
    assert any(n.startswith("transfer_ratio/") and n.endswith("/xs") for n in by)
    assert any(n.startswith("noise/mde/") for n in by)
    # the claims' deciding findings: t over the seeds, AdamW fitted per seed (seed_t)
    assert "t/speedup_mean/muon/xs2" in by and "t/matrix_over_scalar/xs2" in by
    assert by["t/speedup_mean/muon/xs2"]["method"].startswith("Student t over 2 seeds")
    # FPO-5 and FPO-7 too: tau per seed over every cell, Muon's transfer ratio per seed
    assert by["t/tau_midrun/all"]["method"].startswith("Student t over 2 seeds")
    assert -1 <= by["t/tau_midrun/all"]["ci"][0] <= by["t/tau_midrun/all"]["ci"][1] <= 1
    for o in ("muon", "lion"):  # a t interval, or a point that says why it has none
        f = by[f"t/transfer_ratio/{o}/xs"]
        assert (f["ci"] is None and "no interval" in f["note"]) or f["method"].startswith(
            "Student t over 2 seeds"
        ), f
    assert by["t/transfer_ratio/lion/xs"]["ci"] is not None
    assert {"coverage/t_tau/n3", "coverage/t_transfer/n3"} <= set(by)
    assert by["t/tau_gain_constant/xs2/2x"]["method"].startswith("Student t over 2 seeds")
    for f in findings:
        assert np.isfinite(f["point"]), f
        if f["ci"] is not None:
            t_interval = f["method"].startswith("Student t")  # no resamples: a formula
            assert f["level"] == 0.95 and f["resamples"] == (None if t_interval else 200), f
            assert f["ci"][0] <= f["ci"][1], f
    cached = list((root / "data" / TINY_CACHE / STUDY).glob("sweep-tiny-*.nc"))  # git-ignored
    # the notebook's tiny sweep is the session's: found under its config hash, not retrained
    assert cached == [seeded] and seeded.read_bytes() == shared.path.read_bytes()
    assert by["runs/total"]["point"] == int((shared.ds.status != "skipped").sum())
    with xr.open_dataset(cached[0], engine="h5netcdf") as ds:
        assert len(ds.attrs["corpus_hash"]) == 64
        table = sweep_table(ds)  # the runs made (no left-out cell)
    # the same notebook on a user's table of final losses (no training)
    path = root / "losses.csv"
    pd.DataFrame(table).to_csv(path, index=False)
    own, _ = _run(root, "-p", "runs", str(path), "--force")
    own_by = {f["name"]: f for f in own}
    assert "runs/total" not in own_by and "tuning/evaluations" not in own_by
    assert own_by["speedup_mean/muon/xs2"]["point"] == pytest.approx(
        by["speedup_mean/muon/xs2"]["point"]
    )
