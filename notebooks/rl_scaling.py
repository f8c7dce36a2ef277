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
#     description: 'Real GRPO runs of small character-level transformers on multi-digit
#       addition: ScaleRL sigmoids per model size with extrapolation from half the compute,
#       Tan et al.''s k(N), reward-trajectory phases, and two design ablations.'
#     inputs:
#     - data/rl_scaling/grpo-*.nc
#     - data/rl_scaling/.runs/grpo-v3-ext-*/*.pkl
#     reports:
#     - default
#     - small
#     - medium
#     - medium_v2
#     tiny:
#       compute_class: tiny_v3
#       kn_reps: 10
#       lof_sims: 6
#       poi_reps: 200
#       reps: 40
#       scheduler: sync
#       shared_sims: 6
#     title: RL post-training compute scaling (GRPO on verifiable arithmetic)
#     variants:
#       medium:
#         compute_class: medium_v1
#       medium_v2:
#         compute_class: medium
#       small:
#         compute_class: small
# ---

# %% [markdown]
# # How does RL post-training scale with compute?
#
# Three recent papers model the held-out pass rate of a policy trained with RL
# (GRPO-style) as a function of RL compute:
#
# * **ScaleRL** (Khatri et al. 2025): a sigmoid in compute,
#   $R(C) = R_0 + (A - R_0) / (1 + (C_{mid}/C)^B)$, with asymptote $A$ and efficiency
#   $B$; fitted on the first half of the compute it predicts the asymptote and the rest
#   of the run. Most design choices (loss aggregation, advantage normalisation) move
#   $B$, not $A$; some recipes (loss type, FP32 logits) differ in $A$.
# * **Tan et al. 2025**: $\log_{10}(1 - R) = -k(N) \log_{10} C + E_0(N)$ with
#   $k(N) = K_{max} N / (N + N_0)$: larger models learn more per unit of compute; and
#   with limited data, reusing prompts for several epochs works as well as fresh ones.
# * **Nimmaturi et al. 2025**: the reward trajectory has a slow start, a rapid gain
#   and a plateau, the plateau can be predicted early, and training past it buys little.
#
# Here every curve comes from GRPO runs made by this notebook (or from your own logs,
# parameter `runs`): decoder-only transformers warmed up by supervised training to a low
# starting pass rate $R_0$, then trained with GRPO on held-in prompts and evaluated on
# held-out ones. Compute is counted in FLOPs by the project's cost model (2N per
# generated token, 6N per trained token, plus attention).
#
# **Designs.** Each report reads one design (`compute_class`; the table in the study's
# doc lists them): the default `v3` (4 sizes over 30x in parameters, warm-up to
# $R_0 \approx 0.15$-$0.25$, 2 warm starts x 2 RL seeds per size, 4,000 GRPO steps at
# the width rule's learning rate and at half of it, a length cap and batch normalisation
# at `s` and `m`; about 4 hours on 2 cores, resumable run by run), and the earlier
# `small` (report `small`: 3 sizes, 3 seeds, 500 steps), `medium_v1` (report `medium`)
# and `medium` (report `medium_v2`). The **claims ledger** says claim by claim what the
# design decides, and why a claim is not identified or untested; *Reading the results*
# at the end reads the design's own results.
#
# The facts this study reproduces (papers, claims with their ids, formulas, protocols and
# published numbers) are in
# [`docs/studies/rl_scaling.md`](../docs/studies/rl_scaling.md).

# %% tags=["parameters"]
# fmt: off
seed: int = 0  # seed of the bootstrap resampling (the sweep's seeds are in its config) [≥ 0]
compute_class: str = "v3"  # v3 (default report), tiny and tiny_v3 (tests), small, medium, medium_v1 (its first design), large {v3, tiny, tiny_v3, small, medium, medium_v1, large}
scheduler: str = ""  # "": local Dask cluster, "sync": in-process, or a scheduler address
runs: str = ""  # your RL logs (CSV/Parquet: model_size, seed, compute or step, pass_rate); "": our sweep [file]
rerun: bool = False  # recompute a short sweep (tiny, small) even if a cached result exists
device: str = "cpu"  # cpu, cuda or auto {cpu, cuda, auto}
reps: int = 1000  # bootstrap resamples (over seeds) for the sigmoid and phase fits [≥ 1]
kn_reps: int = 200  # bootstrap resamples for k(N) (each refits the joint law) [≥ 1]
poi_reps: int = 2000  # resamples for the ablation CIs and probability of improvement [≥ 1]
pred_reps: int = 200  # resamples for the half-compute and early-plateau predictions (each refits twice) [≥ 1]
transient_frac: float = 0.1  # drop points before this fraction of a run's compute from sigmoid fits [≥ 0, < 1]
fit_frac: float = 0.5  # fit the sigmoid on compute ≤ fit_frac * C_max, predict the rest [> 0, ≤ 1]
early_frac: float = 0.3  # phase analysis: fit on the first early_frac of training only [> 0, ≤ 1]
level: float = 0.95  # confidence level of every interval [> 0, < 1]
min_multiple: float = 4.0  # SCALERL-2 on runs whose half reaches this multiple of C_mid [> 0]
shared_sims: int = 100  # simulated data sets for the coverage of the shared-asymptote A interval [≥ 0]
lof_sims: int = 100  # simulated data sets for the coverage of SCALERL-1's lack-of-fit interval [≥ 0]
# fmt: on

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

from scalinglab.paths import repo_root
from scalinglab.plots import use_style
from scalinglab.record import claims, claims_from
from scalinglab.stats.calibration import seed_mean_coverage
from scalinglab.studies.rl import (
    ablations,
    analysis,
    asymptote,
    blocks,
    cost_table,
    findings,
    halfruns,
    horizon,
    kn,
    lack_of_fit,
    phases,
    plots,
    predict,
    scope,
    shared_asymptote,
    sound_findings,
    spread,
    tanlaw,
)
from scalinglab.studies.rl.config import sweep_config
from scalinglab.studies.rl.findings import record_all
from scalinglab.studies.rl.report_data import load_sweep
from scalinglab.studies.rl.stopping import EquivalenceRule, gain_after_plateau, run_outcomes

