import numpy as np
import pytest
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.estimate import quantile_mc_se
from scalinglab.stats.few_run_flips import (
    distinct_positions,
    few_run_eligible,
    few_run_flip_rates,
    smooth_quantiles,
)


def scores(values, algorithms):
    return xr.DataArray(
        values,
        dims=("algorithm", "run", "task"),
        coords={"algorithm": algorithms, "task": [f"t{i}" for i in range(values.shape[2])]},
    )


def test_distinct_positions_are_distinct_in_range_and_uniform():
    counts = np.array([3, 5, 40])
    pos = distinct_positions(np.random.default_rng(0), counts, size=(4000,), k=3)
    assert pos.shape == (4000, 3, 3)
    srt = np.sort(pos, axis=1)
    assert (np.diff(srt, axis=1) > 0).all()
    assert (pos >= 0).all() and (pos < counts).all()
    # each of the 5 runs of task 1 is in a draw with probability 3/5
    freq = np.array([(pos[:, :, 1] == r).any(axis=1).mean() for r in range(5)])
    np.testing.assert_allclose(freq, 0.6, atol=0.03)
    with pytest.raises(InputError, match="at least 3 runs"):
        distinct_positions(np.random.default_rng(0), np.array([2, 5]), size=(2,), k=3)


def _rescan_positions(rng, counts, *, size, k):
    """The plain algorithm: redraw every row with a repeat, rescanning the whole array."""
    pos = np.floor(rng.random((*size, k, counts.size)) * counts).astype(np.int64)
    while True:
        bad = (np.diff(np.sort(pos, axis=-2), axis=-2) == 0).any(axis=-2)
        if not bad.any():
            return pos
        fresh = np.floor(
            rng.random((int(bad.sum()), k)) * np.broadcast_to(counts, bad.shape)[bad][:, None]
        )
        np.moveaxis(pos, -2, -1)[bad] = fresh.astype(np.int64)


@pytest.mark.parametrize(
    "counts, size, k",
    [
        ([3, 5, 4, 10], (50, 7), 3),
        ([4, 4], (20, 3, 2), 2),
        ([6, 7, 5], (100,), 5),
        ([5] * 9, (30, 4), 3),
    ],
)
def test_distinct_positions_draw_what_a_whole_array_rescan_draws(counts, size, k):
    # only the redrawn rows are rechecked; the draws (and so every report) are unchanged
    counts = np.array(counts)
    got = distinct_positions(np.random.default_rng(7), counts, size=size, k=k)
    np.testing.assert_array_equal(
        got, _rescan_positions(np.random.default_rng(7), counts, size=size, k=k)
    )


def test_separated_algorithms_never_flip_and_ties_flip_often():
    rng = np.random.default_rng(1)
    base = rng.normal(size=(3, 20, 8)) * 0.1
    base[0] += 10.0  # far ahead: never loses its place
    s = scores(base, ["A", "B", "C"])  # B and C tied in distribution
    out = few_run_flip_rates(s, n_runs=3, draws=400, reps=40, inner_draws=20, rng=rng)
    assert out["point"].sel(statistic="winner_change_rate").values == pytest.approx(0.0)
    ranking = out["point"].sel(statistic="ranking_change_rate", metric="iqm").item()
    assert 0.1 < ranking < 0.9  # B vs C: close in all runs, often reversed in 3
    lo, hi = out["lo"].values, out["hi"].values
    assert (lo <= hi + 1e-12).all() and (hi <= 1).all() and (lo >= 0).all()
    se = out["mc_se"].sel(statistic="ranking_change_rate", metric="iqm").item()
    assert se == pytest.approx(np.sqrt(ranking * (1 - ranking) / 399), rel=0.02)
    assert out["estimate"].shape == (400, 3, 3)
    assert (out["spread"] > 0).all()


def test_algorithms_with_too_few_runs_are_skipped_with_a_reason():
    v = np.random.default_rng(2).normal(size=(3, 10, 4))
    v[2, 3:] = np.nan  # C has 3 runs: its 3-run subsamples are its full data
    s = scores(v, ["A", "B", "C"])
    kept, skipped = few_run_eligible(s, 3)
    assert kept == ["A", "B"] and "3 runs" in skipped["C"]
    out = few_run_flip_rates(
        s, n_runs=3, draws=50, reps=5, inner_draws=5, rng=np.random.default_rng(0)
    )
    assert list(out.algorithm.values) == ["A", "B"] and out.attrs["skipped"].startswith("C:")
    with pytest.raises(InputError, match="at least 2 algorithms"):
        few_run_flip_rates(
            s.sel(algorithm=["A", "C"]), n_runs=3, draws=5, reps=2, rng=np.random.default_rng(0)
        )


