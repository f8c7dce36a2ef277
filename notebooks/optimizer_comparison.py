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
#     description: 'Reproduces Wen et al. (2025), "Fantastic Pretraining Optimizers
#       and Where to Find Them", at CPU scale: AdamW, NAdamW, Muon, SOAP, Lion and Scion,
#       each tuned by coordinate descent, train small byte-level Llama-style LMs at
#       1-8x Chinchilla; speedup over AdamW by the paper''s formula with bootstrap CIs,
#       its trend with model size, rankings at intermediate checkpoints, and the wall-clock
#       cost per step. Or the same analysis of the paper''s own final losses, or of
#       your own table.'
#     inputs:
#     - data/optimizer_comparison/*.nc
#     - data/published/fantastic_optimizers/*.csv
#     reports:
#     - default
#     - published
#     - medium
#     retired:
#       matched: 'its design (issue #29) runs as the `medium` report since 2026-11-28;
#         the versions below are that design under its first name'
#     tiny:
#       compute_class: tiny
#       reps: 200
#       scheduler: sync
#     title: 'Pretraining optimizers compared with fair tuning: speedups over AdamW'
#     variants:
#       medium:
#         compute_class: matched
#       medium_capped:
#         compute_class: medium
#       published:
#         reps: 1000
#         runs: data/published/fantastic_optimizers/final_losses.csv
#       wsd:
#         schedule: wsd
# ---

# %% tags=["parameters"]
# fmt: off
seed: int = 0  # seed of every bootstrap (training seeds are part of the sweep config) [≥ 0]
compute_class: str = "small"  # tiny (tests, minutes), small (2 CPU cores, ~35 min), medium (the first redesign, capped tuning: variant medium_capped, ~4 h), matched (issue #29, the medium report's design, ~9 h), tiny_matched (its test size), large {tiny, small, medium, matched, tiny_matched, large}
scheduler: str = ""  # "": local Dask cluster, "sync": in-process, else a scheduler address
runs: str = ""  # your table of final losses (optimizer, model_size, data_multiple, loss[, seed]); "": run the sweep [file]
schedule: str = "cosine"  # learning-rate schedule of every run: cosine or wsd (warmup-stable-decay) {cosine, wsd}
rerun: bool = False  # re-run the sweep even if data/optimizer_comparison/ has it
baseline: str = "adamw"  # the optimizer whose L(D) defines the speedup
reps: int = 2000  # bootstrap resamples for every CI [≥ 1]
level: float = 0.95  # CI level [> 0, < 1]
# fmt: on

# %% [markdown]
# # Fantastic pretraining optimizers, at small scale
#
# Wen, Hall, Ma and Liang (2025) re-ran the optimizers that claim 1.4-2x speedups over
# AdamW with *equal, rigorous tuning* and evaluation *at the end of training*. Their
# findings: speedups shrink to about 1.3-1.4x at 130M parameters and about 1.1x at 1.2B;
# the leaders are matrix-preconditioned (Muon, SOAP, Kron, Scion); scalar variants
# (NAdamW, Lion, ...) give 1.0-1.1x; and rankings at intermediate checkpoints can flip,
# because a run in the middle of its learning-rate decay is not a finished run.
#
# The facts this study reproduces (papers, claims with their ids, formulas, protocols and
# published numbers) are in
# [`docs/studies/optimizer_comparison.md`](../docs/studies/optimizer_comparison.md).

# %% [markdown] tags=["not-published", "not-user"]
# We repeat the protocol with byte-level Llama-style models (RMSNorm, rotary positions,
# SwiGLU) small enough for two CPU cores, trained on Python's own documentation to
# multiples of Chinchilla (20 tokens per parameter) with a schedule that ends at each
# budget; every optimizer is tuned for itself (coordinate descent at the smallest size,
# then re-tuning per size; walks to an interior optimum in `medium`); AdamW's final loss
# is fitted as `L(D) = A D^-alpha + E` per size, and an optimizer reaching loss `L` at `D`
# has speedup `D_eff / D` with `D_eff = ((L - E)/A)^(-1/alpha)`. Our sizes (thousands of
# parameters) are far below the paper's: what transfers is the method, and the question
# whether the same qualitative pattern appears. `runs=` reads your own table instead.

# %% [markdown] tags=["only-published"]
# This report reads the paper's own final losses
# (`data/published/fantastic_optimizers/`, 130M-1.2B, 10 optimizers, with provenance) and
# runs the same analysis and claims ledger at paper scale, with the intervals the paper does
# not give: it has one run per setting, so the noise is estimated from how far every
# optimizer's curve departs from the smooth law, and a parametric bootstrap carries it
# through the AdamW fit and every speedup (`scalinglab.studies.optimizers.published`).

