"""Verdicts a statistician would sign (issue 28): scope and regime, falsifiable rules,
zero-width intervals refused, Monte Carlo error of bootstrap bounds, Holm over a claim's
findings, and user-data runs without paper attributions."""

from __future__ import annotations

import json
import math
import textwrap

import numpy as np
import pytest

import scalinglab.record as rec
from scalinglab.claims import Claim, decide
from scalinglab.estimate import Estimate, quantile_mc_se
from scalinglab.finding import ZeroWidthInterval
from scalinglab.ledger import ledger_html, summary_scoped_text
from scalinglab.verdict_checks import UnfalsifiableRule, contradiction_p
from scalinglab.verdict_scope import ScopeError, summary_by_scope

P = "Somebody et al. 2025"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv(rec.RESULTS_ENV, str(tmp_path / "run" / "results.json"))
    rec.clear()
    yield
    rec.clear()


def _finding(name, point, lo, hi, **kw):
    return rec.record(name, Estimate(point, lo, hi, level=0.95, **kw)).to_json()


def _c(**kw):
    base = {
        "id": "c",
        "paper": P,
        "statement": "s",
        "findings": ("x",),
        "expect": "greater",
        "value": 0.0,
    }
    return Claim(**{**base, **kw})


# --- scope -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ci", "scope", "regime", "verdict"),
    [
        ((-0.5, -0.1), "paper", "paper data", "contradicts"),
        ((-0.5, -0.1), "paper", "paper regime: Atari 100k", "contradicts"),
        ((-0.5, -0.1), "paper", "outside: our 25k-parameter models", "differs at our scale"),
        ((0.1, 0.5), "paper", "outside: our 25k-parameter models", "holds at our scale"),
        ((-0.5, -0.1), "benchmark", "outside", "differs at our scale"),
        ((-0.5, -0.1), "paper", "proxy: a public GEMM table", "untested: proxy"),
        ((0.1, 0.5), "paper", "proxy", "untested: proxy"),
        ((-0.5, 0.5), "paper", "proxy", "untested: proxy"),  # undecided on it: untested too
        ((-0.5, 0.5), "paper", "outside", "inconclusive"),
        ((-0.5, -0.1), "project", "outside", "contradicts"),  # our own check: no paper regime
    ],
)
def test_a_papers_claim_outside_its_regime_or_on_a_proxy_never_contradicts(
    ci, scope, regime, verdict
):
    f = _finding("x", sum(ci) / 2, *ci)
    v = decide(_c(scope=scope, regime=regime), {"x": f})
    assert v.verdict == verdict
    assert v.to_json()["scope"] == scope and v.to_json()["regime"] == regime


def test_evidence_rows_of_a_claim_outside_its_regime_never_read_contradicts():
    # one size not identified, the other entirely outside the band: the claim (which
    # must hold at every size) and that size's row read differs at our scale, never
    # contradicts, and the unidentified size's row stays not identified
    pinned = rec.record(
        "s", Estimate(1.0, 1.0, 1.0, level=0.95, identified=False, bound=1.0, side="upper")
    ).to_json()
    away = _finding("m", 0.56, 0.49, 0.65)
    claim = _c(
        findings=("s", "m"),
        expect="between",
        value=(0.38, 0.41),
        scope="paper",
        regime="outside: our small models",
    )
    v = decide(claim, {"s": pinned, "m": away})
    assert v.verdict == "differs at our scale"
    rows = {e["name"]: e["verdict"] for e in v.to_json()["evidence"]}
    assert rows["m"] == "differs at our scale" and "contradicts" not in rows.values()
    assert rows["s"] == "not identified"


def test_unknown_scope_or_regime_is_refused():
    with pytest.raises(ScopeError, match="scope must be one of"):
        _c(scope="paper's")
    with pytest.raises(ScopeError, match="regime must start with"):
        _c(scope="paper", regime="small models")
    with pytest.raises(ScopeError, match="own check cannot run on a paper's data"):
        _c(scope="project", regime="paper data")