def test_same_seed_same_numbers_and_algorithm_streams_are_keyed():
    v = np.random.default_rng(3).normal(size=(3, 12, 5))
    s = scores(v, ["A", "B", "C"])
    a = few_run_flip_rates(
        s, n_runs=4, draws=100, reps=10, inner_draws=10, rng=np.random.default_rng(9)
    )
    b = few_run_flip_rates(
        s, n_runs=4, draws=100, reps=10, inner_draws=10, rng=np.random.default_rng(9)
    )
    xr.testing.assert_identical(a, b)
    c = few_run_flip_rates(
        s.sel(algorithm=["C", "A", "B"]),
        n_runs=4,
        draws=100,
        reps=10,
        inner_draws=10,
        rng=np.random.default_rng(9),
    )
    np.testing.assert_array_equal(
        c["estimate"].sel(algorithm="A"), a["estimate"].sel(algorithm="A")
    )


def test_interval_ends_carry_their_monte_carlo_error_into_the_estimate():
    from scalinglab.estimate import Estimate

    rng = np.random.default_rng(3)
    base = rng.normal(size=(3, 12, 6)) * 0.1
    base[0] += 10.0
    s = scores(base, ["A", "B", "C"])
    few = few_run_flip_rates(s, n_runs=3, draws=200, reps=20, inner_draws=100, rng=rng)
    many = few_run_flip_rates(
        s, n_runs=3, draws=200, reps=400, inner_draws=100, rng=np.random.default_rng(3)
    )
    cell = ("ranking_change_rate", "iqm")
    se = [float(few[k].sel(statistic=cell[0], metric=cell[1])) for k in ("mc_se_lo", "mc_se_hi")]
    assert all(v > 0 for v in se)
    # the ends' Monte Carlo error shrinks with the outer replicates
    se_many = float(many["mc_se_lo"].sel(statistic=cell[0], metric=cell[1]))
    assert se_many < se[0]
    est = Estimate.from_cell(few.sel(statistic=cell[0], metric=cell[1]))
    assert est.mc_se == (pytest.approx(se[0]), pytest.approx(se[1]))
    # a rate that is 0 in every replicate (A always wins): its ends are 0 under any seed,
    # with no Monte Carlo error (the report widens that [0, 0] to a Wilson interval)
    winner = few.sel(statistic="winner_change_rate", metric="iqm")
    assert float(winner["lo"]) == float(winner["hi"]) == 0.0
    assert float(winner["mc_se_hi"]) == 0.0
    # the ends are the Harrell-Davis quantiles of the outer rates, inside their range
    assert float(few["lo"].sel(statistic=cell[0], metric=cell[1])) < float(
        few["hi"].sel(statistic=cell[0], metric=cell[1])
    )


def test_smooth_quantiles_on_a_grid_match_their_spread_over_seeds_where_order_statistics_jump():
    # rates on a grid of 1/100 (each replicate counts 100 draws), as few-run flip rates are
    ends, errors, order_ends, order_errors = [], [], [], []
    for s in range(100):
        r = np.random.default_rng(s)
        draws = r.binomial(100, r.beta(3, 7, size=2000)) / 100
        (end,), (se,) = smooth_quantiles(draws, (0.025,))
        ends.append(end)
        errors.append(se)
        order_ends.append(np.quantile(draws, 0.025))
        order_errors.append(quantile_mc_se(draws, 0.025))
    # the jackknife error is the right size for the Harrell-Davis end (about 1.1x here)
    assert 0.8 < np.mean(errors) / np.std(ends) < 1.4
    # which moves less between seeds than the order statistic, and off the grid
    assert np.std(ends) < 0.9 * np.std(order_ends)
    assert np.mean(np.abs(np.array(ends) * 100 - np.round(np.array(ends) * 100)) > 0.05) > 0.5
    # the order statistic's own error reads 0 in some seeds (inside a run of ties)
    assert min(order_errors) == 0.0
    nan_ends, nan_se = smooth_quantiles([1.0, np.nan], (0.5,))
    assert np.isnan(nan_ends).all() and np.isnan(nan_se).all()
