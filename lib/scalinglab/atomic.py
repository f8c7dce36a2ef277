"""Atomic file writes: the one way this package replaces a file.

A reader (another process, a notebook, the index) sees either the old file or the
new one, never a half-written file, and a write that fails (a full disk, Ctrl-C, an
exception while serializing) leaves the old file untouched and no temporary behind.
Every writer follows the same steps:

1. write into a temporary file in the *same folder* (so the rename cannot cross a
   filesystem), named ``.tmp-<name>-<random hex>``: two writers of one path never
   share a temporary, and the ``.tmp-`` prefix marks it as not-a-result to every
   reader that lists a folder;
2. ``fsync`` it, so the rename never publishes a file whose data is not on disk;
3. ``os.replace`` it onto the path (atomic on POSIX), then ``fsync`` the folder so
   the rename itself survives a crash;
4. on any failure, remove the temporary and re-raise.

:func:`write_bytes` and :func:`write_text` cover data in memory; :func:`replacing`
yields a temporary path for writers that need one (``torch.save``, ``to_netcdf``,
``pickle.dump`` to a file); :func:`symlink` replaces a symbolic link the same way.
A new file gets the usual permissions (``0o666`` less the umask), unlike
:func:`tempfile.mkstemp`'s owner-only ``0o600``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

#: Prefix of every temporary this module makes (readers skip names that start with it).
TMP_PREFIX = ".tmp-"


def temporary_name(path: Path, *, suffix: str = "") -> Path:
    """A fresh temporary path next to ``path``: ``.tmp-<name>-<12 hex><suffix>``."""
    return path.with_name(f"{TMP_PREFIX}{path.name}-{os.urandom(6).hex()}{suffix}")


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    # A folder's entries are made durable by fsync on the folder; some filesystems
    # refuse to open or sync a folder, and durability is then the filesystem's own.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def replacing(
    path: str | os.PathLike[str], *, suffix: str = "", durable: bool = True
) -> Iterator[Path]:
    """Yield a temporary path in ``path``'s folder; on success it replaces ``path``.

    Parameters
    ----------
    path
        The file to (re)place. Its folder is created if missing.
    suffix
        Appended to the temporary's name, for writers that choose a format by suffix.
    durable
        fsync the file and its folder (about 12 ms a write on ext4). False keeps the
        rename's atomicity (no reader ever sees a partial file) without the fsyncs, for a
        file rewritten many times a run whose last write is made durable by its caller.

    Yields
    ------
    Path
        Where to write (nothing exists there yet). When the block ends without an
        exception, the file is fsynced and renamed onto ``path``; when it raises
        (``OSError`` of a full disk, ``KeyboardInterrupt``, anything), the temporary is
        removed and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path, suffix=suffix)
    try:
        yield tmp
        if durable:
            _fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if durable:
        _fsync_dir(path.parent)


def write_bytes(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> Path:
    """Replace ``path`` with ``data`` atomically (see the module docstring); return the path."""
    path = Path(path)
    with replacing(path, durable=durable) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    return path


def write_text(
    path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8", durable: bool = True
) -> Path:
    """Replace ``path`` with ``text`` (encoded with ``encoding``) atomically; return the path."""
    return write_bytes(path, text.encode(encoding), durable=durable)


def symlink(target: str | os.PathLike[str], link: str | os.PathLike[str]) -> Path:
    """Point the symbolic link ``link`` at ``target`` (created beside it, then renamed).

    Readers of ``link`` see the old target or the new one, never a missing link.
    """
    link = Path(link)
    tmp = temporary_name(link)
    os.symlink(target, tmp)
    try:
        os.replace(tmp, link)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(link.parent)
    return link
