"""The per-study cache key's library part: which ``scalinglab`` modules a notebook imports
(read with ``ast``, never imported), and splicing edited prose into an executed notebook."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from scalinglab.errors import StudyError
from scalinglab.runner.imports import imported_modules, module_hashes
from scalinglab.runner.render import splice_prose


def _package(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "scalinglab"
    for rel, text in {"__init__.py": "", **files}.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


@pytest.fixture
def pkg(tmp_path):
    return _package(
        tmp_path,
        {
            "shared.py": "import numpy\n",
            "stats/__init__.py": "from .core import mean\n",
            "stats/core.py": "from scalinglab import shared\ndef mean(x): return x\n",
            "stats/unused.py": "",
            "studies/__init__.py": "",
            "studies/a/__init__.py": "",
            "studies/a/analysis.py": (
                "from ..a import helpers\n"
                "def f():\n    from scalinglab.stats import core  # lazy imports count\n"
            ),
            "studies/a/helpers.py": "",
            "studies/a/claims.yaml": "claims: []\n",
            "studies/b/__init__.py": "",
            "studies/b/analysis.py": "import scalinglab.stats.unused\n",
        },
    )


def test_imports_are_followed_transitively_with_their_packages(pkg):
    cells = ["%matplotlib inline\nimport numpy as np", "from scalinglab.studies.a import analysis"]
    assert imported_modules(cells, package_dir=pkg) == [
        "scalinglab",
        "scalinglab.shared",
        "scalinglab.stats",
        "scalinglab.stats.core",
        "scalinglab.studies",
        "scalinglab.studies.a",
        "scalinglab.studies.a.analysis",
        "scalinglab.studies.a.helpers",
    ]
    other = imported_modules(["import scalinglab.studies.b.analysis as b"], package_dir=pkg)
    assert "scalinglab.stats.unused" in other and "scalinglab.studies.a" not in other


def test_hashes_change_only_with_an_imported_file(pkg):
    mods = imported_modules(["from scalinglab.studies.a import analysis"], package_dir=pkg)
    before = module_hashes(mods, package_dir=pkg)
    assert "scalinglab.studies.a/claims.yaml" in before  # a package's data files count
    (pkg / "studies" / "b" / "analysis.py").write_text("# edited\n")
    (pkg / "stats" / "unused.py").write_text("# edited\n")
    assert module_hashes(mods, package_dir=pkg) == before
    (pkg / "shared.py").write_text("import numpy  # edited\n")
    after = module_hashes(mods, package_dir=pkg)
    assert [k for k in before if before[k] != after[k]] == ["scalinglab.shared"]


def test_an_unparsable_cell_names_itself(pkg):
    with pytest.raises(StudyError, match=r"nb\.py, code cell 2: cannot parse line 1"):
        imported_modules(["x = 1", "def (:"], where="nb.py", package_dir=pkg)


def test_every_study_of_the_repository_resolves_its_imports():
    from scalinglab.runner.study import discover_studies, load_study

    for name in discover_studies():
        study = load_study(name)
        code = [c.source for c in study.notebook.cells if c.cell_type == "code"]
        mods = imported_modules(code, where=name)
        assert "scalinglab.record" in mods, name
        assert not any(m.startswith(("scalinglab.runner", "scalinglab.cli")) for m in mods), name


def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def test_splice_keeps_code_outputs_and_takes_the_new_prose():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    params = code("n = 1", metadata={"tags": ["parameters"]}, execution_count=1)
    injected = code("n = 2", metadata={"tags": ["injected-parameters"]}, execution_count=2)
    body = code("print(n)", execution_count=3)
    body.outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    executed = _nb(md("old title"), params, injected, md("old text"), body)
    current = _nb(md("new title"), code("n = 1"), md("new text"), md("added"), code("print(n)"))
    out = splice_prose(executed, current)
    assert [c.source for c in out.cells] == [
        "new title",
        "n = 1",
        "n = 2",
        "new text",
        "added",
        "print(n)",
    ]
    assert out.cells[5].outputs[0].text == "2\n" and out.cells[5].execution_count == 3
    assert executed.cells[0].source == "old title"  # the input is left as it was
    with pytest.raises(ValueError, match="code cell 2 differs"):
        splice_prose(executed, _nb(code("n = 1"), code("print(n + 1)")))
    with pytest.raises(ValueError, match="1 code cells now, 2"):
        splice_prose(executed, _nb(code("n = 1")))
