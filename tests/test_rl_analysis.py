"""RL-curve analyses on synthetic curves with known laws, and the user-log reader."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalinglab.errors import InputError
from scalinglab.studies.rl import ablations as rab
from scalinglab.studies.rl import analysis as rla
from scalinglab.studies.rl import kn as rkn
from scalinglab.studies.rl import phases as rph

SIZES = {"s": 1e4, "m": 1e5, "l": 1e6}
C = np.linspace(0.0, 1e12, 26)  # evaluations at equal steps, as in a real run


def _scalerl(c, r0, a, b, c_mid):
    out = np.full(c.shape, r0)
    pos = c > 0
    out[pos] = r0 + (a - r0) / (1 + (c_mid / c[pos]) ** b)
    return out


def _frame(fn, *, seeds=3, noise=0.01, variants=("baseline",), seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for var in variants:
        for size, n in SIZES.items():
            for sd in range(seeds):
                y = np.clip(fn(var, n, C) + rng.normal(0, noise, C.size), 0, 1)
                y[0] = fn(var, n, C[:1])[0]
                rows += [
                    {
                        "model_size": size,
                        "n_params": n,
                        "variant": var,
                        "seed": sd,
                        "step": i * 10,
                        "compute": c,
                        "pass_rate": v,
                    }
                    for i, (c, v) in enumerate(zip(C, y, strict=True))
                ]
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_scalerl_fit_and_extrapolation_recover_a_known_sigmoid():
    df = _frame(lambda v, n, c: _scalerl(c, 0.1, 0.7, 1.5, 2e11 * (n / 1e4) ** 0.15))
    table, fits = rla.fit_scalerl(df, reps=50, seed=0)
    base = table[table["variant"] == "baseline"]
    assert list(base["model_size"]) == ["s", "m", "l"]
    assert np.allclose(base["A"], 0.7, atol=0.03) and np.allclose(base["B"], 1.5, rtol=0.2)
    assert np.allclose(base["R0"], 0.1)
    assert (base["A_lo"] <= base["A"]).all() and (base["A"] <= base["A_hi"]).all()
    ex = rla.extrapolate_scalerl(df, fit_frac=0.5, reps=50, seed=0)
    assert (ex["mae"] < 0.03).all() and (ex["n_train"] > 0).all() and (ex["n_test"] > 0).all()


@pytest.mark.slow
def test_kn_recovers_tan_law_and_predicts_the_largest():
    kmax, n0 = 0.3, 1e5

    def fn(v, n, c):
        k = kmax * n / (n + n0)
        out = np.zeros(c.shape)
        pos = c > 0
        out[pos] = 1 - 10 ** (-k * np.log10(c[pos] / 1e9) - 0.05)
        return out

    kn = rkn.fit_kn(_frame(fn, noise=0.002), reps=20, seed=0)
    assert kn["Kmax"][0] == pytest.approx(kmax, rel=0.15)
    assert kn["N0"][0] == pytest.approx(n0, rel=0.5)
    slopes = [k for k, _ in kn["k_slope"]]
    assert slopes == sorted(slopes)  # larger models learn faster per unit of compute
    true_k = [kmax * n / (n + n0) for n in SIZES.values()]
    assert np.allclose(slopes, true_k, rtol=0.15)
    assert abs(kn["holdout"]["error"]) < 0.1 * true_k[-1]
    assert kn["failed_reps"] == 0
    rise, (lo, hi) = kn["k_rise"]
    assert rise == pytest.approx(true_k[-1] - true_k[0], rel=0.2) and 0 < lo <= rise <= hi
    assert kn["N0_identified"] == (True, "") and kn["holdout"]["N0_identified"][0]


@pytest.mark.slow
def test_kn_flags_n0_on_its_bound_when_k_falls_with_size():
    def fn(v, n, c):  # the largest size learns least per unit of compute
        k = 0.3 * (1e4 / n) ** 0.2
        out = np.zeros(c.shape)
        pos = c > 0
        out[pos] = 1 - 10 ** (-k * np.log10(c[pos] / 1e9) - 0.05)
        return out

    kn = rkn.fit_kn(_frame(fn, noise=0.002), reps=10, seed=0)
    assert kn["k_rise"][0] < 0 and kn["k_rise"][1][1] < 0
    ok, why = kn["N0_identified"]
    assert not ok and "bound" in why


def test_phases_find_the_plateau_of_a_logistic():
    t0, kappa = 0.4, 15.0
    steps = C.size - 1

    def fn(v, n, c):
        t = np.searchsorted(C, c) / steps
        return 0.1 + 0.5 / (1 + np.exp(-kappa * (t - t0)))

    ph = rph.pooled_phases(_frame(fn, noise=0.005), early_frac=0.6, reps=30, seed=0)
    assert np.allclose(ph["t90"], t0 + np.log(9) / kappa, atol=0.03)
    assert np.allclose(ph["t10"], t0 - np.log(9) / kappa, atol=0.03)
    assert (ph["rmse_logistic"] < ph["rmse_exp"]).all()
    assert np.allclose(ph["t90_early"], ph["t90"], atol=0.1)


@pytest.mark.slow
def test_ablation_effects_tell_asymptote_from_no_change():
    def fn(v, n, c):
        a = {"baseline": 0.6, "higher_A": 0.75, "same": 0.6}[v]
        return _scalerl(c, 0.1, a, 1.5, 2e11)

    df = _frame(fn, variants=("baseline", "higher_A", "same"), seeds=4)
    eff = rab.ablation_effects(rla.per_seed_sigmoids(df), reps=300, seed=0).set_index(
        ["variant", "metric"]
    )
    hi = eff.loc[("higher_A", "A")]
    assert hi["delta"] == pytest.approx(0.15, abs=0.03) and hi["delta_lo"] > 0.05
    assert hi["p_improve"] > 0.95
    same = eff.loc[("same", "A")]
    assert same["delta_lo"] < 0 < same["delta_hi"] and 0.1 < same["p_improve"] < 0.9


def _write(tmp_path, df, name="logs.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


def test_load_rl_logs_reads_a_good_table(tmp_path):
    df = _frame(lambda v, n, c: _scalerl(c, 0.1, 0.6, 1.5, 2e11), seeds=2)
    path = _write(
        tmp_path,
        df.drop(columns=["variant"]).assign(model_size=df["n_params"]).drop(columns=["n_params"]),
    )
    out = rla.load_rl_logs(path)
    assert list(out.columns) == list(rla.COLUMNS)
    assert set(out["variant"]) == {"baseline"} and out["n_params"].nunique() == 3
    only_step = df[["n_params", "seed", "step", "pass_rate"]].rename(
        columns={"n_params": "model_size"}
    )
    out2 = rla.load_rl_logs(_write(tmp_path, only_step, "steps.csv"))
    assert (out2["compute"] == out2["step"]).all()


@pytest.mark.parametrize(
    ("edit", "match", "column"),
    [
        (lambda d: d.drop(columns=["pass_rate"]), "missing column", "pass_rate"),
        (
            lambda d: d.assign(pass_rate=d["pass_rate"].where(d.index != 5, 1.5)),
            "outside",
            "pass_rate",
        ),
        (lambda d: d.assign(compute=d["compute"].where(d.index != 3, -1.0)), ">= 0", "compute"),
        (lambda d: d[d["compute"] > 0], "R0", "compute"),
        (lambda d: d[d["step"] <= 20], "at least 4", "compute"),
        (
            lambda d: d.assign(model_size=d["model_size"].where(d.index != 2, 0)),
            "> 0",
            "model_size",
        ),
    ],
)
def test_bad_logs_get_located_errors(tmp_path, edit, match, column):
    df = _frame(lambda v, n, c: _scalerl(c, 0.1, 0.6, 1.5, 2e11), seeds=1)
    df = df.drop(columns=["variant", "model_size"]).rename(columns={"n_params": "model_size"})
    path = _write(tmp_path, edit(df).reset_index(drop=True))
    with pytest.raises(InputError, match=match) as info:
        rla.load_rl_logs(path)
    assert info.value.column == column and info.value.file == str(path)
    if match != "missing column":
        assert info.value.row is not None and info.value.row >= 1


def test_pooled_phases_without_enough_early_steps_predicts_no_plateau():
    """An early window with fewer distinct steps than the logistic's 4 parameters (a short
    run evaluated rarely) gives no early prediction instead of failing the study."""

    def fn(v, n, c):
        t = np.searchsorted(C, c) / (C.size - 1)
        return 0.1 + 0.5 / (1 + np.exp(-15.0 * (t - 0.4)))

    ph = rph.pooled_phases(_frame(fn, noise=0.005), early_frac=0.1, reps=5, seed=0)
    assert ph["t90_early"].isna().all() and ph["mae_rest"].isna().all()
    assert np.allclose(ph["t90"], 0.4 + np.log(9) / 15.0, atol=0.03)  # the full fit stands


def test_a_pinned_at_its_bound_leaves_b_and_c_mid_unidentified_too():
    per_seed = pd.DataFrame(
        [
            {"variant": v, "model_size": s, "seed": sd, "A": a, "B": 1.5, "C_mid": c}
            for s in ("s", "m")
            for sd in range(4)
            for v, a, c in (("baseline", 1.0 if sd < 2 else 0.8, 1e3), ("half", 0.7, 3e3))
        ]
    )
    eff = rab.ablation_effects(per_seed, reps=100, seed=0).set_index(["variant", "metric"])
    for metric in ("A", "log10_B", "log10_C_mid"):
        row = eff.loc[("half", metric)]
        assert not row["identified"] and "baseline on its bound 1 in 50%" in row["note"], metric
    assert "fitted jointly with A" in eff.loc[("half", "log10_C_mid"), "note"]
    # off the bound: all three identified
    fine = per_seed.assign(A=per_seed["A"].clip(upper=0.9))
    eff = rab.ablation_effects(fine, reps=100, seed=0)
    assert eff["identified"].all() and (eff["note"] == "").all()
