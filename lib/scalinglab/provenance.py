"""Where a result came from: git state, package versions, content hashes.

Used by the runner's manifest and by every cached experiment dataset, so that a
number in a report can be traced to the code, inputs and environment that made it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata as md
import json
import platform
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scalinglab.paths import PACKAGE_DIR, lock_file, repo_root

#: Packages whose versions every manifest and dataset records.
KEY_PACKAGES = (
    "numpy",
    "scipy",
    "pandas",
    "xarray",
    "h5netcdf",
    "statsmodels",
    "arviz",
    "matplotlib",
    "dask",
    "distributed",
    "scikit-learn",
    "papermill",
    "nbconvert",
    "jupytext",
    "torch",
    "numba",
    "tqdm",
)


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def file_hash(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, streamed."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tree_hash(root: str | Path, *, patterns: Iterable[str] = ("*.py",)) -> str:
    """Hash of every file matching ``patterns`` under ``root`` (paths and contents, sorted)."""
    root = Path(root)
    h = hashlib.sha256()
    files = sorted({p for pat in patterns for p in root.rglob(pat) if "__pycache__" not in p.parts})
    for p in files:
        h.update(str(p.relative_to(root)).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def lib_hash() -> str:
    """Hash of the ``scalinglab`` package source."""
    return tree_hash(PACKAGE_DIR)


def lock_hash() -> str | None:
    """Hash of the pinned environment file, or None if it is missing."""
    p = lock_file()
    return file_hash(p) if p.exists() else None


def canonical_json(obj: object) -> str:
    """JSON with sorted keys and no whitespace: the input of every config hash."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def config_hash(config: dict, *, length: int = 12) -> str:
    """Short stable hash of a JSON-able config dict."""
    return sha256_bytes(canonical_json(config).encode())[:length]


def config_dict(config: Any, *, engine_version: str, omit_if_default: dict) -> dict:
    """A dataclass config as the dict its cache key is hashed from.

    Fields added to a config after its results were committed are left out while they
    hold the value in ``omit_if_default`` (the value that reproduces the older
    behaviour), so an older config keeps its hash and its committed data; the engine
    version is added, so changing what a run computes changes every key.
    """
    d = dataclasses.asdict(config)
    for k, default in omit_if_default.items():
        if d[k] == default:
            del d[k]
    d["engine_version"] = engine_version
    return d


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=repo_root(), capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout


def git_commit() -> str | None:
    """Full hash of HEAD, or None outside a git checkout."""
    out = _git("rev-parse", "HEAD")
    return out.strip() if out else None


def git_dirty(*, paths: Iterable[str] = ("lib", "notebooks", "pyproject.toml")) -> bool:
    """True if files under ``paths`` differ from HEAD (untracked, not ignored, files count)."""
    out = _git("status", "--porcelain", "--untracked-files=normal", "--", *paths)
    return bool(out and out.strip())


def git_diff(*, paths: Iterable[str] = ("lib", "notebooks", "pyproject.toml")) -> str:
    """The uncommitted diff of ``paths`` (empty when clean)."""
    return _git("diff", "HEAD", "--", *paths) or ""


def package_versions(names: Iterable[str] = KEY_PACKAGES) -> dict[str, str]:
    """Installed versions of ``names`` (missing packages are left out)."""
    out = {}
    for n in names:
        try:
            out[n] = md.version(n)
        except md.PackageNotFoundError:
            continue
    return out


def environment() -> dict:
    """Python, platform and package versions, and the lock hash."""
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": package_versions(),
        "lock_hash": lock_hash(),
    }


def provenance_attrs(config: dict) -> dict[str, str]:
    """Flat string attrs for an xarray Dataset: config, its hash, git and environment."""
    from scalinglab import __version__

    commit = git_commit()
    return {
        "config": canonical_json(config),
        "config_hash": config_hash(config),
        "scalinglab_version": __version__,
        "lib_hash": lib_hash(),
        "git_commit": commit or "unknown",
        "git_dirty": str(git_dirty()) if commit else "unknown",
        "environment": canonical_json(environment()),
    }
