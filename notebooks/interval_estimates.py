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
#       P(X > Y). Reproduces Agarwal et al. (NeurIPS 2021) on small classifiers trained
#       by several optimizers on 10 tasks x 25 seeds, or on your own score files.
#     inputs:
#     - data/interval_estimates/*.nc
#     tiny:
#       compute_class: tiny
#       few_draws: 200
#       outer_reps: 30
#       profile_reps: 300
#       reps: 2000
#       scheduler: sync
#     title: Interval estimates of aggregate performance (rliable, reproduced)
#     variants:
#       bca:
#         method: bca
# ---

# %% tags=["parameters"]
seed: int = 0  # root of every random draw (benchmark seeds and all bootstraps) [>= 0]
compute_class: str = "small"  # benchmark size: tiny, small, medium or large {tiny, small, medium, large}
scheduler: str = ""  # "" = local Dask cluster, "sync" = in-process, else a scheduler address
scores: str = ""  # your own score files, comma-separated; "" = run the study's benchmark [file]
rerun: bool = False  # re-run the benchmark even if a cached result exists under data/
reps: int = 50_000  # bootstrap resamples for the aggregate-metric CIs (paper: 50,000) [>= 1]
profile_reps: int = 2_000  # resamples for profiles, P(X > Y) and CI-width curves (paper: 2,000) [>= 1]
outer_reps: int = 200  # outer bootstrap replicates for CIs of rank-flip rates and width ratios [>= 2]
confidence: float = 0.95  # confidence level of every interval [> 0, < 1]
method: str = "percentile"  # interval method for aggregate metrics: percentile or bca {percentile, bca}
few_runs: int = 3  # runs per task of the "few-run study" in step 2 [>= 1]
few_draws: int = 1_000  # few-run subsamples drawn in step 2 [>= 1]
nan: str = "error"  # NaN scores in your files: error (name the cell) or drop (with a warning) {error, drop}
references: str = ""  # with scores: table task, random, reference to normalize them by; "" = already normalized [file]

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
# This report reproduces each analysis on a real benchmark that the study runs itself on a
# CPU in minutes: a one-hidden-layer MLP trained by plain SGD, SGD with momentum, SGD with
# Nesterov momentum, Adam and L-BFGS, and a logistic-regression baseline, each under a small
# iteration budget, on the small datasets that ship with scikit-learn and on synthetic
# tasks. A *run* is a seed (train/test split and initialisation). The score is normalized
# test accuracy, `(accuracy - chance) / (reference - chance)`, with chance the majority-class
# rate and reference the mean accuracy of an RBF SVM tuned by cross-validation on the same
# splits: 0 is guessing, 1 is as good as a tuned SVM. With the `scores` parameter the same
# analysis runs on your own files instead.
#
# The facts this study reproduces (papers, claims with their ids, formulas, protocols and
# published numbers) are in
# [`docs/studies/interval_estimates.md`](../docs/studies/interval_estimates.md).

# %%
import numpy as np

from scalinglab.studies.intervals.classifiers import load_or_run
from scalinglab.plots import intervals as plots
from scalinglab.record import findings_table, record
from scalinglab.stats.improvement import pairwise_probability_of_improvement
from scalinglab.stats.intervals import interval_estimates
from scalinglab.stats.profiles import performance_profile
from scalinglab.stats.reliability import ci_width_ratio, few_run_variability, run_count_grid
from scalinglab.stats.variability import ci_width_vs_runs

# one independent generator per step: a step's draws never shift another step's
rng_few, rng_ci, rng_width, rng_ratio, rng_score, rng_avg, rng_poi = (
    np.random.default_rng(seed).spawn(7)
)

# %% [markdown]
# ## 1. The benchmark
#
# One call loads the cached benchmark results from `data/interval_estimates/` (keyed by a
# hash of the experiment's configuration, with provenance), or runs the experiment on a Dask
# cluster if they are missing or `rerun` is set, or reads your files if `scores` is given.
# The table shows the mean normalized score of each algorithm on each task.

# %%
data = load_or_run(scores, compute_class=compute_class, seed=seed, scheduler=scheduler,
                   rerun=rerun, nan=nan, references=references)
algorithms = [str(a) for a in data.algorithm.values]
print(f"{data.attrs['source']}: {len(algorithms)} algorithms x {data.sizes['task']} tasks "
      f"x {data.sizes['run']} runs")
data.mean("run").to_pandas().round(3)

# %%
fig = plots.plot_score_heatmap(data)

# %% [markdown]
# ## 2. Few runs: point estimates vary, rankings flip
#
# Suppose we had only run `few_runs` seeds per task. We draw many such few-run studies
# from the runs we have (without replacement) and compute each aggregate metric on each.
# The violins show how far the few-run point estimates spread around the all-runs value
# (black tick); the right panel shows how often each algorithm ends up at each rank by IQM.
# The flip rates get their own CIs from an outer bootstrap over runs (the runs we have are
# themselves a sample). Resampled runs repeat, which makes few-run subsamples of a
# replicate slightly less variable than real ones, so these intervals err on the low side:
# they do not overstate how often rankings flip.