use_style()
pd.set_option("display.precision", 4, "display.width", 160)

if runs:
    ds = None
    curves = analysis.load_rl_logs(repo_root() / runs)  # an absolute path stays as it is
    print(f"read {len(curves)} evaluations from {runs}")
else:
    sweep = sweep_config(compute_class, device=device)
    ds = load_sweep(sweep, scheduler=scheduler, rerun=rerun)  # a long design: stored only
    failed = ds.status == "failed"
    if failed.any():
        print(f"{int(failed.sum())} run(s) FAILED and are left out:")
        for err in np.unique(ds.error.values[failed.values]):
            print("  ", err.strip().splitlines()[-1])
    curves = analysis.curves_frame(ds)
sizes = list(curves.drop_duplicates("model_size").sort_values("n_params")["model_size"])
variants = list(curves["variant"].unique())
base = variants[0]
redesign = ds is not None and "lr_score" in ds  # the medium design: learning-rate stage etc.
# runs per size of the baseline (v3: 2 warm starts x 2 RL seeds, more in its extension):
# the n of the intervals
runs_per_size = curves[curves["variant"] == base].groupby("model_size")["seed"].nunique().to_dict()
n_used = min(runs_per_size.values())

# %% [markdown]
# ## The runs
#
# One row per model size: non-embedding parameters, the GRPO learning rate, how long the
# supervised warm-up ran (the same recipe for every size, stopped once the pass rate
# reached the bottom of its target band) and the resulting $R_0$ on the held-out prompts;
# with the plateau rule, how many runs it stopped and at which step.

# %%
setup = (
    curves[curves["compute"] == 0]
    .groupby(["model_size", "n_params"], sort=False)
    .agg(R0=("pass_rate", "mean"), R0_sd=("pass_rate", "std"), seeds=("seed", "nunique"))
)
if ds is not None:
    at = dict(model_size=setup.index.get_level_values(0))
    setup["lr"] = ds.lr.sel(**at).values
    setup["warmup_steps"] = ds.warmup_steps.mean("seed").sel(**at).values
    setup["final_compute_PFLOP"] = (
        ds.flops.max("eval").sel(variant=base).mean("seed").sel(**at).values / 1e15
    )
    if "stopped_early" in ds:
        last = curves[curves["variant"] == base].groupby(["model_size", "seed"])["step"].max()
        setup["stopped_early"] = ds.stopped_early.sel(variant=base).sum("seed").sel(**at).values
        setup["mean_last_step"] = last.groupby("model_size").mean().reindex(at["model_size"]).values
setup.sort_index(level="n_params")

# %% [markdown]
# **How the runs ended.** A run's peak pass rate, its last evaluation, and whether it fell
# back: *unstable* (the last evaluation more than 0.1 below the peak: outside ScaleRL's
# scope, reported apart and never counted as a plateau) or *collapsed* (below half its
# $R_0$, or back at $R_0$ after taking off); *took off*: its peak at least 0.1 above
# $R_0$. The plateau is judged afterwards as an equivalence test (`EquivalenceRule`):
# the upper 95% bound of what the last 20% of compute gained (a line through those
# evaluations) lies below 0.02, three evaluations in a row, after step 400.
# `plateau_step` is where it fires, `gain_after_plateau` what the run gained after that
# (the mean of its last 3 evaluations minus the mean of the 3 up to the onset).
# GRPOLAW-2 reads the baseline's runs (the paper's recipe, this design's primary arm):
# runs of every variant pooled mix the variants unevenly within a base model (which runs
# enter depends on where each plateaued). Two sensitivity readings sit beside it: every
# variant's runs, and the baseline's with the judged last evaluation kept in the end.

# %%
rule = EquivalenceRule(min_steps=400)
outcomes = run_outcomes(curves, rule=rule)
base_out = outcomes[outcomes["variant"] == base]
display(base_out.groupby("model_size", sort=False)[["took_off", "unstable", "collapsed"]].sum())
record_all(findings.run_outcome_findings(base_out, base=base))
after = gain_after_plateau(base_out, level=level)
record_all(findings.plateau_findings(after, level=level, runs=f"{base}, every size"))
record_all(
    findings.plateau_findings(
        gain_after_plateau(outcomes, level=level),
        level=level,
        name="plateau/gain_after/all_variants",
        share=False,
    )
)
kept = run_outcomes(curves[curves["variant"] == base], rule=rule, hold_out=0)
record_all(
    findings.plateau_findings(
        gain_after_plateau(kept, level=level),
        level=level,
        name="plateau/gain_after/judged_kept",
        runs=f"{base}, every size; the end includes the evaluation the scope rule judges",
        share=False,
    )
)
record_all(sound_findings.plateau_equivalence_findings(after, base_out, base=base))
print(
    f"plateau rule fired in {after['n_plateau']} of the "
    f"{after['n_total'] - after['n_unstable']} stable runs; "
    f"{after['n_runs']} continued past it; {after['n_unstable']} unstable, apart"
)
display(
    base_out[["model_size", "seed", "R0", "peak", "final", "plateau_step", "gain_after_plateau"]]
)

# %%
plots.training_curves(curves, base_out, sizes, base=base)
plt.show()

# %% [markdown]
# ## The learning rate of each size (`medium`)
#
# `small` and `v3` follow the width rule ($lr \propto 1/d_{model}$; `v3` also runs every
# size at half of it, `half_lr`). The `medium` designs first run every size at several
# multiples of that rule (`medium`: 0.25-1x, 3 seeds, 600 steps; `medium_v1`: 0.125-1x)
# and keep the multiplier with the highest held-out pass rate at the end (`lr_score`),
# leaving out (in `medium`) any under which a run collapsed; a choice on the grid's edge
# is flagged.

