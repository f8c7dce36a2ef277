"""The matched design's analysis: per-seed speedups with t intervals, tuning curves and
their flags, every claim per size (synthetic data, and the ``tiny_matched`` sweep)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from scalinglab.provenance import config_hash
from scalinglab.studies.optimizers import matched_report, seedwise, tuning_curves
from scalinglab.studies.optimizers.config import (
    MATCHED_SIZES,
    WALK_LADDERS,
    WALK_LIMITS,
    sweep_config,
)
from scalinglab.studies.optimizers.protocol import tune_walks
from scalinglab.studies.optimizers.tuning import path_dataset

#: The config hash of the ``matched`` sweep (its dataset is
#: ``data/optimizer_comparison/sweep-matched-ecfcf15047e6.nc``): analysis changes must not
#: move it, or the committed dataset would no longer be found.
MATCHED_HASH = "ecfcf15047e6"


def test_the_matched_sweeps_config_hash_is_pinned():
    assert config_hash(sweep_config("matched").to_dict()) == MATCHED_HASH
    # the tests' walk design is another sweep (its own compute class, so its own hash)
    tiny = sweep_config("tiny_matched")
    assert tiny.compute_class != "matched" and tiny.tune_seeds
    assert not set(tiny.tune_seeds) & set(tiny.seeds)


# ------------------------------------------------------------------ per-seed speedups
LAW = {"A": 0.8, "alpha": 0.5, "E": 2.0}


def _law(d, shift=0.0):
    return LAW["A"] * np.asarray(d, dtype=float) ** -LAW["alpha"] + LAW["E"] + shift


def _table(factor: dict[int, float], seeds=(0, 1, 2)) -> pd.DataFrame:
    """AdamW on the law (each seed shifted), Muon reaching at D what AdamW reaches at
    ``factor[seed] * D`` on the same seed's curve."""
    rows = []
    for s in seeds:
        shift = 0.01 * s
        for m in (0.5, 1.0, 2.0, 4.0):
            rows.append(("adamw", "w32", m, s, float(_law(m, shift))))
        for m in (1.0, 2.0):
            rows.append(("muon", "w32", m, s, float(_law(factor[s] * m, shift))))
    return pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "seed", "loss"])


def test_per_seed_speedups_invert_each_seeds_own_fit():
    ps = seedwise.per_seed(_table({0: 1.5, 1: 2.0, 2: 2.5}))
    muon = ps[ps.optimizer == "muon"].set_index(["seed", "data_multiple"])
    for s, f in {0: 1.5, 1: 2.0, 2: 2.5}.items():
        for m in (1.0, 2.0):
            assert muon.log_speedup[(s, m)] == pytest.approx(math.log(f), abs=2e-3)
    assert not ps.E_at_bound.any()


def test_t_interval_over_seeds_is_the_students_t_of_the_per_seed_logs():
    seeds = seedwise.by_seed(seedwise.per_seed(_table({0: 1.5, 1: 2.0, 2: 2.5})))
    est, vals = seedwise.summary(seeds, seedwise.cell("muon", "w32", 1.0))
    logs = np.log([1.5, 2.0, 2.5])
    half = sps.t.ppf(0.975, 2) * logs.std(ddof=1) / math.sqrt(3)
    assert vals == pytest.approx(logs, abs=2e-3)
    assert est.point == pytest.approx(math.exp(logs.mean()), rel=1e-3)
    assert (est.lo, est.hi) == pytest.approx(
        (math.exp(logs.mean() - half), math.exp(logs.mean() + half)), rel=3e-3
    )
    assert "Student t over 3" in est.method
    # geometric mean over budgets: the same here (one factor per seed)
    g, _ = seedwise.summary(seeds, seedwise.geomean("muon", "w32", [1.0, 2.0]))
    assert g.point == pytest.approx(est.point, rel=1e-3)


