"""The sparse FFN on recorded masks: token groups, matched random masks, the timing data flow."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from scalinglab.cost_model import sparse_ffn_speedup
from scalinglab.cost_model.hardware import HardwareRecord
from scalinglab.studies.sparsity import mask_kernel as mk
from scalinglab.studies.sparsity import mask_speedups as msp

TOY = HardwareRecord("toy", peak_flop_per_s=1e12, mem_bytes_per_s=1e10)


def _structured(seed: int = 0, *, w: int = 12, t: int = 10, f: int = 40) -> xr.DataArray:
    """Masks (seed, kind, layer, window, position, unit): unit 0 always on, units 30+ dead,
    the rest on with probability 0.1."""
    rng = np.random.default_rng(seed)
    m = rng.random((1, 1, 2, w, t, f)) < 0.1
    m[..., 0] = True
    m[..., 30:] = False
    dims = ("seed", "kind", "layer", "window", "position", "unit")
    return xr.DataArray(m, dims=dims, coords={"seed": [0], "kind": ["cett"], "layer": [0, 1]})


def test_token_groups_take_distinct_windows_at_one_position():
    w, t, f = 6, 5, 3
    code = np.arange(w * t).reshape(w, t)  # unit 0 holds the window, unit 1 the position
    active = np.zeros((w, t, f), dtype=bool)
    rng = np.random.default_rng(0)
    groups = mk.token_groups(active, batch=4, groups=7, rng=rng)
    assert groups.shape == (7, 4, 3)
    # the same draw on an index array shows which tokens were taken
    idx = mk.token_groups(code[..., None], batch=4, groups=7, rng=np.random.default_rng(0))[..., 0]
    win, pos = idx // t, idx % t
    assert all(len(set(r)) == 4 for r in win)  # distinct windows
    assert (pos == pos[:, :1]).all()  # one position per group
    with pytest.raises(ValueError, match="batch"):
        mk.token_groups(active, batch=7, groups=1, rng=rng)


def test_matched_random_keeps_each_tokens_count_and_spreads_the_units():
    rng = np.random.default_rng(1)
    real = np.zeros((50, 8, 40), dtype=bool)
    real[..., :4] = True  # every token the same 4 units: union of a group = 4 units
    rand = mk.matched_random(real, rng)
    assert np.array_equal(rand.sum(-1), real.sum(-1))
    assert mk.union_fraction(real).max() == pytest.approx(0.1)
    assert mk.union_fraction(rand).mean() > 0.4  # near 1 - (1 - 0.1)^8 = 0.57
    assert rand[..., 4:].any()


def test_mask_structure_sees_hot_and_dead_units_and_the_smaller_union():
    st = mk.mask_structure(_structured(), batches=(1, 4), groups=64, seed=0)
    assert len(st) == 2 and set(st["layer"]) == {0, 1}
    row = st.iloc[0]
    assert row["dead"] == pytest.approx(10 / 40)
    assert row["hot"] == pytest.approx(1 / 40)
    assert row["union_real_1"] == pytest.approx(row["union_random_1"])  # one token: its count
    assert row["union_real_4"] < row["union_random_4"]
    assert row["union_random_4"] == pytest.approx(row["union_formula_4"], abs=0.05)


def test_mask_cases_pair_real_and_random_at_the_same_ratio():
    labels, masks = mk.mask_cases(_structured(), batches=(1, 3), groups=5, seed=0)
    assert len(labels) == len(masks) == 2 * 2 * 2  # layers x batches x sources
    for real, rand, lr, lq in zip(masks[::2], masks[1::2], labels[::2], labels[1::2], strict=True):
        assert lr["source"] == "real" and lq["source"] == "random"
        assert real.shape == rand.shape == (5, lr["batch"], 40)
        assert lr["ratio"] == pytest.approx(lq["ratio"])
        assert np.array_equal(real.sum(-1), rand.sum(-1))
    again = mk.mask_cases(_structured(), batches=(1, 3), groups=5, seed=0)[1]
    assert all(np.array_equal(a, b) for a, b in zip(masks, again, strict=True))


def test_benchmark_masks_times_every_case_and_impl():
    labels, masks = mk.mask_cases(_structured(), batches=(1, 2), groups=3, seed=0)
    ds = mk.benchmark_masks(labels, masks, d_model=8, flush_bytes=0, seed=0)
    assert ds["seconds"].shape == (3, len(labels), 3)  # impls, cases, groups
    assert list(ds["impl"].values) == list(mk.IMPLS)
    assert list(ds["source"].values) == [lab["source"] for lab in labels]
    assert np.all(ds["seconds"].values > 0) and ds.attrs["d_ff"] == 40
    one = mk.benchmark_masks(labels[:2], masks[:2], d_model=8, impls=("sparse_numba",))
    assert list(one["impl"].values) == ["dense", "sparse_numba"]
    with pytest.raises(ValueError, match="impls"):
        mk.benchmark_masks(labels, masks, d_model=8, impls=("dense",))


def _fake_bench(dense: list[list[float]], sparse: dict[str, list[list[float]]]) -> xr.Dataset:
    """A timed dataset: 2 cases (real, random; batch 1, cett), P processes of medians."""
    n_p = len(dense)
    impls = ["dense", *sparse]
    med = np.array([[dense[p], *[sparse[i][p] for i in sparse]] for p in range(n_p)])
    return xr.Dataset(
        {
            "median_s": (("process", "impl", "case"), med),
            "load_before": (("process", "impl", "case"), np.zeros_like(med)),
        },
        coords={
            "process": np.arange(n_p),
            "impl": impls,
            "kind": ("case", ["cett", "cett"]),
            "batch": ("case", [1, 1]),
            "source": ("case", ["real", "random"]),
            "ratio": ("case", [0.1, 0.1]),
            "union_ratio": ("case", [0.1, 0.1]),
        },
        attrs={"d_model": 256, "d_ff": 688},
    )


def test_speedups_are_sums_over_cases_with_the_cost_models_prediction():
    bench = _fake_bench(
        dense=[[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]],
        sparse={"sparse_numba": [[0.2, 0.25], [0.25, 0.5], [0.1, 0.2]]},
    )
    pp = msp.per_process_speedups(bench, TOY)
    assert len(pp) == 3 * 2
    real = pp[pp["source"] == "real"].sort_values("process")
    assert np.allclose(real["speedup"], [5.0, 4.0, 10.0])
    ideal = float(sparse_ffn_speedup(256, 688, activation_ratio=0.1, hw=TOY, n_matrices=3))
    assert real["predicted"].iloc[0] == pytest.approx(ideal)
    assert real["predicted_union"].iloc[0] == pytest.approx(ideal)  # batch 1: union = ratio
    out = msp.summarize(pp, reps=300, seed=0).set_index("source")
    assert out.loc["real", "speedup"] == 5.0 and out.loc["random", "speedup"] == 4.0
    assert out.loc["real", "speedup_lo"] <= 5.0 <= out.loc["real", "speedup_hi"]
    assert out.loc["real", "fraction_of_predicted"] == pytest.approx(5.0 / ideal)
    ratio = msp.real_over_random(pp, reps=300, seed=0)
    assert len(ratio) == 1
    assert ratio["real_over_random"].iloc[0] == pytest.approx(np.median([1.25, 2.0, 2.0]))
