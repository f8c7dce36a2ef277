"""The report store: run ids, run folders built atomically, ``latest``, lookup.

Layout: ``reports/<study>/<variant>/<run_id>/`` holding ``report.html``,
``report-code.html``, ``results.json``, ``manifest.json`` and the executed
``<study>.ipynb``. A run is built in ``.tmp-<run_id>/`` next to its final place
and renamed once finished, whatever its status; ``latest`` is a relative
symlink to the newest *successful* run, replaced atomically (:func:`scalinglab.atomic.symlink`) so readers
never see it missing or half-made.

Run ids are ``YYYYmmddTHHMMSSZ-<gitsha7>[-dirty]-<6 hex>``; the random suffix
comes from :mod:`secrets` (never the seeded RNG) and the folder is created with
an exclusive ``mkdir``, retried on a clash, so ids never collide even when many
runs start in the same second. While a run is being built its folder holds
``.owner`` (host and process id), so a folder left behind by a process killed
hard (SIGKILL, out of memory) reads as ``killed`` rather than ``running``
(:func:`unfinished_state`); the file is removed when the run is finalized.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from scalinglab import atomic
from scalinglab.errors import StudyError
from scalinglab.paths import reports_dir

TMP_PREFIX = ".tmp-"
LATEST = "latest"
OWNER = ".owner"


class RunStatus(StrEnum):
    """Every state a run can be in, the one list of them (members compare equal to their text).

    A finished run's manifest records ``OK``, ``FAILED`` or ``INTERRUPTED``; its folder
    reads ``RUNNING`` while it is built. A ``.tmp-`` folder left unfinished is
    ``RUNNING`` (its owner process is alive), ``KILLED`` (the owner is gone) or
    ``INCOMPLETE`` (the owner cannot be told). A run request that did not start a run
    is ``UP_TO_DATE`` (the latest good report has this cache key), ``NO_VARIANT`` (the
    study has no such variant) or ``DRAFT`` (a draft study left out of ``--all``).
    """

    OK = "ok"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    RUNNING = "running"
    KILLED = "killed"
    INCOMPLETE = "incomplete"
    UP_TO_DATE = "up-to-date"
    NO_VARIANT = "no-variant"
    DRAFT = "draft"


#: States of a run folder whose run has not finished.
UNFINISHED = (RunStatus.RUNNING, RunStatus.KILLED, RunStatus.INCOMPLETE)


def new_run_id(
    *, commit: str | None = None, dirty: bool = False, now: datetime | None = None
) -> str:
    """A fresh run id: UTC time, short commit (``nogit`` outside git), dirty flag, random hex."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    sha = commit[:7] if commit else "nogit"
    return f"{stamp}-{sha}{'-dirty' if dirty else ''}-{secrets.token_hex(3)}"


def variant_dir(study: str, variant: str, *, reports_root: Path | None = None) -> Path:
    """``reports/<study>/<variant>``."""
    return (reports_root or reports_dir()) / study / variant


def allocate_run(
    study: str,
    variant: str,
    *,
    commit: str | None = None,
    dirty: bool = False,
    reports_root: Path | None = None,
    attempts: int = 100,
) -> tuple[str, Path]:
    """Reserve a run id: create ``.tmp-<run_id>/`` exclusively; return ``(run_id, tmp_dir)``.

    The id is retried while its temporary or final folder exists, so two runs
    (even in two processes) never share an id.
    """
    parent = variant_dir(study, variant, reports_root=reports_root)
    parent.mkdir(parents=True, exist_ok=True)
    for _ in range(attempts):
        run_id = new_run_id(commit=commit, dirty=dirty)
        tmp = parent / f"{TMP_PREFIX}{run_id}"
        try:
            tmp.mkdir()
        except FileExistsError:
            continue
        if (parent / run_id).exists():  # a finished run already took this id
            tmp.rmdir()
            continue
        (tmp / OWNER).write_text(json.dumps({"host": socket.gethostname(), "pid": os.getpid()}))
        return run_id, tmp
    raise StudyError(f"could not allocate a run id under {parent} after {attempts} attempts")