def test_a_seed_below_its_asymptote_leaves_the_point_without_interval():
    t = _table({0: 1.5, 1: 2.0, 2: 2.5})
    t.loc[(t.optimizer == "muon") & (t.seed == 2) & (t.data_multiple == 1.0), "loss"] = 1.0
    seeds = seedwise.by_seed(seedwise.per_seed(t))
    est, vals = seedwise.summary(seeds, seedwise.cell("muon", "w32", 1.0))
    assert np.isnan(vals[2]) and est.lo is None and "no interval" in est.note


def test_misstatement_folds_a_ratio_either_way():
    from scalinglab.estimate import Estimate

    down = seedwise.misstatement(Estimate(0.5, 0.4, 0.625, level=0.95, method="t", df=2))
    assert down.df == 2.0  # read on the same t distribution
    assert (down.point, down.lo, down.hi) == pytest.approx((2.0, 1.6, 2.5))
    across = seedwise.misstatement(Estimate(1.05, 0.9, 1.2, level=0.95, method="t"))
    assert across.lo == 1.0 and across.hi == pytest.approx(1.2)  # the farther end


def test_the_family_statistic_can_count_the_baseline_among_the_scalars():
    d = {("muon", "w", 1.0): np.log(1.4), ("nadamw_paper", "w", 1.0): np.log(0.9)}
    alone = seedwise.family(["muon"], ["nadamw_paper"], "w", 1.0)(d)
    both = seedwise.family(["muon"], ["nadamw_paper"], "w", 1.0, with_baseline=True)(d)
    assert np.exp(alone) == pytest.approx(1.4 / 0.9)
    assert np.exp(both) == pytest.approx(1.4 / np.sqrt(0.9))


def test_slope_statistic_recovers_a_power_of_size():
    n = {"a": 1e4, "b": 4e4, "c": 1.6e5}
    d = {("muon", s, 1.0): 0.3 * math.log(v) + 0.1 for s, v in n.items()}
    assert seedwise.slope("muon", dict.fromkeys(n, 1.0), n)(d) == pytest.approx(0.3)
    cu = seedwise.catch_up("soap", "muon", "a", 1.0, 8.0)
    d2 = {
        ("soap", "a", 1.0): 0.0,
        ("muon", "a", 1.0): 0.2,
        ("soap", "a", 8.0): 0.3,
        ("muon", "a", 8.0): 0.2,
    }
    assert cu(d2) == pytest.approx(0.3)


def test_coverage_of_the_t_interval_at_three_seeds_is_near_nominal():
    rng = np.random.default_rng(0)
    rows = [
        (o, "w32", m, s, 3.0 + rng.normal(0, 0.02))
        for o in ("adamw",)
        for m in (0.5, 1.0, 2.0, 4.0)
        for s in range(3)
    ]
    t = pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "seed", "loss"])
    ps = pd.DataFrame(
        {
            "optimizer": "muon",
            "model_size": "w32",
            "data_multiple": np.repeat(np.arange(20.0), 3),
            "seed": np.tile([0, 1, 2], 20),
            "log_speedup": rng.normal(0.2, 0.05, 60),
        }
    )
    cov = seedwise.coverage(ps, sims=3000)
    at3 = cov[cov.n == 3].set_index("method").coverage
    assert at3["Student t"] > 0.92  # normal deviations: t is exact
    assert at3["percentile bootstrap"] < 0.85  # the percentile bootstrap under-covers
    assert len(t)  # (the table shape per_seed reads)


# ------------------------------------------------------------------ tuning curves
WIDTH = {s.name: s.d_model for s in MATCHED_SIZES}


def _synthetic_loss(o, size, m, cfg):
    x = math.log2(cfg["lr"] / (0.008 * (0.5 if o == "adamw" else 2.0)))
    out = x**2 + 0.01 * WIDTH[size] / m + 2 * (cfg["warmup"] - 0.05) ** 2
    if "beta1" in cfg:
        out += 20 * (cfg["beta1"] - 0.9) ** 2
    if "momentum" in cfg:
        out += 10 * (cfg["momentum"] - 0.95) ** 2
    if "beta2" in cfg:  # best beta2 below where its ladder was cut (0.5): at bound, flagged
        out += 4 * (cfg["beta2"] - 0.2) ** 2
    return out + 4 * (cfg["weight_decay"] - 0.0) ** 2  # best weight decay 0: a feasible limit


