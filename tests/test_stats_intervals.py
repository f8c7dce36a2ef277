"""interval_estimates: reproducibility, invariances, dim validation, coverage."""

import numpy as np
import pytest
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats import metrics as M
from scalinglab.stats.intervals import interval_estimates

ALL = ["iqm", "median", "mean", "optimality_gap"]


def make_scores(seed=0, algorithms=("A", "B", "C"), runs=6, tasks=5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(len(algorithms), runs, tasks)) + np.arange(len(algorithms))[:, None, None]
    return xr.DataArray(
        x,
        dims=("algorithm", "run", "task"),
        coords={"algorithm": list(algorithms), "task": [f"t{i}" for i in range(tasks)]},
    )


def run(scores, seed=1, **kw):
    kw.setdefault("reps", 2000)
    return interval_estimates(scores, rng=np.random.default_rng(seed), **kw)


def test_output_layout_and_point_estimates():
    s = make_scores()
    ds = run(s)
    assert ds.point.dims == ("algorithm", "metric")
    assert list(ds.metric.values) == ALL
    assert list(ds.algorithm.values) == ["A", "B", "C"]
    assert ds.attrs["reps"] == 2000 and ds.attrs["level"] == 0.95
    assert ds.attrs["method"] == "stratified bootstrap, percentile"
    for alg in "ABC":
        x = s.sel(algorithm=alg).values
        for m in ALL:
            assert ds.point.sel(algorithm=alg, metric=m) == pytest.approx(M.AGGREGATES[m](x))
    assert (ds.lo <= ds.point).all() and (ds.point <= ds.hi).all()


def test_same_seed_same_interval_different_seed_different():
    s = make_scores()
    a, b, c = run(s, seed=3), run(s, seed=3), run(s, seed=4)
    xr.testing.assert_identical(a, b)
    assert not np.array_equal(a.lo.values, c.lo.values)


def test_result_does_not_depend_on_order_subset_metrics_batch_or_dim_order():
    s = make_scores()
    full = run(s)
    reversed_ = run(s.isel(algorithm=[2, 1, 0]))
    xr.testing.assert_identical(full, reversed_.sel(algorithm=["A", "B", "C"]))
    only_b = run(s.sel(algorithm=["B"]), metrics=("iqm",))
    assert only_b.lo.sel(algorithm="B", metric="iqm") == full.lo.sel(algorithm="B", metric="iqm")
    batched = run(s, batch_size=33)
    xr.testing.assert_identical(full, batched)
    transposed = run(s.transpose("task", "algorithm", "run"))
    xr.testing.assert_identical(full, transposed)


def test_wrong_dims_are_refused_clearly():
    s = make_scores()
    with pytest.raises(InputError, match=r"unexpected dim\(s\) \['seed'\].*'run'"):
        run(s.rename(run="seed"))
    with pytest.raises(InputError, match=r"missing \['algorithm'\]"):
        run(s.isel(algorithm=0))
    with pytest.raises(InputError, match="must be an xarray.DataArray"):
        run(s.values)
    with pytest.raises(InputError, match="unknown metric"):
        run(s, metrics=("iqr",))
    with pytest.raises(InputError, match="unknown interval method"):
        run(s, method="studentized")


def test_single_run_warns_about_swapped_axes():
    s = make_scores(runs=1)
    with pytest.warns(UserWarning, match="single run per task"):
        ds = run(s, metrics=("mean",))
    assert (ds.hi == ds.lo).all()


def test_task_without_runs_names_algorithm_and_task():
    s = make_scores().copy()
    s.loc[{"algorithm": "B", "task": "t3"}] = np.nan
    with pytest.raises(InputError, match="algorithm 'B', task 't3'"):
        run(s)


def test_ragged_runs_supported():
    s = make_scores(runs=8).copy()
    s.loc[{"algorithm": "A", "task": "t1", "run": [5, 6, 7]}] = np.nan
    ds = run(s)
    x = s.sel(algorithm="A").values
    assert ds.point.sel(algorithm="A", metric="iqm") == pytest.approx(M.iqm(x))
    assert np.isfinite(ds.lo.values).all()


