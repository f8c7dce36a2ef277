# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: scalinglab
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   scalinglab:
#     description: Few-run point estimates mislead; report stratified-bootstrap CIs
#       of IQM, median, mean and optimality gap, performance profiles with bands, and
#       P(X > Y). Reproduces the analyses of Agarwal et al. (NeurIPS 2021).
#     inputs:
#     - notebooks/claims/interval_estimates.toml
#     - data/interval_estimates/*.nc
#     - data/published/rliable/atari_100k/scores/*.json
#     - data/published/rliable/atari_100k/DER_iterations/*.json
#     reports:
#     - default
#     - atari100k
#     - atari200m
#     - procgen
#     - dmc
#     - dmc100k
#     tiny:
#       compute_class: tiny
#       coverage_subsamples: 20
#       few_draws: 200
#       flip_inner_draws: 100
#       flip_reps: 100
#       outer_reps: 30
#       profile_reps: 300
#       reps: 2000
#       scheduler: sync
#     title: Interval estimates of aggregate performance (rliable, reproduced)
#     variants:
#       atari100k:
#         curves: data/published/rliable/atari_100k/DER_iterations
#         outer_reps: 50
#         references: data/published/rliable/atari_100k/references.csv
#         reps: 10000
#         scores: data/published/rliable/atari_100k/scores
#       atari200m:
#         flip_reps: 40000
#         outer_reps: 50
#         references: data/published/rliable/atari_200m/references.csv
#         reps: 10000
#         scores: data/published/rliable/atari_200m/scores.csv
#       bca:
#         method: bca
#       dmc:
#         references: data/published/rliable/dm_control/references.csv
#         scores: data/published/rliable/dm_control/scores_500k.csv
#       dmc100k:
#         references: data/published/rliable/dm_control/references.csv
#         scores: data/published/rliable/dm_control/scores_100k.csv
#       procgen:
#         references: data/published/rliable/procgen/references.csv
#         scores: data/published/rliable/procgen/scores.csv
# ---

# %% tags=["parameters"]
# fmt: off
seed: int = 0  # root of every bootstrap draw (the analysis seed; verify --seeds changes it) [≥ 0]
data_seed: int = 0  # seed of the benchmark's runs (splits, initialisations); not the analysis's [≥ 0]
compute_class: str = "small"  # benchmark size: tiny, small, medium or large {tiny, small, medium, large}
scheduler: str = ""  # "": local Dask cluster, "sync": in-process, else a scheduler address
scores: str = ""  # your own score files, comma-separated; "": run the study's benchmark [file]
rerun: bool = False  # re-run the benchmark even if a cached result exists under data/
reps: int = 50_000  # bootstrap resamples for the aggregate-metric CIs (paper: 50,000) [≥ 1]
profile_reps: int = 2_000  # resamples for profiles, P(X > Y) and CI-width curves (paper: 2,000) [≥ 1]
outer_reps: int = 200  # outer bootstrap replicates for CIs of rank-flip rates and width ratios [≥ 2]
confidence: float = 0.95  # confidence level of every interval [> 0, < 1]
method: str = "percentile"  # interval method for aggregate metrics: percentile, bca, or rliable's basic and bc {percentile, bca, basic, bc}
few_runs: int = 3  # runs per task of the "few-run study" in step 2 [≥ 1]
few_draws: int = 2_000  # few-run subsamples behind the point flip rates of step 2 [≥ 1]
flip_reps: int = 1_000  # outer bootstrap replicates for the CIs of step 2's flip rates [≥ 2]
flip_inner_draws: int = 400  # few-run draws per outer replicate of step 2 (their noise widens the CIs; the rates move in steps of 1/this) [≥ 1]
coverage_subsamples: int = 200  # few-run subsamples per algorithm and run count in the coverage check [≥ 1]
nan: str = "error"  # NaN scores in your files: error (name the cell) or drop (with a warning) {error, drop}
references: str = ""  # with scores: table task, random, reference to normalize them by; "": already normalized [file]
curves: str = ""  # folder of per-iteration returns (rliable's records) for sample-efficiency curves; "": none [file]
# fmt: on