def _path(sweep):
    def evaluate(size, m, desc):
        return lambda batch: [_synthetic_loss(o, size.name, m, c) for o, c in batch]

    tuned, searches = tune_walks(sweep, evaluate)
    ds = path_dataset(searches)
    ds = ds.rename({k: f"tuning_{k}" for k in ds.data_vars})
    return tuned, searches, tuning_curves.path_table(ds)


def test_tuning_curves_mark_interior_limit_and_bound_and_flag_every_cell_using_them():
    sweep = sweep_config("matched")
    _, searches, path = _path(sweep)
    table = tuning_curves.curves(
        path, ladders=WALK_LADDERS, max_passes=sweep.walk_max_passes, limits=WALK_LIMITS
    )
    assert set(table.phase) == {"A", "B", "C", "D"}
    lr = table[table.coordinate == "lr"]
    assert (lr.status == "interior").all()  # the lr optimum is reachable everywhere
    wd = table[(table.coordinate == "weight_decay") & table.final]
    assert (wd.best == 0.0).all() and (wd.status == "at limit").all()  # no weight decay
    b2 = table[(table.coordinate == "beta2") & table.final]
    assert (b2.best == 0.5).all() and (b2.status == "at bound").all()  # the ladder's cut
    flags = tuning_curves.cell_flags(
        table, sizes=[s.name for s in MATCHED_SIZES], tune_multiple=1.0
    )
    # beta2 is tuned at the largest size and reaches every size and budget of the
    # optimizers that have one; weight decay at its limit flags nothing
    for key, fl in flags.items():
        assert any("beta2 at bound" in f for f in fl) == (key[0] != "muon"), key
        assert not any("weight_decay" in f for f in fl), key
    # the walks' own warnings name the same flagged settings, and only those
    warned = {w for s in searches for w in s.edge_warnings()}
    assert any("beta2=0.5 is at bound" in w for w in warned)
    assert not any("weight_decay" in w for w in warned)
    # without the limits, weight decay 0 would read as a cut ladder end
    bare = tuning_curves.curves(path, ladders=WALK_LADDERS, max_passes=sweep.walk_max_passes)
    assert (bare[(bare.coordinate == "weight_decay") & bare.final].status == "at bound").all()
    # a cell's speedup carries its own flags and the baseline's at that size
    sf = tuning_curves.speedup_flags(flags, ["soap"], "w48", 1.0)
    assert any(f.startswith("soap:") for f in sf) and any(f.startswith("adamw") for f in sf)
    assert tuning_curves.speedup_flags(flags, ["muon"], "w48", 1.0) == [
        f for f in sf if f.startswith("adamw")
    ]


def test_a_capped_learning_rate_walk_is_on_edge_and_flags_its_cell_only():
    sweep = dataclasses.replace(sweep_config("matched"), walk_max_evals=3)

    def far(o, size, m, cfg):  # Muon's optimum far above its start: capped on an edge
        x = math.log2(cfg["lr"] / (1.0 if o == "muon" else 0.008))
        return x**2 + 0.001 * cfg.get("warmup", 0) + 4 * (cfg["weight_decay"] - 0.1) ** 2

    def evaluate(size, m, desc):
        return lambda batch: [far(o, size.name, m, c) for o, c in batch]

    _, searches = tune_walks(sweep, evaluate)
    ds = path_dataset(searches)
    ds = ds.rename({k: f"tuning_{k}" for k in ds.data_vars})
    table = tuning_curves.curves(
        tuning_curves.path_table(ds), ladders=WALK_LADDERS, max_passes=sweep.walk_max_passes
    )
    muon_lr = table[(table.search == "muon") & (table.coordinate == "lr") & table.final]
    assert (muon_lr.status == "on edge").sum() >= len(muon_lr) - 1 >= 5
    flags = tuning_curves.cell_flags(
        table, sizes=[s.name for s in MATCHED_SIZES], tune_multiple=1.0
    )
    for r in muon_lr.itertuples():  # a cell is flagged for its lr exactly when its walk was
        key = ("muon", r.size, r.multiple)
        assert any("lr on edge" in f for f in flags[key]) == (r.status == "on edge"), key
    assert not any("lr on edge" in f for k, fl in flags.items() if k[0] == "adamw" for f in fl)


