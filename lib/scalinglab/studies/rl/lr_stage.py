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
loses); ties go to the smaller multiplier. A multiplier under which any run
*collapsed* (:func:`lr_collapses`: its end below half its R0) is excluded unless every
multiplier has a collapse: the first ``medium`` sweep chose 1x at three sizes on
300-step runs, then two of five 2000-step runs at the 64-wide size fell to a pass
rate of 0, one of them within 100 steps, from a seed the stage had not run (the same
seed at 0.5x climbed to 0.8 in 1000 steps). With ``lr_keep`` below 1 the rule is
conservative: the *smallest* stable multiplier whose gain over R0 reaches ``lr_keep``
of the best stable multiplier's gain (a short run ranks the fastest learner first,
and the fastest is the nearest to instability; 0.8 gives up at most a fifth of the
short-run gain for a learning rate at least one grid step below the edge of
stability). A selected multiplier on the edge of the grid is reported as such by the
notebook (the optimum may lie outside it).

The stage is kept as a result: :func:`lr_stage_dataset` gives its curves as
``lr_pass_rate`` / ``lr_flops`` with dims ``(model_size, lr_mult, lr_seed, lr_eval)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr


def _ends(sweep: Any, lr_results: dict, size_index: int) -> dict[float, list[tuple[float, float]]]:
    """Per multiplier, ``(end, R0)`` of each finished run of one size: its mean pass rate
    over the last ``lr_last`` evaluations, and the pass rate it started from."""
    return {
        m: [
            (float(np.mean(r.pass_rate[-sweep.lr_last :])), float(r.pass_rate[0]))
            for s in sweep.lr_seeds
            if (r := lr_results.get((size_index, m, s))) is not None
        ]
        for m in sweep.lr_grid
    }


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def lr_gains(sweep: Any, lr_results: dict, size_index: int) -> dict[float, float]:
    """Mean end-of-run gain over R0 (:func:`lr_scores` minus the runs' mean R0)."""
    return {
        m: _mean([e - r0 for e, r0 in runs])
        for m, runs in _ends(sweep, lr_results, size_index).items()
    }


def lr_scores(sweep: Any, lr_results: dict, size_index: int) -> dict[float, float]:
    """Mean end-of-run pass rate per multiplier for one size (NaN where no run finished).

    Parameters
    ----------
    sweep
        The :class:`~scalinglab.studies.rl.config.RLSweepConfig` (``lr_grid``,
        ``lr_seeds``, ``lr_last``).
    lr_results
        ``(size_index, multiplier, seed) -> RunResult`` of the stage's finished runs.
    size_index
        Which size.
    """
    return {
        m: _mean([e for e, _ in runs]) for m, runs in _ends(sweep, lr_results, size_index).items()
    }


def lr_collapses(sweep: Any, lr_results: dict, size_index: int) -> dict[float, int]:
    """Runs per multiplier whose end (mean of the last ``lr_last`` evaluations) fell
    below half their R0 (the pass rate they started from), for one size."""
    return {
        m: sum(e < 0.5 * r0 for e, r0 in runs)
        for m, runs in _ends(sweep, lr_results, size_index).items()
    }


def select_lr(sweep: Any, lr_results: dict, size_index: int) -> float:
    """The selected multiplier of the width rule's learning rate for one size.

    Highest :func:`lr_scores` among the multipliers without a collapse
    (:func:`lr_collapses`; all of them if every one has), ties to the smaller
    multiplier; with ``sweep.lr_keep < 1``, the smallest of them whose
    :func:`lr_gains` reaches ``lr_keep`` times the best one's. 1.0 (the width rule)
    when no run of the size finished.
    """
    scores = lr_scores(sweep, lr_results, size_index)
    gains = lr_gains(sweep, lr_results, size_index)
    collapses = lr_collapses(sweep, lr_results, size_index)
    finite = {m: v for m, v in scores.items() if np.isfinite(v)}
    stable = {m: v for m, v in finite.items() if collapses[m] == 0}
    finite = stable or finite
    if not finite:
        return 1.0
    best = max(finite.values())
    top = min(m for m, v in finite.items() if v == best)
    keep = float(getattr(sweep, "lr_keep", 1.0))
    if keep < 1.0 and gains[top] > 0:
        return float(min(m for m in finite if gains[m] >= keep * gains[top]))
    return float(top)


def lr_stage_dataset(sweep: Any, lr_results: dict) -> xr.Dataset:
    """The stage's curves and scores as a Dataset to merge into the sweep's.

    Returns
    -------
    xarray.Dataset
        ``lr_pass_rate``, ``lr_flops`` (model_size, lr_mult, lr_seed, lr_eval);
        ``lr_score`` (model_size, lr_mult), the selection statistic; ``lr_collapsed``
        (model_size, lr_mult), runs that collapsed (:func:`lr_collapses`); coordinate
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
    per_size = range(len(names))
    score = np.array([list(lr_scores(sweep, lr_results, i).values()) for i in per_size])
    collapsed = np.array([list(lr_collapses(sweep, lr_results, i).values()) for i in per_size])
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
            "lr_collapsed": (
                ("model_size", "lr_mult"),
                collapsed,
                {"long_name": "runs ending below half their R0", "units": "runs"},
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
