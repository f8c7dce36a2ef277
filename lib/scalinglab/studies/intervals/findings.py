"""The interval-estimates study's findings: one call per step of the notebook.

Each function takes what a step of ``notebooks/interval_estimates.py`` computed (a
labelled result of :mod:`scalinglab.stats` or of this study's modules) and records its
findings with :func:`scalinglab.record.record`, under the names the report, its prose
(``{{ name }}``) and its claims file (``notebooks/claims/interval_estimates.toml``) use.
A rate that is 0 (or 1) in every outer replicate gets the Wilson end over the draws it
was counted on (:func:`scalinglab.stats.calibration.share_with_floor`), never a
zero-width interval. :func:`decide_claims` declares the claims file with the values its
templates name.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.record import claims_from, record
from scalinglab.stats.calibration import share_with_floor
from scalinglab.studies.intervals.orderings import fewest_runs

__all__ = [
    "decide_claims",
    "record_aggregates",
    "record_coverage",
    "record_few_run_rates",
    "record_iqm_differences",
    "record_poi",
    "record_separated_flips",
    "record_top_share",
    "record_width_ratio",
]

#: IE-1's rates: statistic of ``few_run_flip_rates`` -> (finding stem, what it counts).
FEW_RUN_RATES = {
    "ranking_change_rate": (
        "rank_flip_rate",
        "whose {m} ranking of all algorithms differs from the all-runs ranking",
    ),
    "winner_change_rate": (
        "winner_change_rate",
        "whose best algorithm by {m} is not the all-runs best",
    ),
    "pair_flip_rate": (
        "pair_flip_rate",
        "(mean over algorithm pairs) ordering the pair by {m} unlike all runs",
    ),
}


def _runs(cell: xr.Dataset) -> dict[str, int]:
    """``{"n": runs}`` from a cell's ``n_runs`` (the fewest runs per task its stratified
    bootstrap resampled), else ``{}``."""
    return {"n": int(cell["n_runs"])} if "n_runs" in cell else {}


def record_few_run_rates(
    few: xr.Dataset, *, few_runs: int, few_draws: int, scores: xr.DataArray | None = None
) -> None:
    """Step 2: IE-1's rates (IQM and median) with their Monte Carlo errors, and each
    algorithm's spread of few-run medians.

    Parameters
    ----------
    few
        :func:`scalinglab.stats.few_run_flips.few_run_flip_rates`'s result (dims
        ``statistic, metric``; ``spread`` over ``algorithm, metric``).
    few_runs, few_draws
        Runs per task of a few-run evaluation, and the draws behind each rate.
    scores
        The scores ``few`` was computed on: the fewest runs per task of the algorithms
        it kept is the ``n`` of the outer stratified bootstrap (None: not recorded).
    """
    runs = {} if scores is None else {"n": fewest_runs(scores, few.algorithm.values)}
    for stat, (stem, text) in FEW_RUN_RATES.items():
        for metric in ("iqm", "median"):
            cell = few.sel(statistic=stat, metric=metric)
            est = Estimate.from_cell(
                cell,
                note=f"Monte Carlo standard error of the point ({few_draws} draws): "
                f"{float(cell['mc_se']):.3f}",
                **runs,
            )
            record(
                f"{stem}/few_runs" + ("" if metric == "iqm" else f"/{metric}"),
                share_with_floor(est, n=few_draws),
                description=f"fraction of {few_runs}-run studies " + text.format(m=metric),
            )
    for alg in few.algorithm.values:
        record(
            f"few_run_spread/{alg}/median",
            Estimate(
                float(few["spread"].sel(algorithm=alg, metric="median")),
                method=f"central 95% range of {few_draws} {few_runs}-run medians over the "
                "all-runs median",
            ),
            description=f"spread of {alg}'s {few_runs}-run median estimates, relative to its "
            "all-runs median",
        )


def record_coverage(coverage: pd.DataFrame | None, *, method: str, confidence: float) -> None:
    """Step 2's few-run coverage check: one finding per (runs per task, metric).

    Parameters
    ----------
    coverage
        :func:`scalinglab.studies.intervals.few_run_coverage.coverage_table`'s table
        (indexed by ``(n, metric)``), or None when no algorithm had enough runs.
    method, confidence
        The report's interval method and level (named in the note).
    """
    if coverage is None:
        return
    for (n, metric), row in coverage.iterrows():
        record(
            f"few_run_coverage/{metric}/n={n}",
            Estimate(
                row["coverage"],
                row["wilson_lo"],
                row["wilson_hi"],
                level=0.95,
                method="Wilson score interval of the covered count",
                # counts as whole numbers (iterrows gives a float row): "1058 of 1200"
                note=f"{int(row['covered'])} of {int(row['intervals'])} {method} intervals at "
                f"{confidence:.0%} covered the all-runs value",
                n=int(row["intervals"]),
            ),
            description=f"coverage of the {method} {metric} interval with {n} runs per task",
        )


def record_aggregates(
    ci: xr.Dataset, algorithms: Sequence[str], *, scores: xr.DataArray | None = None
) -> str:
    """Step 3: every (metric, algorithm) interval; the best algorithm by IQM is the
    headline. Returns that algorithm. ``scores``: the scores ``ci`` was computed on, whose
    fewest runs per task of each algorithm is its stratified bootstrap's ``n`` (None:
    not recorded)."""
    ranked = list(ci["point"].sel(metric="iqm").to_series().sort_values(ascending=False).index)
    best = str(ranked[0])
    for alg in algorithms:
        runs = {} if scores is None else {"n": fewest_runs(scores, [alg])}
        for metric in ci.metric.values:
            record(
                f"{metric}/{alg}",
                Estimate.from_cell(ci.sel(algorithm=alg, metric=metric), **runs),
                description=f"{metric} normalized score of {alg}",
                headline=(metric == "iqm" and alg == best),
            )
    return best


def record_width_ratio(ratio: xr.Dataset, *, scores: xr.DataArray | None = None) -> None:
    """Step 4: the median's CI width over the IQM's, overall (headline) and per algorithm.
    ``scores``: the scores the ratio was computed on, whose fewest runs per task (of the
    algorithm, or of all for the overall ratio) is the outer stratified bootstrap's ``n``
    (None: not recorded)."""
    for label in ratio.algorithm.values:
        runs = (
            {}
            if scores is None
            else {"n": fewest_runs(scores, None if label == "(all)" else [str(label)])}
        )
        name = (
            "ci_width_ratio/median_over_iqm"
            if label == "(all)"
            else f"ci_width_ratio/median_over_iqm/{label}"
        )
        record(
            name,
            Estimate.from_cell(ratio.sel(algorithm=label), **runs),
            description="median CI width / IQM CI width"
            + (" (mean widths over algorithms)" if label == "(all)" else f" for {label}"),
            headline=label == "(all)",
        )


def record_poi(
    poi: xr.Dataset, *, adjacent: int, runs: int, scores: xr.DataArray | None = None
) -> None:
    """Step 6: P(X > Y) of every compared pair; the first ``adjacent`` (the leaderboard's
    adjacent pairs) are headlines. Every run of X above every run of Y gets Wilson's end
    over the ``runs`` per task, not ``[1, 1]``. ``scores``: the fewest runs per task of X
    and Y there is the stratified bootstrap's ``n`` (None: not recorded)."""
    for i, pair in enumerate(poi.pair.values):
        cell = poi.sel(pair=pair)
        x, y = str(cell["x"].item()), str(cell["y"].item())
        n = {} if scores is None else {"n": fewest_runs(scores, [x, y])}
        record(
            f"poi/{x}_vs_{y}",
            share_with_floor(Estimate.from_cell(cell, **n), n=runs),
            description=f"P({x} > {y}) on a random task",
            headline=i < adjacent,
        )