# %%
if redesign:
    lr_table = ds.lr_score.to_pandas()
    lr_table["selected"] = ds.lr_mult_selected.sel(model_size=lr_table.index).values
    lr_table["lr"] = ds.lr.sel(model_size=lr_table.index).values
    grid = list(ds.lr_mult.values)
    lr_table["on_grid_edge"] = lr_table["selected"].isin([grid[0], grid[-1]])
    if "lr_collapsed" in ds:
        lr_table = lr_table.join(ds.lr_collapsed.to_pandas().add_prefix("collapsed@"), how="left")
    record_all(findings.lr_findings(lr_table, grid))
    display(lr_table)
    plots.lr_stage(lr_table, grid)
    plt.show()
else:
    print("no learning-rate stage here (lr = lr_base * 32 / d_model; v3: half_lr at half)")

# %% [markdown]
# ## ScaleRL's scope: the stable runs
#
# The rule stated with the design (issue 31), before its data: a run whose last evaluation
# is more than 0.1 below its peak is *unstable*, outside ScaleRL's scope. The pooled
# sigmoids below (the asymptote per size, SCALERL-1's lack of fit, the per-size half-compute
# fits) use each (variant, size)'s stable runs only; one with fewer than 3 stable runs is
# not fitted ("not identified (too few stable runs)"): a bootstrap over two runs has three
# distinct resamples and cannot cover. The unstable runs are reported here, per size and
# learning-rate arm (the width rule's `baseline` and `half_lr`), with their peak and end.
#
# `v3` is read with its seed extension, as one design, stated stage by stage before its
# runs: 12 more RL seeds at l and 4 at xl from the same warm starts, both arms
# (`studies/rl/extension.py`), then 24 more at l on the primary arm, sized to identify A
# there (`studies/rl/second_stage.py`), then 6 new base models (warm starts 2-7) at s and
# at xl, one RL seed each, on the primary arm, sized for TAN-2's interval over base
# models (`studies/rl/third_stage.py`); with whatever extension runs are finished; when
# any are, the table of runs and stable runs per size and block follows, and the claims'
# regimes state them.
#
# The rule chooses runs on their last evaluation, so that evaluation is held out of every
# fit on the stable runs (and of the per-run half-compute fits): a point used to choose the
# runs is not used to fit them. The jumps below show why: the stable runs' last
# evaluation against the mean of the five before it (`jump_judged`), and the same for the
# last evaluation the fits keep (`jump_kept`).

# %%
run_scope = scope.run_scope(outcomes)
stable = scope.stable_curves(curves, outcomes)
arms = [v for v in (base, "half_lr") if v in variants]
record_all(scope.unstable_findings(run_scope, arms=arms, level=level))
record_all(scope.end_jump_findings(curves, outcomes, arms=arms, level=level))
display(run_scope.loc[arms])
seed_block = ds.block.to_series() if ds is not None and "block" in ds.coords else None
by_block = None if seed_block is None else blocks.runs_by_block(outcomes, seed_block)
if by_block is not None:
    display(by_block.loc[arms])
scope.unstable_table(outcomes)

# %% [markdown]
# ## ScaleRL sigmoid per model size
#
# Fitted on the stable runs (above). $R_0$ is held at the measured pre-RL pass rate;
# points before `transient_frac` of a run's compute are excluded as the early transient
# (ScaleRL excluded about 1.5k of 50-100k GPU-hours; our first evaluations are noisier
# relative to the gain). The intervals resample whole seeds. $A$ is bounded by its
# physical range $[0, 1]$; an $A$ on the bound 1 (in the point fit or in at least 20% of
# refits) is recorded as not identified: the run ended before the curve bent.

# %%
table, fits = analysis.fit_scalerl(stable, transient_frac=transient_frac, reps=reps, seed=seed)
record_all(findings.sigmoid_findings(table, fits, base=base, what=", stable runs"))
record_all(scope.not_fitted_findings(run_scope, variant=base))
table

# %%
plots.sigmoid_fits(stable, fits, sizes, base=base)
plt.show()

# %% [markdown]
# **Is the asymptote identified?** Size by size: the pooled fit's $A$, whether it sits on
# its bound (point fit, or >= 20% of refits) and the stable runs whose own $A$ is off it
# (each fitted alone without its judged last evaluation).
# An $A$ on its bound says only that the asymptote is high: the claims on it are not
# identified at that size. The design aims at 3 of 4 sizes off the bound
# (`scalerl/A_identified_sizes`), counted on the primary arm, the width rule's learning
# rate (`baseline`; chosen with the design, before the data). Beside it, decided by the
# same rule: the `half_lr` arm, a secondary design arm reported as such
# (`scalerl/half_lr/...`), never a choice of arm per size; and the same count with every
# run, unstable ones included (`scalerl/all_runs/...`), to show what the rule changed.

# %%
per_seed = analysis.per_seed_sigmoids(curves, transient_frac=transient_frac)
per_seed_stable = analysis.per_seed_sigmoids(  # the judged evaluation held out, as above
    scope.stable_curves(curves, outcomes, min_stable=1), transient_frac=transient_frac
)
a_bound = asymptote.bound_table(table, fits, per_seed_stable, base=base, scope=run_scope)
record_all(asymptote.bound_findings(a_bound, base=base, what=" (stable runs)"))
a_tables = {"primary (stable runs)": a_bound}
if "half_lr" in variants:
    half_lr = "half LR, secondary design arm, stable runs"
    record_all(
        findings.sigmoid_findings(
            table,
            fits,
            base="half_lr",
            prefix="scalerl/half_lr",
            params=("A",),
            headline=False,
            what=f", {half_lr}",
        )
    )
    record_all(
        scope.not_fitted_findings(
            run_scope, variant="half_lr", prefix="scalerl/half_lr", params=("A",), pooled=False
        )
    )
    a_tables["half_lr (stable runs)"] = asymptote.bound_table(
        table, fits, per_seed_stable, base="half_lr", scope=run_scope
    )
    record_all(
        asymptote.bound_findings(
            a_tables["half_lr (stable runs)"],
            base="half_lr",
            prefix="scalerl/half_lr",
            what=f" ({half_lr})",
        )
    )
