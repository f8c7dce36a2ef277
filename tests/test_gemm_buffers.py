"""The GEMM tile study's robustness: disturbed cells left out, the run order replayed, the
tile effect compared across two sweeps (old and right-sized pack buffers), and the roofs
recorded inside their physical ranges when BLAS outruns the FMA probe."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab import record as rec
from scalinglab.cost_model import HardwareRecord
from scalinglab.studies.gemm import analysis, machine
from scalinglab.studies.gemm import estimates as gest
from scalinglab.studies.gemm import findings as gemm_findings
from scalinglab.studies.gemm import sweep as gemm
from scalinglab.studies.gemm import timings as gtimes


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.delenv(rec.RESULTS_ENV, raising=False)
    rec.clear()
    yield
    rec.clear()


def _calls(times: dict[tuple, list[float]]) -> pd.DataFrame:
    rows = [
        dict(zip([*gemm.SHAPE, *gemm.TILE], key, strict=True), repeat=r, seconds=s)
        for key, ts in times.items()
        for r, s in enumerate(ts)
    ]
    return pd.DataFrame(rows)


def _sweep(deep_slowdown: dict[tuple, float], *, seed: int = 0, n: int = 7) -> pd.DataFrame:
    """Calls of shapes x 3 tiles; the deep tile (k = 1024) is ``deep_slowdown[shape]``
    times slower than the others, with 2% noise on every repeat."""
    rng = np.random.default_rng(seed)
    out = {}
    for shape, slow in deep_slowdown.items():
        base = 1e-3 * shape[0] * shape[1] * shape[2] / 64**3
        for tile, f in (((24, 32, 64), 1.0), ((96, 32, 256), 1.1), ((96, 32, 1024), slow)):
            out[(*shape, *tile)] = list(base * f * np.exp(rng.normal(0, 0.02, n)))
    return _calls(out)


def test_stable_cells_leave_out_disturbed_cells_and_shapes_left_with_one_tile():
    calls = _calls(
        {
            (64, 64, 64, 24, 32, 64): [1.0, 1.1, 1.05],
            (64, 64, 64, 96, 32, 64): [2.0, 2.1, 9.0],  # disturbed: 4.5x
            (64, 64, 64, 96, 32, 256): [1.5, 1.5, 1.6],
            (32, 32, 32, 24, 32, 64): [1.0, 1.0, 1.0],
            (32, 32, 32, 96, 32, 64): [1.0, 5.0, 1.0],  # disturbed: leaves one tile
        }
    )
    stable, dropped = gtimes.stable_cells(calls)
    kept = set(map(tuple, stable[[*gemm.SHAPE, *gemm.TILE]].drop_duplicates().to_numpy()))
    assert kept == {(64, 64, 64, 24, 32, 64), (64, 64, 64, 96, 32, 256)}
    assert len(dropped) == 3 and dropped["spread"].iloc[0] == pytest.approx(5.0)
    assert len(stable) == 6  # every repeat of a kept cell
    # a looser rule keeps both disturbed cells, and so every call
    loose, _ = gtimes.stable_cells(calls, max_spread=6.0)
    assert len(loose) == len(calls)
    with pytest.raises(ValueError, match="> 1"):
        gtimes.stable_cells(calls, max_spread=1.0)


def test_timing_positions_replay_the_seeded_run_order():
    cfg = gemm.sweep_config("tiny", flush_mib=0)
    ds = xr.Dataset(
        coords={
            "shape": ["x".join(map(str, s)) for s in cfg.shapes],
            "tile": ["x".join(map(str, t)) for t in cfg.tiles],
        },
        attrs={"config": json.dumps(cfg.to_dict())},
    )
    pos = gemm.timing_positions(ds)
    assert pos.dims == ("shape", "tile")
    assert sorted(pos.values.ravel()) == list(range(len(cfg.shapes) * len(cfg.tiles)))
    # the same generator as the sweep: operands first, then the permutation
    rng = np.random.default_rng(cfg.seed)
    for m, n, k in cfg.shapes:
        rng.standard_normal((m, k), dtype=np.float32)
        rng.standard_normal((k, n), dtype=np.float32)
    order = rng.permutation(pos.size)
    first = int(order[0])
    assert pos.values.ravel()[first] == 0
    other = xr.Dataset(attrs={"config": json.dumps({**cfg.to_dict(), "seed": 1})})
    other = other.assign_coords(shape=ds["shape"].values, tile=ds["tile"].values)
    assert not np.array_equal(gemm.timing_positions(other).values, pos.values)
    with pytest.raises(ValueError, match="no config"):
        gemm.timing_positions(xr.Dataset())


def test_tile_effect_change_finds_an_effect_that_shrank_and_one_that_did_not():
    shapes = {(4096, 64, 64): 3.5, (1024, 1024, 1024): 1.5}
    before = _sweep(shapes, seed=0)
    after = _sweep({(4096, 64, 64): 1.6, (1024, 1024, 1024): 1.5}, seed=1)
    change = analysis.tile_effect_change(after, before, reps=400, seed=0)
    row = change.set_index("K").loc[64]
    assert row.ratio_before == pytest.approx(3.5, rel=0.05)
    assert row.ratio == pytest.approx(1.6, rel=0.05)
    assert row.change_hi < 1.0 and row.change_lo <= row.change <= row.change_hi
    assert row.max_tile_k_over_K == 16.0 and row.worst_tile_before == "96x32x1024"
    same = change.set_index("K").loc[1024]
    assert same.change_lo < 1.0 < same.change_hi
    # only the cells of both sweeps are compared
    gone = after[after["tile_k"] != 1024]
    row = analysis.tile_effect_change(gone, before, reps=200).set_index("K").loc[64]
    assert row.tiles == 2 and row.ratio_before == pytest.approx(1.1, rel=0.05)
    with pytest.raises(ValueError, match="no \\(shape, tile\\) cell"):
        analysis.tile_effect_change(after, before.assign(M=7), reps=10)


def test_buffer_comparison_says_the_largest_effect_did_not_survive():
    small_k = {(4096, 64, 64): 3.5, (48, 48, 48): 3.0, (128, 128, 128): 2.5}
    deep_k = {(1024, 1024, 1024): 1.5, (64, 64, 4096): 2.0}
    before = _sweep({**small_k, **deep_k}, seed=0)
    after = _sweep({**{s: 1.5 for s in small_k}, **deep_k}, seed=1)
    change = analysis.tile_effect_change(after, before, reps=400, seed=0)
    out = gemm_findings.record_buffer_comparison(
        change, before, sweep_name="sweep-old.nc", level=0.95, reps=400, seed=0
    )
    assert out["shape"] == "4096x64x64" and out["verdict"] == "does not survive"
    got = {f.name: f for f in rec.findings()}
    assert got["tile/buffers/old_max_worst_over_best"].ci is None
    assert got["tile/buffers/old_max_shape/change"].ci[1] < 1.0
    assert got["tile/buffers/small_k/shapes_lower"].point == 3.0
    assert got["tile/buffers/deep_k/shapes_lower"].point == 0.0
    assert got["tile/buffers/small_k/median_change"].point < 0.6
    # an effect the buffers did not cause survives
    rec.clear()
    same = analysis.tile_effect_change(_sweep(small_k, seed=2), before, reps=400, seed=0)
    out = gemm_findings.record_buffer_comparison(
        same, before, sweep_name="sweep-old.nc", level=0.95, reps=400, seed=0
    )
    assert out["verdict"] == "survives"


def test_tile_findings_leave_out_unstable_cells_and_report_the_all_cells_maximum():
    calls = _sweep({(64, 64, 64): 1.5, (128, 128, 128): 2.0}, seed=3)
    # one disturbed cell makes 64^3 look like a 10x effect
    hit = (calls["M"] == 64) & (calls["tile_k"] == 1024)
    calls.loc[hit & (calls["repeat"] < 4), "seconds"] *= 10.0
    stable, unstable = gtimes.stable_cells(calls)
    effects = analysis.tile_effects(stable, reps=200, simultaneous=True)
    table = gemm_findings.record_tile_effects(
        stable,
        effects,
        between_sigma=0.0,
        level=0.95,
        reps=200,
        seed=0,
        all_calls=calls,
        unstable=unstable,
    )
    got = {f.name: f for f in rec.findings()}
    assert len(table) == 2 and set(table["K"]) == {64, 128}
    # the largest true effect's interval (simultaneous over shapes) decides GEMM-1; the
    # disturbed cell's 10x is in neither it nor the observed maximum
    largest = got["tile/largest_effect"]
    assert largest.point == pytest.approx(2.0, rel=0.1) and largest.ci[1] < 5.0
    assert largest.ci[0] <= largest.point <= largest.ci[1] and largest.headline
    # one set of draws: every shape's interval is drawn with the largest's resamples, and
    # no shape's upper end passes the largest's
    per_shape = [f for n, f in got.items() if n.startswith("tile/worst_over_best/")]
    assert {f.resamples for f in per_shape} == {largest.resamples} and largest.resamples > 200
    assert max(f.ci[1] for f in per_shape) == largest.ci[1]
    # a table drawn without the adjusted tail is refused, naming the fix
    with pytest.raises(ValueError, match="simultaneous=True"):
        gemm_findings.record_tile_effects(
            stable,
            analysis.tile_effects(stable, reps=200),
            between_sigma=0.0,
            level=0.95,
            reps=200,
            seed=0,
        )
    assert got["tile/unstable_cells"].point == 1.0
    assert got["tile/all_cells/max_worst_over_best"].point > 5.0
    assert got["tile/max_worst_over_best"].point == pytest.approx(2.0, rel=0.1)
    assert got["tile/median_repeat_spread"].point < 1.2


def _hw(fma: float, blas: float) -> HardwareRecord:
    return machine.all_thread_peak(
        HardwareRecord(
            name="intel-2c",
            peak_flop_per_s=max(fma, blas),
            mem_bytes_per_s=2e10,
            dtype="float32",
            source="measured",
            blas_flop_per_s=blas,
            fma_flop_per_s=fma,
            provenance={"fma_all_threads_flop_per_s": fma},
        )
    )


def test_roof_is_the_larger_rate_and_blas_over_the_probe_is_an_unbounded_ratio():
    # BLAS above the FMA probe (the probe under-reads), and one process whose probe read low
    fma = np.array([201.5, 311.6, 311.9, 313.8, 311.3, 296.9]) * 1e9
    blas = np.array([312.7, 315.1, 307.0, 312.6, 309.5, 233.9]) * 1e9
    spread = xr.Dataset(
        {
            "fma_flop_per_s": ("process", fma),
            "blas_flop_per_s": ("process", blas),
            "tiled_seconds": (("process", "tile", "repeat"), np.ones((6, 2, 3))),
            "blas_seconds": (("process", "repeat"), np.ones((6, 3))),
        }
    )
    per = machine.per_process(spread)
    assert per["roof_flop_per_s"] == pytest.approx(np.fmax(fma, blas))
    assert per["blas_over_fma_probe"][0] > 1.5
    hw = _hw(308.0e9, 312.5e9)
    assert hw.peak_flop_per_s == 312.5e9  # the roof: BLAS, above the probe
    gemm_findings.record_hardware(
        hw,
        roof_per_process=per["roof_flop_per_s"],
        blas_over_fma_per_process=per["blas_over_fma_probe"],
        spread_ok=True,
        spread_why="",
        level=0.95,
    )
    got = {f.name: f for f in rec.findings()}
    peak = got["hardware/peak_gflops"]
    assert peak.point == pytest.approx(312.5) and peak.ci[0] <= 312.5 <= peak.ci[1]
    # the roof's re-run interval rests on the roofs, not on the probe that read 201.5
    assert peak.ci[0] > 250.0
    ratio = got["hardware/blas_over_fma_probe"]
    assert ratio.point == pytest.approx(312.5 / 308.0)
    assert ratio.ci[1] > 1.0 and "under-reads" in ratio.note and not ratio.headline
    assert "hardware/blas_fraction_of_peak" not in got


def test_a_bounded_figure_past_its_bound_is_refused_not_clipped():
    per = np.array([0.95, 1.0, 0.97, 0.99])
    with pytest.raises(ValueError, match="physical bound"):
        gest.rerun_estimate(1.02, per, level=0.95, upper=1.0)
    est = gest.rerun_estimate(0.99, per, level=0.95, upper=1.0)
    assert est.hi == 1.0 and est.lo <= est.point


def test_tile_choice_regret_judges_the_pick_among_trusted_cells_only():
    from scalinglab.studies.gemm import predictor

    cells = pd.DataFrame(
        {"M": 64, "N": 64, "K": 64, "tile_m": [24, 96, 288], "tile_n": 32, "tile_k": 64}
    )
    oof = pd.DataFrame(
        {
            "shape": "64x64x64",
            "protocol": "unseen_shapes",
            "model": "m",
            "row": [0, 1, 2],
            "seconds": [1.0, 1.2, 5.0],  # the third cell was timed through a disturbance
            "predicted": [1.1, 1.15, 0.9],  # the model picks it
        }
    )
    every = predictor.tile_choice_regret(oof, cells, model="m")
    assert every["regret"].item() == pytest.approx(5.0)
    trusted = predictor.tile_choice_regret(oof, cells, model="m", among=cells.iloc[:2])
    assert trusted["picked_tile"].item() == "24x32x64" and trusted["regret"].item() == 1.0
    assert predictor.tile_choice_regret(oof, cells, model="m", among=cells.iloc[:1]).empty
