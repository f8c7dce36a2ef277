"""ScaleRL's asymptote against its bound, size by size, and the RL findings' intervals:
each states its n, and none is degenerate (zero width or non-finite)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalinglab.studies.rl import analysis as rla
from scalinglab.studies.rl import asymptote
from scalinglab.studies.rl import findings as rlf

C = np.linspace(0.0, 1e12, 26)


def _curves(params: dict[str, tuple[float, float, float]], *, seeds=3, noise=0.01, seed=0):
    """Runs of ScaleRL sigmoids ``size -> (A, B, C_mid)`` from R0 = 0.2, clipped to [0, 1]."""
    rng = np.random.default_rng(seed)
    rows = []
    for k, (size, (a, b, c_mid)) in enumerate(params.items()):
        for sd in range(seeds):
            y = np.full(C.shape, 0.2)
            y[1:] = 0.2 + (a - 0.2) / (1 + (c_mid / C[1:]) ** b)
            y[1:] = np.clip(y[1:] + rng.normal(0, noise, C.size - 1), 0, 1)
            rows += [
                {
                    "model_size": size,
                    "n_params": 1e4 * 10**k,
                    "variant": "baseline",
                    "seed": sd,
                    "step": i,
                    "compute": c,
                    "pass_rate": v,
                }
                for i, (c, v) in enumerate(zip(C, y, strict=True))
            ]
    return pd.DataFrame(rows)


def test_a_size_that_saturates_at_one_is_on_its_bound_and_one_that_bends_is_not():
    # "s" bends at 0.7 early in training; "m" climbs to 1 and stays (its asymptote is not
    # in the data: any A >= 1 fits, the bound holds it)
    df = _curves({"s": (0.7, 2.0, 1e11), "m": (1.3, 2.0, 4e11)})
    table, fits = rla.fit_scalerl(df, reps=60, seed=0)
    per_seed = rla.per_seed_sigmoids(df)
    tab = asymptote.bound_table(table, fits, per_seed, base="baseline")
    assert list(tab.index) == ["s", "m"]
    assert bool(tab.loc["s", "identified"]) and not bool(tab.loc["m", "identified"])
    assert tab.loc["s", "A"] == pytest.approx(0.7, abs=0.03)
    assert "bound" in tab.loc["m", "why"]
    assert tab.loc["s", "runs_A_off_bound"] == 3 and tab.loc["m", "runs_A_off_bound"] == 0
    assert asymptote.sizes_on_bound(tab) == ["m"]
    named = {n.name: n.estimate for n in asymptote.bound_findings(tab, base="baseline")}
    count = named["scalerl/A_identified_sizes"]
    assert count.point == 1.0 and count.ci is None and "at m" in count.note
    assert named["scalerl/m/A_runs_off_bound"].point == 0.0
    # the per-size sigmoid findings state their n (seeds) and an interval method the
    # coverage registry knows (a percentile bootstrap over the seeds)
    sig = {n.name: n.estimate for n in rlf.sigmoid_findings(table, fits, base="baseline")}
    assert sig["scalerl/s/A"].n == 3 and "percentile" in sig["scalerl/s/A"].method
    assert not sig["scalerl/m/A"].identified


def test_bound_findings_count_every_size_off_its_bound():
    tab = pd.DataFrame(
        {
            "A": [0.9, 0.8],
            "A_lo": [0.85, 0.7],
            "A_hi": [0.95, 0.9],
            "share_refits_at_bound": [0.0, 0.05],
            "identified": [True, True],
            "why": ["", ""],
            "runs": [4, 4],
            "runs_A_off_bound": [4, 3],
        },
        index=pd.Index(["s", "m"], name="model_size"),
    )
    named = {n.name: n.estimate for n in asymptote.bound_findings(tab, base="baseline")}
    assert named["scalerl/A_identified_sizes"].point == 2.0
    assert named["scalerl/A_identified_sizes"].note is None
    assert named["scalerl/m/A_runs_off_bound"].point == 3.0


def test_est_records_n_and_never_a_degenerate_interval():
    e = rlf.estimate_of(0.3, (0.1, 0.5), level=0.95, method=rlf.OVER_SEEDS, n=4)
    assert e.ci == (0.1, 0.5) and e.n == 4
    # a share that is 0 in every resample: the Wilson interval over its draws
    share = rlf.estimate_of(0.0, (0.0, 0.0), level=0.95, method=rlf.RLIABLE, n=5, share_n=5)
    assert share.lo == 0.0 and share.hi > 0.3 and "Wilson" in share.method
    # any other zero-width interval is dropped, with the reason
    flat = rlf.estimate_of(
        247.4, (247.4, 247.4), level=0.95, method=rlf.OVER_SEEDS, note="on bound"
    )
    assert (
        flat.ci == (247.4, 247.4) and "same value" in flat.no_interval and flat.note == "on bound"
    )
    # non-finite ends: no interval
    nan = rlf.estimate_of(0.1, (np.nan, np.nan), level=0.95, method=rlf.OVER_SEEDS)
    assert nan.ci is None and "no finite" in nan.note


def test_p_improve_of_zero_gets_a_wilson_interval_and_every_effect_its_n():
    effects = pd.DataFrame(
        [
            {
                "variant": "len_cap",
                "metric": "A",
                "delta": -0.5,
                "delta_lo": -0.6,
                "delta_hi": -0.4,
                "identified": True,
                "note": "",
                "sizes": "s,m",
                "n_seeds": 4,
                "mde": 0.1,
                "p_improve": 0.0,
                "p_lo": 0.0,
                "p_hi": 0.0,
            }
        ]
    )
    spread = {"sd": 0.05, "ci": (0.02, 0.08), "ci_extended": False, "at_bound": 0.0}
    spread["n_runs"] = {"s": 4, "m": 4}
    named = {
        n.name: n.estimate
        for n in rlf.ablation_findings(effects, spread, base="baseline", level=0.95, reps=100)
    }
    p = named["ablation/len_cap/p_improve_A"]
    assert p.lo == 0.0 and p.hi > 0 and p.n == 4
    assert named["ablation/len_cap/delta_A"].n == 4
    assert named["scalerl/A_seed_sd"].n == 4


def test_a_pooled_phase_point_outside_its_resampled_interval_is_not_identified():
    row = {
        "model_size": "m",
        "R0": 0.2,
        "Rmax": 0.9,
        "rise_resolved": True,
        "bend_inside": True,
        "eval_dt": 0.05,
        "t90_early": 0.5,
        "early_fail_share": 0.0,
        "t90_error": 0.01,
        "t90_error_lo": -0.02,
        "t90_error_hi": 0.03,
    }
    for name, point, lo, hi in (("t10", 0.316, 0.321, 0.365), ("t50", 0.4, 0.35, 0.45)):
        row |= {name: point, f"{name}_lo": lo, f"{name}_hi": hi}
    row |= {"t90": 0.6, "t90_lo": 0.55, "t90_hi": 0.65}
    named = {
        n.name: n.estimate
        for n in rlf.phase_findings(
            pd.DataFrame([row]), largest="m", early_frac=0.3, level=0.95, reps=50, n=4
        )
    }
    bad, good = named["phases/m/t10"], named["phases/m/t50"]
    assert bad.ci is None and not bad.identified and "outside its resampled interval" in bad.note
    assert good.ci == (0.35, 0.45) and good.identified and good.n == 4


def test_a_report_never_starts_a_long_sweep(tmp_path, monkeypatch):
    from scalinglab.errors import StudyError
    from scalinglab.studies.rl import report_data
    from scalinglab.studies.rl.config import sweep_config

    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    calls = []
    monkeypatch.setattr(report_data, "run_sweep", lambda sweep, **kw: calls.append(sweep) or "ds")
    with pytest.raises(StudyError, match=r"no stored Dataset for the v3 sweep.*sweep v3"):
        report_data.load_sweep(sweep_config("v3"))
    with pytest.raises(StudyError, match="not re-run inside a report"):
        report_data.load_sweep(sweep_config("v3"), rerun=True)
    assert calls == []
    # a short design runs in the report; a long one whose Dataset is stored is read
    assert report_data.load_sweep(sweep_config("tiny_v3")) == "ds"
    from scalinglab.compute import dataset_path

    v3 = sweep_config("v3", device="cpu")
    path = dataset_path("rl_scaling", "grpo-v3", v3.to_dict())
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    assert report_data.load_sweep(v3) == "ds" and len(calls) == 2
