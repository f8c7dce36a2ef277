"""How often the report's interval covers the all-runs value when only a few runs exist.

The paper recommends stratified-bootstrap intervals for the few-run regime (3-10
runs per task), where a bootstrap is least trustworthy. This module checks the
interval the report uses there: from an algorithm with many runs (e.g. 100 per
task), it draws ``n`` runs per task without replacement many times, computes the
interval on each subsample, and counts how often it contains the metric on
*all* runs (taken as the truth: with 100 runs its own noise is small next to an
``n``-run interval, which makes the count, if anything, slightly pessimistic).

The counts are binomial: each coverage comes with a Wilson score interval,
computed here by ``statsmodels``; a coverage-calibration module may replace this
one-function summary later (``coverage_table`` takes any ``interval`` callable).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import keyed_generators
from scalinglab.stats.layout import algorithm_tables, check_scores
from scalinglab.stats.metrics import AGGREGATES, resolve_metrics
from scalinglab.stats.table_intervals import table_interval
from scalinglab.stats.variability import subsample_runs

__all__ = ["bootstrap_interval", "coverage_table"]

#: ``interval(table, metrics, rng) -> (lo, hi)``, each of shape ``(len(metrics),)``.
IntervalFn = Callable[
    [np.ndarray, Sequence[str], np.random.Generator], tuple[np.ndarray, np.ndarray]
]


def bootstrap_interval(*, reps: int, level: float, method: str) -> IntervalFn:
    """The stratified-bootstrap interval of :func:`~scalinglab.stats.intervals.interval_estimates`."""

    def interval(
        table: np.ndarray, metrics: Sequence[str], rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        _, lo, hi = table_interval(table, metrics, reps=reps, level=level, method=method, rng=rng)
        return lo, hi

    return interval


def coverage_table(
    scores: xr.DataArray,
    *,
    run_counts: Sequence[int] = (3, 5, 10),
    min_runs: int = 50,
    subsamples: int = 200,
    metrics: tuple[str, ...] | list[str] | str = ("iqm", "median"),
    interval: IntervalFn,
    level: float = 0.95,
    rng: np.random.Generator,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Coverage of ``interval`` on ``n``-run subsamples of the algorithms with many runs.

    Parameters
    ----------
    scores
        Dims ``(algorithm, run, task)``; NaN = absent run.
    run_counts
        Runs per task of the few-run evaluations.
    min_runs
        Only algorithms with at least this many runs on every task take part
        (their all-runs value stands for the truth); the others are skipped.
    subsamples
        Subsamples (intervals) per algorithm and run count.
    interval
        The interval under test (e.g. :func:`bootstrap_interval`).
    level
        The interval's nominal level (shown beside the coverage).

    Returns
    -------
    table, skipped
        ``table`` indexed by ``(n_runs, metric)`` with columns ``covered``,
        ``intervals`` (over all eligible algorithms), ``coverage``,
        ``wilson_lo``, ``wilson_hi`` (95% Wilson interval of the coverage),
        ``nominal``, ``algorithms``; ``skipped`` maps each left-out algorithm to
        its reason.
    """
    from statsmodels.stats.proportion import proportion_confint

    names = resolve_metrics(metrics)
    checked = check_scores(scores)
    tables = algorithm_tables(checked)
    eligible, skipped = {}, {}
    for name, values in tables.items():
        own = int((~np.isnan(values)).sum(axis=0).min())
        if own >= max(min_runs, max(run_counts) + 1):
            eligible[name] = values
        else:
            skipped[name] = f"{own} runs on some task (fewer than {min_runs})"
    if not eligible:
        raise InputError(
            f"no algorithm has {min_runs} runs on every task to check few-run coverage"
        )
    gens = keyed_generators(rng, [f"{a}/n={n}" for n in run_counts for a in eligible])
    rows = []
    for n in run_counts:
        covered = np.zeros(len(names), dtype=int)
        for name, values in eligible.items():
            truth = np.array([AGGREGATES[m](values[None])[0] for m in names])
            g = gens[f"{name}/n={n}"]
            subs = subsample_runs(values, n_runs=int(n), draws=subsamples, rng=g)
            for sub in subs:
                lo, hi = interval(sub, names, g)
                covered += (lo <= truth) & (truth <= hi)
        total = subsamples * len(eligible)
        for m_i, m in enumerate(names):
            w_lo, w_hi = proportion_confint(int(covered[m_i]), total, alpha=0.05, method="wilson")
            rows.append(
                {
                    "n_runs": int(n),
                    "metric": m,
                    "covered": int(covered[m_i]),
                    "intervals": total,
                    "coverage": covered[m_i] / total,
                    "wilson_lo": float(w_lo),
                    "wilson_hi": float(w_hi),
                    "nominal": float(level),
                    "algorithms": len(eligible),
                }
            )
    return pd.DataFrame(rows).set_index(["n_runs", "metric"]), skipped