# %% [markdown]
# # Interval estimates for aggregate performance
#
# Agarwal et al., *Deep Reinforcement Learning at the Edge of the Statistical Precipice*
# (NeurIPS 2021), argue that the usual way of comparing learning algorithms, a point
# estimate (mean or median of normalized scores) from a handful of runs, is unreliable:
# with 3-5 runs per task the estimate moves so much from one set of seeds to another
# that rankings flip. They recommend instead
#
# 1. **interval estimates**: stratified-bootstrap confidence intervals of aggregate
#    metrics (runs resampled within each task);
# 2. the **interquartile mean (IQM)**, robust to outliers like the median but far more
#    statistically efficient;
# 3. **performance profiles** (score distributions) with confidence bands;
# 4. the **probability of improvement** P(X > Y) with its CI.
#
# The facts this study reproduces (papers, claims with their ids, formulas, protocols and
# published numbers) are in
# [`docs/studies/interval_estimates.md`](../docs/studies/interval_estimates.md); the claims
# this report decides, with their rules, in
# [`notebooks/claims/interval_estimates.toml`](claims/interval_estimates.toml).

# %% [markdown] tags=["only-default", "only-bca"]
# This report reproduces each analysis on a real benchmark that the study runs itself on a
# CPU in minutes: a one-hidden-layer MLP trained by plain SGD, SGD with momentum, SGD with
# Nesterov momentum, Adam and L-BFGS, and a logistic-regression baseline, each under a small
# iteration budget, on the small datasets that ship with scikit-learn and on synthetic
# tasks. A *run* is a seed (train/test split and initialisation). The score is normalized
# test accuracy, `(accuracy - chance) / (reference - chance)`, with chance the majority-class
# rate and reference the mean accuracy of an RBF SVM tuned by cross-validation on the same
# splits: 0 is guessing, 1 is as good as a tuned SVM. With the `scores` parameter the same
# analysis runs on your own files instead; the variants `atari100k`, `atari200m`, `procgen`,
# `dmc` and `dmc100k` run it on the paper's own data, each in its own report.

# %% [markdown] tags=["not-default", "not-bca", "not-user"]
# This report runs each analysis on **the paper's own data** (`data/published/rliable/`,
# with its provenance): the per-run scores the paper re-analysed, normalized as it did
# (Atari: human-normalized, with DQN Zoo's human and random scores for the 55 games of
# Atari 200M; Procgen: min-max with the easy-mode constants of Cobbe et al. 2020; DM
# Control: score / 1000). Section 7 then asks the paper's own question of its leaderboard:
# which orderings by point estimate do the intervals support? The claims ledger at the top
# of the report gives the verdicts.

# %% [markdown] tags=["only-user"]
# This report runs each analysis on **your own score files** (parameter `scores`): a run is
# one of your seeds, a task one of your tasks. Section 7 asks of your leaderboard which
# orderings by point estimate the intervals support.

# %%
import numpy as np
import pandas as pd
from IPython.display import display

from scalinglab.plots import intervals as plots
from scalinglab.plots import use_style
from scalinglab.record import findings_table
from scalinglab.stats.calibration import seed_mean_coverage
from scalinglab.stats.few_run_flips import few_run_flip_rates
from scalinglab.stats.improvement import pairwise_probability_of_improvement
from scalinglab.stats.intervals import interval_estimates
from scalinglab.stats.layout import wide_table
from scalinglab.stats.profiles import performance_profile
from scalinglab.stats.reliability import ci_width_ratio, run_count_grid
from scalinglab.stats.replicates import interval_crosscheck, metric_replicates
from scalinglab.stats.variability import ci_width_vs_runs
from scalinglab.studies.intervals import findings as record_step
from scalinglab.studies.intervals.classifiers import load_or_run
from scalinglab.studies.intervals.few_run_coverage import bootstrap_interval, coverage_table
from scalinglab.studies.intervals.orderings import (
    leaderboard_pairs,
    metric_difference,
    ordering_table,
    pair_flip_rates,
    separated_pairs,
    top_task_share,
)
from scalinglab.studies.intervals.published import in_repo, iteration_scores

