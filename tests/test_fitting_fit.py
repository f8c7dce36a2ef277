"""Multi-start fits: fixed parameters, bounds and warnings, the summed-Huber pitfall, weights."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from scipy.optimize import minimize

from scalinglab.errors import InputError
from scalinglab.fitting import Objective, fit, make_problem
from scalinglab.fitting.optimize import batched_lm, polish
from scalinglab.fitting.synthetic import EPOCH_CHINCHILLA, chinchilla_design, simulate

PO_TRUTH = {"A": 0.418, "alpha": 0.495, "E": 3.111}


def _po_data(seed=0, noise=0.002, seeds=4):
    x = np.tile(np.geomspace(0.25, 16, 8), seeds)
    g = np.repeat(np.arange(seeds), 8)
    return x, simulate("power_offset", PO_TRUTH, x, seed=seed, noise=noise), g


@pytest.mark.slow
def test_fixed_parameter_is_held_and_others_refit():
    x, y, g = _po_data()
    free = fit("power_offset", x, y, groups=g)
    held = fit("power_offset", x, y, groups=g, fixed={"E": 3.0})
    assert held.params["E"] == 3.0 and held.fixed == ("E",)
    assert held.problem.F == 2
    # fixing E away from its optimum costs objective and moves A, alpha to compensate
    assert held.objective > free.objective
    assert abs(held.params["alpha"] - free.params["alpha"]) > 1e-3


def test_unknown_fixed_parameter_is_an_input_error():
    x, y, g = _po_data()
    with pytest.raises(InputError, match="no parameter 'R0'.*A, alpha, E"):
        fit("power_offset", x, y, fixed={"R0": 1.0})


def test_warns_when_a_parameter_ends_on_a_bound():
    x, y, g = _po_data()
    res = fit("power_offset", x, y, groups=g, bounds={"alpha": (0.0, 0.3)})
    assert res.params["alpha"] == pytest.approx(0.3)
    assert any("alpha" in w and "upper bound" in w for w in res.warnings)
    clean = fit("power_offset", x, y, groups=g)
    assert not any("bound" in w for w in clean.warnings)


def test_silu_limit_is_fitted_within_its_physical_range_not_pinned_to_the_data():
    D = np.geomspace(1, 200, 20)
    y = simulate(
        "silu_sparsity", {"alpha": 0.5, "c": 0.3, "A0": 0.4}, D, seed=0, noise=0.002, kind="abs"
    )
    res = fit("silu_sparsity", D, y)
    assert res.params["A0"] == pytest.approx(0.4, abs=0.005)  # above max(y) = 0.381 by the fit
    assert not res.warnings


def test_warns_when_the_optimizer_did_not_converge(monkeypatch):
    fitmod = importlib.import_module("scalinglab.fitting.multistart")
    x, y, g = _po_data()
    real = fitmod.polish

    def lazy_polish(problem, theta, **kw):
        out = real(problem, theta, maxiter=1, **kw)
        out.success = False
        out.message = "STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT"
        return out

    monkeypatch.setattr(fitmod, "polish", lazy_polish)
    res = fit("power_offset", x, y, groups=g, max_iter=2)
    assert res.converged is False
    assert any("did not converge" in w for w in res.warnings)


@pytest.mark.slow
def test_batched_optimizer_matches_scipy_on_every_start():
    x, y, g = _po_data()
    prob = make_problem("power_offset", x, y)
    starts = prob.law.starts(prob.data.x, prob.data.y, prob.data.groups, 1)
    r = batched_lm(prob, starts)
    for i in range(starts.shape[0]):
        ref = polish(prob, starts[i])
        assert r.f[i] <= ref.f * (1 + 1e-8) + 1e-15


def test_splitting_starts_over_processes_gives_identical_results():
    x, y, g = _po_data()
    one = fit("power_offset", x, y, groups=g)
    two = fit("power_offset", x, y, groups=g, n_jobs=2)
    assert one.params == two.params and one.objective == two.objective


def test_per_group_weights_change_the_fit_and_unknown_groups_error():
    x, y, g = _po_data(noise=0.02)
    base = fit("power_offset", x, y, groups=g)
    w = fit("power_offset", x, y, groups=g, weights={"0": 10.0, "1": 0.1})
    assert w.params != base.params
    same = fit("power_offset", x, y, groups=g, weights={"0": 1.0})
    assert same.params == pytest.approx(base.params, rel=1e-6)
    with pytest.raises(InputError, match="unknown group"):
        fit("power_offset", x, y, groups=g, weights={"nope": 2.0})


def test_explicit_starts_in_reported_units():
    x, y, g = _po_data()
    res = fit("power_offset", x, y, starts={"A": [0.5], "alpha": [0.4], "E": [3.0]})
    full = fit("power_offset", x, y)
    assert res.objective == pytest.approx(full.objective, rel=1e-8)


# ----------------------------------------------------------------------------- the pitfall
#: Grid starts (internal: e, a, b, alpha, beta) from which scipy's default L-BFGS-B
#: reaches the optimum on the summed objective.
PITFALL_STARTS = [[0.5, 5, 5, 0.5, 0], [1, 5, 5, 0.5, 0], [0.5, 0, 0, 0, 0], [-0.5, 10, 20, 0.5, 0]]


@pytest.mark.slow
def test_averaged_huber_stops_lbfgs_early_and_fits_worse_than_summed():
    """Besiroglu et al.'s diagnosis of Hoffmann et al.'s fit, on synthetic data.

    Averaging divides the gradient by n; L-BFGS-B's default gradient tolerance
    then ends the fit early. Same starts, same optimizer, same data: the summed
    objective reaches a much better fit and recovers the true exponents, the
    averaged one stops short.
    """
    N, D, _ = chinchilla_design(n_budgets=6, per_budget=20, seed=0)
    x = np.column_stack([N, D])
    y = simulate("chinchilla", EPOCH_CHINCHILLA, x, seed=1, noise=0.02)
    summed = make_problem("chinchilla", x, y)
    averaged = make_problem("chinchilla", x, y, objective=Objective("huber", average=True))

    def best_plain_fit(problem):
        best = None
        for s in PITFALL_STARTS:

            def fun(t, p=problem):
                f, g, _ = p.evaluate(t[None], need="grad")
                return float(f[0]), g[0]

            r = minimize(fun, np.array(s, float), jac=True, method="L-BFGS-B")  # defaults
            f_summed = float(summed.evaluate(r.x[None])[0][0])  # compare on one scale
            if best is None or f_summed < best[0]:
                best = (f_summed, summed.reported(r.x[None])[0], r.nit)
        return best

    f_s, p_s, it_s = best_plain_fit(summed)
    f_a, p_a, it_a = best_plain_fit(averaged)
    assert f_a > 1.3 * f_s
    assert it_a < it_s
    truth = np.array([EPOCH_CHINCHILLA[k] for k in ("E", "A", "B", "alpha", "beta")])
    err_s = np.abs(p_s[3:] - truth[3:]).max()
    err_a = np.abs(p_a[3:] - truth[3:]).max()
    assert err_s < 0.05 and err_a > 2 * err_s

    # The engine's optimizer is scale-invariant: averaging no longer changes the answer
    # (a constant factor does not move the minimizer). Starts: these four plus every
    # 50th point of Epoch's grid (the full grid is exercised elsewhere).
    grid = summed.law.starts(None, None, None, 1)
    starts = summed.reported(np.vstack([np.array(PITFALL_STARTS, float), grid[::50]]))
    engine_s = fit("chinchilla", x, y, starts=starts)
    engine_a = fit("chinchilla", x, y, starts=starts, objective=Objective("huber", average=True))
    assert engine_a.objective * len(y) == pytest.approx(engine_s.objective, rel=1e-6)
    assert engine_s.objective <= f_s * (1 + 1e-9)


def test_warns_when_a_parameter_ends_on_its_lower_bound():
    x = np.tile(np.geomspace(0.25, 16, 8), 3)
    y = simulate("power_offset", {"A": 2.0, "alpha": 0.5, "E": 0.0}, x, seed=0, noise=0.01)
    res = fit("power_offset", x, y)
    assert res.params["E"] == pytest.approx(0.0, abs=1e-9)
    assert any(w.startswith("parameter E = ") and "lower bound 0" in w for w in res.warnings)
