"""Sessions behind the README's commands.

    nox -s reports   # set up, regenerate every study's report (compute_class=small), index
    nox -s tests     # set up, type-check lib/ (mypy), run the test suite in 2 shards
    nox -s tests -- -m "not slow"   # the everyday lane: no notebook or cluster runs
    SCALINGLAB_TEST_SHARDS=1 nox -s tests   # one pytest process, as plain ``pytest``
    nox -s lab       # JupyterLab at the repository root, .py studies open as notebooks
    nox -s dev       # only set up the shared environment (test and lab extras)
    nox -s bench     # speed benchmarks (writes benchmarks/results/*.json)
    nox -s lint      # ruff (its own small environment)

One environment, ``.nox/dev``, serves ``reports``, ``tests``, ``lab``, ``bench`` and
``dev``: torch and the rest are installed once (about 2 GB), not once per session. Each
session adds the extras it needs (``tests``: ``test``; ``lab``: ``lab``; ``dev``: both)
and skips pip when ``lib/constraints.txt``, ``pyproject.toml`` and the extras are those of
the last install (``.nox/dev/.scalinglab-installed``). ``source .nox/dev/bin/activate``
gives a shell with ``scalinglab``, ``pytest``, ``mypy`` and ``jupyter`` on its PATH.

``tests`` runs mypy, then pytest as ``SCALINGLAB_TEST_SHARDS`` processes side by side
(default 2, one per core of CI's machine): ``pytest --shard=I/N`` each, with the session's
arguments after it (``tests/sharding.py``: whole test files, balanced by the measured
``tests/durations.json``, files sharing a session fixture together). Each line a shard
prints is prefixed ``[I/N]``; at the end every shard's summary line is repeated, with the
short summary of a shard that failed. The session fails when any shard fails; pytest's
exit 5 (no tests collected, as when ``-k`` matches only another shard's tests) counts as
success with pytest's message shown, as with one process. Each shard has its own
``--basetemp``, ``TMPDIR`` and pytest cache (what ``--lf`` reads is merged back into
``.pytest_cache`` afterwards); the temporary folder is removed unless a shard failed.
``SCALINGLAB_WRITE_DURATIONS=tests/durations.json nox -s tests`` refreshes the table.
``--lf``, ``--sw`` and ``--pdb`` want one process: ``SCALINGLAB_TEST_SHARDS=1``.

Every install is the package against the pinned environment in ``lib/constraints.txt``, so
a report's environment is reproducible (its hash goes into every manifest). torch, when a
study needs it, is pinned to the CPU build.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]

ROOT = Path(__file__).resolve().parent
CONSTRAINTS = "lib/constraints.txt"
#: The one environment the sessions share (lint keeps its own, with ruff only).
DEV_ENV = ROOT / ".nox" / "dev"
_STAMP = ".scalinglab-installed"
#: How many pytest processes ``nox -s tests`` runs side by side (1: a single plain run).
SHARDS_ENV = "SCALINGLAB_TEST_SHARDS"
DEFAULT_SHARDS = 2
#: pytest's exit codes the session accepts: all passed, and no tests collected.
PYTEST_OK = (0, 5)


def _install_key(extras: frozenset[str]) -> str:
    """What an install of ``extras`` depends on: the lock, the package's metadata, extras."""
    h = hashlib.sha256()
    for name in (CONSTRAINTS, "pyproject.toml"):
        h.update((ROOT / name).read_bytes())
    return h.hexdigest()[:16] + " " + ",".join(sorted(extras))


def _installed_extras(env: Path) -> frozenset[str]:
    """The extras already installed in ``env`` at the current lock (empty if stale)."""
    try:
        key, _, extras = (env / _STAMP).read_text().strip().partition(" ")
    except OSError:
        return frozenset()
    if key != _install_key(frozenset()).split(" ")[0]:
        return frozenset()
    return frozenset(e for e in extras.split(",") if e)


def _env_vars(env: Path) -> dict[str, str]:
    """PATH and VIRTUAL_ENV for commands run in ``env``."""
    return {
        "PATH": f"{env / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(env),
    }


def _bin(name: str) -> str:
    """A program of the shared environment (nox finds none itself without a venv)."""
    return str(DEV_ENV / "bin" / name)


