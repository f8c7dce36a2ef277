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
#     reports:
#     - default
#     - medium
#     - medium_v2
#     tiny:
#       compute_class: tiny
#       kn_reps: 10
#       poi_reps: 200
#       reps: 40
#       scheduler: sync
#     title: RL post-training compute scaling (GRPO on verifiable arithmetic)
#     variants:
#       medium:
#         compute_class: medium_v1
#       medium_v2:
#         compute_class: medium
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
# **Three designs.** The default report (`compute_class=small`, 3 sizes, 3 seeds, 500
# steps) runs in minutes, but read as a reviewer would it cannot decide most of the
# papers' claims: every size gets a learning rate proportional to 1/width and the same
# 500 steps, so the largest model learns slowest and is still rising when it stops (a
# confound for $k(N)$ and no asymptote to predict); the warm-up ends where GRPO already
# climbs (no slow start); and three seeds without a positive control give the ablations
# no power. The **claims ledger** at the top of the report says so claim by claim. The
# `medium` class is the redesign meant to decide them (a sweep of a few hours on 2 cores,
# resumable run by run, see *The medium sweep* below): a GRPO learning-rate stage per
# size, 4 sizes over 32x in parameters, a warm-up that stops at $R_0 \approx 0.03$, 5
# seeds, positive controls that must move $A$ (a generation cap below what the 4-digit
# sums need) and efficiency (half the learning rate), and a fixed prompt pool reused for
# up to 16 epochs against fresh prompts at equal compute. Its first version
# (`medium_v1`, report variant `medium`) stopped each run once a plateau rule fired and
# chose learning rates on 300-step runs of 2 seeds; the current `medium` (report variant
# `medium_v2`) trains every run its full 2000 steps, judges the plateau afterwards, and
# chooses learning rates on 600-step runs of 3 seeds, excluding any under which a run
# collapsed. Each report reads its own design's results at the end (*Reading the
# results*).
#
# The facts this study reproduces (papers, claims with their ids, formulas, protocols and
# published numbers) are in
# [`docs/studies/rl_scaling.md`](../docs/studies/rl_scaling.md).

# %% tags=["parameters"]
# fmt: off
seed: int = 0  # seed of the bootstrap resampling (the sweep's seeds are in its config) [≥ 0]
compute_class: str = "small"  # tiny (tests), small (default report), medium, medium_v1 (its first design), large {tiny, small, medium, medium_v1, large}
scheduler: str = ""  # "": local Dask cluster, "sync": in-process, or a scheduler address
runs: str = ""  # your RL logs (CSV/Parquet: model_size, seed, compute or step, pass_rate); "": our sweep [file]
rerun: bool = False  # recompute the sweep even if a cached result exists
device: str = "cpu"  # cpu, cuda or auto {cpu, cuda, auto}
reps: int = 1000  # bootstrap resamples (over seeds) for the sigmoid and phase fits [≥ 1]
kn_reps: int = 200  # bootstrap resamples for k(N) (each refits the joint law) [≥ 1]
poi_reps: int = 2000  # resamples for the ablation CIs and probability of improvement [≥ 1]
pred_reps: int = 200  # resamples for the half-compute and early-plateau predictions (each refits twice) [≥ 1]
transient_frac: float = 0.1  # drop points before this fraction of a run's compute from sigmoid fits [≥ 0, < 1]
fit_frac: float = 0.5  # fit the sigmoid on compute ≤ fit_frac * C_max, predict the rest [> 0, ≤ 1]
early_frac: float = 0.3  # phase analysis: fit on the first early_frac of training only [> 0, ≤ 1]
level: float = 0.95  # confidence level of every interval [> 0, < 1]
# fmt: on

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr
from IPython.display import display

from scalinglab.paths import repo_root
from scalinglab.plots import use_style
from scalinglab.record import claims_from
from scalinglab.studies.rl import ablations, analysis, findings, kn, phases, plots, predict
from scalinglab.studies.rl.budget import costs_from_runs, estimate_sweep
from scalinglab.studies.rl.config import sweep_config
from scalinglab.studies.rl.findings import record_all
from scalinglab.studies.rl.stopping import PlateauRule, gain_after_plateau, run_outcomes
from scalinglab.studies.rl.sweep import rl_runs_folder, run_sweep

