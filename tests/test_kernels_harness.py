"""The benchmark harness: statistics, cache flushing, the Dataset it returns; energy."""

from __future__ import annotations

import numpy as np
import pytest

from scalinglab.kernels import energy
from scalinglab.kernels.harness import (
    CacheFlusher,
    benchmark,
    default_flush_bytes,
    summarize,
    time_call,
)


def test_summarize_known_sequence():
    s = summarize(np.array([5.0, 1.0, 4.0, 2.0, 3.0]))
    # sorted 1..5: median 3; linear quartiles at positions 1 and 3 -> 2 and 4
    assert (s["median_s"], s["q25_s"], s["q75_s"], s["iqr_s"]) == (3.0, 2.0, 4.0, 2.0)


def test_summarize_per_row_ignores_nan():
    s = summarize(np.array([[1.0, 2.0, 3.0, np.nan], [np.nan] * 4]), axis=-1)
    assert s["median_s"][0] == 2.0 and np.isnan(s["median_s"][1])


def test_time_call_warms_up_and_flushes_before_every_timed_call():
    calls = []
    flushes = []
    out = time_call(
        lambda: calls.append(len(flushes)), repeats=4, warmup=2, flush=lambda: flushes.append(1)
    )
    assert out.shape == (4,) and np.all(out >= 0)
    assert len(calls) == 2 + 4 and len(flushes) == 4
    # warm-up calls see no flush; each timed call follows its own flush
    assert calls == [0, 0, 1, 2, 3, 4]


def test_cache_flusher_touches_its_buffer():
    f = CacheFlusher(1 << 20)
    f()
    f()
    assert f.calls == 2 and f.nbytes == 1 << 20
    assert int(f._buf[0]) == 2  # every element written on each call
    assert CacheFlusher(0).nbytes == 0
    assert default_flush_bytes() > 0


def test_benchmark_dataset_dims_and_missing_cells():
    cases = [{"M": 2, "N": 3, "K": 4, "tile": "a"}, {"M": 5, "N": 6, "K": 7, "tile": "b"}]
    kernels = {
        "always": lambda case: lambda: sum(range(case["M"])),
        "only_small": lambda case: (lambda: None) if case["M"] < 3 else None,
    }
    flusher = CacheFlusher(1 << 16)
    ds = benchmark(kernels, cases, repeats=3, warmup=1, flusher=flusher, progress=False)
    assert ds["seconds"].dims == ("impl", "case", "repeat")
    assert ds.sizes == {"impl": 2, "case": 2, "repeat": 3}
    assert list(ds["M"].values) == [2, 5] and list(ds["tile"].values) == ["a", "b"]
    assert np.isnan(ds["seconds"].sel(impl="only_small", case=1)).all()
    assert np.isfinite(ds["seconds"].sel(impl="always")).all()
    assert flusher.calls == 3 * 3  # three (impl, case) cells ran, 3 timed calls each
    med = ds["median_s"].sel(impl="always", case=0)
    assert float(med) == pytest.approx(np.median(ds["seconds"].sel(impl="always", case=0)))
    assert np.isfinite(ds["load_before"].sel(impl="always")).all()
    assert ds.attrs["flush_bytes"] == 1 << 16 and ds.attrs["repeats"] == 3


def test_benchmark_rejects_inconsistent_cases():
    with pytest.raises(ValueError, match="missing from some cases"):
        benchmark(
            {"k": lambda c: lambda: None}, [{"M": 1}, {"N": 2}], flush_bytes=0, progress=False
        )


def test_energy_absent_is_stated(monkeypatch, tmp_path):
    monkeypatch.setattr(energy, "POWERCAP", tmp_path / "none")
    monkeypatch.setattr(energy, "_nvml_handles", lambda: (_ for _ in ()).throw(ImportError()))
    src, reason = energy.energy_source()
    assert src is None and reason.startswith("energy could not be measured")
    with energy.EnergyMeter() as meter:
        pass
    assert meter.joules is None and "no RAPL" in meter.reason


def test_energy_from_fake_rapl_with_wraparound(monkeypatch, tmp_path):
    dom = tmp_path / "intel-rapl:0"
    dom.mkdir()
    (dom / "energy_uj").write_text("999000000\n")
    (dom / "max_energy_range_uj").write_text("999999999\n")
    monkeypatch.setattr(energy, "POWERCAP", tmp_path)
    with energy.EnergyMeter() as meter:
        (dom / "energy_uj").write_text("1000000\n")  # wrapped past the range
    # (1_000_000 - 999_000_000) mod 1_000_000_000 = 2_000_000 uJ = 2 J
    assert meter.source.kind == "rapl" and meter.joules == pytest.approx(2.0)
