"""Roofline formulas and the hardware record."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scalinglab.cost_model import (
    HardwareRecord,
    arithmetic_intensity,
    attainable_flop_per_s,
    bound,
    fraction_of_roofline,
    named_device,
    ridge_point,
    roofline_seconds,
)
from scalinglab.cost_model.hardware import load_hardware, save_hardware

TOY = HardwareRecord("toy", peak_flop_per_s=100.0, mem_bytes_per_s=10.0)


def test_roofline_seconds_takes_the_binding_roof():
    assert roofline_seconds(1000, 10, TOY) == max(1000 / 100, 10 / 10) == 10.0
    assert roofline_seconds(10, 1000, TOY) == max(10 / 100, 1000 / 10) == 100.0
    np.testing.assert_allclose(
        roofline_seconds(np.array([1000, 10]), np.array([10, 1000]), TOY), [10.0, 100.0]
    )


def test_ridge_and_attainable():
    assert ridge_point(TOY) == 100 / 10
    assert attainable_flop_per_s(5, TOY) == 5 * 10  # memory roof below the ridge
    assert attainable_flop_per_s(20, TOY) == 100  # flat above it
    assert arithmetic_intensity(50, 10) == 5
    assert bound(1000, 10, TOY) == "compute"
    assert bound(10, 1000, TOY) == "memory"
    assert fraction_of_roofline(20.0, 1000, 10, TOY) == pytest.approx(10 / 20)


def test_named_device_published_figures():
    h100 = named_device("H100 SXM")
    assert h100.peak_flop_per_s == 989.4e12 and h100.mem_bytes_per_s == 3.35e12
    assert h100.ridge_flop_per_byte == pytest.approx(989.4e12 / 3.35e12)
    assert named_device("H100 SXM", dtype="float32").peak_flop_per_s == 67e12
    with pytest.raises(KeyError, match="known"):
        named_device("TPU v9")
    with pytest.raises(KeyError, match="no published peak"):
        named_device("RTX 4090", dtype="fp8")


def test_record_rejects_nonpositive_roofs():
    with pytest.raises(ValueError, match="peak_flop_per_s"):
        HardwareRecord("x", peak_flop_per_s=0.0, mem_bytes_per_s=1.0)


def test_record_json_roundtrip(tmp_path):
    rec = HardwareRecord(
        "m",
        1e11,
        2e10,
        source="measured",
        blas_flop_per_s=8e10,
        fma_flop_per_s=1e11,
        n_cores=2,
        provenance={"a": [1, 2]},
    )
    path = save_hardware(rec, tmp_path / "m.json")
    assert load_hardware(path) == rec
    assert json.loads(path.read_text())["blas_flop_per_s"] == 8e10
    assert rec.blas_fraction_of_peak == pytest.approx(0.8)
