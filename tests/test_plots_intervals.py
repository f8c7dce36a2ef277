"""Figure helpers of the interval-estimates study, on tiny hand-made inputs."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure

from scalinglab.plots import intervals as P

ALGS = ["a", "b", "c"]
METRICS = ["iqm", "median", "mean", "optimality_gap"]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _point_lo_hi(dims, coords, rng):
    shape = tuple(len(coords[d]) for d in dims)
    point = rng.uniform(0.3, 0.7, size=shape)
    return xr.Dataset(
        {"point": (dims, point), "lo": (dims, point - 0.1), "hi": (dims, point + 0.1)},
        coords=coords,
    )


def test_score_heatmap_annotates_every_cell():
    scores = xr.DataArray(
        np.random.default_rng(0).uniform(size=(3, 4, 5)),
        dims=("algorithm", "run", "task"),
        coords={"algorithm": ALGS, "task": list("vwxyz")},
    )
    fig = P.plot_score_heatmap(scores)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2  # heatmap + colorbar
    ax = fig.axes[0]
    assert len(ax.texts) == 3 * 5
    mean = scores.mean("run").sel(algorithm="b", task="x")
    assert f"{float(mean):.2f}" in [t.get_text() for t in ax.texts]


def test_few_run_spread_has_a_panel_per_metric_and_rank_bars():
    rng = np.random.default_rng(1)
    est = xr.DataArray(
        rng.normal(size=(50, 3, 2)) + np.array([0, 1, 2])[None, :, None],
        dims=("draw", "algorithm", "metric"),
        coords={"algorithm": ALGS, "metric": ["iqm", "mean"]},
        attrs={"n_runs": 3},
    )
    full = est.mean("draw")
    fig = P.plot_few_run_spread(est, full)
    assert len(fig.axes) == 3
    assert len([c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]) == 3
    rank_ax = fig.axes[-1]
    bars = rank_ax.patches
    assert len(bars) == 3 * 3  # one stacked segment per (algorithm, rank)
    widths = np.array([b.get_width() for b in bars]).reshape(3, 3)  # (rank, algorithm)
    np.testing.assert_allclose(widths.sum(axis=0), 1.0)  # each algorithm's ranks sum to 1
    assert "3 runs" in fig._suptitle.get_text()


def test_interval_estimates_one_panel_per_metric_one_bar_per_algorithm():
    ds = _point_lo_hi(
        ("algorithm", "metric"), {"algorithm": ALGS, "metric": METRICS}, np.random.default_rng(2)
    )
    ds.attrs["level"] = 0.95
    fig = P.plot_interval_estimates(ds)
    assert len(fig.axes) == 4
    for ax, m in zip(fig.axes, METRICS, strict=True):
        assert len(ax.patches) == 3
        assert len([c for c in ax.collections if isinstance(c, LineCollection)]) == 3
        bar = ax.patches[1]  # algorithm "b"
        assert bar.get_x() == pytest.approx(float(ds["lo"].sel(algorithm="b", metric=m)))
        assert bar.get_width() == pytest.approx(0.2)


def test_ci_width_vs_runs_lines():
    rng = np.random.default_rng(3)
    n = [3, 5, 10]
    width = xr.DataArray(
        rng.uniform(0.1, 0.2, size=(3, 3, 2)),
        dims=("n_runs", "algorithm", "metric"),
        coords={"n_runs": n, "algorithm": ALGS, "metric": ["iqm", "median"]},
    )
    fig = P.plot_ci_width_vs_runs(xr.Dataset({"width": width}))
    left, right = fig.axes
    assert len(left.lines) == 2 * (3 + 1)  # per metric: 3 algorithms + their mean
    assert len(right.lines) == 1 + 1  # median/iqm ratio + the 1.0 reference line
    expected = (width.sel(metric="median") / width.sel(metric="iqm")).mean("algorithm")
    np.testing.assert_allclose(right.lines[0].get_ydata(), expected.values)


def test_performance_profiles_lines_and_bands():
    rng = np.random.default_rng(4)
    taus = np.linspace(0, 1, 11)
    profs = []
    for kind in ("score", "average"):
        ds = _point_lo_hi(("algorithm", "tau"), {"algorithm": ALGS, "tau": taus}, rng)
        ds.attrs["kind"] = kind
        profs.append(ds)
    fig = P.plot_performance_profiles(profs)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert len(ax.lines) == 3
        assert len(ax.collections) == 3  # one band per algorithm
    assert "average" in fig.axes[1].get_title()


def test_probability_of_improvement_bars():
    ds = xr.Dataset(
        {"point": ("pair", [0.9, 0.5]), "lo": ("pair", [0.8, 0.4]), "hi": ("pair", [0.95, 0.6])},
        coords={"pair": ["a:b", "a:c"]},
    )
    fig = P.plot_probability_of_improvement(ds)
    (ax,) = fig.axes
    assert len(ax.patches) == 2
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a > b", "a > c"]
    assert any(np.allclose(line.get_xdata(), 0.5) for line in ax.lines)  # no-difference line


def test_bootstrap_forest_one_panel_per_metric_one_row_per_algorithm():
    g = np.random.default_rng(3)
    reps = xr.DataArray(
        g.normal(
            loc=[[[0.2, 0.5, 0.8, 0.3]], [[0.4, 0.1, 0.6, 0.5]], [[0.7, 0.3, 0.2, 0.1]]],
            scale=0.05,
            size=(3, 400, 4),
        ),
        dims=("algorithm", "replicate", "metric"),
        coords={"algorithm": ALGS, "metric": METRICS},
    )
    fig = P.plot_bootstrap_forest(reps, level=0.9)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == len(METRICS)
    assert [ax.get_title() for ax in fig.axes] == [P.METRIC_LABELS[m] for m in METRICS]
    # each panel: a row per algorithm, its dot at its replicates' median, its
    # interval (a segment) around it
    for k, ax in enumerate(fig.axes):
        if k == 0:
            assert sorted(t.get_text() for t in ax.get_yticklabels()) == ALGS
        dots = sorted(float(line.get_xdata()[0]) for line in ax.get_lines())
        want = sorted(np.median(reps.values[:, :, k], axis=1))
        np.testing.assert_allclose(dots, want, rtol=1e-12)
        segments = [seg for c in ax.collections for seg in getattr(c, "get_segments", list)()]
        assert len(segments) >= len(ALGS)
    assert "HDI" in fig.get_supxlabel()


def test_sample_efficiency_curve_has_one_line_and_band_per_algorithm():
    steps = np.arange(5)
    point = np.stack([steps * 0.1, steps * 0.2])[:, None, :]  # (algorithm, metric, step)
    ds = xr.Dataset(
        {
            "point": (("algorithm", "metric", "step"), point),
            "lo": (("algorithm", "metric", "step"), point - 0.05),
            "hi": (("algorithm", "metric", "step"), point + 0.05),
        },
        coords={"algorithm": ["a", "b"], "metric": ["iqm"], "step": steps},
    )
    fig = P.plot_sample_efficiency(ds)
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), steps * 0.2)
    assert len(ax.collections) == 2 and list(ax.get_xticks()) == list(steps)
    plt.close(fig)


def test_large_heatmap_drops_cell_numbers_and_clips_outliers():
    rng = np.random.default_rng(0)
    vals = rng.uniform(0, 2, size=(6, 3, 55))
    vals[0, :, 0] = 80.0  # one outlier game
    s = xr.DataArray(
        vals,
        dims=("algorithm", "run", "task"),
        coords={"algorithm": [f"a{i}" for i in range(6)], "task": [f"g{i}" for i in range(55)]},
    )
    fig = P.plot_score_heatmap(s)
    ax = fig.axes[0]
    assert not ax.texts  # 330 cells: no numbers
    assert ax.images[0].get_clim()[1] < 5.0  # the outlier does not set the scale
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert len(labels) == len(set(labels)) == 55
    plt.close(fig)
    small = P.plot_score_heatmap(s.isel(task=slice(0, 5)))
    assert len(small.axes[0].texts) == 30
    plt.close(small)


def test_width_vs_runs_axis_labels_each_count_once_and_curves_stop_at_own_counts():
    n = np.array([3, 5, 10, 15, 16, 30, 100])
    width = np.full((len(n), 2, 2), np.nan)
    width[:, 0] = (1 / np.sqrt(n))[:, None]  # 100 runs
    width[:4, 1] = (1.2 / np.sqrt(n[:4]))[:, None]  # 15 runs: NaN beyond
    da = xr.DataArray(
        width, dims=("n_runs", "algorithm", "metric"),
        coords={"n_runs": n, "algorithm": ["a", "b"], "metric": ["iqm", "median"]},
    )
    fig = P.plot_ci_width_vs_runs(xr.Dataset({"width": da}))
    for ax in fig.axes[:2]:
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert len(labels) == len(set(labels)) and "3" in labels and "100" in labels
        assert not ("15" in labels and "16" in labels)  # neighbours on a log axis
    plt.close(fig)