use_style()

pd.set_option("display.precision", 4, "display.width", 160)

if runs:
    ds = None
    curves = analysis.load_rl_logs(repo_root() / runs)  # an absolute path stays as it is
    print(f"read {len(curves)} evaluations from {runs}")
else:
    sweep = sweep_config(compute_class, device=device)
    ds = run_sweep(sweep, scheduler=scheduler, rerun=rerun)
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
# back: *declined* (the last evaluation more than 0.1 below the peak) or *collapsed* (below
# half its $R_0$, or back at $R_0$ after taking off); *took off*: its peak at least 0.1
# above $R_0$ (a run that did not is still in its slow start). The plateau rule
# (`PlateauRule`: the last 20% of compute gained less than twice its noise or 0.02, three
# evaluations in a row, after step 400) is applied afterwards: `plateau_step` is where it
# would have stopped the run, and `gain_after_plateau` what the run gained after that
# (the mean of its last 3 evaluations minus the mean of the 3 up to the onset). A run that
# the rule did stop (the first `medium` design) shows nothing after its onset and has no
# gain.

# %%
outcomes = run_outcomes(curves, rule=PlateauRule(min_steps=400))
base_out = outcomes[outcomes["variant"] == base]
display(base_out.groupby("model_size", sort=False)[["took_off", "declined", "collapsed"]].sum())
record_all(findings.run_outcome_findings(base_out, base=base))
after = gain_after_plateau(outcomes, reps=poi_reps, seed=seed, level=level)
record_all(findings.plateau_findings(after, level=level, reps=poi_reps))
print(
    f"plateau rule fired in {after['n_plateau']} of {after['n_total']} runs; "
    f"{after['n_runs']} continued past it"
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
# The `small` design's learning rate follows the width ($lr \propto 1/d_{model}$) untuned.
# The redesign first runs every size at several multiples of that rule from the same
# warmed-up policies as the main runs (`medium`: 0.25, 0.5 and 1x, 3 seeds, 600 steps;
# `medium_v1`: 0.125-1x, 2 seeds, 300 steps; a first start at 0.5-4x drove GRPO from
# $R_0 \approx 0.03$ to zero reward at 1x and above) and keeps, per size, the multiplier
# with the highest held-out pass rate over the last evaluations (`lr_score`), leaving out
# (in `medium`) any multiplier under which a run collapsed (`lr_collapsed`: its end below
# half its $R_0$). A choice on the edge of the grid is flagged: the optimum may lie beyond.

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
    print("no learning-rate stage in this design (small/tiny: lr = lr_base * 32 / d_model)")

# %% [markdown]
# ## ScaleRL sigmoid per model size
#
# $R_0$ is held at the measured pre-RL pass rate; points before `transient_frac` of a
# run's compute are excluded as the early transient (ScaleRL excluded about 1.5k of
# 50-100k GPU-hours; our first evaluations are noisier relative to the gain). The
# intervals resample whole seeds. $A$ is bounded by its physical range $[0, 1]$; an $A$
# on the bound 1 (in the point fit or in at least 20% of refits) is recorded as not
# identified: the run ended before the curve bent.

# %%
table, fits = analysis.fit_scalerl(curves, transient_frac=transient_frac, reps=reps, seed=seed)
record_all(findings.sigmoid_findings(table, fits, base=base))
table

# %%
plots.sigmoid_fits(curves, fits, sizes, base=base)
plt.show()

# %% [markdown]
# ## Predicting the asymptote and the end of training from the first half
#
# ScaleRL's test: refit each size's sigmoid on each run's evaluations up to `fit_frac`
# (half) of its final compute, then compare (1) the asymptote it predicts with the full
# fit's, $A_{half} - A_{full}$, and (2) the final pass rate it predicts with the observed
# one (mean over runs). ScaleRL's noise floor on $A$ is about $\pm 0.02$. `rmse` is the
# full fit's error against the seed-mean curve (does a sigmoid describe the runs at all).
# The held-out MAE of the half fit over the second half is kept for comparison with the
# earlier reports.

# %%
half = predict.half_compute(
    curves, fit_frac=fit_frac, transient_frac=transient_frac, reps=pred_reps, seed=seed, level=level
)
extra = analysis.extrapolate_scalerl(
    curves, fit_frac=fit_frac, transient_frac=transient_frac, reps=reps, seed=seed
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
    )
)
half_cols = ["A_full", "A_half", "A_error", "A_error_lo", "A_error_hi", "A_half_identified"]
half_cols += ["final_error", "final_error_lo", "final_error_hi", "rmse"]
half.set_index("model_size")[half_cols].join(
    extra.set_index("model_size")[["mae", "mae_lo", "mae_hi"]]
)

