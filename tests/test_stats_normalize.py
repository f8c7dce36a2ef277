"""Normalization with per-task random and reference scores."""

import numpy as np
import pytest
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.normalize import normalize


def raw():
    return xr.DataArray(
        [[[10.0, 0.0], [20.0, np.nan]]],
        dims=("algorithm", "run", "task"),
        coords={"algorithm": ["A"], "task": ["pong", "breakout"]},
    )


def test_hand_computed_with_dicts_and_dataarrays():
    out = normalize(
        raw(), random={"pong": 0.0, "breakout": -1.0}, reference={"pong": 20.0, "breakout": 1.0}
    )
    # pong: (10-0)/20 = .5, (20-0)/20 = 1; breakout: (0+1)/2 = .5; NaN stays NaN
    np.testing.assert_allclose(out.values, [[[0.5, 0.5], [1.0, np.nan]]])
    assert out.dims == raw().dims
    assert list(out.task.values) == ["pong", "breakout"]
    rnd = xr.DataArray([-1.0, 0.0], dims="task", coords={"task": ["breakout", "pong"]})
    ref = xr.DataArray([1.0, 20.0], dims="task", coords={"task": ["breakout", "pong"]})
    xr.testing.assert_allclose(normalize(raw(), random=rnd, reference=ref), out)


def test_errors_name_the_task():
    with pytest.raises(InputError, match="task 'breakout'.*divide by zero"):
        normalize(
            raw(), random={"pong": 0.0, "breakout": 1.0}, reference={"pong": 20.0, "breakout": 1.0}
        )
    with pytest.raises(InputError, match="no reference score for task 'breakout'"):
        normalize(raw(), random={"pong": 0.0, "breakout": 1.0}, reference={"pong": 20.0})
    with pytest.raises(InputError, match="random score for task 'pong' is not a number"):
        normalize(
            raw(), random={"pong": "x", "breakout": 1.0}, reference={"pong": 20.0, "breakout": 2.0}
        )
    with pytest.raises(InputError, match="'task' dim"):
        normalize(raw().rename(task="game"), random={}, reference={})