def test_ledger_groups_by_scope_and_counts_per_scope_in_results_json(tmp_path):
    _finding("x", 1.0, 0.5, 1.5)
    _finding("y", -1.0, -1.5, -0.5)
    path = tmp_path / "claims.toml"
    path.write_text(
        textwrap.dedent("""\
        [[claim]]
        id = "A"
        source = "Paper"
        statement = "x is positive"
        findings = "x"
        expect = "greater"
        value = 0.0
        scope = "paper"
        regime = "outside: small models"

        [[claim]]
        id = "B"
        source = "Paper"
        statement = "y is positive"
        findings = "y"
        expect = "greater"
        value = 0.0
        scope = "paper"
        regime = "paper regime"

        [[claim]]
        id = "C"
        source = "us"
        statement = "x beats y"
        findings = "x"
        expect = "greater"
        value = 0.1
        scope = "project"
        regime = "outside"
        user_data = true
    """)
    )
    rec.claims_from(path)
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert saved["claims_by_scope"] == {
        "paper": {"holds at our scale": 1, "contradicts": 1},
        "project": {"reproduces": 1},
    }
    html = ledger_html(saved["claims"])
    assert (
        html.index("Papers&#x27; claims")
        < html.index(">A<")
        < html.index("This project&#x27;s own checks")
        < html.index(">C<")
    )
    assert (
        "papers' claims: 1 contradicts, 1 holds at our scale"
        in summary_scoped_text(saved["claims"]).lower()
    )
    # on a user's data only the user_data claim is kept, without a paper attribution
    rec.clear()
    _finding("x", 1.0, 0.5, 1.5)
    verdicts = rec.claims_from(path, data="user")
    assert [v.claim.id for v in verdicts] == ["C"]
    assert verdicts[0].claim.paper == "this project's check on your data"
    assert verdicts[0].claim.regime == "user data" and P not in verdicts[0].claim.paper
    assert summary_by_scope([v.to_json() for v in verdicts]) == {"project": {"reproduces": 1}}


# --- falsifiable rules -------------------------------------------------------------------


def test_a_rule_no_value_of_its_finding_could_fail_is_refused():
    # "gain > 0" on a gain that is >= 0 by construction: only exactly 0 could contradict it
    with pytest.raises(UnfalsifiableRule, match="cannot fail"):
        _c(support=(0.0, math.inf))
    # the same finding with a minimum meaningful effect can fail
    _c(value=0.02, support=(0.0, math.inf))
    # a share in [0, 1] "between 0 and 1" cannot fail; "between 0.2 and 1" can
    with pytest.raises(UnfalsifiableRule):
        _c(expect="between", value=(0.0, 1.0), support=(0.0, 1.0))
    _c(expect="between", value=(0.2, 1.0), support=(0.0, 1.0))
    # an equivalence band wider than the support cannot fail either
    with pytest.raises(UnfalsifiableRule):
        _c(expect="equal", value=0.5, tolerance=0.6, support=(0.0, 1.0))


def test_support_declared_on_the_finding_is_checked_at_ledger_time():
    # slope of a monotone non-decreasing quantity (pass@k coverage): support [0, inf)
    rec.record("slope", Estimate(0.01, 0.005, 0.02, level=0.95), support=(0.0, math.inf))
    with pytest.raises(UnfalsifiableRule, match=r"claim\('LLM-1'\) on slope"):
        rec.claim("LLM-1", paper=P, statement="s", finding="slope", expect="greater", value=0)
    v = rec.claim("LLM-1", paper=P, statement="s", finding="slope", expect="greater", value=0.03)
    assert v.verdict == "contradicts"  # a meaningful-effect rule the data can and do fail
    saved = rec.findings()[0].to_json()
    assert saved["support"] == [0.0, None]  # strict JSON: inf as null (unbounded)
    assert decide(v.claim, {"slope": saved}).verdict == "contradicts"


def test_claim_states_what_would_contradict_it():
    assert _c(value=0.02).contradicted_by == "an interval at or below 0.02"
    assert "outside [-0.02, 0.02]" in _c(expect="equal", tolerance=0.02).contradicted_by


# --- zero-width intervals ----------------------------------------------------------------


