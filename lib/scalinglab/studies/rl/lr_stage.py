"""The GRPO learning-rate stage of the RL sweep: a short run per (size, multiplier, seed).

The ``small`` sweep gave every size ``lr = lr_base * 32 / d_model`` and the same
number of steps, so the widest policy learned slowest and the size effect was
confounded with an untuned learning rate. The ``medium`` sweep first runs each size
for ``lr_steps`` steps at each multiplier of that rule in ``lr_grid`` (and
``lr_seeds`` seeds, from the same warmed-up policies as the main runs), then uses the
best multiplier for the size's main runs.

Selection rule (:func:`select_lr`): the multiplier with the highest held-out pass
rate averaged over the last ``lr_last`` evaluations of its runs and over seeds (the
end of a short run, not its peak, so a rate that climbs fast and then collapses
loses); ties go to the smaller multiplier. A selected multiplier on the edge of the
grid is reported as such by the notebook (the optimum may lie outside it).

The stage is kept as a result: :func:`lr_stage_dataset` gives its curves as
``lr_pass_rate`` / ``lr_flops`` with dims ``(model_size, lr_mult, lr_seed, lr_eval)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr


def lr_scores(sweep: Any, lr_results: dict, size_index: int) -> dict[float, float]:
    """Mean end-of-run pass rate per multiplier for one size (NaN where no run finished).

    Parameters
    ----------
    sweep
        The :class:`~scalinglab.studies.rl.sweep.RLSweepConfig` (``lr_grid``,
        ``lr_seeds``, ``lr_last``).
    lr_results
        ``(size_index, multiplier, seed) -> RunResult`` of the stage's finished runs.
    size_index
        Which size.
    """
    out = {}
    for m in sweep.lr_grid:
        ends = [
            float(np.mean(r.pass_rate[-sweep.lr_last :]))
            for s in sweep.lr_seeds
            if (r := lr_results.get((size_index, m, s))) is not None
        ]
        out[m] = float(np.mean(ends)) if ends else float("nan")
    return out


def select_lr(sweep: Any, lr_results: dict, size_index: int) -> float:
    """The selected multiplier of the width rule's learning rate for one size.

    Highest :func:`lr_scores`, ties to the smaller multiplier; 1.0 (the width rule)
    when no run of the size finished.
    """
    scores = lr_scores(sweep, lr_results, size_index)
    finite = {m: v for m, v in scores.items() if np.isfinite(v)}
    if not finite:
        return 1.0
    best = max(finite.values())
    return float(min(m for m, v in finite.items() if v == best))


def lr_stage_dataset(sweep: Any, lr_results: dict) -> xr.Dataset:
    """The stage's curves and scores as a Dataset to merge into the sweep's.

    Returns
    -------
    xarray.Dataset
        ``lr_pass_rate``, ``lr_flops`` (model_size, lr_mult, lr_seed, lr_eval);
        ``lr_score`` (model_size, lr_mult), the selection statistic; coordinate
        ``lr_eval_step`` (lr_eval).
    """
    names = [s.name for s in sweep.sizes]
    grid, seeds = list(sweep.lr_grid), list(sweep.lr_seeds)
    steps = sorted(
        {0, *range(sweep.eval_every, sweep.lr_steps + 1, sweep.eval_every), sweep.lr_steps}
    )
    shape = (len(names), len(grid), len(seeds), len(steps))
    rate, flops = np.full(shape, np.nan), np.full(shape, np.nan)
    for (i, m, s), r in lr_results.items():
        j, k = grid.index(m), seeds.index(s)
        rate[i, j, k, : len(r.pass_rate)] = r.pass_rate
        flops[i, j, k, : len(r.eval_flops)] = r.eval_flops
    score = np.array(
        [[lr_scores(sweep, lr_results, i)[m] for m in grid] for i in range(len(names))]
    )
    dims = ("model_size", "lr_mult", "lr_seed", "lr_eval")
    return xr.Dataset(
        {
            "lr_pass_rate": (dims, rate, {"long_name": "held-out pass rate, learning-rate stage"}),
            "lr_flops": (dims, flops, {"units": "FLOP"}),
            "lr_score": (
                ("model_size", "lr_mult"),
                score,
                {"long_name": f"mean pass rate over the last {sweep.lr_last} evaluations"},
            ),
        },
        coords={
            "model_size": names,
            "lr_mult": grid,
            "lr_seed": seeds,
            "lr_eval": np.arange(len(steps)),
            "lr_eval_step": ("lr_eval", np.array(steps)),
            "lr_rule": ("model_size", [sweep.rule_lr(s) for s in sweep.sizes]),
        },
    )