def test_stage_names_are_checked():
    assert tuning_curves.parse_stage("D lr w32 16x") == ("D", "w32", 16.0)
    with pytest.raises(ValueError, match="tuning stage"):
        tuning_curves.parse_stage("retune w32 1x")


# ------------------------------------------------------------------ the matched claims
def _finding(name, point, lo, hi, identified=True):
    return {
        "name": name,
        "point": point,
        "ci": [lo, hi],
        "level": 0.95,
        "identified": identified,
        "note": None if identified else "lr on edge",
    }


def _matched_values(sizes=("w32", "w96")):
    return {
        "design": "matched",
        "small": sizes[0],
        "large": sizes[-1],
        "budget": "1",
        "sizes_each": [{"size": s} for s in sizes],
        "scalar": "nadamw_paper",
        "transfer_each": [{"opt": "muon", "tsize": sizes[0]}],
        "tau_gain": "t/tau_gain/w32/4x",
        "low": "1",
        "high": "8",
    }


def _decide(recorded):
    from scalinglab.claims import decide_all
    from scalinglab.claims_file import claims_for
    from scalinglab.paths import PACKAGE_DIR

    path = PACKAGE_DIR.parent.parent / "notebooks" / "claims" / "optimizer_comparison.toml"
    claims = claims_for(path, _matched_values(), recorded)
    return {v.claim.id: v for v in decide_all(claims, recorded)}


def test_matched_claims_are_one_per_size_holm_corrected_and_never_contradict():
    f = {
        # Muon above 1.5x at w32 only just (Holm over the two sizes keeps it inconclusive),
        # far below at w96
        "t/speedup/muon/w32/1x": _finding("t/speedup/muon/w32/1x", 1.62, 1.505, 1.75),
        "t/speedup/muon/w96/1x": _finding("t/speedup/muon/w96/1x", 1.1, 1.05, 1.15),
        # the paper's NAdamW on a flagged cell at w96
        "t/speedup/nadamw_paper/w32/1x": _finding("t/speedup/nadamw_paper/w32/1x", 1.0, 0.95, 1.05),
        "t/speedup/nadamw_paper/w96/1x": _finding(
            "t/speedup/nadamw_paper/w96/1x", 1.0, 0.95, 1.05, identified=False
        ),
        # AdamW's settings deflate Muon's speedup by a factor 2 [1.6, 2.5]
        "t/transfer_misstatement/muon/w32": _finding(
            "t/transfer_misstatement/muon/w32", 2.0, 1.6, 2.5
        ),
    }
    v = _decide(f)
    assert {"FPO-1/w32", "FPO-1/w96", "FPO-4/w32", "FPO-4/w96", "FPO-7/muon"} <= set(v)
    assert v["FPO-1/w32"].verdict == "inconclusive" and "Holm" in v["FPO-1/w32"].reason
    assert v["FPO-1/w96"].verdict == "holds at our scale"
    assert v["FPO-4/w32"].verdict == "holds at our scale"
    assert v["FPO-4/w96"].verdict == "not identified"  # a flagged cell decides nothing
    assert v["FPO-7/muon"].verdict == "holds at our scale"
    assert v["FPO-3"].verdict == "untested"  # no slope recorded: the if_missing reason
    # a clear excess at both sizes survives Holm, and still reads at our scale only
    f["t/speedup/muon/w32/1x"] = _finding("t/speedup/muon/w32/1x", 2.0, 1.8, 2.2)
    f["t/speedup/muon/w96/1x"] = _finding("t/speedup/muon/w96/1x", 2.0, 1.8, 2.2)
    v = _decide(f)
    assert v["FPO-1/w32"].verdict == v["FPO-1/w96"].verdict == "differs at our scale"
    assert not [c for c in v.values() if c.verdict == "contradicts"]


