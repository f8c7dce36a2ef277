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
#     description: 'Reproduces Luo, Song et al. (2024) "Sparsing Law" at CPU scale:
#       gated-FFN decoder LMs with ReLU and SiLU trained on an offline text corpus,
#       PPL-1% activation ratio (CETT thresholds per layer, outer search on perplexity)
#       at checkpoints; fits of the ReLU and SiLU sparsity laws with bootstrap CIs over
#       seeds; width-depth and size effects; and a sparse FFN kernel timed against the
#       dense FFN next to the cost model''s ideal speedup. The published variant refits
#       the paper''s own released curves (0.1B-2.4B) with a block bootstrap over checkpoints,
#       against the authors'' parameters.'
#     inputs:
#     - notebooks/claims/sparsity_laws.toml
#     - data/sparsity_laws/*.nc
#     - data/sparsity_laws/published_coverage.json
#     - data/hardware/*.json
#     - data/published/sparsing_law/data/*.txt
#     - data/published/sparsing_law/fitted_parameters.csv
#     reports:
#     - default
#     - published
#     tiny:
#       compute_class: tiny
#       kernel_processes: 2
#       reps: 100
#       retime: true
#       scheduler: sync
#     title: 'Activation-sparsity laws: PPL-1% sparsity of ReLU and SiLU LMs over training,
#       and what it buys'
#     variants:
#       published:
#         published: sparsing_law
#         reps: 500
#       rerun:
#         rerun: true
# ---

# %% tags=["parameters"]
# fmt: off
seed: int = 0  # root of the bootstrap draws and the kernel benchmark's random weights [≥ 0]
compute_class: str = "small"  # sweep size: tiny (tests), small (~25 min on 2 cores), medium, large {tiny, small, medium, large}
scheduler: str = ""  # "": local Dask cluster, "sync": in-process, else a scheduler address
curves: str = ""  # your activation-ratio table (run, tokens, activation_ratio[, activation]); "": this study's sweep [file]
published: str = ""  # "": this study's sweep; "sparsing_law": the paper's own released curves {"", sparsing_law}
rerun: bool = False  # re-train the sweep even if data/sparsity_laws/ has it
ppl_budget: float = 1.0  # p of PPL-p%: allowed perplexity rise in percent [> 0]
min_ffn_gain: float = 0.05  # checkpoints where dropping the whole FFN costs less (nats/token) are not used [≥ 0]
reps: int = 2000  # bootstrap resamples of the law fits and the paper's curves (seed means use t) [≥ 1]
level: float = 0.95  # CI level [> 0, < 1]
kernel_threads: int = 1  # torch and numba threads for the kernel benchmark [≥ 1]
kernel_processes: int = 4  # separate processes the kernel benchmark is repeated in (its intervals resample them) [≥ 2]
horizon: bool = True  # also the long-horizon probe: the smallest model trained 16x longer
matched: bool = True  # also the matched design: every size at 20 tokens per parameter, and a second width-depth family at 25k parameters
retime: bool = False  # also time the kernel live in sections 7 and 7b (else only the committed timings under data/sparsity_laws/ are read)
# fmt: on

# %% [markdown]
# # Activation-sparsity laws
#
# Luo, Song et al., *Sparsing Law: Towards Large Language Models with Greater Activation
# Sparsity* (2024), measure how many FFN neurons a decoder LM really needs per token with
# **PPL-p% sparsity**: neuron *i*'s contribution to a token is `|h_i| ||W_down[:, i]||`;
# each layer drops the neurons below a threshold chosen so that the *cumulative error of
# tail truncation* (CETT, the relative norm of the dropped part of the FFN output) meets a
# common target, and the target is pushed as far as perplexity allows, at most `p`% above
# the dense model's. The **activation ratio** is the fraction of neurons kept. Their
# claims: ReLU and SiLU models reach **comparable loss** while their sparsity moves
# **opposite ways** with training tokens D (ReLU's ratio *decreases* to a limit,
# `A(D) = exp(-c D^alpha + b) + A0`; SiLU's *increases* to one, `A(D) = -c D^-alpha + A0`);
# the limit grows with the **width/depth ratio** below a bottleneck and depends only
# **weakly on parameter count**; sparsity buys **speed**.
#
# The claims, with their rules, scope and regime, are
# [`notebooks/claims/sparsity_laws.toml`](claims/sparsity_laws.toml); the papers, formulas,
# protocols and published numbers are in
# [`docs/studies/sparsity_laws.md`](../docs/studies/sparsity_laws.md).

# %% [markdown] tags=["not-published"]
# This report tests them at CPU scale: models of 3.4k-201k non-embedding parameters on a
# byte-level corpus of Python documentation, 3-15 seeds per model, cached under
# `data/sparsity_laws/` by config hash. Intervals over seeds are Student t (a percentile
# bootstrap over 3 seeds covers far below its level; the coverage table in section 2
# measures both at the study's own n). Pass `curves=` to fit the same laws to your own
# activation-ratio curves (also `scalinglab fit relu_sparsity FILE --x tokens --y
# activation_ratio --group run`).

# %% [markdown] tags=["only-published"]
# This variant (`scalinglab run sparsity_laws --variant published`) reads the paper's own
# released curves, 0.1B-2.4B, refits its laws with this project's engine (section 9) and
# decides the same claims at paper scale on the half of the curves that did not set the
# minimum effects (section 9b). This project's own sweep is the `default` report.

# %%
import dataclasses
import warnings

import matplotlib.pyplot as plt
import numba
import pandas as pd
import torch
from IPython.display import display

