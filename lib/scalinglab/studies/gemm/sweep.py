"""The GEMM study's experiment: a tile-size x shape sweep of the numba kernel, and its tables.

:func:`sweep_config` fixes the shapes (square and skinny, small to large), tile
sizes, repeats and cache flush for a compute class; :func:`run_sweep` times the
tiled kernel on every (shape, tile) and BLAS and the textbook loop on every shape
with the shared harness (:mod:`scalinglab.kernels.harness`), one call at a time
in a seeded random order of cells (timings must not share the machine with each
other, so the sweep never runs on Dask workers); :func:`cached_sweep` stores the result under
``data/gemm_cost_model/`` keyed by the config, so a report regenerates without
re-timing (through :func:`scalinglab.sweeps.cached_sweep`: the ordered cells are
timed in runs of one shape's worth of cells, each kept as it finishes, so an
interrupted sweep resumes where it stopped); :func:`timing_positions` replays the run
order of a stored sweep (cells timed close together share a disturbance). Analyses work
on a long table
(:func:`timings_table`, or a user's own file via :func:`load_timings`) with one row
per timed call:
``M, N, K, tile_m, tile_n, tile_k, seconds``.

The statistics of the timings (tile effects, speed ratios, with bootstrap CIs)
are in :mod:`scalinglab.studies.gemm.analysis`.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import xarray as xr

from scalinglab.cost_model import HardwareRecord, named_device
from scalinglab.cost_model.hardware import load_hardware
from scalinglab.errors import InputError, ParameterError
from scalinglab.kernels.gemm_numba import gemm_naive, gemm_tiled, warm_up
from scalinglab.kernels.hardware_probe import hardware_record
from scalinglab.kernels.harness import CacheFlusher, benchmark, default_flush_bytes
from scalinglab.kernels.microkernel import MR, NR
from scalinglab.paths import repo_root
from scalinglab.studies.gemm.timings import SHAPE, TILE
from scalinglab.sweeps import RunCache, map_runs
from scalinglab.sweeps import cached_sweep as _cached_sweep

STUDY = "gemm_cost_model"
#: Bump when the kernels or the sweep change what a timing means (part of the cache key).
EXPERIMENT_VERSION = 5

_SHAPES = {
    "tiny": [
        (64, 64, 64),
        (96, 32, 128),
        (33, 65, 17),
        (128, 128, 64),
        (50, 70, 90),
        (16, 128, 256),
    ],
    "small": [
        (48, 48, 48),
        (128, 128, 128),
        (256, 256, 256),
        (384, 384, 384),
        (512, 512, 512),
        (768, 768, 768),
        (1000, 1000, 1000),
        (1024, 1024, 1024),
        (1536, 1536, 1536),
        (1024, 64, 1024),
        (64, 1024, 1024),
        (1024, 1024, 64),
        (2048, 32, 512),
        (32, 2048, 512),
        (512, 512, 2048),
        (256, 1024, 256),
        (1024, 256, 512),
        (96, 96, 4096),
        (4096, 16, 256),
        (128, 2048, 128),
        (640, 320, 160),
        (200, 300, 500),
        (333, 777, 99),
        (2048, 2048, 256),
        (4096, 64, 64),
        (64, 64, 4096),
        (300, 1200, 700),
        (1800, 100, 900),
        (700, 700, 30),
        (160, 2500, 320),
    ],
}
# Tiles in whole register blocks (MR x NR: 12 x 32 with AVX-512, 6 x 16 with AVX2).
_TILES = {
    "tiny": [(MR, NR, 64), (4 * MR, NR, 64), (MR, 2 * NR, 256), (4 * MR, NR, 512)],
    "small": list(
        itertools.product((2 * MR, 8 * MR, 24 * MR), (NR, 4 * NR, 8 * NR), (64, 256, 1024))
    ),
}
_REPEATS = {"tiny": 3, "small": 5}
_FLUSH = {"tiny": 8 * 2**20, "small": None}  # None: 1.25 x last-level cache
#: The textbook loop only on shapes up to this many FLOPs (it is ~50x slower).
_NAIVE_MAX_FLOPS = {"tiny": 2e7, "small": 2 * 256**3}


@dataclass(frozen=True)
class SweepConfig:
    """Everything that determines a sweep's timings (its hash is the cache key)."""

    shapes: tuple[tuple[int, int, int], ...]
    tiles: tuple[tuple[int, int, int], ...]
    repeats: int
    warmup: int
    flush_bytes: int
    naive_max_flops: float
    seed: int
    version: int = EXPERIMENT_VERSION

    def to_dict(self) -> dict:
        """JSON-able form (tuples become lists)."""
        d = asdict(self)
        d["shapes"] = [list(s) for s in self.shapes]
        d["tiles"] = [list(t) for t in self.tiles]
        return d