def shared_env(session: nox.Session, *extras: str) -> dict[str, str]:
    """Create or update ``.nox/dev`` with the package and ``extras``; its env vars.

    pip runs only when an extra is missing or the lock or ``pyproject.toml`` changed
    (deleting ``.nox/dev/.scalinglab-installed`` forces it). The package is installed
    editable, so changes under ``lib/`` need no reinstall.
    """
    python = DEV_ENV / "bin" / "python"
    if not python.exists():
        session.run(sys.executable, "-m", "venv", str(DEV_ENV), external=True)
    have = _installed_extras(DEV_ENV)
    want = have | frozenset(extras)
    if not want <= have or not (DEV_ENV / _STAMP).exists():
        target = f".[{','.join(sorted(want))}]" if want else "."
        session.run(
            str(python), "-m", "pip", "install", "-c", CONSTRAINTS, "-e", target, external=True
        )
        (DEV_ENV / _STAMP).write_text(_install_key(want) + "\n")
    else:
        session.log(f"{DEV_ENV.relative_to(ROOT)}: up to date ({', '.join(sorted(want)) or '-'})")
    return _env_vars(DEV_ENV)


@nox.session(venv_backend="none")
def reports(session: nox.Session) -> None:
    """Regenerate every study report at the default compute class, then the index."""
    env = shared_env(session)
    session.run(_bin("scalinglab"), "run", "--all", *session.posargs, env=env)
    session.run(_bin("scalinglab"), "reports", "--write-index", env=env)


@nox.session(venv_backend="none")
def tests(session: nox.Session) -> None:
    """Type-check the library, then run the test suite in ``SCALINGLAB_TEST_SHARDS``
    shards side by side (default 2; pytest's exit 5, 'no tests collected', is reported, not
    hidden). Arguments go to every shard's pytest: ``-m "not slow"`` is the everyday lane
    (no notebook or cluster runs); CI runs everything."""
    try:
        count = shard_count(os.environ)
    except ValueError as e:
        session.error(str(e))
    env = shared_env(session, "test")
    # mypy's settings and the files it checks: [tool.mypy] in pyproject.toml
    session.run(_bin("mypy"), env=env)
    if count == 1 or any(a.startswith("--shard") for a in session.posargs):
        session.run(_bin("pytest"), *session.posargs, success_codes=list(PYTEST_OK), env=env)
        return
    run_shards(session, count, env=env)


def shard_count(environ: Mapping[str, str]) -> int:
    """``SCALINGLAB_TEST_SHARDS`` from ``environ`` (default 2), a whole number from 1."""
    text = environ.get(SHARDS_ENV, "").strip() or str(DEFAULT_SHARDS)
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{SHARDS_ENV} must be a whole number from 1, not {text!r}")
    return int(text)


def shard_command(index: int, count: int, posargs: Sequence[str], *, folder: Path) -> list[str]:
    """Shard ``index`` of ``count``'s pytest command line: its own ``--basetemp`` and cache
    under ``folder``, then the session's arguments."""
    return [
        _bin("pytest"),
        f"--shard={index}/{count}",
        f"--basetemp={folder / 'basetemp'}",
        "-o",
        f"cache_dir={folder / 'cache'}",
        *posargs,
    ]


#: pytest's last line: ``=== 3 passed, 1 skipped in 2.01s ===`` (or ``no tests ran``).
_SUMMARY = re.compile(r"^=+ .* in [0-9.]+s( \(\d+:\d\d:\d\d\))? =+$")


def shard_report(lines: Sequence[str]) -> tuple[str, list[str]]:
    """A shard's output -> its summary line and its short test summary section."""
    summary = next((ln for ln in reversed(lines) if _SUMMARY.match(ln)), "(no summary line)")
    start = next((i for i, ln in enumerate(lines) if "short test summary info" in ln), None)
    short = [ln for ln in lines[start + 1 :] if ln != summary] if start is not None else []
    return summary, short


def _pump(stream, prefix: str, lines: list[str], lock: threading.Lock) -> None:
    for raw in stream:
        line = raw.rstrip("\n")
        lines.append(line)
        with lock:
            sys.stdout.write(f"{prefix} {line}\n")
            sys.stdout.flush()


