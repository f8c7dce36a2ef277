"""Seconds per training step per optimizer, timed side by side rather than read off the sweep.

Why
---
A sweep's runs record their own seconds per step, but each run is a separate process at
a separate time on a shared machine: on the committed ``matched`` sweep the median over
runs puts SOAP at w32 at 0.63x AdamW's step time and Muon at w96 at 0.73x, with a
bootstrap interval over runs that excludes 1, although both do strictly more work per
step than AdamW. That interval measures the machine's load, not the optimizers. Here the
optimizers of one size are timed in alternation, in a seeded random order per round, so
a load that drifts falls on all of them alike, and each round gives a *paired* ratio to
the baseline timed in that same round.

What
----
:func:`measure` times ``steps`` training steps (the sweep's own run config at its tuning
budget, default settings; one torch thread, as the sweep's workers run) of every
(size, optimizer) over ``rounds`` rounds, after one untimed warm-up round: a Dataset
``seconds_per_step (model_size, optimizer, round)`` with the machine, its load average
before and after, and the timing parameters as attributes. :func:`ratio_table` turns it
into each optimizer's step time over the baseline's: the mean over rounds of the
log ratio, with a Student-t interval over rounds (exponentiated). :func:`ratio_draws`
draws from that t distribution, so a wall-clock speedup (token speedup / step-time
ratio, :func:`.analysis.wallclock_table`) can pair them with the token speedup's
bootstrap replicates.

The timing is committed beside the sweep (``data/optimizer_comparison/
step-times-<class>-<hash>.nc``, keyed by the sweep's config and the timing parameters)
and is a separate, explicit run:

.. code-block:: bash

    python -m scalinglab.studies.optimizers.step_times matched   # about 10 min, one core

Hand-written: no library times a training step of our own models; the statistics are
scipy's t.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from tqdm import tqdm

from scalinglab.compute import dataset_path, load_dataset, save_dataset
from scalinglab.errors import InputError
from scalinglab.stats.calibration import t_interval, t_mean_draws
from scalinglab.studies.optimizers.budget import step_seconds
from scalinglab.studies.optimizers.config import SweepConfig, sweep_config
from scalinglab.studies.optimizers.sweep import STUDY

#: The method text of a ratio from :func:`ratio_table`.
PAIRED_TIMING = (
    "timed side by side: {rounds} rounds of {steps} steps per optimizer, alternated in a "
    "random order per round (one thread); mean log ratio to {baseline} in the same round, "
    "Student t over rounds"
)


def timing_config(sweep: SweepConfig, *, steps: int, rounds: int, seed: int) -> dict[str, Any]:
    """The cache key of a timing: the sweep's config and the timing's parameters."""
    return {
        "compute_class": sweep.compute_class,
        "sweep": sweep.to_dict(),
        "steps": int(steps),
        "rounds": int(rounds),
        "seed": int(seed),
    }


def timing_path(sweep: SweepConfig, *, steps: int = 50, rounds: int = 7, seed: int = 0):
    """Where :func:`measure` stores the timing of ``sweep``."""
    cfg = timing_config(sweep, steps=steps, rounds=rounds, seed=seed)
    return dataset_path(STUDY, f"step-times-{sweep.compute_class}", cfg)


def measure(
    sweep: SweepConfig,
    *,
    steps: int = 50,
    rounds: int = 7,
    seed: int = 0,
    optimizers: tuple[str, ...] | None = None,
    progress: bool = True,
) -> xr.Dataset:
    """Time every (size, optimizer) of ``sweep`` in alternation.

    Parameters
    ----------
    sweep
        The sweep whose run configs are timed (its tuning budget, default settings).
    steps
        Training steps per timing (SOAP's preconditioner is rebuilt on its own schedule
        within them).
    rounds
        Timed rounds; each times every optimizer of a size once, in an order drawn from
        ``np.random.default_rng(seed)``. One untimed round comes first.
    optimizers
        Default: the sweep's.

    Returns
    -------
    xarray.Dataset
        ``seconds_per_step (model_size, optimizer, round)``; attrs ``steps``, ``rounds``,
        ``machine``, ``load_before``, ``load_after``, ``measured_at``.
    """
    if rounds < 2:
        raise ValueError(f"measure: need at least 2 rounds for an interval, got {rounds}")
    opts = tuple(optimizers or sweep.optimizers)
    rng = np.random.default_rng(seed)
    out = np.full((len(sweep.sizes), len(opts), rounds), np.nan)
    load = os.getloadavg()[0]
    total = len(sweep.sizes) * len(opts) * (rounds + 1)
    with tqdm(total=total, desc="step times", disable=not progress) as bar:
        for i, size in enumerate(sweep.sizes):
            for r in range(-1, rounds):  # round -1: warm-up, not kept
                for j in rng.permutation(len(opts)):
                    t = step_seconds(sweep, opts[j], size, steps)
                    if r >= 0:
                        out[i, j, r] = t
                    bar.update()
    return xr.Dataset(
        {"seconds_per_step": (("model_size", "optimizer", "round"), out)},
        coords={
            "model_size": [s.name for s in sweep.sizes],
            "optimizer": list(opts),
            "round": np.arange(rounds),
        },
        attrs={
            "steps": steps,
            "rounds": rounds,
            "machine": platform.node(),
            "processor": platform.processor() or platform.machine(),
            "load_before": float(load),
            "load_after": float(os.getloadavg()[0]),
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        },
    )


def _log_ratios(timing: xr.Dataset, optimizer: str, size: str, baseline: str) -> np.ndarray:
    """``(rounds,)`` log step-time ratios of ``optimizer`` over ``baseline`` at ``size``.

    Raises
    ------
    InputError
        A timing without ``seconds_per_step``, or without ``optimizer``, ``baseline`` or
        ``size`` on its coordinates (the message names the file and what it has).
    """
    where = timing.encoding.get("source", "the step-time Dataset")
    if "seconds_per_step" not in timing:
        raise InputError(f"{where}: no variable 'seconds_per_step' (has {list(timing.data_vars)})")
    for dim, value in (("optimizer", optimizer), ("optimizer", baseline), ("model_size", size)):
        have = [str(v) for v in timing[dim].values] if dim in timing.coords else []
        if value not in have:
            raise InputError(f"{where}: coordinate {dim!r} has no {value!r} (has {have})")
    t = timing["seconds_per_step"]
    return np.log(
        t.sel(model_size=size, optimizer=optimizer).values
        / t.sel(model_size=size, optimizer=baseline).values
    )


def ratio_table(
    timing: xr.Dataset, *, baseline: str = "adamw", level: float = 0.95
) -> pd.DataFrame:
    """Each optimizer's step time over the baseline's, per size.

    Returns
    -------
    pandas.DataFrame
        optimizer, model_size, time_ratio (``exp`` of the mean log ratio over rounds),
        ratio_lo, ratio_hi (Student t over rounds, exponentiated), rounds, method.
    """
    rows = []
    for size in timing.model_size.values:
        for o in timing.optimizer.values:
            if o == baseline:
                continue
            x = _log_ratios(timing, str(o), str(size), baseline)
            x = x[np.isfinite(x)]
            n = x.size
            lo, hi = t_interval(x, level=level)
            rows.append(
                {
                    "optimizer": str(o),
                    "model_size": str(size),
                    "time_ratio": float(np.exp(x.mean())),
                    "ratio_lo": float(np.exp(lo)),
                    "ratio_hi": float(np.exp(hi)),
                    "rounds": n,
                    "method": PAIRED_TIMING.format(
                        rounds=n, steps=timing.attrs.get("steps", "?"), baseline=baseline
                    ),
                }
            )
    return pd.DataFrame(rows)


def ratio_draws(
    timing: xr.Dataset,
    optimizer: str,
    size: str,
    *,
    baseline: str = "adamw",
    n: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``(n,)`` draws of the step-time ratio from its Student-t sampling distribution
    (``exp(mean + se t)``, ``t`` on ``rounds - 1`` df), to pair with bootstrap replicates."""
    x = _log_ratios(timing, optimizer, size, baseline)
    return np.exp(t_mean_draws(x[np.isfinite(x)], n=n, rng=rng))


def load(sweep: SweepConfig, **kw: Any) -> xr.Dataset | None:
    """The committed timing of ``sweep`` (:func:`timing_path`), or None."""
    steps, rounds, seed = kw.get("steps", 50), kw.get("rounds", 7), kw.get("seed", 0)
    cfg = timing_config(sweep, steps=steps, rounds=rounds, seed=seed)
    return load_dataset(timing_path(sweep, steps=steps, rounds=rounds, seed=seed), cfg)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("compute_class", help="the sweep whose optimizers are timed (e.g. matched)")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    sweep = sweep_config(a.compute_class)
    path = timing_path(sweep, steps=a.steps, rounds=a.rounds, seed=a.seed)
    ds = measure(sweep, steps=a.steps, rounds=a.rounds, seed=a.seed)
    cfg = timing_config(sweep, steps=a.steps, rounds=a.rounds, seed=a.seed)
    save_dataset(ds, path, config=cfg)
    print(ratio_table(ds).to_string(index=False))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
