"""The report store: run ids, run folders built atomically, ``latest``, lookup.

Layout: ``reports/<study>/<variant>/<run_id>/`` holding ``report.html``,
``report-code.html``, ``results.json``, ``manifest.json`` and the executed
``<study>.ipynb``. A run is built in ``.tmp-<run_id>/`` next to its final place
and renamed once finished, whatever its status; ``latest`` is a relative
symlink to the newest *successful* run, replaced atomically
(:func:`scalinglab.atomic.symlink`) so readers never see it missing or half-made.

Run ids are ``YYYYmmddTHHMMSSZ-<gitsha7>[-dirty]-<6 hex>``; the random suffix
comes from :mod:`secrets` (never the seeded RNG) and the folder is created with
an exclusive ``mkdir``, retried on a clash, so ids never collide even when many
runs start in the same second. While a run is being built its folder holds
``.owner`` (host and process id), so a folder left behind by a process killed
hard (SIGKILL, out of memory) reads as ``killed`` rather than ``running``
(:func:`unfinished_state`); the file is removed when the run is finalized.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from scalinglab import atomic
from scalinglab.errors import StorageError, StudyError
from scalinglab.paths import reports_dir
from scalinglab.provenance import sha256_bytes

TMP_PREFIX = ".tmp-"
LATEST = "latest"
OWNER = ".owner"
#: Seconds after which a ``.tmp-`` run folder without a readable owner counts as killed.
OWNERLESS_GRACE_S = 600.0


class RunStatus(StrEnum):
    """Every state a run can be in, the one list of them (members compare equal to their text).

    A finished run's manifest records ``OK``, ``FAILED`` or ``INTERRUPTED``; its folder
    reads ``RUNNING`` while it is built. A ``.tmp-`` folder left unfinished is
    ``RUNNING`` (its owner process is alive), ``KILLED`` (the owner is gone) or
    ``INCOMPLETE`` (the owner cannot be told). A finished run whose ``manifest.json``
    or ``results.json`` cannot be read, or whose ``results.json`` no longer has the
    SHA-256 its manifest recorded, is ``CORRUPT`` (:func:`check_run`). A run request
    that did not start a run is ``UP_TO_DATE`` (the latest good report has this cache
    key), ``NO_VARIANT`` (the study has no such variant) or ``DRAFT`` (a draft study
    left out of ``--all``).
    """

    OK = "ok"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    RUNNING = "running"
    KILLED = "killed"
    INCOMPLETE = "incomplete"
    CORRUPT = "corrupt"
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
    for _ in range(attempts):
        run_id = new_run_id(commit=commit, dirty=dirty)
        tmp = parent / f"{TMP_PREFIX}{run_id}"
        try:
            parent.mkdir(parents=True, exist_ok=True)
            tmp.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise storage_error(exc, parent, run_id) from exc
        if (parent / run_id).exists():  # a finished run already took this id
            tmp.rmdir()
            continue
        with writing_run(tmp, run_id):  # the owner whole, or no folder at all
            owner = {"host": socket.gethostname(), "pid": os.getpid()}
            atomic.write_text(tmp / OWNER, json.dumps(owner))
        return run_id, tmp
    raise StudyError(f"could not allocate a run id under {parent} after {attempts} attempts")


def discard_run(tmp_dir: Path, run_id: str) -> None:
    """Remove a run that could not be written: its ``.tmp-`` folder, or its final folder
    if it got that far (never ``latest``'s target: ``latest`` moves last)."""
    for path in (tmp_dir, tmp_dir.parent / run_id):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def writing_run(tmp_dir: Path, run_id: str) -> Iterator[None]:
    """Writes of a run's own files: an ``OSError`` (a full disk, a read-only or over-quota
    filesystem) removes the run's folder (:func:`discard_run`) and becomes a one-line
    :class:`~scalinglab.errors.StorageError`, so no half-written run is left ``running``.
    """
    try:
        yield
    except OSError as exc:
        discard_run(tmp_dir, run_id)
        raise storage_error(exc, tmp_dir.parent, run_id) from exc


def storage_error(exc: OSError, folder: Path, run_id: str) -> StorageError:
    """The one-line error for a run that could not be written under ``folder``."""
    cause = exc.strerror or str(exc) or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename else ""
    return StorageError(
        f"could not write run {run_id} under {folder}: {cause}{where}; "
        "nothing of this run was kept and earlier reports are untouched "
        "(free some space and run it again)"
    )


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

    ``killed``: its owner process, on this host, no longer exists, or the folder has
    no readable owner and has not changed for :data:`OWNERLESS_GRACE_S` seconds (the
    owner is written, atomically, right after the folder is made: a folder still
    without one was left by a process that died in between, or by a version that
    wrote no owner). ``incomplete``: the owner is on another host, or the ownerless
    folder is younger than the grace period, so it cannot be told.
    """
    try:
        owner = json.loads((tmp_dir / OWNER).read_text())
        host, pid = owner["host"], int(owner["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        try:
            age = time.time() - tmp_dir.stat().st_mtime
        except OSError:
            return RunStatus.INCOMPLETE
        return RunStatus.KILLED if age > OWNERLESS_GRACE_S else RunStatus.INCOMPLETE
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
class Integrity:
    """What :func:`check_run` found: ``problems`` (each names its file; the run is corrupt)
    and ``notes`` (worth saying, not a fault: a manifest older than the results hash)."""

    problems: list[str]
    notes: list[str]

    @property
    def corrupt(self) -> bool:
        return bool(self.problems)


def results_sha256(run_dir: Path) -> str | None:
    """SHA-256 of the run's ``results.json`` as stored in its manifest (None if absent)."""
    try:
        return sha256_bytes((Path(run_dir) / "results.json").read_bytes())
    except OSError:
        return None


def check_run(run_dir: Path) -> Integrity:
    """Check a finished run folder's ``manifest.json`` and ``results.json``.

    The manifest must be a JSON object; ``results.json`` must be JSON with a
    ``findings`` list and, when the manifest records ``results_sha256`` (every run
    since the hash was introduced), have exactly that SHA-256. A manifest without the
    hash gives the note "no hash recorded" (the file is still parsed), not a problem.

    Returns
    -------
    Integrity
        ``problems`` empty when the run is intact.
    """
    run_dir = Path(run_dir)
    problems: list[str] = []
    notes: list[str] = []
    mpath, rpath = run_dir / "manifest.json", run_dir / "results.json"
    manifest: dict = {}
    try:
        loaded = json.loads(mpath.read_text())
        if not isinstance(loaded, dict):
            raise ValueError("not a JSON object")
        manifest = loaded
    except FileNotFoundError:
        problems.append(f"{mpath}: missing")
    except (OSError, ValueError) as exc:
        problems.append(f"{mpath}: corrupt ({_short(exc)})")
    recorded = manifest.get("results_sha256")
    try:
        data = rpath.read_bytes()
    except FileNotFoundError:
        # every run writes one; without a recorded hash the manifest may predate that
        (problems if recorded or not manifest else notes).append(f"{rpath}: missing")
        return Integrity(problems, notes)
    except OSError as exc:
        problems.append(f"{rpath}: unreadable ({_short(exc)})")
        return Integrity(problems, notes)
    if recorded:
        actual = sha256_bytes(data)
        if actual != recorded:
            problems.append(
                f"{rpath}: corrupt (SHA-256 {actual[:12]}... differs from the "
                f"{str(recorded)[:12]}... recorded in manifest.json)"
            )
            return Integrity(problems, notes)
    elif manifest:
        notes.append(f"{rpath}: no hash recorded (manifest written before results were hashed)")
    try:
        loaded = json.loads(data)
        if not isinstance(loaded, dict) or not isinstance(loaded.get("findings"), list):
            raise ValueError("no 'findings' list")
    except ValueError as exc:
        problems.append(f"{rpath}: corrupt ({_short(exc)})")
    return Integrity(problems, notes)


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__


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
