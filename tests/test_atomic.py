"""The one atomic write helper (``scalinglab.atomic``) and that every writer uses it."""

from __future__ import annotations

import errno
import os
import re
import threading
from pathlib import Path

import pytest

from scalinglab import atomic

LIB = Path(__file__).resolve().parents[1] / "lib" / "scalinglab"


def test_write_replaces_whole_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "sub" / "a.json"
    atomic.write_text(path, "old\n")
    atomic.write_bytes(path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["a.json"]


def test_new_file_has_the_usual_permissions_not_owner_only(tmp_path):
    old = os.umask(0o022)
    try:
        atomic.write_text(tmp_path / "a.txt", "x")
        with atomic.replacing(tmp_path / "b.bin") as tmp:
            tmp.write_bytes(b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b.bin").stat().st_mode & 0o777 == 0o644


def test_failed_write_keeps_the_old_file_and_removes_the_temporary(tmp_path, monkeypatch):
    path = tmp_path / "a.json"
    path.write_text("good\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(OSError) as info:
        atomic.write_text(path, "half")
    assert info.value.errno == errno.ENOSPC
    assert path.read_text() == "good\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_replacing_cleans_up_after_any_exception(tmp_path):
    path = tmp_path / "ds.nc"
    path.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt), atomic.replacing(path, suffix=".nc") as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".tmp-ds.nc-")
        assert tmp.name.endswith(".nc")
        tmp.write_bytes(b"partial")
        raise KeyboardInterrupt
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["ds.nc"]


def test_concurrent_writers_never_share_a_temporary(tmp_path):
    # A fixed temporary name (``x.json.tmp``) lets two writers clobber each other's
    # half-written file; unique names make each replace whole.
    path = tmp_path / "x.json"
    payloads = [(str(i) * 200_000).encode() for i in range(8)]
    errors: list[BaseException] = []

    def write(data: bytes) -> None:
        try:
            for _ in range(5):
                atomic.write_bytes(path, data)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(d,)) for d in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert path.read_bytes() in payloads
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_symlink_is_replaced_atomically(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    atomic.symlink("a", tmp_path / "latest")
    atomic.symlink("b", tmp_path / "latest")
    assert os.readlink(tmp_path / "latest") == "b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "latest"]


def test_no_module_replaces_files_by_hand():
    """Every atomic replace in the library goes through ``scalinglab.atomic``."""
    offenders = []
    pattern = re.compile(r"os\.replace\(|os\.rename\(|\.replace\(\s*(folder|path|tmp)\b|mkstemp\(")
    for path in sorted(LIB.rglob("*.py")):
        if path.name == "atomic.py":
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if pattern.search(code) and "finalize_run" not in code:
                offenders.append(f"{path.relative_to(LIB)}:{i}: {line.strip()}")
    # The one rename left: a finished run folder (a directory, not a file) in the store.
    offenders = [o for o in offenders if not (o.startswith("runner/store.py") and "rename" in o)]
    assert offenders == []
