"""The tuning gate of the coordinate-descent sweeps (``small``, ``medium``): a size whose
tuned settings sit on the edge of what their tuning tried has no identified speedup."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.fitting.speedup import SpeedupResult
from scalinglab.studies.optimizers import findings, tuning_curves
from scalinglab.studies.optimizers.config import WALK_LADDERS, WALK_LIMITS, sweep_config
from scalinglab.sweeps import dataset_path

ROOT = Path(__file__).resolve().parents[1]


def _rows(search, stage, evals):
    """``evals``: [(coordinate, config, objective)], the first the stage's start."""
    return [
        {
            "search": search,
            "stage": stage,
            "round": 1,
            "coordinate": c,
            "value": "" if not c else str(cfg[c]),
            "objective": obj,
            "config": json.dumps(cfg, sort_keys=True),
            "decision": "start" if i == 0 else "rejected",
        }
        for i, (c, cfg, obj) in enumerate(evals)
    ]


def _ds(rows, sizes=("w16", "w96")):
    df = pd.DataFrame(rows)
    return xr.Dataset(
        {f"tuning_{k}": ("evaluation", df[k].to_numpy()) for k in df.columns},
        coords={"model_size": list(sizes)},
    )


BASE = {"lr": 0.008, "beta2": 0.95, "weight_decay": 0.1}


def _base_stage():
    def cfg(**kw):
        return {**BASE, **kw}

    return _rows(
        "adamw",
        "base w16 1x",
        [
            ("", cfg(), 3.0),
            ("lr", cfg(lr=0.004), 3.1),
            ("lr", cfg(lr=0.016), 3.05),  # lr 0.008 interior
            ("beta2", cfg(beta2=0.98), 2.99),
            ("beta2", cfg(beta2=0.999), 3.2),  # beta2 0.98 interior
            ("weight_decay", cfg(beta2=0.98, weight_decay=0.0), 2.9),  # 0: a feasible limit
            ("weight_decay", cfg(beta2=0.98, weight_decay=0.2), 3.0),
        ],
    )


def test_a_stage_flags_a_setting_at_the_end_of_what_it_tried_but_not_a_feasible_limit():
    rows = _base_stage()
    rows[4]["objective"] = 2.95  # beta2 0.999 now beats 0.98 before weight decay moves
    rows[5]["config"] = json.dumps({**BASE, "beta2": 0.999, "weight_decay": 0.0})
    rows[6]["config"] = json.dumps({**BASE, "beta2": 0.999, "weight_decay": 0.2})
    got = tuning_curves.descent_flags(pd.DataFrame(rows), limits=WALK_LIMITS)
    flags = got[("adamw", "base w16 1x")]
    assert flags["lr"] == "" and flags["weight_decay"] == ""
    assert flags["beta2"] == "beta2=0.999, the highest of 0.95-0.999 (base w16 1x)"
    # without the limit, weight decay 0 is a cut end like any other
    bare = tuning_curves.descent_flags(pd.DataFrame(rows))[("adamw", "base w16 1x")]
    assert bare["weight_decay"].startswith("weight_decay=0, the lowest")


def test_the_base_stage_reaches_every_size_and_a_retune_replaces_its_own_coordinate():
    tuned = {**BASE, "beta2": 0.98, "weight_decay": 0.0}
    rows = _base_stage() + _rows(
        "adamw",
        "retune w96 1x",
        [
            ("", tuned, 1.7),
            ("lr", {**tuned, "lr": 0.004}, 1.6),  # moved down in its last round: on edge
            ("lr", {**tuned, "lr": 0.016}, 1.8),
        ],
    )
    kw = dict(ladders=WALK_LADDERS, max_passes=2, limits=WALK_LIMITS, tune_multiple=1.0)
    flags = tuning_curves.size_flags(_ds(rows), **kw)
    assert flags["w16"] == []
    assert flags["w96"] == ["adamw: lr=0.004, the lowest of 0.004-0.016 (retune w96 1x)"]
    # a flagged base setting reaches every size, the re-tuned w96 included
    rows[4]["objective"] = 2.95
    rows[5]["config"] = json.dumps({**BASE, "beta2": 0.999, "weight_decay": 0.0})
    rows[6]["config"] = json.dumps({**BASE, "beta2": 0.999, "weight_decay": 0.2})
    flags = tuning_curves.size_flags(_ds(rows), **kw)
    assert all(any("beta2=0.999" in f for f in fl) for fl in flags.values())
    # a dataset without a tuning path has nothing to flag
    assert tuning_curves.size_flags(_ds(rows).drop_vars(list(_ds(rows).data_vars)), **kw) == {
        "w16": [],
        "w96": [],
    }


def _speedups(identified):
    res = SpeedupResult(baseline="adamw", cells=pd.DataFrame(), fits={}, draws=None)
    return findings.Speedups(res, dict(identified), findings.OVER_SEEDS, False, seeds=3)


def test_the_gate_keeps_a_flagged_size_not_identified_and_says_why():
    sp = findings.gate_tuning(
        _speedups({"w32": True, "w48": True, "w96": False}),
        {"w32": [], "w48": ["adamw: a", "soap: b", "muon: c"], "w96": []},
    )
    assert sp.identified == {"w32": True, "w48": False, "w96": False}
    assert sp.e_ok("w48") and not sp.e_ok("w96")  # the asymptote's own status is kept
    assert sp.why_not("w32") is None
    assert sp.why_not("w48") == f"{findings.TUNING_EDGE}: adamw: a; soap: b and 1 more"
    assert sp.why_not("w96") == findings.E_AT_BOUND
    # no gate: E alone decides
    plain = _speedups({"w32": True, "w96": False})
    assert plain.e_ok("w32") and plain.why_not("w96") == findings.E_AT_BOUND


def test_the_committed_medium_sweep_flags_adamw_at_w96_as_the_issue_found():
    cfg = sweep_config("medium")
    path = dataset_path("optimizer_comparison", "sweep-medium", cfg.to_dict())
    if not path.is_relative_to(ROOT) or not path.exists():
        pytest.skip("the committed medium dataset is not here")
    ds = xr.open_dataset(path)
    flags = tuning_curves.size_flags(
        ds, ladders=cfg.ladders(), max_passes=cfg.walk_max_passes, limits=WALK_LIMITS,
        tune_multiple=cfg.tune_multiple,
    )  # fmt: skip
    # AdamW's capped re-tuning walk moved to lr 0.004 in its last round and stopped there
    assert "adamw: lr=0.004, the lowest of 0.004-0.032 (retune w96 1x)" in flags["w96"]
    assert not any("adamw: lr" in f for f in flags["w32"])
    # beta2 0.95, the lowest of its grid, reaches every size from the base stage at w16
    assert all(
        any(f.startswith("adamw: beta2=0.95, the lowest") for f in fl) for fl in flags.values()
    )
    assert np.all([len(fl) > 0 for fl in flags.values()])
