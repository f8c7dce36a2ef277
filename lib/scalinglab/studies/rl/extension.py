"""The ``v3`` seed extension: more RL seeds at sizes l and xl, stated before its runs.

Why
---
The committed ``v3`` sweep (``data/rl_scaling/grpo-v3-0772a14e38df.nc``, 48 runs) applies
ScaleRL's scope rule (:mod:`.scope`: a run ending more than 0.1 below its peak is unstable;
a (variant, size) needs :data:`~.scope.MIN_STABLE` = 3 stable runs for its pooled sigmoid).
On the primary arm (``baseline``, the width rule's learning rate) A is identified at one
size of four: s saturates at 1 (a limit of the task there), and l keeps 1 stable run of
4, xl 2 of 4, so neither is fitted. The issue's done-when (A off its bound at >= 3 of 4
sizes) needs both l and xl fitted. Choosing ``half_lr`` as the primary arm now, after
seeing that it is more stable, would be a selection made on the data; it is not done.
The design change decided here, before any of its runs exist, is more RL seeds at l and
xl on the primary arm, and the same seeds on ``half_lr`` so the two arms stay comparable.

What
----
Everything but the seeds is the ``v3`` recipe: the same two warm starts per size
(warm-start seeds 0 and 1, re-made from their seeds by the same code; the runner checks
that each reaches the warm-up step and check pass rate ``v3`` recorded, and stops if not),
the same GRPO config, learning rate, steps, evaluation set and evaluation seed (2026).
Each block is ``sweep_config("v3")`` with only ``sizes``, ``variants``/``variant_sizes``
(the cells it runs) and ``seeds`` replaced (:func:`extension_blocks`; tested). A block's
``seeds`` continue ``v3``'s run index (0-3), so its rollout streams are new
(``run_rl(seed=run index)``), warm-start major within the block
(:meth:`~.config.RLSweepConfig.warm_of`):

- ``ext-l``: size l, run index 4-15: 6 new RL seeds (2-7) from each of the 2 warm
  starts, 12 runs per arm;
- ``ext-xl``: size xl, run index 16-19: 2 new RL seeds (8-9) from each warm start,
  4 runs per arm (RL seed labels follow the run index, so no seed label is shared).

Each block has its own cache key (its config hash), run folder
(``data/rl_scaling/.runs/grpo-v3-ext-<size>-<hash>/``) and provenance, and is read
together with ``v3`` as one design (:mod:`.blocks`: concatenated along ``seed``, each
block's config hash, commit and machine kept in the attr ``seed_blocks``).

Sizing (:func:`extra_runs_needed`, from the committed ``v3`` Dataset)
--------------------------------------------------------------------
Stable runs in ``v3`` (:data:`V3_STABLE`): baseline l 1 of 4 (share 0.25, Wilson 95%
0.05-0.70), baseline xl 2 of 4 (0.50, 0.15-0.85); half_lr l 4 of 4, half_lr xl 2 of 4.
The extra runs per size are the fewest, in whole pairs (one per warm start), for which
P(>= 3 stable runs in the joined cell) >= :data:`TARGET` = 0.8 at the primary arm's
observed share, runs independent with that share (binomial):

- l: 2 more stable runs needed; 12 extra runs give P = 0.84 at 0.25 (10 give 0.76);
  at the Wilson ends P = 0.10 (0.05) and 1.00 (0.70);
- xl: 1 more stable run needed; 4 extra runs give P = 0.94 at 0.50; at the Wilson ends
  0.48 (0.15) and 1.00 (0.85).

So the extension may still leave l or xl unfitted (the lower Wilson ends), and it is
reported as it comes out. Runs of one warm start are not independent (at xl both
baseline runs of warm start 0 are unstable); the pairs keep both warm starts equally
represented.

Cost (:func:`measured_cost`, the ``v3`` runs' recorded wall seconds, one thread each
on a shared 2-core machine, so an upper bound of core time): a run takes 4.5 core-minutes
at l baseline, 7.5 at l half_lr, 21.1 at xl baseline, 16.5 at xl half_lr; warm-ups 1-2.
The primary arm's 16 runs are about 2.3 core-hours, the half_lr arm's 16 about 2.6, the
4 warm-ups 0.1: about 5 core-hours, on one niced worker. Runs go in :data:`ORDER`: the
primary arm first (l, then xl), then half_lr (xl, then l), so an extension stopped
early has the primary arm's cells complete first.

Run it (resumable, run by run, progress and ETA): ``python -m
scalinglab.studies.rl.extension_run run`` (:mod:`.extension_run`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy import stats

from scalinglab.stats.calibration import wilson
from scalinglab.studies.rl.config import RLSweepConfig, sweep_config
from scalinglab.studies.rl.scope import MIN_STABLE

#: The design the extension extends (its runs are never re-trained or changed).
BASE = "v3"
#: The committed Dataset of that design (config hash 0772a14e38df).
BASE_HASH = "0772a14e38df"
#: Primary arm first, then the pre-stated secondary arm.
ARMS = ("baseline", "half_lr")
#: Stable runs / runs per (variant, size) in the committed ``v3`` data (the sizing's input).
V3_STABLE = {
    ("baseline", "l"): (1, 4),
    ("baseline", "xl"): (2, 4),
    ("half_lr", "l"): (4, 4),
    ("half_lr", "xl"): (2, 4),
}
#: P(>= MIN_STABLE stable runs) the sizing asks for, at the primary arm's observed share.
TARGET = 0.8
#: Extra runs per size (each arm), in whole pairs over the 2 warm starts.
EXTRA_RUNS = {"l": 12, "xl": 4}
#: The order the cells run in: (variant, size).
ORDER = (("baseline", "l"), ("baseline", "xl"), ("half_lr", "xl"), ("half_lr", "l"))


def p_enough(have: int, extra: int, share: float, *, need: int = MIN_STABLE) -> float:
    """P(at least ``need`` stable runs) when ``have`` are stable and ``extra`` more runs
    are each stable with probability ``share`` (independent: binomial)."""
    more = need - have
    if more <= 0:
        return 1.0
    return float(stats.binom.sf(more - 1, extra, share))


def extra_runs_needed(
    stable: int,
    runs: int,
    *,
    need: int = MIN_STABLE,
    target: float = TARGET,
    step: int = 2,
    level: float = 0.95,
    max_extra: int = 40,
) -> dict:
    """The fewest extra runs (a multiple of ``step``) with P(>= ``need`` stable) >= ``target``
    at the observed share ``stable / runs``, and that P at the share's Wilson ends.

    Returns
    -------
    dict
        ``share``, ``lo``, ``hi`` (Wilson, ``level``), ``extra``, ``p`` (at the share),
        ``p_lo``, ``p_hi`` (at the Wilson ends). ``extra`` is None when no number up to
        ``max_extra`` reaches ``target`` (a share of 0).
    """
    share = stable / runs
    lo, hi = (float(v) for v in wilson(stable, runs, level=level))
    extra = next(
        (
            e
            for e in range(0, max_extra + 1, step)
            if p_enough(stable, e, share, need=need) >= target
        ),
        None,
    )
    at = extra if extra is not None else max_extra
    return {
        "share": share,
        "lo": lo,
        "hi": hi,
        "extra": extra,
        "p": p_enough(stable, at, share, need=need),
        "p_lo": p_enough(stable, at, lo, need=need),
        "p_hi": p_enough(stable, at, hi, need=need),
    }


def sizing_table(stable: dict[tuple[str, str], tuple[int, int]] | None = None) -> pd.DataFrame:
    """:func:`extra_runs_needed` per (variant, size) of ``stable`` (default
    :data:`V3_STABLE`), with the P(>= 3 stable) the design's :data:`EXTRA_RUNS` give."""
    stable = V3_STABLE if stable is None else stable
    rows = []
    for (variant, size), (k, n) in stable.items():
        r = extra_runs_needed(k, n)
        planned = EXTRA_RUNS[size]
        rows.append(
            {
                "variant": variant,
                "model_size": size,
                "stable": k,
                "runs": n,
                **r,
                "planned": planned,
                "p_planned": p_enough(k, planned, r["share"]),
            }
        )
    return pd.DataFrame(rows).set_index(["variant", "model_size"])


