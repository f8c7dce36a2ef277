"""Sessions behind the README's commands.

    nox -s reports   # set up, regenerate every study's report (compute_class=small), index
    nox -s tests     # set up, type-check lib/ (mypy), run the test suite
    nox -s tests -- -m "not slow"   # the everyday lane: no notebook or cluster runs
    nox -s lint      # ruff
    nox -s bench     # speed benchmarks (writes benchmarks/results/*.json)
    nox -s lab       # JupyterLab on notebooks/, .py studies open as notebooks

Every session installs the package against the pinned environment in
``lib/constraints.txt`` so a report's environment is reproducible (its hash goes
into every manifest). torch, when a study needs it, is pinned to the CPU build.
"""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]

CONSTRAINTS = "lib/constraints.txt"


def _install(session: nox.Session, *extras: str) -> None:
    target = f".[{','.join(extras)}]" if extras else "."
    session.install("-c", CONSTRAINTS, "-e", target)


@nox.session
def reports(session: nox.Session) -> None:
    """Regenerate every study report at the default compute class, then the index."""
    _install(session)
    session.run("scalinglab", "run", "--all", *session.posargs)
    session.run("scalinglab", "reports", "--write-index")


@nox.session
def tests(session: nox.Session) -> None:
    """Type-check the library, then run the test suite (pytest's exit 5, 'no tests
    collected', is reported, not hidden). Arguments go to pytest: ``-m "not slow"`` is
    the everyday lane (no notebook or cluster runs); CI runs everything."""
    _install(session, "test")
    session.run("mypy")  # settings and the files checked: [tool.mypy] in pyproject.toml
    session.run("pytest", *session.posargs, success_codes=[0, 5])


@nox.session
def lint(session: nox.Session) -> None:
    """Static checks."""
    session.install("-c", CONSTRAINTS, "ruff")
    paths = ("lib", "tests", "benchmarks", "notebooks", "noxfile.py")
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)


@nox.session
def bench(session: nox.Session) -> None:
    """Speed benchmarks; each prints ratios against its baseline measured in the same run."""
    _install(session, "test")
    scripts = session.posargs or [
        "benchmarks/bench_fitting.py",
        "benchmarks/bench_gemm.py",
        "benchmarks/bench_rl.py",
        "benchmarks/bench_optimizers.py",
        "benchmarks/bench_sparse_ffn.py",
        "benchmarks/bench_prose_render.py",
    ]  # bench_intervals.py compares with rliable in its own environment: see its header
    for script in scripts:
        session.run("python", script)


@nox.session
def lab(session: nox.Session) -> None:
    """JupyterLab with jupytext: every ``notebooks/<study>.py`` opens as a notebook.

    The default viewer comes from the project's ``jupyter-config/labconfig/`` (installed
    with the package into ``<env>/etc/jupyter``, so any JupyterLab in an environment with
    ``scalinglab`` installed does the same); it is also put on ``JUPYTER_CONFIG_PATH``
    here, for an environment installed before it existed.
    """
    _install(session, "lab")
    config = str(Path("jupyter-config").resolve())
    session.run(
        "jupyter", "lab", "notebooks", *session.posargs, env={"JUPYTER_CONFIG_PATH": config}
    )
