"""Fixtures shared by several test modules.

``optimizer_tiny_sweep``: the optimizer study's ``tiny`` sweep, ``sweep_config("tiny")``
(six optimizers, both control arms: what the notebook's ``tiny`` variant runs), trained
once per session in a temporary repository root. It is the suite's longest computation
(minutes on 2 cores), and every test that needs a tiny optimizer sweep only reads it:
``test_optimizers_sweep`` and ``test_optimizers_medium`` (the dataset, in process) and
``test_study_optimizer_comparison`` (the notebook, which finds it in its cache).

Measured 2026-11-26 beside other jobs (load 13-15 on 2 cores): 112 training runs, 61 s
of CPU and 303 s of wall time in process; spread over a ``LocalCluster`` of one worker
per core it took 334 s (the same dataset but for measured timings), so it stays in
process. ``pytest --durations`` charges its setup to the first test that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import xarray as xr


@dataclass(frozen=True)
class TinySweep:
    """A sweep computed once: its config, its dataset (read it, never modify it), the
    repository root it was cached under and the cached file."""

    sweep: object
    ds: xr.Dataset
    root: Path
    path: Path


@pytest.fixture(scope="session")
def optimizer_tiny_sweep(tmp_path_factory) -> TinySweep:
    from scalinglab.compute import dataset_path
    from scalinglab.studies.optimizers.sweep import STUDY, run_sweep, sweep_config

    root = tmp_path_factory.mktemp("optimizer-tiny")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCALINGLAB_ROOT", str(root))
        sweep = sweep_config("tiny")
        ds = run_sweep(sweep, scheduler="sync", progress=False)
        path = dataset_path(STUDY, f"sweep-{sweep.compute_class}", sweep.to_dict())
    assert path.is_file() and path.is_relative_to(root)
    return TinySweep(sweep, ds, root, path)
