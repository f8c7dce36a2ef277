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
    # 10 seeds: the fewest a 95% group bootstrap takes without a warning (min_groups)
    x = np.tile(np.geomspace(0.25, 16, 6), 10)
    seeds = np.repeat([f"s{i}" for i in range(10)], 6)
    y = simulate(
        "power_offset", PO_TRUTH, x, seed=0, noise=0.005, groups=np.repeat(np.arange(10), 6)
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
        "stderr",
        "stderr_method",
        "stderr_bootstrap",
        "correlation",
        "statistics",
        "residuals",
    ]
    assert d["law"] == "power_offset" and list(d["params"]) == ["A", "alpha", "E"]
    assert (d["n_points"], d["n_groups"], d["converged"], d["warnings"]) == (60, 10, True, [])
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
    assert "E (fixed)" in out and "3.1" in out and out.startswith("[[Fit statistics]]")


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
    argv = ["loglinear_kn", p, "--x", "N,flops", "--y", "fail_rate", "--group", "size"]
    code, out, err = _run(capsys, *argv, "--bootstrap", "0", "--predict", "N=2e9,flops=1e19")
    assert code == 2 and "per-group parameters; add group=LABEL" in err
    code, out, err = _run(capsys, *argv, "--predict", "N=2e9,flops=1e19,group=9B")
    assert code == 2 and "unknown group(s) ['9B']; the groups are ['0.5B', '2B', '8B']" in err
    code, out, err = _run(
        capsys, *argv, "--bootstrap", "0", "--predict", "N=2e9,flops=1e19,group=2B"
    )
    (pt,) = json.loads(out)["predictions"]["points"]
    assert pt["x"]["group"] == "2B" and 0 < pt["point"] < 1 and pt["ci"] is None


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


@pytest.mark.parametrize(
    "cell, column, shown",
    [
        ("nan", "loss", "missing or non-finite value (nan)"),
        ("", "loss", "missing or non-finite value (nan)"),
        ("inf", "D", "missing or non-finite value (inf)"),
        ("abc", "loss", "not a number: 'abc'"),
    ],
)
def test_missing_and_non_finite_values_name_file_column_row_in_plain_numbers(
    tmp_path, capsys, cell, column, shown
):
    p = tmp_path / "bad.csv"
    rows = ["1,3", "2,2.5", "4,2.2"]
    rows[1] = f"{cell},2.5" if column == "D" else f"2,{cell}"
    p.write_text("D,loss\n" + "\n".join(rows) + "\n")
    code, _, err = _run(capsys, "power_offset", p, "--x", "D", "--y", "loss")
    assert code == 2 and err.count("\n") == 1, err
    assert f"file {p}, column '{column}', row 2: {shown}" in err, err
    assert "np.float64" not in err and "np." not in err


def test_big_tables_are_announced_on_stderr(po_csv, capsys, monkeypatch):
    import scalinglab.cli.fit as fit_cli

    monkeypatch.setattr(fit_cli, "BIG_TABLE", 10)  # the 60-point table counts as big here
    code, out, err = _run(
        capsys, "power_offset", po_csv, "--x", "data_multiple", "--y", "loss", "--bootstrap", "0"
    )
    assert code == 0 and json.loads(out)["n_points"] == 60
    assert err.startswith("scalinglab fit: 60 points: every start of the multi-start fit")


# ----------------------------------------------------------------------------- the report
def _fit_json(capsys, path, *extra):
    code, out, err = _run(
        capsys, "power_offset", path, "--x", "data_multiple", "--y", "loss", *extra
    )
    assert code == 0, err
    return json.loads(out), err


