"""What hostile or broken input meets: worker paths outside the repository, a full disk
during a run, corrupt ``results.json`` and ``manifest.json`` files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scalinglab.errors import StudyError
from scalinglab.runner.batch import receive


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for sub in ("notebooks", "data", "reports"):
        (root / sub).mkdir(parents=True)
    return root


def _value(**over) -> dict:
    value = {
        "study": "fixture_basic",
        "variant": "tiny",
        "status": "ok",
        "run_id": "20260101T000000Z-abcdef0-123456",
        "error": None,
        "findings": [],
        "duration": 1.0,
        "files": {"manifest.json": b"{}", "results.json": b"{}"},
        "data_files": {"fixture/good.nc": b"good"},
    }
    value.update(over)
    return value


def test_receive_writes_confined_paths(tmp_path, monkeypatch):
    root = _repo(tmp_path)
    monkeypatch.setenv("SCALINGLAB_ROOT", str(root))
    res = receive(_value())
    assert (root / "data" / "fixture" / "good.nc").read_bytes() == b"good"
    assert res.run_dir == root / "reports" / "fixture_basic" / "tiny" / res.run_id
    assert (res.run_dir / "manifest.json").read_bytes() == b"{}"


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("data_files", "../../escaped-file.txt"),
        ("data_files", "fixture/../../escaped-file.txt"),
        ("data_files", "ABSOLUTE"),
        ("data_files", "outlink/escaped-file.txt"),
        ("files", "../escaped-file.txt"),
        ("run_id", "../../../escaped-file.txt"),
        ("study", "../.."),
    ],
)
def test_receive_refuses_worker_paths_outside_the_repository(tmp_path, monkeypatch, field, bad):
    root = _repo(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "data" / "outlink").symlink_to(outside)  # a symlink that leaves the repository
    monkeypatch.setenv("SCALINGLAB_ROOT", str(root))
    if bad == "ABSOLUTE":
        bad = str(tmp_path / "escaped-file.txt")
    if field == "data_files":
        value = _value(data_files={"fixture/good.nc": b"good", bad: b"evil"})
    elif field == "files":
        value = _value(files={"manifest.json": b"{}", bad: b"evil"})
    else:
        value = _value(**{field: bad})
    with pytest.raises(StudyError, match="refused") as info:
        receive(value)
    assert repr(bad) in str(info.value)
    # nothing written anywhere: not the escaped file, not the good file sent with it
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == []
    assert not (root / "reports" / "fixture_basic").exists() or not any(
        (root / "reports" / "fixture_basic").rglob("*.json")
    )
    assert not os.path.exists(tmp_path / "escaped-file.txt")