# %% [markdown]
# ## Tan et al.: learning rate in compute, $k(N)$
#
# $L = 1 - R$ falls as a power of compute; its exponent $k$ per size, the joint law
# $k(N) = K_{max} N/(N + N_0)$ over sizes, the rise of $k$ from the smallest to the
# largest size, and a leave-the-largest-out check: the law fitted on the smaller sizes
# predicts the largest size's exponent. $N_0$ on the edge of its range
# ($N_{min}/100$ to $100 N_{max}$) means $k$ does not rise with $N$ here: not identified.

# %%
kn_fit = kn.fit_kn(curves, reps=kn_reps, seed=seed, level=level)
record_all(findings.kn_findings(kn_fit, level=level, reps=kn_reps))
findings.k_table(kn_fit)

# %%
plots.k_of_n(curves, kn_fit, sizes, base=base)
plt.show()

# %% [markdown]
# ## Phases of the reward trajectory
#
# Our law for the trajectory is a logistic in training progress $t$ (the step over the
# size's longest run: its step budget unless every run stopped early),
# $R(t) = R_0 + (R_{max} - R_0)/(1 + e^{-\kappa (t - t_0)})$. The slow start ends at
# $t_{10}$, the rapid gain is centred on $t_{50} = t_0$ and the plateau begins at $t_{90}$,
# where the logistic has made 10%, 50% and 90% of its gain; the three phases are in the
# data when $t_{10} > 0$ and $t_{90} < 1$. A logistic whose own $R_0$ is below 0 starts
# mid-climb: the data hold no slow start and its $t_{10}$ is not identified. The plateau
# predicted from the first `early_frac` of training alone (`t90_early`) is compared with
# the full fit's; the early fit is not identified when it sees no plateau (in the point
# fit or in at least 20% of refits). The exponential saturation is the alternative law
# (lower RMSE wins). The table's `identified` column flags fits the data do not pin
# (their $R_0$ or $R_{max}$ outside $[0, 1]$, no bend inside training, or a step): their
# numbers are extrapolations of a logistic, not phases of the runs.

# %%
ph = predict.phase_predictions(
    curves, early_frac=early_frac, reps=pred_reps, seed=seed, level=level
)
alt = phases.pooled_phases(curves, early_frac=early_frac, reps=1, seed=seed)
ph = ph.merge(alt[["model_size", "rmse_logistic", "rmse_exp"]], on="model_size")
record_all(
    findings.phase_findings(
        ph, largest=sizes[-1], early_frac=early_frac, level=level, reps=pred_reps
    )
)
findings.phase_table(ph, early_frac=early_frac)

# %% [markdown]
# ### Phases run by run
#
# The fit above describes the *mean* trajectory of a size. Runs that take off at
# different times average to a curve that climbs from the start, so the pooled logistic
# can find no slow start while many runs have one. Each run is therefore also judged on
# its own logistic: a **slow start** is in its data when at least two evaluations after
# step 0 come before its $t_{10}$ and the logistic fits it better than the exponential
# saturation (which has no slow start); a **plateau** when at least two evaluations come
# after its $t_{90}$ and $R_{max} \le 1$. Its plateau onset is **predicted** when the fit
# on its first `early_frac` alone puts $t_{90}$ within 0.1 of the full fit's (a run
# without a plateau, or whose early fit sees none, is not predicted). If the trajectory
# is a function of model size, initial performance and progress (Nimmaturi et al.), the
# seeds of one size start their climb at about the same point: the seed standard
# deviation of $t_{10}$ measures that, and the rank correlation of $t_{10}$ with the
# run's own starting pass rate says how much of the spread the initial performance
# explains. Intervals resample runs within their size.

