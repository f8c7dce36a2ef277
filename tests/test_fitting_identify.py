"""Identifiability of fitted parameters: on a bound, in bootstrap refits, zero-width intervals."""

from __future__ import annotations

import numpy as np
import pytest

import scalinglab.record as rec
from scalinglab.fitting import fit, get_law, identification, list_laws, param_estimate
from scalinglab.fitting.synthetic import simulate

TRUTH = {"A": 0.418, "alpha": 0.495, "E": 3.111}


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv(rec.RESULTS_ENV, str(tmp_path / "run" / "results.json"))
    rec.clear()
    yield
    rec.clear()


def _data(seeds=4):
    x = np.tile(np.geomspace(0.25, 16, 8), seeds)
    g = np.repeat(np.arange(seeds), 8)
    return x, simulate("power_offset", TRUTH, x, seed=0, noise=0.002), g


@pytest.fixture(scope="module")
def clean():
    x, y, g = _data()
    return fit("power_offset", x, y, groups=g, bootstrap=60, seed=0)


def test_a_well_fitted_parameter_is_identified(clean):
    for p in clean.names:
        ident = identification(clean, p)
        assert ident.identified, ident.reason
        assert ident.share_at_bound == 0.0 and ident.side is None


def test_point_fit_on_a_bound_is_not_identified():
    x, y, g = _data()
    res = fit("power_offset", x, y, groups=g, bounds={"alpha": (0.0, 0.3)}, bootstrap=30, seed=0)
    ident = identification(res, "alpha")
    assert not ident.identified
    assert ident.side == "upper" and ident.bound == pytest.approx(0.3)
    assert "upper bound 0.3 in the point fit" in ident.reason
    assert ident.share_at_bound > 0.9  # every refit hits it too


def test_near_a_bound_counts_within_tolerance(clean):
    res = _copy(clean)
    lo, hi = 0.0, 10.0  # alpha's bounds in the law
    res.params["alpha"] = lo + 0.5e-3 * (hi - lo)  # within rtol=1e-3 of the range
    assert identification(res, "alpha").side == "lower"
    res.params["alpha"] = lo + 2e-3 * (hi - lo)
    assert identification(res, "alpha").identified


def test_log_scale_parameter_collapsed_to_zero_is_at_its_bound(clean):
    res = _copy(clean)
    res.params["A"] = 1e-20
    ident = identification(res, "A")
    assert not ident.identified and ident.side == "lower" and ident.bound == 0.0


@pytest.mark.parametrize(
    ("share", "identified"), [(0.1, True), (0.19, True), (0.2, False), (0.6, False)]
)
def test_share_of_bootstrap_refits_at_a_bound(clean, share, identified):
    res = _copy(clean)
    j = res.names.index("alpha")
    n = res.draws.shape[0]
    k = int(round(share * n))
    res.draws[:k, j] = 0.0
    res.draws[-1, j] = np.nan  # failed refits do not count
    ident = identification(res, "alpha")
    assert ident.identified is identified
    assert ident.share_at_bound == pytest.approx(k / (n - 1))
    if not identified:
        assert ident.side == "lower" and "% of bootstrap refits" in ident.reason


def test_zero_width_interval_is_not_identified(clean):
    res = _copy(clean)
    v = res.params["E"]
    res.ci["E"] = (v, v)
    ident = identification(res, "E")
    assert not ident.identified and "zero-width" in ident.reason


def test_fixed_parameter_is_not_identified():
    x, y, g = _data()
    res = fit("power_offset", x, y, groups=g, fixed={"E": 3.0})
    assert not identification(res, "E").identified
    with pytest.raises(KeyError, match="no parameter 'R0'"):
        identification(res, "R0")


def record_param(name, res, param, *, headline=False, depends=()):
    return rec.record(name, param_estimate(res, param, depends=depends), headline=headline)


def test_param_estimate_carries_identification_and_record_drops_the_headline():
    x, y, g = _data()
    res = fit("power_offset", x, y, groups=g, bounds={"alpha": (0.0, 0.3)}, bootstrap=30, seed=0)
    assert res.ci["alpha"] == (0.3, 0.3)  # every refit on the bound
    # no [b, b] interval reaches a report: a parameter pinned by its bound has none
    f = record_param("po/alpha", res, "alpha", headline=True)
    assert not f.identified and not f.headline and f.side == "upper"
    assert f.ci is None and f.point == 0.3 and "pinned by its bound" in f.note
    g2 = record_param("po/E", res, "E", headline=True)
    assert g2.identified and g2.headline
    res.derive("A_plus_E", lambda p: p["A"] + p["E"])
    d = record_param("po/A_plus_E", res, "A_plus_E")
    assert d.identified
    d2 = record_param("po/alpha_dep", res, "A_plus_E", depends=("alpha",))
    assert not d2.identified and "rests on" in d2.note
    e = record_param("po/E_dep", res, "E", depends=("alpha",))  # a parameter resting on one
    assert not e.identified and "rests on alpha" in e.note
    v = rec.claim("c", paper="P", statement="s", finding="po/alpha", expect="less", value=1.0)
    assert v.verdict == "not identified"


def test_no_builtin_law_takes_a_hard_bound_from_the_data():
    for name in list_laws():
        for p in get_law(name).params:
            assert not any(callable(b) for b in p.bounds), (name, p.name)


def _copy(res):
    import copy

    out = copy.copy(res)
    out.params = dict(res.params)
    out.draws = None if res.draws is None else res.draws.copy()
    out.ci = None if res.ci is None else dict(res.ci)
    return out
