"""Before export: each variant's own cells, and markdown filled from the run's findings.

One document per design. A cell (markdown or code) that belongs to some variants only
carries cell tags, written in the jupytext notebook as::

    # %% [markdown] tags=["only-default"]
    # %% [markdown] tags=["only-atari100k", "only-atari200m"]
    # %% [markdown] tags=["not-user"]

``only-<variant>`` keeps the cell in those variants' reports only; ``not-<variant>``
drops it from that variant's. A run's variant is its report folder (``default``,
``atari100k``, ``tiny``, ``user``, ``default-tiny``...); see :func:`variant_names` for
how a test-sized or user-data folder maps to the design it runs. Code cells so tagged
still execute (papermill runs every cell); only the report leaves them out.

Then every markdown cell's ``{{ finding/name }}`` references are filled by
:func:`scalinglab.prose.fill_markdown` from the run's ``results.json`` findings; an
unknown name fails the export of a finished run (the report would state a number
nobody computed).

:func:`prepare_cells` is the one step the HTML export calls, on the executed notebook
(it also serves a render-only run re-rendering a cached executed notebook).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from scalinglab.prose import fill_markdown

ONLY, NOT = "only-", "not-"
#: Report folders of user-data runs end in this (see ``runner.folders``).
USER = "user"
#: A test-sized run of the default design.
TINY = "tiny"


def variant_names(variant: str) -> frozenset[str]:
    """The names a cell tag may use for a run of report folder ``variant``.

    ``atari100k`` -> {atari100k}; ``tiny`` and ``default-tiny`` -> {..., default} (a
    smaller run of the same design); any ``user`` folder -> {user} only (the user's own
    data: no design's narrative applies).
    """
    parts = variant.split("-")
    if USER in parts:
        return frozenset({USER})
    names = {variant, *parts}
    if TINY in parts:
        names.add("default")
    return frozenset(names)


def keeps(cell: Any, variant: str) -> bool:
    """Whether ``cell`` belongs in the report of ``variant`` (see the module's tags)."""
    tags = [str(t) for t in (cell.get("metadata", {}).get("tags") or [])]
    names = variant_names(variant)
    only = {t[len(ONLY) :] for t in tags if t.startswith(ONLY)}
    never = {t[len(NOT) :] for t in tags if t.startswith(NOT)}
    if only and not (only & names):
        return False
    return not (never & names)


def prepare_cells(
    nb: Any,
    *,
    findings: Iterable[Mapping[str, Any]],
    variant: str,
    strict: bool = True,
    study: str = "",
) -> Any:
    """A copy of executed notebook ``nb`` with only ``variant``'s cells, prose filled in.

    Parameters
    ----------
    nb
        The executed notebook (``nbformat.NotebookNode``).
    findings
        The run's ``results.json`` findings.
    variant
        The run's report folder name.
    strict
        Raise on a reference to an unrecorded finding (a finished run); False
        marks it in the text (a failed run's report still renders).
    study
        Named in errors.

    Raises
    ------
    scalinglab.prose.UnknownFindingError
        ``strict`` and a markdown cell names a finding the run did not record.
    """
    out = copy.deepcopy(nb)
    found = list(findings)
    kept = []
    for i, cell in enumerate(out.cells):
        if not keeps(cell, variant):
            continue
        if cell.get("cell_type") == "markdown":
            src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
            where = f"{study + ', ' if study else ''}markdown cell {i}"
            cell.source = fill_markdown(src, found, strict=strict, where=where)
        kept.append(cell)
    out.cells = kept
    return out
