"""The ``v3`` design's third stage: more base models at s and xl, sized and stated before them.

Why
---
Since intervals over runs take the base model (warm start) as their unit (:mod:`.units`),
a per-size statement rests on the 2 warm starts ``v3`` made per size: 1 degree of
freedom, however many RL seeds they carry (the first two stages added 40 RL seeds from
the same 2 warm starts at l and xl). TAN-2 (does ``k`` rise from the smallest size to the
largest?) reads ``k(xl) - k(s)`` by Welch's t over warm starts; on the committed runs it
is -0.42 [-1.74, 0.89] ("inconclusive"): s's two base models have ``k`` 0.51 and 0.77,
xl's 0.003 and 0.43, while RL seeds of one base model differ by 0.03-0.10. More RL seeds
cannot narrow that interval; more base models can.

What
----
Two blocks, ``ext-ws-s`` and ``ext-ws-xl`` (:func:`third_stage_blocks`): the ``baseline``
arm at one size each, :data:`NEW_WARM` = 6 new warm starts (warm-start seeds 2-7,
``warm_start0`` = 2), each warmed up by the ``v3`` recipe from its own seed and trained
with one RL seed; everything else the ``v3`` recipe (tested to differ from ``v3`` only
in its cells, seeds and warm starts). Their run index continues the design's (48-53 at s,
54-59 at xl: a multiple of the 6 warm starts, after the second stage's 20-43), so every
run has its own rollout stream. With them s and xl have 8 base models each.

Sizing (:func:`rise_power`, stated before the runs)
---------------------------------------------------
The power of the Welch interval of ``k(xl) - k(s)`` over warm starts to exclude 0 (at
the observed, negative rise: the power to read "differs"), in a
normal model with the committed runs' between-base-model SDs (s 0.184, xl 0.302: each from
2 base models, so themselves uncertain) and RL-seed SDs (s 0.035, xl 0.09), the existing
2 warm starts keeping their RL seeds (2 at s, 4 at xl) and each new one 1 RL seed (20,000
simulated designs per cell, generator seed 7; Monte Carlo error <= 0.004):

============================ ===== ===== ===== =====
warm starts per size          2     4     6     8
P at the observed rise -0.42  0.09  0.44  0.69  0.84
P at 0.7x it (-0.30)          0.06  0.25  0.42  0.56
P at a rise of 0 (each end)   0.01  0.02  0.03  0.03
============================ ===== ===== ===== =====

The rule: the fewest warm starts per size with P >= 0.8 at the observed rise: 8. The
observed rise is itself a 2-base-model estimate, so the stage may well end
"inconclusive" (at 0.7x the rise, about as often as not), and it is reported as it comes
out. m and l get no new base models: TAN-2 compares the smallest and largest sizes, and
the per-size claims (TAN-1-linear, SCALERL-2-final) are left at their present width.

Cost (:func:`.extension.measured_cost` of the ``v3`` runs, one thread each): a warm-up and
a ``baseline`` run take 0.4 + 4.1 core-minutes at s and 1.7 + 21.1 at xl: 6 x 27.3, about
2.7 core-hours, run by :mod:`.extension_run` after the earlier stages' blocks (every run
stored as it finishes; the report reads whatever is finished).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from scalinglab.stats.calibration import welch_interval
from scalinglab.studies.rl.config import RLSweepConfig, sweep_config
from scalinglab.studies.rl.extension import BASE
from scalinglab.studies.rl.second_stage import design_blocks as earlier_blocks

#: The sizes that get new base models (tests run ``tiny_v3``'s first and last sizes).
SIZES = ("s", "xl")
#: The arm they run.
ARM = "baseline"
#: New warm starts per size, one RL seed each.
NEW_WARM = 6


def name_of(size: str) -> str:
    """The block's name (its file ``grpo-v3-ext-ws-<size>-<hash>.nc``)."""
    return f"ext-ws-{size}"


def third_stage_blocks(base: RLSweepConfig | None = None) -> dict[str, RLSweepConfig]:
    """``{"ext-ws-s": config, "ext-ws-xl": config}``: ``base`` (default
    ``sweep_config("v3")``) at one size, the ``baseline`` arm only, :data:`NEW_WARM` new
    warm starts numbered after ``base``'s, one RL seed each, their run index continuing
    the earlier stages' (rounded up to a multiple of :data:`NEW_WARM`)."""
    base = sweep_config(BASE) if base is None else base
    earlier = earlier_blocks(base)
    names = [s.name for s in base.sizes]
    sizes = SIZES if base.compute_class == BASE else (names[0], names[-1])
    start = max(s for b in (base, *earlier.values()) for s in b.seeds) + 1
    start = -(-start // NEW_WARM) * NEW_WARM
    out = {}
    for k, size in enumerate(sizes):
        first = start + k * NEW_WARM
        out[name_of(size)] = dataclasses.replace(
            base,
            sizes=(base.sizes[names.index(size)],),
            variants={ARM: base.variants[ARM]},
            variant_sizes={},
            seeds=tuple(range(first, first + NEW_WARM)),
            warm_starts=NEW_WARM,
            warm_start0=base.warm_starts,
        )
    return out


def design_blocks(base: RLSweepConfig | None = None) -> dict[str, RLSweepConfig]:
    """Every later block of the ``v3`` design, in run order: the first two stages
    (:func:`.second_stage.design_blocks`) then :func:`third_stage_blocks`."""
    return {**earlier_blocks(base), **third_stage_blocks(base)}


def rise_power(
    warm_starts: int,
    rise: float,
    *,
    sd_base: tuple[float, float] = (0.184, 0.302),
    sd_rl: tuple[float, float] = (0.035, 0.09),
    old_rl_seeds: tuple[int, int] = (2, 4),
    level: float = 0.95,
    sims: int = 20_000,
    seed: int = 7,
) -> tuple[float, float]:
    """P(the Welch interval of ``k(largest) - k(smallest)`` over warm starts lies below 0)
    and P(above 0), with ``warm_starts`` per size.

    Each size's first 2 warm starts carry ``old_rl_seeds`` RL seeds (smallest, largest),
    every further one 1; a warm start's value is its base model's ``k`` (normal, SD
    ``sd_base``) plus the mean of its RL seeds' noise (SD ``sd_rl``). The smallest size's
    mean is 0, the largest's ``rise``.
    """
    if warm_starts < 2:
        raise ValueError(f"rise_power: need >= 2 warm starts per size, got {warm_starts}")
    rng = np.random.default_rng(seed)

    def units(sd_b: float, sd_r: float, n_old: int, mu: float) -> np.ndarray:
        rl = np.full(warm_starts, 1.0)
        rl[:2] = n_old
        return (
            mu
            + rng.normal(0, sd_b, (sims, warm_starts))
            + rng.normal(0, 1, (sims, warm_starts)) * (sd_r / np.sqrt(rl))
        )

    small = units(sd_base[0], sd_rl[0], old_rl_seeds[0], 0.0)
    large = units(sd_base[1], sd_rl[1], old_rl_seeds[1], rise)
    _, lo, hi = welch_interval(large, small, level=level)
    return float(np.mean(hi < 0)), float(np.mean(lo > 0))
