"""Prose bound to findings, and one document per design (scalinglab.prose, runner.prose_cells)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import nbformat
import pytest

from scalinglab.prose import UnknownFindingError, fill_markdown, references, render_finding
from scalinglab.runner.prose_cells import keeps, prepare_cells, variant_names

FIXTURES = Path(__file__).parent / "fixtures" / "prose"
F = [
    {"name": "speed/x", "point": 1.2, "ci": [1.17, 1.32], "unit": "x", "level": 0.95},
    {"name": "share", "point": 0.25, "ci": [0.2, 0.3], "level": 0.95},
    {"name": "nan", "point": math.nan, "ci": None},
    {
        "name": "alpha",
        "point": 0.0,
        "ci": [0.0, 0.0164],
        "identified": False,
        "bound": 0.0,
        "side": "lower",
    },
]


def test_a_reference_renders_point_interval_and_unit():
    text = "faster: {{ speed/x }}; point {{speed/x|point}}; ci {{ speed/x | ci }}"
    assert fill_markdown(text, F) == ("faster: 1.2 [1.17, 1.32] x; point 1.2 x; ci [1.17, 1.32]")
    assert fill_markdown("{{ share | pct }}", F) == "25% [20%, 30%]"


def test_nan_and_unidentified_findings_render_as_the_findings_table_does():
    assert fill_markdown("{{ nan }}", F) == "—"
    assert fill_markdown("{{ alpha }}", F) == "at lower bound 0 ≤ 0.0164 (one-sided)"


def test_an_unknown_finding_is_an_error_naming_it_and_close_names():
    with pytest.raises(UnknownFindingError, match=r"cell 3: \{\{ speed/y \}\}.*speed/x"):
        fill_markdown("see {{ speed/y }}", F, where="cell 3")
    with pytest.raises(UnknownFindingError, match="unknown format 'round'"):
        fill_markdown("{{ share | round }}", F)
    # a failed run's report still renders, marking what is missing
    assert fill_markdown("{{ speed/y }}", F, strict=False) == "⟨speed/y: not recorded⟩"


def test_references_and_text_without_any():
    assert references("a {{ x/y }} b {{ z | point }}") == [("x/y", None), ("z", "point")]
    assert fill_markdown("no braces, $x^{2}$ stays", F) == "no braces, $x^{2}$ stays"
    assert render_finding(F[0], "full") == "1.2 [1.17, 1.32] x"


def _nb() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("all: {{ share }}"),
        nbformat.v4.new_markdown_cell("classifier text", metadata={"tags": ["only-default"]}),
        nbformat.v4.new_markdown_cell(
            "paper text", metadata={"tags": ["only-atari100k", "only-procgen"]}
        ),
        nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["not-user"]}),
    ]
    return nb


def test_a_variant_only_cell_is_absent_from_other_variants():
    texts = lambda nb: [c.source for c in nb.cells]  # noqa: E731
    default = prepare_cells(_nb(), findings=F, variant="default")
    assert texts(default) == ["all: 0.25 [0.2, 0.3]", "classifier text", "x = 1"]
    atari = prepare_cells(_nb(), findings=F, variant="atari100k")
    assert "classifier text" not in texts(atari) and "paper text" in texts(atari)
    tiny = prepare_cells(_nb(), findings=F, variant="tiny")  # the default design, smaller
    assert "classifier text" in texts(tiny) and "paper text" not in texts(tiny)
    user = prepare_cells(_nb(), findings=F, variant="tiny-user")  # the user's own data
    assert texts(user) == ["all: 0.25 [0.2, 0.3]"]


def test_variant_names():
    assert variant_names("default-tiny") >= {"default", "tiny"}
    assert variant_names("atari100k-user") == {"user"}
    cell = nbformat.v4.new_markdown_cell("x", metadata={"tags": ["only-dmc"]})
    assert keeps(cell, "dmc") and not keeps(cell, "dmc100k")


@pytest.mark.slow
def test_the_report_fills_prose_and_drops_other_variants_cells(tmp_path, monkeypatch):
    from scalinglab.runner.pipeline import run_study

    (tmp_path / "notebooks").mkdir()
    shutil.copy(FIXTURES / "fixture_prose.py", tmp_path / "notebooks")
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    res = run_study("fixture_prose", variant="other")
    assert res.status == "ok", res.error
    page = (Path(res.run_dir) / "report.html").read_text()
    mean = next(f for f in res.findings if f["name"] == "mean")
    assert f"The mean is {mean['point']:.4g} [" in page and "{{" not in page
    assert "OTHER-ONLY" in page and "DEFAULT-ONLY" not in page
    # an unknown name fails the report at render time, naming it
    bad = run_study("fixture_prose", variant="typo")
    assert bad.status == "failed" and "mean/typo" in bad.error