# %%
per_run = phases.run_phases(curves, early_frac=early_frac)
shares = phases.phase_shares(per_run, reps=poi_reps, seed=seed, level=level)
record_all(
    findings.run_phase_findings(
        shares, base=base, early_frac=early_frac, level=level, reps=poi_reps
    )
)
display(pd.DataFrame({k: v["by_size"] for k, v in shares.items()}).round(3))
plots.run_phases(per_run)
plt.show()
per_run.set_index(["model_size", "seed"])[
    ["start", "R0", "Rmax", "t10", "t90", "slow_start", "plateau", "t90_early", "t90_error"]
].round(3)

# %% [markdown]
# ## Design ablations and positive controls: asymptote or efficiency?
#
# Each run gets its own sigmoid ($R_0$ its own). For each variant against the baseline
# (same seeds, same warmed-up policy): the mean paired difference in $A$, $\log_{10} B$ and
# $\log_{10} C_{mid}$ over the sizes it ran at, the probability of improvement
# $P(X > Y)$ over runs, and the minimum detectable effect (`mde`, 80% power at this
# number of seeds). `sample_agg` (per-sample loss aggregation) and `batch_norm`
# (batch-level advantage normalisation) are ScaleRL's kind of design choice; in `medium`,
# `len_cap` (generation cap below the 4-digit sums) must lower $A$ and `half_lr` must
# cost efficiency (a larger $C_{mid}$): if they do not, the design cannot see such effects.
# `reuse` is the data-reuse comparison below.

# %%
per_seed = analysis.per_seed_sigmoids(curves, transient_frac=transient_frac)
effects = ablations.ablation_effects(per_seed, baseline=base, reps=poi_reps, seed=seed, level=level)
spread = predict.seed_spread(per_seed, reps=poi_reps, seed=seed, level=level)
record_all(findings.ablation_findings(effects, spread, base=base, level=level, reps=poi_reps))
effects

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
# runs reached, paired by seed.

# %%
if "reuse" in variants:
    reuse = predict.matched_compute_delta(
        curves, "reuse", baseline=base, reps=poi_reps, seed=seed, level=level
    )
    record_all(findings.reuse_findings(reuse, level=level, reps=poi_reps))
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
    **findings.claim_values(sizes, variants, early_frac=early_frac, user_data=bool(runs)),
)

# %% [markdown]
# ## The medium sweep: cost, budget and progress
#
# Estimated from the recorded timings of the `medium_v1` sweep (`costs_from_runs`: the
# lower quartile of each size's seconds per warm-up, GRPO step and evaluation), every
# main run at its full 2000 steps, packed onto 2 workers. The sweep keeps every finished
# run under `data/rl_scaling/.runs/grpo-medium-<hash>/` and resumes there; below: its progress.