table_all, fits_all = analysis.fit_scalerl(
    curves[curves["variant"] == base], transient_frac=transient_frac, reps=reps, seed=seed
)
a_tables["primary (all runs)"] = asymptote.bound_table(table_all, fits_all, per_seed, base=base)
record_all(
    asymptote.bound_findings(
        a_tables["primary (all runs)"],
        base=base,
        prefix="scalerl/all_runs",
        what=" on all runs, unstable ones included (sensitivity)",
        per_size=False,
    )
)
record_all(
    findings.sigmoid_findings(
        table_all,
        fits_all,
        base=base,
        prefix="scalerl/all_runs",
        params=("A",),
        headline=False,
        what=", all runs (sensitivity)",
    )
)
pd.concat(a_tables, names=["fit"])

# %% [markdown]
# **The asymptote with each run's own take-off.** The pooled sigmoid fits the runs' mean
# curve; runs that take off at different compute make that mean rise slowly through the
# horizon, with no bend for $A$ to sit under. A second estimator, stated and committed
# before it was read on these runs (`studies/rl/shared_asymptote.py`), fits one $A$ and
# one $B$ per size and one $C_{mid}$ per run, each run from its own $R_0$:
# $R_i(C) = R_{0,i} + (A - R_{0,i}) / (1 + (C_{mid,i}/C)^B)$, on the same stable runs
# and points. Its interval is Student t on runs - 1 degrees of freedom with the bootstrap
# over runs as standard error; its coverage is simulated at each size's number of runs on
# runs drawn at that size's fitted $A$, $B$ and spread of take-offs (per-run $A$ spread
# 0.02, binomial evaluation noise, and the size's measured swing between evaluations,
# column `swing`), and stated with the interval. Its count of sizes with
# $A$ identified, by the same rule as the pooled fit's, is
# `scalerl/shared/A_identified_sizes`.

# %%
shared_tab, shared_fits = shared_asymptote.shared_table(
    stable,
    run_scope,
    base=base,
    sizes=sizes,
    transient_frac=transient_frac,
    reps=min(reps, shared_asymptote.REPS),
    sims=shared_sims,
    seed=seed,
)
record_all(
    shared_asymptote.shared_findings(shared_tab, shared_fits, base=base, what=", stable runs")
)
shared_tab

# %% [markdown]
# **Would a longer horizon identify $A$ at l?** Sized by simulation before any run
# (`studies/rl/horizon.py`, stated and committed first): stages of 7 stable runs drawn
# from the l runs' own fits with $A$ held at 0.85, 0.9 and 0.95 (their measured swing
# between evaluations included), at 4,000 steps (the design as run), 8,000 (the proposed
# stage) and 16,000; the share of stages whose pooled and shared-slope fits identify $A$
# (Wilson intervals over the simulated stages). The stated rule runs the 8,000-step stage
# only if the pooled fit identifies $A$ in at least 80% of stages at every true
# $A \le 0.9$. `objective_rise` is how much worse the l runs fit with $A$ held at each
# value than at their best $A$ (the shared-slope objective). The table is stored
# (`python -m scalinglab.studies.rl.horizon`); a design without it (tiny) skips this.

# %%
sizing = horizon.stored_sizing() if compute_class == "v3" else None
if sizing is not None:
    record_all(horizon.sizing_findings(sizing, level=level))
    print(horizon.decision_text(sizing))
    display(horizon.sizing_table(sizing))
else:
    print("no stored horizon sizing for this design")

# %% [markdown]
# ## Predicting the asymptote and the end of training from the first half
#
# ScaleRL's test, on the stable runs: refit each size's sigmoid on each run's evaluations
# up to `fit_frac` (half) of its final compute, then compare (1) the asymptote it predicts
# with the full fit's, $A_{half} - A_{full}$, and (2) the final pass rate it predicts with
# the observed one (judged run by run below). ScaleRL's noise floor on $A$ is about
# $\pm 0.02$. `rmse` is the full fit's error against the seed-mean curve; the held-out MAE
# of the half fit over the second half is kept.

# %%
stable_base = stable[stable["variant"] == base]  # the stable runs of the sizes fitted
half = predict.half_compute(
    stable_base,
    fit_frac=fit_frac,
    transient_frac=transient_frac,
    reps=pred_reps,
    seed=seed,
    level=level,
)
extra = analysis.extrapolate_scalerl(
    stable_base, fit_frac=fit_frac, transient_frac=transient_frac, reps=reps, seed=seed
)
record_all(
    findings.half_compute_findings(
        half,
        extra,
        largest=sizes[-1],
        fit_frac=fit_frac,
        level=level,
        pred_reps=pred_reps,
        reps=reps,
        final=False,
    )
)
half_cols = ["A_full", "A_half", "A_error", "A_error_lo", "A_error_hi", "A_half_identified"]
half.set_index("model_size")[[*half_cols, "rmse"]].join(
    extra.set_index("model_size")[["mae", "mae_lo", "mae_hi"]]
)

# %% [markdown]
# **Does a sigmoid describe the runs (SCALERL-1)?** The RMSE against the mean of $n$ runs
# carries that mean's noise, which falls as $1/n$ in variance: below 0.02 it would partly
# count runs. The test reads the sigmoid's distance from the runs' *expected* curve: the
# mean squared error less the mean curve's noise variance, as a signed root, with a
# Student t interval on the leave-one-run-out jackknife (`studies/rl/lack_of_fit.py`). The
# noise is the runs' deviations from their mean with the part the sigmoid's own
# parameters could follow projected out: a run's deviation is smooth (it took off
# earlier, it ends higher) and mostly moves the fit, not its residual. The interval's
# coverage is simulated at each size's $n$ on runs drawn at that size's fit, with a shape
# the sigmoid cannot follow sized to the estimate, and stated with it.

