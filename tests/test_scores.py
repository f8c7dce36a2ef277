"""load_scores: every input format and every bad-input path, located precisely."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.data.scores import load_scores, save_scores, scores_from_dict
from scalinglab.errors import InputError


def write_csv(path, rows, columns=("algorithm", "task", "run", "score")):
    pd.DataFrame(rows, columns=list(columns)).to_csv(path, index=False)
    return path


GOOD = [
    ("ppo", "pong", 0, 1.0),
    ("ppo", "pong", 1, 2.0),
    ("ppo", "pong", 2, 3.0),
    ("ppo", "chess", 0, 4.0),
    ("ppo", "chess", 1, 5.0),
    ("dqn", "pong", 0, 0.5),
    ("dqn", "pong", 1, 0.7),
    ("dqn", "chess", 1, 0.9),
]


def test_tidy_csv_with_ragged_runs(tmp_path):
    da = load_scores(write_csv(tmp_path / "s.csv", GOOD))
    assert da.dims == ("algorithm", "run", "task")
    assert list(da.algorithm.values) == ["ppo", "dqn"]  # order of first appearance
    assert list(da.task.values) == ["pong", "chess"]
    assert list(da.run.values) == [0, 1, 2]
    assert da.sel(algorithm="ppo", task="chess").values.tolist()[:2] == [4.0, 5.0]
    assert np.isnan(da.sel(algorithm="ppo", task="chess", run=2))  # absent
    assert np.isnan(da.sel(algorithm="dqn", task="chess", run=0))  # absent
    assert da.attrs["absent_is_nan"] == 1 and da.attrs["dropped_nan"] == 0


def test_parquet_and_several_files_merge(tmp_path):
    pd.DataFrame(GOOD[:5], columns=["algorithm", "task", "run", "score"]).to_parquet(
        tmp_path / "a.parquet"
    )
    write_csv(tmp_path / "b.csv", GOOD[5:])
    da = load_scores([tmp_path / "a.parquet", tmp_path / "b.csv"])
    xr.testing.assert_equal(da, load_scores(write_csv(tmp_path / "all.csv", GOOD)))


def test_missing_column_names_file_and_column(tmp_path):
    path = write_csv(
        tmp_path / "s.csv", [r[:3] for r in GOOD], columns=("algorithm", "task", "run")
    )
    with pytest.raises(InputError, match=r"s\.csv, column 'score': missing column"):
        load_scores(path)


def test_non_numeric_score_names_row(tmp_path):
    rows = [*GOOD[:3], ("ppo", "chess", 0, "oops"), *GOOD[4:]]
    with pytest.raises(InputError, match=r"s\.csv, column 'score', row 4: not a number: 'oops'"):
        load_scores(write_csv(tmp_path / "s.csv", rows))


def test_nan_is_an_error_by_default_and_dropped_with_a_warning(tmp_path):
    rows = [
        *GOOD[:6],
        ("dqn", "pong", 1, float("nan")),
        ("dqn", "chess", 1, 0.9),
        ("dqn", "chess", 2, float("nan")),
    ]
    path = write_csv(tmp_path / "s.csv", rows)
    with pytest.raises(InputError) as err:
        load_scores(path)
    msg = str(err.value)
    assert "s.csv" in msg and "row 7" in msg and "algorithm 'dqn', task 'pong', run 1" in msg
    with pytest.warns(
        UserWarning,
        match=r"2 NaN score\(s\) dropped.*algorithm 'dqn', task "
        r"'pong', run 1 \(row 7\)",
    ):
        da = load_scores(path, nan="drop")
    assert np.isnan(da.sel(algorithm="dqn", task="pong", run=1))
    assert da.sel(algorithm="dqn", task="pong", run=0) == 0.5
    assert da.attrs["dropped_nan"] == 2
    with pytest.raises(InputError, match="unknown NaN policy"):
        load_scores(path, nan="ignore")


def test_infinite_score_is_an_error(tmp_path):
    rows = [*GOOD[:2], ("ppo", "pong", 2, float("inf")), *GOOD[3:]]
    with pytest.raises(InputError, match=r"row 3.*not finite"):
        load_scores(write_csv(tmp_path / "s.csv", rows))


def test_duplicates_name_both_rows(tmp_path):
    rows = [*GOOD, ("ppo", "pong", 1, 9.0)]
    with pytest.raises(
        InputError,
        match=r"duplicate record for algorithm 'ppo', task 'pong', "
        r"run 1: file .*s\.csv row 2; file .*s\.csv row 9",
    ):
        load_scores(write_csv(tmp_path / "s.csv", rows))


def test_algorithm_missing_a_task(tmp_path):
    rows = [r for r in GOOD if not (r[0] == "dqn" and r[1] == "chess")]
    with pytest.raises(InputError, match="algorithm 'dqn' has no score for task 'chess'"):
        load_scores(write_csv(tmp_path / "s.csv", rows))


def test_step_column_last_or_all(tmp_path):
    rows = []
    for run in range(2):
        for step in (100, 200):
            rows.append(("a", "t", run, step, float(step + run)))
    rows.append(("a", "t", 2, 100, 7.0))  # run 2 stopped early
    path = write_csv(
        tmp_path / "s.csv", rows, columns=("algorithm", "task", "run", "step", "score")
    )
    with pytest.warns(UserWarning, match="1 run"):
        last = load_scores(path)
    assert last.dims == ("algorithm", "run", "task")
    assert last.sel(task="t").values[0].tolist() == [200.0, 201.0]
    assert list(last.run.values) == [0, 1]  # run 2 has no score at step 200: absent
    full = load_scores(path, step="all")
    assert full.dims == ("algorithm", "run", "task", "step")
    assert full.sel(step=100, run=2).item() == 7.0


def test_json_one_file_per_algorithm_and_directories(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "ppo.json").write_text(json.dumps({"pong": [1, 2, 3], "chess": [4, 5]}))
    (tmp_path / "d" / "dqn.json").write_text(json.dumps({"pong": [0.5, 0.7], "chess": [0.8, 0.9]}))
    (tmp_path / "d" / "notes.txt").write_text("ignored")
    da = load_scores(tmp_path / "d")
    assert list(da.algorithm.values) == ["dqn", "ppo"]  # files in name order
    assert da.sel(algorithm="ppo", task="pong").values.tolist() == [1.0, 2.0, 3.0]
    assert np.isnan(da.sel(algorithm="ppo", task="chess", run=2))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{}", r"ppo\.json: no task in the file \(algorithm 'ppo'\)"),
        ('{"pong": []}', r"algorithm 'ppo', task 'pong': expected a non-empty list"),
        ('{"pong": [1, "x"]}', r"algorithm 'ppo', task 'pong', run 1: score is not a number"),
        ('{"pong": [1, [2, 3]]}', r"task 'pong', run 1: score is not a number"),
        ("[1, 2]", "expected an object"),
        ('{"pong": [1,', "invalid JSON at line 1"),
    ],
)
def test_bad_json(tmp_path, content, message):
    path = tmp_path / "ppo.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        load_scores(path)


def test_json_null_is_a_nan_score(tmp_path):
    path = tmp_path / "ppo.json"
    path.write_text(json.dumps({"pong": [1.0, None, 2.0], "chess": [3.0, 4.0, 5.0]}))
    with pytest.raises(
        InputError,
        match=r"ppo\.json: algorithm 'ppo', task 'pong', run 1: "
        "score is NaN",
    ):
        load_scores(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        da = load_scores(path, nan="drop")
    assert len(caught) == 1 and "1 NaN" in str(caught[0].message)
    assert da.sel(task="pong").values[0].tolist()[::2] == [1.0, 2.0]
    assert np.isnan(da.sel(task="pong", run=1)).all()
    assert da.sel(task="chess", run=1).item() == 4.0


def test_netcdf_labelled_roundtrip_and_wrong_dims(tmp_path):
    da = load_scores(write_csv(tmp_path / "s.csv", GOOD))
    path = save_scores(da, tmp_path / "s.nc")
    back = load_scores(path)
    xr.testing.assert_equal(back, da)  # NaN padding read back as absent runs
    wrong = xr.DataArray(np.ones((2, 3, 2)), dims=("algorithm", "seed", "task"), name="score")
    wrong.to_dataset().to_netcdf(tmp_path / "w.nc", engine="h5netcdf")
    with pytest.raises(
        InputError,
        match=r"w\.nc: variable 'score' must have dims .*got "
        r"\('algorithm', 'seed', 'task'\)",
    ):
        load_scores(tmp_path / "w.nc")


def test_netcdf_nan_without_marker_is_a_nan_score(tmp_path):
    x = np.ones((1, 2, 2))
    x[0, 1, 1] = np.nan
    xr.Dataset(
        {"returns": (("algorithm", "run", "task"), x)},
        coords={"algorithm": ["a"], "task": ["p", "q"]},
    ).to_netcdf(tmp_path / "n.nc", engine="h5netcdf")
    with pytest.raises(InputError, match=r"n\.nc: algorithm 'a', task 'q', run 1: score is NaN"):
        load_scores(tmp_path / "n.nc")
    with pytest.warns(UserWarning, match="1 NaN score"):
        assert np.isnan(load_scores(tmp_path / "n.nc", nan="drop").values[0, 1, 1])


def test_netcdf_several_variables_and_non_numeric(tmp_path):
    ds = xr.Dataset(
        {
            "u": (("algorithm", "run", "task"), np.ones((1, 1, 1))),
            "v": (("algorithm", "run", "task"), np.ones((1, 1, 1))),
        }
    )
    ds.to_netcdf(tmp_path / "two.nc", engine="h5netcdf")
    with pytest.raises(InputError, match=r"no variable 'score' and several data variables"):
        load_scores(tmp_path / "two.nc")
    text = xr.Dataset({"score": (("algorithm", "run", "task"), np.array([[["a"]]], dtype=object))})
    text.to_netcdf(tmp_path / "text.nc", engine="h5netcdf")
    with pytest.raises(InputError, match=r"text\.nc: variable 'score' is not numeric"):
        load_scores(tmp_path / "text.nc")
    (tmp_path / "junk.nc").write_text("not netcdf")
    with pytest.raises(InputError, match=r"junk\.nc: could not be read as netCDF"):
        load_scores(tmp_path / "junk.nc")


def test_file_level_errors(tmp_path):
    (tmp_path / "s.xlsx").write_text("x")
    with pytest.raises(InputError, match=r"s\.xlsx: unknown score file format '\.xlsx'"):
        load_scores(tmp_path / "s.xlsx")
    with pytest.raises(InputError, match="no such file"):
        load_scores(tmp_path / "missing.csv")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="directory has no score file"):
        load_scores(tmp_path / "empty")
    write_csv(tmp_path / "h.csv", [])
    with pytest.raises(InputError, match="no score"):
        load_scores(tmp_path / "h.csv")
    with pytest.raises(InputError, match="no score file given"):
        load_scores([])


def test_scores_from_dict_pads_ragged_algorithms():
    da = scores_from_dict({"a": np.ones((3, 2)), "b": np.zeros((2, 2))}, tasks=["p", "q"])
    assert da.dims == ("algorithm", "run", "task") and da.shape == (2, 3, 2)
    assert np.isnan(da.sel(algorithm="b", run=2)).all()
    with pytest.raises(InputError, match="different numbers of tasks"):
        scores_from_dict({"a": np.ones((3, 2)), "b": np.ones((3, 4))})
    with pytest.raises(InputError, match=r"'a': expected a \(runs, tasks\) array"):
        scores_from_dict({"a": np.ones(3)})