# %%
import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import scalinglab.record
from scalinglab.fitting.loss_table import sweep_table
from scalinglab.plots import use_style
from scalinglab.record import claims_from, findings_table, record
from scalinglab.studies.optimizers import (
    analysis,
    controls,
    findings,
    matched_report,
    matching,
    plots,
    published,
    rising,
    seed_t,
    seed_t_arms,
    step_times,
    tuning_curves,
)
from scalinglab.studies.optimizers.config import WALK_LIMITS
from scalinglab.studies.optimizers.sweep import planned_epochs, run_sweep, sweep_config

use_style()
pd.set_option("display.precision", 4)
pd.set_option("display.width", 140)

# %% [markdown]
# ## 1. The runs

# %% [markdown] tags=["not-published", "not-user"]
# The sweep (cached in `data/optimizer_comparison/` by the hash of its config, which
# includes the corpus hash) trains every optimizer at every size, data multiple and seed
# as Dask tasks, after tuning.

# %% [markdown] tags=["only-published", "only-user"]
# The table of final losses is read as it is; the sections that need training curves,
# tuning paths or control arms (rising losses, tuning, mid-run rankings, the control arms
# and the wall clock) have nothing to show for it and are left out.

# %%
ds = None
# a walk-protocol sweep decides on its t findings (section 5c): no percentile headlines
rows = findings.Rows(
    level=level, reps=reps, baseline=baseline,
    headlines=bool(runs) or not sweep_config(compute_class).tune_seeds,
)  # fmt: skip
if runs:
    table = published.read_runs(runs)  # the paper's released file or your own table
    print(f"{len(table)} runs from {runs}")
else:
    sweep = dataclasses.replace(sweep_config(compute_class), schedule=schedule)
    ds = run_sweep(sweep, scheduler=scheduler, rerun=rerun)
    table = sweep_table(ds)
    seen = findings.overview(ds, planned_epochs(sweep))
    display(seen.models, Markdown(seen.text), seen.runs, seen.epochs)
    if len(seen.failed):
        display(seen.failed.to_frame())
    epochs = seen.epochs
    record(
        "runs/total",
        float(seen.total),
        description="training runs in the final sweep (cells left out by design not counted)",
    )
    record(
        "data/epochs_max",
        float(np.nanmax(epochs.values)),
        unit="epochs",
        description="most passes over the training stream of any run (above 1: data repeat)",
    )

# %% [markdown] tags=["not-published", "not-user"]
# ### Losses that rise with more data
#
# Twice the data at a tuned learning rate should not end at a higher held-out loss. Each
# cell whose seed-mean final loss rises from one multiple to the next is listed with the
# paired change per seed, the change of the training loss, the epochs and whether its
# learning rate sits on a grid edge; the cause follows fixed rules (`rising.diagnose`):
# *one seed*, *seed noise* (the interval holds 0), *overfitting* (past one epoch,
# training loss down), *optimisation* (training loss up too), else *unexplained*.

# %% tags=["not-published", "not-user"]
if ds is not None:
    rise = rising.diagnose(
        rising.rising_losses(ds, epochs=epochs.to_numpy(), reps=reps, level=level, seed=seed)
    )
    record(
        "rising/cells",
        float(len(rise)),
        description="(optimizer, size, multiple) cells whose seed-mean final loss rises "
        "with twice the data",
    )
    record(
        "rising/unexplained",
        float((rise["cause"].isin(["unexplained", "optimisation"])).sum()) if len(rise) else 0.0,
        description="rising cells the rules attribute to no benign cause (optimisation or "
        "unexplained): defects to fix",
    )
    display(rise if len(rise) else "no loss rises with more data")
    for row in rows.rising(rise):
        record(**row)

# %% [markdown] tags=["not-published", "not-user"]
# ## 2. The tuning

# %% [markdown] tags=["not-published", "not-user", "not-medium"]
# Coordinate descent: sweep one hyperparameter over its grid with the others fixed, move
# to the best value if it improves the final loss by more than the tolerance, repeat
# until a pass moves nothing; a learning rate or weight decay best on its grid's edge gets
# the grid extended 2x past it (up to three times a side). Below: the grids, the path
# and the chosen values.

# %% [markdown] tags=["only-medium"]
# Walks to an interior optimum: each setting steps along its ladder (below; the learning
# rate's grows x2 without a fixed end) until the best value tried is strictly inside the
# values tried, on tuning seeds apart from the evaluation seeds; an optimum at a feasible
# limit (no warmup, no weight decay) is a constrained optimum. Below: the ladders, every
# evaluation and the chosen values; each walk's curve and end state are in section 5c.

# %% tags=["not-published", "not-user"]
if ds is not None:
    display(tuning_curves.search_space(sweep))
    path = tuning_curves.path_table(ds)
    plots.tuning(path, ds)
    plt.show()
    display(
        path.groupby(["search", "stage"]).agg(
            evaluations=("objective", "size"), best=("incumbent", "last")
        )
    )
    display(ds.hparams.isel(data_multiple=0).to_pandas())
    if ds.attrs.get("tuning_warnings"):
        print("grid edges:\n" + ds.attrs["tuning_warnings"])
    record(
        "tuning/evaluations",
        float(len(path)),
        description="training runs spent on tuning (coordinate descent and re-tuning, or walks)",
    )

