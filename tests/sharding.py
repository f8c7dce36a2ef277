"""``pytest --shard=I/N``: run the I-th of N parts of the suite (``nox -s tests`` runs N at once).

The suite is cut at test-file level: every test of a file runs in the same shard, so a
module-scoped fixture is set up once. Files are dealt to the shards greedily, longest first,
each to the shard with the least work so far, by their measured durations in
``tests/durations.json`` (seconds per file, setup + call + teardown of its tests; a file not
in it weighs the table's median). Files whose tests share a session-scoped fixture defined
in a ``conftest.py`` are found at collection time and dealt as one unit, so that fixture is
set up in one shard only (``conftest.py`` names the groups of today). Every shard computes
the same plan from the same collected items, so with the same arguments the shards together
run each collected test exactly once. The plan is made after ``-m``/``-k`` deselection,
whose files are then weighed by their full-run durations.

Without ``--shard`` nothing is deselected. ``SCALINGLAB_WRITE_DURATIONS=PATH`` measures the
run's per-file durations and merges them into the JSON table at ``PATH`` (``nox -s tests``
with it set to ``tests/durations.json`` refreshes the committed table; shards writing the
same file take turns). Only files all of whose tests ran are written, so a run narrowed
with ``-m``, ``-k`` or a failing ``-x`` never records a part of a file as its whole.

This module is a pytest plugin that ``conftest.py`` loads; it imports nothing from the
project, and its functions are pure apart from the hooks (``tests/test_sharding.py``).
"""

from __future__ import annotations

import fcntl
import inspect
import json
import os
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