# %%
lof = lack_of_fit.lof_table(
    stable_base, transient_frac=transient_frac, level=level, sims=lof_sims, seed=seed, sizes=sizes
)
record_all(lack_of_fit.lof_findings(lof, level=level))
lof

# %% [markdown]
# **Run by run.** Seeds that take off at different times pool into a blurred curve, and
# a half that ends before the curve bends holds no asymptote (ScaleRL's half sits at
# about 20x $C_{mid}$). Each run is fitted alone on all of its compute and on its first
# half; the error of $A$ against the multiple of $C_{mid}$ the half reaches shows where
# the test means something. SCALERL-2: the mean $|A_{half} - A_{full}|$ (Student t) over
# the runs of every variant (not the baseline alone) whose half reaches `min_multiple` x
# $C_{mid}$ with $A$ off its bound, a take-off, $C_{mid}$ after the first evaluation and
# no decline (fewer than 3: not identified; the claim's regime counts them by variant).
# SCALERL-2-final (the table after the figure): each stable run's half fit against its
# last evaluation, per size.

# %%
half_runs = halfruns.per_run_half_fits(curves, fit_frac=fit_frac, transient_frac=transient_frac)
decision = halfruns.half_fit_decision(half_runs, min_multiple=min_multiple, level=level)
record_all(sound_findings.half_run_findings(decision, min_multiple=min_multiple))
display(halfruns.error_by_multiple(half_runs))
plots.half_fit_errors(half_runs, min_multiple=min_multiple)
plt.show()
finals = halfruns.final_error_by_size(half_runs, variant=base, level=level)
record_all(sound_findings.final_error_findings(finals, level=level, fit_frac=fit_frac))
finals

# %% [markdown]
# ## Tan et al.: learning rate in compute, $k(N)$
#
# Tan et al. fit $\log_{10} L = -k \log_{10} C + E_0$ ($L = 1 - R$) per model size; here
# every run gets that line, and $k$ per size is the mean over its runs (Student t). Two
# checks can fail the law: its curvature (the quadratic term of $\log_{10} L$ in
# $\log_{10} C$, zero on a line; TAN-1-linear) and its held-out error: the line fitted on
# the first half of each run predicts the later evaluations against ScaleRL's sigmoid
# fitted on the same window (TAN-1). The joint law $k(N) = K_{max} N/(N + N_0)$ and a
# leave-the-largest-out check follow; $N_0$ on the edge of its range ($N_{min}/100$ to
# $100 N_{max}$) in either fit means $k$ does not rise with $N$: not identified (TAN-3).
# Every run counts, as the design states; the rise of $k$ on the stable runs alone
# (`tan/stable/k_rise`) is shown beside it as a sensitivity: unstable runs, more frequent
# at the larger sizes, fit flatter lines, so a fall of $k$ that they alone caused would
# shrink there.

# %%
kn_fit = kn.fit_kn(curves, reps=kn_reps, seed=seed, level=level)
record_all(findings.kn_findings(kn_fit, level=level, reps=kn_reps, per_size=False, n=n_used))
laws = tanlaw.per_run_power_laws(curves, fit_frac=fit_frac, transient_frac=transient_frac)
k_tab = tanlaw.k_by_size(laws, sizes, variant=base, level=level)
comp = tanlaw.heldout_comparison(laws, half_runs)
rise = tanlaw.k_rise(laws, sizes, variant=base, level=level)
rise_stable = tanlaw.k_rise(scope.stable_rows(laws, outcomes), sizes, variant=base, level=level)
est = tanlaw.comparison_estimate(comp, level=level)
est_stable = tanlaw.comparison_estimate(scope.stable_rows(comp, outcomes), level=level)
record_all(
    sound_findings.tan_findings(
        k_tab, rise, comp, est, level=level, rise_stable=rise_stable, comp_stable=est_stable
    )
)
k_tab.join(findings.k_table(kn_fit)[["k_law"]]).round(3)

# %%
plots.k_of_n(curves, kn_fit, sizes, base=base, k_table=k_tab)
plt.show()

# %% [markdown]
# ## Phases of the reward trajectory
#
# Our law for the trajectory is a logistic in training progress $t$ (the step over the
# size's longest run), $R(t) = R_0 + (R_{max} - R_0)/(1 + e^{-\kappa (t - t_0)})$: the
# slow start ends at $t_{10}$, the gain is centred on $t_{50} = t_0$ and the plateau
# begins at $t_{90}$ (10%, 50%, 90% of its gain); the three phases are in the data when
# $t_{10} > 0$ and $t_{90} < 1$. A logistic with its own $R_0 < 0$ starts mid-climb (no
# slow start: not identified). The plateau predicted from the first `early_frac` alone
# (`t90_early`) is compared with the full fit's. The exponential saturation is the
# alternative law (lower RMSE wins). Fits the data do not pin ($R_0$ or $R_{max}$
# outside $[0, 1]$, no bend inside training, a step) are flagged in `identified` and
# their numbers blanked: they are extrapolations of a logistic, not phases of the runs.

# %%
ph = predict.phase_predictions(
    curves, early_frac=early_frac, reps=pred_reps, seed=seed, level=level
)
alt = phases.pooled_phases(curves, early_frac=early_frac, reps=1, seed=seed)
ph = ph.merge(alt[["model_size", "rmse_logistic", "rmse_exp"]], on="model_size")
record_all(
    findings.phase_findings(
        ph, largest=sizes[-1], early_frac=early_frac, level=level, reps=pred_reps, n=runs_per_size
    )
)
findings.phase_table(ph, early_frac=early_frac)

