"""The report header: the claims ledger first, headlines with a forest plot, the rest folded."""

from __future__ import annotations

import base64
import math
import re

import pytest

from scalinglab.runner.html import CSS, forest_html, provenance_header


def _header(findings, claims=()):
    return provenance_header(
        title="t",
        description="",
        study="s",
        variant="default",
        parameters={},
        commit=None,
        dirty=False,
        version="0",
        findings=findings,
        claims=claims,
    )


def _finding(i, headline=False):
    return {
        "name": f"f{i}",
        "point": float(i),
        "ci": [i - 1.0, i + 1.0],
        "level": 0.95,
        "method": "percentile",
        "resamples": 100,
        "headline": headline,
    }


def test_short_list_is_one_table():
    html = _header([_finding(i) for i in range(5)])
    assert html.count('class="sl-findings"') == 1 and "<details>" not in html


@pytest.mark.slow
def test_long_list_shows_headlines_then_folds_everything():
    items = [_finding(i, headline=i in (3, 17)) for i in range(20)]
    html = _header(items)
    assert html.count('class="sl-findings"') == 2
    head, folded = html.split('<details class="sl-all">')
    assert "f3<" in head and "f17<" in head and "f4<" not in head
    assert "Headline findings" in head and 'class="sl-forest"' in head
    assert "All 20 findings" in folded
    assert all(f"f{i}<" in folded for i in range(20))


def _claim(cid, verdict, finding="f3"):
    return {
        "id": cid,
        "paper": "P et al.",
        "statement": f"claim {cid}",
        "findings": [finding],
        "expect": "greater",
        "value": 0.0,
        "rule": "effect > 0",
        "verdict": verdict,
        "reason": "why",
        "evidence": [{"name": finding, "point": 3.0, "ci": [2.0, 4.0], "verdict": verdict}],
        "mde": 1.5 if verdict == "inconclusive" else None,
    }


@pytest.mark.slow
def test_ledger_is_the_first_table_with_summary_and_mde():
    items = [_finding(i, headline=i == 3) for i in range(20)]
    html = _header(
        items, [_claim("a", "reproduces"), _claim("b", "inconclusive"), _claim("c", "contradicts")]
    )
    assert html.index('class="sl-ledger"') < html.index('class="sl-findings"')
    assert html.index("Claims ledger") < html.index("Headline findings")
    assert "1 reproduces, 1 contradicts, 1 inconclusive" in html
    assert "minimum detectable effect 1.5" in html
    assert 'class="sl-v-contradicts"' in html
    assert "No published claims declared" in _header(items)


def test_nan_cells_are_dashes_with_a_footnote_and_tables_scroll():
    items = [
        _finding(1),
        {
            "name": "naive_gflops",
            "point": math.nan,
            "ci": None,
            "level": None,
            "note": "the naive kernel is not run at this size",
        },
    ]
    html = _header(items)
    assert ">nan<" not in html.lower() and "—<sup>1</sup>" in html
    assert "not run at this size" in html
    assert html.count('class="sl-scroll"') >= 2  # provenance and findings tables
    assert re.search(r"\.sl-scroll \{ overflow-x: auto", CSS)
    assert re.search(r"\.jp-OutputArea-output \{ overflow-x: auto", CSS)


@pytest.mark.slow
def test_forest_plot_is_deterministic_png_and_skips_nan():
    items = [_finding(i, headline=True) for i in range(3)]
    a, b = forest_html(items), forest_html(items)
    assert a == b and a.startswith('<img class="sl-forest"')
    png = base64.b64decode(a.split("base64,")[1].split('"')[0])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert forest_html([{"name": "x", "point": math.nan}]) == ""


def test_long_list_without_headlines_is_one_table():
    html = _header([_finding(i) for i in range(20)])
    assert html.count('class="sl-findings"') == 1


def test_tex_in_markdown_becomes_mathml_but_code_and_prices_do_not():
    from scalinglab.runner.mathml import tex_to_mathml

    md = (
        "The law $R(C) = R_0 + (A - R_0)$ holds; `x = $HOME` stays; costs $5 and $6.\n"
        "$$\\log_{10} L = -k \\log_{10} X$$\n```\necho $PATH$\n```"
    )
    out = tex_to_mathml(md)
    assert out.count("<math") == 2
    assert 'display="inline"' in out and 'display="block"' in out
    assert "<msub><mi>R</mi><mn>0</mn></msub>" in out
    assert "`x = $HOME`" in out and "$5 and $6" in out and "echo $PATH$" in out
    assert tex_to_mathml("no math here") == "no math here"


def test_run_notes_on_stderr_leave_the_report_but_warnings_stay():
    """A run that computed its experiment and one that reused the cache give the same page."""
    import nbformat

    from scalinglab.runner.html import normalise_notebook

    def nb(*outputs):
        cell = nbformat.v4.new_code_cell("x = 1")
        cell.outputs = [nbformat.v4.new_output("stream", name=n, text=t) for n, t in outputs]
        return nbformat.v4.new_notebook(cells=[cell])

    computed = nb(
        ("stderr", "run 0: 32 fits in 9.3 s; estimated remaining 4 runs: ~29 s\n"),
        ("stderr", "\n"),
        ("stdout", "3 algorithms x 8 tasks\n"),
    )
    reused = nb(
        ("stderr", "reusing data/x.nc (config 9f9f)\n"), ("stdout", "3 algorithms x 8 tasks\n")
    )
    assert (
        normalise_notebook(computed).cells[0].outputs == normalise_notebook(reused).cells[0].outputs
    )
    warned = nb(("stderr", "/lib/x.py:3: UserWarning: scores have a single run per task\n"))
    assert len(normalise_notebook(warned).cells[0].outputs) == 1
