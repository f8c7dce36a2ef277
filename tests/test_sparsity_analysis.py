"""Analyses of the sparsity sweep on hand-made data: slopes, bootstraps, law fits, speedups."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

from scalinglab.errors import InputError
from scalinglab.studies.sparsity import analysis as sa
from scalinglab.studies.sparsity import kernel_speed as ks


def _curves(law: str, *, a0: float, seeds=(0, 1, 2), noise=0.002, model="m", act="relu"):
    rng = np.random.default_rng(0)
    d = np.geomspace(1e5, 1e8, 8)
    rows = []
    for s in seeds:
        if law == "relu":
            y = np.exp(-0.02 * d**0.3 + 0.5) + a0  # decreasing to a0
        else:
            y = a0 - 3.0 * d**-0.25  # increasing to a0
        y = y + noise * rng.standard_normal(d.size)
        rows += [
            {
                "activation": act,
                "model": model,
                "seed": s,
                "run": f"{model}/{act}/{s}",
                "tokens": t,
                "activation_ratio": v,
                "usable": True,
            }
            for t, v in zip(d, y, strict=True)
        ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("law,a0", [("relu", 0.07), ("silu", 0.4)])
def test_fit_laws_recovers_the_limit(law, a0):
    df = _curves(law, a0=a0, act=law)
    table, fits = sa.fit_laws(df, reps=60, seed=1)
    row = table.iloc[0]
    assert row["law"] == sa.LAWS[law] and row["n_runs"] == 3
    assert row["A0"] == pytest.approx(a0, abs=0.02)
    assert row["A0_lo"] <= row["A0_hi"]
    assert (law, "m", sa.LAWS[law]) in fits


def test_unusable_rows_are_left_out_of_fits_and_slopes():
    df = _curves("relu", a0=0.07)
    df.loc[df["tokens"] == df["tokens"].min(), ["usable", "activation_ratio"]] = (False, 0.0)
    table, _ = sa.fit_laws(df, reps=20)
    assert table.iloc[0]["n_points"] == 7 * 3
    slopes = sa.run_slopes(df)
    assert (slopes["n_points"] == 7).all() and (slopes["slope"] < 0).all()


def test_run_slope_is_per_decade():
    df = pd.DataFrame(
        {
            "activation": "relu",
            "model": "m",
            "seed": 0,
            "usable": True,
            "tokens": [1e3, 1e4, 1e5],
            "activation_ratio": [0.5, 0.4, 0.3],
        }
    )
    assert sa.run_slopes(df)["slope"].iloc[0] == pytest.approx(-0.1)
    assert sa.run_slopes(df.iloc[:2]).empty  # fewer than 3 points


def test_stratified_mean_and_slope_vs_log_are_welch_t_by_hand():
    per_run = pd.DataFrame(
        {"model": ["a", "a", "b", "b"], "x": [10, 10, 1000, 1000], "v": [1.0, 3.0, 5.0, 6.0]}
    )
    est = sa.stratified_mean(per_run, "v", level=0.95)
    assert est.point == pytest.approx((2.0 + 5.5) / 2)
    # se^2 = (s_a^2 / 2 + s_b^2 / 2) / 4 with s_a^2 = 2, s_b^2 = 0.5; Welch df
    c = np.array([2.0 / 2, 0.5 / 2]) / 4
    se, nu = np.sqrt(c.sum()), c.sum() ** 2 / (c**2).sum()
    half = stats.t.ppf(0.975, nu) * se
    assert est.ci == pytest.approx((est.point - half, est.point + half))
    assert est.level == 0.95 and "Student t" in est.method
    slope = sa.slope_vs_log(per_run, "v", "x", level=0.95)
    assert slope.point == pytest.approx((5.5 - 2.0) / 2.0)  # two decades apart
    # the slope is (m_b - m_a) / 2: the same weights in magnitude as the mean of the two
    assert slope.hi - slope.point == pytest.approx(half)


def test_group_means_and_paired_difference():
    final = pd.DataFrame(
        {
            "activation": ["relu", "silu"] * 3,
            "model": ["m"] * 6,
            "seed": [0, 0, 1, 1, 2, 2],
            "loss": [2.0, 2.5, 2.2, 2.4, 2.1, 2.6],
        }
    )
    diff, pairs = sa.paired_difference(final, "loss")
    d = np.array([-0.5, -0.2, -0.5])
    assert diff.point == pytest.approx(d.mean())
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / np.sqrt(3)
    assert diff.ci == pytest.approx((d.mean() - half, d.mean() + half))
    assert list(pairs["diff"].round(6)) == [-0.5, -0.2, -0.5]
    gm = sa.group_means(final, "loss", by=["activation"])
    assert gm.set_index("activation").loc["relu", "mean"] == pytest.approx(2.1)


def test_curves_frame_marks_checkpoints_where_the_ffn_is_useless():
    dims = ("activation", "model", "seed", "checkpoint")
    shape = (1, 1, 1, 3)
    ds = xr.Dataset(
        {
            "activation_ratio": (dims, np.array([0.0, 0.2, 0.1]).reshape(shape)),
            "loss": (dims, np.array([4.0, 3.0, 2.0]).reshape(shape)),
            "ffn_off_loss": (dims, np.array([4.01, 3.5, 3.0]).reshape(shape)),
            "cett_target": (dims, np.ones(shape)),
            "ppl_ratio": (dims, np.ones(shape)),
            "natural_ratio": ((*dims, "layer"), np.full((*shape, 1), 0.5)),
            "status": (("activation", "model", "seed"), np.array([[["ok"]]])),
        },
        coords={
            "activation": ["relu"],
            "model": ["m"],
            "seed": [0],
            "checkpoint": [0, 1, 2],
            "tokens": ("checkpoint", [10, 100, 1000]),
            "n_params": ("model", [50]),
            "d_model": ("model", [8]),
            "n_layer": ("model", [1]),
            "width_depth_ratio": ("model", [8.0]),
            "in_size_sweep": ("model", [True]),
            "in_width_depth": ("model", [False]),
        },
    )
    df = sa.curves_frame(ds, min_ffn_gain=0.05)
    assert list(df["usable"]) == [False, True, True]
    assert list(df["ffn_gain"].round(6)) == [0.01, 0.5, 1.0]
    assert list(df["tokens_per_param"]) == [0.2, 2.0, 20.0]
    assert df["run"].iloc[0] == "m/relu/0"


def test_read_curves_errors_name_the_cell(tmp_path):
    good = tmp_path / "c.csv"
    good.write_text("run,tokens,activation_ratio,activation\na,100,0.3,ReLU\na,1000,0.2,relu\n")
    df = sa.read_curves(str(good))
    assert list(df["activation"]) == ["relu", "relu"] and (df["model"] == "user").all()
    bad = tmp_path / "bad.csv"
    bad.write_text("run,tokens,activation_ratio\na,100,0.3\na,-5,0.2\n")
    with pytest.raises(InputError) as e:
        sa.read_curves(str(bad))
    assert e.value.column == "tokens" and e.value.row == 2
    out = tmp_path / "out.csv"
    out.write_text("run,tokens,activation_ratio\na,100,1.3\n")
    with pytest.raises(InputError) as e:
        sa.read_curves(str(out))
    assert e.value.column == "activation_ratio" and e.value.row == 1
    act = tmp_path / "act.csv"
    act.write_text("run,tokens,activation_ratio,activation\na,100,0.3,gelu\n")
    with pytest.raises(InputError) as e:
        sa.read_curves(str(act))
    assert e.value.column == "activation"
    with pytest.raises(InputError):
        sa.read_curves(str(tmp_path / "missing.csv"))


def test_crossover_and_speedup_interpolation():
    ratios = np.array([1.0, 0.5, 0.25, 0.1])
    assert ks.crossover(ratios, np.array([0.5, 0.8, 1.2, 3.0])) == pytest.approx(
        np.exp(np.log(0.5) + (1 - 0.8) * (np.log(0.25) - np.log(0.5)) / (1.2 - 0.8))
    )
    assert ks.crossover(ratios, np.array([1.5, 2, 3, 4])) == 1.0
    assert ks.crossover(ratios, np.array([0.1, 0.2, 0.3, 0.4])) is None
    table = pd.DataFrame({"impl": "k", "batch": 1, "ratio": [0.1, 0.4], "speedup": [8.0, 2.0]})
    assert ks.speedup_at(table, 0.2, impl="k") == pytest.approx(4.0)  # log-log midpoint
    assert ks.speedup_at(table, 0.01, impl="k") == pytest.approx(8.0)  # clamped
    with pytest.raises(ValueError):
        ks.speedup_at(table, 0.2, impl="other")