def test_record_refuses_a_zero_width_interval_unless_the_caller_says_why():
    with pytest.raises(
        ZeroWidthInterval, match=r"record\('share'\).*zero width.*Wilson.*no_interval"
    ):
        rec.record("share", Estimate(0.0, 0.0, 0.0, level=0.95, method="bootstrap"))
    with pytest.raises(ZeroWidthInterval, match=r"record\('c'\)"):
        rec.record("c", 247.4, ci=(247.4, 247.4), level=0.95)  # plain numbers too
    assert rec.findings() == []  # nothing half-recorded
    # a stated reason: the interval is dropped, the number kept with the reason
    f = rec.record(
        "share",
        Estimate(0.0, 0.0, 0.0, level=0.95, method="bootstrap"),
        headline=True,
        no_interval="every run gave 0",
    )
    assert f.ci is None and not f.headline
    assert "refused: zero width" in f.note and f.note.endswith("every run gave 0")
    assert "headline" not in f.note  # the demotion is not a reason the ledger quotes
    v = rec.claim("c", paper=P, statement="s", finding="share", expect="less", value=0.1)
    assert v.verdict == "inconclusive" and "no interval" in v.reason
    saved = json.loads(open(rec.os.environ[rec.RESULTS_ENV]).read())["findings"][0]
    assert saved["ci"] is None and "zero width" in saved["note"]
    # the reason may travel with the Estimate; it is unused where the interval has width
    g = rec.record("g", Estimate(4.0, 4.0, 4.0, level=0.95, no_interval="on the grid"))
    assert g.ci is None and "on the grid" in g.note
    h = rec.record("h", Estimate(4.0, 2.0, 8.0, level=0.95, no_interval="on the grid"))
    assert h.ci == (2.0, 8.0) and not h.note
    # a not-identified estimate is pinned by its bound: that is its reason
    b = rec.record("b", Estimate(1.0, 1.0, 1.0, level=0.95, identified=False, note="c at 1"))
    assert b.ci is None and "pinned by its bound" in b.note
    rec.record("count", 3.0)  # exactly determined: no interval, no error
    rec.record("share", Estimate(0.0, 0.0, 0.26, level=0.95, method="Wilson score over 12"))
    assert rec.findings()[0].ci == (0.0, 0.26)
    with pytest.raises(ValueError, match="needs its reason"):
        Estimate(1.0, no_interval=" ")


# --- room left to a bound ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("expect", "value", "room", "ci", "verdict"),
    [
        ("greater", 0.005, 0.002, (0.0005, 0.0015), "not identified"),  # saturated
        ("greater", 0.005, 0.002, (0.01, 0.02), "not identified"),  # whatever the interval
        ("greater", 0.005, 0.05, (0.0005, 0.0015), "contradicts"),  # room: a real miss
        ("greater", 0.005, 0.05, (0.01, 0.02), "reproduces"),
        ("greater", 0.005, None, (0.0005, 0.0015), "contradicts"),  # unbounded
        ("less", -0.1, 0.05, (-0.04, -0.02), "not identified"),  # a fall of 0.1 from 0.05
        ("less", -0.1, 0.5, (-0.3, -0.2), "reproduces"),
        ("greater", 0.0, 0.0, (0.0, 0.01), "inconclusive"),  # no minimum effect: no guard
        # an equivalence band (half-width 0.02): a finding pinned within it by its bound
        # (room 0.001 from the claim's value) cannot leave it, so it cannot test the claim
        ("equal", 0.0, 0.001, (-0.01, 0.01), "not identified"),
        ("equal", 0.0, 0.05, (-0.01, 0.01), "reproduces"),  # room to leave the band
        ("equal", 0.0, 0.05, (0.03, 0.04), "contradicts"),
        ("equal", 0.0, None, (-0.01, 0.01), "reproduces"),  # unbounded
    ],
)
def test_a_bounded_finding_without_room_for_the_minimum_effect_is_not_identified(
    expect, value, room, ci, verdict
):
    mid = (ci[0] + ci[1]) / 2
    f = rec.record("x", Estimate(mid, *ci, level=0.95, room=room)).to_json()
    kw = {"tolerance": 0.02} if expect == "equal" else {}
    v = decide(_c(expect=expect, value=value, **kw), {"x": f})
    assert v.verdict == verdict, v.reason
    if verdict == "not identified":
        if expect == "equal":
            assert f"saturated: room {room:.3g} < the band's half-width 0.02" in v.reason
        else:
            assert f"saturated: room {room:.3g} < minimum effect {abs(value):g}" in v.reason
        assert v.evidence[0]["room"] == room


def test_room_must_be_a_distance_to_the_bound():
    from scalinglab.verdict_checks import minimum_effect, saturation

    with pytest.raises(ValueError, match="room must be >= 0"):
        Estimate(0.1, room=-0.01)
    with pytest.raises(ValueError, match="room"):
        rec.record("r", 0.1, room=-1.0)
    with pytest.raises(TypeError, match="contradicts"):
        rec.record("r", Estimate(0.1, room=0.2), room=0.3)
    assert rec.record("r", 0.1, room=0.2).to_json()["room"] == 0.2
    assert minimum_effect("greater", (0.02, math.inf)) == 0.02
    assert minimum_effect("less", (-math.inf, -0.3)) == 0.3
    assert minimum_effect("less", (-math.inf, 0.3)) is None
    assert saturation("greater", (0.02, math.inf), 0.02) is None  # exactly enough room


# --- Monte Carlo error -------------------------------------------------------------------