# %% [markdown]
# ### Phases run by run
#
# Runs that take off at different times average to a curve that climbs from the start,
# so each run is also judged on its own logistic: a **slow start** when at least two
# evaluations after step 0 come before its $t_{10}$ and the logistic beats the
# exponential saturation; a **plateau** when at least two come after its $t_{90}$ and
# $R_{max} \le 1$; its onset **predicted** when the fit on its first `early_frac` puts
# $t_{90}$ within 0.1 of the full fit's. If the trajectory is a function of size, initial
# performance and progress (Nimmaturi et al.), the seeds of a size start their climb
# together: the seed SD of $t_{10}$ measures that, its rank correlation with the run's
# starting pass rate how much of the spread the start explains. Where runs nest in warm
# starts (v3), a share is over the base models (each one's share of its runs, sizes as
# strata) with Korn-Graubard's interval, whose coverage is simulated on this design; the
# seed SD of $t_{10}$ is the RL seeds' within a base model (as the paper's seeds are),
# pooled over the base models that have a slow start, beside the base models' own SD.

# %%
per_run = phases.run_phases(curves, early_frac=early_frac)
shares = phases.phase_shares(per_run, reps=poi_reps, seed=seed, level=level)
record_all(
    findings.run_phase_findings(
        shares, base=base, early_frac=early_frac, level=level, reps=poi_reps
    )
)
display(pd.DataFrame({k: v["by_size"] for k, v in shares.items() if "by_size" in v}).round(3))
plots.run_phases(per_run)
plt.show()
per_run.set_index(["model_size", "seed"])[
    ["start", "R0", "Rmax", "identified", "t10", "t90", "slow_start", "plateau", "t90_error"]
].round(3)

# %% [markdown]
# ## Design ablations and positive controls: asymptote or efficiency?
#
# Each run gets its own sigmoid ($R_0$ its own). For each variant against the baseline
# (same seeds, same warmed-up policy): the mean paired difference in $A$, $\log_{10} B$ and
# $\log_{10} C_{mid}$ over the sizes it ran at (Student t over seeds: a percentile
# bootstrap over 3-5 seeds under-covers, see the coverage table), the probability of
# improvement $P(X > Y)$ over runs, and the minimum detectable effect (`mde`, 80% power
# at this number of seeds), shown beside each verdict after the ledger. `sample_agg`
# (per-sample loss aggregation) and `batch_norm` (batch-level advantage normalisation) are
# ScaleRL's kind of design choice. The positive controls: `len_cap` (a generation cap
# that truncates the answers of a share of the prompts: 10% in `v3`, half in `medium`)
# must lower $A$, and `half_lr` must cost efficiency (a larger $C_{mid}$): if they do
# not, the design cannot see such effects. `reuse` is the data-reuse comparison below.

# %%
effects = ablations.ablation_effects(per_seed, baseline=base, reps=poi_reps, seed=seed, level=level)
effects = sound_findings.t_effects(per_seed, effects, baseline=base, level=level)
a_sd = predict.seed_spread(per_seed, variant=base, reps=poi_reps, seed=seed, level=level)
record_all(
    findings.ablation_findings(
        effects, a_sd, base=base, level=level, reps=poi_reps, method=sound_findings.PAIRED_T
    )
)
effects

# %% [markdown]
# **Coverage at this number of seeds.** Simulated coverage of the nominal 95% intervals
# of a mean of $n$ values drawn from the baseline's per-run $A$ (`seed_mean_coverage`),
# at the $n$ of this design (`n_used`) and at 3 and 5 seeds.

# %%
cov = seed_mean_coverage(
    per_seed.loc[per_seed["variant"] == base, "A"], ns=sorted({3, 5, n_used}), seed=seed
)
record_all(sound_findings.coverage_findings(cov, n_used=n_used))
cov.assign(n_used=cov["n"] == n_used)

# %% [markdown]
# ## Base model or RL: where the spread comes from
#
# A design that draws several RL seeds from each warmed-up policy (coordinates
# `warm_start` and `rl_seed`) splits the run-to-run spread of the per-run $A$ and of the
# final pass rate into the base models' and RL's (a nested ANOVA within sizes;
# `spread.variance_components`). ScaleRL's $\pm 0.02$ is RL noise from one base model
# (SCALERL-3). A design that re-warms every seed cannot split them, and says so. The
# claim reads every baseline run, as the design stated; the same split on the stable runs
# alone (ScaleRL's scope) is shown beside it (`spread/stable/...`). The warm-start spread
# is also why the intervals over runs elsewhere (SCALERL-2 and SCALERL-2-final, TAN-1,
# TAN-1-linear, TAN-2's Welch, the plateau gain) take the **warm start** as their unit
# (`studies/rl/units.py`): each warm start's runs are averaged first and the t interval is
# taken over those means (a statistic pooled over sizes takes the sizes as strata: its
# error comes from the base models' spread within their size, on base models - sizes
# degrees of freedom). Runs of one base model are not independent draws of its size;
# with 2 warm starts a size (m and l), a per-size interval has 1 degree of freedom, as
# wide as two base models allow. More RL seeds from the same two warm starts cannot
# narrow it; more warm starts can, which is what the third stage adds at s and xl (8 base
# models each, 7 degrees of freedom).

# %%
run_vals = spread.run_values(curves, per_seed, variant=base)
comps = {v: spread.variance_components(run_vals, v, level=level) for v in ("A", "final")}
record_all(sound_findings.spread_findings(comps, run_vals))
vals_stable = scope.stable_rows(run_vals.assign(variant=base), outcomes)
comps_stable = {"A": spread.variance_components(vals_stable, "A", level=level)}
record_all(
    sound_findings.spread_findings(
        comps_stable,
        vals_stable,
        prefix="spread/stable",
        subset="stable runs only: ScaleRL's scope; a sensitivity",
    )
)
if not spread.has_nesting(run_vals):
    print("no warm_start/rl_seed coordinates: base-model and RL spread are confounded")

# %%
if len(variants) > 1:
    plots.variant_curves(curves, sizes, variants)
    plt.show()

# %% [markdown]
# ## Data reuse (Tan et al.)
#
# `reuse` draws its prompts from a fixed pool of 2000 (up to 16 epochs), the baseline a
# fresh prompt every time; both spend the same compute per step. The effect is the
# held-out pass rate of `reuse` minus the baseline over the last 20% of the compute both
# runs reached, paired by seed; its interval is a paired Student t with Welch-Satterthwaite
# degrees of freedom over sizes (a percentile bootstrap of 3-5 seeds would not cover).