# %%
med = sweep_config("medium")
v1_name = rl_runs_folder(sweep_config("medium_v1")).name
v1_file = repo_root() / "data" / "rl_scaling" / f"{v1_name}.nc"
if v1_file.exists():
    with xr.open_dataset(v1_file, engine="h5netcdf") as v1:
        costs = costs_from_runs(v1.load())
    per_size = pd.DataFrame(costs["sizes"]).T
    per_size["run_s_at_budget"] = [
        med.grpo.steps * c["step_s"] + (med.grpo.steps // med.eval_every + 1) * c["eval_s"]
        for c in costs["sizes"].values()
    ]
    display(per_size)
    for name in ("medium_v1", "medium"):
        est = estimate_sweep(sweep_config(name), costs, workers=2)
        bound = " (an upper bound: its plateau rule ended runs early)" if name != "medium" else ""
        print(
            f"{name}: tasks {est['tasks']}; {est['core_s']['total'] / 3600:.1f} core-hours, "
            f"{est['wall_s'] / 3600:.1f} h on 2 idle workers{bound}"
        )
else:
    print(f"no recorded timings to estimate from ({v1_file.name} is missing)")
med_runs = rl_runs_folder(med)
if (med_runs.parent.parent / f"{med_runs.name}.nc").exists():
    print(f"medium sweep complete: data/rl_scaling/{med_runs.name}.nc")
else:
    done = len(list(med_runs.glob("*.pkl"))) if med_runs.is_dir() else 0
    print(f"medium sweep: {done} of {med.n_tasks()} warm-ups and runs finished ({med_runs})")

# %% [markdown]
# ## Reading the results
#
# * **Sigmoids.** An $A$ on its bound 1 means the run ended before the curve bent (the
#   asymptote is then an extrapolation, as the 4x-extended bands show).
# * **Half compute.** $A_{half} - A_{full}$ and the final pass rate's error say whether
#   half a run predicts the rest; ScaleRL's noise floor is 0.02.
# * **k(N).** Tan et al. find $k$ rising with $N$: `tan/k_rise` > 0 with $N_0$ identified.
# * **Phases.** $t_{10} > 0$ and $t_{90} < 1$ put the slow start and the plateau inside
#   training; `phases/runs/*` judge every run on its own.
# * **Ablations.** Moving $A$ changes what RL can reach; moving only $B$ or $C_{mid}$, how
#   fast it gets there. With the positive controls moving what
#   they must, an interval within $\pm$ its `mde` of zero rules out an effect that large.

# %% [markdown] tags=["only-default"]
# **What the `small` design (3 sizes, 3 seeds, 500 GRPO steps) can and cannot decide**
# (the ledger above gives each verdict). The sigmoid describes every size's mean curve
# (RMSE {{ scalerl/s/rmse }}, {{ scalerl/m/rmse }} and {{ scalerl/l/rmse }} at `s`, `m`,
# `l`: the resampled curves are noisier) and $L = 1 - R$ falls as a power of compute at
# every size (TAN-1), but the design cannot test the papers' central claims:
#
# * *Confound (TAN-2, TAN-3).* The learning rate falls with width and every size runs the
#   same 500 steps, so the largest policy learns *less* per unit of compute ($k$
#   {{ tan/k/l }} at `l` against {{ tan/k/s }} and {{ tan/k/m }}; `tan/k_rise`
#   {{ tan/k_rise }}) and $N_0$ lands on the lower edge of its range ({{ tan/N0 }}). That
#   is an untuned learning rate, not a refutation of Tan et al.
# * *No asymptote (SCALERL-2).* Fitted on half its compute, the largest policy's $A$
#   misses by {{ scalerl/l/A_pred_error }} (the full run gives {{ scalerl/l/A }}):
#   the first half holds no asymptote to predict. At `s` the half fit misses $A$ by
#   {{ scalerl/s/A_pred_error }} and the final pass rate by
#   {{ scalerl/s/final_pred_error }} (SCALERL-2-final): at half compute the curve is still
#   in its steep part.
# * *No slow start (GRPOLAW-1).* The warm-up ends where GRPO already climbs: the pooled
#   logistic's $t_{10}$ precedes training at every size ({{ phases/s/t10 }} at `s`), and
#   the plateau of `l` may lie past the end of training ($t_{90}$ {{ phases/l/t90 }}).
#   Without a slow start the first 30% of a run is the steep part, and the plateau it
#   predicts is off by {{ phases/s/t90_early_error }} of the run at `s` (negative:
#   too early; GRPOLAW-1-early). Run by run the same: {{ phases/runs/slow_start_share | pct }} of
#   the runs have a slow start (GRPOLAW-1-runs), so when runs take off cannot vary across
#   seeds (GRPOLAW-3).
# * *No power (SCALERL-3, SCALERL-4).* $A$ sits on its bound 1 in many per-run fits (the
#   note of `scalerl/A_seed_sd`), so neither the seed spread of $A$
#   ({{ scalerl/A_seed_sd }}) nor the ablations' effect on $A$ is measured; their effects
#   on $\log_{10} B$ straddle zero ({{ ablation/sample_agg/delta_log10_B }} for
#   `sample_agg`), and there is no positive control (CONTROL-A/B untested) to show that
#   the design could see an effect. The `medium` designs are built for these claims.

# %% [markdown] tags=["only-medium"]
# **What the `medium_v1` design shows: a design that still cannot decide, and why.** The
# learning-rate stage, the low warm-up (the $R_0$ column of the runs table) and the
# positive controls worked: the length cap lowers the asymptote (CONTROL-A's $\Delta A$
# {{ ablation/len_cap/delta_A }}: not identified only because the baseline's own $A$ is
# on its bound in some refits) and half the learning rate lowers $B$
# ($\Delta \log_{10} B$ {{ ablation/half_lr/delta_log10_B }}). But two defects of the
# main stage leave most claims not identified or contradicted for reasons that are the
# design's, not the papers':
#
# * *The plateau rule stops runs that are still rising or already falling.* Its test
#   (the last 20% of compute gained less than twice its own noise) is passed by a noisy
#   rising window and by a falling one: the table of runs shows `m` runs stopped early
#   with their best evaluation at their last step, and {{ runs/declined | point }} of
#   the baseline were stopped after losing more than 0.1 from their peak. Runs of
#   unequal length then pool into mean curves that rise and fall, so the sigmoids' RMSE
#   is {{ scalerl/s/rmse | point }}, {{ scalerl/m/rmse | point }},
#   {{ scalerl/l/rmse | point }} and {{ scalerl/xl/rmse | point }} at `s` to `xl`
#   (SCALERL-1) and the half-compute fits have no asymptote to predict.
# * *GRPO is unstable at the two larger sizes.* {{ runs/collapsed | point }} of the
#   baseline collapse and {{ runs/not_taken_off | point }} never take off; the seed-to-seed
#   spread of $A$ is {{ scalerl/A_seed_sd }} (SCALERL-3), $k$ at `l` and `xl`
#   straddles 0 ({{ tan/k/l }}, {{ tan/k/xl }}) and $N_0$ lands on its bound
#   ({{ tan/N0 }}; TAN-2, TAN-3). The learning rate chosen on 300-step runs of two seeds
#   did not show instability that appears later.
#
# Deciding these claims needs the main stage re-run at a fixed budget (every run to 2000
# steps, the plateau judged afterwards rather than used to stop) and a GRPO recipe stable
# at `l` and `xl`; the data reuse comparison (TAN-4: {{ reuse/delta_pass_rate }}) does
# not decide at this spread. That is the `medium_v2` design. In `medium_v1` the rule
# stopped every run it fired on, so GRPOLAW-2 is not identified here.

# %% [markdown] tags=["only-medium_v2"]
# **What the `medium_v2` design decides** (70 main runs of 2000 steps: the baseline at 4
# sizes with 5 seeds, the two design ablations, the two positive controls and the reused
# pool at `s` and `m`). The learning-rate stage chose {{ lr/s/multiplier | point }},
# {{ lr/m/multiplier | point }}, {{ lr/l/multiplier | point }} and
# {{ lr/xl/multiplier | point }} x the width rule at `s` to `xl`;
# of the baseline, {{ runs/collapsed | point }} collapsed, {{ runs/not_taken_off | point }}
# stayed at their $R_0$ and {{ runs/declined | point }} ended more than 0.1 below their
# peak. The ledger gives each verdict.
#
# * *The design sees effects.* $L = 1 - R$ falls as a power of compute at every size
#   (TAN-1: $k$ {{ tan/k/s | point }}, {{ tan/k/m | point }}, {{ tan/k/l | point }},
#   {{ tan/k/xl | point }} at `s` to `xl`). The length cap changes the asymptote by
#   {{ ablation/len_cap/delta_A }} (CONTROL-A) and half the learning rate flattens the
#   sigmoid ($\Delta \log_{10} B$ {{ ablation/half_lr/delta_log10_B }}, CONTROL-B-slope,
#   the effect `medium_v1` measured, now on new runs).
# * *Runs of one size take off at very different times.* Judged run by run,
#   {{ phases/runs/slow_start_share | pct }} of the runs have a slow start and
#   {{ phases/runs/plateau_share | pct }} a plateau inside training, but the end of the
#   slow start ($t_{10}$) varies across the seeds of a size with a standard deviation of
#   {{ phases/runs/t10_seed_sd }} of the run (per size in the table above; the figure
#   shows seeds of one size that sit at their $R_0$ for most of the run next to seeds
#   that climb at once). Runs that start higher take off sooner (rank correlation
#   {{ phases/runs/t10_start_rho }}), but $R_0$ spans a narrow range and does not explain
#   that spread (GRPOLAW-3).
# * *Consequences.* The seeds' mean curve is a blend of early and late take-offs, so the
#   pooled logistic finds no slow start at `m` and `l` and no bend inside training at
#   `s` and `xl` (the phase table flags them: GRPOLAW-1, GRPOLAW-1-early); run by run,
#   {{ phases/runs/three_phases_share | pct }} show all three phases (GRPOLAW-1-runs)
#   and {{ phases/runs/predicted_share | pct }} have their plateau onset predicted from
#   their first 30% (GRPOLAW-1-early-runs): a slow start that is still going at 30% looks
#   like a plateau. The asymptote is just as seed-dependent: its seed SD is
#   {{ scalerl/A_seed_sd }} (SCALERL-3); fitted on half the compute, `m`'s asymptote
#   misses by {{ scalerl/m/A_pred_error }} and elsewhere the $A$ errors are wide
#   ({{ scalerl/s/A_pred_error }} at `s`, {{ scalerl/l/A_pred_error }} at `l`,
#   {{ scalerl/xl/A_pred_error }} at `xl`; SCALERL-2); the final pass rate predicted from
#   half misses by {{ scalerl/m/final_pred_error }} at `m` (SCALERL-2-final). Half the
#   learning rate's delay of $C_{mid}$ ({{ ablation/half_lr/delta_log10_C_mid }}) is
#   inside that noise (CONTROL-B; its detectable effect is in the finding's
#   description), and its runs are still rising at 2000 steps (their $\Delta A$:
#   {{ ablation/half_lr/delta_A }}).
# * *Tan et al.* $k$ does not rise with size across 32x (`tan/k_rise` {{ tan/k_rise }},
#   $N_0$ {{ tan/N0 }}: TAN-2) and the law fitted on the three smaller sizes misses
#   `xl`'s $k$ by {{ tan/holdout_k_error }} (TAN-3). A fixed pool of 2000 prompts reused
#   for up to 16 epochs does at least as well as fresh prompts at equal compute
#   ({{ reuse/delta_pass_rate }} in pass rate, $\Delta A$ {{ ablation/reuse/delta_A }});
#   "within 0.02" is not decided (TAN-4).
# * *ScaleRL's "B, not A".* Neither design choice moves $B$ detectably
#   ($\Delta \log_{10} B$ {{ ablation/sample_agg/delta_log10_B }} for sample aggregation,
#   {{ ablation/batch_norm/delta_log10_B }} for batch normalisation). Sample aggregation
#   leaves $A$ within {{ ablation/sample_agg/delta_A }} of the baseline; batch
#   normalisation may lower it ({{ ablation/batch_norm/delta_A }}). SCALERL-4 is read
#   against the length cap, which shows that a change of $A$ of that size is seen.
# * *Training past the plateau pays here.* Runs gained {{ plateau/gain_after }} after
#   the plateau rule's onset, {{ plateau/share_gaining | pct }} of them more than 0.02
#   (GRPOLAW-2): after the take-off the rule fires on stalls, flat within their noise,
#   that the runs later climb out of.
#
# Deciding the phase and asymptote claims at this scale needs either many more seeds per
# size or an analysis aligned on each run's own take-off; a higher $R_0$ would shorten and
# steady the slow start at the price of hiding it. `scalinglab reports diff
# rl_scaling/medium/latest rl_scaling/medium_v2/latest` lists what changed from
# `medium_v1`, claim by claim.
