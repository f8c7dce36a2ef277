"""The one estimate type: what it carries, how record() keeps it, strict JSON for NaN."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import scalinglab.record as rec
from scalinglab.estimate import BOUND_SHARE, Estimate, identified_by_share
from scalinglab.results_file import load_results


@pytest.fixture(autouse=True)
def _clean(monkeypatch, tmp_path):
    monkeypatch.setenv(rec.RESULTS_ENV, str(tmp_path / "results.json"))
    rec.clear()
    yield
    rec.clear()


def test_from_draws_is_the_percentile_interval_of_the_finite_draws():
    d = np.r_[np.arange(101.0), np.nan]
    e = Estimate.from_draws(50.0, d, level=0.9, method="bootstrap over prompts, percentile")
    assert (e.lo, e.hi) == pytest.approx((5.0, 95.0))
    assert e.ci == (e.lo, e.hi) and e.level == 0.9 and e.resamples == 101
    none = Estimate.from_draws(1.0, [np.nan, np.nan], level=0.95)
    assert math.isnan(none.lo) and "no resample" in none.note


def test_an_interval_needs_both_ends_and_a_level():
    with pytest.raises(ValueError, match="both ends"):
        Estimate(1.0, 0.5, None, level=0.95)
    with pytest.raises(ValueError, match="level"):
        Estimate(1.0, 0.5, 1.5)


def test_record_takes_an_estimate_and_keeps_its_method_and_level(tmp_path):
    e = Estimate(2.0, 1.0, 3.0, level=0.9, method="outer bootstrap, percentile", resamples=77)
    f = rec.record("x", e, unit="s", description="d")
    assert (f.point, f.ci, f.level, f.method, f.resamples) == (
        2.0,
        (1.0, 3.0),
        0.9,
        "outer bootstrap, percentile",
        77,
    )
    saved = json.loads((tmp_path / "results.json").read_text())["findings"][0]
    assert saved["level"] == 0.9 and saved["method"] == "outer bootstrap, percentile"
    # the method cannot be re-typed beside an estimate
    with pytest.raises(TypeError, match="carries its own"):
        rec.record("y", e, method="something else")
    with pytest.raises(TypeError, match="carries its own"):
        rec.record("y", e, level=0.95)


def test_record_keeps_an_estimates_identification():
    e = Estimate(0.0, 0.0, 0.1, level=0.95, identified=False, bound=0.0, side="lower", note="on 0")
    f = rec.record("p", e, headline=True)
    assert not f.identified and not f.headline and f.side == "lower" and "on 0" in f.note


def test_nan_is_written_as_null_with_a_reason_and_read_back_as_nan(tmp_path):
    rec.record("u", math.nan)
    rec.record("v", Estimate(1.0, math.nan, math.inf, level=0.95))
    text = (tmp_path / "results.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    raw = json.loads(text)["findings"]  # strict: json.loads(parse_constant) never needed
    assert raw[0]["point"] is None and "undefined on these data" in raw[0]["note"]
    assert raw[1]["ci"] == [None, None] and "interval" in raw[1]["note"]
    back = load_results(tmp_path / "results.json")
    assert math.isnan(back[0]["point"]) and all(math.isnan(c) for c in back[1]["ci"])


def test_old_results_with_nan_literals_still_load(tmp_path):
    p = tmp_path / "old.json"
    p.write_text('{"findings": [{"name": "a", "point": NaN, "ci": [NaN, 1.0]}]}')
    (f,) = load_results(p)
    assert math.isnan(f["point"]) and math.isnan(f["ci"][0]) and f["ci"][1] == 1.0


def test_one_identifiability_rule():
    assert identified_by_share(BOUND_SHARE - 0.01) and not identified_by_share(BOUND_SHARE)
    assert not identified_by_share(math.nan)