def test_the_matched_transfer_claim_can_fail():
    f = {
        "t/transfer_misstatement/muon/w32": _finding(
            "t/transfer_misstatement/muon/w32", 1.02, 1.0, 1.05
        )
    }
    assert _decide(f)["FPO-7/muon"].verdict == "differs at our scale"


# ------------------------------------------------------------------ the tiny walk sweep
@pytest.fixture(scope="module")
def tiny_matched(tmp_path_factory):
    """``sweep_config("tiny_matched")`` trained once (about 180 runs: 4-10 minutes)."""
    from scalinglab.compute import dataset_path
    from scalinglab.studies.optimizers.sweep import STUDY, run_sweep

    root = tmp_path_factory.mktemp("optimizer-tiny-matched")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCALINGLAB_ROOT", str(root))
        sweep = sweep_config("tiny_matched")
        ds = run_sweep(sweep, scheduler="sync", progress=False)
        path = dataset_path(STUDY, f"sweep-{sweep.compute_class}", sweep.to_dict())
    return sweep, ds, root, path


@pytest.mark.slow
def test_the_tiny_walk_sweep_analysed_end_to_end(tiny_matched):
    from scalinglab.fitting.loss_table import sweep_table
    from scalinglab.studies.optimizers import findings, matched_report

    sweep, ds, _, _ = tiny_matched
    table = sweep_table(ds)
    sp = findings.speedups(table, baseline="adamw", reps=100, level=0.95, seed=0)
    m = matched_report.analyse(
        table,
        ds,
        ladders={**WALK_LADDERS, **sweep.walk_ladders},
        max_passes=sweep.walk_max_passes,
        tune_multiple=sweep.tune_multiple,
        e_identified=sp.identified,
        sims=500,
    )
    # one batch: xs at 2x runs about as many steps as xs2 at 1x (the matched-steps diagonal)
    cells = m.cells.set_index("size")
    assert cells.steps_multiple["xs"] == 2.0 and cells.steps_multiple["xs2"] == 1.0
    names = {r["name"] for r in m.rows}
    for o in ("nadamw_paper", "muon", "soap"):
        assert {f"t/speedup/{o}/xs/1x", f"t/speedup/{o}/xs/2x", f"t/speedup/{o}/xs2/1x"} <= names
        assert f"t/transfer_ratio/{o}/xs" in names
    assert {"t/size_slope/muon/budget", "t/size_slope/muon/steps", "coverage/t/n3"} <= names
    # the slopes' t interval gets its own coverage simulation, on their own deviations
    assert {"coverage/slope/t/n3", "coverage/slope/percentile/n3"} <= names
    assert set(m.coverage.statistic) == {"log speedup", "slope per log N"}
    # every walk the sweep warned about is flagged in the table (none hidden)
    for line in ds.attrs["tuning_warnings"].splitlines():
        who, what = line.split(": ", 1)
        o, stage = who.split(" (")
        if "still moving" in what:
            continue
        coord = what.split("=")[0]
        rows = m.curves[
            (m.curves.search == o) & (m.curves.stage == stage.rstrip(")"))
            & (m.curves.coordinate == coord)
        ]  # fmt: skip
        assert len(rows) and (rows.status.iloc[-1] != "interior"), line
    # FPO-5 reads each seed's tau averaged over every complete cell (one cell's tau moves
    # in steps of 1/3); the scalar family counts AdamW at 1
    by = {r["name"]: r["point"] for r in m.rows}
    tau_all = by["t/tau_midrun/all"]
    assert tau_all.df == 2.0 and "cells with complete curves" in next(
        r["description"] for r in m.rows if r["name"] == "t/tau_midrun/all"
    )
    cell_taus = [by[n].point for n in by if n.startswith("t/tau_midrun/x")]
    assert min(cell_taus) <= tau_all.point <= max(cell_taus)
    mos = next(r for r in m.rows if r["name"].startswith("t/matrix_over_scalar/xs2/"))
    assert "adamw at 1 by definition" in mos["description"]
    # a speedup on a flagged cell is recorded unidentified, with the flag as its note
    for (o, s, mult), fl in m.flags.items():
        name = f"t/speedup/{o}/{s}/{mult:g}x"
        if fl and name in by:
            assert not by[name].identified and fl[0] in by[name].note


