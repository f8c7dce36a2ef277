"""Fixtures shared by several test modules, and the suite's sharding (``sharding.py``).

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

Sharding: ``nox -s tests`` runs the suite as two pytest processes, ``--shard=0/2`` and
``--shard=1/2`` (``sharding.py``, loaded here: whole files, balanced by
``tests/durations.json``). Files that share a session-scoped fixture of a ``conftest.py``
are found at collection time and always run in one shard, so the fixture is computed
once. Today there is one such fixture, so one group: ``optimizer_tiny_sweep`` joins
``test_optimizers_design`` (directly), ``test_optimizers_sweep`` and
``test_optimizers_medium`` (through their module fixtures ``tiny`` and ``arms``) and
``test_study_optimizer_comparison``. Each shard's first line after collection names the
groups it keeps together. A new session fixture here is grouped the same way with no
change; an autouse one would join every file into one shard, so make it module-scoped.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import xarray as xr

#: The name ``sharding.py`` is imported under (``tests/test_sharding.py`` finds it there).
SHARDING_MODULE = "scalinglab_tests_sharding"


def _load_sharding():
    # by path, not by name: works under any --import-mode, and shadows no installed module
    if SHARDING_MODULE in sys.modules:
        return sys.modules[SHARDING_MODULE]
    spec = importlib.util.spec_from_file_location(
        SHARDING_MODULE, Path(__file__).with_name("sharding.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[SHARDING_MODULE] = module  # before running it: its dataclass looks itself up
    spec.loader.exec_module(module)
    return module


_sharding = _load_sharding()
# the plugin's hooks, as this conftest's own (--shard=I/N, SCALINGLAB_WRITE_DURATIONS)
pytest_addoption = _sharding.pytest_addoption
pytest_configure = _sharding.pytest_configure
pytest_collection_modifyitems = _sharding.pytest_collection_modifyitems
pytest_collection_finish = _sharding.pytest_collection_finish


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


@pytest.fixture
def sparsity_claims():
    """A function ``(findings, ids, long=None, **more) -> (values, {id: Verdict})``: the sparsity
    study's ``sweep`` claims named in ``ids``, filled with the notebook's values
    (:func:`~scalinglab.studies.sparsity.findings.sweep_claim_values`, on the long frame
    ``long`` when given, ``more`` its further keywords) and decided on ``findings`` (``Named`` findings, recorded as the
    notebook records them), with test calibration values (every minimum effect and
    tolerance 0.05)."""
    from scalinglab import record
    from scalinglab.claims import decide_all
    from scalinglab.claims_file import expand, read_claims_file, study_claims_path
    from scalinglab.studies.sparsity import findings as sf

    def decide(findings, ids, long=None, **more):
        record.clear()
        try:
            sf.record_all(findings)
            current = {f.name: f.to_json() for f in record.findings()}
        finally:
            record.clear()
        cal = sf.Step(
            extra={
                "values": {"relu_min": 0.05, "silu_min": 0.05, "relu_tol": 0.05, "silu_tol": 0.05}
            }
        )
        kernel = sf.Step(extra={"deciding": []})
        values = {
            "design": "sweep",
            **sf.sweep_claim_values(cal, kernel, long=long, recorded=current, **more),
        }
        path = study_claims_path("sparsity_laws")
        specs = [s for s in read_claims_file(path) if s.applies(values) and s.id in ids]
        claims = [c for s in specs for c in expand(s, values, current)]
        return values, {v.claim.id: v for v in decide_all(claims, current)}

    return decide
