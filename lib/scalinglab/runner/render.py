"""Render-only runs: a new report from a previous run's executed notebook, for prose edits.

When only markdown cells changed since the latest good run (its execution key, see
:mod:`scalinglab.runner.manifest`, equals the request's), ``scalinglab run`` does not
start a kernel: :func:`render_source` finds that run, :func:`splice_prose` puts the
study's current markdown cells between its executed code cells (sources, outputs,
execution counts and timings kept as they were), and :meth:`RenderSource.execute` copies
its ``results.json`` byte for byte into the new run folder, so the new version's
findings are the old ones. The page is then written by the same
:func:`scalinglab.runner.html.write_report` as any run.

A run folder keeps its executed notebook (``<study>.ipynb``) for this; ``reports
prune`` removes it only from runs that are not ``latest``.
"""

from __future__ import annotations

import copy
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from scalinglab.runner import store
from scalinglab.runner.execute import read_executed
from scalinglab.runner.manifest import KEY_FORMAT
from scalinglab.runner.store import RunStatus

#: Tag papermill gives the cell it injects after the ``parameters`` cell.
INJECTED = "injected-parameters"


def splice_prose(executed: Any, current: Any) -> Any:
    """``executed`` with ``current``'s markdown (and raw) cells in place of its own.

    Parameters
    ----------
    executed
        The executed notebook of an earlier run (nbformat node).
    current
        The study as it reads now (jupytext), with the same code cells.

    Returns
    -------
    nbformat.NotebookNode
        A new notebook: ``executed``'s metadata, ``current``'s cell order, each code
        cell taken from ``executed`` with its outputs (papermill's injected-parameters
        cell stays right after the cell it followed).

    Raises
    ------
    ValueError
        The code cells differ (in number or source), so outputs cannot be reused.
    """
    groups: list[list[Any]] = []
    prefix: list[Any] = []
    for cell in executed.cells:
        if cell.cell_type != "code":
            continue
        if INJECTED in (cell.get("metadata", {}).get("tags") or []):
            (groups[-1] if groups else prefix).append(cell)
        else:
            groups.append([cell])
    code = [c for c in current.cells if c.cell_type == "code"]
    if len(code) != len(groups):
        raise ValueError(f"{len(code)} code cells now, {len(groups)} in the executed notebook")
    for i, (group, cell) in enumerate(zip(groups, code, strict=True), start=1):
        if group[0].source != cell.source:
            raise ValueError(f"code cell {i} differs from the executed notebook's")
    out = copy.deepcopy(executed)
    cells = [copy.deepcopy(c) for c in prefix]
    pending = iter(groups)
    for cell in current.cells:
        if cell.cell_type == "code":
            cells += [copy.deepcopy(c) for c in next(pending)]
        else:
            cells.append(copy.deepcopy(cell))
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i}"
    out.cells = cells
    return out


@dataclass
class RenderSource:
    """The run a render-only run reuses, and the notebook spliced from it."""

    run_dir: Path
    notebook: Any

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    def execute(
        self,
        source: Path,
        output: Path,
        parameters: dict[str, Any],
        *,
        results_path: Path,
        **_: Any,
    ) -> Any:
        """Stand in for :func:`~scalinglab.runner.execute.execute_study`, running nothing:
        write the spliced notebook to ``output`` and copy the source run's ``results.json``
        to ``results_path`` (bytes unchanged: the same findings). Returns the notebook."""
        nbformat.write(self.notebook, output)
        shutil.copyfile(self.run_dir / "results.json", results_path)
        return self.notebook


def render_source(prep: Any, *, reports_root: Path | None = None) -> RenderSource | None:
    """The latest good run whose outputs a request can reuse (only the prose differs).

    Parameters
    ----------
    prep
        A :class:`~scalinglab.runner.pipeline.PreparedRun`.

    Returns
    -------
    RenderSource or None
        None unless the variant's ``latest`` run is ``ok``, has the same execution
        key (same key format), and kept its executed notebook and ``results.json``
        with the same code cells.
    """
    latest = store.latest_run(prep.study.name, prep.variant, reports_root=reports_root)
    if latest is None:
        return None
    manifest = store.read_manifest(latest)
    if (
        manifest.get("status") != RunStatus.OK
        or manifest.get("key_format") != KEY_FORMAT
        or manifest.get("execution_key") != prep.hashes["execution_key"]
        or not (latest / "results.json").is_file()
    ):
        return None
    executed = read_executed(latest / f"{prep.study.name}.ipynb")
    if executed is None:
        return None
    try:
        notebook = splice_prose(executed, prep.study.notebook)
    except ValueError:
        return None
    return RenderSource(latest, notebook)


def unrenderable_reason(prep: Any, latest: Path) -> str | None:
    """Why a prose-only change cannot be re-rendered from ``latest`` (None when it can)."""
    if not (latest / "results.json").is_file():
        return f"{latest.name} has no results.json"
    executed = read_executed(latest / f"{prep.study.name}.ipynb")
    if executed is None:
        return f"{latest.name} kept no executed notebook ({prep.study.name}.ipynb)"
    try:
        splice_prose(executed, prep.study.notebook)
    except ValueError as exc:
        return f"{latest.name}'s executed notebook does not match: {exc}"
    return None