def record_iqm_differences(iqm_diff: xr.Dataset) -> None:
    """Step 7: IQM(X) - IQM(Y) of each adjacent leaderboard pair."""
    for pair in iqm_diff.pair.values:
        cell = iqm_diff.sel(pair=pair)
        x, y = str(cell["x"].item()), str(cell["y"].item())
        record(
            f"iqm_diff/{x}_vs_{y}",
            Estimate.from_cell(cell, **_runs(cell)),
            description=f"IQM({x}) - IQM({y})",
        )


def record_separated_flips(
    flips: xr.Dataset, *, separated: int, few_runs: int, few_draws: int
) -> None:
    """Step 7: the few-run flip rate over the ``separated`` pairs all runs separate (the
    median's is the headline)."""
    for metric in flips.metric.values:
        record(
            f"pair_flip_rate/separated/{metric}",
            share_with_floor(
                Estimate.from_cell(flips.sel(pair="(mean)", metric=metric)), n=few_draws
            ),
            description=f"mean over the {separated} pairs that all runs separate of the "
            f"fraction of {few_runs}-run studies ordering the pair (by {metric}) unlike all "
            "runs",
            headline=metric == "median",
        )


def record_top_share(share: xr.Dataset, ci: xr.Dataset, algorithms: Sequence[str]) -> None:
    """Step 7: each algorithm's share of its mean score from its top tasks; the algorithm
    with the highest mean is the headline."""
    k, n_tasks = share.attrs["k"], share.attrs["tasks"]
    top_by_mean = str(ci["point"].sel(metric="mean").to_series().idxmax())
    for alg in algorithms:
        cell = share.sel(algorithm=alg)
        record(
            f"mean_top_share/{alg}",
            Estimate.from_cell(cell, **_runs(cell)),
            description=f"share of {alg}'s mean score from its top {k} of {n_tasks} tasks "
            f"({', '.join(map(str, cell['top_tasks'].values))}; equal shares: "
            f"{k / n_tasks:.2f})",
            headline=alg == top_by_mean,
        )


def decide_claims(
    *,
    scores: str,
    board_pairs: Sequence[tuple[str, str]],
    few_runs: int,
    algorithms: Sequence[str],
    share: xr.Dataset,
) -> pd.DataFrame:
    """Step 8: declare ``notebooks/claims/interval_estimates.toml`` with the values its
    templates name; the scope and regime follow the data (the paper's released scores,
    a user's files, or this project's benchmark).

    Returns
    -------
    pandas.DataFrame
        One row per claim (index ``claim``): ``verdict`` and ``why``.
    """
    paper_data = scores.startswith("data/published/rliable/")
    k, n_tasks = share.attrs["k"], share.attrs["tasks"]
    verdicts = claims_from(
        "interval_estimates",
        data="paper" if paper_data else ("user" if scores else "study"),
        regime=f"paper data: {scores}"
        if paper_data
        else "outside: this project's small-classifier benchmark, not the paper's RL benchmarks",
        board_scope="benchmark" if paper_data else "project",
        atari_regime=f"paper data: {scores}"
        if "atari" in scores
        else "outside: an observation on Atari, tested on other data",
        board=[{"x": x, "y": y} for x, y in board_pairs],
        few_runs=few_runs,
        algorithms=list(algorithms),
        k=k,
        n_tasks=n_tasks,
        twice_share=2 * k / n_tasks,
    )
    return pd.DataFrame(
        [{"claim": v.claim.id, "verdict": v.verdict, "why": v.reason} for v in verdicts]
    ).set_index("claim")