def run_shards(session: nox.Session, count: int, *, env: Mapping[str, str]) -> None:
    """Run ``count`` pytest shards at once, streaming their lines prefixed ``[I/N]``; fail
    the session if any shard failed. pytest's cache is merged back afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="scalinglab-tests-"))
    cache = ROOT / ".pytest_cache"
    seed = read_cache(cache)  # what every shard starts from (and the merge compares with)
    lock = threading.Lock()
    procs: list[subprocess.Popen[str]] = []
    pumps: list[threading.Thread] = []
    outputs: list[list[str]] = []
    try:
        for i in range(count):
            folder = scratch / f"shard-{i}"
            (folder / "tmp").mkdir(parents=True)
            seed_cache(seed, folder / "cache")
            cmd = shard_command(i, count, session.posargs, folder=folder)
            session.log(shlex.join(cmd))
            proc = subprocess.Popen(
                cmd,
                env={**os.environ, **env, "TMPDIR": str(folder / "tmp")},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
            )
            procs.append(proc)
            outputs.append([])
            pump = threading.Thread(
                target=_pump, args=(proc.stdout, f"[{i}/{count}]", outputs[-1], lock)
            )
            pump.start()
            pumps.append(pump)
        codes = [proc.wait() for proc in procs]
    finally:
        _stop(procs)  # only those still running: Ctrl-C, or an error here
        for pump in pumps:
            pump.join()
    merge_caches(cache, [scratch / f"shard-{i}" / "cache" for i in range(count)], seed=seed)
    failed = []
    for i, (code, lines) in enumerate(zip(codes, outputs, strict=True)):
        summary, short = shard_report(lines)
        note = " (no tests collected: counted as success)" if code == 5 else ""
        session.log(f"shard {i}/{count}: exit {code}{note}: {summary.strip('= ')}")
        if code not in PYTEST_OK:
            failed.append(i)
            for line in short:
                session.log(f"  [{i}/{count}] {line}")
    if failed:
        session.error(
            f"shard(s) {', '.join(f'{i}/{count}' for i in failed)} failed; their temporary "
            f"folders are kept under {scratch}"
        )
    shutil.rmtree(scratch, ignore_errors=True)


def _stop(procs: Sequence[subprocess.Popen[str]], *, grace_s: float = 10) -> None:
    """End the shards still running (after Ctrl-C, which they got too, or an error here):
    ``grace_s`` to finish on their own, then SIGINT (pytest tears its fixtures down and
    prints its summary), then, a minute later, SIGKILL."""
    for signum, wait_s in ((None, grace_s), (signal.SIGINT, 60.0), (signal.SIGKILL, None)):
        running = [p for p in procs if p.poll() is None]
        for p in running:
            if signum is not None:
                p.send_signal(signum)
        for p in running:
            try:
                p.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                pass


def read_cache(cache: Path) -> dict[str, Any]:
    """What ``--lf`` and ``--nf`` read from the pytest cache folder ``cache``."""
    folder = cache / "v" / "cache"
    return {
        "lastfailed": _read_json(folder / "lastfailed", dict),
        "nodeids": _read_json(folder / "nodeids", list),
    }


def seed_cache(seed: Mapping[str, Any], shard_cache: Path) -> None:
    """Start a shard's own pytest cache from ``seed`` (:func:`read_cache`)."""
    folder = shard_cache / "v" / "cache"
    folder.mkdir(parents=True, exist_ok=True)
    for key, value in seed.items():
        if value:
            (folder / key).write_text(json.dumps(value, indent=2))


def _read_json(path: Path, kind: type[dict] | type[list]) -> Any:
    """The JSON ``kind`` at ``path``; an empty one if it is missing or unreadable."""
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return kind()
    return value if isinstance(value, kind) else kind()


def merge_lastfailed(before: Mapping[str, object], after: Sequence[Mapping[str, object]]) -> dict:
    """The failures a single run would have left: each shard started from ``before`` and
    dropped the tests it passed, added those it failed. A test stays if no shard dropped
    it, or comes in if a shard added it."""
    keys = sorted({k for shard in after for k in shard} | set(before))
    return {
        k: next(shard[k] for shard in after if k in shard)
        for k in keys
        if all(k in shard for shard in after) or any(k in s and k not in before for s in after)
    }


