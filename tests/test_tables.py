"""Table reading and column validation: every error names file, column and row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.data.tables import label_column, numeric_column, read_table
from scalinglab.errors import InputError


def _csv(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_reads_csv_parquet_and_netcdf_alike(tmp_path):
    df = pd.DataFrame({"x": [1.0, 2.0], "y": [3.0, 4.0]})
    df.to_csv(tmp_path / "a.csv", index=False)
    df.to_parquet(tmp_path / "a.parquet")
    xr.Dataset({"y": ("x", [3.0, 4.0])}, coords={"x": [1.0, 2.0]}).to_netcdf(
        tmp_path / "a.nc", engine="h5netcdf"
    )
    for name in ("a.csv", "a.parquet", "a.nc"):
        got = read_table(tmp_path / name, required=["x", "y"])
        np.testing.assert_array_equal(got["y"].to_numpy(), [3.0, 4.0])


def test_missing_file_and_unknown_suffix(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_table(tmp_path / "nope.csv")
    p = _csv(tmp_path, "a\n1\n", name="t.xlsx")
    with pytest.raises(InputError, match="unknown table format '.xlsx'"):
        read_table(p)


def test_missing_column_lists_existing_ones(tmp_path):
    p = _csv(tmp_path, "a,b\n1,2\n")
    with pytest.raises(InputError) as err:
        read_table(p, required=["a", "score"])
    assert err.value.column == "score" and err.value.file == str(p)
    assert "['a', 'b']" in str(err.value)


def test_numeric_column_names_first_bad_row(tmp_path):
    p = _csv(tmp_path, "x\n1\n2\nabc\n4\n")
    df = read_table(p)
    with pytest.raises(InputError) as err:
        numeric_column(df, "x", file=p)
    assert (err.value.column, err.value.row) == ("x", 3)
    assert "'abc'" in str(err.value) and str(p) in str(err.value)


def test_numeric_column_nan_and_positivity(tmp_path):
    p = _csv(tmp_path, "x,y\n1,a\n,b\n3,c\n")
    df = read_table(p)
    with pytest.raises(InputError, match="row 2: missing"):
        numeric_column(df, "x", file=p)
    assert np.isnan(numeric_column(df, "x", file=p, allow_nan=True)[1])
    q = _csv(tmp_path, "x\n1\n0\n", name="q.csv")
    with pytest.raises(InputError, match=r"row 2: value 0.0 must be > 0 \(logarithms"):
        numeric_column(read_table(q), "x", file=q, positive=True)


def test_label_column_rejects_empty_cells(tmp_path):
    p = _csv(tmp_path, "g,x\na,1\n,2\n")
    df = read_table(p)
    with pytest.raises(InputError, match="row 2: empty label"):
        label_column(df, "g", file=p)
    assert list(label_column(df.iloc[:1], "g", file=p)) == ["a"]
