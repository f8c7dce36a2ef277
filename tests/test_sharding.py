"""The suite's shards (``tests/sharding.py``) and how ``nox -s tests`` runs and merges them.

The plan: every file in exactly one shard, the same plan whatever the order it is given
in, files sharing a session fixture together, and the loads within the greedy rule's
bound (longest first: at most ``4/3 - 1/(3N)`` times the best possible). End to end, on a
small suite run by pytester in process: the shards together run each test once and set a
shared session fixture up once; a run without ``--shard`` deselects nothing; the duration
table records only files that ran whole.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: The inner runs' arguments: no .pytest_cache written in pytester's folders.
NO_CACHE = ("-p", "no:cacheprovider")


def _load(name: str, path: Path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sharding = _load("scalinglab_tests_sharding", TESTS / "sharding.py")  # as conftest.py does


@pytest.fixture(autouse=True)
def _no_table_written(monkeypatch):
    # an outer run refreshing tests/durations.json must not record the inner suites here
    monkeypatch.delenv(sharding.WRITE_ENV, raising=False)


def _lpt_bound(plan, weights, count: int) -> float:
    """The longest-first rule's guarantee: ``(4/3 - 1/(3N))`` times a lower bound on the
    best possible longest shard (the mean load, and the heaviest unit)."""
    total = sum(plan.loads)
    heaviest = max(sum(weights[f] for f in u) for u in sharding.units(weights, plan.joined))
    return (4 / 3 - 1 / (3 * count)) * max(total / count, heaviest)


# ------------------------------------------------------------------------------- the plan


def test_shard_option_parses_i_of_n():
    assert sharding.parse_shard("0/2") == (0, 2)
    assert sharding.parse_shard("3/4") == (3, 4)
    for bad in ("2/2", "-1/2", "0/0", "1", "a/b", "1/2/3", ""):
        with pytest.raises(ValueError, match="I/N"):
            sharding.parse_shard(bad)


def test_every_file_lands_in_exactly_one_shard():
    rng = random.Random(0)
    for trial in range(20):
        files = [f"tests/test_{i:03d}.py" for i in range(rng.randint(0, 60))]
        weights = {f: rng.expovariate(1.0) for f in files if rng.random() < 0.8}
        groups = [rng.sample(files, k=min(3, len(files))) for _ in range(rng.randint(0, 3))]
        for count in range(1, 6):
            plan = sharding.partition(files, count, weights=weights, groups=groups)
            assert len(plan.shards) == count == len(plan.loads)
            dealt = [f for shard in plan.shards for f in shard]
            assert sorted(dealt) == sorted(files), (trial, count)
            assert all(list(s) == sorted(s) for s in plan.shards)


def test_one_shard_is_the_whole_suite_and_more_shards_than_files_leave_some_empty():
    files = ["tests/test_a.py", "tests/test_b.py"]
    assert sharding.partition(files, 1).shards == (tuple(files),)
    plan = sharding.partition(files, 4)
    assert sorted(len(s) for s in plan.shards) == [0, 0, 1, 1]


def test_the_plan_depends_on_the_files_and_weights_only_not_their_order():
    rng = random.Random(1)
    files = [f"tests/test_{i:02d}.py" for i in range(40)]
    weights = {f: float(rng.choice([1, 2, 2, 5, 30])) for f in files}  # many ties
    groups = [files[3:6], files[10:12]]
    plan = sharding.partition(files, 3, weights=weights, groups=groups)
    for _ in range(5):
        shuffled = files[:]
        rng.shuffle(shuffled)
        items = list(weights.items())
        rng.shuffle(items)
        again = sharding.partition(
            shuffled, 3, weights=dict(items), groups=[g[::-1] for g in reversed(groups)]
        )
        assert again == plan


def test_files_sharing_a_fixture_share_a_shard_even_through_a_chain_of_groups():
    files = [f"tests/test_{c}.py" for c in "abcdefgh"]
    weights = dict.fromkeys(files, 10.0)
    groups = [
        {"tests/test_a.py", "tests/test_c.py"},
        {"tests/test_c.py", "tests/test_h.py"},  # a, c and h: one unit
        {"tests/test_e.py", "tests/test_gone.py"},  # a file not collected is ignored
    ]
    for count in (2, 3, 4):
        plan = sharding.partition(files, count, weights=weights, groups=groups)
        (home,) = [s for s in plan.shards if "tests/test_a.py" in s]
        assert {"tests/test_c.py", "tests/test_h.py"} <= set(home)
        assert plan.joined == (("tests/test_a.py", "tests/test_c.py", "tests/test_h.py"),)
        assert "tests/test_gone.py" not in {f for s in plan.shards for f in s}


def test_longest_first_on_a_known_table():
    weights = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 3.0, "e": 3.0}
    plan = sharding.partition(weights, 2, weights=weights)
    # a -> 0, b -> 1, c -> 1 (4 < 5), d -> 0 (5 < 7), e -> 1 (7 < 8): 8 and 10 (best: 9, 9)
    assert plan.shards == (("a", "d"), ("b", "c", "e")) and plan.loads == (8.0, 10.0)
    assert max(plan.loads) <= _lpt_bound(plan, weights, 2)
    # a missing file weighs the median (3 s); a default can be given
    assert sharding.partition([*weights, "new"], 2, weights=weights).loads == (11.0, 10.0)
    assert sharding.partition(["x", "y", "z"], 2, default=2.0).loads == (4.0, 2.0)


def test_loads_stay_within_the_longest_first_bound():
    rng = random.Random(2)
    for _ in range(50):
        weights = {f"f{i}": rng.lognormvariate(0, 1.5) for i in range(rng.randint(1, 80))}
        groups = [rng.sample(sorted(weights), k=min(4, len(weights)))]
        for count in (2, 3):
            plan = sharding.partition(weights, count, weights=weights, groups=groups)
            assert max(plan.loads) <= _lpt_bound(plan, weights, count) + 1e-9
            assert sum(plan.loads) == pytest.approx(sum(weights.values()))


def _session_fixture_users() -> list[set[str]]:
    """For each session-scoped fixture of ``tests/conftest.py``, the test files that name
    it as an argument of a test or fixture (a grep that reads Python, not text)."""
    tree = ast.parse((TESTS / "conftest.py").read_text())
    names = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any(
            isinstance(d, ast.Call)
            and any(k.arg == "scope" and getattr(k.value, "value", None) == "session" for k in d.keywords)
            for d in node.decorator_list
        )
    ]  # fmt: skip
    users: list[set[str]] = []
    for name in names:
        found = set()
        for path in sorted(TESTS.glob("test_*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef) and name in {a.arg for a in node.args.args}:
                    found.add(f"tests/{path.name}")
        users.append(found)
    return users


def test_the_committed_table_names_test_files_and_balances_two_shards_within_5_percent():
    weights = sharding.load_weights(ROOT / sharding.DURATIONS_FILE)
    files = {f"tests/{p.name}" for p in TESTS.glob("test_*.py")}
    assert weights and set(weights) <= files, set(weights) - files
    assert all(s >= 0 for s in weights.values())
    groups = _session_fixture_users()
    assert {
        "tests/test_optimizers_design.py",
        "tests/test_optimizers_sweep.py",
        "tests/test_optimizers_medium.py",
        "tests/test_study_optimizer_comparison.py",
    } in groups  # the group conftest.py's docstring names
    plan = sharding.partition(files, 2, weights=weights, groups=groups)
    mean = sum(plan.loads) / 2
    assert max(plan.loads) <= 1.05 * mean, plan.loads


# ---------------------------------------------------------------------- end to end, pytester


def _suite(pytester: pytest.Pytester, log: Path) -> dict[str, int]:
    """Six test files (tests per file returned); ``test_b`` and ``test_d`` use the session
    fixture ``shared`` (``test_d`` through a module fixture), which logs each setup."""
    pytester.makeconftest(
        f"""
        import pytest

        @pytest.fixture(scope="session")
        def shared():
            with open({str(log)!r}, "a") as fh:
                fh.write("setup\\n")
            return 1
        """
    )
    sizes = {"a": 3, "b": 2, "c": 4, "d": 2, "e": 1, "f": 3}
    for name, n in sizes.items():
        arg = {"b": "shared", "d": "via"}.get(name, "")
        body = "import pytest\n\n"
        if name == "d":
            body += "@pytest.fixture(scope='module')\ndef via(shared):\n    return shared\n\n"
        body += "".join(f"def test_{name}{i}({arg}):\n    pass\n\n" for i in range(n))
        pytester.makepyfile(**{f"test_{name}": body})
    return {f"test_{k}.py": v for k, v in sizes.items()}


def _passed(reprec) -> list[str]:
    passed, skipped, failed = reprec.listoutcomes()
    assert not failed and not skipped
    return [r.nodeid for r in passed]


def test_the_shards_together_run_every_test_once_and_the_shared_fixture_once(pytester, tmp_path):
    log = tmp_path / "setups.log"
    sizes = _suite(pytester, log)
    everything = _passed(pytester.inline_run(*NO_CACHE, plugins=[sharding]))
    assert len(everything) == sum(sizes.values())
    assert log.read_text().count("setup") == 1
    log.unlink()
    for count in (2, 3):
        seen: list[str] = []
        for index in range(count):
            reprec = pytester.inline_run(f"--shard={index}/{count}", *NO_CACHE, plugins=[sharding])
            ran = _passed(reprec)
            assert ran, f"shard {index}/{count} ran nothing"
            files = {sharding.file_of(n) for n in ran}
            assert ("test_b.py" in files) == ("test_d.py" in files)
            seen += ran
        assert sorted(seen) == sorted(everything)  # each test once, none lost
        assert log.read_text().count("setup") == 1  # in the one shard holding b and d
        log.unlink()


def test_without_shard_nothing_is_deselected(pytester, tmp_path):
    _suite(pytester, tmp_path / "setups.log")
    reprec = pytester.inline_run(*NO_CACHE, plugins=[sharding])
    assert reprec.getcalls("pytest_deselected") == []
    result = pytester.runpytest_inprocess("--shard=1/2", *NO_CACHE, plugins=[sharding])
    result.stdout.fnmatch_lines(["shard 1/2: * tests in * of 6 files*"])
    result = pytester.runpytest_inprocess("--shard=2/2", plugins=[sharding])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_duration_table_records_only_files_that_ran_whole(pytester, tmp_path, monkeypatch):
    sizes = _suite(pytester, tmp_path / "setups.log")
    table = tmp_path / "durations.json"
    table.write_text(json.dumps({"test_gone.py": 5.0, "test_a.py": 99.0}))
    monkeypatch.setenv(sharding.WRITE_ENV, str(table))
    for index in range(2):  # two shards write into one table
        pytester.inline_run(f"--shard={index}/2", *NO_CACHE, plugins=[sharding])
    first = json.loads(table.read_text())
    assert set(first) == set(sizes)  # test_gone.py (no such file) pruned
    assert all(0 <= s < 99 for s in first.values())
    assert list(first) == sorted(first)
    table.write_text(json.dumps({**first, "test_a.py": 99.0, "test_c.py": 77.0}))
    pytester.inline_run("-k", "a0 or c", *NO_CACHE, plugins=[sharding])
    second = json.loads(table.read_text())
    assert second["test_a.py"] == 99.0  # two of its three tests deselected: not its whole
    assert second["test_c.py"] != 77.0  # all four of its tests ran


# ---------------------------------------------------------------------- the nox session


def _unregistered(func=None, **kwargs):
    """``nox.session`` that registers nothing (``test_noxfile.py`` loads the sessions)."""
    return func if func is not None else (lambda f: f)


@pytest.fixture(scope="module")
def noxfile():
    nox = pytest.importorskip("nox")  # the test extra installs it
    with pytest.MonkeyPatch.context() as mp:  # a second load would re-register every session
        mp.setattr(nox, "session", _unregistered)
        return _load("scalinglab_noxfile_functions", ROOT / "noxfile.py")


def test_shard_count_comes_from_the_environment(noxfile):
    assert noxfile.shard_count({}) == 2
    assert noxfile.shard_count({noxfile.SHARDS_ENV: "1"}) == 1
    assert noxfile.shard_count({noxfile.SHARDS_ENV: " 3 "}) == 3
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(ValueError, match=noxfile.SHARDS_ENV):
            noxfile.shard_count({noxfile.SHARDS_ENV: bad})


def test_each_shard_gets_its_own_temporary_and_cache_folders(noxfile, tmp_path):
    cmds = [
        noxfile.shard_command(i, 2, ["-m", "not slow"], folder=tmp_path / f"shard-{i}")
        for i in range(2)
    ]
    for i, cmd in enumerate(cmds):
        assert cmd[1] == f"--shard={i}/2" and cmd[-2:] == ["-m", "not slow"]
        assert f"--basetemp={tmp_path / f'shard-{i}' / 'basetemp'}" in cmd
        assert f"cache_dir={tmp_path / f'shard-{i}' / 'cache'}" in cmd
    assert not set(cmds[0][1:-2]) & set(cmds[1][1:-2]) - {"-o"}


def test_lastfailed_merges_as_one_run_would_have_left_it(noxfile, tmp_path):
    before = {"a": True, "b": True, "e": True}
    # shard 0 passed a and failed c; shard 1 failed b again, failed d, passed e
    after = [{"b": True, "c": True, "e": True}, {"a": True, "b": True, "d": True}]
    want = dict.fromkeys("bcd", True)
    assert noxfile.merge_lastfailed(before, after) == want
    # through the cache folders, with the node ids (for --nf) united
    main, shards = tmp_path / "main", [tmp_path / "s0", tmp_path / "s1"]
    (main / "v" / "cache").mkdir(parents=True)
    (main / "v" / "cache" / "lastfailed").write_text(json.dumps(before))
    (main / "v" / "cache" / "nodeids").write_text(json.dumps(["a", "z"]))
    seed = noxfile.read_cache(main)
    for shard, lastfailed, ids in zip(shards, after, (["a", "c"], ["b", "d"]), strict=True):
        noxfile.seed_cache(seed, shard)
        assert noxfile.read_cache(shard) == {"lastfailed": before, "nodeids": ["a", "z"]}
        (shard / "v" / "cache" / "lastfailed").write_text(json.dumps(lastfailed))
        (shard / "v" / "cache" / "nodeids").write_text(json.dumps(ids))
    # meanwhile, a pytest run elsewhere passed b and wrote the main cache
    (main / "v" / "cache" / "lastfailed").write_text(json.dumps({"a": True, "e": True}))
    noxfile.merge_caches(main, shards, seed=seed)
    merged = noxfile.read_cache(main)  # b dropped too: c and d are the failures left
    assert merged == {"lastfailed": dict.fromkeys("cd", True), "nodeids": list("abcdz")}
    # a first run (no cache yet): every failure is new, the folder is made as pytest makes it
    fresh = tmp_path / "fresh"
    (shards[0] / ".gitignore").write_text("*\n")
    noxfile.merge_caches(fresh, shards, seed=noxfile.read_cache(fresh))
    assert (fresh / ".gitignore").is_file()
    assert noxfile.read_cache(fresh)["lastfailed"] == dict.fromkeys("abcde", True)


def test_a_shards_summary_and_failures_are_found_in_its_output(noxfile):
    lines = [
        "tests/test_a.py ..F  [100%]",
        "=================== short test summary info ===================",
        "FAILED tests/test_a.py::test_x - assert 1 == 2",
        "============= 1 failed, 2 passed in 3.21s (0:00:03) =============",
    ]
    summary, short = noxfile.shard_report(lines)
    assert summary == lines[-1] and short == [lines[2]]
    summary, short = noxfile.shard_report(["", "=== no tests ran in 0.01s ==="])
    assert summary == "=== no tests ran in 0.01s ===" and short == []


def test_shards_still_running_after_an_error_are_interrupted(noxfile):
    # a job started in the background of a non-interactive shell inherits SIGINT ignored:
    # give the children the default handler, as a shard started from a terminal has
    procs = [
        subprocess.Popen(
            ["sleep", "30"],
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        for _ in range(2)
    ]
    procs[0].kill()
    procs[0].wait()
    noxfile._stop(procs, grace_s=0.1)
    assert procs[0].returncode == -signal.SIGKILL  # already ended: left alone
    assert procs[1].returncode == -signal.SIGINT  # as Ctrl-C, so pytest tears down
