"""`run --all` regenerates every variant a study lists under `reports` (the papers' own data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalinglab.cli.run import _report_batches
from scalinglab.errors import StudyError
from scalinglab.runner.study import load_study

FIXTURES = Path(__file__).parent / "fixtures" / "studies"


def _with_reports(tmp_path: Path, reports: str) -> Path:
    src = (FIXTURES / "fixture_basic.py").read_text()
    text = src.replace("#     variants:\n", f"#     reports:\n{reports}#     variants:\n", 1)
    assert text != src
    (tmp_path / "fixture_basic.py").write_text(text)
    return tmp_path


def test_reports_default_to_the_default_variant():
    assert load_study("fixture_basic", root=FIXTURES).reports == ("default",)


def test_reports_lists_declared_variants(tmp_path):
    root = _with_reports(tmp_path, "#     - default\n#     - shifted\n")
    assert load_study("fixture_basic", root=root).reports == ("default", "shifted")


def test_reports_naming_an_undeclared_variant_is_refused(tmp_path):
    root = _with_reports(tmp_path, "#     - default\n#     - nope\n")
    with pytest.raises(StudyError, match="undeclared variant.*nope"):
        load_study("fixture_basic", root=root)


@pytest.mark.slow
def test_the_main_command_covers_the_papers_data():
    batches = dict(_report_batches(False))
    assert batches.pop("default") is None  # every study's default first
    assert "optimizer_comparison" in batches["published"]
    assert "interval_estimates" in batches["atari100k"]
    assert "gemm_cost_model" in batches["gpperf"]
    assert "tiny" not in batches and "wsd" not in batches  # no sweep that is not committed
