"""The import rules of ``docs/architecture.md``, checked on the source.

Every module under ``lib/scalinglab`` is parsed with :mod:`ast` (nothing is imported),
every ``import`` and ``from ... import`` is collected, at module level and inside
functions, and resolved to the module it names (``from pkg import name`` is an edge to
``pkg.name`` when that is a module, else to ``pkg``). Importing a submodule also runs its
parent package's ``__init__``; that implicit edge is left out (Python starts the parent
first, so it cannot deadlock), every written import is kept, including those under
``if TYPE_CHECKING:``.

Rooms: ``scalinglab.<room>`` (a package or a top-level module), and
``scalinglab.studies.<study>`` for each study. A failure names each offending edge as
``importer -> imported (file:line)``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "lib" / "scalinglab"

#: Rooms every study and the runner may use; they never import a study, the runner or the CLI.
SHARED = frozenset(
    {
        "stats",
        "fitting",
        "cost_model",
        "kernels",
        "models",
        "training",
        "data",
        "compute",
        "record",
        "finding",
        "results_file",
        "estimate",
        "prose",
        "findings_view",
        "claims",
        "ledger",
        "claims_file",
        "verdict_scope",
        "verdict_checks",
        "sweeps",
        "provenance",
        "textfmt",
        "paths",
        "atomic",
        "errors",
        "plots",
    }
)
#: What the shared rooms and the studies must never import.
TOP = frozenset({"runner", "cli"})
#: The runner knows no science: it never imports these rooms (nor a study).
SCIENCE = frozenset({"training", "models", "kernels"})
#: The reporting layer: the analysis rooms return estimates and never record them.
REPORTING = frozenset(
    {
        "record",
        "finding",
        "results_file",
        "claims",
        "ledger",
        "claims_file",
        "findings_view",
        "prose",
        "verdict_scope",
        "verdict_checks",
    }
)
ANALYSIS = frozenset({"stats", "fitting"})
#: The base rooms import nothing of the package above them.
BASE = frozenset({"estimate", "provenance", "textfmt", "paths", "errors"})
#: The cost model describes machines and kernels; it runs none, so it never imports these.
COST_MODEL_NEVER = frozenset({"kernels", "models", "training", "compute"})


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    path: Path
    line: int
    top_level: bool

    def __str__(self) -> str:
        return f"{self.src} -> {self.dst} ({self.path.relative_to(PKG.parent)}:{self.line})"


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is_package) for every module under ``lib/scalinglab``."""
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _owner(name: str) -> str:
    """The longest known module that ``name`` is or lies in."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> Iterable[str]:
    if isinstance(node, ast.Import):
        return [_owner(a.name) for a in node.names if a.name.split(".")[0] == "scalinglab"]
    if node.level:
        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    if mod.split(".")[0] != "scalinglab":
        return []
    return [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else _owner(mod) for a in node.names]


def _edges() -> list[Edge]:
    edges = []
    for name, (path, is_pkg) in MODULES.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        package = name if is_pkg else name.rpartition(".")[0]
        top = {id(n) for n in tree.body}
        top |= {
            id(n)
            for stmt in tree.body
            if isinstance(stmt, ast.If | ast.Try)
            for n in ast.walk(stmt)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for dst in _targets(node, package):
                    if dst != name:
                        edges.append(Edge(name, dst, path, node.lineno, id(node) in top))
    return edges


EDGES = _edges()


def room(module: str) -> str:
    """``stats``, ``runner``, ... or ``studies.<study>`` (``studies`` for the package itself)."""
    parts = module.split(".")
    if len(parts) == 1:
        return ""
    if parts[1] == "studies" and len(parts) > 2:
        return f"studies.{parts[2]}"
    if parts[1] == "__main__":  # ``python -m scalinglab``: the CLI's other door
        return "cli"
    return parts[1]


def _cycles(edges: list[Edge]) -> list[list[Edge]]:
    """One concrete cycle (as its edges) per strongly connected component of the graph."""
    graph: dict[str, list[Edge]] = {m: [] for m in MODULES}
    for e in edges:
        graph[e.src].append(e)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan; the package is far below the recursion limit
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for e in graph[v]:
            if e.dst not in index:
                visit(e.dst)
                low[v] = min(low[v], low[e.dst])
            elif e.dst in on_stack:
                low[v] = min(low[v], index[e.dst])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for comp in comps:  # shortest path from the first module back to itself, inside comp
        start = min(comp)
        prev: dict[str, Edge] = {}
        frontier = [start]
        while frontier and start not in prev:
            nxt = []
            for v in frontier:
                for e in graph[v]:
                    if e.dst in comp and e.dst not in prev:
                        prev[e.dst] = e
                        nxt.append(e.dst)
            frontier = nxt
        cycle, v = [], start
        while True:
            cycle.append(prev[v])
            v = prev[v].src
            if v == start:
                break
        out.append(cycle[::-1])
    return out


def _fail(title: str, bad: list[Edge] | list[str]) -> None:
    if bad:  # one line per edge (several names imported on one line are one edge)
        pytest.fail(f"{title}:\n  " + "\n  ".join(dict.fromkeys(map(str, bad))), pytrace=False)


def test_the_graph_sees_the_package():
    # the parser found the rooms and their known imports (a silent parser would pass every rule)
    assert {"stats", "fitting", "cost_model", "kernels", "runner", "cli", "studies.gemm"} <= {
        room(m) for m in MODULES
    }
    assert any(
        e.src == "scalinglab.fitting.multistart"
        and e.dst == "scalinglab.fitting.problem"
        and e.top_level
        for e in EDGES
    )
    assert any(
        e.src == "scalinglab.fitting.parallel" and e.dst == "scalinglab.compute" and not e.top_level
        for e in EDGES
    )  # an import inside a function is seen


def test_every_room_is_classified():
    known = SHARED | TOP | {"", "studies"}
    _fail(
        "modules in a room the rules do not know (add it to SHARED, or to the study rooms)",
        [m for m in MODULES if room(m) not in known and not room(m).startswith("studies.")],
    )


def test_no_import_cycles_at_module_level():
    cycles = _cycles([e for e in EDGES if e.top_level])
    _fail("import cycles among module-level imports", [" ; ".join(map(str, c)) for c in cycles])


def test_no_import_cycles_counting_imports_inside_functions():
    _fail(
        "import cycles (counting imports inside functions)",
        [" ; ".join(map(str, c)) for c in _cycles(EDGES)],
    )


def test_shared_rooms_never_import_a_study_the_runner_or_the_cli():
    _fail(
        "a shared room imports a study, the runner or the CLI",
        [
            e
            for e in EDGES
            if room(e.src) in SHARED and (room(e.dst) in TOP or room(e.dst).startswith("studies"))
        ],
    )


#: Declared study-to-study dependencies, each with its reason (docs/architecture.md). A study
#: builds on another only when it consumes that study's experiment (its trained models).
STUDY_BUILDS_ON = {
    "studies.tts": {"studies.rl"}  # samples from the RL study's trained policies and tasks
}


def test_a_study_imports_no_other_study_nor_the_runner_or_the_cli():
    _fail(
        "a study imports another study (undeclared), the studies package, the runner or the CLI",
        [
            e
            for e in EDGES
            if room(e.src).startswith("studies.")
            and (
                room(e.dst) in TOP
                or (
                    room(e.dst).startswith("studies")
                    and room(e.dst) != room(e.src)
                    and room(e.dst) not in STUDY_BUILDS_ON.get(room(e.src), set())
                )
            )
        ],
    )


def test_declared_study_dependencies_go_one_way():
    for src, dsts in STUDY_BUILDS_ON.items():
        for dst in dsts:
            assert src not in STUDY_BUILDS_ON.get(dst, set()), f"{src} <-> {dst}"


def test_the_runner_knows_no_science():
    _fail(
        "the runner imports a study or training/models/kernels",
        [
            e
            for e in EDGES
            if room(e.src) == "runner"
            and (room(e.dst) in SCIENCE or room(e.dst).startswith("studies"))
        ],
    )


def test_the_cli_never_imports_a_study():
    # a verb is a thin door onto shared rooms (and the runner): a table reader a verb needs
    # lives in ``data``, a formula in ``fitting``, never in a study a verb would then depend on
    _fail(
        "the CLI imports a study (move what it needs to a shared room)",
        [e for e in EDGES if room(e.src) == "cli" and room(e.dst).startswith("studies")],
    )


def test_the_analysis_rooms_never_import_the_reporting_layer():
    # stats and fitting return Estimates; notebooks record them
    _fail(
        "stats or fitting imports record, claims or findings_view",
        [e for e in EDGES if room(e.src) in ANALYSIS and room(e.dst) in REPORTING],
    )


def test_the_estimate_type_is_a_base_room():
    _fail(
        "scalinglab.estimate imports another room",
        [e for e in EDGES if room(e.src) == "estimate" and room(e.dst) not in ("", "estimate")],
    )


def test_the_cost_model_runs_no_kernel():
    _fail(
        "the cost model imports kernels, models, training or compute",
        [e for e in EDGES if room(e.src) == "cost_model" and room(e.dst) in COST_MODEL_NEVER],
    )


def _private_imports() -> list[str]:
    """``from scalinglab.x import _name`` in a module other than ``x`` itself."""
    out = []
    for name, (path, _) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if (
                isinstance(node, ast.ImportFrom)
                and not node.level
                and node.module
                and node.module.split(".")[0] == "scalinglab"
                and node.module != name
            ):
                out += [
                    f"{name} imports {node.module}.{a.name} "
                    f"({path.relative_to(PKG.parent)}:{node.lineno})"
                    for a in node.names
                    if a.name.startswith("_") and a.name != "__version__"
                ]
    return out


@pytest.mark.slow
def test_no_module_imports_another_modules_private_name():
    # a helper used across modules is public (named without "_") and documented
    _fail("private names imported across modules", _private_imports())


@pytest.mark.parametrize(
    "rule_edges, expected",
    [
        ([("scalinglab.a", "scalinglab.b"), ("scalinglab.b", "scalinglab.a")], 1),
        ([("scalinglab.a", "scalinglab.b"), ("scalinglab.b", "scalinglab.c")], 0),
    ],
)
def test_the_cycle_finder_finds_a_planted_cycle(rule_edges, expected, monkeypatch):
    fake = {m: (PKG / "x.py", False) for m in ("scalinglab.a", "scalinglab.b", "scalinglab.c")}
    monkeypatch.setattr(sys.modules[__name__], "MODULES", fake)
    edges = [Edge(a, b, PKG / "x.py", 1, True) for a, b in rule_edges]
    cycles = _cycles(edges)
    assert len(cycles) == expected
    if expected:
        assert [(e.src, e.dst) for e in cycles[0]] == rule_edges
