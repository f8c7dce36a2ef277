"""``scalinglab intervals``: JSON shape, reproducibility, exit code 2 on bad input."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import scalinglab.cli as cli

METRICS = ["iqm", "median", "mean", "optimality_gap"]


@pytest.fixture
def scores_csv(tmp_path):
    rng = np.random.default_rng(0)
    rows = [
        (alg, f"t{t}", r, rng.normal() + shift)
        for alg, shift in (("A", 1.0), ("B", 0.0), ("C", 0.2))
        for t in range(4)
        for r in range(5 + t % 2)
    ]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["algorithm", "task", "run", "score"]).to_csv(path, index=False)
    return path


def invoke(capsys, *argv):
    code = cli.main(["intervals", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_json_output_shape(capsys, scores_csv):
    code, out, _ = invoke(
        capsys, scores_csv, "--reps", 300, "--poi-reps", 200, "--seed", 7, "--compare", "A:B", "C:B"
    )
    assert code == 0
    res = json.loads(out)
    assert list(res) == [
        "confidence",
        "reps",
        "method",
        "seed",
        "metrics",
        "probability_of_improvement",
    ]
    assert res["confidence"] == 0.95 and res["reps"] == 300
    assert res["method"] == "percentile" and res["seed"] == 7
    assert list(res["metrics"]) == ["A", "B", "C"]
    for per_alg in res["metrics"].values():
        assert list(per_alg) == METRICS
        for v in per_alg.values():
            assert set(v) == {"point", "ci"} and len(v["ci"]) == 2
            assert v["ci"][0] <= v["point"] <= v["ci"][1]
    assert list(res["probability_of_improvement"]) == ["A:B", "C:B"]
    ab = res["probability_of_improvement"]["A:B"]
    assert 0.5 < ab["point"] <= 1.0 and ab["ci"][0] <= ab["point"] <= ab["ci"][1]


def test_same_seed_same_output_and_options(capsys, scores_csv):
    args = [
        scores_csv,
        "--reps",
        200,
        "--metrics",
        "iqm,mean",
        "--method",
        "bca",
        "--confidence",
        "0.9",
        "--task-bootstrap",
    ]
    _, a, _ = invoke(capsys, *args, "--seed", 3)
    _, b, _ = invoke(capsys, *args, "--seed", 3)
    _, c, _ = invoke(capsys, *args, "--seed", 4)
    assert a == b and a != c
    res = json.loads(a)
    assert list(res["metrics"]["A"]) == ["iqm", "mean"]
    assert res["method"] == "bca" and res["confidence"] == 0.9
    # adding a comparison does not change the metric intervals
    _, d, _ = invoke(capsys, *args, "--seed", 3, "--compare", "A:C")
    assert json.loads(d)["metrics"] == res["metrics"]


def test_table_format(capsys, scores_csv):
    code, out, _ = invoke(
        capsys, scores_csv, "--reps", 100, "--format", "table", "--compare", "A:B"
    )
    assert code == 0
    assert "optimality_gap" in out and "A:B" in out and "100 bootstrap replicates" in out


def test_defaults_follow_the_paper():
    parser = cli.build_parser()
    args = parser.parse_args(["intervals", "x.csv"])
    assert (args.reps, args.poi_reps, args.confidence, args.method, args.seed) == (
        50_000,
        2_000,
        0.95,
        "percentile",
        0,
    )
    assert args.metrics == ",".join(METRICS) and args.nan == "error"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--metrics", "iqm,IQR"], "unknown metric 'IQR'"),
        (["--compare", "A:Z"], "not X:Y"),
        (["--reps", "0"], "--reps must be >= 1"),
        (["--confidence", "1.5"], "--confidence must be in"),
    ],
)
def test_bad_options_exit_2(capsys, scores_csv, extra, message):
    code, out, err = invoke(capsys, scores_csv, *extra)
    assert code == 2 and out == ""
    assert message in err and err.startswith("scalinglab intervals: error:")


def test_bad_files_exit_2_naming_the_cell(capsys, tmp_path, scores_csv):
    code, _, err = invoke(capsys, tmp_path / "nope.csv")
    assert code == 2 and "nope.csv" in err and "no such file" in err
    df = pd.read_csv(scores_csv)
    df.loc[3, "score"] = np.nan
    df.to_csv(tmp_path / "nan.csv", index=False)
    code, _, err = invoke(capsys, tmp_path / "nan.csv", "--reps", 50)
    assert code == 2 and "row 4" in err and "algorithm 'A', task 't0', run 3" in err
    code, out, err = invoke(capsys, tmp_path / "nan.csv", "--reps", 50, "--nan", "drop")
    assert code == 0 and "warning: 1 NaN score(s) dropped" in err
    assert json.loads(out)["metrics"]["A"]["iqm"]["point"] is not None


def test_references_normalize_the_scores(capsys, tmp_path, scores_csv):
    # random -1, reference 3 on every task: normalized = (raw + 1) / 4, so the mean
    # moves exactly that way (the mean is linear; the resampled CI too, draw by draw)
    refs = tmp_path / "refs.csv"
    pd.DataFrame({"task": [f"t{t}" for t in range(4)], "random": -1.0, "reference": 3.0}).to_csv(
        refs, index=False
    )
    _, raw, _ = invoke(capsys, scores_csv, "--reps", 200, "--metrics", "mean")
    code, norm, _ = invoke(
        capsys, scores_csv, "--reps", 200, "--metrics", "mean", "--references", refs
    )
    assert code == 0
    for alg in ("A", "B", "C"):
        r = json.loads(raw)["metrics"][alg]["mean"]
        n = json.loads(norm)["metrics"][alg]["mean"]
        assert n["point"] == pytest.approx((r["point"] + 1) / 4)
        assert n["ci"] == pytest.approx([(c + 1) / 4 for c in r["ci"]])


def test_bad_references_name_file_column_and_row(capsys, tmp_path, scores_csv):
    refs = tmp_path / "refs.csv"
    refs.write_text("task,random,reference\nt0,0,1\nt1,0,1\nt2,0.5,0.5\nt3,0,1\n")
    code, _, err = invoke(capsys, scores_csv, "--references", refs)
    assert code == 2 and "refs.csv" in err and "reference" in err and "row 3" in err
    refs.write_text("task,random,reference\nt0,0,1\nt1,0,1\nt2,0,1\n")
    code, _, err = invoke(capsys, scores_csv, "--references", refs)
    assert code == 2 and "no random score for task 't3'" in err
    refs.write_text("task,random,reference\nt0,0,1\nt0,0,2\n")
    code, _, err = invoke(capsys, scores_csv, "--references", refs)
    assert code == 2 and "repeats row 1" in err and "row 2" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--compare", "A:A"], "--compare A:A: compares 'A' with itself"),
    ],
)
def test_bad_seed_and_self_comparison_exit_2_in_one_line(capsys, scores_csv, extra, message):
    code, out, err = invoke(capsys, scores_csv, "--reps", 20, *extra)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1, err


def test_binary_file_given_as_json_is_a_one_line_error(capsys, tmp_path):
    bad = tmp_path / "garbage.json"
    bad.write_bytes(bytes(range(128, 256)) * 3)
    code, out, err = invoke(capsys, bad)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"file {bad}: not a JSON text file" in err


def test_equal_reference_scores_print_plain_numbers(capsys, tmp_path, scores_csv):
    refs = tmp_path / "refs.csv"
    refs.write_text("task,random,reference\nt0,-1,-1\n")
    code, _, err = invoke(capsys, scores_csv, "--references", refs)
    assert code == 2 and "are equal (-1.0)" in err and "np.float64" not in err


def test_single_run_warning_is_one_prefixed_line(capsys, tmp_path):
    one = tmp_path / "one.csv"
    one.write_text("algorithm,task,run,score\nA,t0,0,1\nA,t1,0,2\nB,t0,0,1.5\nB,t1,0,0.5\n")
    code, out, err = invoke(capsys, one, "--reps", 10)
    assert code == 0 and json.loads(out)["metrics"]["A"]["iqm"]["point"] is not None
    assert err.startswith("scalinglab intervals: warning: scores have a single run per task")
    assert err.count("\n") == 1 and "UserWarning" not in err, err


@pytest.fixture
def plain_files(tmp_path):
    rng = np.random.default_rng(3)
    paths = []
    for alg, runs in (("A", 6), ("B", 4)):
        data = {f"t{t}": (rng.normal(size=runs) * 10).round(3).tolist() for t in range(5)}
        path = tmp_path / f"{alg}.json"
        path.write_text(json.dumps(data))
        paths.append(path)
    refs = tmp_path / "refs.csv"
    refs.write_text("task,random,reference\n" + "".join(f"t{t},-1.5,{t + 2}\n" for t in range(5)))
    return paths, refs


def test_plain_files_give_the_general_paths_numbers(capsys, tmp_path, plain_files):
    paths, refs = plain_files
    args = ["--reps", 300, "--references", refs, "--seed", 5]
    _, plain, _ = invoke(capsys, *paths, *args)
    rows = [
        (p.stem, task, r, v)
        for p in paths
        for task, runs in json.loads(p.read_text()).items()
        for r, v in enumerate(runs)
    ]
    tidy = tmp_path / "tidy.csv"
    pd.DataFrame(rows, columns=["algorithm", "task", "run", "score"]).to_csv(tidy, index=False)
    _, general, _ = invoke(capsys, tidy, *args)
    assert plain == general
    _, compared, _ = invoke(capsys, *paths, *args, "--compare", "A:B")  # the general path
    assert json.loads(compared)["metrics"] == json.loads(plain)["metrics"]


@pytest.mark.slow
def test_plain_files_are_read_without_pandas_or_xarray(plain_files):
    paths, refs = plain_files
    code = (
        "import sys; from scalinglab.cli import main; "
        f"main(['intervals', *{[str(p) for p in paths]!r}, '--references', {str(refs)!r}, "
        "'--reps', '50']); "
        "assert not {'pandas', 'xarray', 'dask'} & set(sys.modules), sorted(sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["metrics"]["A"]["iqm"]["point"] is not None


def test_profiles_and_plots_from_the_command_line(capsys, tmp_path, scores_csv):
    png = tmp_path / "out" / "iv.png"
    code, out, _ = invoke(
        capsys, scores_csv, "--reps", 200, "--poi-reps", 100, "--profiles", "--plot", png
    )
    assert code == 0
    res = json.loads(out)
    prof = res["performance_profiles"]
    assert prof["kind"] == "score" and len(prof["taus"]) == 51
    a = prof["algorithms"]["A"]
    assert len(a["point"]) == 51 and a["point"][0] >= a["point"][-1]  # fraction above tau falls
    assert all(lo <= p <= hi for lo, p, hi in zip(a["lo"], a["point"], a["hi"], strict=True))
    assert res["plots"] == [str(png), str(tmp_path / "out" / "iv-profiles.png")]
    assert png.read_bytes()[:4] == b"\x89PNG"
    # the metrics' numbers do not move when profiles are asked for (their own stream)
    code, plain_out, _ = invoke(capsys, scores_csv, "--reps", 200, "--poi-reps", 100)
    assert json.loads(plain_out)["metrics"] == res["metrics"]
    code, _, err = invoke(capsys, scores_csv, "--reps", 50, "--plot", tmp_path / "x.pdf")
    assert code == 2 and ".png or .svg" in err


def test_cli_intervals_imports_no_study():
    code = (
        "import sys, scalinglab.cli.intervals; "
        "print([m for m in sys.modules if m.startswith('scalinglab.studies')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
