"""Run fitting tasks in-process, over local processes, or on a Dask client.

Multi-start fits and bootstrap refits are split into tasks whose boundaries do
not depend on where they run (fixed chunk sizes), and every start is optimized
independently, so the same seed gives bit-identical results in-process, with
``n_jobs`` processes, or on a cluster. A task carries its :class:`Problem`
serialized with cloudpickle, so laws defined with lambdas work too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import cloudpickle
from tqdm import tqdm

from scalinglab.errors import ScalingLabError


def dumps(obj: Any) -> bytes:
    """Serialize a problem for a worker (cloudpickle: lambdas allowed)."""
    return cloudpickle.dumps(obj)


def loads(blob: bytes) -> Any:
    """Inverse of :func:`dumps`."""
    return cloudpickle.loads(blob)


def resolve_jobs(n_jobs: int | None) -> int:
    """``None``/``1`` -> in-process; ``-1`` -> all CPUs; else the number given."""
    if n_jobs is None:
        return 1
    if n_jobs == -1:
        return os.cpu_count() or 1
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1 or -1, got {n_jobs}")
    return int(n_jobs)


def run_tasks(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    n_jobs: int | None = 1,
    client: Any = None,
    progress: bool = False,
    desc: str = "tasks",
) -> list[Any]:
    """``[fn(item) for item in items]``, possibly in parallel, results in order.

    Parameters
    ----------
    fn
        A module-level function (it is sent to worker processes).
    items
        Task arguments.
    n_jobs
        Local worker processes when no ``client`` is given (see :func:`resolve_jobs`).
    client
        A ``dask.distributed.Client``; tasks go through :func:`scalinglab.compute.map_tasks`.
    progress
        Show a tqdm bar (stderr).
    """
    if client is not None:
        from scalinglab.compute import map_tasks

        results, failures = map_tasks(fn, list(items), client=client, desc=desc, progress=progress)
        if failures:
            raise ScalingLabError(f"{len(failures)} {desc} failed; first:\n{failures[0].error}")
        return results
    jobs = min(resolve_jobs(n_jobs), len(items))
    if jobs <= 1:
        return [fn(item) for item in tqdm(items, desc=desc, disable=not progress)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(tqdm(pool.map(fn, items), total=len(items), desc=desc, disable=not progress))