def test_quantile_mc_se_matches_the_spread_of_bounds_over_resampling_seeds():
    rng = np.random.default_rng(0)
    data = rng.normal(size=20)
    ends = []
    for s in range(200):
        r = np.random.default_rng(s + 1)
        draws = data[r.integers(0, 20, size=(500, 20))].mean(axis=1)
        ends.append(np.quantile(draws, 0.025))
    draws = data[rng.integers(0, 20, size=(500, 20))].mean(axis=1)
    est = quantile_mc_se(draws, 0.025)
    assert 0.6 < est / np.std(ends) < 1.6  # the right size (its own noise is ~20% here)
    e = Estimate.from_draws(0.0, draws, level=0.95)
    assert e.mc_se is not None and e.mc_se[0] == pytest.approx(est)


def test_a_bound_within_two_mc_errors_of_its_threshold_is_inconclusive_monte_carlo():
    near = _finding("x", 0.3, 0.01, 0.6, mc_se=(0.02, 0.02))  # lo 0.01 > 0, by 0.5 SE
    v = decide(_c(), {"x": near})
    assert v.verdict == "inconclusive (Monte Carlo)"
    assert "Monte Carlo standard errors" in v.reason
    far = _finding("x", 0.3, 0.1, 0.6, mc_se=(0.02, 0.02))  # 5 SE away
    assert decide(_c(), {"x": far}).verdict == "reproduces"
    # contradiction decided by the upper bound
    v = decide(_c(), {"x": _finding("x", -0.3, -0.6, -0.03, mc_se=(0.02, 0.02))})
    assert v.verdict == "inconclusive (Monte Carlo)"
    assert decide(_c(), {"x": _finding("x", -0.3, -0.6, -0.03)}).verdict == "contradicts"


def test_an_undecided_bound_within_two_mc_errors_of_its_threshold_is_inconclusive_monte_carlo():
    # IE-1 on Atari 200M: the lower end sat on the threshold (0.05) under one seed and
    # 0.01 above it under another, with a Monte Carlo error of 0.01: both must read alike
    on = _finding("x", 0.3, 0.05, 0.84, mc_se=(0.01, 0.01))
    claim = _c(value=0.05)
    v = decide(claim, {"x": on})
    assert v.verdict == "inconclusive (Monte Carlo)"
    assert "admits both sides" in v.reason and "could decide it" in v.reason
    above = _finding("x", 0.3, 0.06, 0.84, mc_se=(0.01, 0.01))
    assert decide(claim, {"x": above}).verdict == "inconclusive (Monte Carlo)"
    # an upper end just above the threshold could contradict under another seed
    v = decide(claim, {"x": _finding("x", 0.0, -0.3, 0.06, mc_se=(0.01, 0.01))})
    assert v.verdict == "inconclusive (Monte Carlo)" and "upper bound" in v.reason
    # far from both thresholds (5 SE), or without Monte Carlo errors: plainly inconclusive
    assert decide(claim, {"x": _finding("x", 0.1, -0.2, 0.6, mc_se=(0.02, 0.02))}).verdict == (
        "inconclusive"
    )
    assert decide(claim, {"x": _finding("x", 0.3, 0.05, 0.84)}).verdict == "inconclusive"
    # a band: either end near either edge
    band = _c(expect="equal", value=1.0, tolerance=0.1)
    v = decide(band, {"x": _finding("x", 1.0, 0.95, 1.12, mc_se=(0.02, 0.02))})
    assert v.verdict == "inconclusive (Monte Carlo)"
    assert decide(band, {"x": _finding("x", 1.0, 0.7, 1.3, mc_se=(0.02, 0.02))}).verdict == (
        "inconclusive"
    )


def test_the_bounds_that_would_decide_an_undecided_verdict_are_both_sides_thresholds():
    from scalinglab.verdict_checks import deciding_bounds

    ci = (-0.1, 0.4)
    assert deciding_bounds("greater", (0.0, math.inf), ci, "inconclusive") == [(0, 0.0), (1, 0.0)]
    assert deciding_bounds("less", (-math.inf, 0.0), ci, "inconclusive") == [(1, 0.0), (0, 0.0)]
    # a band: inside needs both ends in, outside either end past the far edge
    band = deciding_bounds("equal", (0.9, 1.1), (0.95, 1.2), "inconclusive")
    assert band == [(0, 0.9), (1, 1.1), (1, 0.9), (0, 1.1)]
    assert deciding_bounds("greater", (0.0, math.inf), ci, "not identified") == []


