"""The claims ledger: each verdict rule, its boundaries, the MDE, and results.json."""

from __future__ import annotations

import json
import math

import pytest
from scipy.stats import norm

import scalinglab.record as rec
from scalinglab.claims import Claim, decide, minimum_detectable_effect
from scalinglab.ledger import summary_text
from scalinglab.results_file import load_claims

P = "Somebody et al. 2025"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv(rec.RESULTS_ENV, str(tmp_path / "run" / "results.json"))
    rec.clear()
    yield
    rec.clear()


def _f(name, point, lo, hi, **kw):
    return rec.record(name, point, ci=(lo, hi), level=0.95, **kw)


def _claim(cid, finding, **rule):
    return rec.claim(cid, paper=P, statement=f"statement of {cid}", finding=finding, **rule)


@pytest.mark.parametrize(
    ("ci", "rule", "verdict"),
    [
        ((1.1, 1.5), {"expect": "greater", "value": 1.0}, "reproduces"),
        ((1.0, 1.5), {"expect": "greater", "value": 1.0}, "inconclusive"),  # lo == value
        ((0.8, 1.0), {"expect": "greater", "value": 1.0}, "contradicts"),  # hi == value
        ((0.9, 1.2), {"expect": "greater", "value": 1.0}, "inconclusive"),
        ((-0.5, -0.1), {"expect": "less", "value": 0.0}, "reproduces"),
        ((-0.5, 0.0), {"expect": "less", "value": 0.0}, "inconclusive"),  # hi == value
        ((0.0, 0.3), {"expect": "less", "value": 0.0}, "contradicts"),  # lo == value
        ((-0.02, 0.02), {"expect": "equal", "value": 0.0, "tolerance": 0.02}, "reproduces"),
        ((-0.01, 0.03), {"expect": "equal", "value": 0.0, "tolerance": 0.02}, "inconclusive"),
        ((0.021, 0.05), {"expect": "equal", "value": 0.0, "tolerance": 0.02}, "contradicts"),
        ((0.02, 0.05), {"expect": "equal", "value": 0.0, "tolerance": 0.02}, "inconclusive"),
        ((0.065, 0.075), {"expect": "between", "value": (0.06, 0.08)}, "reproduces"),
        ((0.06, 0.08), {"expect": "between", "value": (0.06, 0.08)}, "reproduces"),  # closed
        ((0.07, 0.09), {"expect": "between", "value": (0.06, 0.08)}, "inconclusive"),
        ((0.20, 0.22), {"expect": "between", "value": (0.06, 0.08)}, "contradicts"),
        ((0.00, 0.059), {"expect": "between", "value": [0.06, 0.08]}, "contradicts"),
    ],
)
def test_each_rule_and_its_boundaries(ci, rule, verdict):
    _f("x", (ci[0] + ci[1]) / 2, *ci)
    v = _claim("c", "x", **rule)
    assert v.verdict == verdict
    assert (v.mde is not None) == (verdict == "inconclusive")


def test_inconclusive_states_the_minimum_detectable_effect():
    _f("speedup", 1.05, 0.9, 1.2)
    v = _claim("c", "speedup", expect="greater", value=1.0)
    z = norm.ppf(0.975)
    assert v.mde == pytest.approx((z + norm.ppf(0.8)) * 0.15 / z)
    assert v.mde == pytest.approx(minimum_detectable_effect((0.9, 1.2), 0.95))
    assert "detected" in v.reason and "0.2144" in v.reason
    # a wider interval (fewer samples) can only detect larger effects
    assert minimum_detectable_effect((0.8, 1.3), 0.95) > v.mde
    # at a lower confidence level the same interval means a larger se
    assert minimum_detectable_effect((0.9, 1.2), 0.5) > v.mde


def test_not_identified_finding_gives_not_identified():
    rec.record(
        "law/relu/A0",
        0.0073,
        ci=(0.00046, 0.0164),
        level=0.95,
        identified=False,
        note="alpha at its lower bound 0 in the point fit",
    )
    v = _claim("c", "law/relu/A0", expect="between", value=(0.0, 0.01))
    assert v.verdict == "not identified" and "alpha at its lower bound" in v.reason


