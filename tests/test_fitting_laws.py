"""Law registry, analytic Jacobians, and parameter recovery for every shipped law."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.fitting import Law, Param, fit, get_law, list_laws, register_law
from scalinglab.fitting.synthetic import EPOCH_CHINCHILLA, chinchilla_design, simulate

SHIPPED = {
    "chinchilla": ["E", "A", "B", "alpha", "beta"],
    "scalerl": ["A", "B", "C_mid", "R0"],
    "power_offset": ["A", "alpha", "E"],
    "loglinear_kn": ["Kmax", "N0", "E0"],
    "exp_saturation": ["R0", "Rmax", "lam"],
    "logistic_progress": ["R0", "Rmax", "kappa", "t0"],
    "relu_sparsity": ["alpha", "b", "c", "A0"],
    "silu_sparsity": ["alpha", "c", "A0"],
}


def test_registry_has_every_law_with_the_study_parameter_names():
    laws = list_laws()
    for name, params in SHIPPED.items():
        assert [p.name for p in laws[name].params] == params
    assert get_law("chinchilla").x_names == ("N", "D")
    with pytest.raises(KeyError, match="unknown law"):
        get_law("nope")


def test_chinchilla_default_grid_is_epochs_4500_starts():
    law = get_law("chinchilla")
    grid = law.starts(np.ones((1, 2)), np.ones(1), np.zeros(1, int), 1)
    assert grid.shape == (4500, 5)
    names = [p.iname for p in law.params]
    assert sorted(set(grid[:, names.index("alpha")])) == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert sorted(set(grid[:, names.index("e")])) == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert sorted(set(grid[:, names.index("a")])) == [0.0, 5.0, 10.0, 15.0, 20.0, 25.0]


def _random_theta(law: Law, rng: np.random.Generator, S: int, G: int) -> np.ndarray:
    cols = []
    for p in law.params:
        width = G if p.per_group else 1
        cols.append(rng.uniform(0.2, 1.5, (S, width)))
    return np.concatenate(cols, axis=1)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_analytic_jacobian_matches_finite_differences(name):
    law = get_law(name)
    rng = np.random.default_rng(0)
    n, G = 12, 3
    x = np.column_stack([rng.uniform(1.5, 40.0, n) for _ in law.x_names])
    groups = np.arange(n) % G
    theta = _random_theta(law, rng, 4, G)
    value, parts = law.jac(**law.call_kwargs(x, theta, groups, G))
    base = law.fn(**law.call_kwargs(x, theta, groups, G))
    np.testing.assert_allclose(value, base, rtol=1e-12, atol=1e-12)
    col = 0
    for p in law.params:
        width = G if p.per_group else 1
        for c in range(width):
            h = 1e-6
            tp, tm = theta.copy(), theta.copy()
            tp[:, col + c] += h
            tm[:, col + c] -= h
            fd = (
                law.fn(**law.call_kwargs(x, tp, groups, G))
                - law.fn(**law.call_kwargs(x, tm, groups, G))
            ) / (2 * h)
            an = np.broadcast_to(parts[p.iname], fd.shape + ((G,) if p.per_group else ()))
            an = an[..., c] if p.per_group else an
            np.testing.assert_allclose(an, fd, rtol=1e-5, atol=1e-7, err_msg=f"{name}.{p.iname}")
        col += width


def _assert_recovered(res, truth, rtol):
    for k, v in truth.items():
        got = res.params[k]
        assert abs(got - v) <= rtol[k] * abs(v), f"{k}: fitted {got}, true {v}"


def _assert_in_bounds(res):
    prob = res.problem
    th = res.theta[prob.free]
    assert np.all(th >= prob.lo - 1e-12) and np.all(th <= prob.hi + 1e-12)


@pytest.mark.slow
def test_recover_chinchilla_with_epochs_procedure():
    N, D, budget = chinchilla_design(n_budgets=6, per_budget=20, seed=3)
    x = np.column_stack([N, D])
    y = simulate("chinchilla", EPOCH_CHINCHILLA, x, seed=4, noise=0.003)
    res = fit("chinchilla", x, y, groups=budget)
    assert res.converged and res.warnings == []
    assert res.objective_desc.startswith("huber(delta=0.001")
    _assert_recovered(
        res, EPOCH_CHINCHILLA, {"E": 0.01, "A": 0.3, "B": 0.3, "alpha": 0.05, "beta": 0.03}
    )


CASES = {
    "power_offset": dict(
        truth={"A": 0.418, "alpha": 0.495, "E": 3.111},
        x=lambda: np.tile(np.geomspace(0.25, 16, 12), 3),
        noise=0.001,
        kind="log",
        rtol={"A": 0.02, "alpha": 0.02, "E": 0.002},
    ),
    "scalerl": dict(
        truth={"A": 0.61, "B": 1.92, "C_mid": 2542.0, "R0": 0.1},
        x=lambda: np.geomspace(100, 1.5e4, 40),
        noise=0.002,
        kind="abs",
        rtol={"A": 0.01, "B": 0.02, "C_mid": 0.05, "R0": 0.05},
    ),
    "exp_saturation": dict(
        truth={"R0": 0.1, "Rmax": 0.7, "lam": 0.02},
        x=lambda: np.linspace(0, 300, 40),
        noise=0.005,
        kind="abs",
        rtol={"R0": 0.1, "Rmax": 0.01, "lam": 0.01},
    ),
    "logistic_progress": dict(
        truth={"R0": 0.05, "Rmax": 0.8, "kappa": 0.05, "t0": 100.0},
        x=lambda: np.linspace(0, 300, 40),
        noise=0.005,
        kind="abs",
        rtol={"R0": 0.1, "Rmax": 0.01, "kappa": 0.02, "t0": 0.01},
    ),
    "relu_sparsity": dict(
        truth={"alpha": 0.4, "b": -1.0, "c": 0.5, "A0": 0.07},
        x=lambda: np.geomspace(1, 200, 30),
        noise=0.0005,
        kind="abs",
        rtol={"alpha": 0.03, "b": 0.03, "c": 0.02, "A0": 0.05},
    ),
    "silu_sparsity": dict(
        truth={"alpha": 0.5, "c": 0.3, "A0": 0.4},
        x=lambda: np.geomspace(1, 200, 30),
        noise=0.001,
        kind="abs",
        rtol={"alpha": 0.04, "c": 0.03, "A0": 0.02},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_recover_single_input_laws(name):
    case = CASES[name]
    x = case["x"]()
    y = simulate(name, case["truth"], x, seed=11, noise=case["noise"], kind=case["kind"])
    res = fit(name, x, y)
    assert res.converged, res.warnings
    assert res.warnings == []
    _assert_in_bounds(res)
    _assert_recovered(res, case["truth"], case["rtol"])


def test_recover_scalerl_with_r0_fixed_as_the_study_does():
    truth = {"A": 0.61, "B": 1.92, "C_mid": 2542.0, "R0": 0.1}
    C = np.geomspace(100, 1.5e4, 30)
    y = simulate("scalerl", truth, C, seed=5, noise=0.003, kind="abs")
    res = fit("scalerl", C, y, fixed={"R0": 0.1})
    assert res.params["R0"] == 0.1 and res.fixed == ("R0",)
    _assert_recovered(
        res, {k: truth[k] for k in ("A", "B", "C_mid")}, {"A": 0.03, "B": 0.1, "C_mid": 0.1}
    )


def test_recover_loglinear_kn_with_one_intercept_per_model_size():
    sizes = np.array([5e8, 1.5e9, 3e9, 7e9, 1.4e10])
    truth = {"Kmax": 0.15, "N0": 1e9, "E0": np.array([0.6, 1.0, 1.4, 1.7, 1.9])}
    N = np.repeat(sizes, 12)
    X = np.tile(np.geomspace(1e16, 1e18, 12), sizes.size)
    g = np.repeat(np.arange(sizes.size), 12)
    y = simulate("loglinear_kn", truth, np.column_stack([N, X]), seed=2, noise=0.003, groups=g)
    res = fit("loglinear_kn", np.column_stack([N, X]), y)
    labels = [f"{s:g}" for s in sizes]
    assert res.names == ["Kmax", "N0", *[f"E0[{lab}]" for lab in labels]]
    assert res.n_groups == 5
    _assert_recovered(res, {"Kmax": 0.15, "N0": 1e9}, {"Kmax": 0.05, "N0": 0.25})
    e0 = np.array([res.params[f"E0[{lab}]"] for lab in labels])
    np.testing.assert_allclose(e0, truth["E0"], atol=0.05)


def test_a_user_law_in_a_few_lines_fits_without_touching_the_engine():
    law = register_law(
        Law(
            name="test_user_power",
            formula="y = A x^(-alpha)",
            x_names=("x",),
            params=(Param("A", bounds=(0, None), transform="log"), Param("alpha", bounds=(0, 5))),
            fn=lambda x, log_A, alpha: np.exp(log_A - alpha * np.log(x)),
            init={"log_A": [0.0, 3.0], "alpha": [0.2, 1.0]},
            x_positive=(True,),
        ),
        replace=True,
    )
    x = np.geomspace(1, 1000, 25)
    y = simulate(law, {"A": 5.0, "alpha": 0.7}, x, seed=0, noise=0.01)
    res = fit("test_user_power", x, y, bootstrap=50, seed=1)  # finite-difference Jacobian
    assert abs(res.params["alpha"] - 0.7) < 0.02
    assert abs(res.params["A"] - 5.0) < 0.3
    assert res.ci["alpha"][0] < res.params["alpha"] < res.ci["alpha"][1]


def test_a_log_parameter_past_the_float_range_reads_inf_without_a_warning():
    import warnings

    from scalinglab.fitting.laws import Param

    p = Param("A", transform="log")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would print into a report
        out = p.to_reported(np.array([0.0, 1000.0]))
    assert out[0] == 1.0 and np.isinf(out[1])
