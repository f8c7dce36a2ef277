"""Coverage of the parametric bootstrap of a one-run-per-cell table, simulated on its own
laws (studies/optimizers/published_coverage.py), and the paper's findings that state it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scalinglab.errors import InputError
from scalinglab.paths import data_dir
from scalinglab.stats.coverage_report import coverage_note, stated_on_data
from scalinglab.studies.optimizers import analysis, findings, published
from scalinglab.studies.optimizers import published_coverage as pc

RELEASED = data_dir() / "published" / "fantastic_optimizers" / "final_losses.csv"
SIZES = ("130m", "300m", "520m")
#: Muon's speedup per size (shrinking), NAdamW's and SOAP's at every size.
MUON = {"130m": 1.5, "300m": 1.4, "520m": 1.3}
NADAMW, SOAP = 1.1, 1.2


def law_table() -> pd.DataFrame:
    """Losses exactly on AdamW's law per size, every other optimizer at a known speedup:
    its loss at ``D`` is AdamW's at ``k D`` (the same law family, so refits recover it)."""
    rows = []
    for i, s in enumerate(SIZES):
        a, alpha, e = 0.6, 0.5, 3.2 - 0.2 * i
        for o, k in (("adamw", 1.0), ("muon", MUON[s]), ("nadamw", NADAMW), ("soape", SOAP)):
            for m in (1.0, 2.0, 4.0, 8.0):
                rows.append((o, s, m, a * (k * m) ** -alpha + e))
    return pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "loss"])


def test_truth_of_a_known_law_is_its_speedups():
    table = law_table()
    truth, resid = pc.truth_table(table)
    np.testing.assert_allclose(truth.loss, table.loss, atol=1e-7)
    assert np.abs(resid).max() < 1e-6
    true = pc._truth_values(truth, baseline="adamw", level=0.95)
    for s in SIZES:
        assert true[f"speedup_mean/muon/{s}"] == pytest.approx(MUON[s], rel=1e-4)
        assert true[f"speedup_mean/nadamw/{s}"] == pytest.approx(NADAMW, rel=1e-4)
        want = np.sqrt(MUON[s] * SOAP) / NADAMW  # matrix (muon, soape) over scalar (nadamw)
        assert true[f"matrix_over_scalar/{s}"] == pytest.approx(want, rel=1e-4)
        assert true[f"catch_up/soape_vs_muon/{s}"] == pytest.approx(1.0, rel=1e-4)
    x = np.log([published.PAPER_PARAMS[s] for s in SIZES])
    slope = np.polyfit(x, np.log([MUON[s] for s in SIZES]), 1)[0]
    assert true["size_slope/muon"] == pytest.approx(slope, rel=1e-3)


@pytest.mark.slow
def test_correct_model_with_normal_noise_covers_near_nominal():
    """The bootstrap's own assumptions hold: coverage within Monte Carlo error of 0.95
    (a generator with 3x the noise the intervals assume would miss far more often)."""
    table = law_table()
    cov = pc.simulate_coverage(table, sims=60, reps=100, sigma=0.004, seed=3).set_index("name")
    assert (cov.sims == 60).all() and (cov.unbounded == 0).all()
    for name in ("speedup_mean/muon/130m", "matrix_over_scalar/130m", "size_slope/muon"):
        c, se = cov.loc[name, "coverage"], np.sqrt(0.95 * 0.05 / 60)
        assert abs(c - 0.95) <= 3 * se + 0.02, (name, c)
    assert cov.coverage.mean() >= 0.9


@pytest.mark.slow
def test_a_split_simulation_is_the_same_simulation():
    table = law_table()
    kw = dict(noise="normal", reps=30, sigma=0.004, seed=5)
    whole = pc.simulate_hits(table, range(3), **kw)
    parts = pc.simulate_hits(table, range(2), **kw) + pc.simulate_hits(table, range(2, 3), **kw)
    assert whole == parts
    other = pc.simulate_hits(table, range(3), **{**kw, "seed": 6})
    assert other != whole
    with pytest.raises(InputError, match="noise must be one of"):
        pc.simulate_hits(table, range(1), noise="student")
    with pytest.raises(InputError, match="sigma > 0"):
        pc.simulate_hits(table, range(1), sigma=0.0)