use_style()

# one independent generator per step: a step's draws never shift another step's (spawn(n)
# gives the same first children for any n, so a new step's stream is appended last)
(
    rng_few,
    rng_ci,
    rng_width,
    rng_ratio,
    rng_score,
    rng_avg,
    rng_poi,
    rng_flip,
    rng_share,
    rng_draws,
    rng_diff,
    rng_cover,
    rng_curves,
    rng_tasks,
) = np.random.default_rng(seed).spawn(14)

# %% [markdown]
# ## 1. The benchmark
#
# One call loads the cached benchmark results from `data/interval_estimates/` (keyed by a
# hash of the experiment's configuration, with provenance), or runs the experiment on a Dask
# cluster if they are missing or `rerun` is set, or reads your files if `scores` is given.
# The table shows the mean normalized score of each algorithm (columns) on each task (rows).

# %%
data = load_or_run(
    in_repo(scores),
    compute_class=compute_class,
    seed=data_seed,
    scheduler=scheduler,
    rerun=rerun,
    nan=nan,
    references=in_repo(references),
)
algorithms = [str(a) for a in data.algorithm.values]
run_counts = (~data.isnull()).sum("run").min("task")  # each algorithm's runs per task
print(
    f"{data.attrs['source']}: {len(algorithms)} algorithms x {data.sizes['task']} tasks; "
    "runs per task: " + ", ".join(f"{a} {int(run_counts.sel(algorithm=a))}" for a in algorithms)
)
data.mean("run").to_pandas().T.round(3)  # tasks as rows: a wide table would be clipped

# %%
fig = plots.plot_score_heatmap(data)

# %% [markdown]
# ## 2. Few runs: point estimates vary, rankings flip
#
# Suppose we had only run `few_runs` seeds per task. We draw `few_draws` such few-run
# studies from the runs we have (without replacement) and compute each aggregate metric on
# each: the paper's own quantities are how often the few-run point estimates rank the
# algorithms unlike all runs (the *ranking-change rate*), how often they crown another
# winner (the *winner-change rate*), and how far they spread around the all-runs value
# (violins; black tick: all runs). Each rate's Monte Carlo standard error (from the
# `few_draws` draws) is stated with it; its interval comes from `flip_reps` replicates of
# an outer bootstrap over runs (the runs we have are themselves a sample), each with its
# own `flip_inner_draws` few-run draws and its own all-runs reference (their noise widens
# the interval a little, less the more there are). The interval's ends are Harrell-Davis
# quantiles of the replicates' rates, with jackknife Monte Carlo errors: the rates move in
# steps of 1/`flip_inner_draws`, and a plain order statistic would jump a whole step from
# one seed to the next. Resampled runs repeat, which makes
# few-run subsamples of a replicate slightly less variable than real ones. Algorithms with
# `few_runs` or fewer runs on some task are left out: their "few-run subsamples" would be
# their full data.

# %%
few = few_run_flip_rates(
    data,
    n_runs=few_runs,
    draws=few_draws,
    reps=flip_reps,
    inner_draws=flip_inner_draws,
    metrics=("iqm", "median", "mean"),
    level=confidence,
    rng=rng_few,
)
print(f"left out: {few.attrs['skipped']}" if few.attrs["skipped"] else "no algorithm left out")
fig = plots.plot_few_run_spread(few["estimate"], few["full"], rank_metric="iqm")

# %%
record_step.record_few_run_rates(few, few_runs=few_runs, few_draws=few_draws, scores=data)
few[["point", "lo", "hi", "mc_se"]].to_dataframe().round(3)

