"""Fixtures shared by several test modules.

``optimizer_tiny_sweep``: the optimizer study's ``tiny`` sweep, ``sweep_config("tiny")``
(six optimizers, both control arms: what the notebook's ``tiny`` variant runs), trained
once per session in a temporary repository root. It is the suite's longest computation
(minutes on 2 cores), and every test that needs a tiny optimizer sweep only reads it:
``test_optimizers_sweep`` and ``test_optimizers_medium`` (the dataset, in process) and
``test_study_optimizer_comparison`` (the notebook, which finds it in its cache).

Its 112 training runs (tuning and final, each single-threaded and seeded, about 90 s
of CPU) are spread over a ``LocalCluster`` with one worker process per core when the
machine has more than one, instead of running one after another in the test process:
the dataset is the same as in process but for the measured timings (every loss,
hyperparameter and status compared equal), and each core trains (measured beside
other jobs at load 12-15: 334 s of wall time, against 529 s in process under a
profiler).
"""

from __future__ import annotations

import os
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
        scheduler = "" if (os.cpu_count() or 1) > 1 else "sync"  # "": a LocalCluster
        ds = run_sweep(sweep, scheduler=scheduler, progress=False)
        path = dataset_path(STUDY, f"sweep-{sweep.compute_class}", sweep.to_dict())
    assert path.is_file() and path.is_relative_to(root)
    return TinySweep(sweep, ds, root, path)