# %% [markdown]
# ## 3. Final loss

# %% [markdown] tags=["not-published", "not-user"]
# Held-out loss (nats per byte) at the end of training, mean over seeds, with a
# percentile bootstrap CI over seeds.

# %% [markdown] tags=["only-published", "only-user"]
# The table's final losses as they were published (one run per setting: no interval).

# %%
final = findings.final_losses(table, level=level)
display(
    final.pivot_table(
        index=["model_size", "optimizer"], columns="data_multiple", values="loss", sort=False
    )
)
sizes = list(dict.fromkeys(final.model_size))
plots.per_size(final, "loss", sizes=sizes, ylabel="final held-out loss")
plt.show()
for row in rows.losses(final):
    record(**row)

# %% [markdown]
# ## 4. Speedup over AdamW
#
# Per size, AdamW's final losses are fitted by `L(D) = A D^-alpha + E` (the fitting
# engine's `power_offset` law, least squares); every other run's loss is inverted to the
# data AdamW would need. A loss at or below the fitted asymptote has no finite `D_eff`;
# it is reported as such, never as infinity. This is what `scalinglab speedup` prints.
#
# A size whose fitted `E` sits on its bound 0 (in the point fit or in 20%+ of refits) has
# speedups that are **not identified**: `D_eff` then rests on an asymptote the data do not
# pin down. So has a size of our sweeps where any optimizer trains with a tuned setting on
# the edge of what its tuning tried (a capped walk stopped short, or a grid's cut end):
# the speedup of an optimizer tuned less than it could be, or over a baseline tuned less,
# measures the tuning (`tuning flags` below; an optimum at a feasible limit, such as no
# warmup, is not flagged). In `medium`, so has a size where AdamW's own law misses its
# own points (its speedup over itself at some budget excludes 1; section 5c): every
# speedup there inverts that law, and the finding's note says so.

# %% [markdown] tags=["not-published", "not-user"]
# The intervals resample seeds, and AdamW's law is refitted in every replicate.

# %% [markdown] tags=["only-published", "only-user"]
# With one run per cell there are no seeds to resample: the loss noise is the pooled
# residual spread of every optimizer's own law fit, and a parametric bootstrap adds it to
# every loss, refits AdamW and recomputes each speedup.

# %%
speedups = findings.speedups(table, baseline=baseline, reps=reps, level=level, seed=seed)
if ds is not None:  # a size tuned on the edge of what its tuning tried decides nothing
    speedups = findings.gate_tuning(speedups, tuning_curves.size_flags(
        ds, ladders=sweep.ladders(), max_passes=sweep.walk_max_passes, limits=WALK_LIMITS,
        tune_multiple=sweep.tune_multiple,
    ))  # fmt: skip
if ds is not None and sweep.tune_seeds:  # where AdamW's law misses its own points
    speedups = findings.gate_misfit(
        speedups, matched_report.law_misfit(table, baseline=baseline, level=level)
    )
res, size_ok = speedups.result, speedups.identified
if ds is not None:
    record(
        "tuning/flagged_sizes",
        float(sum(map(bool, speedups.tuning.values()))),
        description="sizes whose speedups rest on a tuned setting on the edge of what its "
        "tuning tried (their speedups and claims not identified)",
    )
if speedups.one_run:
    print(
        f"loss noise from the law fits' residuals: sigma = {speedups.sigma:.4f} "
        f"({speedups.sigma_dof} dof)"
    )
fits_table = pd.DataFrame(res.fits).T[["A", "alpha", "E", "n_points", "status"]]
fits_table["E identified"] = pd.Series({s: speedups.e_ok(s) for s in fits_table.index})
fits_table["tuning flags"] = pd.Series(
    {s: len(speedups.tuning.get(s, ())) for s in fits_table.index}
)
display(fits_table)
cells = res.cells
display(
    cells.pivot_table(
        index=["model_size", "optimizer"], columns="data_multiple", values="speedup", sort=False
    )
)
for w in res.warnings:
    print("note:", w)
shown = cells[(cells.optimizer != baseline) & (cells.status == "ok")]
plots.per_size(shown, "speedup", sizes=sizes, ylabel=f"speedup over {baseline}", ref=1.0)
plt.show()
for row in rows.baseline_fits(speedups) + rows.speedups(speedups):
    record(**row)

# %% [markdown] tags=["not-published", "not-user"]
# ### The noise floor
#
# AdamW's speedup over itself is 1 by construction; its interval (AdamW's seeds resampled
# for its cells independently of its refit) is the noise floor of every speedup at that
# size. The minimum detectable speedup (MDE) is the ratio a two-sided test at this level
# would detect with 80% power: speedups closer to 1 than that cannot be told apart from no
# speedup by this design. It is read over the budgets the other optimizers ran at each
# size, not AdamW's extra ones. (With one run per cell AdamW's own noisy losses also make
# its refit, so its speedup over itself stays near 1 by construction: no floor is read.)

