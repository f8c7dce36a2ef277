"""The paper's released Sparsing Law curves: provenance, reading, block bootstrap, refits,
and the sparsity laws' identification rules."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from scalinglab.errors import InputError
from scalinglab.estimate import Estimate
from scalinglab.fitting import fit
from scalinglab.studies.sparsity import analysis as sa
from scalinglab.studies.sparsity import published as pub


def test_committed_files_match_their_provenance():
    sums = pub.check_provenance()
    assert len(sums) == 12
    text = (pub.published_dir() / "PROVENANCE.md").read_text()
    for digest in sums.values():
        assert digest in text


def test_a_changed_file_fails_provenance_naming_it(tmp_path):
    folder = tmp_path / "sparsing_law"
    shutil.copytree(pub.published_dir(), folder)
    path = folder / "data" / "0.4b_silu.txt"
    path.chmod(0o644)
    path.write_text(path.read_text().replace("0.3", "0.4", 1))
    with pytest.raises(InputError, match="0.4b_silu.txt"):
        pub.check_provenance(folder)


def test_load_curves_layout():
    df = pub.load_curves()
    sizes = df.groupby("activation")["model"].unique()
    assert list(sizes["relu"]) == ["0.1b", "0.2b", "0.4b", "0.8b", "1.2b", "2.4b"]
    assert list(sizes["silu"]) == ["0.1b", "0.2b", "0.4b", "0.8b", "1.2b"]
    assert np.allclose(df["D"], df["tokens"] / 1e9)
    assert df.groupby("run").size().between(24, 42).all()
    first = df[df["run"] == "0.1b/relu"].iloc[0]
    assert first["tokens"] == 800978889 and first["activation_ratio"] == pytest.approx(0.10474616)


def test_block_groups_are_contiguous_and_not_shorter_than_the_length():
    for n in (24, 28, 30, 41, 42):
        L = pub.block_length(n)
        assert L == int(np.ceil(n ** (1 / 3)))
        g = pub.block_groups(n, L)
        assert g.shape == (n,) and np.all(np.diff(g) >= 0) and g[0] == 0
        assert np.bincount(g).min() >= L and g.max() + 1 == n // L
    assert pub.block_length(5) == 2


def test_author_curves_match_the_readme_examples():
    auth = pub.author_params().set_index("model")
    assert pub.author_predict(auth.loc["0.1b_relu"], "relu", 41.6) == pytest.approx(
        0.0707, abs=1e-4
    )
    assert pub.author_predict(auth.loc["0.1b_silu"], "silu", 41.6) == pytest.approx(
        0.3919, abs=1e-4
    )


def test_bad_curve_file_names_file_and_row(tmp_path):
    path = tmp_path / "0.1b_relu.txt"
    path.write_text(json.dumps({"token_passed": [1, 3, 2], "activation_ratio": [0.1, 0.1, 0.1]}))
    with pytest.raises(InputError, match=r"0\.1b_relu\.txt.*row 3|row 3.*0\.1b_relu"):
        pub._read_curve(path)
    path.write_text(json.dumps({"token_passed": [1, 2], "activation_ratio": [0.1]}))
    with pytest.raises(InputError, match="differ in length"):
        pub._read_curve(path)


def test_refit_matches_the_authors_on_a_silu_curve():
    df = pub.load_curves()
    one = df[df["run"] == "0.1b/silu"]
    table, fits = pub.refit(one, reps=40, seed=0)
    row = table.iloc[0]
    assert row["rmse"] <= row["auth_rmse"]  # least squares on the same points
    assert row["A0_lo"] <= row["A0"] <= row["A0_hi"]
    assert 0.38 < row["A0"] < 0.44 and row["auth_A0"] == pytest.approx(0.409)
    assert fits[("silu", "0.1b")].bootstrap_info["reps"] == 40


def _linear_curves(slope_relu: float, slope_silu: float) -> pd.DataFrame:
    rows = []
    for act, slope, base in (("relu", slope_relu, 0.07), ("silu", slope_silu, 0.38)):
        for size, n_params in (("0.1b", 1e8), ("1b", 1e9)):
            D = np.geomspace(1, 100, 27)
            y = base + (0.01 if size == "1b" else 0.0) + slope * np.log10(D / 100)
            rows.append(
                pd.DataFrame(
                    {
                        "activation": act,
                        "model": size,
                        "D": D,
                        "activation_ratio": y,
                        "n_params": n_params,
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def test_late_trends_recover_exact_lines_and_scale_slope():
    df = _linear_curves(-0.02, 0.03)
    table, draws = pub.late_trends(df, reps=50, seed=0)
    r = table.set_index(["activation", "model"])
    assert r.loc[("relu", "0.1b"), "slope"] == pytest.approx(-0.02)
    assert r.loc[("silu", "1b"), "end_ratio"] == pytest.approx(0.39)
    assert r.loc[("relu", "0.1b"), "D_from"] == pytest.approx(10.0)
    assert np.allclose(draws[("relu", "1b")][:, 0], -0.02)  # noise-free: every draw exact
    est = pub.mean_over_models(table, draws, activation="silu")
    assert est.point == pytest.approx(0.03) and est.lo == pytest.approx(0.03)
    assert "block bootstrap" in est.method and est.resamples == 50
    rel = pub.mean_over_models(table, draws, activation="relu", column=2, models=["0.1b"])
    assert rel.point == pytest.approx(
        -0.02 / table.set_index("model").loc["0.1b", "end_ratio"].iloc[0]
    )
    assert pub.scale_slope(table, draws, activation="relu").point == pytest.approx(
        0.01 / 0.075
    )  # +0.01 over one decade, mean end 0.075


def _relu_points(increasing: bool):
    rng = np.random.default_rng(0)
    D = np.geomspace(1e5, 1e8, 12)
    y = 0.2 + (0.03 if increasing else -0.03) * np.log10(D / 1e5) / 3
    y = y + 0.001 * rng.standard_normal(D.size)
    return D, y


def test_a_relu_law_on_a_rising_trend_is_not_identified():
    D, y = _relu_points(increasing=True)
    res = fit("relu_sparsity", D, y)
    ident = sa.law_identification(res, "A0", trend=Estimate(0.03, 0.02, 0.04, level=0.95))
    assert not ident.identified
    assert "bound" in ident.reason or "sign" in ident.reason


def test_trend_of_the_wrong_sign_alone_makes_a_limit_not_identified():
    D = np.geomspace(1e5, 1e8, 12)
    y = 0.07 + np.exp(-0.05 * D**0.3 + 0.5)
    res = fit("relu_sparsity", D, y)
    assert sa.law_identification(res, "A0").identified
    ident = sa.law_identification(res, "A0", trend=Estimate(0.01, 0.005, 0.02, level=0.95))
    assert not ident.identified and "sign" in ident.reason
    assert sa.law_identification(
        res, "A0", trend=Estimate(-0.01, -0.02, 0.001, level=0.95)
    ).identified


def test_laws_display_has_no_nan_cells():
    table = pd.DataFrame(
        [
            {
                "activation": "relu",
                "model": "m",
                "law": "relu_sparsity",
                "alpha": 0.3,
                "alpha_lo": 0.1,
                "alpha_hi": 0.5,
                "c": 2.0,
                "c_lo": 1.0,
                "c_hi": 3.0,
                "A0": 0.07,
                "A0_lo": 0.06,
                "A0_hi": 0.08,
                "n_points": 20,
                "n_runs": 3,
                "warnings": "",
            },
            {
                "activation": "silu",
                "model": "m",
                "law": "silu_sparsity",
                "error": "too few points",
                "n_points": 2,
                "n_runs": 1,
            },
        ]
    )
    on_bound = {**table.iloc[0].to_dict(), "alpha": 0.0, "alpha_lo": 0.0, "alpha_hi": 0.0}
    table = pd.concat([table, pd.DataFrame([on_bound])], ignore_index=True)
    out = sa.laws_display(table)
    assert out.loc[0, "A0"] == "0.07 [0.06, 0.08]"
    # every refit on the bound: no [0, 0] interval
    assert out.loc[2, "alpha"] == "0 (every refit 0: no interval)"
    assert pd.isna(out.loc[1, "A0"]) and out.loc[1, "warnings"] == "too few points"
    assert not out.drop(columns=["alpha", "c", "A0"]).isna().any().any()


# ----------------------------------------------------------------------------- kernel spread
def _per_process(speedups: dict[float, list[float]]) -> pd.DataFrame:
    rows = []
    for ratio, values in speedups.items():
        for p, v in enumerate(values):
            rows.append(
                {
                    "process": p,
                    "batch": 1,
                    "ratio": ratio,
                    "impl": "sparse_numba",
                    "speedup": v,
                    "ideal": 1 / ratio,
                    "union_ratio": ratio,
                    "dense_s": 1.0,
                    "sparse_s": 1.0 / v,
                    "fraction_of_roofline": 0.5,
                    "load": float(p),
                }
            )
    return pd.DataFrame(rows)


def test_speedup_over_processes_is_the_median_with_a_bootstrap_over_processes():
    from scalinglab.studies.sparsity import kernel_spread as ks

    pp = _per_process({0.02: [10.0, 12.0, 14.0, 16.0, 30.0], 0.5: [1.0, 1.0, 1.0, 1.0, 1.0]})
    out = ks.speedup_over_processes(pp, reps=400, seed=0).set_index("ratio")
    assert out.loc[0.02, "speedup"] == 14.0 and out.loc[0.02, "processes"] == 5
    assert 10.0 <= out.loc[0.02, "speedup_lo"] < 14.0 < out.loc[0.02, "speedup_hi"] <= 30.0
    assert out.loc[0.02, "fraction_of_ideal"] == pytest.approx(14.0 / 50.0)
    assert out.loc[0.5, "speedup_lo"] == out.loc[0.5, "speedup_hi"] == 1.0
    assert out.loc[0.02, "load"] == 4.0


def test_rerun_coverage_counts_both_halves_and_needs_four_processes():
    from scalinglab.studies.sparsity import kernel_spread as ks

    # halves (0, 1) and (2, 3): the second half sits far above the first in one cell
    pp = _per_process({0.02: [10.0, 11.0, 20.0, 21.0], 0.1: [5.0, 6.0, 5.0, 6.0]})
    cov = ks.rerun_coverage(pp, reps=300, seed=0)
    assert cov["cells"] == 4 and cov["half"] == 2
    assert cov["inside"] == 0.5  # the 0.1 cell in both roles, never the 0.02 cell
    with pytest.raises(ValueError, match="at least 4"):
        ks.rerun_coverage(_per_process({0.1: [1.0, 2.0, 3.0]}))
