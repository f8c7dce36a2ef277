"""What hostile or broken input meets: worker paths outside the repository, a full disk
during a run, corrupt ``results.json`` and ``manifest.json`` files."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import scalinglab.cli as cli
from scalinglab import atomic
from scalinglab.errors import StudyError
from scalinglab.runner import store
from scalinglab.runner.landing import receive
from scalinglab.runner.pipeline import run_study

FIXTURES = Path(__file__).parent / "fixtures" / "studies"


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


# --- real runs of a fixture study -------------------------------------------------------


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    from scalinglab.runner import manifest as manifest_mod

    root = tmp_path_factory.mktemp("lab")
    for sub in ("notebooks", "data/fixture", "reports"):
        (root / sub).mkdir(parents=True)
    shutil.copy(FIXTURES / "fixture_basic.py", root / "notebooks")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCALINGLAB_ROOT", str(root))
        # other engineers edit lib/ while the tests run: the cache key must not follow them
        mp.setattr(manifest_mod, "library_hashes", lambda cells, where="": {"x": "pinned"})
        yield root


@pytest.fixture(scope="module")
def good_run(lab):
    res = run_study("fixture_basic", command="pytest good run")
    assert res.status == "ok", res.error
    return res.run_dir


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _reports_state(lab: Path) -> tuple[str, dict[str, bytes]]:
    vdir = lab / "reports" / "fixture_basic" / "default"
    return os.readlink(vdir / "latest"), _snapshot(vdir / os.readlink(vdir / "latest"))


def _enospc_on(pred):
    """A stand-in for ``atomic.write_bytes`` that fails like a full disk when ``pred(path)``."""
    real = atomic.write_bytes
    calls: list[str] = []

    def write_bytes(path, data, **kwargs):
        calls.append(Path(path).name)
        if pred(Path(path), calls):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data, **kwargs)

    return write_bytes


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "pred", "exit_code"),
    [
        # 0 bytes free: the very first write (the run folder's owner) fails
        ("nothing-fits", lambda p, calls: True, 2),
        # the manifest that marks the run `running`
        ("first-manifest", lambda p, calls: p.name == "manifest.json", 2),
        # the notebook ran, then the final manifest cannot be written
        (
            "final-manifest",
            lambda p, calls: p.name == "manifest.json" and calls.count("manifest.json") > 1,
            2,
        ),
        # the report pages: the run is recorded as failed, saying why
        ("report-html", lambda p, calls: p.name.startswith("report"), 1),
    ],
    ids=["nothing-fits", "first-manifest", "final-manifest", "report-html"],
)
def test_a_full_disk_while_writing_a_run_is_one_line_and_leaves_nothing_running(
    lab, good_run, monkeypatch, capsys, case, pred, exit_code
):
    before = _reports_state(lab)
    capsys.readouterr()
    monkeypatch.setattr(atomic, "write_bytes", _enospc_on(pred))
    code = cli.main(["run", "fixture_basic", "--force", "-q"])
    monkeypatch.undo()
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == exit_code, err
    assert "Traceback" not in err
    assert len(lines) == 1 and "No space left on device" in lines[0], err
    if exit_code == 2:
        assert lines[0].startswith("scalinglab run: error: could not write run ")
        assert "nothing of this run was kept" in lines[0]
    # nothing left running or half-written; every leftover is one that prune removes
    left = [r for r in store.list_runs() if not r.complete]
    assert left == []
    assert list((lab / "reports").rglob(".tmp-*")) == []
    # the good report is untouched and still latest
    assert _reports_state(lab) == before
    runs = [r for r in store.list_runs() if r.study == "fixture_basic"]
    for r in runs:
        status = store.read_manifest(r.path)["status"]
        assert status in ("ok", "failed"), (r.key, status)
        if status == "failed":
            assert "No space left on device" in store.read_manifest(r.path)["error"]


def test_an_ownerless_leftover_is_killed_once_old_so_prune_removes_it(tmp_path):
    run_id, tmp = store.allocate_run("s", "v", reports_root=tmp_path)
    (tmp / store.OWNER).write_text("")  # a process that died while writing its owner
    assert store.unfinished_state(tmp) == store.RunStatus.INCOMPLETE  # too young to tell
    old = time.time() - store.OWNERLESS_GRACE_S - 60
    os.utime(tmp, (old, old))
    assert store.unfinished_state(tmp) == store.RunStatus.KILLED
    assert store.prune_html(reports_root=tmp_path) == [tmp]
    assert not tmp.exists()


@pytest.mark.slow
def test_corrupt_results_and_manifest_are_reported_as_corrupt(lab, good_run, capsys):
    from scalinglab.runner.index import collect, render_html
    from scalinglab.runner.pipeline import prepare_run, up_to_date_run
    from scalinglab.runner.status import study_status

    assert study_status("fixture_basic", "default").state == "up-to-date"
    results, manifest = good_run / "results.json", good_run / "manifest.json"
    good_results, good_manifest = results.read_bytes(), manifest.read_bytes()
    assert json.loads(good_manifest)["results_sha256"]
    edited = json.loads(good_results)
    edited["findings"][0]["point"] += 1.0  # valid JSON, other science
    damages = {
        "truncated results": (results, good_results[: len(good_results) // 2], "results.json"),
        "edited results": (results, json.dumps(edited).encode(), "SHA-256"),
        "truncated manifest": (manifest, good_manifest[:100], "manifest.json"),
    }
    try:
        for what, (path, data, says) in damages.items():
            path.write_bytes(data)
            s = study_status("fixture_basic", "default")
            assert s.state == "corrupt", (what, s)
            assert str(path) in s.reasons[0] and says in s.reasons[0], (what, s.reasons)
            assert up_to_date_run(prepare_run("fixture_basic")) is None  # `run` redoes it
            capsys.readouterr()
            assert cli.main(["status", "fixture_basic"]) == 0
            assert "corrupt" in capsys.readouterr().out
            assert cli.main(["verify", str(good_run)]) == 2  # refused before any re-run
            err = capsys.readouterr().err
            assert "corrupt" in err and str(path) in err and len(err.splitlines()) == 1, err
            # a diff refuses it rather than listing its findings as removed
            assert cli.main(["reports", "diff", str(good_run), str(good_run)]) == 2
            err = capsys.readouterr().err
            assert "corrupt" in err and str(path) in err, err
            index = collect()
            (variant,) = [v for v in index["studies"][0]["variants"] if v["variant"] == "default"]
            (run,) = [r for r in variant["runs"] if r["run_id"] == good_run.name]
            assert run["status"] == "corrupt", what
            assert str(path) in run["error"], (what, run["error"])
            page = render_html(index)
            assert "no published claims declared" not in page and "corrupt" in page
            path.write_bytes(good_results if path == results else good_manifest)
        assert study_status("fixture_basic", "default").state == "up-to-date"
    finally:
        results.write_bytes(good_results)
        manifest.write_bytes(good_manifest)


@pytest.mark.slow
def test_a_manifest_without_the_results_hash_says_no_hash_recorded(lab, good_run, capsys):
    manifest = good_run / "manifest.json"
    good = manifest.read_bytes()
    m = json.loads(good)
    del m["results_sha256"]  # as written before the hash existed
    manifest.write_text(json.dumps(m))
    try:
        check = store.check_run(good_run)
        assert not check.corrupt and "no hash recorded" in check.notes[0]
        capsys.readouterr()
        assert cli.main(["verify", str(good_run)]) == 0
        out = capsys.readouterr().out
        assert "no hash recorded" in out and "REPRODUCED" in out
    finally:
        manifest.write_bytes(good)


@pytest.mark.slow
def test_sigterm_on_run_marks_it_interrupted_and_cleans_up(lab, good_run, tmp_path):
    scratch = tmp_path / "tmp"  # the system temporary folder of the command, to watch
    scratch.mkdir()
    env = {**os.environ, "SCALINGLAB_ROOT": str(lab), "TMPDIR": str(scratch)}
    before = _reports_state(lab)
    proc = subprocess.Popen(
        [sys.executable, "-m", "scalinglab", "run", "fixture_basic", "-p", "sleep_s", "60"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # a non-default parameter: the run goes to default-custom/, never default/latest
    vdir = lab / "reports" / "fixture_basic" / "default-custom"
    try:
        deadline = time.monotonic() + 120
        while not list(vdir.glob(".tmp-*/.kernel-*.json")) and proc.poll() is None:
            assert time.monotonic() < deadline, "the kernel never started"
            time.sleep(0.2)
        time.sleep(2)  # into the sleeping cell
        proc.send_signal(signal.SIGTERM)  # what `kill` and a cluster scheduler send
        out, err = proc.communicate(timeout=60)  # the notebook sleeps 60 s
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, (out, err)
    assert "Traceback" not in err
    stopped = [
        r
        for r in store.list_runs()
        if store.read_manifest(r.path).get("parameters", {}).get("sleep_s") == 60.0
    ]
    assert len(stopped) == 1 and stopped[0].complete
    m = store.read_manifest(stopped[0].path)
    assert m["status"] == "interrupted" and "SIGTERM" in m["error"]
    assert stopped[0].path.parent == vdir
    assert _reports_state(lab) == before  # latest and its files untouched
    # no kernel connection file left, in the run folder or the system temporary folder
    assert list((lab / "reports").rglob(".kernel-*")) == []
    assert list(scratch.rglob("*.json")) == []


def _readme_dask_commands() -> dict[str, str]:
    """The README's ``dask scheduler`` and ``dask worker`` command lines (continuations joined)."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    text = text.replace("\\\n", " ")
    out = {}
    for line in text.splitlines():
        cmd = line.split("#", 1)[0].strip()
        for verb in ("scheduler", "worker"):
            if f"dask {verb}" in cmd and not cmd.startswith(("-", "`")) and "`" not in cmd:
                out[verb] = cmd[cmd.index(f"dask {verb}") :]
    return out


