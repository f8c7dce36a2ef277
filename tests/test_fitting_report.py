"""A fit's report (standard errors, statistics), compute-optimal N and D, the few-groups
warning, and results that print without dumping their draws."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from scalinglab.errors import InputError
from scalinglab.fitting import FitResult, fit
from scalinglab.fitting.compute_optimal import compute_optimal, optimal_allocation
from scalinglab.fitting.group_bootstrap import group_coverage, min_groups
from scalinglab.fitting.report import fit_report
from scalinglab.fitting.synthetic import simulate

PO_TRUTH = {"A": 0.418, "alpha": 0.495, "E": 3.111}
EPOCH = {"E": 1.82, "A": 482.0, "B": 2085.0, "alpha": 0.348, "beta": 0.366}


@pytest.fixture(scope="module")
def po_fit():
    x = np.tile(np.geomspace(0.25, 16, 6), 4)
    g = np.repeat(np.arange(4), 6)
    y = simulate("power_offset", PO_TRUTH, x, seed=0, noise=0.01, groups=g)
    return fit("power_offset", x, y, groups=g, bootstrap=1000, seed=0)


def test_a_prediction_interval_prints_compactly(po_fit):
    d = po_fit.predict_interval(np.array([2.0]))
    assert d.draws.shape == (1000, 1)
    text = repr(d)
    assert len(text) < 200 and "<1000x1 draws>" in text and text.startswith("Derived(point=[")
    assert f"{float(d.point[0]):.6g}" in text
    assert len(repr(po_fit)) < 2000  # the fit itself: no draws either


def test_few_groups_warn_and_say_the_minimum(po_fit):
    (w,) = [w for w in po_fit.warnings if w.startswith("bootstrap:")]
    assert "only 4 groups (group)" in w and f"at least {min_groups(0.95)} groups" in w


@pytest.mark.parametrize("n_groups", [3, 10])
def test_group_coverage_matches_a_simulated_percentile_bootstrap(n_groups):
    # the mean of G normal values, its percentile bootstrap over the G values
    rng = np.random.default_rng(0)
    sims, reps = 2000, 200
    x = rng.normal(size=(sims, n_groups))
    idx = rng.integers(0, n_groups, size=(sims, reps, n_groups))
    means = np.take_along_axis(np.repeat(x[:, None, :], reps, 1), idx, 2).mean(2)
    lo, hi = np.quantile(means, [0.025, 0.975], axis=1)
    covered = float(np.mean((lo <= 0) & (hi >= 0)))
    assert covered == pytest.approx(group_coverage(n_groups, 0.95), abs=0.03)


def test_min_groups_is_the_first_within_the_slack():
    g = min_groups(0.95)
    assert group_coverage(g, 0.95) >= 0.90 > group_coverage(g - 1, 0.95) and g == 10


def test_the_closed_form_optimum_minimizes_the_law_on_the_budget():
    C = 5.76e23
    opt = optimal_allocation(EPOCH, C)

    def loss(log_n):
        N = np.exp(log_n)
        D = C / (6 * N)
        return EPOCH["E"] + EPOCH["A"] * N ** -EPOCH["alpha"] + EPOCH["B"] * D ** -EPOCH["beta"]

    num = minimize_scalar(
        loss, bounds=(np.log(1e6), np.log(1e14)), method="bounded", options={"xatol": 1e-10}
    )
    assert float(opt["N"]) == pytest.approx(np.exp(num.x), rel=1e-4)
    assert float(opt["N"] * opt["D"]) * 6 == pytest.approx(C)
    assert float(opt["loss"]) == pytest.approx(num.fun, rel=1e-9)
    flat = optimal_allocation({**EPOCH, "alpha": 0.0}, C)
    assert np.isnan(flat["N"])


def test_compute_optimal_intervals_are_the_formula_over_the_draws():
    rng = np.random.default_rng(1)
    names = list(EPOCH)
    draws = np.array([EPOCH[n] for n in names]) * (1 + 0.02 * rng.normal(size=(400, 5)))
    res = FitResult(
        law="chinchilla",
        params=dict(EPOCH),
        objective=0.0,
        n_points=100,
        n_groups=10,
        converged=True,
        draws=draws,
    )
    q = compute_optimal(res, 1e22)
    per_draw = [
        float(optimal_allocation(dict(zip(names, d, strict=True)), 1e22)["N"]) for d in draws
    ]
    assert q["N"].ci[0] == pytest.approx(np.percentile(per_draw, 2.5))
    assert q["N"].ci[1] == pytest.approx(np.percentile(per_draw, 97.5))
    assert float(q["N"].point) == pytest.approx(float(optimal_allocation(EPOCH, 1e22)["N"]))
    with pytest.raises(InputError, match="positive number of FLOPs"):
        compute_optimal(res, -1.0)
    other = FitResult(
        law="power_offset",
        params=dict(PO_TRUTH),
        objective=0.0,
        n_points=9,
        n_groups=9,
        converged=True,
    )
    with pytest.raises(InputError, match="Chinchilla-style law"):
        compute_optimal(other, 1e22)


def test_a_parameter_on_its_bound_has_no_standard_error():
    x = np.geomspace(0.25, 16, 12)
    y = 0.4 * x**-0.5 + 1e-9  # E ~ 0: the fit puts it on its bound 0
    res = fit("power_offset", x, y, objective="ls")
    rep = fit_report(res)
    assert any("E" in w and "bound" in w for w in res.warnings)
    assert rep.stderr["E"] is None and "E" not in rep.correlation
    assert rep.stderr["A"] is not None and rep.stderr["alpha"] is not None


def test_huber_errors_need_residuals_inside_the_threshold():
    x = np.tile(np.geomspace(0.25, 16, 6), 3)
    y = simulate("power_offset", PO_TRUTH, x, seed=3, noise=0.01)
    res = fit("power_offset", x, y, delta=1e-9)  # every residual in the linear part
    rep = fit_report(res)
    assert all(v is None for v in rep.stderr.values())
    assert any("within the Huber threshold 1e-09" in w for w in rep.warnings)
    ok = fit_report(fit("power_offset", x, y, delta=0.02))
    assert all(v is not None and v > 0 for v in ok.stderr.values()) and not ok.warnings