from scalinglab.errors import ParameterError
from scalinglab.kernels.hardware_probe import hardware_record
from scalinglab.plots import Table, use_style
from scalinglab.record import claims_from, findings_table
from scalinglab.studies.sparsity import analysis as sa
from scalinglab.studies.sparsity import findings as sf
from scalinglab.studies.sparsity import long_runs, mask_kernel, plots, time_kernel, wd_runs
from scalinglab.studies.sparsity import matched as sm
from scalinglab.studies.sparsity import published as pub
from scalinglab.studies.sparsity.masks import run_masks, unpack_masks
from scalinglab.studies.sparsity.sweep import horizon_config, run_matched, run_sweep, sweep_config

use_style()
# the fits record their own warnings; the optimizer's overflow in exp() is not a result
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"scalinglab\.fitting\.")
if published not in ("", "sparsing_law"):
    raise ParameterError(f"published must be '' or 'sparsing_law', got {published!r}")
PUBLISHED = published == "sparsing_law"
OURS = not PUBLISHED and not curves
pd.set_option("display.precision", 3, "display.width", 140)
FIT = dict(reps=reps, level=level, seed=seed)

# %% [markdown] tags=["not-published"]
# ## 1. The sweep
#
# Decoder LMs with a gated FFN `W_down (act(W_gate x) * W_up x)`, RMSNorm, rotary
# positions, tied byte embeddings; AdamW at a constant learning rate after warm-up (so a
# checkpoint at D tokens is a model trained on D tokens). Two families share the middle
# model: **sizes** at width/depth 16, and **shapes** at about the same parameter count
# from wide-shallow to narrow-deep. At each checkpoint: held-out loss, the PPL-p%
# activation ratio, the loss with the whole FFN dropped, and at the last checkpoint the
# Top-k and fixed-threshold baselines under the same budget.

# %%
ds = None
if PUBLISHED:
    pub.check_provenance()
    df = pub.load_curves()
    print(f"the paper's released curves: {df['run'].nunique()} runs, {len(df)} checkpoints")
elif curves:
    df = sa.read_curves(curves)
    print(f"your curves: {df['run'].nunique()} runs, {len(df)} points")
else:
    ds = run_sweep(sweep_config(compute_class, p=ppl_budget), scheduler=scheduler, rerun=rerun)
    df = sa.curves_frame(ds, min_ffn_gain=min_ffn_gain)
    display(sa.sweep_models(ds))
    print(sa.sweep_summary(ds, df, min_ffn_gain=min_ffn_gain))
if not PUBLISHED:
    plots.curves(df, ppl_budget=ppl_budget)
    plt.show()

# %% [markdown] tags=["not-published"]
# ## 2. Trends and laws
#
# First the sign of the trend, model-free: per run, the slope of the activation ratio
# against log10 D over its usable checkpoints; averaged over models with a Student-t
# interval over seeds within models (Welch degrees of freedom). Then the laws, fitted per
# model to its seeds' points with the fitting engine (bounds: ReLU `A0 <= min A`, SiLU
# `A0 >= max A`) and a group bootstrap over seeds, whose coverage at 3 seeds is below
# nominal and stated with each limit. A limit is `not identified` (one-sided, never a
# headline) when a parameter is on a bound in the point fit or in >= 20% of refits, when
# `alpha` is at 0 (the ReLU law is then a constant), or when the data's trend has the
# sign the law cannot express.

# %% tags=["not-published"]
TRENDS = {}
if not PUBLISHED:
    trend_step = sf.trends(df, level=level)
    sf.record_all(trend_step)
    TRENDS = trend_step.extra["by_model"]
    display(trend_step.table)
    law_step = sf.laws(
        df,
        trends_by_model=TRENDS,
        user=bool(curves) and "activation" not in df.attrs.get("given", ()),
        ours=OURS,
        **FIT,
    )
    sf.record_all(law_step)
    display(Table(law_step.table, notes={"alpha": "no fit", "c": "no fit", "A0": "no fit"}))
    plots.law_fits(df, law_step.extra["fits"])
    plt.show()

# %% [markdown] tags=["not-published", "not-user"]
# **Do these intervals cover at 3 seeds?** Simulated: data sets of 3 and 5 seeds drawn
# from the main sweep's own per-run ReLU trends (centred within models), a nominal 95%
# interval of their mean each time, and the share that contains the truth.

# %% tags=["not-published"]
if OURS:
    cov_step = sf.coverage(trend_step.extra["slopes"], level=level, seed=seed)
    sf.record_all(cov_step)
    display(Table(cov_step.table, digits=3))

# %% [markdown] tags=["not-published", "not-user"]
# ## 3. Width and depth, at about the same parameter count
#
# The measured activation ratio at the last checkpoint (the law's limit A0 is an
# extrapolation; the measured value is not) against the width/depth ratio: the slope of
# the per-model seed means against log10(width/depth). The paper: the limit grows
# (linearly, up to a bottleneck) with width/depth.

# %% tags=["not-published"]
if OURS:
    final = sa.final_values(df)
    wd_step = sf.width_depth(final, ppl_budget=ppl_budget, level=level)
    sf.record_all(wd_step)
    display(wd_step.table)
    plots.width_depth(wd_step.table, final[final["in_width_depth"]])
    plt.show()

# %% [markdown] tags=["not-published", "not-user"]
# ## 4. Parameter count, at a fixed width/depth ratio

# %% tags=["not-published"]
if OURS:
    size_step = sf.size(final, level=level)
    sf.record_all(size_step)
    display(size_step.table)

# %% [markdown] tags=["not-published", "not-user"]
# ## 5. Comparable loss?
#
# Final held-out loss of the ReLU model minus the SiLU model, paired by model and seed
# (both saw the same batches), averaged over models.

# %% tags=["not-published"]
if OURS:
    pair_step = sf.relu_vs_silu(final, level=level)
    sf.record_all(pair_step)
    display(pair_step.table)