def test_readme_cluster_recipe_binds_to_a_named_address_and_says_what_is_exposed():
    cmds = _readme_dask_commands()
    assert set(cmds) == {"scheduler", "worker"}
    for verb, cmd in cmds.items():
        args = cmd.split()
        assert "--host" in args or "--interface" in args, cmd  # not every interface
        host = args[args.index("--host") + 1] if "--host" in args else ""
        assert host not in ("0.0.0.0", "::", ""), cmd
        if "--no-dashboard" not in args:
            dash = args[args.index("--dashboard-address") + 1]
            assert dash.startswith(("127.0.0.1:", "localhost:")), cmd
        # every option the recipe uses exists in the installed dask
        help_text = subprocess.run(
            [str(Path(sys.executable).with_name("dask")), verb, "--help"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for opt in (a for a in args if a.startswith("--")):
            assert opt in help_text, (verb, opt)
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for words in ("What this exposes", "ssh -L 8787", "--protocol tls", "TLS"):
        assert words in readme


@pytest.mark.slow
def test_sigterm_on_verify_stops_the_rerun_and_removes_its_folder(lab, tmp_path):
    slow = run_study("fixture_basic", overrides={"sleep_s": "20"}, force=True)
    assert slow.status == "ok", slow.error
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "SCALINGLAB_ROOT": str(lab), "TMPDIR": str(scratch)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "scalinglab", "verify", str(slow.run_dir)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(scratch.glob("scalinglab-verify-*/**/.kernel-*.json")):
            assert proc.poll() is None and time.monotonic() < deadline, "no re-run started"
            time.sleep(0.2)
        time.sleep(2)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, (out, err)
    assert "re-run interrupted" in out and "SIGTERM" in out
    assert list(scratch.iterdir()) == []
