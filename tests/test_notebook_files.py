"""The study files as other tools read them: jupytext (JupyterLab's saves) and papermill.

A study opened in JupyterLab and saved unchanged must keep its bytes (jupytext writes the
header in its own form, so the committed header must already be in that form, under the
project's ``jupytext.toml``), and papermill's own parser must see every parameter of the
``parameters`` cell with the type and default the runner's parser sees
(``papermill --help-notebook``; papermill skips a line with more than one ``=``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import nbformat
import pytest
from jupytext.config import find_jupytext_configuration_file, load_jupytext_config
from papermill.inspection import inspect_notebook
from papermill.translators import PythonTranslator

from scalinglab.runner.param_rules import parse_rules
from scalinglab.runner.parameters import parse_parameters_cell

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))


def _config():
    return load_jupytext_config(str(ROOT / "jupytext.toml"))


def test_the_project_config_is_found_from_the_notebooks() -> None:
    # jupytext's contents manager looks upwards from the notebook's folder
    found = find_jupytext_configuration_file(str(ROOT / "notebooks"))
    assert found is not None and Path(found).resolve() == ROOT / "jupytext.toml"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_study_saved_unchanged_keeps_its_bytes(path: Path) -> None:
    config = _config()
    text = path.read_text(encoding="utf-8")
    nb = jupytext.reads(text, fmt="py:percent", config=config)
    # what JupyterLab adds to a notebook with a running kernel: jupytext must drop it
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    written = jupytext.writes(nb, fmt="py:percent", config=config)
    assert written == text, (
        f"{path.name}: jupytext rewrites it on save; write its header in jupytext's form "
        "(jupytext --to py:percent notebooks/<study>.py)"
    )


def _parameters_cell(nb):
    return next(c for c in nb.cells if "parameters" in (c.metadata.get("tags") or []))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_papermill_sees_every_parameter_with_its_type_and_default(
    path: Path, tmp_path: Path
) -> None:
    nb = jupytext.read(path)
    ours = parse_parameters_cell(nb, path=path)
    cell = _parameters_cell(nb)
    lines = [ln for ln in cell.source.splitlines() if ln and not ln.startswith("#")]
    assert len(lines) == len(ours)  # one line per parameter: nothing hides between them
    # papermill's inspection, as `papermill --help-notebook` runs it, on the .ipynb
    ipynb = tmp_path / f"{path.stem}.ipynb"
    nbformat.write(nb, ipynb)
    inspected = inspect_notebook(str(ipynb))
    translated = {p.name: p for p in PythonTranslator.inspect(cell)}
    assert list(inspected) == list(ours) == list(translated)
    for name, param in ours.items():
        theirs = inspected[name]
        assert theirs["inferred_type_name"] == param.type, name
        assert ast.literal_eval(theirs["default"]) == param.default, name
        assert theirs["help"] == param.help, name
        # the runner reads the rule from the same help text papermill shows
        assert parse_rules(theirs["help"], param.type, name, path) == parse_rules(
            param.help, param.type, name, path
        )


def test_non_strict_bounds_written_without_an_equals_sign_mean_the_same() -> None:
    ascii_rule = parse_rules("resamples [>= 1, <= 10]", "int", "reps", "nb.py")
    symbol_rule = parse_rules("resamples [≥ 1, ≤ 10]", "int", "reps", "nb.py")
    assert ascii_rule == symbol_rule == {"bounds": ((">=", 1), ("<=", 10))}