# %% [markdown] tags=["not-published", "not-user"]
# ## 6. PPL-p% against the baselines
#
# At the last checkpoint, the activation ratio each method reaches under the same
# perplexity budget: CETT thresholds per layer (the paper's metric), Top-k per token and
# layer, and one magnitude threshold shared by all layers. Lower is sparser.

# %% tags=["not-published"]
if OURS:
    base_step = sf.baselines(ds, ppl_budget=ppl_budget, level=level)
    sf.record_all(base_step)
    display(base_step.table)

# %% [markdown] tags=["not-published", "not-user"]
# ## 7. What sparsity buys: a sparse FFN kernel
#
# `SparseFFN` computes only the active neurons (three small GEMMs on gathered rows in
# torch, or a streaming numba loop), timed against the dense torch FFN with the shared
# harness (warm-up, a cache flush before every call, medians over repeats), next to the
# bytes the dense FFN over the sparse one must read. The active sets are random per token.
# A timing taken while the report renders measures the machine's load of that minute, so
# the verdict reads timing runs recorded offline, each by one explicit launch on a pinned
# core (`python -m scalinglab.studies.sparsity.time_kernel --cores 1`, load, machine and
# CPU in the file) into `data/sparsity_laws/kernel-timings-*.nc`, at d_model 1024 and
# 2048-8192 hidden units, where the weights, not the call, dominate. The point is the
# median over runs, the interval their range (it covers the median with probability
# `1 - 2^(1 - n)` for n runs, the level it states). `retime=True` also times the kernel
# live, in `kernel_processes` fresh processes.

# %% tags=["not-published"]
KTIMES = time_kernel.load_timings() if OURS else None
kt_step = sf.kernel_offline(KTIMES) if OURS else sf.Step()
sf.record_all(kt_step)
if kt_step.table is not None:
    display(Table(kt_step.extra["runs"], digits=2))
    display(Table(sf.kernel_pivot(kt_step.table), digits=3))
    plots.kernel_offline(kt_step.table, len(KTIMES))
    plt.show()

# %% tags=["not-published"]
if OURS and retime:
    torch.set_num_threads(kernel_threads)
    numba.set_num_threads(min(kernel_threads, numba.config.NUMBA_NUM_THREADS))
    hw = hardware_record(quick=compute_class == "tiny")
    LIVE = dict(processes=kernel_processes, threads=kernel_threads, **FIT)
    speed, bench, shape = sf.time_live(compute_class, hw=hw, **LIVE)
    sf.record_all(sf.kernel_live(speed, final=final, processes=kernel_processes))
    print(sf.live_summary(speed, bench, shape, threads=kernel_threads, processes=kernel_processes))
    plots.kernel_live(speed, shape["batches"])
    plt.show()

# %% [markdown] tags=["not-published", "not-user"]
# ## 7b. The kernel on a trained model's own activation masks
#
# Random masks are the cost model's assumption. A trained model's masks are not random,
# so one wider ReLU model is trained with the study's own recipe and corpus (d_model 256,
# 2 layers, F = 688, seeds 0 and 1; `tiny`: a toy) and its FFN activity recorded on the
# held-out windows, per layer and token: **nonzero** (`h_i != 0`) and **cett** (active
# under the PPL-1% CETT thresholds). The masks are stored bit-packed with their
# provenance in `data/sparsity_laws/masks-<class>-<hash>.nc`; a report reads them and
# never retrains. The table: per-token ratio, dead and hot units, and the union of a batch
# of b tokens (real, matched random, and the cost model's `1 - (1 - a)^b`). With
# `retime=True`, batches of b tokens of different windows (a decoding batch) are timed on
# real masks and on matched random twins (every token keeps its count of active units,
# placed at random), whole FFN stack, in `kernel_processes` separate processes.

# %% tags=["not-published"]
if OURS:
    masks = run_masks("tiny" if compute_class == "tiny" else "small", scheduler=scheduler)
    active = unpack_masks(masks)
    MASK_BATCHES = (1, 8) if compute_class != "tiny" else (1, 4)
    structure = mask_kernel.mask_structure(active, batches=MASK_BATCHES, seed=seed)
    display(
        Table(structure.groupby(["kind", "layer"]).mean(numeric_only=True).drop(columns="seed"))
    )
    print(sf.masks_summary(masks))

# %% tags=["not-published"]
if OURS and retime:
    mask_speed, mask_step = sf.time_masks(
        active,
        structure,
        d_model=int(masks.attrs["d_model"]),
        hw=hw,
        batches=MASK_BATCHES,
        tiny=compute_class == "tiny",
        **LIVE,
    )
    sf.record_all(mask_step)
    display(Table(mask_step.table))
    plots.kernel_masks(mask_speed, MASK_BATCHES)
    plt.show()

# %% [markdown] tags=["not-published", "not-user"]
# ## 8. A longer horizon: does ReLU's ratio turn?
#
# The sweep above stops at 7.5-60 tokens per parameter. The probe trains the smallest
# model 16x longer (about 950 tokens per parameter, on a larger corpus so that it sees
# each byte fewer than two times), with the same recipe and metric: the slope of the
# activation ratio per decade of tokens over the whole run and over its last decade.

# %% tags=["not-published"]
hdf = None
if horizon and OURS:
    hcfg = horizon_config(compute_class)
    hds = run_sweep(dataclasses.replace(hcfg, p=ppl_budget), scheduler=scheduler, rerun=rerun)
    hdf = sa.curves_frame(hds, min_ffn_gain=min_ffn_gain)
    hname = hcfg.models[0].name
    plots.horizon(hdf, main_end=float(df["tokens"].max()), model=hname, ppl_budget=ppl_budget)
    plt.show()
    h_step = sf.horizon(hdf, model=hname, **FIT)
    sf.record_all(h_step)
    display(Table(h_step.table, notes={"alpha": "no fit", "c": "no fit", "A0": "no fit"}))
    display(h_step.extra["final"])

