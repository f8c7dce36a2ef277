"""Packaging: typed package, license and classifiers, the JupyterLab default viewer that the
package installs, and mypy configured for lib/ (run by ``nox -s tests`` before pytest)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_package_is_typed_licensed_and_classified():
    project = PYPROJECT["project"]
    assert (REPO / "lib" / "scalinglab" / "py.typed").is_file()
    assert PYPROJECT["tool"]["setuptools"]["package-data"]["scalinglab"] == [
        "py.typed",
        "runner/templates/*",
        "stats/*.json",
    ]
    assert project["license"] == "MIT" and (REPO / "LICENSE").read_text().startswith("MIT")
    assert "Typing :: Typed" in project["classifiers"]
    assert any(
        c.startswith("Programming Language :: Python :: 3.11") for c in project["classifiers"]
    )


def test_page_templates_and_the_stylesheet_are_package_data():
    templates = REPO / "lib" / "scalinglab" / "runner" / "templates"
    names = {p.name for p in templates.glob("*")}
    assert {"index.html.j2", "diff.html.j2", "style.css"} <= names
    assert "runner/templates/*" in PYPROJECT["tool"]["setuptools"]["package-data"]["scalinglab"]


def test_the_committed_coverage_table_is_package_data():
    # the report's "Interval coverage" section reads it (scalinglab.stats.method_coverage)
    assert (REPO / "lib" / "scalinglab" / "stats" / "method_coverage.json").is_file()
    assert "stats/*.json" in PYPROJECT["tool"]["setuptools"]["package-data"]["scalinglab"]


def test_installed_labconfig_opens_py_studies_as_notebooks():
    [(target, files)] = PYPROJECT["tool"]["setuptools"]["data-files"].items()
    assert target == "etc/jupyter/labconfig/default_setting_overrides.d"
    config = json.loads((REPO / files[0]).read_text())
    viewers = config["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["python"] == "Jupytext Notebook"


def test_mypy_checks_lib_and_is_pinned_for_the_test_extra():
    assert PYPROJECT["tool"]["mypy"]["files"] == ["lib/scalinglab"]
    assert any(d.startswith("mypy") for d in PYPROJECT["project"]["optional-dependencies"]["test"])
    pins = (REPO / "lib" / "constraints.txt").read_text().splitlines()
    assert any(p.startswith("mypy==") for p in pins)
    assert 'session.run(_bin("mypy"), env=env)' in (REPO / "noxfile.py").read_text()