# %% tags=["not-published", "not-user"]
if not speedups.one_run:
    floor = controls.noise_floor(matching.compared(res))
    display(floor)
    for row in rows.noise_floor(floor, speedups):
        record(**row)

# %% [markdown]
# ## 5. Does the speedup shrink with model size? Do matrix methods lead?
#
# The geometric mean of each optimizer's speedup over its data budgets per size, the
# slope of its log against log N (negative: shrinking) over the budgets every size ran,
# and the ratio of the matrix family's mean speedup to the scalar family's (above 1:
# matrix methods lead; in `medium` AdamW, at 1 by definition, is one of the scalar
# family, so the ratio does not rest on one scalar variant). The trend uses the sizes
# whose speedups are identified (AdamW's E identified, no flagged tuning, and in `medium`
# AdamW's law fitting its own points) when at least three are; else every size, and then
# the slope is not identified.

# %%
n_params, families = findings.size_labels(ds, sizes, res.cells.optimizer.unique())
per_size = analysis.speedup_by_size(res)
display(per_size)
for row in rows.per_size(per_size, speedups):
    record(**row)
res_matched, matched_mults = matching.matched(res)
trend_sizes, trend_ok = findings.trend_sizes(sizes, size_ok)
print(
    "size trend over the budgets every size shares ("
    + ", ".join(f"{m:g}x" for m in matched_mults)
    + ") at "
    + ", ".join(trend_sizes)
)
if n_params is not None and matched_mults:
    per_size, trend = analysis.size_trend(matching.at_sizes(res_matched, trend_sizes), n_params)
    display(trend)
    plots.size_trend(per_size, baseline=baseline, multiples=matched_mults)
    plt.show()
    slopes = dict(sizes=trend_sizes, identified=trend_ok, multiples=matched_mults)
    for row in rows.size_slopes(trend, speedups, **slopes):
        record(**row)
else:
    print("model_size labels are not numbers: no trend with size")
gap = analysis.family_gap(res, families, with_baseline=bool(ds is not None and sweep.tune_seeds))
display(gap)
for row in rows.family_gap(gap, speedups, sizes):
    record(**row)
soap = findings.soap_name(table)
mults = findings.shared_multiples(table, "muon", soap)
catch = published.catch_up(res, leader="muon", follower=soap, low=mults[0], high=mults[-1])
display(catch)
for row in rows.catch_up(catch, speedups, follower=soap, multiples=mults):
    record(**row)

# %% [markdown] tags=["not-published", "not-user"]
# ### The deciding intervals: Student t over seeds
#
# A percentile bootstrap over 3 seeds covers about 0.71 of the time at a nominal 95%, so
# the intervals above describe the spread but decide no claim. The claims are decided on
# the same statistics computed seed by seed (AdamW's law fitted to each seed's own
# losses, every run of that seed inverted through it, paired), with a Student-t interval
# over the seeds (`t/` findings, `scalinglab.studies.optimizers.seed_t`). The table below
# simulates both methods' coverage at 3, 5 and 10 seeds on a generator that resamples
# these log speedups' own per-seed deviations (each t interval's method states its
# coverage at 3 seeds).

# %% tags=["not-published", "not-user"]
if ds is not None:
    by_seed = seed_t.analyse(
        table, sizes=sizes, e_identified={s: speedups.e_ok(s) for s in sizes},
        families=families, n_params=n_params, trend_sizes=trend_sizes,
        trend_identified=trend_ok, shared=matched_mults, follower=soap,
        catch_multiples=mults, baseline=baseline, level=level, seed=seed,
        tuning=speedups.tuning, misfit=speedups.misfit,
        scalar_with_baseline=bool(sweep.tune_seeds),
    )  # fmt: skip
    display(by_seed.coverage)
    for row in by_seed.rows:
        record(**row)

# %% [markdown] tags=["not-published", "not-user"]
# ## 5b. What tuning each optimizer for itself is worth (hyperparameter transfer)
#
# Where the sweep has the transfer arm (`medium`, `medium_capped`), every optimizer also ran
# with AdamW's tuned learning rate and weight decay. Its speedup with those over its
# speedup at its own optimum (same AdamW fit, replicates paired) is how much a comparison
# that tunes only one side misstates it: below 1 it deflates, above 1 it inflates. The
# bootstrap table describes the spread; the claim is decided on the same ratio computed
# per seed (AdamW fitted to each seed's losses) with a Student-t interval over the seeds
# (`t/transfer_ratio/`, `scalinglab.studies.optimizers.seed_t_arms`), whose coverage at
# 3 seeds is simulated on these differences' own per-seed deviations (table below).