# %% [markdown] tags=["not-published", "not-user"]
# ## 8b. Matched tokens per parameter: size and shape, separated from data
#
# The main sweep gives every model the same tokens, so its size slope (section 4)
# compares a model at 60 tokens per parameter with one at 7.5. The matched design trains
# sizes s, m and l (25k, 83k, 201k non-embedding parameters, width/depth 16) on **20
# tokens per parameter** each (on the horizon probe's larger corpus, so no run repeats
# data), and a **second width-depth family** at 25-28k parameters (width/depth 48 to 2)
# on the same 20 tokens per parameter as the main family; five seeds each (three for l).
# The size criterion is the published variant's: the slope per 10x parameters as a
# fraction of the level.

# %% tags=["not-published"]
mdf = None
if matched and OURS:
    mds = run_matched(compute_class, p=ppl_budget, scheduler=scheduler, rerun=rerun)
    mdf = sm.matched_frame(mds, min_ffn_gain=min_ffn_gain)
    plots.matched_sizes(mdf[mdf["family"] == "size"], ppl_budget=ppl_budget)
    plt.show()
    m_step = sf.matched(mdf, df, level=level)
    sf.record_all(m_step)
    display(m_step.table, m_step.extra["width_depth"])
    families = {"main (77-83k)": df, "second (25-28k)": mdf[mdf["family"] == "width_depth"]}
    plots.width_depth_families(families, level=level)
    plt.show()

# %% [markdown] tags=["not-published", "not-user"]
# ## 8c. Two ratios: what the paper measures, and what a ReLU kernel skips
#
# The paper's laws are about the **PPL-1% activation ratio**: its Section 3 defines
# activation sparsity through PPL-p% sparsity (a neuron counts as inactive when dropping it
# with the others below its layer's threshold keeps perplexity within p%), because SiLU
# has no exact zeros. For ReLU there is a second ratio, the **nonzero ratio** (units with
# `h_i != 0`, recorded at every checkpoint as `natural_ratio`): what a kernel can skip with
# no loss at all. Below, both for every model and checkpoint of every design (seed
# means), and per size the slope of each per decade of tokens with a t interval over seeds
# (findings `ratios/<design>/<activation>/<model>/<ratio>/slope_per_decade`; SiLU's
# nonzero ratio is 1 everywhere and not recorded).

# %% tags=["not-published"]
LONG = {}
if OURS and compute_class == "tiny":  # seconds: the tests run the whole path
    LONG = long_runs.run_long("tiny", scheduler=scheduler, progress=False)
elif OURS:  # never trained while rendering: python -m scalinglab.studies.sparsity.long_runs run
    LONG = long_runs.cached_long(compute_class)
ldf = sf.long_frame(LONG, min_ffn_gain=min_ffn_gain)
frames = sf.ratio_frames(df if OURS else None, horizon=hdf, matched=mdf, long=ldf)
r_step = sf.ratios(frames, level=level)
sf.record_all(r_step)
for design, both in r_step.extra["both"].items():
    plots.both_ratios(both, design=design, ppl_budget=ppl_budget)
    plt.show()
    display(Table(both, digits=3))

# %% [markdown] tags=["not-published", "not-user"]
# ## 8d. The long design: limits that the data identify
#
# Length over breadth: sizes xs, s and m (3.4k, 25k and 83k non-embedding parameters,
# width/depth 16), ReLU and SiLU, on the long corpus, each size to its **own horizon**
# (the table below and the findings' descriptions give each size's tokens per parameter
# and seeds, read from the runs), with checkpoints geometric from 2 tokens per parameter.
# s and m were trained on lent GPUs; xs, a second size for each activation at a scale
# even further below the paper's, on this project's CPU (its first 5 seeds) and a lent GPU
# (10 more; the provenance below names each seed block's machine). The sizes do not share
# a tokens-per-parameter grid, so every window here is a size's **own last decade** (the
# dotted lines of section 8c's figure), and a mean over sizes averages different windows.
# The report never trains it: the runs are made by
# `python -m scalinglab.studies.sparsity.long_runs run` (resumable run by run, cached as
# `data/sparsity_laws/sweep-<class>-long-<model>-*.nc`; on a lent GPU from a bundle,
# see that module).
#
# **The limit rule** (`limits.decide_limit`, stated before the longest runs were read):
# the law's `A0` counts when the law identifies it (route `law`: not on a bound, on an
# identified `alpha`, with the data's trend). When it does not, the limit is read as the
# curve's **plateau** only if an equivalence test shows the curve flat over the size's
# last decade: the relative last-decade trend's 90% Student-t interval over seeds lies
# inside plus or minus the minimum trend effect of section 9b (set on the calibration
# half of the paper's curves, the same that decides `relu-decreasing` and
# `silu-increasing`). Then `A0` is the mean ratio over that decade, Student t over seeds
# (route `plateau`). Otherwise it is `not identified`, with the reason (route `none`). A
# law limit on its bound (SiLU's `A0 = 1`) is never read as a plateau unless the test
# passes. A size whose seeds come from two machines (xs: its first 5 seeds on this
# project's CPU, the other 10 on a lent GPU) is checked for a difference between them
# (the last table: the difference between the two machines' seeds in trend and in level,
# Welch t, Bonferroni over the checks), since pooling them assumes one population.
# When seeds were added to a size after a reading that did not pass (xs), the
# test is Bonferroni-corrected over the looks (at two looks a 95% interval, not 90%), and
# the limit's note says at which look it was read, for either route.
# The size claim is read on identified limits only: every pair of sizes whose
# limits are identified is compared (the second table), by the pair's routes: two law
# fits by their paired bootstrap draws, two plateaus by a Welch t over the seeds' plateau
# levels, one of each by the law's draws paired with Student-t draws of the plateau's mean level.
# The claim holds only if every pair is within its tolerance, and a pair outside it
# decides only after Holm's correction over the pairs (the ledger). The held-out loss
# change over each size's last decade shows whether the repeated corpus (every size
# passes it more than once) hurt.