@pytest.mark.slow
def test_the_matched_report_renders_on_the_tiny_walk_sweep(tiny_matched, tmp_path):
    import json
    import os
    import shutil
    import subprocess
    import sys

    from scalinglab.paths import PACKAGE_DIR

    repo = PACKAGE_DIR.parent.parent
    _, _, root0, path = tiny_matched
    root = tmp_path / "repo"
    (root / "notebooks" / "claims").mkdir(parents=True)
    shutil.copy(repo / "notebooks" / "optimizer_comparison.py", root / "notebooks")
    shutil.copy(
        repo / "notebooks" / "claims" / "optimizer_comparison.toml", root / "notebooks" / "claims"
    )
    seeded = root / path.relative_to(root0)
    seeded.parent.mkdir(parents=True)
    shutil.copy(path, seeded)
    env = {**os.environ, "SCALINGLAB_ROOT": str(root)}
    env.pop("SCALINGLAB_RESULTS", None)
    args = ["-p", "compute_class", "tiny_matched", "-p", "reps", "200", "-p", "scheduler", "sync"]
    proc = subprocess.run(
        [sys.executable, "-m", "scalinglab.cli", "run", "optimizer_comparison", "--variant", "medium", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = root / "reports" / "optimizer_comparison" / "medium-tiny_matched" / "latest"
    res = json.loads((run / "results.json").read_text())
    ids = {c["id"]: c for c in res["claims"]}
    assert {"FPO-1/xs", "FPO-1/xs2", "FPO-3", "FPO-6", "FPO-7/muon"} <= set(ids)
    assert not [c for c in ids.values() if c["verdict"] == "contradicts"]
    assert "5c. The matched design" in (run / "report.html").read_text()


# ------------------------------------------------------------------ progress (read-only)
class _FakeRuns:
    """A run cache that finds only the first ``limit`` distinct runs asked for; losses
    from a synthetic surface with interior optima for every walked setting."""

    def __init__(self, limit: float = math.inf):
        self.limit, self.seen = limit, {}
        self.width = {s.d_model: s.name for s in MATCHED_SIZES}

    def load(self, key):
        import json
        from types import SimpleNamespace

        if key[0] + str(key[1]) not in self.seen:
            if len(self.seen) >= self.limit:
                return False, None
            self.seen[key[0] + str(key[1])] = True
        cfg = json.loads(key[0])
        hp, o = cfg["hparams"], cfg["optimizer"]
        target = {"adamw": 0.004, "nadamw_paper": 0.004, "muon": 0.032, "soap": 0.016}[o]
        loss = math.log2(hp["lr"] / target) ** 2 + 4 * (hp["weight_decay"] - 0.05) ** 2
        loss += 2 * (hp["warmup"] - 0.05) ** 2 + (
            10 * (hp["momentum"] - 0.95) ** 2
            if o == "muon"
            else 20 * (hp["beta1"] - 0.8) ** 2 + 20 * (hp["beta2"] - 0.98) ** 2
        )
        return True, SimpleNamespace(final_loss=loss + 1.0 / cfg["data_multiple"])


def test_progress_replays_the_walks_from_stored_runs_and_stops_at_the_first_missing():
    from scalinglab.studies.optimizers import progress

    sweep = sweep_config("matched")
    full = progress.summary(sweep, _FakeRuns())
    assert full["in_progress"] == "final runs"
    assert set(full["phases"]) == {"A", "B", "C", "D"}
    assert full["walks"] and all(w["interior"] for w in full["walks"])
    assert full["final"]["found"] == full["final"]["planned"] > 0
    part = progress.summary(sweep, _FakeRuns(limit=60))
    assert part["in_progress"].startswith("A lr ") and set(part["phases"]) == {"A"}
    assert 0 < len(part["walks"]) < len(full["walks"])
    assert part["final"] == {"found": 0, "planned": 0}
    text = progress.report(part)
    assert f"in progress: {part['in_progress']}" in text and "not interior" in text


def test_a_per_seed_fit_with_e_on_its_bound_leaves_the_size_unidentified():
    from scalinglab.studies.optimizers import matched_report

    t = _table({0: 1.5, 1: 2.0, 2: 2.5})
    ok = matched_report.e_flags(seedwise.per_seed(t), {"w32": True})
    assert ok == {"w32": []}
    # seed 1's AdamW falls as a pure power law to 0: its fit puts E on the bound
    sel = (t.optimizer == "adamw") & (t.seed == 1)
    t.loc[sel, "loss"] = 3.0 * t.loc[sel, "data_multiple"] ** -0.3
    ps = seedwise.per_seed(t)
    assert ps[(ps.seed == 1)].E_at_bound.all() and not ps[ps.seed == 0].E_at_bound.any()
    why = matched_report.e_flags(ps, {"w32": True})["w32"]
    assert len(why) == 1 and "per-seed fits put E on its bound" in why[0]
    assert matched_report.e_flags(ps, {"w32": False})["w32"][0].startswith("AdamW's E at w32")


def test_tuning_curve_figure_draws_every_size_and_marks_each_optimum():
    import matplotlib

    matplotlib.use("Agg")
    from scalinglab.studies.optimizers import plots

    sweep = sweep_config("matched")
    _, _, path = _path(sweep)
    table = tuning_curves.curves(path, ladders=WALK_LADDERS, max_passes=sweep.walk_max_passes)
    fig = plots.tuning_curves(table, multiple=1.0)
    assert len(fig.axes) == len(sweep.optimizers)
    for ax in fig.axes:  # one curve and one optimum marker per size
        assert len(ax.lines) == 2 * len(MATCHED_SIZES)
        stars = [ln for ln in ax.lines if ln.get_marker() == "*"]
        assert len(stars) == len(MATCHED_SIZES)  # every lr walk here ends interior


def test_a_baseline_law_that_misses_its_own_points_flags_the_size():
    rng = np.random.default_rng(3)
    rows = []
    for s in (0, 1, 2):
        for m in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0):
            bump = 0.05 if m == 2.0 else 0.0  # a plateau the law cannot follow, every seed
            noise = 0.002 * rng.standard_normal()
            rows.append(("adamw", "w32", m, s, float(_law(m)) + noise + bump))
            rows.append(("adamw", "w48", m, s, float(_law(m)) + 0.002 * rng.standard_normal()))
    table = pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "seed", "loss"])
    ps = seedwise.per_seed(table)
    got = matched_report.baseline_misfit(ps, seedwise.by_seed(ps))
    assert set(got) == {"w32"}  # the law fits w48's own losses
    assert any("own 2x point at w32" in w for w in got["w32"])
    assert all("Bonferroni over 6 budgets" in w for w in got["w32"])
    # every design's findings are gated alike: the size reads not identified, and why
    assert matched_report.law_misfit(table) == got
    from scalinglab.studies.optimizers import findings

    sp = findings.speedups(table, baseline="adamw", reps=20, level=0.95, seed=0)
    assert sp.identified["w32"] and sp.why_not("w32") is None
    gated = findings.gate_misfit(sp, got)
    assert not gated.identified["w32"] and gated.identified["w48"] == sp.identified["w48"]
    assert "own 2x point at w32" in gated.why_not("w32") and gated.e_ok("w32")


def test_rows_without_headlines_never_headline():
    from scalinglab.studies.optimizers.findings import Rows

    on = Rows(level=0.95, reps=10, baseline="adamw").row(
        "x", 1.2, 1.1, 1.3, method="m", headline=True
    )
    off = Rows(level=0.95, reps=10, baseline="adamw", headlines=False).row(
        "x", 1.2, 1.1, 1.3, method="m", headline=True
    )
    assert on["headline"] is True and off["headline"] is False
