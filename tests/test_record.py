"""Findings recording: validation, atomic results.json, HTML table."""

from __future__ import annotations

import json
import math

import pytest

import scalinglab.record as rec


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv(rec.RESULTS_ENV, str(tmp_path / "run" / "results.json"))
    rec.clear()
    yield
    rec.clear()


def test_record_writes_results_json_after_every_call(tmp_path):
    path = tmp_path / "run" / "results.json"
    rec.record("a", 1.5, ci=(1.0, 2.0), level=0.95, method="percentile", resamples=100)
    assert [f["name"] for f in rec.load_results(path)] == ["a"]
    rec.record("b", 2, headline=True)
    data = json.loads(path.read_text())["findings"]
    assert [f["name"] for f in data] == ["a", "b"]
    assert data[0]["ci"] == [1.0, 2.0] and data[0]["level"] == 0.95
    assert data[0]["resamples"] == 100
    assert data[1]["ci"] is None and data[1]["headline"] is True
    assert not list(path.parent.glob(".tmp-*")), "temporary files must not be left behind"


def test_rerecording_a_name_replaces_it(tmp_path):
    rec.record("a", 1.0)
    rec.record("a", 3.0)
    assert [(f.name, f.point) for f in rec.findings()] == [("a", 3.0)]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ci": (2.0, 1.0), "level": 0.95}, "exceeds"),
        ({"ci": (1.0, 2.0)}, "level"),
        ({"ci": (1.0,), "level": 0.95}, r"\(lo, hi\)"),
    ],
)
def test_bad_intervals_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rec.record("x", 1.5, **kwargs)


def test_non_numeric_point_is_rejected():
    with pytest.raises(TypeError, match="point must be a number"):
        rec.record("x", "high")


def test_nan_point_is_kept_and_rendered():
    f = rec.record("x", math.nan)
    assert math.isnan(f.point)
    assert "nan" in rec.findings_html([f])


def test_findings_html_shows_interval_and_method():
    f = rec.record("iqm/adam", 0.8123, ci=(0.75, 0.86), level=0.95, method="stratified bootstrap",
                   resamples=50_000)
    html = rec.findings_html([f])
    assert "iqm/adam" in html and "[0.75, 0.86]" in html
    assert "95%" in html and "50,000 resamples" in html
    assert "iqm/adam" in repr(rec.findings_table())
