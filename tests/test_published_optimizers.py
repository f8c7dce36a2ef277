"""The paper's released final losses (Wen et al. 2025) through the speedup engine."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from scalinglab.errors import InputError
from scalinglab.fitting.speedup import compute_speedups
from scalinglab.paths import data_dir
from scalinglab.studies.optimizers import analysis, published

FOLDER = data_dir() / "published" / "fantastic_optimizers"
RELEASED = FOLDER / "final_losses.csv"


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return published.load_published(RELEASED)


@pytest.fixture(scope="module")
def point(table):
    return compute_speedups(table, bootstrap=0)


def test_load_keeps_the_papers_multiples(table):
    assert len(table) == 136  # 144 released rows less the eight 16x runs
    assert table.data_multiple.max() == 8.0
    assert set(table.model_size) == set(published.PAPER_PARAMS)
    assert set(table.optimizer) == set(published.PAPER_FAMILIES)


def test_derived_speedup_table_is_the_derivation(table):
    derived = pd.read_csv(FOLDER / "speedup_table.csv")
    pd.testing.assert_frame_equal(derived, table, check_dtype=False)


@pytest.mark.slow
def test_the_papers_adamw_fits_and_muon_speedups(point):
    fits = point.fits
    for size, (A, alpha, E) in {
        "130m": (0.418, 0.495, 3.111),
        "1.2b": (0.239, 0.485, 2.665),
    }.items():
        assert fits[size]["A"] == pytest.approx(A, abs=6e-4)
        assert fits[size]["alpha"] == pytest.approx(alpha, abs=6e-4)
        assert fits[size]["E"] == pytest.approx(E, abs=6e-4)
    c = point.cells[point.cells.optimizer == "muon"].set_index(["model_size", "data_multiple"])
    for size, paper in {"130m": [1.42, 1.33, 1.32, 1.38], "1.2b": [1.12, 1.12, 1.13, 1.10]}.items():
        ours = [c.loc[(size, m), "speedup"] for m in (1.0, 2.0, 4.0, 8.0)]
        np.testing.assert_allclose(ours, paper, atol=0.006)


@pytest.mark.slow
def test_a_perturbed_loss_moves_its_speedup(table, point):
    worse = table.copy()
    worse.loc[
        (worse.optimizer == "muon") & (worse.model_size == "130m") & (worse.data_multiple == 1.0),
        "loss",
    ] += 0.05
    moved = compute_speedups(worse, bootstrap=0).cells
    sel = (moved.optimizer == "muon") & (moved.model_size == "130m") & (moved.data_multiple == 1.0)
    assert moved.loc[sel, "speedup"].item() < point.cells.loc[sel, "speedup"].item() - 0.2


def _synthetic(sigma: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s, (A, al, E) in {"a": (0.4, 0.5, 3.0), "b": (0.3, 0.45, 2.8)}.items():
        for o, k in {"base": 1.0, "fast": 1.3, "slow": 0.9}.items():
            for m in (1.0, 2.0, 4.0, 8.0, 16.0):
                rows.append(
                    {
                        "optimizer": o,
                        "model_size": s,
                        "data_multiple": m,
                        "loss": A * (k * m) ** -al + E + rng.normal(0, sigma),
                    }
                )
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_law_noise_recovers_a_known_sigma():
    est = [published.law_noise(_synthetic(0.01, s))[0] for s in range(8)]
    assert np.median(est) == pytest.approx(0.01, rel=0.35)
    assert published.law_noise(_synthetic(0.0, 0))[0] < 1e-4


@pytest.mark.slow
def test_noise_bootstrap_intervals_cover_and_are_reproducible():
    t = _synthetic(0.003, 1)
    res, at_bound = published.noise_bootstrap(t, sigma=0.003, baseline="base", reps=60, seed=3)
    ok = res.cells[(res.cells.status == "ok") & (res.cells.optimizer == "fast")]
    assert ((ok.lo <= ok.speedup) & (ok.speedup <= ok.hi)).all()
    assert ((ok.lo < 1.3) & (1.3 < ok.hi)).mean() >= 0.8  # the true speedup is 1.3
    again, _ = published.noise_bootstrap(t, sigma=0.003, baseline="base", reps=60, seed=3)
    np.testing.assert_array_equal(res.draws, again.draws)
    assert set(at_bound) == {"a", "b"}
    assert all(published.e_identified(res, at_bound).values())
    wide, _ = published.noise_bootstrap(t, sigma=0.03, baseline="base", reps=60, seed=3)
    assert (wide.cells.hi - wide.cells.lo).mean() > (res.cells.hi - res.cells.lo).mean()


@pytest.mark.slow
def test_e_on_its_bound_is_not_identified():
    t = _synthetic(0.0, 0)
    t["loss"] = t["loss"] - 3.0  # size a: the true asymptote is 0, E's bound
    res, at_bound = published.noise_bootstrap(
        t[t.model_size == "a"], sigma=0.002, baseline="base", reps=40, seed=0
    )
    assert published.e_identified(res, at_bound) == {"a": False}


@pytest.mark.slow
def test_catch_up_and_trend_on_the_papers_table(table):
    res, at_bound = published.noise_bootstrap(table, sigma=0.0044, reps=30, seed=0)
    cu = published.catch_up(res, leader="muon", follower="soape", low=1.0, high=8.0)
    assert list(cu.model_size) == ["130m", "300m", "520m", "1.2b"]
    assert ((cu.lo <= cu.change) & (cu.change <= cu.hi)).all()
    _, trend = analysis.size_trend(res, published.PAPER_PARAMS)
    assert trend.set_index("optimizer").loc["muon", "slope"] < 0  # the paper's shrinking speedup


def test_read_runs_names_the_file_and_column(tmp_path):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"optimizer": ["adamw"], "model_size": ["130m"], "chinchilla": [1]}).to_csv(
        bad, index=False
    )
    # the file is in the released layout (it has ``chinchilla``): the missing column is the
    # released one, not the generic table's ``loss``
    with pytest.raises(InputError, match=r"bad\.csv, column 'final_c4en_loss': missing column"):
        published.read_runs(bad)


@pytest.mark.slow
def test_cli_prints_the_papers_speedups():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "scalinglab",
            "speedup",
            str(FOLDER / "speedup_table.csv"),
            "--bootstrap",
            "0",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout)
    assert got["speedup"]["muon"]["130m"]["1"] == pytest.approx(1.42, abs=0.006)
    assert got["speedup"]["muon"]["1.2b"]["8"] == pytest.approx(1.10, abs=0.006)