@pytest.fixture(scope="module")
def paper() -> pd.DataFrame:
    return published.read_runs(str(RELEASED))


def test_committed_measurement_is_for_the_papers_table(paper):
    saved = json.loads(published.COVERAGE_FILE.read_text(encoding="utf-8"))
    assert saved["table_sha256"] == published.table_hash(paper)
    assert set(saved["by_generator"]) == set(pc.GENERATORS)
    for name, low in saved["lowest"].items():
        rows = [r for g in saved["by_generator"].values() for r in g if r["name"] == name]
        assert low["coverage"] == min(r["coverage"] for r in rows)
        assert 0 < low["se"] < 0.025  # a few hundred simulated tables per generator
    # the truth values the file states are the analysis of the paper's fitted laws
    true = pc._truth_values(pc.truth_table(paper)[0], baseline="adamw", level=0.95)
    for r in saved["by_generator"]["normal"]:
        assert r["truth"] == pytest.approx(true[r["name"]], rel=1e-9)


def test_papers_findings_state_the_coverage_measured_on_its_data(paper):
    sp = findings.speedups(paper, baseline="adamw", reps=20, level=0.95, seed=0)
    saved = json.loads(published.COVERAGE_FILE.read_text(encoding="utf-8"))["lowest"]
    rows = findings.Rows(level=0.95, reps=20, baseline="adamw")
    res = sp.result
    per, trend = analysis.size_trend(
        res, {s: published.PAPER_PARAMS[s] for s in published.PAPER_PARAMS}
    )
    made = (
        rows.per_size(analysis.speedup_by_size(res), sp)
        + rows.size_slopes(
            trend, sp, sizes=list(published.PAPER_PARAMS), identified=True, multiples=[1, 2, 4, 8]
        )
        + rows.family_gap(
            analysis.family_gap(res, published.PAPER_FAMILIES), sp, list(published.PAPER_PARAMS)
        )
        + rows.catch_up(
            published.catch_up(res, low=1.0, high=8.0), sp, follower="soape", multiples=[1, 8]
        )
    )
    deciding = {
        "speedup_mean/muon/130m",
        "speedup_mean/muon/1.2b",
        "speedup_mean/nadamw/130m",
        "matrix_over_scalar/130m",
        "size_slope/muon",
        "catch_up/soape_vs_muon/130m",
    }
    by_name = {r["name"]: r["point"] for r in made}
    for name in deciding:
        est = by_name[name]
        stated = stated_on_data(est.method)
        assert est.method.startswith(findings.PARAMETRIC) and stated is not None
        assert stated[0] == pytest.approx(saved[name]["coverage"], abs=5e-4) and stated[1] == 1
        note = coverage_note(
            {"ci": list(est.ci), "level": est.level, "method": est.method, "n": est.n}
        )
        assert (note is None) == (stated[0] >= 0.93)
        assert note is None or "on these data" in note
    # findings not measured keep the plain method text
    assert by_name["speedup_mean/lion/130m"].method == findings.PARAMETRIC


def test_another_table_or_level_reads_no_measurement(paper):
    moved = paper.assign(loss=paper.loss + np.where(np.arange(len(paper)) == 0, 1e-3, 0.0))
    assert published.table_hash(moved) != published.table_hash(paper)
    assert published.on_data_methods(moved, method="m", level=0.95) == {}
    assert published.on_data_methods(paper, method="m", level=0.9) == {}
    said = published.on_data_methods(paper, method="m", level=0.95)
    assert said and all(t.startswith("m; coverage ") for t in said.values())
    # the same losses in another row order are the same table
    assert published.table_hash(paper.iloc[::-1]) == published.table_hash(paper)