def test_least_squares_standard_errors_are_curve_fits(po_csv, capsys):
    # the Jacobian covariance s^2 (J^T J)^-1 with s^2 = chisqr / (n - k), as lmfit and
    # scipy's curve_fit compute it (A is optimized on the log scale: the delta method
    # brings it back to A's units, which is what curve_fit in A itself gives)
    from scipy.optimize import curve_fit

    d, _ = _fit_json(capsys, po_csv, "--objective", "ls", "--bootstrap", "0")
    assert "statsmodels OLS" in d["stderr_method"] and "Jacobian" in d["stderr_method"]
    df = pd.read_csv(po_csv)
    p0 = [d["params"][k] for k in ("A", "alpha", "E")]
    popt, pcov = curve_fit(
        lambda x, A, alpha, E: A * x**-alpha + E, df.data_multiple, df.loss, p0=p0
    )
    assert popt == pytest.approx(p0, rel=1e-4)
    se = np.sqrt(np.diag(pcov))
    assert [d["stderr"][k] for k in ("A", "alpha", "E")] == pytest.approx(se, rel=1e-3)
    corr = pcov / np.outer(se, se)
    assert d["correlation"]["A"]["alpha"] == pytest.approx(corr[0, 1], abs=1e-3)
    assert d["correlation"]["alpha"]["A"] == d["correlation"]["A"]["alpha"]
    assert d["stderr_bootstrap"] is None


def test_statistics_follow_lmfit(po_csv, capsys):
    d, _ = _fit_json(capsys, po_csv, "--objective", "ls", "--bootstrap", "0", "--group", "seed")
    st, n, k = d["statistics"], 60, 3
    assert (st["n"], st["k"], st["dof"]) == (n, k, n - k)
    assert st["redchi"] == pytest.approx(st["chisqr"] / (n - k))
    assert st["aic"] == pytest.approx(n * np.log(st["chisqr"] / n) + 2 * k)
    assert st["bic"] == pytest.approx(n * np.log(st["chisqr"] / n) + np.log(n) * k)
    df = pd.read_csv(po_csv)
    p = d["params"]
    resid = df.loss - (p["A"] * df.data_multiple ** -p["alpha"] + p["E"])
    assert st["chisqr"] == pytest.approx(float(np.sum(resid**2)), rel=1e-6)
    r = d["residuals"]
    assert r["space"] == "y - model"
    assert r["median"] == pytest.approx(float(np.median(resid)), abs=1e-9)
    i = int(np.argmax(np.abs(resid)))
    assert r["largest"]["row"] == i + 1 and r["largest"]["group"] == df.seed[i]


def test_huber_standard_errors_say_where_they_come_from(po_csv, capsys):
    d, _ = _fit_json(capsys, po_csv, "--bootstrap", "200")
    assert "statsmodels RLM" in d["stderr_method"] and "H1" in d["stderr_method"]
    assert d["residuals"]["space"] == "log(y) - log(model)"
    for k in ("A", "alpha", "E"):  # local and bootstrap errors of the same order
        assert 0 < d["stderr"][k] and 1 / 4 < d["stderr"][k] / d["stderr_bootstrap"][k] < 4


def test_table_is_an_lmfit_style_report(po_csv, capsys):
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
        "--format",
        "table",
    )
    assert code == 0, err
    for section in ("[[Fit statistics]]", "[[Variables]]", "[[Residuals]]", "[[Correlations]]"):
        assert section in out
    assert "Akaike info" in out and "standard errors: Jacobian at the optimum" in out
    assert "C(A, alpha)" in out


# ----------------------------------------------------------------------------- degenerate data
def test_all_identical_points_are_an_error(tmp_path, capsys):
    path = repo_root() / "data" / "examples" / "fit_chinchilla.csv"
    df = pd.read_csv(path)
    same = df.assign(N=df.N[0], D=df.D[0], loss=df.loss[0])
    p = tmp_path / "same.csv"
    same.to_csv(p, index=False)
    code, out, err = _run(capsys, "chinchilla", p, "--x", "N,D", "--y", "loss", "--group", "budget")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"file {p}: all 250 points are identical" in err and "at least 5 distinct" in err

    p2 = tmp_path / "one_x.csv"  # one input value, noisy losses: still nothing to fit
    pd.DataFrame({"D": np.full(8, 4.0), "loss": Y8}).to_csv(p2, index=False)
    code, _, err = _run(capsys, "power_offset", p2, "--x", "D", "--y", "loss")
    assert code == 2 and "only 1 distinct input(s) (D; all at D=4)" in err, err


