"""The shared figure style: readable log-axis ticks, NaN-free tables, the forest plot."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from scalinglab.plots import Table, axis_label, forest_plot, plain_number, table_html, use_style

matplotlib.use("Agg")


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (3, "3"),
        (0.03, "0.03"),
        (1000, "1k"),
        (2500, "2.5k"),
        (3e4, "30k"),
        (2.5e7, "25M"),
        (1e-5, "$10^{-5}$"),
        (3e-5, "3e-5"),
        (-2000, "-2k"),
        (0, "0"),
    ],
)
def test_plain_numbers_are_short(x, text):
    assert plain_number(x) == text


def _labels(lo, hi):
    use_style()
    fig = Figure(figsize=(4, 3))
    ax = fig.subplots()
    x = np.geomspace(lo, hi, 10)
    ax.plot(x, x)
    ax.set_xscale("log")
    fig.canvas.draw()
    ticks = ax.xaxis.get_majorticklabels() + ax.xaxis.get_minorticklabels()
    shown = [t for t in ticks if t.get_text() and lo * 0.999 <= t.get_position()[0] <= hi * 1.001]
    boxes = sorted((t.get_window_extent().x0, t.get_window_extent().x1) for t in shown)
    return [t.get_text() for t in shown], boxes


@pytest.mark.parametrize(("lo", "hi"), [(3.0, 6.0), (3e3, 2.5e4), (0.01, 0.05), (1.0, 1e6)])
def test_log_axis_labels_are_plain_and_never_overlap(lo, hi):
    texts, boxes = _labels(lo, hi)
    assert len(texts) >= 2, texts
    assert not any("times" in t or "\\cdot" in t for t in texts), texts
    for (_, right), (left, _) in zip(boxes, boxes[1:], strict=False):
        assert right <= left, (texts, boxes)


def test_narrow_log_axis_labels_its_minor_ticks():
    texts, _ = _labels(3.0, 6.0)
    assert {"3", "4", "5", "6"} <= set(texts)


def test_axis_label_carries_units():
    assert axis_label("step time", "ms") == "step time [ms]"
    assert axis_label("speedup") == "speedup"


def test_table_html_dashes_nan_with_a_footnote_and_scrolls():
    df = pd.DataFrame(
        {
            "n": [256, 4096],
            "naive_gflops": [1.5, math.nan],
            "b": [math.nan, 2.0],
            "name": ["x", None],
        }
    )
    html = table_html(df, notes={"naive_gflops": "the naive kernel is not run above 1024"})
    assert "nan" not in html.lower() and "None" not in html
    assert "—<sup>1</sup>" in html and "—<sup>2</sup>" in html
    assert "the naive kernel is not run above 1024" in html
    assert "undefined for this row" in html  # column b has no note: the generic one
    assert "overflow-x:auto" in html
    assert Table(df)._repr_html_() == table_html(df)
    long = pd.DataFrame({"v": np.arange(100.0)})
    assert "40 more rows" in table_html(long, max_rows=60)


def test_forest_plot_one_row_per_finding_with_claim_shading():
    findings = [
        {"name": "speedup", "point": 1.2, "ci": [1.05, 1.3], "unit": "x"},
        {"name": "slope", "point": -0.2, "ci": [-0.3, -0.1]},
        {"name": "undefined", "point": math.nan, "ci": None},
    ]
    claims = [
        {
            "findings": ["speedup"],
            "expect": "greater",
            "value": 1.0,
            "evidence": [{"name": "speedup", "verdict": "reproduces"}],
        }
    ]
    fig = forest_plot(findings, claims=claims)
    axes = [
        a
        for a in fig.axes
        if a.get_yticklabels() and a.get_yticklabels()[0].get_text() in ("speedup", "slope")
    ]
    assert len(axes) == 2  # the NaN finding is skipped
    lo, hi = axes[0].get_xlim()
    assert lo < 1.0 < 1.05 and hi > 1.3  # the claimed value and the interval are in view
    assert len(axes[0].patches) == 1 and len(axes[1].patches) == 0  # shaded claim region
    with pytest.raises(ValueError, match="no finding"):
        forest_plot([findings[2]])


def test_use_style_shows_dataframes_without_nan_in_ipython():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    use_style()
    html = shell.display_formatter.formatters["text/html"](pd.DataFrame({"b": [1.0, math.nan]}))
    assert "—<sup>1</sup>" in html and "NaN" not in html
