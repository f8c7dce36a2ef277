"""How often the per-shape tile-effect intervals cover, at the sweep's repeat count, on a
generator resampled from the sweep's own timing repeats.

GEMM-1 is decided on :func:`.analysis.largest_effect`, which is valid when each shape's
worst/best ratio interval (:func:`.analysis.tile_effects`: repeats resampled within
each cell, between-process noise, best and worst re-selected, median-bias shifted)
covers that shape's true ratio. This module measures that coverage on data that look
like the sweep's:

- the **truth**: each stable (shape, tile) cell's median time ``m_c`` as measured, so a
  shape's true worst/best ratio is ``max_c m_c / min_c m_c`` over its tiles;
- a **simulated sweep**: every cell's median moved by a new process,
  ``m_c * exp(N(0, between_sigma))`` (the noise the interval itself assumes), times
  ``n_repeats`` log residuals drawn with replacement from the shape's own pool of
  ``log(t / m_c)`` over its cells' repeats (the exact zeros, each cell's own median,
  left out: they are an artefact of centring on a sample median). A constant in the
  pool's location multiplies every cell of a shape alike and cancels in the ratio;
- on each simulated sweep the report's interval is computed by :func:`.analysis.
  tile_effects` itself (not a copy of it), and each shape scores a hit when its
  interval holds its true ratio.

Measured on the committed sweep (``sweep-10836141a544``: 30 shapes x 27 tiles, 5 repeats,
between-process noise 4.9%), 100 simulated sweeps: the interval centred on the point
covered 0.885 (se 0.005; the truth below the lower end in 0.114: the selected worst tile
is slower than the truly worst one), the bias-corrected one 0.940 (se 0.004); with no
between-process noise the point-centred one covered 0.952.

The coverage is the share of (simulated sweep, shape) hits, with its Monte Carlo
standard error from the per-sweep shares (shapes within one sweep are not independent
draws); the lowest shape's coverage and the two one-sided miss rates (the truth below the
lower end, above the upper end) are reported beside it, since :func:`.analysis.
largest_effect` uses the upper end as it is and the lower end at an adjusted level.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalinglab.studies.gemm.analysis import tile_effects
from scalinglab.studies.gemm.timings import SHAPE, TILE

#: How the per-shape coverage was measured, in words (appended to method texts with it).
GENERATOR = (
    "simulated sweeps resampled from the sweep's own timing repeats (each shape's pooled "
    "log residuals around its cells' medians, cell medians moved by the between-process noise)"
)


def _cells(timings: pd.DataFrame) -> pd.DataFrame:
    """Each timed call with its cell's median ``m`` and log residual ``res``."""
    df = timings.reset_index(drop=True).copy()
    if df.empty:
        raise ValueError("per-shape coverage needs timed calls, got none")
    if not (df["seconds"] > 0).all():
        bad = int(np.flatnonzero(~(df["seconds"] > 0).to_numpy())[0])
        raise ValueError(f"timings: column 'seconds' must be > 0 (row {bad})")
    df["m"] = df.groupby(SHAPE + TILE)["seconds"].transform("median")
    df["res"] = np.log(df["seconds"] / df["m"])
    return df