def test_flat_data_warn_and_give_no_standard_errors(tmp_path, capsys):
    p = _bad(tmp_path, D=X8, loss=np.full(8, 3.0))
    code, out, err = _run(capsys, "power_offset", p, "--x", "D", "--y", "loss", "--bootstrap", "0")
    assert code == 0
    d = json.loads(out)
    assert any("every loss is 3: the data are flat" in w for w in d["warnings"])
    assert any("rank-deficient" in w for w in d["warnings"])
    assert d["stderr"]["alpha"] is None and "warning: every loss is 3" in err


def test_too_few_bootstrap_groups_warn_with_the_minimum(tmp_path, capsys):
    x = np.tile(np.geomspace(0.25, 16, 6), 3)
    g = np.repeat(np.arange(3), 6)
    y = simulate("power_offset", PO_TRUTH, x, seed=1, noise=0.005, groups=g)
    p = tmp_path / "three.csv"
    pd.DataFrame({"D": x, "loss": y, "seed": np.repeat(["a", "b", "c"], 6)}).to_csv(p, index=False)
    code, out, err = _run(
        capsys, "power_offset", p, "--x", "D", "--y", "loss", "--group", "seed", "--bootstrap", "50"
    )
    assert code == 0
    (w,) = [w for w in json.loads(out)["warnings"] if w.startswith("bootstrap: only 3 groups")]
    assert "(seed)" in w and "10 distinct resamples" in w and "at least 10 groups" in w
    assert f"scalinglab fit: warning: {w}" in err


# ----------------------------------------------------------------------------- predict, plot
def test_predict_gives_the_law_and_its_bootstrap_interval(po_csv, capsys):
    d, _ = _fit_json(capsys, po_csv, "--bootstrap", "100", "--predict", "data_multiple=32")
    (pt,) = d["predictions"]["points"]
    p = d["params"]
    assert pt["x"] == {"data_multiple": 32.0}
    assert pt["point"] == pytest.approx(p["A"] * 32 ** -p["alpha"] + p["E"])
    lo, hi = pt["ci"]
    assert lo < pt["point"] < hi and hi - lo < 0.1
    assert d["predictions"]["interval"].startswith("bootstrap percentile (100 draws")


@pytest.mark.parametrize(
    "extra, expect",
    [
        (["--predict", "N=3"], "no input 'N'; the inputs are the --x columns data_multiple"),
        (["--predict", "data_multiple"], "--predict expects X=V[,X=V]"),
        (["--compute-optimal", "C=1e20"], "needs a Chinchilla-style law"),
        (["--plot", "res.jpg"], "--plot writes PNG or SVG"),
    ],
)
def test_predict_optimal_and_plot_options_are_checked_before_fitting(po_csv, capsys, extra, expect):
    code, out, err = _run(
        capsys, "power_offset", po_csv, "--x", "data_multiple", "--y", "loss", *extra
    )
    assert code == 2 and out == "" and expect in err, err


@pytest.mark.slow  # matplotlib and statsmodels' Q-Q plot: a few seconds
@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_plot_writes_the_residual_plot(po_csv, tmp_path, capsys, suffix, magic):
    target = tmp_path / f"residuals{suffix}"
    d, _ = _fit_json(capsys, po_csv, "--bootstrap", "0", "--plot", str(target))
    assert target.read_bytes().startswith(magic) and d["plot"] == str(target)
    assert [f.name for f in tmp_path.iterdir() if f.name.startswith(".")] == []  # no temp left


@pytest.mark.slow
def test_compute_optimal_on_the_shipped_example(capsys):
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
        "100",
        "--compute-optimal",
        "C=5.76e23",
        "--predict",
        "N=7e10,D=1.4e12",
    )
    assert code == 0, err
    d = json.loads(out)
    (b,) = d["compute_optimal"]["budgets"]
    assert b["N"]["point"] * b["D"]["point"] * 6 == pytest.approx(5.76e23)
    for k in ("N", "D", "tokens_per_param", "loss"):
        assert b[k]["ci"][0] < b[k]["point"] < b[k]["ci"][1]
    # the data were simulated with Epoch's estimates: their optimum lies in the interval
    from scalinglab.fitting.compute_optimal import optimal_allocation

    truth = optimal_allocation(
        {"E": 1.82, "A": 482.0, "B": 2085.0, "alpha": 0.348, "beta": 0.366}, 5.76e23
    )
    assert b["N"]["ci"][0] < truth["N"] < b["N"]["ci"][1]
