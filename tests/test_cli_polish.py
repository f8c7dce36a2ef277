"""What a new user meets at the command line: help texts, closed pipes, quiet verify,
escaped names in tables, a status note printed once, big ``intervals`` inputs announced
(or refused) before the work starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import scalinglab.cli as cli
import scalinglab.cli.intervals as intervals_cli
from scalinglab.runner.status import StudyStatus
from scalinglab.runner.verify import VerifyResult

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}


def _subparsers(parser):
    for action in parser._actions:
        if getattr(action, "choices", None) and isinstance(action.choices, dict):
            for name, sub in action.choices.items():
                yield name, sub
                yield from _subparsers(sub)


def test_no_help_text_ends_in_a_dangling_literal_block_marker() -> None:
    parser = cli.build_parser()
    helps = dict(_subparsers(parser))
    assert {"run", "status", "verify", "intervals", "speedup", "coverage"} <= set(helps)
    for name, sub in helps.items():
        text = sub.format_help()
        assert not any(line.rstrip().endswith("::") for line in text.splitlines()), name
    # the JSON shape the docstring promises is shown, as written
    assert '{"models": {MODEL:' in helps["coverage"].format_help()
    assert '"probability_of_improvement"' in helps["intervals"].format_help()


@pytest.mark.slow  # a fresh interpreter: about a second, more on a busy machine
def test_a_closed_pipe_ends_quietly_with_the_shells_status() -> None:
    # the reader is gone before the command writes: every write hits EPIPE
    proc = subprocess.Popen(
        [sys.executable, "-m", "scalinglab", "run", "interval_estimates", "--help-params"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == cli.EXIT_BROKEN_PIPE
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


@pytest.mark.slow
def test_help_params_piped_into_head() -> None:
    cmd = f"{sys.executable} -m scalinglab run interval_estimates --help-params | head -1"
    out = subprocess.run(
        ["bash", "-c", cmd], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0
    assert len(out.stdout.splitlines()) == 1 and out.stdout.strip()
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr, out.stderr


def _verify(monkeypatch, capsys, rows, status="ok", error=None) -> tuple[int, str]:
    import scalinglab.runner.store as store
    import scalinglab.runner.verify as verify

    result = VerifyResult("s/default/RUN", status, error, rows=rows)
    monkeypatch.setattr(store, "resolve_run", lambda ref: Path(ref))
    monkeypatch.setattr(verify, "verify_run", lambda *a, **k: result)
    code = cli.main(["verify", "s/default/RUN", "-q"])
    return code, capsys.readouterr().out


def _row(name: str, same: bool) -> dict:
    return {"name": name, "point_a": 1.0, "ci_a": [0, 2], "point_b": 1.0, "ci_b": [0, 2],
            "same": same}  # fmt: skip


def test_verify_quiet_prints_the_verdict_only(monkeypatch, capsys) -> None:
    code, out = _verify(monkeypatch, capsys, [_row("a", True), _row("b", True)])
    assert code == 0 and out == "REPRODUCED: s/default/RUN (2 findings identical)\n"
    code, out = _verify(monkeypatch, capsys, [_row("a", True), _row("b", False)])
    assert code == 1
    assert out == "NOT REPRODUCED: s/default/RUN (1 of 2 findings differ: b)\n"
    code, out = _verify(monkeypatch, capsys, [], status="failed", error="cell 3 raised")
    assert code == 1 and "re-run failed: cell 3 raised" in out and len(out.splitlines()) == 1


def test_intervals_table_escapes_control_characters_in_names(tmp_path, capsys) -> None:
    rng = np.random.default_rng(0)
    names = ["\x1b[31mred\x1b[0m", "two\nlines", "tab\there", "café"]
    rows = [(a, f"t{t}", r, rng.random()) for a in names for t in range(2) for r in range(3)]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["algorithm", "task", "run", "score"]).to_csv(path, index=False)
    code = cli.main(
        ["intervals", str(path), "--reps", "20", "--format", "table",
         "--compare", f"{names[0]}:{names[3]}"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "\x1b" not in out and "\t" not in out
    assert "\\x1b[31mred\\x1b[0m" in out and "two\\nlines" in out and "tab\\there" in out
    assert "café" in out  # printable text is kept
    # one table line per algorithm and metric, none broken by a newline in a name
    assert sum(line.startswith("two\\nlines ") for line in out.splitlines()) == 4


def _statuses(note: str) -> list[StudyStatus]:
    return [
        StudyStatus(f"study{i}", "default", "up-to-date", run_id=f"r{i}", notes=[note])
        for i in range(13)
    ] + [StudyStatus("other", "default", "stale", run_id="r", reasons=["library: changed"])]


def test_status_prints_a_note_shared_by_many_studies_once(monkeypatch, capsys) -> None:
    import scalinglab.paths as paths
    import scalinglab.runner.status as status

    note = "hardware: this machine (x86_64-9c) has no record; the committed one is reused"
    monkeypatch.setattr(paths, "require_checkout", lambda: None)
    monkeypatch.setattr(status, "status_all", lambda **kw: _statuses(note))
    monkeypatch.setattr(status, "unfinished_runs", lambda: [])
    assert cli.main(["status"]) == 0
    out = capsys.readouterr().out
    assert out.count(note) == 1 and f"[1] note: {note}" in out
    lines = out.splitlines()
    assert sum(line.startswith("study") and line.rstrip().endswith("[1]") for line in lines) == 13
    assert "library: changed" in out  # short or unshared lines stay in their row


def _big_csv(tmp_path: Path, algorithms: int) -> Path:
    rng = np.random.default_rng(1)
    rows = [(f"a{a}", f"t{t}", r, rng.random()) for a in range(algorithms) for t in range(2)
            for r in range(2)]  # fmt: skip
    path = tmp_path / "big.csv"
    pd.DataFrame(rows, columns=["algorithm", "task", "run", "score"]).to_csv(path, index=False)
    return path


def test_intervals_refuses_an_input_that_needs_more_memory_than_there_is(
    tmp_path, monkeypatch, capsys
) -> None:
    path = _big_csv(tmp_path, 50)
    monkeypatch.setattr(intervals_cli, "BIG_INPUT", 0)
    monkeypatch.setattr(intervals_cli, "_available_memory", lambda: 1000)
    assert cli.main(["intervals", str(path), "--reps", "10"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    err = out.err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err
    assert "about 200 score rows" in err and "of memory" in err and "available" in err


def test_intervals_says_what_a_big_input_and_a_long_bootstrap_need(
    tmp_path, monkeypatch, capsys
) -> None:
    path = _big_csv(tmp_path, 50)
    monkeypatch.setattr(intervals_cli, "BIG_INPUT", 0)
    monkeypatch.setattr(intervals_cli, "BAR_UNITS", 50 * 10)
    monkeypatch.setattr(intervals_cli, "_available_memory", lambda: 2**40)
    assert cli.main(["intervals", str(path), "--reps", "10"]) == 0
    err = capsys.readouterr().err
    assert "reading 0 MiB of scores (about 200 rows; needs about" in err
    assert "bootstrapping 50 algorithms x 10 replicates" in err
    # the bar: shown for a long job on a terminal, left to the library's rule elsewhere
    assert intervals_cli._bar_wanted(10, 50, tty=True) is True
    assert intervals_cli._bar_wanted(10, 50, tty=False) is None
