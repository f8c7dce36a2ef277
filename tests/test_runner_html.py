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


def _report(tmp_path, reports_root):
    """A one-cell notebook written as a report in reports_root/s/v/run-1/."""
    import nbformat

    from scalinglab.runner.html import write_report

    folder = tmp_path / "reports" / "s" / "v" / "run-1"
    folder.mkdir(parents=True)
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"), cell])
    write_report(
        folder,
        nb,
        title="t",
        description="",
        study="s",
        variant="v",
        parameters={},
        git={},
        version="0",
        findings=[_finding(1)],
        reports_root=reports_root,
    )
    return folder, (folder / "report.html").read_text()


def test_reports_link_one_shared_stylesheet_that_resolves_from_latest_too(tmp_path):
    root = tmp_path / "reports"
    folder, page = _report(tmp_path, root)
    head = page[: page.index("</head>")]
    assert "<style" not in head  # nothing inlined in the head
    hrefs = re.findall(r'<link rel="stylesheet" type="text/css" href="([^"]+)">', head)
    assert len(hrefs) == 1 and re.fullmatch(r"\.\./\.\./\.\./report-[0-9a-f]{12}\.css", hrefs[0])
    css_files = list(root.glob("report-*.css"))
    assert len(css_files) == 1
    css = css_files[0].read_text()
    # the look is kept: JupyterLab's CSS, the code highlighting and ours, ours first
    assert css.index(CSS.strip()[:60]) < css.index(".jp-Notebook") and ".highlight" in css
    assert (folder / hrefs[0]).resolve() == css_files[0].resolve()
    (folder.parent / "latest").symlink_to(folder.name)
    assert (folder.parent / "latest" / hrefs[0]).resolve() == css_files[0].resolve()
    # a self-contained page (no reports root) inlines the same rules
    _, inline = _report(tmp_path / "other", None)
    assert CSS.strip()[:60] in inline and "report-" not in inline[: inline.index("</head>")]
    assert len(page) < len(inline) - 100_000


def test_the_shared_stylesheet_is_named_by_its_content(tmp_path):
    from scalinglab.runner.html import share_stylesheet

    def page(rule):
        return f'<html><head><style type="text/css">{rule}</style></head><body>b</body></html>'

    root = tmp_path / "reports"
    folder = root / "s" / "v" / "r"
    one, p1 = share_stylesheet(page("a{}"), folder=folder, reports_root=root)
    again, p2 = share_stylesheet(page("a{}"), folder=folder, reports_root=root)
    other, p3 = share_stylesheet(page("b{}"), folder=folder, reports_root=root)
    assert p1 == p2 and p1 != p3 and one == again
    assert p1.read_text() == "a{}\n" and p3.read_text() == "b{}\n"
    assert sorted(p.name for p in root.glob("*.css")) == sorted([p1.name, p3.name])
