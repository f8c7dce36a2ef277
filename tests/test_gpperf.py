"""GPPerf's published tables: reading, provenance, tile effects, power savings, predictors."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scalinglab.errors import InputError
from scalinglab.stats import calibration
from scalinglab.studies.gemm import gpperf
from scalinglab.studies.gemm import gpperf_predictor as gp

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "data" / "published" / "gpperf"


def _times(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["M", "N", "K", "tile", "ms"])


def test_published_tables_load_as_described():
    times, power = gpperf.load_gpperf(PUBLISHED)
    assert len(times) == 141 and len(power) == 195
    assert times.groupby(gpperf.SHAPE).ngroups == 39 == power.groupby(gpperf.SHAPE).ngroups
    assert set(times["tile"]) == {1, 4, 8, 16, 32}
    # the three values with a trailing space parse as numbers
    assert times["ms"].min() == pytest.approx(5.58422) and times["ms"].max() == 1222268.0
    assert 30 < power["watts"].min() < power["watts"].max() < 141
    assert gpperf.check_provenance(PUBLISHED) == gpperf.SHA256


def test_provenance_check_fails_on_an_edited_file(tmp_path):
    for f in PUBLISHED.glob("*.csv"):
        shutil.copy(f, tmp_path / f.name)
    edited = tmp_path / gpperf.TIMES_FILE
    edited.write_text(edited.read_text().replace("5.58422", "5.58423"))
    with pytest.raises(InputError, match="sha256"):
        gpperf.check_provenance(tmp_path)


def test_bad_rows_name_file_column_and_row(tmp_path):
    shutil.copy(PUBLISHED / gpperf.POWER_FILE, tmp_path / gpperf.POWER_FILE)
    bad = tmp_path / gpperf.TIMES_FILE
    bad.write_text("M,N,K,Tile Size,Execution Time\n512,512,512,8,6.5\n512,512,512,16,fast\n")
    with pytest.raises(InputError, match="row 2") as err:
        gpperf.load_gpperf(tmp_path)
    assert err.value.column == "Execution Time"
    bad.write_text("M,N,K,Tile Size,Execution Time\n512,512,512,8,6.5\n512,512,512,8,7.0\n")
    with pytest.raises(InputError, match="duplicate"):
        gpperf.load_gpperf(tmp_path)


def test_tile_effects_reselect_best_and_worst_per_shape():
    times = _times(
        [
            (8, 8, 8, 1, 30.0),
            (8, 8, 8, 16, 10.0),
            (8, 8, 8, 32, 12.0),
            (9, 9, 9, 16, 5.0),
            (9, 9, 9, 32, 6.0),
            (7, 7, 7, 16, 1.0),
        ]
    )
    eff = gpperf.tile_effects(times)
    assert list(eff["shape"]) == ["8x8x8", "9x9x9"]  # a shape with one tile is left out
    assert eff.iloc[0].ratio == pytest.approx(3.0) and eff.iloc[0].worst_tile == 1
    common = gpperf.tile_effects(times, tiles=(16, 32))
    assert common.iloc[0].ratio == pytest.approx(1.2)
    summ = gpperf.tile_effect_summary(eff, reps=500)
    assert summ.loc["max_ratio", "point"] == pytest.approx(3.0)
    # resampling shapes, the maximum could only come down from the observed one (an
    # interval ending at the point): it is given without an interval
    assert np.isnan(summ.loc["max_ratio", "lo"]) and np.isnan(summ.loc["max_ratio", "hi"])
    assert summ.loc["median_ratio", "lo"] <= summ.loc["median_ratio", "point"]
    assert summ.loc["share_best_16", "point"] == 1.0
    # a share of shapes gets Wilson's interval over them: below 1 even when 16 always wins
    share = summ.loc["share_best_16"]
    assert share["interval"] == "Wilson score over 2 shapes" and 0 < share["lo"] < 1
    assert (share["lo"], share["hi"]) == pytest.approx([float(v) for v in calibration.wilson(2, 2)])
    assert "median over shapes" in summ.loc["median_ratio", "interval"]


def test_power_saving_against_the_baseline_tile():
    times = _times(
        [(8, 8, 8, 1, 2000.0), (8, 8, 8, 16, 1000.0), (9, 9, 9, 16, 10.0), (9, 9, 9, 32, 20.0)]
    )
    power = pd.DataFrame(
        [
            (8, 8, 8, 1, 100.0),
            (8, 8, 8, 16, 80.0),
            (9, 9, 9, 1, 50.0),
            (9, 9, 9, 16, 40.0),
            (9, 9, 9, 32, 45.0),
        ],
        columns=["M", "N", "K", "tile", "watts"],
    )
    s = gpperf.power_savings(times, power).set_index("shape")
    assert s.loc["8x8x8", "power_saving"] == pytest.approx(0.2)
    assert s.loc["8x8x8", "energy_saving"] == pytest.approx(1 - 80 * 1000 / (100 * 2000))
    assert np.isnan(s.loc["9x9x9", "energy_saving"])  # tile 1 not timed there
    long = gpperf.power_savings(times, power, min_ms=500)
    assert list(long["shape"]) == ["8x8x8"]
    with pytest.raises(InputError, match="no shape"):
        gpperf.power_savings(times, power, min_ms=1e9)


@pytest.mark.slow
def test_unseen_shapes_cannot_borrow_from_a_shapes_other_tiles():
    # runtime depends only on the shape (tile has no effect) through a shape-specific
    # factor no feature explains: a random split sees each test shape's other tiles in
    # training and scores well; holding out whole shapes leaves nothing to copy
    rng = np.random.default_rng(0)
    shapes = [(int(m), int(n), int(k)) for m, n, k in rng.integers(1, 64, size=(30, 3)) * 64]
    factor = np.exp(rng.normal(0, 1.0, size=len(shapes)))
    rows = [
        (m, n, k, t, f * (1 + 0.01 * rng.random()))
        for (m, n, k), f in zip(shapes, factor, strict=True)
        for t in (4, 8, 16, 32)
    ]
    df = pd.DataFrame(rows, columns=["M", "N", "K", "tile", "ms"])
    acc, preds = gp.predictor_accuracy(df, "ms", models=("random_forest",), n_repeats=3, reps=200)
    r2 = acc[acc["metric"] == "r2_log"].set_index("protocol")["point"]
    assert r2["random_split"] > 0.9 and r2["unseen_shapes"] < 0.5
    assert (acc["lo"] <= acc["point"]).all() and (acc["point"] <= acc["hi"]).all()
    assert set(preds["protocol"]) == {"random_split", "unseen_shapes"}
    # each bootstrap states the units it resamples (test rows, shapes); the repeated
    # splits' interval is the range of their 3 scores, a prediction interval for one
    # more split's score at its exact coverage (3 - 1) / (3 + 1)
    r2log = acc[acc["metric"] == "r2_log"].set_index("protocol")
    units = r2log["n_units"]
    assert units["random_split"] == 24 and units["unseen_shapes"] == 30
    repeated = ["random_split_repeated", "unseen_shapes_repeated"]
    assert (units[repeated] == 3).all()
    assert (r2log.loc[repeated, "level"] == 0.5).all()
    assert r2log[["level"]].drop(repeated).isna().all().all()
    assert all("prediction interval for one more" in t for t in r2log.loc[repeated, "interval"])


def test_scores_known_values():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert gp.scores(y, y) == pytest.approx([1.0, 1.0, 0.0])
    r2, _, mape = gp.scores(y, np.full(4, y.mean()))
    assert r2 == pytest.approx(0.0) and mape == pytest.approx(np.mean(np.abs(2.5 - y) / y))


@pytest.mark.slow
def test_paper_split_ends_carry_the_forest_and_bootstrap_monte_carlo_error():
    # GPPerf's runtime R^2 on the paper's split moved its upper end from 0.91 to 0.98 with
    # the analysis seed (the forest's own seed): the ends' Monte Carlo error must say so,
    # so the MC guard, not the seed, decides whether the verdict stands
    from scalinglab.studies.gemm import estimates as gest

    rng = np.random.default_rng(1)
    shapes = [(int(m), int(n), int(k)) for m, n, k in rng.integers(1, 32, size=(16, 3)) * 64]
    rows = [
        (m, n, k, t, m * n * k * 1e-9 * (1 + 0.3 * rng.random()) / np.sqrt(t))
        for m, n, k in shapes
        for t in (4, 8, 16)
    ]
    df = pd.DataFrame(rows, columns=["M", "N", "K", "tile", "ms"])
    kw = {"n_repeats": 3, "reps": 200, "n_splits": 4}
    acc, _ = gp.predictor_accuracy(df, "ms", forest_draws=6, **kw)
    boot_only, _ = gp.predictor_accuracy(df, "ms", forest_draws=0, **kw)
    key = ["model", "protocol", "metric"]
    a, b = acc.set_index(key), boot_only.set_index(key)
    rf = ("random_forest", "random_split", "r2")
    assert np.isfinite(a.loc[rf, ["mc_se_lo", "mc_se_hi"]].astype(float)).all()
    # the forest's refits add to the bootstrap's own error; the linear model has none to add
    assert a.loc[rf, "mc_se_hi"] > b.loc[rf, "mc_se_hi"]
    lin = ("linear", "random_split", "r2")
    assert a.loc[lin, "mc_se_hi"] == pytest.approx(b.loc[lin, "mc_se_hi"])
    # every protocol states its ends' Monte Carlo error, and the estimate carries it
    assert acc[["mc_se_lo", "mc_se_hi"]].notna().all().all()
    paper = acc[(acc["model"] == "random_forest") & (acc["protocol"] == "random_split")]
    row = next(paper.itertuples())
    est = gest.gpperf_accuracy(row, level=0.95, reps=200, n_repeats=3)
    assert est.mc_se == (pytest.approx(row.mc_se_lo), pytest.approx(row.mc_se_hi))