def test_a_claim_kept_undecided_by_a_plain_finding_is_plainly_inconclusive_whatever_the_other():
    # one finding's lower end sits within Monte Carlo error of the threshold (another seed
    # could make it reproduce), the other finding admits both sides by far: the claim needs
    # every finding on its side, so no resampling seed can decide it, and the label says so
    claim = _c(findings=("x", "y"))
    near = _finding("x", 0.3, 0.01, 0.6, mc_se=(0.02, 0.02))
    plain = _finding("y", 0.1, -0.5, 0.7, mc_se=(0.02, 0.02))
    v = decide(claim, {"x": near, "y": plain})
    assert v.verdict == "inconclusive"
    assert "Monte Carlo" in v.reason  # the near finding is still named with its reason
    # with the other finding on the claim's side instead, a seed could decide it
    on_side = _finding("y", 0.5, 0.3, 0.7, mc_se=(0.02, 0.02))
    assert decide(claim, {"x": near, "y": on_side}).verdict == "inconclusive (Monte Carlo)"


def test_what_another_resampling_seed_could_decide_a_finding_to_be():
    from scalinglab.verdict_checks import reachable

    g = (0.0, math.inf)
    assert reachable("greater", g, (0.01, 0.6), (0.02, 0.02)) == {"reproduces"}
    assert reachable("greater", g, (-0.03, 0.6), (0.02, 0.02)) == {"reproduces"}
    assert reachable("greater", g, (-0.3, 0.03), (0.02, 0.02)) == {"contradicts"}
    assert reachable("greater", g, (-0.3, 0.6), (0.02, 0.02)) == set()
    assert reachable("greater", g, (-0.03, 0.6), None) == set()  # no MC error: ends stay
    band = (0.38, 0.41)
    # the lower end on the upper edge: it could exclude the band, never lie inside it
    assert reachable("equal", band, (0.4098, 0.4268), (0.0005, 0.0005)) == {"contradicts"}
    assert reachable("equal", band, (0.392, 0.4102), (0.0007, 0.0007)) == {"reproduces"}


def test_one_inside_outside_rule_serves_the_verdict_and_its_monte_carlo_reach():
    from scalinglab.verdict_checks import shrunk, sides

    g, lt, band = (0.05, math.inf), (-math.inf, 0.0), (0.38, 0.41)
    assert sides("greater", g, 0.0575, 0.84) == (True, False)
    assert sides("greater", g, 0.05, 0.84) == (False, False)  # an end on the threshold
    assert sides("greater", g, 0.0, 0.05) == (False, True)
    assert sides("less", lt, -0.2, -0.01) == (True, False)
    assert sides("less", lt, 0.0, 0.3) == (False, True)
    assert sides("equal", band, 0.38, 0.41) == (True, False)
    assert sides("equal", band, 0.411, 0.5) == (False, True)
    assert sides("equal", band, 0.3, 0.39) == (False, False)
    # an end without a Monte Carlo error stays put; the others move inwards
    assert shrunk((0.0575, 0.84), (0.0088, None)) == pytest.approx((0.0751, 0.84))
    assert shrunk((0.0575, 0.84), None) == (0.0575, 0.84)
    # the claim's verdict uses the same rule: an end on the threshold decides nothing
    claim = Claim(id="c", paper="p", statement="s", findings=("x",), expect="greater", value=0.05)
    f = {"x": {"name": "x", "point": 0.3, "ci": [0.05, 0.84], "level": 0.95}}
    assert decide(claim, f).verdict == "inconclusive"


def test_a_claim_no_seed_could_decide_is_plainly_inconclusive_after_holm():
    # sparsity's silu-limit on the paper's curves: one size's lower end sits on the band's
    # upper edge (another seed could exclude the band there, but one exclusion among five
    # sizes does not survive Holm, and that size can never lie inside the band); another
    # size's upper end sits on the edge from inside; the rest reproduce. No seed decides it
    claim = _c(expect="equal", value=0.395, tolerance=0.015, findings=tuple("abcde"))
    fs = {
        "a": _finding("a", 0.4177, 0.4098, 0.4268, mc_se=(0.0005, 0.0005)),
        "b": _finding("b", 0.395, 0.385, 0.405, mc_se=(0.0005, 0.0005)),
        "c": _finding("c", 0.395, 0.385, 0.405, mc_se=(0.0005, 0.0005)),
        "d": _finding("d", 0.395, 0.385, 0.405, mc_se=(0.0005, 0.0005)),
        "e": _finding("e", 0.3991, 0.392, 0.4102, mc_se=(0.0007, 0.0007)),
    }
    v = decide(claim, fs)
    assert v.verdict == "inconclusive", v.reason
    assert "Monte Carlo" in v.reason  # the near ends are still named
    # with one finding alone, the same near end could decide it: Monte Carlo
    alone = _c(expect="equal", value=0.395, tolerance=0.015, findings=("a",))
    assert decide(alone, {"a": fs["a"]}).verdict == "inconclusive (Monte Carlo)"
    # and if "a" could lie inside the band too, every size could reproduce: Monte Carlo
    fs["a"] = _finding("a", 0.405, 0.3995, 0.4104, mc_se=(0.0005, 0.0005))
    assert decide(claim, fs).verdict == "inconclusive (Monte Carlo)"