# %% tags=["not-published", "not-user"]
if ds is not None and "transfer_final_loss" in ds:
    transfer, _ = controls.transfer_effect(ds, baseline=baseline, reps=reps, seed=seed, level=level)
    display(transfer)
    for row in rows.transfer(transfer, speedups):
        record(**row)
    if not sweep.tune_seeds:  # the matched design records its own t findings (5c)
        transfer_t, transfer_cov = seed_t_arms.transfer(
            table, ds=ds, baseline=baseline, level=level, seed=seed, tuning=speedups.tuning
        )
        display(transfer_cov)
        for row in transfer_t:
            record(**row)
else:
    print("no hyperparameter-transfer arm in these runs")

# %% [markdown] tags=["only-medium"]
# ## 5c. The matched design: tuning curves, matched budget and steps, t over seeds
#
# Each optimizer was tuned at every size by walks that end only when the best setting is
# strictly inside the values tried (mean final loss over tuning seeds 100 and 101). The
# table lists each final walk (values, objectives, optimum, end state), the figure the
# learning-rate curves with their optima starred. An optimum on the last value tried (`on
# edge`) or where a fixed ladder was cut (`at bound`) flags every cell trained with it, and a
# speedup resting on a flagged cell (its own or AdamW's at that size) is *not identified*.
# An optimum at a limit of the feasible range (`at limit`: no warmup, no weight decay) is a
# constrained optimum, the best setting that can be run, and is not flagged.
# Speedups are recomputed per seed (AdamW fitted to each seed's losses), with Student-t
# intervals over the 3 evaluation seeds (coverage at n = 3 on these data below), at the
# matched budget (1x) and at matched steps (one batch: w32 8x, w48 4x, w64 2x and w96 1x
# run about 2k steps each). The ledger decides each claim per size from these `t/`
# findings, with Holm's correction over the sizes.

# %% tags=["not-published", "not-user"]
matched = None
if ds is not None and sweep.tune_seeds:
    matched = matched_report.analyse(
        table, ds, ladders=sweep.ladders(), max_passes=sweep.walk_max_passes,
        limits=WALK_LIMITS, baseline=baseline,
        tune_multiple=sweep.tune_multiple, e_identified={s: speedups.e_ok(s) for s in sizes},
        level=level, seed=seed,
    )  # fmt: skip
    display(matched.tuning)
    plots.tuning_curves(matched.curves, multiple=sweep.tune_multiple)
    plt.show()
    display(matched.cells, matched.speedups, matched.coverage)
    plots.matched_speedups(matched.speedups, matched.cells, n_params)
    plt.show()
    for row in matched.rows:
        record(**row)

# %% [markdown] tags=["not-published", "not-user"]
# ## 6. Rankings at intermediate checkpoints
#
# Every run is evaluated at evenly spaced points. Kendall's tau compares the optimizers'
# order at each point with their order at the end of the *same* runs (1: identical); the
# leader table names the best optimizer at each point. Mid-run, a method whose schedule
# has not decayed yet looks worse than it will end: the paper's warning against comparing
# at intermediate checkpoints. The bootstrap interval of one cell's tau over 3 seeds can be
# a point (every resample gives the same two rankings); the claim is decided on tau
# computed per seed (each seed's own runs ranked halfway and at the end), averaged over
# every cell with complete curves, with a Student-t interval over the seeds
# (`t/tau_midrun/all`; the table below simulates its coverage at 3 seeds on the per-cell
# taus' own per-seed deviations).

# %% tags=["not-published", "not-user"]
ranked = None
if ds is not None:
    tau = analysis.ranking_agreement(ds, reps=reps, seed=seed, level=level)
    leaders = analysis.leader_table(ds)
    ranked = big, most = findings.ranked_cell(tau, ds)
    display(leaders[(leaders.model_size == big) & (leaders.data_multiple == most)])
    plots.rankings(ds, tau, big, most)
    plt.show()
    for row in rows.tau_midrun(tau, big, most):
        record(**row)
    if not sweep.tune_seeds:  # per seed, t over the seeds (the matched design: 5c)
        tau_t, tau_cov = seed_t_arms.midrun(
            ds, ranked=ranked, level=level, seed=seed, tuning=speedups.tuning
        )
        display(tau_cov)
        for row in tau_t:
            record(**row)
    flips = leaders.groupby(["model_size", "data_multiple"]).apply(
        lambda g: float(g.leader.iloc[:-1].ne(g.leader.iloc[-1]).mean()), include_groups=False
    )
    display(flips.rename("share of checkpoints whose leader differs from the final").to_frame())

