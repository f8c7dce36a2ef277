"""FPO-5 and FPO-7 of the sweep design per seed with Student-t intervals
(scalinglab.studies.optimizers.seed_t_arms)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.stats import calibration
from scalinglab.stats.coverage_report import stated_on_data
from scalinglab.studies.optimizers import seed_t_arms

A, ALPHA, E = 2.0, 0.5, 1.5
MULTIPLES = (1.0, 2.0, 4.0, 8.0)


def _table(ratios: list[float], *, muon: float = 1.5, noise: float = 0.0005) -> pd.DataFrame:
    """AdamW on its law, Muon at ``muon`` times AdamW's data, and Muon with AdamW's settings
    (``muon@adamw``) at ``ratios[seed]`` times Muon's speedup (one size, 4 budgets)."""
    rng = np.random.default_rng(0)
    rows = []
    for sd, r in enumerate(ratios):
        for name, sp in (("adamw", 1.0), ("muon", muon), ("muon@adamw", muon * r)):
            for m in MULTIPLES:
                loss = A * (sp * m) ** -ALPHA + E + noise * rng.standard_normal()
                rows.append((name, "s", m, sd, loss))
    return pd.DataFrame(rows, columns=["optimizer", "model_size", "data_multiple", "seed", "loss"])


def _rows(out) -> dict:
    return {r["name"]: r["point"] for r in out[0]}


def test_transfer_ratio_is_the_t_interval_of_the_per_seed_ratios():
    ratios = [0.6, 0.7, 0.65]
    rows = _rows(seed_t_arms.transfer(_table(ratios), sims=300))
    est = rows["t/transfer_ratio/muon/s"]
    # each seed's ratio is recovered through its own AdamW fit; the interval is t over them
    logs = np.log(ratios)
    lo, hi = calibration.t_interval(logs)
    assert est.point == pytest.approx(math.exp(logs.mean()), rel=0.02)
    assert (est.lo, est.hi) == pytest.approx((math.exp(lo), math.exp(hi)), rel=0.03)
    assert est.n == 3 and est.method.startswith("Student t over 3 seeds")
    # the coverage simulated on these differences is stated in the method and recorded
    c, n, se = stated_on_data(est.method)
    assert n == 3 and 0 < c <= 1 and se > 0
    assert rows["coverage/t_transfer/n3"].point == pytest.approx(c, abs=5e-4)
    assert "coverage/percentile_transfer/n3" in rows


def test_transfer_interval_width_follows_the_seeds_spread():
    tight = _rows(seed_t_arms.transfer(_table([0.64, 0.66, 0.65]), sims=200))
    loose = _rows(seed_t_arms.transfer(_table([0.5, 0.8, 0.65]), sims=200))
    width = {k: math.log(v["t/transfer_ratio/muon/s"].hi / v["t/transfer_ratio/muon/s"].lo)
             for k, v in (("tight", tight), ("loose", loose))}  # fmt: skip
    assert width["loose"] > 5 * width["tight"]
    # the same mean ratio: the tight seeds place it below 1, the loose ones cannot
    assert tight["t/transfer_ratio/muon/s"].hi < 1 < loose["t/transfer_ratio/muon/s"].hi


def test_a_transfer_ratio_at_a_flagged_size_is_not_identified():
    table = _table([0.6, 0.7, 0.65])
    free = _rows(seed_t_arms.transfer(table, sims=100))["t/transfer_ratio/muon/s"]
    gated = _rows(seed_t_arms.transfer(table, sims=100, tuning={"s": ["muon: momentum=0.9"]}))
    est = gated["t/transfer_ratio/muon/s"]
    assert free.identified and not est.identified
    assert "momentum=0.9" in est.note and (est.point, est.lo) == (free.point, free.lo)


def test_no_transfer_runs_no_rows():
    table = _table([0.6, 0.7, 0.65])
    assert seed_t_arms.transfer(table[table.optimizer != "muon@adamw"], sims=50)[0] == []


