"""A user's own samples: the table loader and the ``scalinglab coverage`` verb."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scalinglab.cli import main
from scalinglab.errors import InputError
from scalinglab.stats import passk as cv
from scalinglab.stats import samples as analysis
from scalinglab.stats.samples import load_samples


def _table(tmp_path, rows, columns=("model", "problem", "sample", "correct")):
    p = tmp_path / "s.csv"
    pd.DataFrame(rows, columns=list(columns)).to_csv(p, index=False)
    return p


def _simulated(tmp_path, n=16, problems=30):
    rng = np.random.default_rng(0)
    rows = []
    for m, q in (("A", 0.3), ("B", 0.1)):
        for p in range(problems):
            pp = rng.beta(q * 2, 2 * (1 - q))
            rows += [(m, f"q{p}", s, int(rng.random() < pp)) for s in range(n)]
    return _table(tmp_path, rows)


def test_table_gives_the_estimator_per_model(tmp_path):
    rows = [
        ("A", "p1", 0, 1),
        ("A", "p1", 1, 0),
        ("A", "p2", 0, 0),
        ("A", "p2", 1, 0),
        ("A", "p2", 2, 1),
    ]
    ds = load_samples(_table(tmp_path, rows))
    assert ds["n"].values.tolist() == [[2, 3]]
    assert analysis.max_k(ds) == 2
    cur = analysis.coverage_curves(ds, k_max=2, reps=10, seed=0)
    want = cv.pass_at_k(np.array([2, 3]), np.array([1, 1]), np.array([1, 2])).mean(axis=0)
    np.testing.assert_allclose(cur.cov["A"], want)


@pytest.mark.parametrize(
    ("rows", "column", "row"),
    [
        ([("A", "p", 0, 1), ("A", "p", 1, "maybe")], "correct", 2),
        ([("A", "p", 0, 1), ("A", "p", 0, 0)], "sample", 2),
    ],
)
def test_bad_rows_are_named(tmp_path, rows, column, row):
    with pytest.raises(InputError) as err:
        load_samples(_table(tmp_path, rows))
    assert err.value.column == column and err.value.row == row


def test_missing_column_is_named(tmp_path):
    p = _table(tmp_path, [("p", 0)], columns=("problem", "sample"))
    with pytest.raises(InputError, match="correct"):
        load_samples(p)


@pytest.mark.slow
def test_cli_prints_coverage_and_law(tmp_path, capsys):
    p = _simulated(tmp_path)
    assert main(["coverage", str(p), "--k", "1,4,16", "--bootstrap", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    a = out["models"]["A"]
    assert list(a["coverage"]) == ["1", "4", "16"]
    assert a["coverage"]["1"] < a["coverage"]["16"]
    lo, hi = a["ci"]["4"]
    assert lo <= a["coverage"]["4"] <= hi
    assert a["law"]["a"] < 0 and a["law"]["b"] < 0 and a["law"]["ci"]["b"] is not None
    assert main(["coverage", str(p), "--format", "table", "--bootstrap", "0"]) == 0
    assert "law: coverage = exp(a k^b)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args", [["--k", "0,4"], ["--k", "99"], ["--k", "x"], ["--bootstrap", "-1"], ["--level", "1.5"]]
)
def test_cli_errors_exit_2(tmp_path, capsys, args):
    p = _simulated(tmp_path)
    assert main(["coverage", str(p), *args]) == 2
    assert "scalinglab coverage: error:" in capsys.readouterr().err


def test_cli_missing_file_exit_2(tmp_path, capsys):
    assert main(["coverage", str(tmp_path / "nope.csv")]) == 2
    assert "file not found" in capsys.readouterr().err
