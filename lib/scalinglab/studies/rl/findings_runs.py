"""Findings on how the RL runs ended: the baseline's outcomes (declined, collapsed, never
took off), the gain after the plateau rule's onset, and the learning-rate stage's choice
per size (``medium`` designs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.studies.rl.named import Named, estimate_of


def run_outcome_findings(base_out: pd.DataFrame, *, base: str) -> list[Named]:
    """How the baseline runs ended (:func:`.stopping.run_outcomes`, one variant's rows):
    counts of runs that declined, collapsed or never took off."""
    n = len(base_out)
    return [
        Named(
            "runs/declined",
            Estimate(float(base_out["declined"].sum())),
            f"{base} runs whose last evaluation is more than 0.1 below their peak, of {n}",
            unit="runs",
        ),
        Named(
            "runs/collapsed",
            Estimate(float(base_out["collapsed"].sum())),
            f"{base} runs whose last evaluation is below half their R0, or at R0 after "
            f"taking off, of {n}",
            unit="runs",
        ),
        Named(
            "runs/not_taken_off",
            Estimate(float((~base_out["took_off"]).sum())),
            f"{base} runs whose pass rate never rose 0.1 above R0, of {n}",
            unit="runs",
        ),
    ]


def plateau_findings(
    after: Mapping[str, Any],
    *,
    level: float,
    name: str = "plateau/gain_after",
    runs: str = "every variant and size",
    share: bool = True,
) -> list[Named]:
    """The gain after the plateau rule's onset (:func:`.stopping.gain_after_plateau`,
    Student t over runs, or over base models when the design has warm starts, sizes as
    strata); not identified with fewer than 3 runs that continued past it or fewer than
    2 degrees of freedom.

    Parameters
    ----------
    after
        :func:`.stopping.gain_after_plateau` on the runs the finding is about.
    name
        The finding's name (a sensitivity reading takes its own, e.g.
        ``"plateau/gain_after/all_variants"``).
    runs
        Which runs ``after`` was computed on, for the description.
    share
        Whether to add ``plateau/share_gaining`` (the primary reading's only).
    """
    n_runs, n_total = int(after["n_runs"]), int(after["n_total"])
    n_units = int(after.get("n_units", n_runs))
    clustered = bool(after.get("clustered", False))
    finite = bool(np.isfinite(after["mean"]))
    method = f"Student t over {after.get('units', f'{n_runs} runs')}"
    gain = estimate_of(
        after["mean"],
        after["ci"] if finite else None,
        level=level,
        method=method,
        n=n_units,
        df=after.get("df"),
        identified=n_runs >= 3 and finite,
        note=(
            f"only {n_runs} of {n_total} runs continued past a plateau (the rule fired in "
            f"{after.get('n_plateau', 0)} stable runs; a run it stopped shows nothing after)"
            if n_runs < 3
            else f"the runs sit in {after.get('units')}: fewer than 2 degrees of freedom"
            if not finite
            else None
        ),
    )
    out = [
        Named(
            name,
            gain,
            "pass rate gained after the plateau rule's onset (judged from the run's "
            "take-off on; the end read before the evaluation the scope rule judges), mean "
            f"over the {n_runs} runs ({runs}) that continued past it"
            + (
                f", averaged within each of their {n_units} base models (size x warm start), "
                "each size weighing by its base models"
                if clustered
                else ""
            ),
        )
    ]
    if share:
        out.append(
            Named(
                "plateau/share_gaining",
                Estimate(float(after["share_gaining"])),
                "share of those runs that gained more than 0.02 after the onset (stopped too "
                "early by the rule)",
            )
        )
    return out


def lr_findings(lr_table: pd.DataFrame, grid: Sequence[float]) -> list[Named]:
    """The learning-rate stage's choice per size (``selected``, ``on_grid_edge`` columns,
    one row per size)."""
    out = []
    for size, r in lr_table.iterrows():
        edge = "; on the grid edge" if r["on_grid_edge"] else ""
        out.append(
            Named(
                f"lr/{size}/multiplier",
                Estimate(float(r["selected"])),
                f"selected multiple of the width rule's learning rate (grid {list(grid)}{edge})",
            )
        )
    return out