# %% tags=["not-published"]
if ldf is not None:
    print(sf.long_provenance(LONG))
    MIN_TREND = sf.min_effects(pub.load_curves())
    l_step = sf.long_design(ldf, min_trend=MIN_TREND, **FIT)
    sf.record_all(l_step)
    display(Table(l_step.table, notes={"alpha": "no fit", "c": "no fit", "A0": "no fit"}))
    display(Table(l_step.extra["limits"], digits=3))
    display(Table(l_step.extra["pairs"], digits=3))
    b_step = sf.block_checks(ldf, level=level)  # seeds of one size from two machines
    sf.record_all(b_step)
    if not b_step.table.empty:
        display(Table(b_step.table, digits=3))
elif OURS:
    print(
        "The long design is not in data/sparsity_laws/ yet: python -m "
        f"scalinglab.studies.sparsity.long_runs run --class {compute_class} (the limit and "
        "size claims stay untested until it is)."
    )

# %% [markdown] tags=["not-published", "not-user"]
# ## 8e. Width and depth at the limit: the long width-depth family
#
# SPARSE-4 says the limit grows with width/depth below a bottleneck, so deeper, narrower
# models are sparser. Section 8b reads it at about 20 tokens per parameter, mid-transient;
# here the limit itself is read. Two deeper shapes at xs's parameter count join xs (the
# claims ledger lists each shape's d_model, layers, width/depth, parameters and FFN width),
# ReLU, on the long corpus with xs's recipe, each to the same tokens per parameter as xs,
# so about the same passes over the corpus (the ledger gives each shape's): only the shape
# moves. They
# were trained on this project's CPU (`python -m scalinglab.studies.sparsity.long_runs run
# --design wd`, resumable run by run). Each shape's limit comes from the limit rule of
# section 8d, and the limits are compared per 10x width/depth by the same pair routes as
# the sizes. The design stated the extreme pair (the deepest shape against xs) to decide
# the claim and the middle shape's pairs as a check of the linear form. u4's limit is not
# identified here, so the family at 16000 (section 8f) is the design that decides, and
# this family is shown, not decided. xs's runs here are the long design's (section 8d:
# seeds from this CPU and from a lent GPU, compared there), where u2 and u4 ran on the CPU
# alone; the family at 16000 runs every shape on the CPU.

# %% tags=["not-published"]
WD = wd_runs.cached_long_wd(compute_class) if OURS else {}
WD16_FAMILY = wd_runs.wd16_family(compute_class) if OURS else None
WD16 = WD16_FAMILY.datasets if WD16_FAMILY else {}
WD16_READY = bool(WD16)  # every run of both shapes is in
wdf = sf.width_depth_frame(ldf, sf.long_frame(WD, min_ffn_gain=min_ffn_gain))
if wdf is not None:
    print(sf.long_provenance(WD))
    wd_long = sf.width_depth_limits(
        wdf, min_trend=MIN_TREND["relu"], deciding=None if WD16_READY else ("u4", "xs"), **FIT
    )
    sf.record_all(wd_long)
    plots.width_depth_limits(wdf, wd_long.extra["A0"])
    plt.show()
    display(Table(wd_long.extra["limits"], digits=3))
    if not wd_long.table.empty:  # a pair needs both limits identified
        display(Table(wd_long.table, digits=3))
elif OURS:
    print(
        "The long width-depth family is not in data/sparsity_laws/ for the "
        f"{compute_class} class (python -m scalinglab.studies.sparsity.long_runs run "
        "--design wd): deeper-sparser stays untested."
    )

# %% [markdown] tags=["not-published"]
# ## 8f. The width-depth family at 16000 tokens per parameter
#
# At 8000 the deepest shape's limit is not identified, so the pair stated to decide
# SPARSE-4 cannot be read. The design that can decide it, stated before any of its runs,
# trains u4 and xs anew to 16000 tokens per parameter, so both see the corpus about four
# times (matched passes), u4 with more seeds than at 8000 (the ledger gives each shape's);
# it is a further look at these limits, so each shape's equivalence test is corrected
# over two looks (the limit rule's note states the error rate the looks spend).
# Each seed is a block of its own, committed as it lands (`python -m
# scalinglab.studies.sparsity.long_runs run --design wd16`), and the family is read only
# when every run of both shapes is in: its seeds are fixed, not grown until a test passes.

# %% tags=["not-published"]
WD16_RUNS = WD16_FAMILY.progress if WD16_FAMILY else None
wdf16 = sf.long_frame(WD16, min_ffn_gain=min_ffn_gain) if WD16_READY else None
if wdf16 is not None:
    print(sf.long_provenance(WD16))
    wd16 = sf.width_depth_limits(wdf16, min_trend=MIN_TREND["relu"], prefix="long_wd16", **FIT)
    sf.record_all(wd16)
    plots.width_depth_limits(wdf16, wd16.extra["A0"])
    plt.show()
    display(Table(wd16.extra["limits"], digits=3))
    if not wd16.table.empty:  # a pair needs both limits identified
        display(Table(wd16.table, digits=3))
elif OURS:
    print(
        f"The family at 16000 has {sf.wd16_runs_text(WD16_RUNS)}: it is read when every run "
        "is in, and until then the family at 8000 decides deeper-sparser (section 8e)."
    )

