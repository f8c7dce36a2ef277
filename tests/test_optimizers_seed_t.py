"""The sweep design's t-over-seeds findings (scalinglab.studies.optimizers.seed_t) and the
coverage a method text states on the study's own data (stats.coverage_report)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from scalinglab.stats import calibration
from scalinglab.stats.coverage_report import coverage_note, measured_on_data, stated_on_data
from scalinglab.studies.optimizers import seed_t, seedwise

A, ALPHA, E = 2.0, 0.5, 1.5
SPEEDUP = {"adamw": 1.0, "nadamw": 1.0, "lion": 0.8, "muon": 1.5, "soap": 1.2}
FAMILY = {
    "adamw": "scalar",
    "nadamw": "scalar",
    "lion": "scalar",
    "muon": "matrix",
    "soap": "matrix",
}


def _table(seed: int = 0, noise: float = 0.004) -> pd.DataFrame:
    """Losses on AdamW's law; optimizer ``o`` reaches at D what AdamW reaches at
    ``SPEEDUP[o] * D``, each run with its own small noise (3 seeds, 2 sizes, 4 budgets)."""
    rng = np.random.default_rng(seed)
    rows = []
    for size in ("s", "m"):
        for sd in range(3):
            for o, sp in SPEEDUP.items():
                for m in (1.0, 2.0, 4.0, 8.0):
                    loss = A * (sp * m) ** -ALPHA + E + noise * rng.standard_normal()
                    rows.append((o, size, m, sd, loss))
    return pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "seed", "loss"])


def _analyse(table: pd.DataFrame, **kw):
    args = dict(
        sizes=["s", "m"],
        e_identified={"s": True, "m": True},
        families=FAMILY,
        n_params={"s": 1e4, "m": 4e4},
        trend_sizes=["s", "m"],
        trend_identified=True,
        shared=[1.0, 2.0, 4.0, 8.0],
        follower="soap",
        catch_multiples=[1.0, 8.0],
        sims=400,
    )
    return seed_t.analyse(table, **{**args, **kw})


def test_seed_t_speedups_are_the_t_interval_of_the_per_seed_geometric_means():
    table = _table()
    out = _analyse(table)
    rows = {r["name"]: r["point"] for r in out.rows}
    ps = seedwise.per_seed(table)
    for o in ("muon", "nadamw"):
        per = [
            ps[(ps.optimizer == o) & (ps.model_size == "m") & (ps.seed == sd)].log_speedup.mean()
            for sd in range(3)
        ]
        lo, hi = calibration.t_interval(np.array(per))
        est = rows[f"t/speedup_mean/{o}/m"]
        assert est.point == pytest.approx(math.exp(np.mean(per)), rel=1e-12)
        assert (est.lo, est.hi) == pytest.approx((math.exp(lo), math.exp(hi)), rel=1e-12)
        assert est.n == 3 and est.method.startswith("Student t over 3 seeds")
    # the truth the losses were made with lies inside: Muon 1.5x, NAdamW 1x
    assert rows["t/speedup_mean/muon/m"].lo < 1.5 < rows["t/speedup_mean/muon/m"].hi
    assert rows["t/speedup_mean/nadamw/m"].lo < 1.0 < rows["t/speedup_mean/nadamw/m"].hi


def test_seed_t_family_ratio_slope_and_catch_up_recover_the_truth():
    rows = {r["name"]: r["point"] for r in _analyse(_table(noise=0.001)).rows}
    # matrix (muon, soap) over scalar (nadamw, lion): geo-means sqrt(1.5 * 1.2) / sqrt(0.8)
    truth = math.sqrt(1.5 * 1.2) / math.sqrt(1.0 * 0.8)
    fam = rows["t/matrix_over_scalar/m"]
    assert fam.point == pytest.approx(truth, rel=0.03) and fam.lo < fam.point < fam.hi
    # the same speedups at both sizes: no slope, no catching up
    slope = rows["t/size_slope/muon"]
    assert abs(slope.point) < 0.01 and slope.lo < slope.point < slope.hi
    catch = rows["t/catch_up/soap_vs_muon/s"]
    assert catch.point == pytest.approx(1.0, abs=0.05)


def test_seed_t_states_its_coverage_on_the_data_and_records_both_methods():
    out = _analyse(_table())
    names = {r["name"] for r in out.rows}
    assert {"coverage/t/n3", "coverage/percentile/n3"} <= names
    cov = dict(
        zip(
            out.coverage[out.coverage.n == 3].method,
            out.coverage[out.coverage.n == 3].coverage,
            strict=True,
        )
    )
    assert cov["Student t"] > cov["percentile bootstrap"]  # 3 seeds: t covers, percentile not
    est = next(r["point"] for r in out.rows if r["name"] == "t/speedup_mean/muon/m")
    c, n, se = stated_on_data(est.method)
    assert n == 3 and c == pytest.approx(cov["Student t"], abs=5e-4) and se > 0


def test_a_size_whose_adamw_asymptote_is_not_identified_gives_unidentified_t_findings():
    rows = {
        r["name"]: r["point"] for r in _analyse(_table(), e_identified={"s": False, "m": True}).rows
    }
    assert not rows["t/speedup_mean/muon/s"].identified
    assert "not identified" in rows["t/speedup_mean/muon/s"].note
    assert rows["t/speedup_mean/muon/m"].identified
    assert not rows["t/size_slope/muon"].identified  # the trend rests on s


def test_a_coverage_measured_on_the_data_is_stated_beside_the_generic_one():
    f = {"ci": [0.9, 1.2], "level": 0.95, "n": 3}
    low = dict(f, method="Student t over 3 seeds; " + measured_on_data(0.912, 3, se=0.004))
    note = coverage_note(low)
    assert note.startswith(
        "its interval's simulated coverage is 0.912 at n = 3 on these data's own spread (se 0.004)"
    )
    assert "0.92 on a generic log-normal (sigma 0.5) generator" in note  # the table's too
    # covering on the data, but not on the generic skewed generator (0.92 at n = 3): said,
    # the study's own generator first
    high = dict(f, method="Student t over 3 seeds; " + measured_on_data(0.959, 3, se=0.003))
    note = coverage_note(high)
    assert note.startswith(
        "its interval's simulated coverage is 0.959 at n = 3 on these data's own spread"
    )
    assert note.endswith("; 0.92 on a generic log-normal (sigma 0.5) generator")
    # both covering: nothing to say (the percentile bootstrap over 256 prompts, read at 100)
    wide = {"ci": [0.1, 0.2], "level": 0.95, "n": 256}
    ok = dict(
        wide, method="bootstrap over prompts, percentile; " + measured_on_data(0.94, 256, se=0.005)
    )
    assert coverage_note(ok) is None
    below = dict(
        ok, method="bootstrap over prompts, percentile; " + measured_on_data(0.925, 256, se=0.006)
    )
    assert (
        coverage_note(below)
        == "its interval's simulated coverage is 0.925 at n = 256 on these data's own spread (se 0.006)"
    )
    # without it, the generic table alone decides
    assert coverage_note(dict(f, method="Student t over 3 seeds")).startswith(
        "its interval's simulated coverage is 0.92"
    )
    assert "0.71" in coverage_note(dict(f, method="percentile bootstrap over seeds"))
    with pytest.raises(ValueError, match="coverage in"):
        measured_on_data(1.2, 3, se=0.01)
