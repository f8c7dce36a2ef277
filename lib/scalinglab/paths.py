"""Where things live in the repository.

Paths come from the package, never from the working directory: JupyterLab starts
kernels in ``notebooks/`` while batch runs start elsewhere. ``SCALINGLAB_ROOT``
overrides the repository root (tests use it to work in a temporary copy).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def repo_root() -> Path:
    """Return the repository root (``SCALINGLAB_ROOT`` if set, else two levels above lib/)."""
    env = os.environ.get("SCALINGLAB_ROOT")
    if env:
        return Path(env).resolve()
    return PACKAGE_DIR.parent.parent


def notebooks_dir() -> Path:
    """Folder holding one ``<study>.py`` notebook per study."""
    return repo_root() / "notebooks"


def data_dir() -> Path:
    """Folder holding inputs and experiment results (netCDF with provenance)."""
    return repo_root() / "data"


def reports_dir() -> Path:
    """Folder holding ``<study>/<variant>/<run_id>/`` report runs and ``index.html``."""
    return repo_root() / "reports"


def lock_file() -> Path:
    """The pinned environment (pip constraints) used to regenerate reports."""
    return PACKAGE_DIR.parent / "constraints.txt"


def require_checkout() -> Path:
    """The repository root, or a clear error when the package runs outside a checkout.

    Raises
    ------
    scalinglab.errors.StudyError
        No ``notebooks/`` folder under :func:`repo_root` (a non-editable install,
        or a wrong ``SCALINGLAB_ROOT``).
    """
    from scalinglab.errors import StudyError

    root = repo_root()
    if not notebooks_dir().is_dir():
        raise StudyError(
            f"no notebooks/ folder under {root}: studies and reports live in a checkout of the "
            "repository; install it editable there (pip install -e .) or set SCALINGLAB_ROOT "
            "to the checkout"
        )
    return root


def resolve_input(path: str | Path) -> Path:
    """An input path as a notebook names it: absolute, relative to the working directory if
    it exists there, else relative to the repository root (a study's variants name committed
    files such as ``data/published/...`` from the root, while kernels run in ``notebooks/``)."""
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    rooted = repo_root() / p
    return rooted if rooted.exists() else p
