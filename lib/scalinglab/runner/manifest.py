"""What a run was made from: the manifest and the cache key.

``manifest.json`` records everything needed to trace or redo a run: study,
variant, run id, status and error, times, merged parameters and their hash,
the findings, hashes of the source, inputs and library, git commit / dirty
flag / diff, Python and package versions with the lock hash, per-cell timings,
compute mode, the command as typed and the hashes of ``report.html`` and
``results.json`` (``verify`` and ``status`` check the latter).

The key has two parts (``key_format`` 2):

- the **execution key** hashes what determines the findings and outputs: the code
  cells, the merged parameters, the input hashes, the lock hash and the hash of the
  library modules the notebook imports (``lib_modules``: each module's hash, found by
  :mod:`scalinglab.runner.imports`; ``lib_hash`` is the hash of that set), never the
  rest of ``lib/``;
- the **prose hash** hashes the markdown cells.

``cache_key`` hashes both. A study/variant whose latest good run has the same cache
key is up to date; one with the same execution key but other prose is re-rendered
from that run's executed notebook and findings, without running a kernel
(:mod:`scalinglab.runner.render`). Manifests written before ``key_format`` 2 hashed
the whole package and the markdown into one key: they match neither part, so their
study is stale once ("key format changed") and runs in full.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from scalinglab.paths import PACKAGE_DIR
from scalinglab.provenance import (
    canonical_json,
    config_hash,
    file_hash,
    git_commit,
    git_diff,
    git_dirty,
    lock_hash,
    sha256_bytes,
)
from scalinglab.runner.imports import imported_modules, module_hashes

MANIFEST_VERSION = 2

#: The package whose imported modules are hashed (tests point it at a copy).
LIBRARY_DIR = PACKAGE_DIR

#: Version of the cache key's recipe (see the module docstring); older manifests have none.
KEY_FORMAT = 2


def _under(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def input_hashes(
    parameters: dict[str, Any], input_globs: list[str], *, root: Path
) -> dict[str, str]:
    """SHA-256 of every input file, keyed by its path relative to ``root``.

    Inputs are string parameters naming an existing file (relative to the root,
    to ``notebooks/``, or absolute, inside the repository or not; a
    comma-separated list of such paths counts too), and the files matching the
    header's ``inputs`` globs (relative to the root). Files outside the
    repository are keyed by their absolute path, so editing a user's score file
    changes the cache key.
    """
    files: set[Path] = set()
    for value in parameters.values():
        values = value if isinstance(value, list) else [value]
        values = [
            part.strip()
            for v in values
            if isinstance(v, str)
            for part in ([v, *v.split(",")] if "," in v else [v])
        ]
        for v in values:
            if not isinstance(v, str) or not v or "\n" in v or len(v) > 4096:
                continue
            for cand in (Path(v), root / v, root / "notebooks" / v):
                try:
                    if cand.is_file():
                        files.add(cand.resolve())
                        break
                except OSError:
                    continue
    for pattern in input_globs:
        for match in glob.glob(str(root / pattern), recursive=True):
            p = Path(match)
            if p.is_file():
                files.add(p.resolve())
    base = root.resolve()
    return {
        (str(p.relative_to(base)) if _under(p, base) else str(p)): file_hash(p)
        for p in sorted(files)
    }


def code_cells(cells: list[str]) -> list[str]:
    """The code cells among ``cells`` (:meth:`~scalinglab.runner.study.Study.cell_sources`)."""
    return [c for c in cells if c.startswith("code:")]


def markdown_cells(cells: list[str]) -> list[str]:
    """The markdown cells among ``cells``: the prose, outside the execution key."""
    return [c for c in cells if c.startswith("markdown:")]


def library_hashes(cells: list[str], *, where: str = "notebook") -> dict[str, str]:
    """Hash of each ``scalinglab`` module the code ``cells`` import, transitively.

    Raises
    ------
    StudyError
        A code cell or library module does not parse.
    """
    sources = [c.partition(":")[2] for c in code_cells(cells)]
    modules = imported_modules(sources, where=where, package_dir=LIBRARY_DIR)
    return module_hashes(modules, package_dir=LIBRARY_DIR)


def modules_hash(modules: dict[str, str]) -> str:
    """One hash of the imported modules' hashes (the manifest's ``lib_hash``)."""
    return sha256_bytes(canonical_json(modules).encode())


def execution_key(
    *,
    cells: list[str],
    parameters: dict[str, Any],
    inputs: dict[str, str],
    lock: str | None,
    lib: str,
) -> str:
    """SHA-256 over the code cells, merged parameters, input hashes, lock and modules hash.

    Markdown cells among ``cells`` are left out: prose does not change what runs.
    """
    return sha256_bytes(
        canonical_json(
            {
                "cells": code_cells(cells),
                "parameters": parameters,
                "inputs": inputs,
                "lock": lock,
                "lib": lib,
            }
        ).encode()
    )


def prose_hash(cells: list[str]) -> str:
    """SHA-256 of the markdown cells among ``cells``, in order."""
    return sha256_bytes(canonical_json(markdown_cells(cells)).encode())


def cache_key(*, execution: str, prose: str) -> str:
    """SHA-256 over the execution key and the prose hash: same key, same report."""
    return sha256_bytes(
        canonical_json({"key_format": KEY_FORMAT, "execution": execution, "prose": prose}).encode()
    )


def cell_hashes(cells: list[str]) -> list[str]:
    """Short SHA-256 of each cell, so ``status`` can name the cells that changed since a run."""
    return [sha256_bytes(c.encode())[:16] for c in cells]


def _keys(
    cells: list[str], parameters: dict[str, Any], inputs: dict[str, str], lock: str | None, lib: str
) -> dict[str, Any]:
    execution = execution_key(cells=cells, parameters=parameters, inputs=inputs, lock=lock, lib=lib)
    prose = prose_hash(cells)
    return {
        "key_format": KEY_FORMAT,
        "execution_key": execution,
        "prose_hash": prose,
        "cache_key": cache_key(execution=execution, prose=prose),
    }


def with_inputs(
    hashes: dict[str, Any], cells: list[str], parameters: dict[str, Any], inputs: dict[str, str]
) -> dict[str, Any]:
    """``hashes`` with new input hashes and the keys recomputed from them.

    The runner hashes inputs again after a run: a study that creates or
    refreshes its own cached data (matched by its ``inputs`` globs) then stores
    the key that the next unchanged request will compute.
    """
    return {
        **hashes,
        "input_hashes": inputs,
        **_keys(cells, parameters, inputs, hashes["lock_hash"], hashes["lib_hash"]),
    }


def git_state() -> dict[str, Any]:
    """``{"commit", "dirty", "diff"?}`` of the repository (diff only when dirty)."""
    commit = git_commit()
    dirty = bool(commit) and git_dirty()
    state: dict[str, Any] = {"commit": commit, "dirty": dirty}
    if dirty:
        state["diff"] = git_diff()
    return state


def source_info(
    study_path: Path, cells: list[str], parameters: dict[str, Any], inputs: dict[str, str]
) -> dict[str, Any]:
    """Hashes that identify a run's science, its prose and its keys.

    Raises
    ------
    StudyError
        A code cell or an imported library module does not parse.
    """
    modules = library_hashes(cells, where=str(study_path))
    lib = modules_hash(modules)
    lock = lock_hash()
    return {
        "source_hash": file_hash(study_path),
        "input_hashes": inputs,
        "lib_hash": lib,
        "lib_modules": modules,
        "lock_hash": lock,
        "parameters_hash": config_hash(parameters, length=64),
        "cell_hashes": cell_hashes(cells),
        **_keys(cells, parameters, inputs, lock, lib),
    }


def build_manifest(
    *,
    study: str,
    title: str,
    variant: str,
    run_id: str,
    status: str,
    error: str | None,
    started: str,
    finished: str | None,
    duration: float | None,
    parameters: dict[str, Any],
    hashes: dict[str, Any],
    git: dict[str, Any],
    environment: dict[str, Any],
    version: str,
    compute_mode: str,
    executor: str,
    command: str,
    results: list[dict],
    cell_timings: list[dict],
    report_html_sha256: str | None,
    rendered_from: str | None = None,
    results_sha256: str | None = None,
) -> dict[str, Any]:
    """Assemble the manifest dict (see the module docstring for the fields).

    ``rendered_from`` is the run id whose executed notebook and findings a
    render-only run reused (None for a run that executed the notebook).
    """
    manifest: dict[str, Any] = {
        "manifest_version": MANIFEST_VERSION,
        "study": study,
        "title": title,
        "variant": variant,
        "run_id": run_id,
        "status": status,
        "error": error,
        "started": started,
        "finished": finished,
        "duration": duration,
        "parameters": parameters,
        "parameters_hash": hashes["parameters_hash"],
        "results": results,
        "source_hash": hashes["source_hash"],
        "input_hashes": hashes["input_hashes"],
        "lib_hash": hashes["lib_hash"],
        "lib_modules": hashes.get("lib_modules"),
        "lock_hash": hashes["lock_hash"],
        "key_format": hashes.get("key_format"),
        "execution_key": hashes.get("execution_key"),
        "prose_hash": hashes.get("prose_hash"),
        "cache_key": hashes["cache_key"],
        "cell_hashes": hashes.get("cell_hashes"),
        "rendered_from": rendered_from,
        "scalinglab_version": version,
        "git_commit": git.get("commit"),
        "git_dirty": bool(git.get("dirty")),
        "environment": environment,
        "cell_timings": cell_timings,
        "compute_mode": compute_mode,
        "executor": executor,
        "command": command,
        "report_html_sha256": report_html_sha256,
        "results_sha256": results_sha256,
    }
    if git.get("dirty"):
        manifest["diff"] = git.get("diff", "")
    return manifest
