"""The report header's findings block: headlines first, the full list folded when long."""

from __future__ import annotations

from scalinglab.runner.html import provenance_header


def _header(findings):
    return provenance_header(title="t", description="", study="s", variant="default",
                             parameters={}, commit=None, dirty=False, version="0",
                             findings=findings)


def _finding(i, headline=False):
    return {"name": f"f{i}", "point": float(i), "ci": [i - 1.0, i + 1.0], "level": 0.95,
            "method": "percentile", "resamples": 100, "headline": headline}


def test_short_list_is_one_table():
    html = _header([_finding(i) for i in range(5)])
    assert html.count('class="sl-findings"') == 1 and "<details>" not in html


def test_long_list_shows_headlines_then_folds_everything():
    items = [_finding(i, headline=i in (3, 17)) for i in range(20)]
    html = _header(items)
    assert html.count('class="sl-findings"') == 2
    head, folded = html.split("<details>")
    assert "f3<" in head and "f17<" in head and "f4<" not in head
    assert "All 20 findings" in folded
    assert all(f"f{i}<" in folded for i in range(20))


def test_long_list_without_headlines_is_one_table():
    html = _header([_finding(i) for i in range(20)])
    assert html.count('class="sl-findings"') == 1