def tile_effect_coverage(
    timings: pd.DataFrame,
    *,
    between_sigma: float,
    level: float,
    sims: int,
    reps: int,
    seed: int,
    n_repeats: int | None = None,
    debias: bool = True,
) -> dict:
    """Coverage of :func:`.analysis.tile_effects`'s per-shape worst/best ratio interval.

    Parameters
    ----------
    timings
        One row per timed call (``M, N, K, tile_m, tile_n, tile_k, seconds``): the cells
        the report's tile study uses (its stable cells). Their medians are the truth.
    between_sigma
        Log-scale s.d. of a cell median's between-process noise: added by the generator
        and assumed by the interval, as in the report.
    level
        The interval's level.
    sims
        Simulated sweeps.
    reps
        Bootstrap resamples of each simulated interval (the report's own, or fewer: the
        percentile ends move little between 1000 and 2000).
    seed
        Seeds the generator and the simulated intervals' bootstraps.
    n_repeats
        Repeats per simulated cell; default the largest count any cell of ``timings`` has
        (the sweep's ``repeats``).
    debias
        The interval measured: bias-corrected (the report's) or centred on the point
        (:func:`.analysis.selection_interval`).

    Returns
    -------
    dict
        ``coverage`` (share of (sweep, shape) pairs whose interval holds the shape's true
        ratio), ``se`` (its Monte Carlo s.e. over sweeps), ``below`` / ``above`` (share
        with the truth below the lower end / above the upper end), ``worst_shape`` and
        ``worst_coverage`` (the shape covered least often), ``shapes``, ``n`` (repeats per
        cell), ``sims``, ``reps``, ``level``, ``between_sigma``; and ``per_shape``, a
        DataFrame ``M, N, K, true_ratio, coverage, below, above`` (one row per shape).
    """
    if sims < 2:
        raise ValueError(f"per-shape coverage needs sims >= 2, got {sims}")
    if between_sigma < 0:
        raise ValueError(f"between_sigma must be >= 0, got {between_sigma}")
    df = _cells(timings)
    n = int(n_repeats or df.groupby(SHAPE + TILE).size().max())
    if n < 2:
        raise ValueError(f"per-shape coverage needs n_repeats >= 2, got {n}")
    cells = df.drop_duplicates(SHAPE + TILE)[SHAPE + TILE + ["m"]].reset_index(drop=True)
    truth = cells.groupby(SHAPE, sort=False)["m"].agg(lambda m: m.max() / m.min())
    pools = {
        shape: g["res"].to_numpy()[g["res"].to_numpy() != 0.0]
        for shape, g in df.groupby(SHAPE, sort=False)
    }
    for shape, pool in pools.items():
        if pool.size == 0:
            raise ValueError(f"timings: shape {shape} has no spread among its repeats")
    # the simulated sweep's rows: every cell repeated n times
    sim = cells.loc[cells.index.repeat(n)].reset_index(drop=True)
    shape_key = [tuple(r) for r in sim[SHAPE].to_numpy()]
    pool_of = np.array([pools[k] for k in dict.fromkeys(shape_key)], dtype=object)
    order = {k: i for i, k in enumerate(dict.fromkeys(shape_key))}
    row_shape = np.array([order[k] for k in shape_key])
    m_rows = sim["m"].to_numpy()
    cell_of_row = np.repeat(np.arange(len(cells)), n)
    rng = np.random.default_rng(seed)
    hits, below, above = [], [], []
    for i in range(sims):
        shift = rng.normal(0.0, between_sigma, size=len(cells))[cell_of_row]
        res = np.empty(len(sim))
        for j, pool in enumerate(pool_of):
            at = row_shape == j
            res[at] = pool[rng.integers(0, pool.size, size=int(at.sum()))]
        sim["seconds"] = m_rows * np.exp(shift + res)
        eff = tile_effects(
            sim.drop(columns="m"),
            reps=reps,
            level=level,
            seed=int(rng.integers(2**31)),
            between_sigma=between_sigma,
            debias=debias,
        ).set_index(SHAPE)
        t = truth.reindex(eff.index).to_numpy()
        lo, hi = eff["ratio_lo"].to_numpy(), eff["ratio_hi"].to_numpy()
        below.append(t < lo)
        above.append(t > hi)
        hits.append((lo <= t) & (t <= hi))
        if i == 0:
            index = eff.index
    h, b, a = np.array(hits, float), np.array(below, float), np.array(above, float)
    per_sweep = h.mean(axis=1)
    per_shape = pd.DataFrame(
        {
            "true_ratio": truth.reindex(index).to_numpy(),
            "coverage": h.mean(axis=0),
            "below": b.mean(axis=0),
            "above": a.mean(axis=0),
        },
        index=index,
    ).reset_index()
    worst = per_shape.loc[per_shape["coverage"].idxmin()]
    return {
        "coverage": float(h.mean()),
        "se": float(per_sweep.std(ddof=1) / np.sqrt(sims)),
        "below": float(b.mean()),
        "above": float(a.mean()),
        "worst_shape": "x".join(str(int(worst[c])) for c in SHAPE),
        "worst_coverage": float(worst["coverage"]),
        "shapes": int(len(index)),
        "n": n,
        "sims": int(sims),
        "reps": int(reps),
        "level": float(level),
        "between_sigma": float(between_sigma),
        "debias": bool(debias),
        "per_shape": per_shape.sort_values("coverage").reset_index(drop=True),
    }
