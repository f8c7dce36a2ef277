"""What a run was made from: the manifest and the cache key.

``manifest.json`` records everything needed to trace or redo a run: study,
variant, run id, status and error, times, merged parameters and their hash,
the findings, hashes of the source, inputs and library, git commit / dirty
flag / diff, Python and package versions with the lock hash, per-cell timings,
compute mode, the command as typed and the hashes of ``report.html`` and
``results.json`` (``verify`` and ``status`` check the latter).

The cache key hashes what determines a report: its code and markdown cells, the
merged parameters, the input hashes, the lock hash and the library hash. Batch
regeneration skips a study/variant whose latest good run has the same key.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from scalinglab.provenance import (
    canonical_json,
    config_hash,
    file_hash,
    git_commit,
    git_diff,
    git_dirty,
    lib_hash,
    lock_hash,
    sha256_bytes,
)

MANIFEST_VERSION = 1


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


def cache_key(
    *,
    cells: list[str],
    parameters: dict[str, Any],
    inputs: dict[str, str],
    lock: str | None,
    lib: str,
) -> str:
    """SHA-256 over the cells, merged parameters, input hashes, lock hash and lib hash."""
    return sha256_bytes(
        canonical_json(
            {"cells": cells, "parameters": parameters, "inputs": inputs, "lock": lock, "lib": lib}
        ).encode()
    )


def cell_hashes(cells: list[str]) -> list[str]:
    """Short SHA-256 of each cell (as in the cache key), so ``status`` can name the cells
    that changed since a run."""
    return [sha256_bytes(c.encode())[:16] for c in cells]


def with_inputs(
    hashes: dict[str, Any], cells: list[str], parameters: dict[str, Any], inputs: dict[str, str]
) -> dict[str, Any]:
    """``hashes`` with new input hashes and the cache key recomputed from them.

    The runner hashes inputs again after a run: a study that creates or
    refreshes its own cached data (matched by its ``inputs`` globs) then stores
    the key that the next unchanged request will compute.
    """
    return {
        **hashes,
        "input_hashes": inputs,
        "cache_key": cache_key(
            cells=cells,
            parameters=parameters,
            inputs=inputs,
            lock=hashes["lock_hash"],
            lib=hashes["lib_hash"],
        ),
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
    """Hashes that identify a run's science (and its cache key)."""
    lib = lib_hash()
    lock = lock_hash()
    return {
        "source_hash": file_hash(study_path),
        "input_hashes": inputs,
        "lib_hash": lib,
        "lock_hash": lock,
        "parameters_hash": config_hash(parameters, length=64),
        "cell_hashes": cell_hashes(cells),
        "cache_key": cache_key(
            cells=cells, parameters=parameters, inputs=inputs, lock=lock, lib=lib
        ),
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
    results_sha256: str | None = None,
) -> dict[str, Any]:
    """Assemble the manifest dict (see the module docstring for the fields)."""
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
        "lock_hash": hashes["lock_hash"],
        "cache_key": hashes["cache_key"],
        "cell_hashes": hashes.get("cell_hashes"),
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
