"""Run (or resume) the ``matched`` optimizer sweep from the command line, with its estimate.

``python -m scalinglab.studies.optimizers.matched`` prints the cost estimate
(:func:`~scalinglab.studies.optimizers.protocol.estimate_seconds`);
``... --run`` runs the sweep on a local Dask cluster of ``--workers`` single-thread
workers, resumable run by run (:func:`~scalinglab.studies.optimizers.sweep.run_sweep`),
printing a progress bar per batch and the whole sweep's progress and ETA;
``... --progress`` prints where a running sweep stands (runs per tuning phase, its
finished learning-rate walks, interior or not), read from its stored runs without writing
anything (:mod:`.progress`).
"""

from __future__ import annotations

import argparse
import json

from scalinglab.studies.optimizers.config import sweep_config
from scalinglab.studies.optimizers.protocol import committed_medium, estimate_seconds


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Estimate (and run) a walk-protocol sweep.")
    ap.add_argument("compute_class", nargs="?", default="matched")
    ap.add_argument("--run", action="store_true", help="run or resume the sweep")
    ap.add_argument("--workers", type=int, default=2, help="Dask workers (one thread each)")
    ap.add_argument("--progress", action="store_true", help="where the sweep stands (reads only)")
    args = ap.parse_args(argv)
    sweep = sweep_config(args.compute_class)
    committed = committed_medium()
    if args.progress:
        print(_progress(sweep, committed), flush=True)
        return
    if committed is not None:
        est = estimate_seconds(sweep, committed)
        print(json.dumps(est, indent=1), flush=True)
    if args.run:
        from scalinglab.compute import get_client
        from scalinglab.studies.optimizers.sweep import run_sweep

        with get_client("", n_workers=args.workers) as client:
            ds = run_sweep(sweep, client=client, progress=True)
        print(ds.attrs.get("tuning_warnings", ""), flush=True)


def _progress(sweep, committed) -> str:
    from scalinglab.studies.optimizers.progress import report, summary
    from scalinglab.studies.optimizers.protocol import committed_results
    from scalinglab.studies.optimizers.sweep import STUDY
    from scalinglab.sweeps import RUNS_DIR, RunCache, dataset_path

    path = dataset_path(STUDY, f"sweep-{sweep.compute_class}", sweep.to_dict())
    if path.exists():
        return f"done: {path}"
    folder = path.parent / RUNS_DIR / path.stem
    reusable = committed_results(committed, sweep_config("medium")) if committed else {}
    state = summary(sweep, RunCache(folder), reusable)
    return f"{folder} ({RunCache(folder).count()} runs stored)\n" + report(state)


if __name__ == "__main__":
    main()