# %%
if "reuse" in variants:
    reuse = predict.matched_compute_delta(curves, "reuse", baseline=base, level=level)
    record_all(findings.reuse_findings(reuse, level=level))
    display(reuse)
else:
    print("no data-reuse variant in this design")

# %% [markdown]
# ## The claims ledger
#
# Every claim of `notebooks/claims/rl_scaling.toml` (shown in `docs/studies/rl_scaling.md`),
# decided by the intervals above (the verdict is computed from them). Tolerances:
# ScaleRL's noise floor on $A$ ($\pm 0.02$) for the asymptote, the final pass rate and
# data reuse; 0.1 of the run for the plateau's onset; 0.05 for Tan's exponent. A claim
# this design cannot test says why. Every paper's claim is tested here outside its regime
# (models of 25k-800k parameters doing addition, not the papers' language models); the
# positive controls are this study's own checks.

# %%
claims_from(
    "rl_scaling",
    **findings.claim_values(
        sizes,
        variants,
        early_frac=early_frac,
        user_data=bool(runs),
        scalerl_scope=scope.regime_text(run_scope, variant=base, sizes=sizes, by_block=by_block),
        half_runs_scope=halfruns.scope_text(decision["population"]),
        design_runs=blocks.design_runs_text(curves, seed_block, variant=base, sizes=sizes),
    ),
)

# %% [markdown]
# Each ablation effect with its interval, its minimum detectable effect (80% power at
# this number of seeds) and the verdicts it decides: an inconclusive verdict says how
# large an effect this design could have seen.

# %%
sound_findings.mde_table(effects, [v.to_json() for v in claims()])

# %% [markdown] tags=["only-medium", "only-medium_v2"]
# ## The medium sweep: cost, budget and progress
#
# Estimated from the recorded timings of the `medium_v1` sweep (`costs_from_runs`: the
# lower quartile of each size's seconds per warm-up, GRPO step and evaluation), every main
# run at its full 2000 steps, packed onto 2 workers. The sweep keeps every finished run
# under `data/rl_scaling/.runs/grpo-medium-<hash>/` and resumes there; below: its
# progress.

# %% tags=["only-medium", "only-medium_v2"]
per_size, lines = cost_table.sweep_cost("medium", timings_from="medium_v1")
print("\n".join(lines))
per_size

# %% [markdown]
# ## Reading the results
#
# Moving $A$ changes what RL can reach; moving only $B$ or $C_{mid}$, how fast. A
# parameter on its bound, a plateau not *shown* to gain less than 0.02, or an ablation
# interval wider than its `mde` decides nothing; each section above says how its test
# can fail. Below, the design's own reading.

# %% [markdown] tags=["only-default"]
# **What the `v3` design decides** (the baseline at 4 sizes, 2 warm starts per size, 2 RL
# seeds each in `v3`; more RL seeds at l and xl in its extension's first two stages and 6
# more base models at s and xl, one RL seed each, in its third: the ledger's regimes give
# the runs per size and block; 4,000 GRPO steps; the ledger gives each verdict).
#
# * *The asymptote.* Baseline runs that end more than 0.1 below their peak:
#   {{ runs/unstable | point }} (a share of {{ unstable/baseline/share }}; of the
#   `half_lr` runs {{ unstable/half_lr/share }}): unstable, outside ScaleRL's scope by
#   the rule, left out of the pooled fits. On the stable runs of the primary arm
#   (the width rule's learning rate), the number of sizes with $A$ off its bound is
#   {{ scalerl/A_identified_sizes | num }} (the design's aim: 3 of its 4 sizes; the
#   finding's note names each size that falls short and why); at
#   `s` the runs saturate near 1 and $A$ sits
#   on its bound 1 (the task saturates there: a limit of the design at that size). A size
#   whose runs take off at different compute can have a pooled mean curve that keeps
#   rising through the horizon and puts $A$ on its bound while most of its runs, fitted
#   one by one, have their own $A$ off it: `scalerl/<size>/A_runs_off_bound` counts them
#   beside the pooled fit. A size with fewer than 3 stable runs is not fitted. With every run, unstable ones
#   included, the count would be {{ scalerl/all_runs/A_identified_sizes | num }}; the
#   count for the `half_lr` arm, a secondary arm decided by the same rule, is
#   {{ scalerl/half_lr/A_identified_sizes | num }}. The findings' notes give each size's
#   reason. Fitted with one $A$ and $B$ per size and one $C_{mid}$ per run (each run's own
#   take-off; stated before it was read), the primary arm's count is
#   {{ scalerl/shared/A_identified_sizes | num }} (its note names the others).
# * *Half compute (SCALERL-2).* The furthest half window reaches
#   {{ scalerl/half_runs/max_multiple | point }}x $C_{mid}$;
#   {{ scalerl/half_runs/n_eligible | num }} runs of every variant are stable, have $A$
#   off its bound, took off and reach `min_multiple`, and on them
#   $|A_{half} - A_{full}|$ is {{ scalerl/half_runs/A_abs_error }}.
# * *Tan et al.* Held out, the line's RMSE exceeds the sigmoid's by
#   {{ tan/heldout_rmse_delta }} (TAN-1, every run; on the stable runs alone
#   {{ tan/stable/heldout_rmse_delta }}); $k$ of the largest size minus the smallest's is
#   {{ tan/k_rise }} (TAN-2; on the stable runs alone {{ tan/stable/k_rise }}); the law's
#   $N_0$ is {{ tan/N0 }} (TAN-3).
# * *Base model or RL (SCALERL-3).* The SD of the per-run $A$ across warm starts is
#   {{ spread/A/warm_start_sd }}, across the RL seeds of one warm start
#   {{ spread/A/rl_sd }} (every run; on the stable runs alone
#   {{ spread/stable/A/rl_sd }}); of the final pass rate {{ spread/final/warm_start_sd }}
#   and {{ spread/final/rl_sd }}.
# * *Controls and ablations.* The length cap moves $A$ by {{ ablation/len_cap/delta_A }}
#   (CONTROL-A), half the learning rate $\log_{10} C_{mid}$ by
#   {{ ablation/half_lr/delta_log10_C_mid }} (CONTROL-B), batch normalisation $A$ by
#   {{ ablation/batch_norm/delta_A }} (SCALERL-4; detectable effects: after the ledger).