# %% [markdown]
# **Does the report's interval hold with few runs?** The paper recommends its intervals
# for exactly this regime. From each algorithm with at least 50 runs on every task we draw
# `coverage_subsamples` subsamples of 3, 5 and 10 runs per task, compute the report's
# interval (`method`, `confidence`, `profile_reps` replicates) on each, and count how often
# it contains the all-runs value (the all-runs value stands for the truth; its own noise
# makes the count slightly pessimistic). The bracket is a 95% Wilson interval of the count.
# The median of per-task means moves in jumps with few runs and its bootstrap distribution
# is lumpy: a BCa interval, which corrects for bias and skew from a jackknife, can be
# unstable there, so the median's coverage is the one to watch.

# %%
coverage, cov_skipped = (
    coverage_table(
        data,
        run_counts=(3, 5, 10),
        min_runs=50,
        subsamples=coverage_subsamples,
        metrics=("iqm", "median"),
        interval=bootstrap_interval(reps=profile_reps, level=confidence, method=method),
        level=confidence,
        rng=rng_cover,
    )
    if int(run_counts.max()) >= 50
    else (None, {})
)
if coverage is None:
    print("no algorithm has 50 runs on every task: no few-run coverage check on these data")
elif cov_skipped:
    print("left out: " + "; ".join(f"{a}: {why}" for a, why in cov_skipped.items()))
record_step.record_coverage(coverage, method=method, confidence=confidence)
coverage.round(3) if coverage is not None else None

# %% [markdown]
# ## 3. Interval estimates of aggregate metrics
#
# Each algorithm's runs are resampled within every task (stratified bootstrap, `reps`
# replicates) and the four aggregate metrics are computed on every replicate:
# **IQM** (mean of the middle 50% of all run scores), **median** and **mean** of the
# per-task mean scores, and the **optimality gap** (how far scores fall short of 1, the
# reference; lower is better). Bars are 95% CIs, ticks the point estimates.

# %%
ci = interval_estimates(data, reps=reps, level=confidence, method=method, rng=rng_ci)
fig = plots.plot_interval_estimates(ci)

# %%
best = record_step.record_aggregates(ci, algorithms, scores=data)
wide_table(ci)

# %% [markdown]
# **Over the population of tasks.** The intervals above hold these tasks fixed: they say
# how much the aggregate would move with other runs of the same tasks. rliable's
# `task_bootstrap=True` also resamples the tasks (with replacement), asking how much it
# would move on another draw of tasks like these; those intervals, with `profile_reps`
# replicates, are wider, most for the median and the mean, which a few tasks can carry.

# %%
ci_tasks = interval_estimates(
    data,
    metrics=("iqm", "median", "mean"),
    reps=profile_reps,
    level=confidence,
    method=method,
    rng=rng_tasks,
    task_bootstrap=True,
)
wide_table(ci_tasks)

# %% [markdown]
# **The bootstrap distributions behind the bars.** A percentile interval is the middle 95%
# of the replicates; it says nothing about their shape. Below, a fresh set of `reps`
# replicates per algorithm (its own random stream) goes to ArviZ: the forest plot shows each
# algorithm's highest-density interval (HDI, the *shortest* interval holding the same mass,
# thin line), interquartile range (thick) and median replicate (dot), and the table sets the
# percentile interval beside the HDI. They agree when the replicates are symmetric; a width
# ratio (HDI / percentile) well below 1, or an HDI shifted against the percentile interval,
# marks a skewed bootstrap distribution (typically the median, which rests on one or two
# tasks), where the percentile interval is best read as "the middle 95% of the replicates".
# These are a cross-check, not findings: the reported intervals are those above.

# %%
draws = metric_replicates(data, reps=reps, rng=rng_draws)
fig = plots.plot_bootstrap_forest(draws, level=confidence)

# %%
wide_table(interval_crosscheck(draws, level=confidence))

# %% [markdown]
# **Do intervals cover with few runs?** A percentile bootstrap of a mean over 3 runs
# covers far less than its nominal 95%: its spread is the plug-in standard deviation and
# ignores that the spread itself is estimated. The table simulates it: `n` runs drawn
# from the best algorithm's per-run mean scores here (whose mean is then the truth), each
# given a Student-t and a percentile-bootstrap interval, 2,000 times per `n`; `se` is
# the simulation's own standard error.

