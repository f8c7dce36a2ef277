"""``scalinglab fit``: JSON shape, table output, and every bad-input path (exit 2, located)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scalinglab.cli import main
from scalinglab.fitting.synthetic import simulate
from scalinglab.paths import repo_root

PO_TRUTH = {"A": 0.418, "alpha": 0.495, "E": 3.111}


@pytest.fixture
def po_csv(tmp_path):
    x = np.tile(np.geomspace(0.25, 16, 6), 5)
    seeds = np.repeat([f"s{i}" for i in range(5)], 6)
    y = simulate(
        "power_offset", PO_TRUTH, x, seed=0, noise=0.005, groups=np.repeat(np.arange(5), 6)
    )
    p = tmp_path / "losses.csv"
    pd.DataFrame({"data_multiple": x, "loss": y, "seed": seeds}).to_csv(p, index=False)
    return p


def _run(capsys, *argv):
    code = main(["fit", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_json_output_shape(po_csv, capsys):
    code, out, err = _run(
        capsys,
        "power_offset",
        po_csv,
        "--x",
        "data_multiple",
        "--y",
        "loss",
        "--group",
        "seed",
        "--bootstrap",
        "100",
        "--seed",
        "3",
    )
    assert code == 0, err
    d = json.loads(out)
    assert list(d) == [
        "law",
        "params",
        "ci",
        "objective",
        "n_points",
        "n_groups",
        "converged",
        "warnings",
    ]
    assert d["law"] == "power_offset" and list(d["params"]) == ["A", "alpha", "E"]
    assert (d["n_points"], d["n_groups"], d["converged"], d["warnings"]) == (30, 5, True, [])
    for k, (lo, hi) in d["ci"].items():
        assert lo <= d["params"][k] <= hi
    assert abs(d["params"]["alpha"] - PO_TRUTH["alpha"]) < 0.05
    code2, out2, _ = _run(
        capsys,
        "power_offset",
        po_csv,
        "--x",
        "data_multiple",
        "--y",
        "loss",
        "--group",
        "seed",
        "--bootstrap",
        "100",
        "--seed",
        "3",
    )
    assert out2 == out  # same seed, same output


@pytest.mark.slow
def test_chinchilla_on_the_shipped_example_with_n_d_order(capsys):
    path = repo_root() / "data" / "examples" / "fit_chinchilla.csv"
    code, out, err = _run(
        capsys,
        "chinchilla",
        path,
        "--x",
        "N,D",
        "--y",
        "loss",
        "--group",
        "budget",
        "--bootstrap",
        "0",
    )
    assert code == 0, err
    d = json.loads(out)
    assert list(d["params"]) == ["E", "A", "B", "alpha", "beta"]
    assert (d["n_points"], d["n_groups"]) == (250, 10)
    # the data were simulated with Epoch's estimates (data/examples/README.md)
    assert abs(d["params"]["alpha"] - 0.348) < 0.05 and abs(d["params"]["beta"] - 0.366) < 0.05
    assert d["ci"]["alpha"] is None


def test_table_format_with_fixed_parameters(po_csv, capsys):
    code, out, err = _run(
        capsys,
        "power_offset",
        po_csv,
        "--x",
        "data_multiple",
        "--y",
        "loss",
        "--fix",
        "E=3.1",
        "--bootstrap",
        "0",
        "--format",
        "table",
    )
    assert code == 0, err
    assert "E (fixed)" in out and "3.1" in out and out.startswith("param")


def test_loglinear_kn_reports_one_intercept_per_group(tmp_path, capsys):
    sizes = np.array([5e8, 2e9, 8e9])
    N, X = np.repeat(sizes, 6), np.tile(np.geomspace(1e16, 1e18, 6), 3)
    y = simulate(
        "loglinear_kn",
        {"Kmax": 0.15, "N0": 1e9, "E0": np.array([0.8, 1.3, 1.8])},
        np.column_stack([N, X]),
        seed=0,
        noise=0.003,
        groups=np.repeat(np.arange(3), 6),
    )
    p = tmp_path / "rl.csv"
    pd.DataFrame(
        {"size": np.repeat(["0.5B", "2B", "8B"], 6), "N": N, "flops": X, "fail_rate": y}
    ).to_csv(p, index=False)
    code, out, err = _run(
        capsys,
        "loglinear_kn",
        p,
        "--x",
        "N,flops",
        "--y",
        "fail_rate",
        "--group",
        "size",
        "--bootstrap",
        "0",
    )
    assert code == 0, err
    assert list(json.loads(out)["params"]) == ["Kmax", "N0", "E0[0.5B]", "E0[2B]", "E0[8B]"]


def _bad(tmp_path, **cols):
    p = tmp_path / "bad.csv"
    pd.DataFrame(cols).to_csv(p, index=False)
    return p


X8 = np.geomspace(1, 64, 8)
Y8 = 0.4 * X8**-0.5 + 3.1


@pytest.mark.parametrize(
    "case, argv, expect",
    [
        ("unknown law", ["nolaw", "{p}", "--x", "D", "--y", "loss"], ["unknown law 'nolaw'"]),
        ("x count", ["chinchilla", "{p}", "--x", "D", "--y", "loss"], ["takes 2 input", "N,D"]),
        (
            "missing column",
            ["power_offset", "{p}", "--x", "tokens", "--y", "loss"],
            ["{p}", "column 'tokens'", "missing column"],
        ),
        (
            "bad --fix",
            ["power_offset", "{p}", "--x", "D", "--y", "loss", "--fix", "E"],
            ["--fix expects NAME=VALUE"],
        ),
        (
            "bad --fix value",
            ["power_offset", "{p}", "--x", "D", "--y", "loss", "--fix", "E=abc"],
            ["not a number"],
        ),
        (
            "unknown --fix",
            ["power_offset", "{p}", "--x", "D", "--y", "loss", "--fix", "R0=1"],
            ["no parameter 'R0'"],
        ),
        (
            "missing file",
            ["power_offset", "{p}.missing", "--x", "D", "--y", "loss"],
            ["no such file"],
        ),
    ],
)
def test_argument_errors_exit_2_with_one_line(tmp_path, capsys, case, argv, expect):
    p = _bad(tmp_path, D=X8, loss=Y8)
    code, out, err = _run(capsys, *[a.format(p=p) for a in argv])
    assert code == 2 and out == ""
    assert err.startswith("scalinglab fit: error:") and err.count("\n") == 1
    for e in expect:
        assert e.format(p=p) in err, (case, err)


def test_data_errors_name_file_column_and_row(tmp_path, capsys):
    loss = Y8.astype(object)
    loss[3] = "oops"
    p = _bad(tmp_path, D=X8, loss=loss)
    code, _, err = _run(capsys, "power_offset", p, "--x", "D", "--y", "loss")
    assert code == 2 and f"file {p}, column 'loss', row 4: not a number" in err

    loss = Y8.copy()
    loss[5] = np.nan
    p = _bad(tmp_path, D=X8, loss=loss)
    code, _, err = _run(capsys, "power_offset", p, "--x", "D", "--y", "loss")
    assert code == 2 and "column 'loss', row 6" in err and "missing" in err

    xs = X8.copy()
    xs[0] = -1.0
    p = _bad(tmp_path, D=xs, loss=Y8)
    code, _, err = _run(capsys, "power_offset", p, "--x", "D", "--y", "loss")
    assert code == 2 and "column 'D', row 1" in err and "must be > 0" in err

    p = _bad(tmp_path, D=X8[:2], loss=Y8[:2])
    code, _, err = _run(capsys, "power_offset", p, "--x", "D", "--y", "loss")
    assert code == 2 and "2 points for 3 free parameters" in err and str(p) in err

    p = _bad(tmp_path, D=X8, loss=Y8, run=list("aaabbbbc"))
    code, _, err = _run(capsys, "power_offset", p, "--x", "D", "--y", "loss", "--group", "run")
    assert code == 2 and "column 'run', row 8" in err and "single point" in err

    p = _bad(tmp_path, D=X8, loss=Y8 - 3.5)  # negative losses under log residuals
    code, _, err = _run(capsys, "power_offset", p, "--x", "D", "--y", "loss")
    assert code == 2 and "column 'loss', row 1" in err and "--objective ls" in err


@pytest.mark.parametrize(
    "extra, expect",
    [
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--bound", "E=5:1"], "--bound E=5:1: the lower bound must be below the upper"),
        (["--delta", "-1"], "--delta (the Huber threshold) must be > 0, got -1.0"),
        (["--jobs", "0"], "--jobs must be >= 1 (or -1: all CPUs), got 0"),
    ],
)
def test_bad_option_values_exit_2_before_fitting(po_csv, capsys, extra, expect):
    code, out, err = _run(
        capsys,
        "power_offset",
        po_csv,
        "--x",
        "data_multiple",
        "--y",
        "loss",
        "--bootstrap",
        "0",
        *extra,
    )
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("scalinglab fit: error:") and expect in err, err


def test_bad_values_print_plain_numbers_not_numpy_reprs(tmp_path, capsys):
    p = tmp_path / "neg.csv"
    p.write_text("D,loss\n1,3\n-1,2\n2,2.5\n4,2.2\n")
    code, _, err = _run(capsys, "power_offset", p, "--x", "D", "--y", "loss")
    assert code == 2 and "row 2: value -1.0 must be > 0" in err and "np.float64" not in err


def test_big_tables_are_announced_on_stderr(po_csv, capsys, monkeypatch):
    import scalinglab.cli.fit as fit_cli

    monkeypatch.setattr(fit_cli, "BIG_TABLE", 10)  # the 30-point table counts as big here
    code, out, err = _run(
        capsys, "power_offset", po_csv, "--x", "data_multiple", "--y", "loss", "--bootstrap", "0"
    )
    assert code == 0 and json.loads(out)["n_points"] == 30
    assert err.startswith("scalinglab fit: 30 points: every start of the multi-start fit")
