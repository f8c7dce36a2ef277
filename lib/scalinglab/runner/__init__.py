"""The runner: study notebook -> versioned, self-contained HTML report. Knows no science.

Modules, one concept each:

- :mod:`~scalinglab.runner.study`: discovery, header metadata, the ``parameters`` cell
- :mod:`~scalinglab.runner.execute`: jupytext -> papermill in the run folder
- :mod:`~scalinglab.runner.html`: nbconvert export, normalisation, provenance header
- :mod:`~scalinglab.runner.store`: run ids, atomic run folders, ``latest``, lookup,
  integrity (:func:`~scalinglab.runner.store.check_run`)
- :mod:`~scalinglab.runner.manifest`: the manifest and the cache key
- :mod:`~scalinglab.runner.pipeline`: one run end to end (:func:`run_study`)
- :mod:`~scalinglab.runner.batch`: many studies as Dask tasks (:func:`run_all`)
- :mod:`~scalinglab.runner.worker`: the worker side of a batch (run a task, stop runs)
- :mod:`~scalinglab.runner.landing`: the client side of a batch (what workers send back,
  confined to the checkout)
- :mod:`~scalinglab.runner.index`: ``reports/index.html`` / ``index.json``
- :mod:`~scalinglab.runner.diff`: which findings moved between two runs
- :mod:`~scalinglab.runner.verify`: re-run a run and compare its findings
- :mod:`~scalinglab.runner.text`: terminal tables
- :mod:`~scalinglab.runner.imports`: which library modules a notebook imports (the key)
- :mod:`~scalinglab.runner.render`: render-only runs (prose edited, no kernel)

The names below are loaded on first use, so that ``import scalinglab.runner.pipeline``
(``run``, ``status``, a render-only run) does not import Dask through the batch runner.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scalinglab.runner.batch import BatchResult, run_all
    from scalinglab.runner.diff import diff_findings, diff_runs
    from scalinglab.runner.index import collect, write_index
    from scalinglab.runner.parameters import Parameter
    from scalinglab.runner.pipeline import RunResult, prepare_run, run_study
    from scalinglab.runner.store import list_runs, new_run_id, resolve_run
    from scalinglab.runner.study import Study, discover_studies, load_study
    from scalinglab.runner.verify import VerifyResult, verify_run

#: Where each exported name lives.
_EXPORTS = {
    "BatchResult": "batch",
    "run_all": "batch",
    "diff_findings": "diff",
    "diff_runs": "diff",
    "collect": "index",
    "write_index": "index",
    "Parameter": "parameters",
    "RunResult": "pipeline",
    "prepare_run": "pipeline",
    "run_study": "pipeline",
    "list_runs": "store",
    "new_run_id": "store",
    "resolve_run": "store",
    "Study": "study",
    "discover_studies": "study",
    "load_study": "study",
    "VerifyResult": "verify",
    "verify_run": "verify",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'scalinglab.runner' has no attribute {name!r}")
    return getattr(importlib.import_module(f"scalinglab.runner.{_EXPORTS[name]}"), name)


__all__ = [
    "BatchResult",
    "Parameter",
    "RunResult",
    "Study",
    "VerifyResult",
    "collect",
    "diff_findings",
    "diff_runs",
    "discover_studies",
    "list_runs",
    "load_study",
    "new_run_id",
    "prepare_run",
    "resolve_run",
    "run_all",
    "run_study",
    "verify_run",
    "write_index",
]