#: The weights table, relative to the rootdir: test file (as in node ids) -> seconds.
DURATIONS_FILE = "tests/durations.json"
#: Environment variable naming a table to write this run's per-file durations into.
WRITE_ENV = "SCALINGLAB_WRITE_DURATIONS"
#: Weight of every file when the table is empty.
FALLBACK_WEIGHT = 1.0
#: Fixture scopes that outlive a module: the files that use one are kept together.
SHARED_SCOPES = frozenset({"session", "package"})


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)`` with ``0 <= I < N``.

    Raises
    ------
    ValueError
        When ``text`` is not two integers ``I/N`` with ``0 <= I < N``.
    """
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i, n = -1, 0
    if not sep or not 0 <= i < n:
        raise ValueError(f"--shard wants I/N with 0 <= I < N (as 0/2 and 1/2), not {text!r}")
    return i, n


def file_of(nodeid: str) -> str:
    """The test file of a node id (``tests/test_x.py::test_y[1]`` -> ``tests/test_x.py``)."""
    return nodeid.split("::", 1)[0]


def file_key(item: pytest.Item, rootpath: Path) -> str:
    """``item``'s test file as the table names it: its path from the rootdir (what node
    ids start with), or the whole path for a file outside it."""
    try:
        return item.path.relative_to(rootpath).as_posix()
    except ValueError:
        return str(item.path)


def load_weights(path: Path) -> dict[str, float]:
    """The table at ``path`` (file -> seconds); empty when there is none."""
    try:
        table = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return {str(k): float(v) for k, v in table.items()}


def default_weight(weights: Mapping[str, float]) -> float:
    """Weight of a file missing from ``weights``: their median (a typical file)."""
    return statistics.median(weights.values()) if weights else FALLBACK_WEIGHT


def units(files: Iterable[str], groups: Iterable[Iterable[str]] = ()) -> list[tuple[str, ...]]:
    """``files`` joined into the units a shard takes whole: a file shares its unit with
    every file it shares a group with (transitively); files of a group that are not in
    ``files`` are ignored. Each unit is sorted, and so is the list."""
    parent = {f: f for f in files}

    def root(f: str) -> str:
        while parent[f] != f:
            parent[f] = parent[parent[f]]
            f = parent[f]
        return f

    for group in groups:
        members = sorted(f for f in set(group) if f in parent)
        for f in members[1:]:
            a, b = root(members[0]), root(f)
            if a != b:
                parent[max(a, b)] = min(a, b)
    joined: dict[str, list[str]] = {}
    for f in sorted(parent):
        joined.setdefault(root(f), []).append(f)
    return sorted(tuple(u) for u in joined.values())


@dataclass(frozen=True)
class Plan:
    """Files per shard and the seconds each shard is expected to take."""

    shards: tuple[tuple[str, ...], ...]
    loads: tuple[float, ...]
    joined: tuple[tuple[str, ...], ...]  # units of more than one file


def partition(
    files: Iterable[str],
    count: int,
    *,
    weights: Mapping[str, float] | None = None,
    groups: Iterable[Iterable[str]] = (),
    default: float | None = None,
) -> Plan:
    """Deal ``files`` to ``count`` shards, longest unit first, each to the least loaded.

    Parameters
    ----------
    files
        The test files to deal (order does not matter; duplicates count once).
    count
        How many shards.
    weights
        Seconds per file; a file missing from it weighs ``default``.
    groups
        Sets of files that must share a shard (see :func:`units`).
    default
        Weight of a file not in ``weights`` (None: :func:`default_weight`).

    Returns
    -------
    Plan
        Every file in exactly one shard, each shard's files sorted. Ties (equal weights,
        equal loads) go by file name and shard number, so the plan depends only on the
        arguments, never on their order.
    """
    if count < 1:
        raise ValueError(f"count must be at least 1, not {count}")
    weights = dict(weights or {})
    fallback = default_weight(weights) if default is None else default
    todo = units(files, groups)
    weight = {u: sum(weights.get(f, fallback) for f in u) for u in todo}
    shards: list[list[str]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for unit in sorted(todo, key=lambda u: (-weight[u], u)):
        i = min(range(count), key=lambda j: (loads[j], j))
        shards[i].extend(unit)
        loads[i] += weight[unit]
    dealt = sorted(f for s in shards for f in s)
    assert dealt == sorted(f for u in todo for f in u), "a file was lost or dealt twice"
    return Plan(
        shards=tuple(tuple(sorted(s)) for s in shards),
        loads=tuple(loads),
        joined=tuple(u for u in todo if len(u) > 1),
    )


def _conftest_fixture(fixturedef: object) -> bool:
    func = getattr(fixturedef, "func", None)
    try:
        return func is not None and Path(inspect.getfile(func)).name == "conftest.py"
    except TypeError:  # a built-in
        return False


def shared_fixture_groups(items: Sequence[pytest.Item]) -> list[set[str]]:
    """For each session- or package-scoped fixture of a ``conftest.py`` that ``items``
    use (directly or through another fixture), the set of files using it. pytest's own
    session fixtures (``tmp_path_factory``, ...) are cheap and not counted."""
    users: dict[tuple[str, str], set[str]] = {}
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:  # not a Python test function
            continue
        for name in item.fixturenames:
            defs = info.name2fixturedefs.get(name)
            if not defs:
                continue
            fixturedef = defs[-1]  # the one this item gets (the closest override)
            if fixturedef.scope in SHARED_SCOPES and _conftest_fixture(fixturedef):
                key = (fixturedef.baseid, fixturedef.argname)
                users.setdefault(key, set()).add(file_key(item, item.config.rootpath))
    return [files for _, files in sorted(users.items())]


# ---------------------------------------------------------------- hooks (conftest.py)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shard",
        type=parse_shard,
        default=None,
        metavar="I/N",
        help="run only the I-th of N parts of the collected tests (whole files, balanced by "
        f"{DURATIONS_FILE}; nox -s tests runs the parts side by side)",
    )


def pytest_configure(config: pytest.Config) -> None:
    target = os.environ.get(WRITE_ENV)
    if target:
        config.pluginmanager.register(DurationRecorder(Path(target), config.rootpath))


_PLAN = pytest.StashKey[tuple[int, Plan, int]]()


@pytest.hookimpl(trylast=True)  # after -m, -k and --deselect have had their say
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    shard: tuple[int, int] | None = config.getoption("shard")
    if shard is None:
        return
    index, count = shard
    files = {item: file_key(item, config.rootpath) for item in items}
    plan = partition(
        set(files.values()),
        count,
        weights=load_weights(config.rootpath / DURATIONS_FILE),
        groups=shared_fixture_groups(items),
    )
    mine = set(plan.shards[index])
    keep = [item for item in items if files[item] in mine]
    drop = [item for item in items if files[item] not in mine]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    config.stash[_PLAN] = (index, plan, len(keep))


def pytest_collection_finish(session: pytest.Session) -> None:
    found = session.config.stash.get(_PLAN, None)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if found is None or reporter is None:
        return
    index, plan, n_items = found
    n_files = sum(len(s) for s in plan.shards)
    line = (
        f"shard {index}/{len(plan.shards)}: {n_items} tests in {len(plan.shards[index])} of "
        f"{n_files} files, about {plan.loads[index]:.0f} s of {sum(plan.loads):.0f} s"
    )
    joined = [u for u in plan.joined if u[0] in plan.shards[index]]
    if joined:
        line += "; kept together (a shared session fixture): " + "; ".join(
            ", ".join(Path(f).name for f in u) for u in joined
        )
    reporter.write_line(line)


class DurationRecorder:
    """Adds up each file's test durations and merges them into a table at session end."""

    def __init__(self, target: Path, rootpath: Path) -> None:
        self.target = target
        self.rootpath = rootpath
        self.seconds: Counter[str] = Counter()
        self.finished: Counter[str] = Counter()
        self.selected: Counter[str] = Counter()
        self.narrowed: set[str] = set()

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.narrowed.update(file_of(item.nodeid) for item in items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.selected.update(file_of(item.nodeid) for item in session.items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = file_of(report.nodeid)
        self.seconds[path] += report.duration
        if report.when == "teardown":
            self.finished[path] += 1

    def measured(self) -> dict[str, float]:
        """Seconds of each file whose every test ran, and whose tests all were selected."""
        return {
            f: round(s, 2)
            for f, s in self.seconds.items()
            if f not in self.narrowed and self.finished[f] == self.selected[f]
        }

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        def exists(f: str) -> bool:  # a test file under the rootdir (not one outside it)
            return bool(f) and (self.rootpath / f).is_file()

        measured = {f: s for f, s in self.measured().items() if exists(f)}
        if measured:
            merge_table(self.target, measured, exists=exists)


def merge_table(
    target: Path, measured: Mapping[str, float], *, exists: Callable[[str], bool] | None = None
) -> None:
    """Write ``measured`` over the table at ``target`` (kept: its other files for which
    ``exists(file)`` holds), atomically and one process at a time."""
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(target.parent, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        table = load_weights(target)
        table = {f: s for f, s in table.items() if exists is None or exists(f)}
        table.update(measured)
        tmp = target.with_name(f".tmp-{target.name}-{os.getpid()}")
        tmp.write_text(json.dumps(dict(sorted(table.items())), indent=1) + "\n")
        os.replace(tmp, target)
    finally:
        os.close(lock)