def sweep_config(compute_class: str, *, seed: int = 0, flush_mib: float = -1) -> SweepConfig:
    """The sweep of a compute class (``tiny``: seconds, for tests; ``small``: minutes).

    Parameters
    ----------
    flush_mib
        Cache-flush buffer in MiB; negative: the class default (``small``: 1.25x
        the last-level cache).
    """
    if compute_class not in _SHAPES:
        raise ParameterError(
            f"compute_class {compute_class!r} has no GEMM sweep on CPU; use one of "
            f"{sorted(_SHAPES)} (larger classes need a GPU: see kernels.gemm_triton)"
        )
    if flush_mib >= 0:
        flush = int(flush_mib * 2**20)
    else:
        flush = _FLUSH[compute_class] or default_flush_bytes()
    return SweepConfig(
        shapes=tuple(_SHAPES[compute_class]),
        tiles=tuple(_TILES[compute_class]),
        repeats=_REPEATS[compute_class],
        warmup=1,
        flush_bytes=flush,
        naive_max_flops=_NAIVE_MAX_FLOPS[compute_class],
        seed=seed,
    )


def _operands_and_order(cfg: SweepConfig) -> tuple[dict, np.ndarray]:
    """The seeded operands of every shape and the order the cells are timed in (one
    generator: the operands are drawn first, then the permutation of the shape-major
    cells)."""
    rng = np.random.default_rng(cfg.seed)
    operands = {
        s: (
            rng.standard_normal((s[0], s[2]), dtype=np.float32),
            rng.standard_normal((s[2], s[1]), dtype=np.float32),
        )
        for s in cfg.shapes
    }
    return operands, rng.permutation(len(cfg.shapes) * len(cfg.tiles))


def timing_positions(ds: xr.Dataset) -> xr.DataArray:
    """When each (shape, tile) cell of a sweep was timed: its position in the seeded run
    order (0 = first), replayed from the config stored with the sweep.

    Returns
    -------
    xarray.DataArray
        ``(shape, tile)`` integer positions; cells timed close together share whatever
        disturbed the machine then.
    """
    import json

    if "config" not in ds.attrs:
        raise ValueError("the sweep carries no config (attrs['config']): its run order is unknown")
    stored = json.loads(ds.attrs["config"])
    cfg = SweepConfig(
        **{
            **stored,
            "shapes": tuple(tuple(s) for s in stored["shapes"]),
            "tiles": tuple(tuple(t) for t in stored["tiles"]),
        }
    )
    _, order = _operands_and_order(cfg)
    pos = np.empty_like(order)
    pos[order] = np.arange(order.size)
    n_s, n_t = len(cfg.shapes), len(cfg.tiles)
    if (ds.sizes["shape"], ds.sizes["tile"]) != (n_s, n_t):
        raise ValueError(
            f"the sweep holds {ds.sizes['shape']} x {ds.sizes['tile']} cells but its config "
            f"{n_s} x {n_t}"
        )
    return xr.DataArray(
        pos.reshape(n_s, n_t),
        dims=("shape", "tile"),
        coords={"shape": ds["shape"].values, "tile": ds["tile"].values},
        name="timing_position",
    )