# %% [markdown] tags=["only-published"]
# ## 9. The paper's own curves
#
# Luo et al. released the activation-ratio curves behind their laws: ReLU models of
# 0.1B-2.4B and SiLU models of 0.1B-1.2B parameters, 24-42 checkpoints each
# (`data/published/sparsing_law/`, byte-for-byte copies with their sha256 and
# provenance), and the parameters of their fits (transcribed from their `calc.py`). We
# refit every curve with the shared fitting engine, in their units (D in billions of
# tokens, so `alpha`, `b`, `c`, `A0` are theirs one to one), and compare parameters and
# errors on the same points.
#
# **Intervals.** Each curve is one run, so its checkpoints are the only resampling unit,
# and neighbours share its noise (lag-1 autocorrelation of the residuals in the table).
# The table resamples **contiguous blocks** of checkpoints (block length `ceil(n^(1/3))`;
# Hall, Horowitz & Jing 1995); a parameter on a bound in the point fit or in >= 20% of the
# refits is `not identified`. The limits' intervals come from a **residual** block
# bootstrap (`published.residual_block_bootstrap`: every replicate keeps every
# checkpoint, adds moving blocks of the residuals to the point fit and refits). Its
# coverage, and that of the test half's trends below, is simulated on each curve's own
# fit and residuals (`coverage_sim`, precomputed in `data/sparsity_laws/`); each
# finding's method states it, and a verdict it decides says so when below 0.93.

# %% tags=["only-published"]
if PUBLISHED:
    p_step = sf.paper_laws(df, **FIT)
    sf.record_all(p_step)
    plots.paper_curves(df, p_step.extra["fits"], pub.author_params().set_index("model"))
    plt.show()
    display(Table(p_step.table, notes={"b": "the SiLU law has no b"}, digits=3))

# %% [markdown] tags=["only-published"]
# Law-free, the same claims: per curve, the slope of the activation ratio per decade of
# tokens over its **last decade** of tokens (past the early change), and the ratio at its
# last checkpoint from that line; intervals from the block bootstrap of that window. Scale
# dependence: the end-of-training ratio against log10(parameters), as a fraction of the
# mean ratio per 10x parameters.

# %% tags=["only-published"]
if PUBLISHED:
    late_step = sf.paper_late(df, **FIT)
    sf.record_all(late_step)
    display(Table(late_step.table, digits=3))

# %% [markdown]
# ## 9b. How large a trend must be: calibrated on half of the paper's curves
#
# "Decreasing", "increasing" and "weakly dependent" need sizes, set on **one half** of the
# paper's released curves (0.1B, 0.4B, 1.2B) and nowhere else: a trend counts when it
# exceeds half the weakest last-decade trend of those curves (relative to the level, per
# 10x tokens); a size dependence is weak when the limit moves less per 10x parameters
# than across those curves. A smaller move is flat, and the claim of a trend then fails.
# The `published` report tests the claims on the **other half** (0.2B, 0.8B, 2.4B).

# %%
cal_step = sf.calibration(
    df if PUBLISHED else pub.load_curves(), test_half=PUBLISHED, reps=reps, level=level, seed=seed
)
sf.record_all(cal_step)
display(Table(cal_step.table, digits=3))

# %% [markdown] tags=["not-user"]
# ## The claims ledger
#
# Each claim of the paper, stated with its rule, scope and regime in
# `notebooks/claims/sparsity_laws.toml` (one design per variant: our runs, or the paper's
# released curves) and decided by the findings above from their intervals. Where this
# variant's design cannot decide a claim, the ledger says so and why.

# %% [markdown] tags=["not-published", "not-user"]
# On our 3.4k-201k-parameter models the paper's claims are tested outside its regime: they
# hold or differ *at our scale*, never "contradict". A trend counts only beyond the
# minimum effect of section 9b; the limit and size claims rest on the long design's
# identified limits.

# %%
if PUBLISHED:
    claims_from("sparsity_laws", design="paper", **sf.paper_claim_values(cal_step, p_step))
elif OURS:
    claims_from(
        "sparsity_laws",
        design="sweep",
        **sf.sweep_claim_values(
            cal_step,
            kt_step,
            long=ldf,
            wd=wdf,
            wd16=wdf16,
            wd16_runs=WD16_RUNS,
            compute_class=compute_class,
        ),
    )

