"""The study files under ``docs/studies/``: every pointer to one resolves, every study has one.

Docstrings, notebooks and the README send readers to ``docs/studies/<file>.md`` for the
facts a study reproduces. A pointer to a file that does not exist (a renamed study, a
typo, the old ``studies/<file>.md`` path) or a study notebook without its file leaves the
reader with nothing; these tests fail on either.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scalinglab.paths import repo_root

ROOT = repo_root()
DOCS = ROOT / "docs" / "studies"
#: A study-file path as written anywhere: ``docs/studies/x.md`` or a bare ``studies/x.md``.
POINTER = re.compile(r"(?<![\w/.-])((?:docs/)?studies/[\w.-]+\.md)\b")
#: The path a notebook's markdown must name for its study file.
DOC_LINK = re.compile(r"docs/studies/([\w.-]+\.md)")


def _sources() -> list[Path]:
    files = sorted((ROOT / "lib").rglob("*.py")) + sorted((ROOT / "notebooks").glob("*.py"))
    return [*files, ROOT / "README.md"]


def _pointers() -> list[tuple[str, int, str]]:
    """(file relative to the root, line number, path as written) for every study-file pointer."""
    found = []
    for path in _sources():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for m in POINTER.finditer(line):
                found.append((str(path.relative_to(ROOT)), n, m.group(1)))
    return found


def _notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.py"))


def test_pointer_pattern_reads_both_forms():
    text = "see ``docs/studies/rl_scaling.md`` and (``studies/fitting.md``), not lib/studies/x.md"
    assert [m.group(1) for m in POINTER.finditer(text)] == [
        "docs/studies/rl_scaling.md",
        "studies/fitting.md",
    ]


def test_there_are_pointers_to_check():
    # guards the test below against passing vacuously (a pattern that matches nothing)
    assert len(_pointers()) >= len(_notebooks())


def test_every_study_file_pointer_resolves():
    bad = []
    for where, line, target in _pointers():
        if not target.startswith("docs/"):
            bad.append(f"{where}:{line}: {target} (write docs/{target})")
        elif not (ROOT / target).is_file():
            bad.append(f"{where}:{line}: {target} does not exist")
    assert not bad, "study-file pointers that do not resolve:\n" + "\n".join(bad)


@pytest.mark.parametrize("notebook", _notebooks(), ids=lambda p: p.stem)
def test_every_study_notebook_links_its_study_file(notebook: Path):
    linked = sorted(set(DOC_LINK.findall(notebook.read_text(encoding="utf-8"))))
    assert linked, f"notebooks/{notebook.name} names no docs/studies/<file>.md"
    missing = [name for name in linked if not (DOCS / name).is_file()]
    assert not missing, f"notebooks/{notebook.name} links missing study files: {missing}"


def test_study_index_lists_every_study_file_and_notebook():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    files = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md")
    assert files, "docs/studies/ holds no study files"
    unlisted = [f for f in files if f"({f})" not in index]
    unlisted += [
        f"notebooks/{nb.name}" for nb in _notebooks() if f"notebooks/{nb.name}" not in index
    ]
    assert not unlisted, f"docs/studies/README.md does not list: {unlisted}"


@pytest.mark.parametrize("notebook", _notebooks(), ids=lambda p: p.stem)
def test_narrative_headings_are_markdown_cells(notebook: Path):
    """A ``# ## heading`` left inside a code cell (a missing ``# %% [markdown]``) is a
    code comment: the report, which shows markdown and outputs, loses that narrative."""
    import jupytext

    nb = jupytext.read(notebook)
    stray = [
        line
        for cell in nb.cells
        if cell.cell_type == "code"
        for line in cell.source.splitlines()
        if re.match(r"# #+ \S", line)
    ]
    assert not stray, f"notebooks/{notebook.name}: headings inside code cells: {stray}"