# %%
seed_mean_coverage(
    data.sel(algorithm=best).mean("task").values, ns=sorted({max(few_runs, 2), 5, 10}), seed=seed
)

# %% [markdown]
# ## 4. IQM versus median: statistical efficiency
#
# The median of per-task means uses, in effect, one or two tasks; the IQM pools the middle
# half of *all* runs. So for the same runs the IQM's interval should be narrower. Left: the
# mean CI width over few-run subsamples as the number of runs per task grows; right: the
# median's width relative to the IQM's. The headline ratio (all runs, averaged over
# algorithms) gets its CI from an outer bootstrap over runs. The advantage grows with the
# number of tasks (the median still rests on one or two of them while the IQM pools more
# runs): the paper's 57 Atari games show a larger gap than a 10-task benchmark can.

# %%
widths = ci_width_vs_runs(
    data,
    run_count_grid(data),
    metrics=("iqm", "median"),
    reps=profile_reps,
    level=confidence,
    rng=rng_width,
    draws=10,
)
fig = plots.plot_ci_width_vs_runs(widths)

# %%
ratio = ci_width_ratio(
    data,
    numerator="median",
    denominator="iqm",
    inner_reps=profile_reps,
    reps=outer_reps,
    level=confidence,
    rng=rng_ratio,
)
record_step.record_width_ratio(ratio, scores=data)
ratio.to_dataframe().round(3)

# %% [markdown]
# ## 5. Performance profiles
#
# A profile shows the whole score distribution: the fraction of runs (left) or of tasks by
# their mean score (right) above each threshold tau (up to the 99th percentile of all
# scores, so that a few outlier games do not squash the axis), with pointwise 95% bootstrap bands. A
# curve that lies above another everywhere is stochastically better; crossing curves say
# the aggregate ranking depends on the metric.

# %%
taus = np.linspace(min(0.0, float(data.quantile(0.01))), float(data.quantile(0.99)), 101)
profiles = [
    performance_profile(
        data, taus, reps=profile_reps, level=confidence, rng=rng_score, kind="score"
    ),
    performance_profile(
        data, taus, reps=profile_reps, level=confidence, rng=rng_avg, kind="average"
    ),
]
fig = plots.plot_performance_profiles(
    profiles, titles=["score distribution", "average-score distribution"]
)

# %% [markdown]
# **Sample efficiency.** rliable's third figure: the IQM over training, with pointwise 95%
# stratified-bootstrap intervals (`profile_reps` replicates per iteration), from
# per-iteration scores normalized as the final ones. The paper's data hold them for few
# algorithms; the line below names those that have them and those that do not.

# %%
if curves:
    per_iter = iteration_scores(in_repo(curves), in_repo(references))
    have = [str(a) for a in per_iter.algorithm.values]
    print(
        f"per-iteration scores: {', '.join(have)}; none for "
        f"{', '.join(a for a in algorithms if a not in have) or 'no other algorithm'}"
    )
    curve_ci = interval_estimates(
        per_iter, metrics=("iqm",), reps=profile_reps, level=confidence, rng=rng_curves
    )
    fig = plots.plot_sample_efficiency(curve_ci)
else:
    print(f"no per-iteration scores for these data ({', '.join(algorithms)}): no curves")

# %% [markdown]
# ## 6. Probability of improvement
#
# P(X > Y) is the probability that a run of X on a random task beats a run of Y on it
# (ties count half), averaged over tasks; 0.5 means no difference. Each algorithm's runs are
# resampled independently. Every pair is compared, X being the one ranked higher by median
# (the statistic leaderboards report); the figure shows the leaderboard's adjacent pairs,
# the orderings it states ("X beats Y").

# %%
board_pairs = leaderboard_pairs(data, metric="median")
board = [board_pairs[0][0]] + [y for _, y in board_pairs]
pairs = board_pairs + [(x, y) for i, x in enumerate(board) for y in board[i + 2 :]]
poi = pairwise_probability_of_improvement(
    data, pairs, reps=profile_reps, level=confidence, rng=rng_poi
)
fig = plots.plot_probability_of_improvement(poi.isel(pair=slice(0, len(board_pairs))))

