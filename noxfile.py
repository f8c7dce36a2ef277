"""Sessions behind the README's commands.

    nox -s reports   # set up, regenerate every study's report (compute_class=small), index
    nox -s tests     # set up, type-check lib/ (mypy), run the test suite
    nox -s tests -- -m "not slow"   # the everyday lane: no notebook or cluster runs
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

Every install is the package against the pinned environment in ``lib/constraints.txt``, so
a report's environment is reproducible (its hash goes into every manifest). torch, when a
study needs it, is pinned to the CPU build.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]

ROOT = Path(__file__).resolve().parent
CONSTRAINTS = "lib/constraints.txt"
#: The one environment the sessions share (lint keeps its own, with ruff only).
DEV_ENV = ROOT / ".nox" / "dev"
_STAMP = ".scalinglab-installed"


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
    """Type-check the library, then run the test suite (pytest's exit 5, 'no tests
    collected', is reported, not hidden). Arguments go to pytest: ``-m "not slow"`` is
    the everyday lane (no notebook or cluster runs); CI runs everything."""
    env = shared_env(session, "test")
    # mypy's settings and the files it checks: [tool.mypy] in pyproject.toml
    session.run(_bin("mypy"), env=env)
    session.run(_bin("pytest"), *session.posargs, success_codes=[0, 5], env=env)


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
