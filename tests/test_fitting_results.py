"""FitResult conversions (JSON, xarray, ArviZ), extrapolation checks, OLS cross-checks."""

from __future__ import annotations

import dataclasses
import json

import arviz as az
import numpy as np
import pytest

from scalinglab.errors import InputError
from scalinglab.fitting import cross_check, extrapolation_check, fit, from_arrays, loglog_ols
from scalinglab.fitting.extrapolate import split_mask
from scalinglab.fitting.synthetic import simulate

PO_TRUTH = {"A": 0.418, "alpha": 0.495, "E": 3.111}


@pytest.fixture(scope="module")
def po_fit():
    x = np.tile(np.geomspace(0.25, 16, 6), 8)
    g = np.repeat(np.arange(8), 6)
    y = simulate("power_offset", PO_TRUTH, x, seed=0, noise=0.01, groups=g)
    return fit("power_offset", x, y, groups=g, bootstrap=200, seed=0)


def test_json_has_exactly_the_documented_keys(po_fit):
    d = json.loads(po_fit.to_json())
    assert list(d) == [
        "law",
        "params",
        "ci",
        "objective",
        "n_points",
        "n_groups",
        "converged",
        "warnings",
    ]
    assert d["law"] == "power_offset"
    assert list(d["params"]) == ["A", "alpha", "E"] == list(d["ci"])
    assert all(len(v) == 2 and v[0] <= v[1] for v in d["ci"].values())
    assert (d["n_points"], d["n_groups"], d["converged"]) == (48, 8, True)
    no_boot = json.loads(fit("power_offset", po_fit.problem.data).to_json())
    assert no_boot["ci"] == {"A": None, "alpha": None, "E": None}


def test_xarray_dataset_has_draw_and_param_dims(po_fit):
    ds = po_fit.to_xarray()
    assert ds["params"].dims == ("draw", "param")
    assert ds.sizes == {"draw": 200, "param": 3}
    assert list(ds["param"].values) == ["A", "alpha", "E"]
    q = ds["params"].sel(param="alpha").quantile([0.025, 0.975]).values
    np.testing.assert_allclose(q, po_fit.ci["alpha"])
    assert ds.attrs["law"] == "power_offset"


def test_arviz_summarizes_the_draws(po_fit):
    summary = az.summary(po_fit.to_inference_data(), kind="stats", hdi_prob=0.9)
    assert list(summary.index) == ["params[A]", "params[alpha]", "params[E]"]
    np.testing.assert_allclose(
        summary.loc["params[alpha]", "mean"], np.mean(po_fit.draws[:, 1]), atol=1e-3
    )
    assert (
        summary.loc["params[E]", "hdi_5%"]
        < po_fit.params["E"]
        < summary.loc["params[E]", "hdi_95%"]
    )


def test_table_lists_params_and_fixed():
    x = np.tile(np.geomspace(0.25, 16, 6), 4)
    y = simulate("power_offset", PO_TRUTH, x, seed=0, noise=0.01)
    text = fit("power_offset", x, y, fixed={"E": 3.1}).table()
    assert "E (fixed)" in text and "alpha" in text and "converged  True" in text


# ----------------------------------------------------------------------------- extrapolation
def test_extrapolation_check_right_law_beats_wrong_law():
    x = np.tile(np.geomspace(0.25, 32, 10), 6)
    g = np.repeat(np.arange(6), 10)
    y = simulate("power_offset", PO_TRUTH, x, seed=1, noise=0.003, groups=g)
    data = from_arrays(x, y, groups=g, x_names=["x"], group_name="seed")
    good = extrapolation_check("power_offset", data, cut=4.0, metric="mape", bootstrap=100, seed=0)
    assert good.n_train + good.n_test == x.size and good.n_test == 6 * 4
    assert good.ci[0] <= good.error <= good.ci[1]
    assert good.error < 0.01
    # without the irreducible term the extrapolation is visibly worse
    bad = extrapolation_check(
        "power_offset", data, cut=4.0, metric="mape", bootstrap=0, fixed={"E": 0.0}
    )
    assert bad.ci is None and bad.error > 5 * good.error
    assert set(good.to_dict()) >= {"metric", "error", "ci", "n_train", "n_test", "train_fit"}


def test_extrapolation_holdout_largest_group_and_per_group_laws():
    sizes = np.array([5e8, 2e9, 8e9])
    N = np.repeat(sizes, 10)
    X = np.tile(np.geomspace(1e16, 1e18, 10), 3)
    g = np.repeat(np.arange(3), 10)
    y = simulate(
        "loglinear_kn",
        {"Kmax": 0.15, "N0": 1e9, "E0": np.array([0.8, 1.3, 1.8])},
        np.column_stack([N, X]),
        seed=0,
        noise=0.003,
        groups=g,
    )
    data = from_arrays([N, X], y, x_names=["N", "X"])
    grouped = from_arrays([N, X], y, groups=N, x_names=["N", "X"], group_name="N")
    mask = split_mask(grouped, holdout="largest_group", column="N")
    assert mask.sum() == 20 and np.all(N[~mask] == 8e9)
    # fit the first 6 eval points of each run, predict the rest (Tan et al.'s check)
    res = extrapolation_check(
        "loglinear_kn",
        data,
        cut=np.geomspace(1e16, 1e18, 10)[5],
        column="X",
        bootstrap=50,
        metric="mape",
    )
    assert res.n_test == 12 and res.error < 0.02
    with pytest.raises(InputError, match="per-group parameters"):
        extrapolation_check(
            "loglinear_kn", grouped, holdout="largest_group", column="N", bootstrap=0
        )


# ----------------------------------------------------------------------------- OLS cross-check
def test_loglog_ols_recovers_a_pure_power_law():
    x = np.geomspace(1, 1e4, 30)
    y = 3.0 * x**-0.3 * np.exp(np.random.default_rng(0).normal(0, 0.01, x.size))
    ols = loglog_ols(x, y)
    assert ols.slope_ci[0] < -0.3 < ols.slope_ci[1]
    assert ols.intercept_ci[0] < np.log(3.0) < ols.intercept_ci[1]
    clustered = loglog_ols(x, y, groups=np.arange(x.size) % 5)
    assert clustered.cov_type == "cluster"


def test_cross_check_agrees_with_the_nonlinear_fit(po_fit):
    table = cross_check(po_fit)
    assert set(table["param"]) == {"alpha", "A"}
    row = table[table["coefficient"] == "slope"].iloc[0]
    assert row["implied"] == pytest.approx(-po_fit.params["alpha"])
    assert table["within_ci"].all()
    # parameters off the optimum (E too high by 0.02) disagree with their linearization
    off = dataclasses.replace(po_fit, params={**po_fit.params, "E": po_fit.params["E"] + 0.02})
    assert not cross_check(off)["within_ci"].all()