# %% [markdown] tags=["only-default", "not-tiny"]
# ## Reading the results
#
# **The claims ledger** (the report's first table) decides each claim from the findings;
# the rest of this section says why. The mechanics reproduce (the metric, the laws, the
# baselines, the kernel); the claims reproduce in part, and the design cannot decide
# several of them.
#
# * **Intervals.** At 3 seeds a nominal 95% Student-t interval of a seed mean covers
#   {{ coverage/student_t/n3 | pct }} of simulated data sets drawn from our own runs, the
#   percentile bootstrap that earlier reports used {{ coverage/percentile/n3 | pct }} (at 5
#   seeds: {{ coverage/student_t/n5 | pct }} and {{ coverage/percentile/n5 | pct }}).
#   Every mean and slope over seeds here is t; the law fits' bootstrap over runs is
#   not, and its method says so (a law-route limit states its simulated coverage).
# * **SiLU** rises with training data in the main sweep
#   ({{ trend/silu/slope_per_decade }}) and over the horizon probe's last decade
#   ({{ horizon/silu/slope_per_decade/last_decade }}). On the long design it rises at size
#   xs ({{ long/silu/xs/trend/relative_last_decade | pct }} of its level per decade over
#   its last decade); at s ({{ long/silu/s/trend/relative_last_decade | pct }}) and m
#   ({{ long/silu/m/trend/relative_last_decade | pct }}) its trend is near zero or
#   negative, and the intervals cannot tell it from a rise of the minimum effect. The ledger
#   decides the trend claims at every size (Holm over the sizes), not on the mean over
#   sizes ({{ long/silu/trend/relative_last_decade | pct }}), which would average sizes
#   that disagree over windows of different lengths.
# * **ReLU** does *not* fall to the paper's 6-8%. In the main sweep its ratio still
#   rises ({{ trend/relu/slope_per_decade }}) while its FFN becomes useful; on the horizon
#   probe it levels off near {{ horizon/relu/A0 | point }} and over the last decade moves
#   {{ horizon/relu/trend/relative_last_decade | pct }} of its level per decade, against a
#   minimum effect of {{ calibration/relu/min_relative_trend | pct }} set on half of the
#   paper's curves: flat. The long design, which decides `relu-decreasing`, trains size s
#   to {{ long/s/tokens_per_param | point }} ({{ long/s/seeds | point }}) and size m to
#   {{ long/m/tokens_per_param | point }} ({{ long/m/seeds | point }}), and size xs to
#   {{ long/xs/tokens_per_param | point }} ({{ long/xs/seeds | point }}); over each
#   size's own last decade ReLU moves {{ long/relu/xs/trend/relative_last_decade | pct }}
#   (xs), {{ long/relu/s/trend/relative_last_decade | pct }} (s) and
#   {{ long/relu/m/trend/relative_last_decade | pct }} (m) of its level per decade; the
#   ledger compares each with the minimum effect (Holm over the sizes). The minimum effect
#   comes from the paper's curves over their own last decades, which sit at fewer tokens
#   per parameter than ours: the claim is read at our horizons, not at matched ones.
# * **Two ratios** (section 8c). ReLU's nonzero ratio falls with data in every size (size
#   s: {{ ratios/long/relu/s/nonzero/slope_per_decade }} on the long design) far faster
#   than the PPL-1% ratio, the paper's metric, moves (size s:
#   {{ ratios/long/relu/s/ppl1/slope_per_decade }}; section 8c's table has every size,
#   and at some it rises). One reading, not tested here:
#   training makes more units exactly zero but spreads the output over the ones left, so
#   fewer can be dropped at a 1% perplexity cost.
# * **The limits** (section 8d, by the limit rule). On the main sweep every ReLU fit meets
#   a rising trend, which the ReLU law cannot express: those limits are `not identified`.
#   On the long design the ReLU law leaves `alpha` on a bound at every size. ReLU is flat
#   over its last decade within the minimum effect at sizes xs and s, so their limits
#   are plateaus, {{ long/relu/xs/A0 }} (xs) and {{ long/relu/s/A0 }} (s), well above
#   the paper's 6-8%; at size m ReLU is not shown flat over its shorter last decade (its
#   trend's interval reaches past the minimum effect) and its limit is `not identified`.
#   xs was read at a second look: at its first 5 seeds the trend's interval was too wide
#   to pass, 10 more seeds were trained, and the test is corrected over the two looks.
#   Those 10 ran on a lent GPU, the first 5 on this project's CPU; the GPU seeds minus
#   the CPU seeds read {{ long/relu/xs/blocks/level_difference }} in ReLU's level and
#   {{ long/silu/xs/blocks/trend_difference }} in SiLU's trend (section 8d's last
#   table, Bonferroni over its checks).
#   SiLU's law identifies `A0` at sizes xs ({{ long/silu/xs/A0 }}, also at the second
#   look) and m ({{ long/silu/m/A0 }}), both above the paper's 38-41%. xs's limit is an
#   extrapolation: its ratio still rises {{ long/silu/xs/trend/relative_last_decade | pct }}
#   of its level per decade at its horizon. At size s SiLU moves
#   {{ long/silu/s/trend/relative_last_decade | pct }} of its level per decade at its
#   horizon, not shown flat within SiLU's narrow minimum effect, and its law (which only
#   rises) puts `A0` on its bound: `not identified`. `relu-limit` and `silu-limit` must
#   hold at every size read: an identified limit outside the paper's band decides them
#   (after Holm's correction over the sizes). The size claims compare every pair of sizes
#   whose limits are identified (section 8d's second table; Holm over the pairs): ReLU
#   xs-s, {{ long/relu/scale/xs-s/A0_relative_slope | pct }} per 10x parameters, and
#   SiLU xs-m, {{ long/silu/scale/xs-m/A0_relative_slope | pct }}. Both pairs set a
#   one-layer model of 3.4k parameters, which passed the corpus about twice, against
#   models of 25k-83k that passed it many times, three or more orders of magnitude below
#   the paper's 0.1B-2.4B: repetition moves with size, so both size claims are proxies
#   (untested), and what the pairs show is how our smallest models differ, not whether
#   the paper's limits depend on scale. A plateau limit is the level over the last decade
#   that the data show flat within the minimum effect, not an asymptote: it can still
#   drift by up to that much per decade, and xs's does: run to 16000 tokens per parameter
#   it falls over its last decade by about the minimum effect (section 8f).
# * **Repeated data.** Sizes s and m pass the long corpus many times (xs about twice: the
#   size pairs' descriptions give each size's passes); s's held-out loss still falls
#   over its last decade (ReLU {{ long/relu/s/loss_change_last_decade }}, SiLU
#   {{ long/silu/s/loss_change_last_decade }}), so the repetition has not yet hurt the
#   loss. Because xs passes the corpus far fewer times than s and m, repetition moves with
#   size in every pair with identified limits, and the size claims read on them are
#   proxies (the ledger).
# * **Size, at matched data** (section 8b). In the main sweep the final ReLU ratio moves
#   {{ size/relu/slope_per_decade }}, but there every size saw the same tokens. At an equal 20 tokens per parameter the dependence remains in both directions:
#   ReLU {{ matched/relu/scale/relative_slope | pct }} of its level per 10x parameters,
#   SiLU {{ matched/silu/scale/relative_slope | pct }}. At 20 tokens per parameter our
#   models are early in training, so this says that scale matters early, not that the
#   paper's limits depend on scale.
# * **Width/depth, at the limit** (sections 8e-8f). The claim is about the limit, so it is
#   read on width-depth families at xs's parameter count, each shape to the same tokens
#   per parameter. At 8000 (section 8e) xs ({{ long_wd/relu/xs/width_depth | point }}) has
#   the limit {{ long_wd/relu/xs/A0 }} and u2 ({{ long_wd/relu/u2/width_depth | point }})
#   {{ long_wd/relu/u2/A0 }}, but the deepest shape, u4
#   ({{ long_wd/relu/u4/width_depth | point }}), is not shown flat over its last decade,
#   so the pair stated to decide `deeper-sparser`, u4 against xs, could not be read there.
#   The design stated to decide it trains u4 and xs anew to 16000 tokens per parameter
#   (section 8f; u4 with more seeds, each shape's test corrected over two looks). There
#   neither shape is flat: over its last decade u4's ratio moves
#   {{ long_wd16/relu/u4/trend/relative_last_decade | pct }} of its level per decade and
#   xs's {{ long_wd16/relu/xs/trend/relative_last_decade | pct }}: both falling (each
#   interval excludes zero and reaches past the minimum effect of
#   {{ calibration/relu/min_relative_trend | pct }}), so neither limit is identified and
#   the claim stays untested. Their mean ratios over that decade,
#   {{ long_wd16/relu/u4/last_decade_level }} (u4) and
#   {{ long_wd16/relu/xs/last_decade_level }} (xs), are levels, not limits; u4's minus
#   xs's is {{ long_wd16/relu/u4-xs/last_decade_level_difference }} (deeper less sparse
#   where that interval lies above zero), shown beside the claim, not deciding it. What
#   the longer runs suggest is the curve's shape: in both shapes ReLU's ratio rises to a
#   peak at a few thousand tokens per parameter and falls after it (section 8f's figure),
#   the direction of the paper's ReLU claim. This is a reading of separate runs per
#   horizon (a run's warm-up is 5% of its steps), not a fitted law: a hypothesis for a
#   longer design to test. xs's limit at 8000, which section 8d reads from the rule and
#   the size pairs use, sits on that turn: its trend over its own last decade,
#   {{ long/relu/xs/trend/relative_last_decade | pct }} a decade, lies within the minimum
#   effect, and xs keeps falling after it. The limits read at 8000 are therefore levels
#   on a slow turn, and the size claims built on them are proxies (as the ledger says). At 8000 the
#   one identified pair, u2 against xs, moved
#   {{ long_wd/relu/u2-xs/A0_relative_slope | pct }} of the limit per 10x width/depth
#   (deeper less sparse); it is shown as a check and decides nothing.
#   Read mid-transient, at about 20 tokens per parameter (section 8b), deeper, narrower
#   models also point to less sparse: ReLU's final ratio moves
#   {{ width_depth/relu/slope_per_decade }} in the main family and
#   {{ width_depth_25k/relu/slope_per_decade }} in the second. All these shapes are far
#   from the paper's: a layer's FFN has tens of units (the ledger's statement gives each
#   long shape's F), so a deep, narrow model is under-parameterised per layer. The loss
#   against width/depth, {{ width_depth/relu/loss_slope_per_decade }}, is not resolved at
#   3 seeds.
# * **Loss**: ReLU minus SiLU is {{ loss/relu_minus_silu }}: comparable, within the
#   ledger's band.
# * **Kernel** (section 7, committed timings): at 6.5% active, batch 1, the numba sparse
#   FFN is {{ kernel/offline/sparse_numba/F2048/speedup_at_0.065 }} faster than dense at
#   2048 hidden units and {{ kernel/offline/sparse_numba/F8192/speedup_at_0.065 }} at
#   8192 (median and range over the timing runs), so sparsity buys speed where the
#   weights, not the call, dominate. The trained model's own masks (section 7b, F = 688)
#   are timed only with `retime=True`: at that width the kernel's fixed cost per call is
#   most of its time, and `sparse-speedup-real-masks` stays untested here.