# %% [markdown] tags=["only-default", "not-tiny"]
# *A sigmoid (SCALERL-1), size by size.* Net of the mean curve's noise, the pooled sigmoid
# lies {{ scalerl/s/lack_of_fit }} from the runs' expected curve at `s`,
# {{ scalerl/m/lack_of_fit }} at `m`, {{ scalerl/l/lack_of_fit }} at `l` and
# {{ scalerl/xl/lack_of_fit }} at `xl` (signed: below 0 where the noise accounts for all of
# the RMSE). The plain RMSE at `xl`, {{ scalerl/xl/rmse | point }}, includes
# {{ scalerl/xl/mean_curve_noise | point }} of noise from the mean over its few stable runs.
# Whether Tan et al.'s line bends is TAN-1-linear's question (Holm over the sizes; the
# ledger gives each size's verdict): its curvature is {{ tan/s/curvature }} at `s` and
# {{ tan/xl/curvature }} at `xl`.

# %% [markdown] tags=["only-small"]
# **What the `small` design (3 sizes, 3 seeds, 500 GRPO steps) cannot decide.** The
# learning rate falls with width and every size runs 500 steps, so the largest policy
# learns less per unit of compute (`tan/k_rise` {{ tan/k_rise }}: TAN-2; $N_0$
# {{ tan/N0 }}: TAN-3); the furthest half window reaches
# {{ scalerl/half_runs/max_multiple | point }}x $C_{mid}$ (SCALERL-2); each seed re-warms
# its model, so base-model and RL spread are confounded (SCALERL-3); the warm-up ends
# where GRPO already climbs ({{ phases/runs/slow_start_share | pct }} of the runs have a
# slow start, GRPOLAW-1).

# %% [markdown] tags=["only-medium"]
# **What the `medium_v1` design shows.** The learning-rate stage and the positive
# controls worked (CONTROL-A's $\Delta A$ {{ ablation/len_cap/delta_A }}; half the
# learning rate, $\Delta \log_{10} B$ {{ ablation/half_lr/delta_log10_B }}), but its
# plateau rule stopped runs still rising or already falling ({{ runs/unstable | point }}
# unstable), pooled curves of unequal length rise and fall (RMSE up to
# {{ scalerl/xl/rmse | point }}, SCALERL-1), GRPO is unstable at the larger sizes
# ({{ runs/collapsed | point }} collapse) and $N_0$ lands on its bound ({{ tan/N0 }}).
# `medium_v2` runs every run to 2000 steps and judges the plateau afterwards.

# %% [markdown] tags=["only-medium_v2"]
# **What the `medium_v2` design decides** (70 runs of 2000 steps: the baseline at 4 sizes
# with 5 seeds, two design ablations, two positive controls and a reused pool at `s` and
# `m`). Of the baseline, {{ runs/collapsed | point }} collapsed,
# {{ runs/not_taken_off | point }} stayed at their $R_0$ and {{ runs/unstable | point }}
# are unstable. The ledger gives each verdict.
#
# * *The design sees effects.* The length cap changes $A$ by
#   {{ ablation/len_cap/delta_A }} (CONTROL-A; a cap that truncates half the sums, far
#   beyond the claims' 0.02) and half the learning rate flattens the sigmoid
#   ($\Delta \log_{10} B$ {{ ablation/half_lr/delta_log10_B }}, CONTROL-B-slope).
# * *The horizon is too short for ScaleRL's half-compute test.* The furthest half window
#   reaches {{ scalerl/half_runs/max_multiple | point }}x $C_{mid}$ (ScaleRL's: about
#   20x); of the runs, {{ scalerl/half_runs/n_eligible | point }} are stable, have $A$
#   off its bound, took off and reach `min_multiple`, and on them
#   $|A_{half} - A_{full}|$ is {{ scalerl/half_runs/A_abs_error }} (SCALERL-2).
# * *Tan et al.'s line is curved.* $\log_{10} L$ bends in $\log_{10} C$ (quadratic term
#   {{ tan/s/curvature }} at `s`, {{ tan/xl/curvature }} at `xl`; TAN-1-linear) and,
#   held out, the line's RMSE exceeds the sigmoid's by {{ tan/heldout_rmse_delta }}
#   (TAN-1; the sigmoid wins {{ tan/sigmoid_wins_share | pct }} of the runs). $k$ does not
#   rise with size (`tan/k_rise` {{ tan/k_rise }}: TAN-2; $N_0$ {{ tan/N0 }}: TAN-3).
# * *Take-off decides the rest.* Warm-up stops at $R_0 \approx 0.03$-$0.05$ and seeds of
#   one size take off at very different times (seed SD of $t_{10}$
#   {{ phases/runs/t10_seed_sd }} of the run; GRPOLAW-3); each seed re-warms its model, so
#   the seed SD of $A$ ({{ scalerl/A_seed_sd }}) mixes base models with RL noise and
#   SCALERL-3 is not identified.
# * *Plateaus.* Shown as an equivalence, the plateau fires in
#   {{ plateau/n_plateau | point }}; they gained {{ plateau/gain_after }} after it.
# * *ScaleRL's "B, not A".* Sample aggregation leaves $A$ within
#   {{ ablation/sample_agg/delta_A }} of the baseline; batch normalisation may lower it
#   ({{ ablation/batch_norm/delta_A }}). Reuse: {{ reuse/delta_pass_rate }} in pass rate
#   (TAN-4).
