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


def test_tex_in_markdown_becomes_mathml_but_code_and_prices_do_not():
    from scalinglab.runner.mathml import tex_to_mathml

    md = ("The law $R(C) = R_0 + (A - R_0)$ holds; `x = $HOME` stays; costs $5 and $6.\n"
          "$$\\log_{10} L = -k \\log_{10} X$$\n```\necho $PATH$\n```")
    out = tex_to_mathml(md)
    assert out.count("<math") == 2
    assert 'display="inline"' in out and 'display="block"' in out
    assert "<msub><mi>R</mi><mn>0</mn></msub>" in out
    assert "`x = $HOME`" in out and "$5 and $6" in out and "echo $PATH$" in out
    assert tex_to_mathml("no math here") == "no math here"
