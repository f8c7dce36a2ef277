"""Measuring the hardware record: the micro-benchmarks run, and the cached record is reused."""

from __future__ import annotations

import pytest

from scalinglab.cost_model import HardwareRecord
from scalinglab.cost_model.hardware import hardware_path, save_hardware
from scalinglab.cost_model.hardware import load_hardware as load_hardware_json
from scalinglab.kernels import hardware_probe
from scalinglab.kernels.hardware_probe import hardware_record, measure_hardware


def test_hardware_record_uses_the_cached_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    rec = HardwareRecord("cached", 3e11, 4e10, source="measured")
    save_hardware(rec)
    assert hardware_path().parent == tmp_path / "data" / "hardware"
    assert hardware_record() == rec  # no measurement: the cached record comes back


def test_a_measurement_is_kept_out_of_the_studies_inputs(tmp_path, monkeypatch):
    # measuring this machine must not add a file to data/hardware/ (every study's input
    # glob): it is cached under the git-ignored data/.cache/hardware/ and reused from there
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    calls = []
    rec = HardwareRecord("measured-here", 2e11, 3e10, source="measured")
    monkeypatch.setattr(hardware_probe, "measure_hardware", lambda **kw: calls.append(kw) or rec)
    assert hardware_record() == rec
    assert not (tmp_path / "data" / "hardware").exists()
    assert hardware_probe.measured_path().parent == tmp_path / "data" / ".cache" / "hardware"
    assert hardware_probe.measured_path().exists()
    assert hardware_record() == rec and len(calls) == 1  # reused, not measured again
    committed = HardwareRecord("committed", 5e11, 6e10, source="measured")
    save_hardware(committed)  # a committed record of this machine wins over the cache
    assert hardware_record() == committed
    assert hardware_record(refresh=True) == rec and len(calls) == 2
    assert load_hardware_json(hardware_path()) == committed  # refresh left it alone


@pytest.mark.slow
def test_measure_hardware_quick_is_plausible(monkeypatch):
    # a busy machine: the record says so, and the user is warned
    monkeypatch.setattr(hardware_probe.os, "getloadavg", lambda: (3.0, 2.0, 1.0))
    with pytest.warns(RuntimeWarning, match="machine is busy"):
        rec = measure_hardware(quick=True)
    assert rec.provenance["load_before"] == [3.0, 2.0, 1.0]
    assert rec.source == "measured" and rec.dtype == "float32"
    assert rec.peak_flop_per_s == max(rec.fma_flop_per_s, rec.blas_flop_per_s)
    # the magnitude check reads the one-thread rate: the all-thread rate is a numba
    # parallel region, which another process on the same cores (the other test shard, a
    # sweep) can starve by orders of magnitude, as the busy-machine warning says
    one = rec.provenance["fma_one_thread_flop_per_s"]
    assert 1e9 < one < 1e14  # between 1 GFLOP/s and 100 TFLOP/s
    assert 0 < rec.fma_flop_per_s == rec.provenance["fma_all_threads_flop_per_s"] < 1e14
    assert 1e8 < rec.mem_bytes_per_s < 1e13
    assert rec.provenance["settings"]["passes"] == 200