def finalize_run(tmp_dir: Path, run_id: str) -> Path:
    """Rename ``.tmp-<run_id>/`` to ``<run_id>/`` (atomic on one filesystem)."""
    final = tmp_dir.parent / run_id
    (tmp_dir / OWNER).unlink(missing_ok=True)
    os.rename(tmp_dir, final)
    return final


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def unfinished_state(tmp_dir: Path) -> RunStatus:
    """State of a ``.tmp-`` run folder: ``running``, ``killed`` or ``incomplete``.

    ``killed``: its owner process, on this host, no longer exists. ``incomplete``:
    the owner is unknown (an older folder) or on another host, so it cannot be told.
    """
    try:
        owner = json.loads((tmp_dir / OWNER).read_text())
        host, pid = owner["host"], int(owner["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return RunStatus.INCOMPLETE
    if host != socket.gethostname():
        return RunStatus.INCOMPLETE
    return RunStatus.RUNNING if _alive(pid) else RunStatus.KILLED


def set_latest(run_dir: Path) -> Path:
    """Point ``<variant>/latest`` at ``run_dir`` (relative symlink, atomic replace)."""
    return atomic.symlink(run_dir.name, run_dir.parent / LATEST)


def latest_run(study: str, variant: str, *, reports_root: Path | None = None) -> Path | None:
    """The run folder ``latest`` points to, or None."""
    link = variant_dir(study, variant, reports_root=reports_root) / LATEST
    if not link.is_symlink() and not link.exists():
        return None
    target = link.resolve()
    return target if (target / "manifest.json").is_file() else None


def read_manifest(run_dir: Path) -> dict:
    """The run's ``manifest.json`` (``{}`` when missing or unreadable)."""
    try:
        return json.loads((Path(run_dir) / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def write_json(path: Path, payload: dict) -> None:
    """Write JSON atomically (:func:`scalinglab.atomic.write_text`)."""
    atomic.write_text(path, json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n")


@dataclass(frozen=True)
class RunRef:
    """A run folder found in the store."""

    study: str
    variant: str
    run_id: str
    path: Path
    complete: bool  # False for a leftover ``.tmp-`` folder (killed hard)

    @property
    def key(self) -> str:
        return f"{self.study}/{self.variant}/{self.run_id}"


def list_runs(*, reports_root: Path | None = None) -> list[RunRef]:
    """Every run folder, sorted by study, variant and run id (oldest first)."""
    root = reports_root or reports_dir()
    out: list[RunRef] = []
    if not root.is_dir():
        return out
    for sdir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for vdir in sorted(p for p in sdir.iterdir() if p.is_dir() and not p.name.startswith(".")):
            for rdir in sorted(vdir.iterdir()):
                if rdir.is_symlink() or not rdir.is_dir():
                    continue
                tmp = rdir.name.startswith(TMP_PREFIX)
                run_id = rdir.name[len(TMP_PREFIX) :] if tmp else rdir.name
                if run_id.startswith("latest"):
                    continue
                out.append(RunRef(sdir.name, vdir.name, run_id, rdir, not tmp))
    out.sort(key=lambda r: (r.study, r.variant, r.run_id))
    return out


def resolve_run(spec: str, *, reports_root: Path | None = None) -> Path:
    """Find a run folder from a path, ``study/variant/run_id`` (or ``.../latest``), or an id prefix.

    Raises
    ------
    StudyError
        Nothing matches, or an id prefix matches several runs.
    """
    root = reports_root or reports_dir()
    as_path = Path(spec)
    for cand in (as_path, root / spec):
        if cand.is_dir() and (cand / "manifest.json").is_file():
            return cand.resolve()
    name = spec.rstrip("/").split("/")[-1]
    matches = [r for r in list_runs(reports_root=root) if r.complete and r.run_id.startswith(name)]
    if "/" in spec.strip("/"):
        matches = [r for r in matches if r.key.startswith(spec.strip("/"))]
    if len(matches) == 1:
        return matches[0].path.resolve()
    if not matches:
        raise StudyError(f"no run matches {spec!r} under {root}")
    raise StudyError(
        f"{spec!r} matches {len(matches)} runs: " + ", ".join(m.key for m in matches[:5])
    )


#: What pruning removes from an old run; ``results.json`` and ``manifest.json`` stay.
PRUNABLE = ("report.html", "report-code.html")


def prune_html(*, keep: int = 1, reports_root: Path | None = None) -> list[Path]:
    """Remove the HTML and executed notebook of all but the newest ``keep`` finished runs
    of every study and variant (and never the ``latest`` run), and every unfinished
    ``.tmp-`` run folder whose process is gone (``killed``); return what was removed.

    Findings (``results.json``) and manifests are kept for every version, so the index
    and ``reports diff`` still cover them.
    """
    if keep < 1:
        raise ValueError(f"keep must be >= 1, got {keep}")
    root = reports_root or reports_dir()
    removed: list[Path] = []
    by_variant: dict[tuple[str, str], list[RunRef]] = {}
    for ref in list_runs(reports_root=root):
        if ref.complete:
            by_variant.setdefault((ref.study, ref.variant), []).append(ref)
        elif unfinished_state(ref.path) == RunStatus.KILLED:  # its process is gone: nothing to keep
            shutil.rmtree(ref.path)
            removed.append(ref.path)
    for (study, variant), refs in by_variant.items():
        latest = variant_dir(study, variant, reports_root=root) / LATEST
        current = latest.resolve() if latest.is_symlink() else None
        for ref in refs[:-keep]:  # oldest first
            if current is not None and ref.path.resolve() == current:
                continue
            for f in [*(ref.path / n for n in PRUNABLE), *ref.path.glob("*.ipynb")]:
                if f.is_file():
                    f.unlink()
                    removed.append(f)
    return removed
