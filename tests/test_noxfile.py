"""``noxfile.py``: one shared environment, and ``nox -s lab`` as a new user meets it.

The slow test starts JupyterLab for real, as ``nox -s lab`` does (root or not), on a
copy of the studies, and opens ``notebooks/rl_scaling.py`` as a notebook: through the
contents API (then saves it unchanged: same bytes) and, where Chromium is installed, in
headless Chromium. It skips where JupyterLab (the ``lab`` extra) is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
nox = pytest.importorskip("nox")  # the test extra installs it


@pytest.fixture(scope="module")
def noxfile():
    spec = importlib.util.spec_from_file_location("scalinglab_noxfile", ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lab_passes_allow_root_as_root_only(noxfile) -> None:
    as_root = noxfile.lab_command("--no-browser", euid=0)
    as_user = noxfile.lab_command("--no-browser", euid=1000)
    assert "--allow-root" in as_root and "--allow-root" not in as_user
    assert as_root[1:].count("--allow-root") == 1
    assert noxfile.lab_command("--allow-root", euid=0).count("--allow-root") == 1
    # rooted at the repository, not notebooks/: reports/, docs/ and ../docs links open
    assert f"--ServerApp.root_dir={ROOT}" in as_user
    assert as_user[-1] == "--no-browser"  # the user's arguments come last


def test_sessions_share_one_environment(noxfile) -> None:
    registry = nox.registry.get()
    shared = {"reports", "tests", "lab", "bench", "dev"}
    assert shared | {"lint"} == set(registry)
    for name in shared:  # no venv of their own: they run in .nox/dev
        assert registry[name].venv_backend == "none", name
    assert registry["lint"].venv_backend != "none"
    assert noxfile.DEV_ENV == ROOT / ".nox" / "dev"


def test_pip_runs_again_only_when_the_lock_or_extras_change(noxfile, tmp_path) -> None:
    env = tmp_path / "env"
    env.mkdir()
    assert noxfile._installed_extras(env) == frozenset()  # never installed
    (env / noxfile._STAMP).write_text(noxfile._install_key(frozenset({"test", "lab"})) + "\n")
    assert noxfile._installed_extras(env) == {"test", "lab"}
    (env / noxfile._STAMP).write_text("0123456789abcdef test,lab\n")  # another lock
    assert noxfile._installed_extras(env) == frozenset()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


@pytest.mark.slow  # starts JupyterLab (and Chromium): 10-60 s
def test_lab_opens_a_study_as_a_notebook_and_saves_it_unchanged(noxfile, tmp_path) -> None:
    pytest.importorskip("jupyterlab")
    pytest.importorskip("jupytext")
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copy(ROOT / "jupytext.toml", root)
    port, token = _free_port(), "scalinglab-test"
    cmd = noxfile.lab_command(
        "--no-browser",
        f"--port={port}",
        "--ip=127.0.0.1",
        f"--IdentityProvider.token={token}",
        "--ServerApp.open_browser=False",
        root=root,
    )
    cmd[0:1] = [sys.executable, "-m", "jupyter"]  # this environment's JupyterLab
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(ROOT / "jupyter-config")}
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "runtime")
    log = (tmp_path / "lab.log").open("w")
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        api = f"{base}/api/contents/notebooks/rl_scaling.py?token={token}"
        for _ in range(240):
            try:
                model = json.loads(_get(api + "&type=notebook&content=1"))
                break
            except OSError:
                assert server.poll() is None, (tmp_path / "lab.log").read_text()
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer in 120 s")
        assert model["type"] == "notebook"
        cells = model["content"]["cells"]
        assert cells[1]["metadata"]["tags"] == ["parameters"]
        assert any("How does RL post-training scale" in c["source"] for c in cells)
        # the study's link to its facts resolves from the notebook's folder
        docs = json.loads(_get(f"{base}/api/contents/docs/studies/rl_scaling.md?token={token}"))
        assert docs["path"] == "docs/studies/rl_scaling.md" and docs["content"]
        # save unchanged, with what a running kernel adds: the same bytes
        before = (root / "notebooks" / "rl_scaling.py").read_bytes()
        nb = model["content"]
        nb["metadata"]["language_info"] = {"name": "python", "version": "3.11"}
        body = json.dumps({"type": "notebook", "format": "json", "content": nb}).encode()
        put = urllib.request.Request(
            api, data=body, method="PUT", headers={"Content-Type": "application/json"}
        )
        urllib.request.urlopen(put, timeout=30).read()
        assert (root / "notebooks" / "rl_scaling.py").read_bytes() == before
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium:
            dom = subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                 "--virtual-time-budget=30000",
                 f"{base}/lab/tree/notebooks/rl_scaling.py?token={token}"],
                capture_output=True, text=True, timeout=180,
            ).stdout  # fmt: skip
            assert "jp-Notebook" in dom and "How does RL post-training scale" in dom
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