# %%
few = few_run_variability(data, n_runs=few_runs, draws=few_draws, reps=outer_reps,
                          level=confidence, rng=rng_few)
fig = plots.plot_few_run_spread(few["estimate"], few["full"], rank_metric="iqm")

# %%
flip_how = dict(level=confidence, method=few.attrs["method"], resamples=outer_reps)
for stat, name, text in (
    ("ranking_change_rate", "rank_flip_rate/few_runs",
     f"fraction of {few_runs}-run studies whose IQM ranking of all algorithms differs from "
     "the all-runs ranking"),
    ("winner_change_rate", "winner_change_rate/few_runs",
     f"fraction of {few_runs}-run studies whose best algorithm by IQM is not the all-runs best"),
    ("pair_flip_rate", "pair_flip_rate/few_runs",
     f"mean over algorithm pairs of the fraction of {few_runs}-run studies ordering the pair "
     "(by IQM) unlike all runs"),
):
    sel = few.sel(statistic=stat, metric="iqm")
    record(name, float(sel["point"]), ci=(float(sel["lo"]), float(sel["hi"])), **flip_how,
           description=text, headline=name == "rank_flip_rate/few_runs")
few[["point", "lo", "hi"]].to_dataframe().round(3)

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
ranked = list(ci["point"].sel(metric="iqm").to_series().sort_values(ascending=False).index)
best = str(ranked[0])
ci_how = dict(level=confidence, method=f"stratified bootstrap, {method}", resamples=reps)
for alg in algorithms:
    for metric in ci.metric.values:
        cell = ci.sel(algorithm=alg, metric=metric)
        record(f"{metric}/{alg}", float(cell["point"]), ci=(float(cell["lo"]), float(cell["hi"])),
               **ci_how, description=f"{metric} normalized score of {alg}",
               headline=(metric == "iqm" and alg == best))
ci.to_dataframe().unstack("metric").round(3)

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
widths = ci_width_vs_runs(data, run_count_grid(data), metrics=("iqm", "median"),
                          reps=profile_reps, level=confidence, rng=rng_width, draws=10)
fig = plots.plot_ci_width_vs_runs(widths)

# %%
ratio = ci_width_ratio(data, numerator="median", denominator="iqm", inner_reps=profile_reps,
                       reps=outer_reps, level=confidence, rng=rng_ratio)
ratio_how = dict(level=confidence, method=ratio.attrs["method"], resamples=outer_reps)
for label in ratio.algorithm.values:
    cell = ratio.sel(algorithm=label)
    name = ("ci_width_ratio/median_over_iqm" if label == "(all)"
            else f"ci_width_ratio/median_over_iqm/{label}")
    record(name, float(cell["point"]), ci=(float(cell["lo"]), float(cell["hi"])), **ratio_how,
           description="median CI width / IQM CI width"
           + (" (mean widths over algorithms)" if label == "(all)" else f" for {label}"),
           headline=label == "(all)")
ratio.to_dataframe().round(3)

# %% [markdown]
# ## 5. Performance profiles
#
# A profile shows the whole score distribution: the fraction of runs (left) or of tasks by
# their mean score (right) above each threshold tau, with pointwise 95% bootstrap bands. A
# curve that lies above another everywhere is stochastically better; crossing curves say
# the aggregate ranking depends on the metric.

# %%
taus = np.linspace(float(data.min()), float(data.max()), 101)
profiles = [
    performance_profile(data, taus, reps=profile_reps, level=confidence, rng=rng_score,
                        kind="score"),
    performance_profile(data, taus, reps=profile_reps, level=confidence, rng=rng_avg,
                        kind="average"),
]
fig = plots.plot_performance_profiles(profiles, titles=["score distribution",
                                                        "average-score distribution"])

# %% [markdown]
# ## 6. Probability of improvement
#
# P(X > Y) is the probability that a run of X on a random task beats a run of Y on it
# (ties count half), averaged over tasks; 0.5 means no difference. Each algorithm's runs are
# resampled independently. We compare the best algorithm by IQM with every other one.

# %%
pairs = [(best, a) for a in algorithms if a != best]
poi = pairwise_probability_of_improvement(data, pairs, reps=profile_reps, level=confidence,
                                          rng=rng_poi)
fig = plots.plot_probability_of_improvement(poi)

# %%
runner_up = str(ranked[1])
for pair in poi.pair.values:
    cell = poi.sel(pair=pair)
    x, y = str(cell["x"].item()), str(cell["y"].item())
    record(f"poi/{x}_vs_{y}", float(cell["point"]), ci=(float(cell["lo"]), float(cell["hi"])),
           level=confidence, method="stratified bootstrap (independent per algorithm), percentile",
           resamples=profile_reps, description=f"P({x} > {y}) on a random task",
           headline=y == runner_up)
poi.to_dataframe().round(3)

# %% [markdown]
# ## Findings
#
# Every number this report states, with its interval. Headline findings are also listed
# in the reports index.

# %%
findings_table()