def _ds(mids: dict[tuple[str, float], list[list[int]]]) -> xr.Dataset:
    """Four optimizers ranked 0 < 1 < 2 < 3 at the end; halfway (step 2 of 0-4) in the
    order ``mids[cell][seed]`` (a permutation: position -> optimizer)."""
    sizes = sorted({s for s, _ in mids})
    mults = sorted({m for _, m in mids})
    n_seeds = len(next(iter(mids.values())))
    loss = np.full((4, len(sizes), len(mults), n_seeds, 5), np.nan)
    for (s, m), orders in mids.items():
        i, j = sizes.index(s), mults.index(m)
        for sd, order in enumerate(orders):
            loss[:, i, j, sd, :] = 5.0 - np.arange(5)[None, :] * 0.1  # fill
            loss[:, i, j, sd, 4] = np.arange(4) + 1.0  # final: optimizer k is k-th
            loss[list(order), i, j, sd, 2] = np.arange(4) + 10.0  # halfway order
    return xr.Dataset(
        {"loss": (("optimizer", "model_size", "data_multiple", "seed", "step"), loss)},
        coords={
            "optimizer": ["a", "b", "c", "d"],
            "model_size": sizes,
            "data_multiple": mults,
            "seed": list(range(n_seeds)),
            "step": list(range(5)),
        },
    )


SAME, ONE, TWO = [0, 1, 2, 3], [1, 0, 2, 3], [1, 0, 3, 2]  # tau 1, 2/3, 1/3


def test_midrun_tau_per_seed_averaged_over_cells_with_a_t_interval():
    ds = _ds({("s", 1.0): [SAME, ONE, TWO], ("s", 2.0): [ONE, ONE, ONE]})
    rows = _rows(seed_t_arms.midrun(ds, ranked=("s", 2.0), sims=300))
    per_seed = np.array([(1 + 2 / 3) / 2, (2 / 3 + 2 / 3) / 2, (1 / 3 + 2 / 3) / 2])
    est = rows["t/tau_midrun/all"]
    lo, hi = calibration.t_interval(per_seed)
    assert est.point == pytest.approx(per_seed.mean(), rel=1e-12)
    assert (est.lo, est.hi) == pytest.approx((lo, min(hi, 1.0)), rel=1e-12)
    assert est.method.startswith("Student t over 3 seeds") and stated_on_data(est.method)
    # the ranked cell: the same tau on every seed, no spread to scale an interval
    ranked = rows["t/tau_midrun/s/2x"]
    assert ranked.point == pytest.approx(2 / 3) and ranked.lo is None
    assert {"coverage/t_tau/n3", "coverage/percentile_tau/n3"} <= set(rows)


def test_midrun_interval_is_clipped_to_tau_range_and_widens_with_spread():
    tight = _rows(seed_t_arms.midrun(_ds({("s", 1.0): [ONE, ONE, TWO]}), ranked=None, sims=100))
    loose = _rows(seed_t_arms.midrun(_ds({("s", 1.0): [SAME, TWO, TWO]}), ranked=None, sims=100))
    t, w = tight["t/tau_midrun/all"], loose["t/tau_midrun/all"]
    assert -1.0 <= w.lo and w.hi == 1.0  # the raw t interval passes 1: clipped
    assert (w.hi - w.lo) > (t.hi - t.lo)
    # a cell with an incomplete seed is left out of the average
    ds = _ds({("s", 1.0): [SAME, ONE, TWO], ("s", 2.0): [SAME, SAME, SAME]})
    ds.loss.loc[{"model_size": "s", "data_multiple": 2.0, "seed": 1}] = np.nan
    only = _rows(seed_t_arms.midrun(ds, ranked=None, sims=100))["t/tau_midrun/all"]
    assert only.point == pytest.approx(2 / 3)


def test_schedule_gain_is_the_per_seed_tau_difference_with_a_t_interval():
    main = _ds({("s", 4.0): [ONE, TWO, TWO], ("m", 4.0): [ONE, ONE, TWO]})
    ctrl = _ds({("s", 4.0): [SAME, SAME, ONE], ("m", 4.0): [SAME, ONE, SAME]})
    ds = main.assign(control_loss=ctrl.loss)
    ds.attrs["control_schedule"] = "constant"
    rows = _rows(seed_t_arms.schedule_gain(ds, sims=200))
    cell = np.array([1 / 3, 2 / 3, 1 / 3])  # control tau minus main tau per seed at s
    est = rows["t/tau_gain_constant/s/4x"]
    lo, hi = calibration.t_interval(cell)
    assert est.point == pytest.approx(cell.mean()) and (est.lo, est.hi) == pytest.approx((lo, hi))
    pooled = (cell + np.array([1 / 3, 0.0, 2 / 3])) / 2
    est = rows["t/tau_gain_constant/pooled"]
    lo, hi = calibration.t_interval(pooled)
    assert est.point == pytest.approx(pooled.mean()) and (est.lo, est.hi) == pytest.approx((lo, hi))
    assert est.method.startswith("Student t over 3 seeds") and "coverage/t_tau_gain/n3" in rows
    # without a control arm: nothing
    assert seed_t_arms.schedule_gain(main, sims=50)[0] == []
