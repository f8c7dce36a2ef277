"""Losses that rise with more data: found, paired by seed, and given a cause."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from scalinglab.studies.optimizers.rising import CAUSES, diagnose, lr_grid, rising_losses


def _sweep(final: dict, train: dict | None = None, *, lr: float = 0.01) -> xr.Dataset:
    """A 1-size sweep over data multiples 1, 2, 4: ``final[opt]`` is (multiple, seed)."""
    opts = list(final)
    f = np.array([final[o] for o in opts])[:, None]  # (opt, size, mult, seed)
    t = np.array([(train or final)[o] for o in opts])[:, None]
    steps = np.stack([t + 0.5, t], -1)  # (opt, size, mult, seed, step): last = t
    return xr.Dataset(
        {
            "final_loss": (("optimizer", "model_size", "data_multiple", "seed"), f),
            "train_loss": (("optimizer", "model_size", "data_multiple", "seed", "step"), steps),
            "lr": (("optimizer", "model_size", "data_multiple"), np.full(f.shape[:3], lr)),
            "tuning_search": ("evaluation", ["a", "a", "a", "a"]),
            "tuning_coordinate": ("evaluation", ["", "lr", "lr", "lr"]),
            "tuning_value": ("evaluation", ["", "0.004", "0.01", "0.002"]),
        },
        coords={
            "optimizer": opts,
            "model_size": ["s"],
            "data_multiple": [1.0, 2.0, 4.0],
            "seed": [0, 1, 2],
            "step": [0, 1],
        },
    )


def test_only_cells_whose_mean_loss_rises_are_listed_with_paired_changes():
    ds = _sweep(
        {
            "a": [[3.0, 3.1, 3.2], [2.9, 3.0, 3.1], [2.8, 2.9, 3.0]],  # falls: not listed
            "b": [[3.0, 3.0, 3.0], [2.9, 2.9, 3.5], [2.8, 2.8, 2.8]],  # 1x->2x rises (one seed)
        }
    )
    t = rising_losses(ds, reps=300)
    assert list(zip(t["optimizer"], t["from_multiple"], t["to_multiple"], strict=True)) == [
        ("b", 1.0, 2.0)
    ]
    row = t.iloc[0]
    assert row["seed_deltas"] == pytest.approx((-0.1, -0.1, 0.5))
    assert row["delta"] == pytest.approx(0.1)
    assert row["delta_median"] == pytest.approx(-0.1)
    assert row["delta_lo"] <= row["delta"] <= row["delta_hi"]
    assert diagnose(t)["cause"].tolist() == ["one seed"]


def test_causes_follow_the_rules():
    # every seed rises a little with spread -> interval holds 0? no: all positive
    ds = _sweep(
        {
            "over": [[2.0, 2.0, 2.0], [2.1, 2.2, 2.3], [2.0, 2.0, 2.0]],
            "opt": [[2.0, 2.0, 2.0], [2.1, 2.2, 2.3], [2.0, 2.0, 2.0]],
            "noisy": [[2.0, 2.0, 2.0], [2.3, 2.1, 1.95], [2.0, 2.0, 2.0]],
        },
        train={
            "over": [[2.0, 2.0, 2.0], [1.8, 1.8, 1.8], [1.7, 1.7, 1.7]],  # train falls
            "opt": [[2.0, 2.0, 2.0], [2.2, 2.2, 2.2], [2.0, 2.0, 2.0]],  # train rises
            "noisy": [[2.0, 2.0, 2.0], [1.9, 1.9, 1.9], [1.8, 1.8, 1.8]],
        },
    )
    epochs = np.array([[0.5, 1.5, 3.0]])
    t = diagnose(rising_losses(ds, epochs=epochs, reps=2000))
    got = dict(zip(t["optimizer"], t["cause"], strict=True))
    assert got == {"over": "overfitting", "opt": "optimisation", "noisy": "seed noise"}
    assert set(got.values()) <= set(CAUSES)
    assert (t["epochs"] == 1.5).all()
    # without epochs, a falling training loss cannot be called overfitting
    t2 = diagnose(rising_losses(ds, reps=2000))
    assert dict(zip(t2["optimizer"], t2["cause"], strict=True))["over"] == "unexplained"


def test_learning_rate_on_the_edge_of_the_searched_grid_is_flagged():
    ds = _sweep({"a": [[2.0, 2.0, 2.0], [2.1, 2.2, 2.3], [2.0, 2.0, 2.0]]}, lr=0.01)
    assert lr_grid(ds, "a").tolist() == [0.002, 0.004, 0.01]
    assert bool(rising_losses(ds, reps=50)["lr_on_grid_edge"].iloc[0])
    ds2 = _sweep({"a": [[2.0, 2.0, 2.0], [2.1, 2.2, 2.3], [2.0, 2.0, 2.0]]}, lr=0.004)
    assert not bool(rising_losses(ds2, reps=50)["lr_on_grid_edge"].iloc[0])