# %% [markdown] tags=["not-published", "not-user"]
# ## 6b. The schedule control: do rankings flip *because of* the decay?
#
# Where the sweep has the control arm (`medium`, `medium_capped`), the same optimizers, hyperparameters and
# seeds also ran with a constant learning rate after warmup at some cells. If mid-run
# rankings mislead because a decaying schedule has not finished, the constant-LR runs'
# ranking halfway agrees with their end better than the cosine runs' does: the difference
# of Kendall's tau (control minus cosine, one bootstrap over seeds for both) is above 0.
# The claim is decided on the same difference per seed (each seed's own runs), averaged
# over the control cells, with a Student-t interval over the seeds (`t/tau_gain_`).

# %% tags=["not-published", "not-user"]
sched = controls.schedule_control(ds, reps=reps, seed=seed, level=level) if ds is not None else None
if sched is not None and len(sched):
    display(sched)
    for row in rows.schedule_control(sched):
        record(**row)
    if not sweep.tune_seeds:  # per seed, t over the seeds (the matched design: 5c)
        gain_t, gain_cov = seed_t_arms.schedule_gain(ds, level=level, seed=seed)
        display(gain_cov)
        for row in gain_t:
            record(**row)
else:
    print("no schedule control arm in these runs")

# %% [markdown] tags=["not-published", "not-user"]
# ## 7. Wall clock: a token speedup that costs time per step
#
# Seconds per training step (one CPU thread) relative to AdamW at the same size, next to
# the token speedup; the wall-clock speedup divides the two. Where the sweep has a
# committed side-by-side timing (`python -m scalinglab.studies.optimizers.step_times
# <class>`: every optimizer of a size timed in alternation, a paired ratio per round), the
# ratio comes from there, with a Student-t interval over rounds. Otherwise it is read off
# the sweep's own runs, each a separate process at a separate time on a shared machine:
# those ratios carry the machine's load, and their intervals (resampling runs) say how
# much, not what the optimizers cost.

# %% tags=["not-published", "not-user"]
if ds is not None:
    timing = step_times.load(sweep)
    print("step times:", "side by side," if timing is not None else "from the sweep's runs")
    wallclock = analysis.wallclock_table(ds, res, seed=seed, timing=timing)
    display(wallclock)
    for row in rows.wallclock(wallclock, speedups):
        record(**row)

# %% [markdown]
# ## 8. Claims ledger
#
# Each claim of the paper (ids as in `docs/studies/optimizer_comparison.md`, rules in
# `notebooks/claims/optimizer_comparison.toml`) with the finding that decides it; the
# verdict is computed from that finding's interval. In `medium` every size-specific
# claim is decided at every size, with Holm's correction over the sizes (a size that is
# not identified counts among them, which keeps the correction conservative); elsewhere at
# the smallest size whose AdamW fit identifies `E` (else the smallest). A claim whose
# finding rests on a size whose speedups are not identified reads *not identified*; one
# this design cannot test says why.

# %%
names = [f.name for f in scalinglab.record.findings()]
claims_from(
    "optimizer_comparison",
    **findings.claim_values(
        names,
        sizes=sizes,
        identified=size_ok,
        sweep=ds is not None,
        follower=soap,
        multiples=mults,
        ranked=ranked,
        matched=matched_report.claim_values(ds, matched.cells, names) if matched else None,
    ),
)

# %% [markdown]
# ## Reading the results

# %% [markdown] tags=["only-published"]
# **The paper's own losses.** The engine reproduces the paper's table (the numbers in
# `docs/studies/optimizer_comparison.md`): AdamW's fitted asymptotes
# ({{ baseline_fit/E/130m | point }} at 130M, {{ baseline_fit/E/1.2b | point }} at 1.2B)
# and Muon's speedups (130M: {{ speedup/muon/130m/1x | point }},
# {{ speedup/muon/130m/2x | point }}, {{ speedup/muon/130m/4x | point }},
# {{ speedup/muon/130m/8x | point }}; 1.2B: {{ speedup/muon/1.2b/1x | point }},
# {{ speedup/muon/1.2b/2x | point }}, {{ speedup/muon/1.2b/4x | point }},
# {{ speedup/muon/1.2b/8x | point }}). With the loss noise the curves' departures from the
# law imply (section 4), the intervals the paper does not give decide its claims: matrix
# methods lead at 130M ({{ matrix_over_scalar/130m }} over the scalar family), Muon's
# speedup shrinks with size (slope {{ size_slope/muon }} per log N) and stays below 1.5x
# ({{ speedup_mean/muon/130m }} at 130M); scalar methods sit at 1.0-1.1x (NAdamW
# {{ speedup_mean/nadamw/130m }}). Whether Muon is "1.3-1.4x" at 130M and "1.1x" at 1.2B
# ({{ speedup_mean/muon/1.2b }}) is inconclusive: each interval is as wide as the claim's
# own band. SOAP catching up with Muon at 8x is inconclusive too
# ({{ catch_up/soape_vs_muon/130m }} at 130M): one run per setting cannot separate it.