# %% [markdown] tags=["only-published"]
# ## Reading the results
#
# Refitted with our engine, in the authors' units, the laws fit the released curves at
# least as well as the authors' parameters on
# {{ paper/fit/curves_at_most_authors_rmse | point }} released (median RMSE ratio, ours
# over theirs, {{ paper/fit/median_rmse_ratio | point }}). The data reproduce both
# directions: over each curve's last decade of tokens ReLU moves
# {{ paper/relu/trend/late_slope }} and SiLU {{ paper/silu/trend/late_slope }}, averaged
# over sizes; on the test half, relative to the level, ReLU
# {{ paper/relu/trend/late_relative_slope/test_half | pct }} and SiLU
# {{ paper/silu/trend/late_relative_slope/test_half | pct }} per decade, beyond the
# minimum effects set on the other half. The limits are less firm than the paper's table
# suggests: the ReLU limit of 0.4B is {{ paper/law/relu/0.4b/A0 }} and that of 2.4B
# {{ paper/law/relu/2.4b/A0 }} (their notes give the bounds), so the "6-8%" claim is
# `not identified` at paper scale too, while the law-free end-of-training ratio is
# {{ paper/relu/end_ratio }} (ReLU) and {{ paper/silu/end_ratio }} (SiLU).

# %% [markdown]
# ## Findings

# %%
findings_table()