# %%
# Wilson's n for a P(X > Y) of 0 or 1: the runs per task
record_step.record_poi(poi, adjacent=len(board_pairs), runs=int(data.sizes["run"]), scores=data)
poi.to_dataframe().round(3)

# %% [markdown]
# ## 7. The leaderboard's orderings, re-analysed
#
# The paper's central exercise: take a leaderboard ordered by a point estimate and ask which
# of its orderings the intervals support. Each row is an adjacent pair of the ranking by
# median, with both algorithms' medians and means (does the mean order them the same way?),
# whether their IQM intervals overlap, the IQM difference IQM(X) - IQM(Y) with its interval
# (each algorithm resampled independently), and P(X > Y) with its interval. As in the
# paper, the aggregate interval decides the order: the ordering is *supported* when the
# IQM difference's interval lies above 0, *reversed* only when it lies below 0, and *not
# resolved* otherwise. P(X > Y) says how large the improvement is: following the paper
# (after Bouthillier et al. 2021), it is *meaningful* when P(X > Y) reaches 0.75 with its
# interval above 0.5. A P(X > Y) just under 0.5 is not a reversal: X can be ahead on a few
# tasks by a lot and behind on many by a little (the `reading` column says it in words).

# %%
iqm_diff = metric_difference(
    data, board_pairs, metric="iqm", reps=profile_reps, level=confidence, rng=rng_diff
)
record_step.record_iqm_differences(iqm_diff)
ordering_table(board_pairs, ci, poi, metrics=("median", "mean"), iqm_diff=iqm_diff).round(3)

# %% [markdown]
# **Few runs, on the orderings that matter.** Step 2's pair-flip rate averages over every
# pair, near-ties included (two algorithms that the full data cannot tell apart "flip" half
# the time). Here only the pairs whose P(X > Y) interval on all runs excludes 0.5 count: how
# often would a `few_runs`-run evaluation, reporting point estimates, have ordered such a pair
# the wrong way round? The interval comes from an outer bootstrap over runs (as in step 2).
#
# **The mean and outlier tasks.** The share of each algorithm's mean score that comes from
# its top 10% of tasks (the tasks with the highest per-task mean on all runs); with equal
# contributions it would be that fraction of tasks.

# %%
separated = separated_pairs(poi)
print(f"{len(separated)} of {len(pairs)} pairs separated by P(X > Y) on all runs")
if separated:
    flips = pair_flip_rates(
        data,
        separated,
        n_runs=few_runs,
        draws=few_draws,
        reps=outer_reps,
        level=confidence,
        rng=rng_flip,
    )
    record_step.record_separated_flips(
        flips, separated=len(separated), few_runs=few_runs, few_draws=few_draws
    )
flips["point"].to_pandas().round(3) if separated else None

# %%
share = top_task_share(data, reps=outer_reps, level=confidence, rng=rng_share)
record_step.record_top_share(share, ci, algorithms)
share[["point", "lo", "hi"]].to_dataframe().round(3)

# %% [markdown]
# ## 8. The paper's claims on these data
#
# Each claim of `notebooks/claims/interval_estimates.toml` is decided by the interval of a
# finding above (the verdict is computed, see the ledger at the top of the report). The
# leaderboard's orderings are the published claims of the benchmark's papers, as the paper
# re-examines them; the others are the paper's own. Thresholds that the paper states only
# in words are ours and are written in the claim: "rankings flip" as more than 1 in 20
# few-run evaluations ranking the algorithms unlike all runs; "dominated by outlier
# tasks" as the top 10% of tasks carrying more than twice their equal share of the mean,
# for every algorithm.

# %%
verdicts = record_step.decide_claims(
    scores=scores, board_pairs=board_pairs, few_runs=few_runs, algorithms=algorithms, share=share
)
with pd.option_context("display.max_colwidth", None):
    display(verdicts)

# %% [markdown]
# ## Findings
#
# Every number this report states, with its interval. Headline findings are also listed
# in the reports index.

# %%
findings_table()