# %% [markdown] tags=["only-default", "only-wsd", "not-tiny"]
# **Our scale, claim by claim** (the committed `small` sweep: six optimizers, three sizes,
# four data budgets, three seeds; {{ runs/total | point }} final runs after
# {{ tuning/evaluations | point }} tuning runs). At the smallest size AdamW's fitted `E`
# sits on its bound ({{ baseline_fit/E/s }}: the losses still fall steeply at 8x), so its
# speedups and the size slope resting on them are *not identified*. What this design
# cannot test (the schedule control, the hyperparameter-transfer arm) the ledger says;
# `medium` adds both.
#
# **No speedup of this design is identified.** Its capped coordinate descent left tuned
# settings on the ends of what it tried at {{ tuning/flagged_sizes | point }} of the 3
# sizes (AdamW's beta2 0.95, the lowest of its grid, among them: the `tuning flags`
# column in section 4, each finding's note), so every speedup claim reads *not
# identified*. The values below describe these runs and decide nothing; the `medium`
# report's design, tuned to interior optima, decides the claims.
#
# * **Tuning.** Every learning rate and weight decay ended inside its grid (Lion's grew
#   past both edges, and lost there); AdamW's beta2 and NAdamW's beta1 end on their
#   grids' ends (flagged).
# * **Speedup and size** (AdamW fitted per seed, Student t over the 3 seeds: the `t/`
#   findings that decide the claims). The claims are decided at s, where AdamW's fitted
#   floor E also sits on its bound 0 (the ledger gives each reason). Muon's speedup reads
#   {{ t/speedup_mean/muon/s | point }} at s, {{ t/speedup_mean/muon/m }} at m and
#   {{ t/speedup_mean/muon/l }} at l; its slope per log N, {{ t/size_slope/muon }}, rests
#   on s. NAdamW reads {{ t/speedup_mean/nadamw/m }} at m. None of these is identified.
# * **Matrix over scalar** reads {{ t/matrix_over_scalar/s }} at s and
#   {{ t/matrix_over_scalar/l }} at l, not identified either: on baselines tuned at their
#   grids' ends the sweep does not say which way it goes. The percentile intervals over
#   seeds shown in sections 4 and 5 cover only {{ coverage/percentile/n3 | point }} of
#   the time at 3 seeds on these data's own spread, the t intervals
#   {{ coverage/t/n3 | point }}. Scion and Lion read below AdamW at every size (at l
#   {{ t/speedup_mean/scion/l }} and {{ t/speedup_mean/lion/l }}), with Lion's settings
#   also on its grids' edges and Scion re-tuned with its scale held fixed: a description
#   of these runs, not a ranking.
# * **Intermediate checkpoints mislead**: at l, 8x the ranking halfway agrees with the end
#   only weakly (tau per seed {{ t/tau_midrun/l/8x }}; averaged over every cell
#   {{ t/tau_midrun/all }}, t over seeds); the leader turns from NAdamW to Muon.
# * **Wall clock.** Muon's and SOAP's steps cost {{ step_time_ratio/muon/l | point }} and
#   {{ step_time_ratio/soap/l | point }} AdamW's at l on one thread, so Muon's token
#   speedup becomes {{ wallclock_speedup/muon/l }} in time.
# * **Losses that rise with more data**: {{ rising/cells | point }} cells, none systematic
#   (Lion at m, 4x to 8x, {{ rising/lion/m/4x-8x | point }}: one unstable seed; Scion at
#   l, 4x to 8x, {{ rising/scion/l/4x-8x }}, inside seed noise).