def extension_blocks(base: RLSweepConfig | None = None) -> dict[str, RLSweepConfig]:
    """The extension's blocks, ``{"ext-l": config, "ext-xl": config}``.

    Each is ``base`` (default ``sweep_config("v3")``) with only the cells it runs
    (``sizes``: its one size; ``variants``: :data:`ARMS`; ``variant_sizes``: none) and
    ``seeds`` replaced; the seeds continue ``base``'s run index, block after block.
    ``base`` may be another design with warm starts (tests use ``tiny_v3``, whose sizes
    s and m stand in for l and xl, in that order).
    """
    base = sweep_config(BASE) if base is None else base
    if not base.warm_starts:
        raise ValueError("extension_blocks: the base design needs warm_starts (v3 layout)")
    names = [s.name for s in base.sizes]
    sizes = list(EXTRA_RUNS) if base.compute_class == BASE else names[: len(EXTRA_RUNS)]
    start = max(base.seeds) + 1
    out = {}
    for size, extra in zip(sizes, EXTRA_RUNS.values(), strict=True):
        spec = base.sizes[names.index(size)]
        out[f"ext-{size}"] = dataclasses.replace(
            base,
            sizes=(spec,),
            variants={a: base.variants[a] for a in ARMS},
            variant_sizes={},
            seeds=tuple(range(start, start + extra)),
        )
        start += extra
    return out


def measured_cost(ds) -> pd.DataFrame:
    """Core-minutes per GRPO run and per warm-up at each (variant, size) of a finished
    sweep, from its recorded wall seconds (the last evaluation's ``wall_s``; one thread
    per run, so wall time on a shared machine bounds core time from above).

    Returns
    -------
    pandas.DataFrame
        Indexed by (``variant``, ``model_size``): ``runs``, ``mean_min``, ``max_min``,
        ``warmup_min`` (mean over warm starts).
    """
    wall = ds.wall_s.max("eval").where(ds.status == "ok")
    rows = []
    for v in ds.variant.values:
        for s in ds.model_size.values:
            w = wall.sel(variant=v, model_size=s).values
            w = w[np.isfinite(w)]
            if not len(w):
                continue
            rows.append(
                {
                    "variant": str(v),
                    "model_size": str(s),
                    "runs": len(w),
                    "mean_min": float(w.mean() / 60),
                    "max_min": float(w.max() / 60),
                    "warmup_min": float(ds.warmup_wall_s.sel(model_size=s).mean() / 60),
                }
            )
    return pd.DataFrame(rows).set_index(["variant", "model_size"])


def planned_core_hours(ds) -> dict[str, float]:
    """Core-hours of the extension per arm (and its warm-ups), priced by
    :func:`measured_cost` of the base design's Dataset ``ds``."""
    cost = measured_cost(ds)
    out = {
        arm: sum(EXTRA_RUNS[s] * cost.loc[(arm, s), "mean_min"] for s in EXTRA_RUNS) / 60
        for arm in ARMS
    }
    out["warm-ups"] = sum(2 * cost.loc[(ARMS[0], s), "warmup_min"] for s in EXTRA_RUNS) / 60
    out["total"] = sum(out.values())
    return out