def test_one_finding_that_excludes_the_claim_decides_it_whatever_the_others_read():
    rec.record("size/s", 0.5, ci=(0.45, 0.55), level=0.95)
    rec.record("size/l", 1.0, identified=False, note="on its bound 1")
    rec.record("size/m", 0.95, ci=(0.93, 0.97), level=0.95)
    v = _claim("all", ["size/s", "size/l"], expect="greater", value=0.9)
    assert v.verdict == "contradicts" and "size/s" in v.reason
    assert [e["verdict"] for e in v.evidence] == ["contradicts", "not identified"]
    # with no finding excluding it, the unidentified size leaves the claim open
    v = _claim("open", ["size/m", "size/l"], expect="greater", value=0.9)
    assert v.verdict == "not identified" and "on its bound" in v.reason


def test_untested_claim_keeps_its_reason():
    v = rec.claim(
        "power",
        paper=P,
        statement="energy per token falls",
        untested="the paper's power counters have no CPU equivalent here",
    )
    assert v.verdict == "untested" and "power counters" in v.reason
    with pytest.raises(ValueError, match="reason"):
        rec.claim("p2", paper=P, statement="s", untested="  ")


def test_several_findings_must_all_agree():
    _f("s/a", 1.3, 1.1, 1.5)
    _f("s/b", 1.2, 1.05, 1.4)
    _f("s/c", 1.0, 0.9, 1.1)
    _f("s/d", 0.8, 0.7, 0.95)
    assert _claim("ab", ["s/a", "s/b"], expect="greater", value=1.0).verdict == "reproduces"
    assert _claim("ac", ["s/a", "s/c"], expect="greater", value=1.0).verdict == "inconclusive"
    v = _claim("ad", ["s/a", "s/c", "s/d"], expect="greater", value=1.0)
    assert v.verdict == "contradicts" and "s/d" in v.reason
    assert [e["verdict"] for e in v.evidence] == ["reproduces", "inconclusive", "contradicts"]


def test_finding_without_interval_cannot_decide():
    rec.record("n", 2.0)
    v = _claim("c", "n", expect="greater", value=1.0)
    assert v.verdict == "inconclusive" and "no interval" in v.reason and v.mde is None


def test_a_claim_naming_an_unrecorded_finding_raises():
    with pytest.raises(KeyError, match="never recorded: nope"):
        _claim("c", "nope", expect="greater", value=1.0)


@pytest.mark.parametrize(
    ("rule", "match"),
    [
        ({"expect": "bigger", "value": 1.0}, "expect must be"),
        ({"expect": "between", "value": 1.0}, r"value=\(lo, hi\)"),
        ({"expect": "between", "value": (2.0, 1.0)}, "lo > hi"),
        ({"expect": "greater", "value": None}, "value must be a number"),
        ({"expect": "equal", "value": 0.0, "tolerance": -1.0}, "tolerance"),
    ],
)
def test_malformed_rules_are_rejected(rule, match):
    _f("x", 1.0, 0.5, 1.5)
    with pytest.raises(ValueError, match=match):
        _claim("c", "x", **rule)


def test_ledger_is_stored_in_results_json_and_follows_rerecorded_findings(tmp_path):
    path = tmp_path / "run" / "results.json"
    _f("speedup", 1.3, 1.1, 1.5)
    _claim("muon-faster", "speedup", expect="greater", value=1.0)
    rec.claim("energy", paper=P, statement="s", untested="no counters")
    data = json.loads(path.read_text())
    assert [c["id"] for c in data["claims"]] == ["muon-faster", "energy"]
    c = data["claims"][0]
    assert c["verdict"] == "reproduces" and c["rule"] == "effect > 1"
    assert c["evidence"][0]["ci"] == [1.1, 1.5] and c["paper"] == P
    assert load_claims(path)[1]["verdict"] == "untested"
    # the verdict is recomputed when its finding is re-recorded, never left stale
    _f("speedup", 0.9, 0.8, 0.95)
    assert load_claims(path)[0]["verdict"] == "contradicts"
    assert summary_text(load_claims(path)) == "1 contradicts, 1 untested"
    rec.clear()
    assert load_claims(path) == []


def test_decide_works_on_results_json_dicts():
    c = Claim("c", P, "s", findings=("x",), expect="less", value=0.0)
    v = decide(c, {"x": {"name": "x", "point": -1.0, "ci": [-2.0, -0.5], "level": 0.9}})
    assert v.verdict == "reproduces"
    nan = decide(c, {"x": {"name": "x", "point": math.nan, "ci": [math.nan, math.nan]}})
    assert nan.verdict == "inconclusive"
