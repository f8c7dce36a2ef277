"""The matched design's analyses: relative size slope, width-depth per parameter count."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalinglab.studies.sparsity import matched as sm
from scalinglab.studies.sparsity.config import MATCHED_TOKENS_PER_PARAM, matched_configs


def _finals(levels: dict[str, tuple[float, float]], *, seeds: int = 4, noise: float = 0.0):
    """One row per (model, seed): model -> (n_params, mean ratio), seed noise +-noise."""
    rows = []
    for model, (n, level) in levels.items():
        for s in range(seeds):
            rows.append(
                {
                    "model": model,
                    "seed": s,
                    "n_params": n,
                    "activation_ratio": level + noise * (-1) ** s,
                }
            )
    return pd.DataFrame(rows)


def test_relative_scale_slope_is_the_slope_over_the_mean_level():
    # levels 0.10, 0.12, 0.14 at 1e4, 1e5, 1e6 parameters: slope 0.02 per decade,
    # mean level 0.12, so relative slope 1/6 exactly.
    fin = _finals({"s": (1e4, 0.10), "m": (1e5, 0.12), "l": (1e6, 0.14)})
    abs_est = sm.scale_slope(fin)
    rel_est = sm.scale_slope(fin, relative=True)
    assert abs_est.point == pytest.approx(0.02)
    assert rel_est.point == pytest.approx(0.02 / 0.12)
    # no seed noise: no interval (a zero-width one would not cover), and the note says why
    assert rel_est.ci is None and abs_est.ci is None and "no spread" in abs_est.note


def test_relative_scale_slope_interval_widens_with_seed_noise_and_covers_the_truth():
    fin = _finals({"s": (1e4, 0.10), "m": (1e5, 0.12), "l": (1e6, 0.14)}, noise=0.01)
    est = sm.scale_slope(fin, relative=True)
    pt, (lo, hi) = est.point, est.ci
    assert lo < pt < hi
    assert hi - lo > 0.02
    assert lo < 0.02 / 0.12 < hi


def test_scale_slope_needs_two_sizes():
    with pytest.raises(ValueError, match="at least 2 models"):
        sm.scale_slope(_finals({"s": (1e4, 0.1)}), relative=True)


def _curves(shapes, *, slope: float, seeds: int = 3, tpp: float = 20.0):
    """Curves (2 checkpoints) of width-depth shapes whose last ratio rises by ``slope``
    per decade of width/depth; the first checkpoint is noise that must be ignored."""
    rows = []
    for name, ratio, n in shapes:
        for act in ("relu", "silu"):
            for s in range(seeds):
                for ck, frac in ((0, 0.1), (1, 1.0)):
                    last = 0.2 + slope * np.log10(ratio) + 0.001 * s
                    rows.append(
                        {
                            "activation": act,
                            "model": name,
                            "seed": s,
                            "run": f"{name}/{act}/{s}",
                            "checkpoint": ck,
                            "tokens": frac * tpp * n,
                            "activation_ratio": last if ck else 0.9,
                            "loss": 2.0,
                            "n_params": n,
                            "width_depth_ratio": ratio,
                            "in_size_sweep": False,
                            "in_width_depth": True,
                            "tokens_per_param": frac * tpp,
                        }
                    )
    return pd.DataFrame(rows)


def test_width_depth_table_recovers_each_familys_slope_at_the_last_checkpoint():
    fam_a = _curves([("a1", 2.0, 25_000), ("a2", 8.0, 26_000), ("a3", 48.0, 27_000)], slope=0.05)
    fam_b = _curves([("b1", 3.5, 80_000), ("b2", 16.0, 79_000), ("b3", 80.0, 77_000)], slope=-0.03)
    tab = sm.width_depth_table({"25k": fam_a, "80k": fam_b})
    assert list(tab["family"]) == ["25k", "25k", "80k", "80k"]
    got = tab.set_index(["family", "activation"])
    assert got.loc[("25k", "relu"), "slope"] == pytest.approx(0.05)
    assert got.loc[("80k", "silu"), "slope"] == pytest.approx(-0.03)
    assert got.loc[("25k", "relu"), "n_shapes"] == 3
    assert got.loc[("80k", "relu"), "params_lo"] == 77_000
    assert got.loc[("25k", "relu"), "tokens_per_param"] == pytest.approx(20.0)
    est = got.loc[("25k", "relu"), "estimate"]
    assert est.point == pytest.approx(0.05) and est.method.startswith("Student t")


def test_matched_frame_refuses_an_empty_mapping():
    with pytest.raises(ValueError, match="no matched sweeps"):
        sm.matched_frame({})


def test_matched_configs_put_every_size_on_the_same_tokens_per_parameter():
    cfgs = matched_configs("small")
    sizes = {k: c for k, c in cfgs.items() if k.startswith("size-")}
    assert set(sizes) == {"size-s", "size-m", "size-l"}
    for c in sizes.values():
        (m,) = c.models
        tpp = c.steps * c.batch_size * c.seq_len / c.model_config(m, "relu").n_params()
        assert tpp == pytest.approx(MATCHED_TOKENS_PER_PARAM, rel=0.01)
        # the horizon corpus (13.5M training tokens) is larger than the largest run
        assert "stdlib_source" in c.corpus.sources
    wd = cfgs["wd25k"]
    ratios = sorted(m.d_model / m.n_layer for m in wd.models)
    assert len(ratios) >= 5 and ratios[-1] / ratios[0] >= 10
    params = [wd.model_config(m, "relu").n_params() for m in wd.models]
    assert max(params) / min(params) < 1.15
    assert len(wd.seeds) >= 5 and len(cfgs["size-s"].seeds) >= 5 and len(cfgs["size-l"].seeds) >= 3
    # distinct cache keys: no two designs share a compute class
    assert len({c.compute_class for c in cfgs.values()}) == len(cfgs)
