"""The RL intervals' unit: the warm start (base model), or the run where there is none."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from scalinglab.studies.rl import halfruns, units


def _runs(values, warm):
    return pd.DataFrame(
        {
            "model_size": ["s"] * 4 + ["l"] * 4,
            "variant": "baseline",
            "seed": list(range(4)) * 2,
            "warm_start": warm,
            "x": values,
        }
    )


def test_a_pooled_statistic_has_one_unit_per_size_and_warm_start():
    df = _runs([0.1, 0.3, 0.5, np.nan, 1.0, 1.2, 2.0, 2.2], [0, 0, 1, 1] * 2)
    u = units.unit_values(df, "x")
    assert u.clustered and u.n == 4 and u.n_runs == 7  # the NaN run is dropped
    np.testing.assert_allclose(sorted(u.values), [0.2, 0.5, 1.1, 2.1])
    assert u.describe() == (
        "4 warm starts in 2 sizes (each the mean of its runs; 7 runs; sizes as strata, df 2)"
    )
    mean, lo, hi = units.t_over_units(u, level=0.95)
    # sizes are strata: the spread of the units within their own size, on 4 - 2 df
    dev = np.array([0.5, -0.5, 0.15, -0.15])  # l: 1.1, 2.1; s: 0.2, 0.5
    half = sps.t.ppf(0.975, 2) * np.sqrt(np.sum(dev**2) / 2 / 4)
    assert (mean, lo, hi) == pytest.approx((u.values.mean(), mean - half, mean + half))
    plain = units.unit_values(df.drop(columns="warm_start"), "x")
    assert not plain.clustered and plain.n == 7
    assert plain.describe() == "7 runs in 2 sizes (sizes as strata, df 5)"
    mixed = df.assign(warm_start=[0, 0, 1, 1, 0, 0, 1, np.nan])
    with pytest.raises(ValueError, match="1 run\\(s\\) without a warm_start"):
        units.unit_values(mixed, "x")
    one = units.unit_values(df[(df["model_size"] == "s") & (df["warm_start"] == 0)], "x")
    assert one.n == 1 and np.isnan(units.t_over_units(one, level=0.95)[1])


def test_final_error_by_size_reads_its_interval_over_warm_starts():
    rows = []
    for size in ("s", "l"):
        for w, err in ((0, -0.1), (1, 0.1)):
            for r in range(3):  # three RL seeds a warm start, nearly the same error
                rows.append(
                    {
                        "model_size": size,
                        "n_params": 1e4 if size == "s" else 1e5,
                        "variant": "baseline",
                        "seed": 3 * w + r,
                        "warm_start": w,
                        "final_error": err + 0.001 * r,
                        "unstable": False,
                    }
                )
    tab = halfruns.final_error_by_size(pd.DataFrame(rows), variant="baseline")
    assert tab.loc["s", "runs"] == 6 and tab.loc["s", "units"] == 2
    assert tab.loc["s", "unit_method"].startswith("Student t over 2 warm starts")
    assert tab["clustered"].all()  # the flag the findings' wording reads, not the text
    plain = pd.DataFrame(rows).drop(columns="warm_start")
    assert not halfruns.final_error_by_size(plain, variant="baseline")["clustered"].any()
    # two base models 0.2 apart: the interval spans both, not the RL seeds' 0.002
    assert tab.loc["s", "final_error_lo"] < -0.1 and tab.loc["s", "final_error_hi"] > 0.1


def _shares(per_unit):
    """``per_unit``: (size, warm start, successes, runs) -> one 0/1 row per run."""
    rows = []
    for size, ws, k, m in per_unit:
        rows += [{"model_size": size, "warm_start": ws, "x": float(i < k)} for i in range(m)]
    return pd.DataFrame(rows)


DESIGN = [("s", 0, 0, 2), ("s", 1, 0, 2), ("m", 0, 0, 2), ("m", 1, 0, 2)]
DESIGN += [("l", 0, 14, 20), ("l", 1, 0, 20), ("xl", 0, 0, 4), ("xl", 1, 0, 4)]


def test_a_share_over_warm_starts_takes_the_effective_size_of_its_clusters():
    u = units.unit_values(_shares(DESIGN), "x")
    p, lo, hi = units.share_over_units(u, level=0.95)
    assert p == pytest.approx(0.7 / 8)  # each base model's share weighs the same
    # Korn-Graubard by hand: n_eff = p (1 - p) / se^2, df-adjusted, Clopper-Pearson
    se2 = (2 * 0.35**2) / 4 / 8  # l's two units deviate +-0.35 from their mean; df 8 - 4
    n_eff = p * (1 - p) / se2 * (sps.t.ppf(0.025, 55) / sps.t.ppf(0.025, 4)) ** 2
    assert lo == pytest.approx(sps.beta.ppf(0.025, p * n_eff, n_eff * (1 - p) + 1))
    assert hi == pytest.approx(sps.beta.ppf(0.975, p * n_eff + 1, n_eff * (1 - p)))
    # 14 of 56 runs would give a far narrower interval: the clusters are what it is over
    assert (
        hi
        > 0.5
        > units.share_over_units(
            units.unit_values(_shares(DESIGN).drop(columns="warm_start"), "x"), level=0.95
        )[2]
    )
    # a share of 0 keeps a width: never [0, 0]
    zero = units.unit_values(_shares([(s, w, 0, m) for s, w, _, m in DESIGN]), "x")
    p0, lo0, hi0 = units.share_over_units(zero, level=0.95)
    # se 0: n_eff is Kish's size of an equal-weight mean over the 8 units, not the 56 runs
    kish = 64 / (4 / 2 + 2 / 20 + 2 / 4)
    assert units.kish_size(zero.runs) == pytest.approx(kish)
    n0 = kish * (sps.t.ppf(0.025, 55) / sps.t.ppf(0.025, 4)) ** 2
    assert p0 == 0.0 == lo0 and hi0 == pytest.approx(1 - 0.025 ** (1 / n0))


def test_the_share_interval_covers_on_its_own_design():
    df = _shares(DESIGN)
    u = units.unit_values(df, "x")
    icc = units.unit_icc(df, "x")
    assert 0.3 < icc <= 0.95  # all of l's successes sit in one warm start
    rng = np.random.default_rng(0)
    cov = units.share_coverage(u, icc=icc, level=0.95, sims=2000, rng=rng)
    assert cov.coverage >= 0.95 - 3 * cov.se and cov.truth == pytest.approx(0.0875)
    # the t interval over the same units covers far less there (its lower end < 0)
    assert units.t_over_units(u, level=0.95)[1] < 0
    # runs as units: no clustering, coverage still at the level
    plain = units.unit_values(df.drop(columns="warm_start"), "x")
    again = units.share_coverage(plain, icc=0.0, level=0.95, sims=2000, rng=rng)
    assert again.coverage >= 0.95 - 3 * again.se


def test_the_intra_unit_correlation_is_read_within_sizes():
    # sizes differ (all of s's runs succeed, none of l's) but base models within a size
    # do not: no correlation between base models to read
    df = _shares([("s", 0, 4, 4), ("s", 1, 4, 4), ("l", 0, 0, 4), ("l", 1, 0, 4)])
    assert units.unit_icc(df, "x") == 0.0
    # one base model of l succeeds throughout, the other never: strongly correlated
    df = _shares([("s", 0, 2, 4), ("s", 1, 2, 4), ("l", 0, 4, 4), ("l", 1, 0, 4)])
    assert units.unit_icc(df, "x") > 0.5
    # runs as units: none
    assert units.unit_icc(df.drop(columns="warm_start"), "x") == 0.0


def test_the_intra_unit_correlation_is_the_one_way_anova_estimate():
    # balanced, one stratum (no model_size): the textbook (MSB - MSW) / (MSB + (k-1) MSW)
    rng = np.random.default_rng(5)
    base = rng.normal(3.0, 1.0, 6)  # far from 0: an uncentred MSB would read ~1
    x = base[:, None] + rng.normal(0, 0.7, (6, 4))
    df = pd.DataFrame({"warm_start": np.repeat(np.arange(6), 4), "x": x.ravel()})
    msb = 4 * np.sum((x.mean(1) - x.mean()) ** 2) / 5
    msw = np.sum((x - x.mean(1, keepdims=True)) ** 2) / (6 * 3)
    want = (msb - msw) / (msb + 3 * msw)
    assert 0 < want < 0.95
    assert units.unit_icc(df, "x") == pytest.approx(want, rel=1e-12)
