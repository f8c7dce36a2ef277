"""Coverage of the sparsity study's own intervals, simulated on its own data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scalinglab.errors import InputError
from scalinglab.fitting import fit
from scalinglab.stats.coverage_report import coverage_note, stated_on_data
from scalinglab.studies.sparsity import coverage_sim as cs
from scalinglab.studies.sparsity import published as pub
from scalinglab.studies.sparsity import run_coverage as rc


def test_block_noise_strings_residual_runs_and_ar1_keeps_the_lag1_correlation():
    resid = np.arange(30, dtype=float)
    e = cs.residual_noise(resid, "blocks", sims=50, rng=np.random.default_rng(0))
    L = pub.block_length(30)
    assert e.shape == (50, 30)
    # within each block the residuals are consecutive checkpoints
    steps = np.diff(e.reshape(50, -1)[:, : (30 // L) * L].reshape(50, -1, L), axis=2)
    assert np.all(steps == 1.0)
    rng = np.random.default_rng(1)
    base = np.empty(4000)
    base[0] = 0.0
    for t in range(1, base.size):
        base[t] = 0.6 * base[t - 1] + rng.normal()
    ar = cs.residual_noise(base, "ar1", sims=200, rng=np.random.default_rng(2))
    lag1 = np.mean([np.corrcoef(r[:-1], r[1:])[0, 1] for r in ar])
    assert lag1 == pytest.approx(0.6, abs=0.03)
    assert ar.std() == pytest.approx(base.std(), rel=0.05)
    with pytest.raises(ValueError, match="unknown generator"):
        cs.residual_noise(resid, "iid", sims=2, rng=np.random.default_rng(0))


def _offset_runs(offsets, *, A0=0.4):
    """SiLU-law runs that differ by a constant: the pooled limit is A0 + mean(offsets)."""
    D = np.geomspace(0.5, 200.0, 12)
    curve = -0.1 * D**-0.5 + A0
    rows = [
        {"run": f"r{j}", "tokens": d, "activation_ratio": v + o}
        for j, o in enumerate(offsets)
        for d, v in zip(D, curve, strict=True)
    ]
    return pd.DataFrame(rows)


def test_group_coverage_equals_the_percentile_bootstrap_of_the_runs_offsets():
    """Runs that differ by constants make the law's limit the mean offset: the group
    bootstrap's coverage is then the percentile bootstrap of a mean of 3 draws from the
    offsets, computed here without any fit (offsets with distinct means, so that no
    bootstrap quantile lands on the truth up to the fit's precision)."""
    offsets = np.array([-0.013, 0.004, 0.009])
    g = _offset_runs(offsets)
    res = fit("silu_sparsity", g["tokens"].to_numpy(), g["activation_ratio"].to_numpy())
    m = float(offsets.mean())
    assert res.params["A0"] == pytest.approx(0.4 + m, abs=1e-6)
    sims, reps = 80, 60
    cov = rc.group_coverage(g, res, sims=sims, reps=reps, seed=3)
    rng = np.random.default_rng(11)
    hits = []
    for _ in range(4000):
        x = rng.choice(offsets, 3)
        boot = rng.choice(x, (reps, 3)).mean(1)
        lo, hi = np.quantile(boot, [0.025, 0.975])
        hits.append(lo < hi and lo <= m <= hi)
    expected = float(np.mean(hits))
    assert cov.n == 3 and cov.sims == sims and cov.generator == "runs"
    assert abs(cov.coverage - expected) < 3 * np.hypot(cov.se, 0.008), (cov, expected)
    assert cov.coverage < 0.9  # 3 runs: a percentile bootstrap undercovers
    # same seed, same numbers
    assert rc.group_coverage(g, res, sims=20, reps=50, seed=4) == rc.group_coverage(
        g, res, sims=20, reps=50, seed=4
    )


def test_pair_coverage_equals_the_paired_percentile_bootstrap_of_two_sizes_offsets():
    """Two sizes of offset runs (limits 0.4 + mean offset and 0.3 + mean offset): the
    paired-draw interval of the limit's change per decade covers as the percentile
    bootstrap of that change over the two sizes' resampled offsets, computed without a fit."""
    oa, ob = np.array([-0.013, 0.004, 0.009]), np.array([-0.006, 0.011, 0.002, -0.001])
    ga, gb = _offset_runs(oa), _offset_runs(ob, A0=0.3)
    fa, fb = (
        fit("silu_sparsity", g["tokens"].to_numpy(), g["activation_ratio"].to_numpy())
        for g in (ga, gb)
    )
    na, nb = 1e4, 1e5  # one decade apart

    def rel(a, b):
        return (b - a) / (0.5 * (a + b))

    truth = rel(0.4 + oa.mean(), 0.3 + ob.mean())
    sims, reps = 80, 60
    cov = rc.pair_coverage((ga, fa, na), (gb, fb, nb), sims=sims, reps=reps, seed=5)
    rng = np.random.default_rng(12)
    hits = []
    for _ in range(4000):
        xa, xb = rng.choice(oa, oa.size), rng.choice(ob, ob.size)
        ba = 0.4 + rng.choice(xa, (reps, xa.size)).mean(1)
        bb = 0.3 + rng.choice(xb, (reps, xb.size)).mean(1)
        lo, hi = np.quantile(rel(ba, bb), [0.025, 0.975])
        hits.append(lo < hi and lo <= truth <= hi)
    expected = float(np.mean(hits))
    assert cov.n == 3 and cov.sims == sims and "3 and 4 runs" in cov.how
    assert abs(cov.coverage - expected) < 3 * np.hypot(cov.se, 0.008), (cov, expected)
    assert rc.pair_coverage((ga, fa, na), (gb, fb, nb), sims=10, reps=30, seed=1) == (
        rc.pair_coverage((ga, fa, na), (gb, fb, nb), sims=10, reps=30, seed=1)
    )


def _line_curves(noise: float, *, seed: int = 0) -> pd.DataFrame:
    """Three SiLU 'released curves' on one token grid, rising slowly, iid noise."""
    rng = np.random.default_rng(seed)
    D = np.geomspace(0.5, 300.0, 40)
    rows = []
    for size, A0 in (("0.2b", 0.40), ("0.8b", 0.39), ("2.4b", 0.38)):
        y = -0.1 * D**-0.4 + A0 + noise * rng.normal(size=D.size)
        rows.append(
            pd.DataFrame(
                {
                    "activation": "silu",
                    "model": size,
                    "D": D,
                    "activation_ratio": y,
                    "n_params": float(size.rstrip("b")) * 1e9,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def test_late_coverage_is_reproducible_and_names_its_size():
    curves = _line_curves(0.002)
    kw = dict(activation="silu", models=["0.2b", "0.8b", "2.4b"], sims=8, reps=100, seed=5)
    a = cs.late_coverage(curves, summary="trend", **kw)
    assert a == cs.late_coverage(curves, summary="trend", **kw)
    late, _ = pub.late_trends(curves, reps=1)
    assert a.n == int(late["n_points"].min()) and a.sims == 8
    assert a.generator in cs.GENERATORS and set(a.others) == set(cs.GENERATORS) - {a.generator}
    assert 0.0 <= a.coverage <= 1.0
    with pytest.raises(ValueError, match="summary"):
        cs.late_coverage(curves, summary="level", **kw)


def test_a_finding_states_the_coverage_and_its_verdict_says_it():
    cov = cs.Coverage(0.86, 0.025, 5, 200, "runs", {}, "200 bootstrap refits")
    from scalinglab.estimate import Estimate

    est = Estimate(0.55, 0.50, 0.83, level=0.95, method="group bootstrap over runs, percentile")
    out = cs.with_coverage("x", est, {"x": cov}, level=0.95)
    assert out.n == 5 and stated_on_data(out.method) == (0.86, 5, 0.025)
    note = coverage_note({"ci": [0.5, 0.83], "level": 0.95, "method": out.method, "n": 5})
    assert note is not None and "0.860 at n = 5" in note
    assert cs.with_coverage("y", est, {"x": cov}, level=0.95) is est  # none simulated
    assert cs.with_coverage("x", est, {"x": cov}, level=0.9) is est  # other level


def test_the_committed_table_covers_the_deciding_findings_and_checks_its_data(tmp_path):
    table = cs.read_table()
    for name in (
        "paper/relu/trend/late_relative_slope/test_half",
        "paper/silu/trend/late_relative_slope/test_half",
        "paper/relu/scale/relative_slope/test_half",
        "paper/silu/scale/relative_slope/test_half",
        "paper/law/silu/0.1b/A0",
        "paper/law/silu/1.2b/A0",
    ):
        c = table[name]
        assert 0.0 <= c.coverage <= 1.0 and c.sims >= 100 and c.se > 0
    obj = json.loads(cs._table_path().read_text())
    obj["provenance"]["data_sha256"] = {"data/0.1b_relu.txt": "0" * 64}
    (tmp_path / cs.TABLE).write_text(json.dumps(obj))
    with pytest.raises(InputError, match="sha256 differs"):
        cs.read_table(folder=tmp_path)
    assert cs.read_table(folder=tmp_path / "none") == {}


def _silu_size(seeds: int = 5) -> pd.DataFrame:
    """One SiLU size rising to a limit of 0.5 (the law's own form), each seed offset."""
    rng = np.random.default_rng(8)
    rows = []
    for s in range(seeds):
        off = 0.004 * rng.normal()
        for t in np.geomspace(1e6, 1e9, 12):
            rows.append(
                {
                    "activation": "silu",
                    "model": "s",
                    "seed": s,
                    "run": f"s/silu/{s}",
                    "tokens": t,
                    "tokens_per_param": t / 1e4,
                    "n_params": 1e4,
                    "activation_ratio": 0.5 - 40.0 * t**-0.3 + off + 1e-3 * rng.normal(),
                    "loss": 2.0 - 0.1 * np.log10(t / 1e6),
                    "usable": True,
                }
            )
    return pd.DataFrame(rows)


def test_a_law_route_limit_of_our_runs_carries_its_runs_and_measured_coverage():
    from scalinglab.studies.sparsity.long_findings import long_design

    step = long_design(
        _silu_size(), min_trend={"silu": 0.02}, reps=20, level=0.95, seed=0, coverage_sims=10
    )
    a0 = {f.name: f.estimate for f in step.findings}["long/silu/s/A0"]
    assert a0.identified and a0.note.startswith("route: law")
    got = stated_on_data(a0.method)
    assert got is not None and got[1] == 5 and a0.n == 5
    assert "whole runs' residual curves" in a0.method


def test_the_published_test_half_findings_state_their_measured_coverage():
    from scalinglab.studies.sparsity.paper_findings import calibration

    table = cs.read_table()
    step = calibration(pub.load_curves(), test_half=True, reps=50, level=0.95, seed=0)
    got = {f.name: f.estimate for f in step.findings if f.name.endswith("test_half")}
    assert len(got) == 4
    for name, est in got.items():
        c = table[name]
        assert stated_on_data(est.method) == (round(c.coverage, 3), c.n, round(c.se, 3))
        assert est.n == c.n
    # the default variant's calibration has no test half and reads no table
    plain = calibration(pub.load_curves(), test_half=False, reps=50, level=0.95, seed=0)
    assert not any(stated_on_data(f.estimate.method) for f in plain.findings)