# %% [markdown] tags=["only-medium_capped"]
# **The `medium_capped` design: 6.7k-222k parameters, no repeated data.** Four widths, AdamW,
# NAdamW, Muon and SOAP, 0.5-4x Chinchilla, three seeds, at most
# {{ data/epochs_max | point }} per run; AdamW also at 8x and 16x at w16 and w32, the
# others at 1x only at w96 ({{ runs/total | point }} final runs plus the arms).
# **No speedup of this design is identified**: {{ tuning/flagged_sizes | point }} of its 4
# sizes train with a tuned setting on the end of what its tuning tried (AdamW's
# learning-rate walk stopped on an edge at w96; every size keeps w16's betas, several on
# their grids' ends), so every speedup claim reads *not identified*; the batch also
# doubles at w96, and its NAdamW is torch's NAdam. The values below describe these runs
# and decide nothing; the `medium` report's design redoes it.
#
# * **Which sizes decide.** AdamW's `E` is identified at w32
#   ({{ baseline_fit/E/w32 | point }}), w48 ({{ baseline_fit/E/w48 | point }}) and w96
#   ({{ baseline_fit/E/w96 | point }}), not at w16 ({{ baseline_fit/E/w16 }}), so the
#   size-specific claims would be decided at w32, were its tuning not flagged.
# * **Noise floor.** AdamW against itself: {{ speedup/adamw/w96/1x }} at w96 (1x);
#   minimum detectable speedups {{ noise/mde/w32 | point }} (w32),
#   {{ noise/mde/w48 | point }} (w48), {{ noise/mde/w96 | point }} (w96). At w32 the law
#   misses AdamW's own 1x point ({{ speedup/adamw/w32/1x }}), so w32's 1x cells read low.
# * **Muon's speedup by size** (1x; not identified):
#   {{ speedup/muon/w32/1x | point }} at w32, {{ speedup/muon/w48/1x | point }} at w48,
#   {{ speedup/muon/w96/1x }} at w96; slope {{ t/size_slope/muon }} per log N (t over
#   seeds), and {{ t/speedup_mean/muon/w96 | point }} at w96 is far from the paper's 1.1x
#   at 1.2B (a number pinned to 1.2B). With AdamW under-tuned at w96, that trend is not
#   yet evidence.
# * **Matrix over scalar** (not identified: {{ t/matrix_over_scalar/w32 }} at w32,
#   {{ t/matrix_over_scalar/w96 | point }} at w96; t over seeds, as every claim here); Muon
#   stays below 1.5x at w32 ({{ t/speedup_mean/muon/w32 }}); torch's NAdam is slower than
#   AdamW ({{ t/speedup_mean/nadamw/w32 }} at w32); SOAP's speedup relative to Muon's from
#   0.5x to 4x ({{ t/catch_up/soap_vs_muon/w32 }} at w32) does not show it catching up.
# * **Unfair tuning** (not identified): with AdamW's learning rate and weight decay, Muon keeps
#   {{ t/transfer_ratio/muon/w32 }} of its tuned speedup at w32, SOAP
#   {{ t/transfer_ratio/soap/w32 | point }}, NAdamW ({{ t/transfer_ratio/nadamw/w32 }}) all
#   (t over seeds).
# * **Mid-run rankings** differ from the final ones at w96 (tau
#   {{ t/tau_midrun/w96/1x | point }} on every seed) and over every cell (per seed,
#   {{ t/tau_midrun/all }}); pooled over w16 and w32 at 4x the constant
#   schedule's tau gain per seed is {{ t/tau_gain_constant/pooled }} (tau moves in steps of
#   1/3 with four optimizers).
# * **Wall clock.** Muon's step costs {{ step_time_ratio/muon/w32 }} AdamW's at w32.

# %% [markdown] tags=["only-medium", "not-tiny_matched"]
# **The `medium` design** (issue #29: w32-w96, one batch, every optimizer tuned to an
# interior optimum on tuning seeds, the paper's NAdamW, AdamW's settings for every
# embedding and head). {{ tuning/flagged_cells | point }} tuned cells train with a
# flagged setting (table in 5c); their sizes' claims read *not identified*. The t
# intervals over seeds of a speedup cover {{ coverage/t/n3 | point }} of the time at 3
# seeds on these data's own spread (the percentile bootstrap
# {{ coverage/percentile/n3 | point }}); those of a slope over size cover
# {{ coverage/slope/t/n3 | point }} on the slopes' own spread (the percentile bootstrap
# {{ coverage/slope/percentile/n3 | point }}).
# Muon's speedup at the matched budget is {{ t/speedup/muon/w48/1x }} at w48 and
# {{ t/speedup/muon/w96/1x }} at w96 (at w32 it is not identified where AdamW's law misses
# its own points there: the finding's note says how); its slope per log N is
# {{ t/size_slope/muon/budget }} at the matched budget and
# {{ t/size_slope/muon/steps }} at matched steps. Each claim's verdict, size by size, is
# in the ledger (at our scale, far below 130M: *holds*/*differs*); a size's verdict reads
# *holds* or *differs* only if it survives Holm's correction over the sizes whose claim is
# tested (one correction per direction; a size not identified makes no test).
#
# *What still moves with size.* AdamW's law must fit AdamW's own losses for a speedup to
# mean anything: at a size where AdamW's own speedup at any of its budgets excludes 1 (t
# over seeds, Bonferroni over the size's budgets), every finding resting on that size is
# *not identified*, the misfit in its note; a slope over sizes spans the sizes whose law
# fits, when at least three do (its description lists them). Two things change with width
# by design,
# as in the paper: steps per run at a fixed budget multiple grow with the parameter count
# (the matched-steps reading holds them near 2k at every size; the per-size claims are
# read at the matched budget), and the share of parameters the matrix optimizers act on
# grows with width (the embedding and head go to AdamW in every optimizer's runs). AdamW's
# extra fit points (w48 8x, w64 4x, w96 0.5-4x) take their size's 1x settings, not
# re-walked: were they under-tuned, AdamW's law would flatten and the speedups at those
# sizes read high. FPO-6 (1x to 8x) and FPO-7 (the transfer arm) rest on w32 alone, the
# only size with those runs, so where w32 is not identified they read *not identified*;
# deciding them needs 8x budgets and the transfer arm at a larger size (not run).

# %% [markdown]
# ## Findings

# %%
findings_table()
