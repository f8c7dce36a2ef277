"""The medium sweep's cost and progress, as the report shows them.

Estimated from the recorded timings of a finished sweep (:func:`.budget.costs_from_runs`
on the ``medium_v1`` dataset), every main run at its full step budget, packed onto 2
workers (:func:`.budget.estimate_sweep`); the progress counts the finished runs the
sweep keeps under ``data/rl_scaling/.runs/<name>/``.
"""

from __future__ import annotations

import pandas as pd
import xarray as xr

from scalinglab.paths import repo_root
from scalinglab.studies.rl.budget import costs_from_runs, estimate_sweep
from scalinglab.studies.rl.config import sweep_config
from scalinglab.studies.rl.sweep import rl_runs_folder


def sweep_cost(
    target: str = "medium", *, timings_from: str = "medium_v1", workers: int = 2
) -> tuple[pd.DataFrame | None, list[str]]:
    """Per-size timings and the estimated cost of ``timings_from`` and ``target``, and
    the progress of ``target``.

    Returns
    -------
    per_size, lines
        The per-size seconds (with ``run_s_at_budget``: one run at ``target``'s step
        budget), None when the timings' dataset is missing; and the text lines to print.
    """
    cfg = sweep_config(target)
    src = (
        repo_root()
        / "data"
        / "rl_scaling"
        / f"{rl_runs_folder(sweep_config(timings_from)).name}.nc"
    )
    lines: list[str] = []
    per_size = None
    if src.exists():
        with xr.open_dataset(src, engine="h5netcdf") as ds:
            costs = costs_from_runs(ds.load())
        per_size = pd.DataFrame(costs["sizes"]).T
        evals = cfg.grpo.steps // cfg.eval_every + 1
        per_size["run_s_at_budget"] = [
            cfg.grpo.steps * c["step_s"] + evals * c["eval_s"] for c in costs["sizes"].values()
        ]
        for name in (timings_from, target):
            est = estimate_sweep(sweep_config(name), costs, workers=workers)
            bound = " (an upper bound: its plateau rule ended runs early)" if name != target else ""
            lines.append(
                f"{name}: tasks {est['tasks']}; {est['core_s']['total'] / 3600:.1f} core-hours, "
                f"{est['wall_s'] / 3600:.1f} h on {workers} idle workers{bound}"
            )
    else:
        lines.append(f"no recorded timings to estimate from ({src.name} is missing)")
    runs = rl_runs_folder(cfg)
    if (runs.parent.parent / f"{runs.name}.nc").exists():
        lines.append(f"{target} sweep complete: data/rl_scaling/{runs.name}.nc")
    else:
        done = len(list(runs.glob("*.pkl"))) if runs.is_dir() else 0
        lines.append(
            f"{target} sweep: {done} of {cfg.n_tasks()} warm-ups and runs finished ({runs})"
        )
    return per_size, lines
