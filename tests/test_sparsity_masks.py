"""Recorded activation masks: shapes, packing, ReLU zeros, the metric's ratio, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scalinglab.models.transformer import Transformer, TransformerConfig
from scalinglab.studies.sparsity import masks as sm


def _model(*, bias: bool = False) -> Transformer:
    cfg = TransformerConfig(
        vocab_size=259,
        d_model=16,
        n_layer=2,
        n_head=2,
        max_seq_len=16,
        ffn="gated",
        activation="relu",
        norm="rmsnorm",
        pos="rotary",
        tie_embeddings=True,
        bias=bias,
    )
    return Transformer(cfg, seed=0)


def _windows(n: int = 4, t: int = 8, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, 259, (n, t + 1), generator=g)


def _micro(**kw) -> sm.MaskConfig:
    """Smaller than tiny: 24 steps of 8 x 32 tokens, 256 held-out tokens."""
    return sm.mask_config("tiny", **{"tokens": 6144, "eval_tokens": 256, **kw})


def test_pack_round_trips_widths_that_are_not_a_multiple_of_8():
    rng = np.random.default_rng(0)
    m = rng.random((3, 5, 21)) < 0.3
    packed = sm.pack(m)
    assert packed.shape == (3, 5, 3) and packed.dtype == np.uint8
    assert np.array_equal(sm.unpack(packed, 21), m)


def test_record_masks_shapes_and_ratios():
    model, win = _model(), _windows()
    rec = sm.record_masks(model, win, p=1.0)
    f = model.cfg.ffn_width
    assert rec.packed.shape == (2, 2, 4, 8, -(-f // 8)) and rec.d_ff == f
    bits = sm.unpack(rec.packed, f)
    # the nonzero masks are the dense hiddens' nonzeros, token by token
    hid = model.ffn_hiddens(win[:, :-1])
    for layer in range(2):
        assert np.array_equal(bits[0, layer], (hid[layer] != 0).numpy())
    # the masks' means are the metric's per-layer ratios; cett keeps fewer than nonzero
    assert np.allclose(bits.mean(axis=(2, 3, 4)), rec.layer_ratio)
    assert np.all(np.isfinite(rec.thresholds))
    assert rec.sparse_loss <= rec.loss + np.log1p(0.01) + 1e-9  # within the PPL-1% budget
    # layer 0 sees the same input in both passes: a unit off under ReLU is off under CETT
    assert (bits[1, 0] <= bits[0, 0]).all()


def test_a_unit_with_a_forced_negative_preactivation_is_recorded_off():
    model = _model(bias=True)
    gate = model.blocks[1].ffn.gate
    with torch.no_grad():
        gate.weight[3].zero_()
        gate.bias[3] = -1.0  # pre-activation -1 for every token: ReLU gives 0
        gate.weight[5].zero_()
        gate.bias[5] = 50.0  # always positive: on unless its up projection is exactly 0
    bits = sm.unpack(sm.record_masks(model, _windows()).packed, model.cfg.ffn_width)
    assert not bits[:, 1, :, :, 3].any()
    assert bits[0, 1, :, :, 5].all()


def test_recording_is_deterministic_by_seed():
    cfg = _micro()
    a, b = sm.train_and_record(cfg, 0), sm.train_and_record(cfg, 0)
    c = sm.train_and_record(cfg, 1)
    assert np.array_equal(a.packed, b.packed) and np.array_equal(a.thresholds, b.thresholds)
    assert not np.array_equal(a.packed, c.packed)
    assert a.packed.shape[:4] == (2, 2, 8, 32)  # kinds, layers, 256 / 32 windows, positions


def test_mask_config_checks():
    with pytest.raises(ValueError, match="one model"):
        sm.MaskConfig(sm.sweep_config("tiny"))
    with pytest.raises(ValueError, match="kinds"):
        sm.MaskConfig(_micro().sweep, kinds=("topk",))
    with pytest.raises(ValueError, match="compute_class"):
        sm.mask_config("huge")
    assert sm.mask_config("medium") == sm.mask_config("small")


def test_run_masks_is_cached_with_provenance(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    cfg = _micro(seeds=(0, 1))
    ds = sm.run_masks(cfg, scheduler="sync", progress=False)
    assert list(tmp_path.glob("data/**/sparsity_laws/masks-tiny-*.nc"))
    assert ds["masks"].dims == ("seed", "kind", "layer", "window", "position", "unit_byte")
    assert list(ds["seed"].values) == [0, 1] and ds.attrs["config_hash"]
    assert "git_commit" in ds.attrs and "nonzero" in ds.attrs["what"]
    act = sm.unpack_masks(ds)
    assert act.dims[-1] == "unit" and act.sizes["unit"] == ds.attrs["d_ff"]
    assert np.allclose(act.mean(["window", "position", "unit"]), ds["layer_ratio"])

    def boom(*a, **k):
        raise AssertionError("trained again")

    monkeypatch.setattr(sm, "train_and_record", boom)
    again = sm.run_masks(cfg, scheduler="sync", progress=False)
    assert np.array_equal(again["masks"].values, ds["masks"].values)
