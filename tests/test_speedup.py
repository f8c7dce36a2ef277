"""The paper's speedup formula on hand-made tables, and its failure modes."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from scalinglab.errors import InputError
from scalinglab.fitting.loss_table import validate_table
from scalinglab.fitting.speedup import _interval_with_inf, compute_speedups, effective_data

# Hand-chosen baseline law: L(D) = 0.5 D^-0.5 + 2.0.
A, ALPHA, E = 0.5, 0.5, 2.0


def law(d):
    return A * d**-ALPHA + E


def table(noise=0.0, seeds=(0,), extra=()):
    rng = np.random.default_rng(0)
    rows = []
    for s in seeds:
        for m in (1, 2, 4, 8):
            rows.append(("adamw", "10k", m, law(m) + noise * rng.normal(), s))
        # "fast" reaches at D=2 the loss AdamW reaches at D=4:
        # L = 0.5 * 4^-0.5 + 2 = 2.25, so D_eff = ((2.25 - 2) / 0.5)^(-1/0.5) = 4, speedup 2.
        rows.append(("fast", "10k", 2, 2.25 + noise * rng.normal(), s))
        rows.append(("fast", "10k", 8, law(16) + noise * rng.normal(), s))  # speedup 2
    rows += list(extra)
    return pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "loss", "seed"])


def test_effective_data_by_hand():
    d, ok = effective_data([2.25, 2.5, 2.0, 1.9], A=A, alpha=ALPHA, E=E)
    assert ok.tolist() == [True, True, False, False]
    assert d[0] == pytest.approx(4.0) and d[1] == pytest.approx(1.0)
    assert np.isnan(d[2:]).all()


def test_speedup_matches_the_hand_computed_case():
    r = compute_speedups(table(), bootstrap=0)
    fit = r.fits["10k"]
    assert fit["status"] == "ok"
    assert (fit["A"], fit["alpha"], fit["E"]) == pytest.approx((A, ALPHA, E), rel=1e-5)
    out = r.to_dict()
    assert out["speedup"]["fast"]["10k"]["2"] == pytest.approx(2.0, rel=1e-5)
    assert out["speedup"]["fast"]["10k"]["8"] == pytest.approx(2.0, rel=1e-5)
    assert out["d_eff"]["fast"]["10k"]["2"] == pytest.approx(4.0, rel=1e-5)
    assert out["speedup"]["adamw"]["10k"]["4"] == pytest.approx(1.0, rel=1e-5)
    assert out["ci"]["fast"]["10k"]["2"] is None  # one seed: no CI


def test_below_asymptote_is_reported_not_inf():
    r = compute_speedups(table(extra=[("fast", "10k", 4, 1.95, 0)]), bootstrap=0)
    out = r.to_dict()
    assert out["status"]["fast"]["10k"]["4"] == "below_asymptote"
    assert out["speedup"]["fast"]["10k"]["4"] is None and out["d_eff"]["fast"]["10k"]["4"] is None
    assert any("below the baseline asymptote" in w for w in out["warnings"])
    assert out["status"]["fast"]["10k"]["2"] == "ok"


def test_size_with_too_few_baseline_points_is_reported():
    extra = [("adamw", "20k", 1, 2.4, 0), ("adamw", "20k", 2, 2.3, 0), ("fast", "20k", 1, 2.3, 0)]
    r = compute_speedups(table(extra=extra), bootstrap=0)
    out = r.to_dict()
    f = out["baseline_fits"]["20k"]
    assert f["status"] == "insufficient_points" and f["A"] is None
    assert "needs at least 3" in f["reason"]
    assert out["status"]["fast"]["20k"]["1"] == "no_baseline_fit"
    assert out["speedup"]["fast"]["20k"]["1"] is None
    assert out["baseline_fits"]["10k"]["status"] == "ok"  # other sizes unaffected


def test_bootstrap_over_seeds_gives_a_ci_around_the_point():
    r = compute_speedups(table(noise=0.002, seeds=(0, 1, 2, 3)), bootstrap=300, seed=1)
    out = r.to_dict()
    lo, hi = out["ci"]["fast"]["10k"]["2"]
    s = out["speedup"]["fast"]["10k"]["2"]
    assert lo < s < hi and 0.0 < hi - lo < 0.5 and abs(s - 2.0) < 0.1
    assert out["n_seeds"]["fast"]["10k"]["2"] == 4 and out["bootstrap"] == 300
    again = compute_speedups(table(noise=0.002, seeds=(0, 1, 2, 3)), bootstrap=300, seed=1)
    assert again.to_dict()["ci"] == out["ci"]  # same seed, same intervals


def test_interval_with_replicates_below_the_asymptote_is_unbounded_above():
    col = np.concatenate([np.linspace(1.0, 2.0, 90), np.full(10, np.inf)])
    lo, hi, k = _interval_with_inf(col, 0.95)
    assert k == 10 and math.isnan(hi) and 1.0 <= lo < 1.1
    lo, hi, k = _interval_with_inf(np.concatenate([np.linspace(1, 2, 99), [np.inf]]), 0.95)
    assert k == 1 and math.isfinite(hi) and hi <= 2.0


def test_bad_tables_name_the_column_and_row():
    bad = table()
    bad.loc[2, "loss"] = -1.0
    with pytest.raises(InputError) as e:
        validate_table(bad, file="x.csv")
    assert e.value.column == "loss" and e.value.row == 3 and e.value.file == "x.csv"
    dup = pd.concat([table(), table().iloc[[0]]], ignore_index=True)
    with pytest.raises(InputError, match="duplicate run") as e:
        validate_table(dup)
    assert e.value.row == len(dup)
    with pytest.raises(InputError, match="baseline optimizer 'sgd'"):
        compute_speedups(table(), baseline="sgd", bootstrap=0)
    with pytest.raises(InputError) as e:
        validate_table(table().drop(columns=["data_multiple"]))
    assert e.value.column == "data_multiple"


def test_family_gap_and_size_trend_by_hand():
    from scalinglab.studies.optimizers.analysis import family_gap, size_trend

    rows = []
    for size, a in (("1000", 0.5), ("8000", 0.4)):
        for m in (1, 2, 4, 8):
            rows.append(("adamw", size, m, a * m**-0.5 + 2.0))
            rows.append(("slow", size, m, a * m**-0.5 + 2.0))  # speedup 1
            k = 2.0 if size == "1000" else 1.5  # the matrix method's speedup shrinks with size
            rows.append(("fast", size, m, a * (k * m) ** -0.5 + 2.0))
    df = pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "loss"])
    r = compute_speedups(df, bootstrap=0)
    gap = family_gap(r, {"fast": "matrix", "slow": "scalar"}).set_index("model_size")
    assert gap.loc["1000", "ratio"] == pytest.approx(2.0, rel=1e-4)
    assert gap.loc["8000", "ratio"] == pytest.approx(1.5, rel=1e-4)
    per, trend = size_trend(r, {"1000": 1000.0, "8000": 8000.0})
    slope = trend.set_index("optimizer").loc["fast", "slope"]
    assert slope == pytest.approx(np.log(1.5 / 2.0) / np.log(8.0), rel=1e-3)
    assert trend.set_index("optimizer").loc["slow", "slope"] == pytest.approx(0.0, abs=1e-4)


def test_a_flat_law_gives_no_effective_data_instead_of_dividing_by_zero():
    # a constant baseline fits alpha = 0 (Python floats, as a FitResult's params are)
    d, ok = effective_data(3.1, A=0.5, alpha=0.0, E=3.0)
    assert not ok and np.isnan(d)
    d, ok = effective_data(np.array([3.1, 3.2]), A=0.0, alpha=0.5, E=3.0)
    assert not ok.any() and np.isnan(d).all()