def test_task_bootstrap_widens_intervals_when_tasks_differ():
    s = make_scores(runs=10, tasks=6) + xr.DataArray(np.arange(6) * 3.0, dims="task")
    narrow = run(s, metrics=("mean",))
    wide = run(s, metrics=("mean",), task_bootstrap=True)
    assert ((wide.hi - wide.lo) > 2 * (narrow.hi - narrow.lo)).all()


def test_bca_and_step_dim():
    s = make_scores()
    ds = run(s, method="bca")
    assert ds.attrs["method"] == "stratified bootstrap, bca"
    assert (ds.lo < ds.point).all() and (ds.point < ds.hi).all()
    stepped = xr.concat([s, s + 1.0], dim=xr.DataArray([10, 20], dims="step", name="step"))
    out = run(stepped, metrics=("mean",))
    assert out.point.dims == ("algorithm", "metric", "step")
    diff = out.point.sel(step=20) - out.point.sel(step=10)
    np.testing.assert_allclose(diff.values, 1.0)


@pytest.mark.slow
def test_percentile_ci_of_the_mean_covers_the_truth():
    # 200 simulated benchmarks (one per "algorithm"), 5 tasks x 12 runs, skewed noise.
    # True mean of task means is known; the 95% CI should cover it ~95% of the time.
    rng = np.random.default_rng(2024)
    n_sets, runs, tasks = 200, 12, 5
    task_means = np.linspace(0.0, 2.0, tasks)
    noise = rng.gamma(2.0, 1.0, size=(n_sets, runs, tasks)) - 2.0  # mean 0, skewed
    s = xr.DataArray(
        task_means + noise,
        dims=("algorithm", "run", "task"),
        coords={"algorithm": [f"sim{i}" for i in range(n_sets)]},
    )
    truth = task_means.mean()
    ds = interval_estimates(s, metrics=("mean",), reps=400, rng=np.random.default_rng(0))
    covered = ((ds.lo <= truth) & (truth <= ds.hi)).mean().item()
    assert 0.88 <= covered <= 0.99
    bca = interval_estimates(
        s, metrics=("mean",), reps=400, rng=np.random.default_rng(0), method="bca"
    )
    covered_bca = ((bca.lo <= truth) & (truth <= bca.hi)).mean().item()
    assert 0.88 <= covered_bca <= 0.99


def test_progress_bar_goes_to_stderr(capsys):
    run(make_scores(), metrics=("iqm",), reps=500, batch_size=100, progress=True)
    err = capsys.readouterr().err
    assert "bootstrap:" in err and "/1.50k" in err  # a bar over 3 algorithms x 500 replicates
    run(make_scores(), metrics=("iqm",), reps=500, batch_size=100)  # short job: no bar
    assert capsys.readouterr().err == ""


def test_task_bootstrap_does_not_depend_on_batch_size():
    s = make_scores()
    whole = run(s, task_bootstrap=True)
    batched = run(s, task_bootstrap=True, batch_size=33)
    xr.testing.assert_identical(whole, batched)
    assert not np.array_equal(whole.lo.values, run(s).lo.values), "tasks must be resampled"


def test_basic_and_bc_methods_through_interval_estimates():
    s = make_scores(5, algorithms=("A", "B"), runs=12)
    s = np.exp(s)  # right-skewed scores
    out = {
        m: interval_estimates(
            s, metrics=("mean",), reps=500, rng=np.random.default_rng(0), method=m
        )
        for m in ("percentile", "basic", "bc")
    }
    pct, basic = out["percentile"], out["basic"]
    np.testing.assert_allclose(basic["point"], pct["point"])
    # same replicates: basic = 2 point - the percentile interval's opposite end
    np.testing.assert_allclose(basic["lo"], 2 * pct["point"] - pct["hi"])
    np.testing.assert_allclose(basic["hi"], 2 * pct["point"] - pct["lo"])
    assert out["bc"].attrs["method"] == "stratified bootstrap, bc"
    assert not np.allclose(out["bc"]["lo"], pct["lo"])


def test_wide_table_has_flat_readable_headers():
    from scalinglab.stats.layout import wide_table

    ds = run(make_scores(), reps=100)
    table = wide_table(ds)
    assert list(table.columns[:3]) == ["iqm point", "iqm lo", "iqm hi"]
    assert not any(isinstance(c, tuple) for c in table.columns)
    assert table.loc["B", "mean point"] == pytest.approx(
        round(float(ds["point"].sel(algorithm="B", metric="mean")), 3)
    )
