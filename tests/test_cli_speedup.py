"""``scalinglab speedup``: JSON shape, table output and errors naming file/column/row."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scalinglab.cli import main


def _write(tmp_path, seeds=(0, 1, 2), mutate=None):
    rng = np.random.default_rng(0)
    rows = []
    for size, (a, e) in {"5k": (0.6, 2.5), "20k": (0.5, 2.2)}.items():
        for s in seeds:
            for m in (1, 2, 4, 8):
                base = a * m**-0.5 + e
                rows.append(("adamw", size, m, base + 0.002 * rng.normal(), s))
                rows.append(("muon", size, m, a * (1.3 * m) ** -0.5 + e + 0.002 * rng.normal(), s))
    df = pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "loss", "seed"])
    if mutate:
        df = mutate(df)
    path = tmp_path / "losses.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_json_shape(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["speedup", str(path), "--baseline", "adamw", "--bootstrap", "200"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["baseline"] == "adamw"
    assert set(out["baseline_fits"]) == {"5k", "20k"}
    assert set(out["baseline_fits"]["20k"]) >= {"A", "alpha", "E"}
    assert set(out["speedup"]) == {"adamw", "muon"}
    assert set(out["speedup"]["muon"]["5k"]) == {"1", "2", "4", "8"}
    s = out["speedup"]["muon"]["20k"]["2"]
    lo, hi = out["ci"]["muon"]["20k"]["2"]
    assert 1.1 < s < 1.5 and lo < s < hi
    assert out["status"]["muon"]["20k"]["2"] == "ok"


@pytest.mark.slow
def test_table_format_and_no_seed_column(tmp_path, capsys):
    path = _write(tmp_path, seeds=(0,), mutate=lambda d: d.drop(columns=["seed"]))
    assert main(["speedup", str(path), "--format", "table"]) == 0
    text = capsys.readouterr().out
    assert "muon" in text and "baseline adamw at 5k: A=" in text
    assert main(["speedup", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ci"]["muon"]["5k"]["1"] is None and out["bootstrap"] == 0


@pytest.mark.parametrize(
    "mutate,needle",
    [
        (lambda d: d.drop(columns=["loss"]), "column 'loss'"),
        (
            lambda d: d.assign(loss=d.loss.astype(object).where(d.index != 4, "oops")),
            "column 'loss', row 5",
        ),
        (
            lambda d: d.assign(data_multiple=d.data_multiple.where(d.index != 2, 0)),
            "column 'data_multiple', row 3",
        ),
        (lambda d: pd.concat([d, d.iloc[[7]]], ignore_index=True), "duplicate run"),
    ],
)
def test_bad_input_errors_name_file_column_row(tmp_path, capsys, mutate, needle):
    path = _write(tmp_path, mutate=mutate)
    assert main(["speedup", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and needle in err and "Traceback" not in err


def test_unknown_baseline_and_bad_options(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["speedup", str(path), "--baseline", "sgd"]) == 2
    assert "column 'optimizer'" in capsys.readouterr().err
    assert main(["speedup", str(path), "--bootstrap", "-1"]) == 2
    assert "--bootstrap" in capsys.readouterr().err
    assert main(["speedup", str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_bad_seed_exits_2(tmp_path, capsys):
    assert main(["speedup", str(_write(tmp_path)), "--seed", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--seed must be >= 0, got -1" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "mutate, extra, needle",
    [
        (None, ["--min-points", "99"], "could not be fitted at any model size (--min-points 99"),
        (lambda d: d[d.data_multiple == 1], [], "1 distinct data multiple(s)"),
    ],
)
def test_no_speedup_at_all_is_an_error_saying_why(tmp_path, capsys, mutate, extra, needle):
    path = _write(tmp_path, mutate=mutate)
    assert main(["speedup", str(path), "--bootstrap", "10", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert f"file {path}: no speedup computed" in err and needle in err, err


def test_one_size_table_still_gives_speedups(tmp_path, capsys):
    path = _write(tmp_path, mutate=lambda d: d[d.model_size == "5k"])
    assert main(["speedup", str(path), "--bootstrap", "10"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["speedup"]["muon"]["5k"]["2"] == pytest.approx(1.3, abs=0.1)


def test_the_papers_released_file_prints_the_papers_speedups(capsys):
    from scalinglab.paths import data_dir

    path = data_dir() / "published" / "fantastic_optimizers" / "final_losses.csv"
    if not path.exists():
        pytest.skip("no committed data in this checkout")
    assert main(["speedup", str(path), "--bootstrap", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    muon = out["speedup"]["muon"]
    # the paper's table (Wen et al. 2025): 130M 1.42/1.33/1.32/1.38, 1.2B 1.12/1.12/1.13/1.10
    got = [round(muon["130m"][m], 2) for m in ("1", "2", "4", "8")]
    assert got == [1.42, 1.33, 1.32, 1.38]
    got = [round(muon["1.2b"][m], 2) for m in ("1", "2", "4", "8")]
    assert got == [1.12, 1.12, 1.13, 1.10]
    assert "16" not in muon["130m"]  # the later 16x runs are not part of the paper's fits


def _released(tmp_path, mutate):
    rows = [
        ("adamw", "130m", m, 3.5 - 0.1 * np.log2(m) + 0.01 * m**0.5) for m in (1, 2, 4, 8, 16)
    ] + [("muon", "130m", m, 3.45 - 0.1 * np.log2(m)) for m in (1, 2, 4, 8)]
    df = pd.DataFrame(rows, columns=["optimizer", "model_size", "chinchilla", "final_c4en_loss"])
    path = tmp_path / "final_losses.csv"
    mutate(df).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    "mutate, needle",
    [
        (lambda d: d.drop(columns=["final_c4en_loss"]), "column 'final_c4en_loss': missing column"),
        (lambda d: d.drop(columns=["chinchilla"]), "column 'chinchilla': missing column"),
        (
            lambda d: d.assign(final_c4en_loss=d.final_c4en_loss.where(d.index != 6, -1.0)),
            "column 'final_c4en_loss', row 7: value -1.0 must be > 0",
        ),
    ],
)
def test_a_released_file_s_errors_name_its_own_columns(tmp_path, capsys, mutate, needle):
    # the paper's released layout (chinchilla, final_c4en_loss) is read by the data room's
    # reader; a problem is named in that layout, with the file's own row number
    path = _released(tmp_path, mutate)
    assert main(["speedup", str(path), "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err
    assert needle in err and str(path) in err and "'loss'" not in err, err
    assert err.count("\n") == 1


def test_constant_losses_are_a_clear_error_not_a_crash(tmp_path, capsys):
    path = _write(tmp_path, mutate=lambda d: d.assign(loss=3.0))
    assert main(["speedup", str(path), "--bootstrap", "20"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "no speedup computed" in err and "constant" in err, err


def test_three_seeds_warn_once_with_the_minimum(tmp_path, capsys):
    # two sizes, three seeds: one note for the whole table, not one per size
    assert main(["speedup", str(_write(tmp_path)), "--bootstrap", "20"]) == 0
    out, err = capsys.readouterr()
    (w,) = [w for w in json.loads(out)["warnings"] if "bootstrap: only 3 groups" in w]
    assert w.startswith("baseline fits and cell means:") and "at least 10 groups" in w
    assert err.count("bootstrap: only 3 groups") == 1