# --- multiplicity ------------------------------------------------------------------------


def test_one_excluding_interval_among_four_sizes_does_not_contradict_after_holm():
    fs = {f"s{i}": _finding(f"s{i}", 0.5, 0.1, 0.9) for i in range(3)}
    # just excludes 0: unadjusted two-sided p about 0.04, Holm over 4 about 0.16
    fs["s3"] = _finding("s3", -0.21, -0.41, -0.01)
    claim = _c(findings=tuple(fs))
    p = contradiction_p("greater", claim.region(), -0.21, (-0.41, -0.01), 0.95)
    assert 0.03 < p < 0.05
    v = decide(claim, fs)
    assert v.verdict == "inconclusive"
    assert "Holm" in v.reason
    # alone, the same interval contradicts
    assert decide(_c(findings=("s3",)), fs).verdict == "contradicts"
    # a clear exclusion survives Holm
    fs["s3"] = _finding("s3", -2.0, -2.2, -1.8)
    v = decide(claim, fs)
    assert v.verdict == "contradicts" and "Holm-adjusted p" in v.reason


def test_outer_bootstrap_bounds_carry_their_mc_error_into_estimates():
    import xarray as xr

    from scalinglab.stats.reliability import outer_bootstrap

    rng = np.random.default_rng(0)
    scores = xr.DataArray(
        rng.normal(size=(2, 5, 4)),
        dims=("algorithm", "run", "task"),
        coords={"algorithm": ["a", "b"]},
    )

    def stat(d, g):
        return d.mean(("run", "task")).values

    few = outer_bootstrap(scores, stat, reps=20, level=0.95, rng=np.random.default_rng(1))
    many = outer_bootstrap(scores, stat, reps=2000, level=0.95, rng=np.random.default_rng(1))
    assert few["mc_se_lo"].shape == (2,) and np.all(few["mc_se_lo"] > 0)
    # the MC error shrinks with the number of replicates (about 1/sqrt(R): 10x here)
    assert np.all(many["mc_se_lo"] < few["mc_se_lo"] / 3)
    cell = xr.Dataset(
        {k: ((), few[k][0]) for k in ("point", "lo", "hi", "mc_se_lo", "mc_se_hi")},
        attrs={"level": 0.95, "method": "outer bootstrap", "reps": 20},
    )
    e = Estimate.from_cell(cell)
    assert e.mc_se == (pytest.approx(few["mc_se_lo"][0]), pytest.approx(few["mc_se_hi"][0]))


def _pairs_family(tmp_path, value: float):
    """A claims file of one claim per pair ("{x} beats {y}": poi/{x}_vs_{y} > value)."""
    path = tmp_path / "pairs.toml"
    path.write_text(
        textwrap.dedent(f"""\
        [[claim]]
        id = "order/{{x}}>{{y}}"
        each = "pairs"
        source = "Board"
        statement = "{{x}} beats {{y}}"
        findings = "poi/{{x}}_vs_{{y}}"
        expect = "greater"
        value = {value}
        scope = "benchmark"
        regime = "paper data"
    """)
    )
    return path


def test_a_family_of_claims_one_per_pair_is_holm_corrected(tmp_path):
    path = _pairs_family(tmp_path, 0.5)
    pairs = [{"x": f"a{i}", "y": f"b{i}"} for i in range(4)]
    for i in range(3):
        _finding(f"poi/a{i}_vs_b{i}", 0.8, 0.6, 0.95)
    _finding("poi/a3_vs_b3", 0.4, 0.3, 0.49)  # just excludes 0.5: p ~ 0.04 alone
    verdicts = rec.claims_from(path, pairs=pairs)
    assert [v.verdict for v in verdicts] == ["reproduces"] * 3 + ["inconclusive"]
    assert "Holm" in verdicts[3].reason
    assert [v.verdict for v in rec.claims()] == ["reproduces"] * 3 + ["inconclusive"]
    rec.record("poi/a3_vs_b3", Estimate(0.1, 0.05, 0.15, level=0.95))  # clearly below
    v = rec.claims()[3]
    assert v.verdict == "contradicts" and "Holm-adjusted p" in v.reason


