"""Base-model against RL spread (nested ANOVA), the v3 layout's coordinates, the plateau
as an equivalence test, and the ablations' Student-t intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.studies.rl import analysis, sound_findings, spread
from scalinglab.studies.rl.stopping import (
    EquivalenceRule,
    PlateauRule,
    gain_after_plateau,
    plateaued,
    run_outcomes,
)


def _nested(rng, *, sd_ws, sd_rl, sizes=4, ws=2, rl=2):
    rows = []
    for s in range(sizes):
        for w in range(ws):
            base = 0.5 + 0.1 * s + rng.normal(0, sd_ws)
            for r in range(rl):
                rows.append(
                    {
                        "model_size": f"s{s}",
                        "warm_start": w,
                        "rl_seed": r,
                        "seed": w * rl + r,
                        "A": base + rng.normal(0, sd_rl),
                    }
                )
    return pd.DataFrame(rows)


def test_components_recover_known_spreads_with_many_groups():
    t = _nested(np.random.default_rng(0), sd_ws=0.1, sd_rl=0.02, sizes=60, ws=4, rl=3)
    c = spread.variance_components(t, "A")
    assert c["warm_start"].point == pytest.approx(0.1, rel=0.15)
    assert c["rl"].point == pytest.approx(0.02, rel=0.15)
    assert c["rl"].lo < 0.02 < c["rl"].hi and c["warm_start"].lo < 0.1 < c["warm_start"].hi
    # the RL interval rests on the within-warm-start degrees of freedom, 240 x (3 - 1):
    # the n at which the report reads its coverage (the chi-square SD simulation)
    assert c["rl"].n == 480 and c["rl"].method == "nested ANOVA, chi-square interval (df 480)"
    assert c["warm_start"].n == 240


@pytest.mark.parametrize("sd_ws", [0.0, 0.03, 0.1])
def test_intervals_cover_at_the_v3_design(sd_ws):
    # 4 sizes x 2 warm starts x 2 RL seeds: the chi-square interval is exact and the
    # Graybill-Wang interval keeps close to 95% (conservative at sd_ws = 0)
    rng = np.random.default_rng(1)
    hit_ws = hit_rl = 0
    sims = 400
    for _ in range(sims):
        c = spread.variance_components(_nested(rng, sd_ws=sd_ws, sd_rl=0.03), "A")
        hit_ws += c["warm_start"].lo <= sd_ws <= c["warm_start"].hi
        hit_rl += c["rl"].lo <= 0.03 <= c["rl"].hi
        assert c["warm_start"].hi > 0  # never a [0, 0] interval
    assert hit_rl / sims > 0.91 and hit_ws / sims > 0.90


def test_data_without_nesting_say_so():
    t = _nested(np.random.default_rng(2), sd_ws=0.1, sd_rl=0.02).drop(columns=["warm_start"])
    assert not spread.has_nesting(t) and spread.variance_components(t, "A") is None
    one_each = _nested(np.random.default_rng(2), sd_ws=0.1, sd_rl=0.02, rl=1)
    assert spread.variance_components(one_each, "A") is None
    named = sound_findings.spread_findings({"A": None, "final": None}, t)
    assert len(named) == 4
    assert all(not n.estimate.identified and "confounded" in n.estimate.note for n in named)


def test_spread_findings_on_a_subset_of_runs_are_named_apart_and_say_so():
    t = _nested(np.random.default_rng(3), sd_ws=0.1, sd_rl=0.02)
    every = sound_findings.spread_findings({"A": spread.variance_components(t, "A")}, t)
    part = t.iloc[: len(t) // 2]
    sub = sound_findings.spread_findings(
        {"A": spread.variance_components(part, "A")},
        part,
        prefix="spread/stable",
        subset="stable runs only: ScaleRL's scope; a sensitivity",
    )
    assert [n.name for n in every] == ["spread/A/warm_start_sd", "spread/A/rl_sd"]
    assert [n.name for n in sub] == ["spread/stable/A/warm_start_sd", "spread/stable/A/rl_sd"]
    assert f"{len(t)} runs" in every[1].description and "stable" not in every[1].description
    assert f"{len(part)} runs" in sub[1].description and "stable runs only" in sub[1].description
    assert sub[1].estimate.n < every[1].estimate.n  # fewer runs, fewer degrees of freedom


def test_the_bound_share_of_the_rl_part_counts_only_the_runs_that_enter_it():
    # 4 sizes x 2 warm starts x 2 RL seeds, none on the bound, plus 4 single-run base
    # models with A = 1: 4 of 20 runs (20%) on the bound, but none of the 16 runs whose
    # base model has 2 RL seeds (the only runs the within-model spread is computed from)
    t = _nested(np.random.default_rng(4), sd_ws=0.05, sd_rl=0.02).assign(A_on_bound=False)
    extra = pd.DataFrame(
        {"model_size": "s0", "warm_start": range(2, 6), "rl_seed": 0, "seed": range(10, 14)}
    ).assign(A=1.0, A_on_bound=True)
    t = pd.concat([t, extra], ignore_index=True)
    named = sound_findings.spread_findings({"A": spread.variance_components(t, "A")}, t)
    by = {n.name: n.estimate for n in named}
    assert not by["spread/A/warm_start_sd"].identified  # every run enters the base-model part
    assert "20% of the 20 runs that enter it" in by["spread/A/warm_start_sd"].note
    assert by["spread/A/rl_sd"].identified


def _v3_dataset(rng):
    """The v3 layout: dims (model_size, variant, seed, eval), warm_start(seed), rl_seed(seed)."""
    steps = np.arange(0, 401, 50)
    sizes, seeds = ["s", "m"], np.arange(4)
    pr = np.empty((2, 1, 4, steps.size))
    for i in range(2):
        for sd in seeds:
            a = 0.7 + 0.1 * i + 0.08 * (sd // 2) + rng.normal(0, 0.005)
            pr[i, 0, sd] = 0.2 + (a - 0.2) * (1 - np.exp(-steps / 80))
    flops = np.broadcast_to(steps * 1e9 * (1 + np.arange(2))[:, None, None, None], pr.shape)
    return xr.Dataset(
        {
            "pass_rate": (("model_size", "variant", "seed", "eval"), pr),
            "flops": (("model_size", "variant", "seed", "eval"), flops.copy()),
            "status": (("model_size", "variant", "seed"), np.full((2, 1, 4), "ok")),
        },
        coords={
            "model_size": sizes,
            "variant": ["baseline"],
            "seed": seeds,
            "eval_step": ("eval", steps),
            "n_params": ("model_size", [1e4, 1e5]),
            "warm_start": ("seed", seeds // 2),
            "rl_seed": ("seed", seeds % 2),
        },
    )


def test_curves_frame_keeps_the_v3_coordinates_and_the_spread_splits_them():
    ds = _v3_dataset(np.random.default_rng(3))
    cur = analysis.curves_frame(ds)
    assert {"warm_start", "rl_seed"} <= set(cur.columns)
    assert cur.groupby("seed")["warm_start"].first().tolist() == [0, 0, 1, 1]
    per_seed = pd.DataFrame(
        {
            "variant": "baseline",
            "model_size": np.repeat(["s", "m"], 4),
            "seed": np.tile(np.arange(4), 2),
            "A": 0.5,
        }
    )
    rv = spread.run_values(cur, per_seed, variant="baseline")
    assert spread.has_nesting(rv)
    c = spread.variance_components(rv, "final")
    # the warm starts differ by 0.08 in A, the RL seeds by noise: base models dominate
    assert c["warm_start"].point > 5 * c["rl"].point and c["warm_start"].lo > 0
    # a design that does not evaluate at step 0 gives each run's R0 as r0(model_size, seed)
    later = ds.isel(eval=slice(1, None)).assign(
        r0=(("model_size", "seed"), np.full((2, 4), 0.2) + np.arange(4) * 0.01)
    )
    cur0 = analysis.curves_frame(later)
    first = cur0[cur0["step"] == 0].set_index(["model_size", "seed"])
    assert len(first) == 8 and (first["compute"] == 0).all()
    assert first.loc[("m", 3), "pass_rate"] == pytest.approx(0.23)
    assert first.loc[("m", 3), "warm_start"] == 1
    assert len(cur0) == len(cur)
    # a dataset without the coordinates gives the old columns only
    old = analysis.curves_frame(ds.drop_vars(["warm_start", "rl_seed"]))
    assert "warm_start" not in old.columns


def test_equivalence_rule_needs_the_gains_upper_bound_below_the_tolerance():
    steps = np.arange(0, 1001, 50)
    comp = steps * 1e9
    rng = np.random.default_rng(4)
    # a noisy window still rising by about 0.03 over the last 20%: "not significant"
    # under the old rule, not shown to be flat under the equivalence test
    rising = 0.05 + 0.5 * (1 - np.exp(-steps / 150)) + 0.15 * steps / 1000
    rising = rising + rng.normal(0, 0.02, steps.size)
    old, new = PlateauRule(min_steps=400), EquivalenceRule(min_steps=400)
    assert plateaued(steps, comp, rising, old) and not plateaued(steps, comp, rising, new)
    flat = 0.05 + 0.6 * (1 - np.exp(-steps / 100)) + rng.normal(0, 0.002, steps.size)
    assert plateaued(steps, comp, flat, new)
    with pytest.raises(ValueError, match="level"):
        EquivalenceRule(level=0.4)


def test_unstable_runs_are_reported_apart_not_as_plateaus():
    steps = np.arange(0, 1501, 50)  # runs that go on past their plateau
    flat = 0.05 + 0.6 * (1 - np.exp(-steps / 100))
    falls = np.where(steps > 700, flat - 0.3, flat)
    rows = [
        {
            "model_size": "s",
            "variant": "baseline",
            "seed": sd,
            "step": st,
            "compute": st * 1e9,
            "pass_rate": y,
        }
        for sd, ys in enumerate([flat, flat + 0.01, flat - 0.01, falls])
        for st, y in zip(steps, ys, strict=True)
    ]
    out = run_outcomes(pd.DataFrame(rows), rule=EquivalenceRule(min_steps=400))
    assert out["unstable"].tolist() == [False, False, False, True]
    assert np.isnan(out.loc[3, "gain_after_plateau"])
    g = gain_after_plateau(out)
    assert (g["n_unstable"], g["n_plateau"], g["n_runs"]) == (1, 3, 3)
    named = sound_findings.plateau_equivalence_findings(g, out, base="baseline")
    assert [n.estimate.point for n in named] == [3.0, 1.0]


def test_t_effects_match_a_paired_t_interval_at_one_size():
    from scalinglab.stats.calibration import t_interval

    rng = np.random.default_rng(5)
    a_base, a_var = rng.normal(0.7, 0.03, 5), None
    a_var = a_base - 0.05 + rng.normal(0, 0.01, 5)
    per_seed = pd.DataFrame(
        {
            "variant": ["baseline"] * 5 + ["len_cap"] * 5,
            "model_size": "s",
            "seed": list(range(5)) * 2,
            "A": np.r_[a_base, a_var],
            "B": 1.0,
            "C_mid": 1e10,
        }
    )
    effects = pd.DataFrame(
        [
            {
                "variant": "len_cap",
                "metric": "A",
                "delta": 0.0,
                "delta_lo": -1.0,
                "delta_hi": 1.0,
                "mde": 9.0,
                "n_seeds": 5,
            }
        ]
    )
    got = sound_findings.t_effects(per_seed, effects, baseline="baseline").iloc[0]
    lo, hi = t_interval(a_var - a_base)
    assert (got["delta_lo"], got["delta_hi"]) == pytest.approx((lo, hi))
    assert got["delta"] == pytest.approx((a_var - a_base).mean()) and got["mde"] < 9.0
    verdicts = [
        {
            "id": "CONTROL-A",
            "verdict": "reproduces",
            "evidence": [{"name": "ablation/len_cap/delta_A"}],
        }
    ]
    t = sound_findings.mde_table(
        sound_findings.t_effects(per_seed, effects, baseline="baseline"), verdicts
    )
    assert t.loc[0, "verdict"] == "CONTROL-A: reproduces"
