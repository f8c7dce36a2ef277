"""The ``v3`` extension's second stage at l: more primary-arm runs, sized and stated before them.

Why
---
After the first stage (:mod:`.extension`: 12 more RL seeds at l and 4 at xl, both arms),
the primary arm (``baseline``, the width rule's learning rate) has A off its bound at 2
sizes of 4 (m, xl); the issue's done-when asks for 3. s saturates at A = 1 (the task's
ceiling there, not a short horizon), so l is the one size that can still move. l has 16
runs, 5 of them stable (all from warm start 1; warm start 0 kept none of 8), and its
pooled sigmoid has A at the bound 1 in 27-30% of bootstrap refits, above the project's
:data:`~scalinglab.estimate.BOUND_SHARE` of 0.2 (not identified). Three of the 5 stable
runs have their own A on the bound.

What
----
One more block, ``ext-l2``: size l, the ``baseline`` arm only, :data:`EXTRA` = 24 runs
with run index 20-43, warm-start major (12 new RL seeds from each of the 2 warm starts,
RL seeds 10-21), everything else the ``v3`` recipe (:func:`second_stage_blocks`; tested
to differ from ``v3`` only in its cells and seeds). ``half_lr`` is not run again: its A
at l is identified on 12 stable runs, and the paired comparisons over seeds use the
seeds both arms ran. Both warm starts stay equally represented although warm start 0 has
kept no stable run so far: running only warm start 1 would choose the base model by its
outcome, and A at l is a claim about the size, not about one warm start.

Sizing (:func:`resampled_identification`, stated before the runs)
-----------------------------------------------------------------
New runs are drawn as whole existing runs of l ``baseline`` (with replacement, half from
each warm start), the stable ones joined to the 5 stable runs, the pooled sigmoid
refitted with 400 bootstrap refits, and A counted as identified when under 20% of those
refits sit on the bound and the point fit is off it (the report's rule). Over 200
simulated designs per block size (generator seed 1; Monte Carlo error of P 0.03-0.035):

=========== ==== ==== ==== ==== ===== ====
extra runs  4    8    12   16   24    32
P(ident.)   0.28 0.48 0.61 0.67 0.755 0.76
=========== ==== ==== ==== ==== ===== ====

(0 extra runs: P = 0, median share of refits at the bound 0.275.) Resampling cannot
make runs unlike those seen, so P flattens below the first stage's target of 0.8. The
rule, written before the 24- and 32-run results came in: the smallest simulated block
whose P is within 0.05 of the largest one's. That is 24. The stage may therefore still leave A at l unidentified
(about one chance in four), and it is reported as it comes out, with the all-runs
sensitivity and the ``half_lr`` arm beside it.

Cost: 24 runs at 4.5 core-minutes (the ``v3`` runs at l ``baseline``) plus the two
warm-ups: about 1.9 core-hours, run by :mod:`.extension_run` (two worker processes,
``--part 0/2`` and ``--part 1/2``, after the warm-ups).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from scalinglab.estimate import BOUND_SHARE
from scalinglab.fitting import identification
from scalinglab.studies.rl.config import RLSweepConfig, sweep_config
from scalinglab.studies.rl.extension import BASE, extension_blocks

#: The block's name (its file ``grpo-v3-ext-l2-<hash>.nc``).
NAME = "ext-l2"
#: The size it runs (tests run a ``tiny_v3`` stand-in: that design's first size).
SIZE = "l"
#: The arm it runs.
ARM = "baseline"
#: Runs in the block (a multiple of the warm starts).
EXTRA = 24


def second_stage_blocks(base: RLSweepConfig | None = None) -> dict[str, RLSweepConfig]:
    """``{"ext-l2": config}``: ``base`` (default ``sweep_config("v3")``) at size l, the
    ``baseline`` arm only, :data:`EXTRA` seeds continuing the first stage's run index."""
    base = sweep_config(BASE) if base is None else base
    first = extension_blocks(base)
    names = [s.name for s in base.sizes]
    size = SIZE if base.compute_class == BASE else names[0]
    start = max(s for b in first.values() for s in b.seeds) + 1
    return {
        NAME: dataclasses.replace(
            base,
            sizes=(base.sizes[names.index(size)],),
            variants={ARM: base.variants[ARM]},
            variant_sizes={},
            seeds=tuple(range(start, start + EXTRA)),
        )
    }


def design_blocks(base: RLSweepConfig | None = None) -> dict[str, RLSweepConfig]:
    """Every later block of the ``v3`` design, in run order: the first stage
    (:func:`.extension.extension_blocks`) then :func:`second_stage_blocks`."""
    return {**extension_blocks(base), **second_stage_blocks(base)}


def resampled_identification(
    curves: pd.DataFrame,
    *,
    stable_seeds: set[int],
    extra: int,
    sims: int,
    reps: int = 400,
    seed: int = 1,
) -> dict[str, float]:
    """P(A identified) if ``extra`` more runs were drawn like the runs seen.

    Parameters
    ----------
    curves
        One (variant, size)'s evaluations (:func:`.analysis.curves_frame` rows): columns
        ``seed``, ``warm_start``, ``compute``, ``pass_rate``, ``n_params``, ``variant``,
        ``model_size``.
    stable_seeds
        The seeds that are stable (:func:`.scope.run_scope`'s rule).
    extra
        Runs added per simulated design, half from each warm start.
    sims, reps, seed
        Simulated designs, bootstrap refits per pooled fit, and the generator's seed.

    Returns
    -------
    dict
        ``p`` (share of designs whose pooled A is identified: under
        :data:`~scalinglab.estimate.BOUND_SHARE` of refits on the bound, not on it in the
        point fit), ``p_se`` (its binomial Monte Carlo error), ``median_share`` (of
        refits on the bound), ``extra``, ``sims``.
    """
    from scalinglab.studies.rl.analysis import fit_scalerl

    if extra % 2:
        raise ValueError(f"resampled_identification: extra={extra} is not a whole pair")
    rng = np.random.default_rng(seed)
    by_run = dict(tuple(curves.groupby("seed", sort=True)))
    warms = sorted(curves["warm_start"].unique())
    pool = {w: sorted(curves.loc[curves["warm_start"] == w, "seed"].unique()) for w in warms}
    kept = [by_run[s] for s in sorted(stable_seeds)]
    ok, shares = 0, []
    for k in range(sims):
        parts = list(kept)
        for w in warms:
            for j, s in enumerate(rng.choice(pool[w], extra // len(warms))):
                if s in stable_seeds:
                    parts.append(by_run[s].assign(seed=10_000 + 100 * int(w) + j))
        _, fits = fit_scalerl(pd.concat(parts), reps=reps, seed=seed + k)
        ident = identification(next(iter(fits.values())), "A")
        shares.append(ident.share_at_bound)
        ok += bool(ident.identified)
    p = ok / sims
    return {
        "extra": extra,
        "sims": sims,
        "p": p,
        "p_se": float(np.sqrt(p * (1 - p) / sims)),
        "median_share": float(np.median(shares)),
        "bound_share": BOUND_SHARE,
    }