def test_a_family_holds_only_after_holm_too(tmp_path):
    from scalinglab.verdict_checks import support_p

    path = _pairs_family(tmp_path, 1.0)
    pairs = [{"x": f"w{i}", "y": "base"} for i in range(4)]
    for i in range(2):
        _finding(f"poi/w{i}_vs_base", 1.5, 1.3, 1.7)  # clearly above 1
    for i in (2, 3):
        _finding(f"poi/w{i}_vs_base", 1.1, 1.01, 1.19)  # just above 1: p ~ 0.03 alone
    p = support_p("greater", (1.0, np.inf), 1.1, (1.01, 1.19), 0.95)
    assert 0.02 < p < 0.05
    # the mirror of contradiction_p: the same distance to the threshold, the same p
    assert p == pytest.approx(contradiction_p("greater", (1.2, np.inf), 1.1, (1.01, 1.19), 0.95))
    verdicts = rec.claims_from(path, pairs=pairs)
    # Holm over 4: the two marginal p's are compared with alpha / 2, and fail
    assert [v.verdict for v in verdicts] == ["reproduces"] * 2 + ["inconclusive"] * 2
    assert "not after Holm's correction" in verdicts[2].reason
    assert "Holm-adjusted p" in verdicts[0].reason
    # alone, a marginal one holds
    one = rec.claims_from(path, pairs=pairs[2:3])
    assert [v.verdict for v in one] == ["reproduces"]
    # a two-ended region needs both ends excluded: the larger p
    assert support_p("between", (0.0, 2.0), 1.9, (1.8, 1.99), 0.95) > 0.01
    assert support_p("between", (0.0, 2.0), 5.0, (4.0, 6.0), 0.95) == 1.0


# --- a verdict says its interval's coverage ------------------------------------------------


def test_a_decided_verdict_states_its_intervals_coverage_where_below_target():
    from scalinglab.stats.coverage_report import COVERAGE_TARGET
    from scalinglab.stats.method_coverage import measured_coverage

    t3 = measured_coverage("student-t", 3)
    assert t3.coverage < COVERAGE_TARGET  # about 0.92 (the committed table)
    f = _finding("t", 1.0, 0.5, 1.5, method="Student t over 3 seeds", n=3)
    v = decide(_c(findings=("t",)), {"t": f})
    assert v.verdict == "reproduces"
    assert v.reason.endswith(f"(its interval's simulated coverage is {t3.coverage:.2f} at n = 3)")
    # contradicting: the same words
    g = _finding("g", -1.0, -1.5, -0.5, method="Student t over 3 seeds", n=3)
    assert f"coverage is {t3.coverage:.2f} at n = 3" in decide(_c(findings=("g",)), {"g": g}).reason
    # an n between grid points is read at the grid n below it, and says so
    f7 = _finding("t7", 1.0, 0.5, 1.5, method="Wilson score over 11", n=11)
    w10 = measured_coverage("wilson", 10)
    assert w10.coverage < COVERAGE_TARGET
    assert f"coverage is {w10.coverage:.2f} at n = 11, as simulated at n = 10" in (
        decide(_c(findings=("t7",)), {"t7": f7}).reason
    )
    # a method that covers at its n: no caveat
    assert measured_coverage("clopper-pearson", 10).coverage >= COVERAGE_TARGET
    cp = _finding("cp", 0.5, 0.2, 0.8, method="Clopper-Pearson over 10", n=10)
    assert "coverage" not in decide(_c(findings=("cp",)), {"cp": cp}).reason
    # an undecided verdict needs none
    wide = _finding("w", 0.1, -0.5, 1.5, method="Student t over 3 seeds", n=3)
    assert "coverage" not in decide(_c(findings=("w",)), {"w": wide}).reason


def test_a_decided_verdict_says_when_its_coverage_is_not_measured():
    no_n = _finding("a", 1.0, 0.5, 1.5, method="bootstrap over seeds, percentile")
    v = decide(_c(findings=("a",)), {"a": no_n})
    assert v.verdict == "reproduces"
    assert "(its interval's coverage is not measured: its sample size is not recorded" in v.reason
    odd = _finding("b", 1.0, 0.5, 1.5, method="a home-made interval", n=5)
    assert "no simulation is registered for its method (a home-made interval)" in (
        decide(_c(findings=("b",)), {"b": odd}).reason
    )
    # an outside-regime verdict keeps the caveat under its scale wording
    w = decide(_c(findings=("b",), scope="paper", regime="outside: tiny"), {"b": odd})
    assert w.verdict == "holds at our scale" and "coverage is not measured" in w.reason


