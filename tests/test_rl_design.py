"""The v3 design's minimum detectable effects: the power they promise is the power they have."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scalinglab.studies.rl.ablations import design_mde, design_mdes
from scalinglab.studies.rl.config import sweep_config


def test_an_effect_of_one_mde_is_detected_with_the_promised_power():
    rng = np.random.default_rng(0)
    n, rl_sd = 8, 0.02
    mde = design_mde(rl_sd, n)
    diffs = rng.normal(mde, math.sqrt(2) * rl_sd, size=(20000, n))
    p = stats.ttest_1samp(diffs, 0.0, axis=1).pvalue
    assert np.mean(p < 0.05) == pytest.approx(0.8, abs=0.015)
    # and no effect is "detected" at the test's level
    null = stats.ttest_1samp(rng.normal(0, 1, size=(20000, n)), 0.0, axis=1).pvalue
    assert np.mean(null < 0.05) == pytest.approx(0.05, abs=0.01)


def test_mde_shrinks_with_pairs_and_grows_with_noise():
    assert design_mde(0.02, 16) < design_mde(0.02, 8) < design_mde(0.02, 4)
    assert design_mde(0.05, 8) == pytest.approx(2.5 * design_mde(0.02, 8))
    assert design_mde(0.02, 8, paired_sd=0.02) == pytest.approx(design_mde(0.02, 8) / math.sqrt(2))
    assert design_mde(0.02, 1) == math.inf
    with pytest.raises(ValueError, match=">= 0"):
        design_mde(-0.1, 8)


def test_design_mdes_counts_the_pairs_each_ablation_has():
    v3 = sweep_config("v3")
    t = design_mdes(v3, {"scalerl": 0.02})
    assert set(t["variant"]) == {"half_lr", "len_cap", "batch_norm"}
    row = t.set_index("variant").loc
    assert row["half_lr", "n_pairs"] == 16 and row["len_cap", "n_pairs"] == 8
    assert row["len_cap", "mde"] > row["half_lr", "mde"]