def merge_caches(cache: Path, shard_caches: Sequence[Path], *, seed: Mapping[str, Any]) -> None:
    """Write into pytest's ``cache`` the ``lastfailed`` and ``nodeids`` one process would
    have left, from each shard's own and the ``seed`` they all started from. A pytest run
    elsewhere that wrote ``cache`` meanwhile counts as one more shard."""
    if not any(c.is_dir() for c in shard_caches):  # -p no:cacheprovider
        return
    current = read_cache(cache)
    after = [
        _read_json(c / "v" / "cache" / "lastfailed", dict)
        if (c / "v" / "cache" / "lastfailed").is_file()
        else seed["lastfailed"]  # a shard that wrote none changed nothing
        for c in shard_caches
    ]
    lastfailed = merge_lastfailed(seed["lastfailed"], [*after, current["lastfailed"]])
    nodeids = set(current["nodeids"])
    for c in shard_caches:
        nodeids.update(read_cache(c)["nodeids"])
    if not cache.is_dir():  # as pytest makes it: with its README, .gitignore, CACHEDIR.TAG
        shutil.copytree(next(c for c in shard_caches if c.is_dir()), cache)
    folder = cache / "v" / "cache"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lastfailed").write_text(json.dumps(lastfailed, indent=2, sort_keys=True))
    (folder / "nodeids").write_text(json.dumps(sorted(nodeids), indent=2))


@nox.session(venv_backend="none")
def dev(session: nox.Session) -> None:
    """Set up the shared environment with every extra (test, lab) and say how to use it."""
    shared_env(session, "test", "lab")
    session.log(f"ready: source {DEV_ENV.relative_to(ROOT)}/bin/activate (or nox -s tests/lab)")


@nox.session
def lint(session: nox.Session) -> None:
    """Static checks."""
    session.install("-c", CONSTRAINTS, "ruff")
    paths = ("lib", "tests", "benchmarks", "notebooks", "noxfile.py")
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)


@nox.session(venv_backend="none")
def bench(session: nox.Session) -> None:
    """Speed benchmarks; each prints ratios against its baseline measured in the same run."""
    env = shared_env(session, "test")
    scripts = session.posargs or [
        "benchmarks/bench_fitting.py",
        "benchmarks/bench_gemm.py",
        "benchmarks/bench_rl.py",
        "benchmarks/bench_optimizers.py",
        "benchmarks/bench_sparse_ffn.py",
        "benchmarks/bench_prose_render.py",
        "benchmarks/bench_few_run_flips.py",
    ]  # bench_intervals.py compares with rliable in its own environment: see its header
    for script in scripts:
        session.run(_bin("python"), script, env=env)


def lab_command(*args: str, euid: int | None = None, root: Path = ROOT) -> list[str]:
    """``jupyter lab`` rooted at the repository: ``reports/``, ``docs/`` and the studies'
    ``../docs`` links open. As root (a container, a cloud VM) JupyterLab refuses to
    start without ``--allow-root``, so it is passed then and only then."""
    euid = os.geteuid() if euid is None else euid
    root_flag = ["--allow-root"] if euid == 0 and "--allow-root" not in args else []
    return [_bin("jupyter"), "lab", f"--ServerApp.root_dir={root}", *root_flag, *args]


@nox.session(venv_backend="none")
def lab(session: nox.Session) -> None:
    """JupyterLab with jupytext at the repository root: ``notebooks/<study>.py`` opens as a
    notebook, and saving it unchanged keeps its bytes (``jupytext.toml``).

    The default viewer comes from the project's ``jupyter-config/labconfig/`` (installed
    with the package into ``<env>/etc/jupyter``, so any JupyterLab in an environment with
    ``scalinglab`` installed does the same); it is also put on ``JUPYTER_CONFIG_PATH``
    here, for an environment installed before it existed. Arguments go to ``jupyter lab``
    (``nox -s lab -- --no-browser --port 8899``).
    """
    env = shared_env(session, "lab")
    env["JUPYTER_CONFIG_PATH"] = str(ROOT / "jupyter-config")
    session.run(*lab_command(*session.posargs), env=env)