def test_a_t_intervals_p_value_is_read_on_its_own_t_distribution(tmp_path):
    """At 3 seeds (2 df) a distant threshold is far less significant on t than on the
    normal: Holm's smaller thresholds must read the interval's own distribution."""
    from scipy import stats as sps

    from scalinglab.verdict_checks import support_p

    half = sps.t.ppf(0.975, 2) * 0.02  # se 0.02 on 2 df
    ci = (1.1 - half, 1.1 + half)
    # at the interval's end both read 1 - level
    assert contradiction_p("less", (-np.inf, ci[0]), 1.1, ci, 0.95, df=2) == pytest.approx(0.05)
    assert support_p("greater", (ci[0], np.inf), 1.1, ci, 0.95, df=2) == pytest.approx(0.05)
    # 7 standard errors from the threshold: p = 2 t2.sf(7) = 0.02 on t, 0.0014 on the normal
    p_t = support_p("greater", (0.96, np.inf), 1.1, ci, 0.95, df=2)
    p_z = support_p("greater", (0.96, np.inf), 1.1, ci, 0.95)
    assert p_t == pytest.approx(2 * sps.t(2).sf(7.0)) and p_t > 0.0125 > p_z
    # in a family of 4 sizes, Holm (alpha / 4 = 0.0125 for the smallest) holds the t
    # intervals' "holds" back, while read as normal they would all pass
    path = _pairs_family(tmp_path, 0.96)
    pairs = [{"x": f"w{i}", "y": "base"} for i in range(4)]
    for i in range(4):
        rec.record(f"poi/w{i}_vs_base", Estimate(1.1, *ci, level=0.95, df=2))
    assert [v.verdict for v in rec.claims_from(path, pairs=pairs)] == ["inconclusive"] * 4
    for i in range(4):
        rec.record(f"poi/w{i}_vs_base", Estimate(1.1, *ci, level=0.95))
    assert [v.verdict for v in rec.claims_from(path, pairs=pairs)] == ["reproduces"] * 4
    # the finding carries df into results.json
    assert rec.record("d", Estimate(1.1, *ci, level=0.95, df=2)).to_json()["df"] == 2.0
    with pytest.raises(ValueError, match="df must be > 0"):
        Estimate(1.1, *ci, level=0.95, df=0)


def test_a_t_interval_without_df_is_read_on_n_minus_one_df():
    from scalinglab.finding import t_df

    assert t_df("Student t over 3 seeds", 3) == 2.0
    assert t_df("Welch t over 5 and 6 warm starts", 5) == 4.0  # the least Welch df: conservative
    assert t_df("percentile bootstrap over 100 runs", 100) is None
    assert t_df("Student t over 1 seed", 1) is None and t_df(None, 3) is None
    f = rec.record("x", 1.0, ci=(0.5, 1.5), level=0.95, method="Student t over 4 seeds", n=4)
    assert f.df == 3.0
    # an explicit df wins over the inference; without an interval there is none
    assert (
        rec.record("y", 1.0, ci=(0.5, 1.5), level=0.95, method="Student t", n=4, df=2.5).df == 2.5
    )
    assert rec.record("z", 1.0, method="Student t over 4 seeds", n=4).df is None


def test_a_family_member_that_is_not_identified_is_left_out_of_holm(tmp_path):
    """Holm's family is the claims actually tested: a size whose finding is not
    identified makes no test, so counting it would only shrink the others' thresholds."""
    path = _pairs_family(tmp_path, 1.0)
    pairs = [{"x": f"w{i}", "y": "base"} for i in range(4)]
    for i in range(3):  # each p = 0.015 alone: passes Holm over 3 (0.05/3), not over 4
        _finding(f"poi/w{i}_vs_base", 1.2432, 1.2432 - 0.196, 1.2432 + 0.196)
    rec.record("poi/w3_vs_base", Estimate(1.5, 1.3, 1.7, level=0.95, identified=False))
    verdicts = rec.claims_from(path, pairs=pairs)
    assert [v.verdict for v in verdicts] == ["reproduces"] * 3 + ["not identified"]
    assert "over the 3 tested claims of order/*" in verdicts[0].reason
    # identified but undecided, the fourth was tested: over 4 the marginal three fail
    rec.record("poi/w3_vs_base", Estimate(1.0, 0.8, 1.2, level=0.95))
    assert [v.verdict for v in rec.claims_from(path, pairs=pairs)] == ["inconclusive"] * 4
