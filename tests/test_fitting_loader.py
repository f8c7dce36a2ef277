"""Loader and data checks: every bad input names the file, column and row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalinglab.errors import InputError
from scalinglab.fitting import fit, from_arrays, get_law, load_table
from scalinglab.fitting.loader import check_data, default_groups


def _csv(tmp_path, name="d.csv", **cols):
    p = tmp_path / name
    pd.DataFrame(cols).to_csv(p, index=False)
    return p


def _good(n=8):
    x = np.geomspace(1, 64, n)
    return x, 0.4 * x**-0.5 + 3.1


def test_loads_csv_parquet_and_netcdf_alike(tmp_path):
    x, y = _good()
    df = pd.DataFrame({"D": x, "loss": y, "seed": ["a", "b"] * 4})
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_parquet(tmp_path / "t.parquet")
    df.set_index("D").to_xarray().to_netcdf(tmp_path / "t.nc", engine="h5netcdf")
    for name in ("t.csv", "t.parquet"):
        d = load_table(tmp_path / name, x=["D"], y="loss", group="seed")
        assert d.x.shape == (8, 1) and d.n_groups == 2 and d.group_labels == ("a", "b")
    nc = load_table(tmp_path / "t.nc", x=["D"], y="loss")
    np.testing.assert_allclose(np.sort(nc.y), np.sort(y))


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(x=["nope"], y="loss"), r"column 'nope'.*missing column"),
        (dict(x=["D"], y="nope"), r"column 'nope'.*missing column"),
        (dict(x=["D"], y="loss", group="nope"), r"column 'nope'.*missing column"),
    ],
)
def test_missing_columns(tmp_path, kw, match):
    x, y = _good()
    p = _csv(tmp_path, D=x, loss=y)
    with pytest.raises(InputError, match=match) as e:
        load_table(p, **kw)
    assert e.value.file == str(p)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_table(tmp_path / "absent.csv", x=["D"], y="loss")
    (tmp_path / "t.xlsx").write_text("x")
    with pytest.raises(InputError, match="unknown table format"):
        load_table(tmp_path / "t.xlsx", x=["D"], y="loss")


def test_non_numeric_and_missing_values_name_the_row(tmp_path):
    x, y = _good()
    bad = y.astype(object)
    bad[2] = "oops"
    p = _csv(tmp_path, D=x, loss=bad)
    with pytest.raises(InputError) as e:
        load_table(p, x=["D"], y="loss")
    assert (e.value.column, e.value.row) == ("loss", 3) and "not a number" in str(e.value)
    xs = x.copy()
    xs[5] = np.nan
    p = _csv(tmp_path, D=xs, loss=y)
    with pytest.raises(InputError) as e:
        load_table(p, x=["D"], y="loss")
    assert (e.value.column, e.value.row) == ("D", 6)
    labels = np.array(["a"] * 8, dtype=object)
    labels[4] = None
    p = _csv(tmp_path, D=x, loss=y, seed=labels)
    with pytest.raises(InputError, match="empty label") as e:
        load_table(p, x=["D"], y="loss", group="seed")
    assert e.value.row == 5


def test_nonpositive_x_where_logs_are_taken(tmp_path):
    x, y = _good()
    x[3] = 0.0
    p = _csv(tmp_path, D=x, loss=y)
    with pytest.raises(InputError, match="must be > 0") as e:
        fit("power_offset", load_table(p, x=["D"], y="loss"))
    assert (e.value.file, e.value.column, e.value.row) == (str(p), "D", 4)


def test_nonpositive_y_under_log_residuals_but_fine_for_least_squares():
    t = np.linspace(0, 100, 12)
    y = 0.5 - 0.5 * np.exp(-0.05 * t)  # starts at 0
    with pytest.raises(InputError, match="log residuals") as e:
        fit("exp_saturation", t, y, objective="huber")
    assert e.value.row == 1
    assert fit("exp_saturation", t, y).converged  # default: least squares


def test_fewer_points_than_parameters():
    with pytest.raises(InputError, match="2 points for 3 free parameters"):
        fit("power_offset", np.array([1.0, 2.0]), np.array([3.5, 3.4]))
    # fixing a parameter makes it fittable
    res = fit("power_offset", np.array([1.0, 2.0]), np.array([3.5, 3.4]), fixed={"E": 3.1})
    assert res.problem.F == 2


def test_a_group_with_one_point(tmp_path):
    x, y = _good()
    seeds = ["a", "a", "a", "b", "b", "b", "b", "c"]
    p = _csv(tmp_path, D=x, loss=y, seed=seeds)
    with pytest.raises(InputError, match="group 'c' has a single point") as e:
        fit("power_offset", load_table(p, x=["D"], y="loss", group="seed"))
    assert (e.value.column, e.value.row) == ("seed", 8)


def test_wrong_number_of_inputs_for_the_law():
    x, y = _good()
    with pytest.raises(InputError, match="takes 2 input"):
        fit("chinchilla", x, y)


def test_arrays_with_nan_name_the_column_and_row():
    x, y = _good()
    y[6] = np.inf
    with pytest.raises(InputError) as e:
        from_arrays(x, y, x_names=["D"], y_name="loss")
    assert (e.value.column, e.value.row) == ("loss", 7)


def test_loglinear_kn_groups_by_model_size_by_default():
    law = get_law("loglinear_kn")
    N = np.repeat([1e9, 4e9], 3)
    X = np.tile([1e16, 1e17, 1e18], 2)
    d = default_groups(law, from_arrays([N, X], np.full(6, 0.5), x_names=["N", "X"]))
    assert d.group_labels == ("1e+09", "4e+09") and d.group_name == "N"
    check_data(law, d, log_y=True, n_free=4)