def run_sweep(
    cfg: SweepConfig, *, progress: bool = True, energy: bool = True, runs: RunCache | None = None
) -> xr.Dataset:
    """Time the sweep now (see the module docstring).

    Parameters
    ----------
    runs
        The per-run cache (:func:`scalinglab.sweeps.cached_sweep`): the cells, in
        their timing order, go in runs of ``len(cfg.tiles)`` cells; runs found there
        are not timed again. None: no caching.

    Returns
    -------
    xarray.Dataset
        ``tiled_seconds`` (shape, tile, repeat); ``ref_seconds`` (impl, shape, repeat)
        for ``blas`` and ``numba_naive`` (NaN where the textbook loop was skipped);
        ``load_before`` / ``load_after`` and ``energy_j`` per cell; coords ``M, N, K``
        on ``shape`` and ``tile_m, tile_n, tile_k`` on ``tile``; harness settings in attrs.
    """
    warm_up()
    operands, order = _operands_and_order(cfg)
    first_tile = dict(zip(TILE, cfg.tiles[0], strict=True))

    def shape_of(case):
        return operands[(case["M"], case["N"], case["K"])]

    def tiled(case):
        a, b = shape_of(case)
        tm, tn, tk = case["tile_m"], case["tile_n"], case["tile_k"]
        return lambda: gemm_tiled(a, b, tile_m=tm, tile_n=tn, tile_k=tk)

    def once_per_shape(case):  # the references run beside each shape's first tile
        return all(case[k] == v for k, v in first_tile.items())

    def blas(case):
        a, b = shape_of(case)
        return (lambda: a @ b) if once_per_shape(case) else None

    def naive(case):
        a, b = shape_of(case)
        small = 2.0 * case["M"] * case["N"] * case["K"] <= cfg.naive_max_flops
        return (lambda: gemm_naive(a, b)) if small and once_per_shape(case) else None

    # One pass over all (shape, tile) cells in a seeded random order: drifts in the
    # machine's load then land on random cells instead of on whole shapes (which
    # would masquerade as shape effects). A shape's references run right after its
    # first tile's cell.
    cases = [
        {**dict(zip(SHAPE, s, strict=True)), **dict(zip(TILE, t, strict=True))}
        for s in cfg.shapes
        for t in cfg.tiles
    ]
    kernels = {"numba_tiled": tiled, "blas": blas, "numba_naive": naive}
    flusher = CacheFlusher(cfg.flush_bytes)

    def time_cells(idx: list[int]) -> xr.Dataset:
        return benchmark(
            kernels,
            [cases[i] for i in idx],
            repeats=cfg.repeats,
            warmup=cfg.warmup,
            flusher=flusher,
            progress=False,
            energy=energy,
        )

    per = len(cfg.tiles)
    chunks = [[int(i) for i in order[k : k + per]] for k in range(0, len(order), per)]
    parts, fails = map_runs(
        time_cells,
        chunks,
        keys=chunks,
        runs=runs,
        scheduler="sync",
        desc="GEMM timings",
        progress=progress,
    )
    if fails:
        raise RuntimeError(f"GEMM timing failed:\n{fails[0].error}")
    raw = xr.concat(parts, dim="case", combine_attrs="override")
    raw.attrs = dict(parts[-1].attrs)  # the harness settings; energy: the last cell's meter
    raw = raw.assign_coords(case=np.arange(len(cases)))
    raw = raw.isel(case=np.argsort(order))  # back to shape-major order
    n_s, n_t = len(cfg.shapes), len(cfg.tiles)

    def grid(var: str, impls) -> np.ndarray:
        v = raw[var].sel(impl=impls).values  # (impl, case, ...) with case = shape-major
        return v.reshape(v.shape[:1] + (n_s, n_t) + v.shape[2:])

    refs = ["blas", "numba_naive"]
    shapes = np.array(cfg.shapes)
    tiles = np.array(cfg.tiles)
    ds = xr.Dataset(
        {
            "tiled_seconds": (
                ("shape", "tile", "repeat"),
                grid("seconds", ["numba_tiled"])[0],
                {"units": "s"},
            ),
            "tiled_load_before": (("shape", "tile"), grid("load_before", ["numba_tiled"])[0]),
            "tiled_load_after": (("shape", "tile"), grid("load_after", ["numba_tiled"])[0]),
            "tiled_energy_j": (
                ("shape", "tile"),
                grid("energy_j", ["numba_tiled"])[0],
                {"units": "J"},
            ),
            "ref_seconds": (
                ("impl", "shape", "repeat"),
                grid("seconds", refs)[:, :, 0],
                {"units": "s"},
            ),
            "ref_load_before": (("impl", "shape"), grid("load_before", refs)[:, :, 0]),
            "ref_load_after": (("impl", "shape"), grid("load_after", refs)[:, :, 0]),
            "ref_energy_j": (("impl", "shape"), grid("energy_j", refs)[:, :, 0], {"units": "J"}),
        },
        coords={
            "shape": [f"{m}x{n}x{k}" for m, n, k in cfg.shapes],
            "tile": [f"{m}x{n}x{k}" for m, n, k in cfg.tiles],
            "impl": refs,
            "repeat": np.arange(cfg.repeats),
            "M": ("shape", shapes[:, 0]),
            "N": ("shape", shapes[:, 1]),
            "K": ("shape", shapes[:, 2]),
            "tile_m": ("tile", tiles[:, 0]),
            "tile_n": ("tile", tiles[:, 1]),
            "tile_k": ("tile", tiles[:, 2]),
        },
        attrs=dict(raw.attrs),
    )
    return ds


def cached_sweep(cfg: SweepConfig, *, rerun: bool = False, progress: bool = True) -> xr.Dataset:
    """:func:`run_sweep` through ``data/gemm_cost_model/sweep-<hash>.nc`` (re-time only on ``rerun``)."""
    return _cached_sweep(
        STUDY,
        "sweep",
        cfg.to_dict(),
        lambda runs: run_sweep(cfg, progress=progress, runs=runs),
        rerun=rerun,
    )


def resolve_hardware(spec: str = "", *, quick: bool = False) -> HardwareRecord:
    """The hardware record a study uses.

    Parameters
    ----------
    spec
        ``""``: this machine (cached in ``data/hardware/`` or measured now);
        ``"NAME"`` or ``"NAME/DTYPE"``: a published device (e.g. ``"H100 SXM/float32"``);
        a path ending in ``.json``: a record written by ``save_hardware``.
    quick
        Measure with the quick settings if nothing is cached (tests).
    """
    if not spec:
        return hardware_record(quick=quick)
    if spec.endswith(".json"):
        path = Path(spec)
        if not path.is_absolute():
            path = repo_root() / path
        if not path.exists():
            raise InputError("no such hardware record", file=path)
        return load_hardware(path)
    name, _, dtype = spec.partition("/")
    try:
        return named_device(name, dtype=dtype or "float32")
    except KeyError as exc:
        raise ParameterError(f"hardware {spec!r}: {exc.args[0]}") from exc
