# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   scalinglab:
#     title: "RL post-training compute scaling (GRPO on verifiable arithmetic)"
#     description: >-
#       Real GRPO runs of small character-level transformers on multi-digit addition:
#       ScaleRL sigmoids per model size with extrapolation from half the compute,
#       Tan et al.'s k(N), reward-trajectory phases, and two design ablations.
#     tiny:
#       compute_class: tiny
#       scheduler: sync
#       reps: 40
#       kn_reps: 10
#       poi_reps: 200
#     variants:
#       cluster:
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
#   $B$; fitted on the first half of the compute it predicts the second half. Most
#   design choices (loss aggregation, advantage normalisation) move $B$, not $A$.
# * **Tan et al. 2025**: $\log_{10}(1 - R) = -k(N) \log_{10} C + E_0(N)$ with
#   $k(N) = K_{max} N / (N + N_0)$: larger models learn more per unit of compute.
# * **Nimmaturi et al. 2025**: the reward trajectory has a slow start, a rapid gain
#   and a plateau, and training past the plateau buys little.
#
# Here every curve comes from GRPO runs made by this notebook (or from your own logs,
# parameter `runs`): decoder-only transformers of three sizes, warmed up by supervised
# training to a low starting pass rate $R_0$, then trained with GRPO on held-in prompts
# and evaluated on held-out ones. Compute is counted in FLOPs by the project's cost
# model (2N per generated token, 6N per trained token, plus attention).
#
# The facts this study reproduces (papers, claims with their ids, formulas, protocols and
# published numbers) are in
# [`docs/studies/rl_scaling.md`](../docs/studies/rl_scaling.md).

# %% tags=["parameters"]
seed: int = 0  # seed of the bootstrap resampling (the sweep's seeds are in its config) [>= 0]
compute_class: str = "small"  # tiny (tests), small (default report), medium, large {tiny, small, medium, large}
scheduler: str = ""  # "" = local Dask cluster, "sync" = in-process, or a scheduler address
runs: str = ""  # your RL logs (CSV/Parquet: model_size, seed, compute or step, pass_rate); "" = our sweep [file]
rerun: bool = False  # recompute the sweep even if a cached result exists
device: str = "cpu"  # cpu, cuda or auto {cpu, cuda, auto}
reps: int = 1000  # bootstrap resamples (over seeds) for the sigmoid and phase fits [>= 1]
kn_reps: int = 200  # bootstrap resamples for k(N) (each refits the joint law) [>= 1]
poi_reps: int = 2000  # resamples for the ablation CIs and probability of improvement [>= 1]
transient_frac: float = 0.1  # drop points before this fraction of a run's compute from sigmoid fits [>= 0, < 1]
fit_frac: float = 0.5  # fit the sigmoid on compute <= fit_frac * C_max, predict the rest [> 0, <= 1]
early_frac: float = 0.3  # phase analysis: fit on the first early_frac of training only [> 0, <= 1]
level: float = 0.95  # confidence level of every interval [> 0, < 1]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from scalinglab.studies.rl import analysis as rla
from scalinglab.studies.rl.sweep import run_sweep, sweep_config
from scalinglab.paths import repo_root
from scalinglab.record import record

pd.set_option("display.precision", 4)
METHOD = "bootstrap over seeds, percentile"

if runs:
    ds = None
    curves = rla.load_rl_logs(repo_root() / runs)  # an absolute path stays as it is
    print(f"read {len(curves)} evaluations from {runs}")
else:
    sweep = sweep_config(compute_class, device=device)
    ds = run_sweep(sweep, scheduler=scheduler, rerun=rerun)
    failed = ds.status.where(ds.status != "ok", drop=True)
    if failed.size:
        print(f"{int((ds.status != 'ok').sum())} run(s) FAILED and are left out:")
        for err in np.unique(ds.error.values[ds.status.values != "ok"]):
            print("  ", err.strip().splitlines()[-1])
    curves = rla.curves_frame(ds)
sizes = list(curves.drop_duplicates("model_size").sort_values("n_params")["model_size"])
variants = list(curves["variant"].unique())
base = variants[0]

# %% [markdown]
# ## The runs
#
# One row per model size: non-embedding parameters, how long the supervised warm-up
# ran (the same recipe for every size, stopped once the pass rate reached the bottom
# of its target band) and the resulting $R_0$ on the held-out prompts.

# %%
setup = curves[curves["compute"] == 0].groupby(["model_size", "n_params"], sort=False).agg(
    R0=("pass_rate", "mean"), R0_sd=("pass_rate", "std"), seeds=("seed", "nunique"))
if ds is not None:
    setup["warmup_steps"] = ds.warmup_steps.mean("seed").sel(model_size=setup.index.get_level_values(0)).values
    setup["final_compute_PFLOP"] = (ds.flops.isel(eval=-1).sel(variant=base).mean("seed")
                                    .sel(model_size=setup.index.get_level_values(0)).values / 1e15)
setup.sort_index(level="n_params")

# %%
fig, ax = plt.subplots(figsize=(7, 4))
for i, size in enumerate(sizes):
    g = curves[(curves["model_size"] == size) & (curves["variant"] == base)]
    for _, run in g.groupby("seed"):
        ax.plot(run["compute"], run["pass_rate"], color=f"C{i}", alpha=0.3, lw=0.8)
    mean = g.groupby("step")[["compute", "pass_rate"]].mean()
    ax.plot(mean["compute"], mean["pass_rate"], color=f"C{i}", lw=2,
            label=f"{size} (N={g['n_params'].iloc[0]:,.0f})")
ax.set_xscale("symlog", linthresh=float(curves.loc[curves["compute"] > 0, "compute"].min()))
ax.set(xlabel="RL compute (FLOPs)", ylabel="held-out pass rate",
       title=f"GRPO training curves ({base}; thin: seeds)")
ax.legend()
plt.show()

# %% [markdown]
# ## ScaleRL sigmoid per model size
#
# $R_0$ is held at the measured pre-RL pass rate; points before `transient_frac` of a
# run's compute are excluded as the early transient (ScaleRL excluded about 1.5k of
# 50-100k GPU-hours; our first evaluations are noisier relative to the gain). The
# intervals resample whole seeds.

# %%
table, fits = rla.fit_scalerl(curves, transient_frac=transient_frac, reps=reps, seed=seed)
for _, r in table[table["variant"] == base].iterrows():
    for p in ("A", "B", "C_mid"):
        record(f"scalerl/{r['model_size']}/{p}", r[p], ci=(r[f"{p}_lo"], r[f"{p}_hi"]),
               level=level, method=METHOD, resamples=reps, unit="FLOPs" if p == "C_mid" else None,
               headline=(p == "A"), description=f"ScaleRL {p}, model {r['model_size']}")
table

# %%
fig, ax = plt.subplots(figsize=(7, 4))
for i, size in enumerate(sizes):
    g = curves[(curves["model_size"] == size) & (curves["variant"] == base)]
    mean = g.groupby("step")[["compute", "pass_rate"]].mean()
    ax.scatter(mean["compute"], mean["pass_rate"], color=f"C{i}", s=12)
    c = np.geomspace(mean["compute"][mean["compute"] > 0].min(), mean["compute"].max() * 4, 200)
    res = fits[(base, size)]
    band = res.predict_interval(c)
    ax.plot(c, band.point, color=f"C{i}", label=f"{size}: A={res.params['A']:.2f}, B={res.params['B']:.2f}")
    ax.fill_between(c, band.ci[0], band.ci[1], color=f"C{i}", alpha=0.2)
ax.set(xscale="log", xlabel="RL compute (FLOPs)", ylabel="held-out pass rate",
       title="ScaleRL sigmoid fits (band: CI over seeds), extended 4x")
ax.legend()
plt.show()

# %% [markdown]
# ## Predicting the second half of training from the first
#
# Each size's sigmoid is refitted on compute up to `fit_frac` of the run's maximum
# and scored on the later evaluations (mean absolute error in pass rate; the interval
# resamples seeds of the held-out part). ScaleRL's own noise floor on $A$ is about
# $\pm 0.02$.

# %%
extra = rla.extrapolate_scalerl(curves, fit_frac=fit_frac, transient_frac=transient_frac,
                                reps=reps, seed=seed)
for _, r in extra.iterrows():
    record(f"extrapolation/{r['model_size']}/mae", r["mae"], ci=(r["mae_lo"], r["mae_hi"]),
           level=level, method="held-out MAE, bootstrap over seeds", resamples=reps,
           headline=(r["model_size"] == sizes[-1]),
           description=f"MAE of the sigmoid fitted on the first {fit_frac:.0%} of compute")
extra

# %% [markdown]
# ## Tan et al.: learning rate in compute, $k(N)$
#
# $L = 1 - R$ falls as a power of compute; its exponent $k$ per size, the joint law
# $k(N) = K_{max} N/(N + N_0)$ over sizes, and a leave-the-largest-out check: the law
# fitted on the smaller sizes predicts the largest size's exponent.

# %%
kn = rla.fit_kn(curves, reps=kn_reps, seed=seed, level=level)
for name in ("Kmax", "N0"):
    record(f"tan/{name}", kn[name][0], ci=kn[name][1], level=level, method=METHOD,
           resamples=kn_reps, description=f"Tan et al. {name} (joint fit over sizes)")
for s, n, (k, ci) in zip(kn["sizes"], kn["n_params"], kn["k_slope"], strict=True):
    record(f"tan/k/{s}", k, ci=ci, level=level, method=METHOD, resamples=kn_reps,
           description=f"log-log slope of 1 - R in compute, N={n:,.0f}")
if "holdout" in kn:
    h = kn["holdout"]
    record("tan/holdout_k_error", h["error"], ci=h["error_ci"], level=level, method=METHOD,
           resamples=kn_reps, headline=True,
           description=f"k of {h['size']} predicted from the smaller sizes minus measured")
pd.DataFrame({"n_params": kn["n_params"], "k_slope": [k for k, _ in kn["k_slope"]],
              "k_slope_ci": [ci for _, ci in kn["k_slope"]],
              "k_law": [k for k, _ in kn["k_law"]]}, index=kn["sizes"])

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for i, size in enumerate(sizes):
    g = curves[(curves["model_size"] == size) & (curves["variant"] == base) & (curves["compute"] > 0)]
    mean = g.groupby("step")[["compute", "pass_rate"]].mean()
    axes[0].plot(mean["compute"], 1 - mean["pass_rate"], "o-", ms=3, color=f"C{i}", label=size)
axes[0].set(xscale="log", yscale="log", xlabel="RL compute (FLOPs)", ylabel="1 - pass rate",
            title="Tan et al.: log L vs log C")
axes[0].legend()
k_pts = np.array([k for k, _ in kn["k_slope"]])
k_err = np.abs(np.array([ci for _, ci in kn["k_slope"]]).T - k_pts)
axes[1].errorbar(kn["n_params"], k_pts, yerr=k_err, fmt="o", label="per-size slope")
nn = np.geomspace(min(kn["n_params"]) / 2, max(kn["n_params"]) * 2, 100)
axes[1].plot(nn, kn["Kmax"][0] * nn / (nn + kn["N0"][0]), label="k(N) law")
axes[1].set(xscale="log", xlabel="non-embedding parameters N", ylabel="k",
            title="k(N) = Kmax N / (N + N0)")
axes[1].legend()
plt.show()

# %% [markdown]
# ## Phases of the reward trajectory
#
# Our law for the trajectory is a logistic in training progress $t$ (fraction of the
# run), $R(t) = R_0 + (R_{max} - R_0)/(1 + e^{-\kappa (t - t_0)})$; the exponential
# saturation is fitted as an alternative (lower RMSE wins). The slow start ends at
# $t_{10}$ and the plateau begins at $t_{90}$, where the logistic has made 10% and
# 90% of its gain. Can the plateau be predicted from the first `early_frac` of
# training? `t90_early` is the estimate from that fit alone.

# %%
ph = rla.phases(curves, early_frac=early_frac, reps=reps, seed=seed)
for _, r in ph.iterrows():
    record(f"phases/{r['model_size']}/t90", r["t90"], ci=(r["t90_lo"], r["t90_hi"]), level=level,
           method=METHOD, resamples=reps, description="plateau start (fraction of the run)")
    if np.isfinite(r["t90_early"]):
        record(f"phases/{r['model_size']}/t90_early_error", r["t90_early"] - r["t90"],
               description=f"plateau start predicted from the first {early_frac:.0%} minus full fit")
    else:
        print(f"{r['model_size']}: the first {early_frac:.0%} of training does not predict a plateau")
ph

# %% [markdown]
# ## Design ablations: asymptote or efficiency?
#
# Each run gets its own sigmoid ($R_0$ its own). For each variant against the
# baseline (same seeds, same warmed-up policy): the mean paired difference in $A$ and
# in $\log_{10} B$ over sizes, and the probability of improvement $P(X > Y)$ over
# runs, averaged over sizes.

# %%
per_seed = rla.per_seed_sigmoids(curves, transient_frac=transient_frac)
effects = rla.ablation_effects(per_seed, baseline=base, reps=poi_reps, seed=seed, level=level)
for _, r in effects.iterrows():
    record(f"ablation/{r['variant']}/delta_{r['metric']}", r["delta"],
           ci=(r["delta_lo"], r["delta_hi"]), level=level, method="paired bootstrap over seeds",
           resamples=poi_reps, description=f"{r['variant']} minus {base}, {r['metric']}")
    record(f"ablation/{r['variant']}/p_improve_{r['metric']}", r["p_improve"],
           ci=(r["p_lo"], r["p_hi"]), level=level, method="stratified bootstrap (rliable)",
           resamples=poi_reps, description=f"P({r['variant']} > {base}) on {r['metric']}")
effects

# %%
if len(variants) > 1:
    fig, axes = plt.subplots(1, len(sizes), figsize=(4 * len(sizes), 3.5), sharey=True)
    for ax, size in zip(np.atleast_1d(axes), sizes, strict=True):
        for j, var in enumerate(variants):
            g = curves[(curves["model_size"] == size) & (curves["variant"] == var)]
            mean = g.groupby("step")[["compute", "pass_rate"]].mean()
            ax.plot(mean["compute"], mean["pass_rate"], color=f"C{j}", label=var)
        ax.set(title=size, xlabel="RL compute (FLOPs)")
    np.atleast_1d(axes)[0].set_ylabel("held-out pass rate")
    np.atleast_1d(axes)[0].legend()
    plt.show()

# %% [markdown]
# ## Reading the results
#
# * **Sigmoids.** The table of $A$, $B$, $C_{mid}$ per size is the ScaleRL summary;
#   wide intervals on $A$ mean the run ended before the curve bent (the asymptote is
#   then an extrapolation, as the 4x-extended bands show).
# * **Extrapolation.** The held-out MAE says how well half a run predicts the rest;
#   compare it with ScaleRL's $\pm 0.02$ noise floor on $A$.
# * **k(N).** Tan et al. find $k$ rising with $N$ and saturating. The per-size
#   slopes and the leave-largest-out error show whether that holds for policies this
#   small; a fitted $N_0$ at its lower bound means $k$ did not grow with $N$ here.
# * **Phases.** $t_{90}$ is where further training buys little; `t90_early` shows
#   whether the first part of a run already tells.
# * **Ablations.** A variant that moves $A$ changes what RL can reach; one that moves
#   only $B$ changes how fast it gets there. Probabilities of improvement near 0.5
#   with intervals covering it mean no detectable effect at this number of seeds.
#
# **What the committed `small` run (3 sizes, 3 seeds, 500 GRPO steps) shows.** Every
# size follows the sigmoid closely, and the fit on the first half of compute predicts the
# second half to within about 0.06-0.08 pass rate: larger than ScaleRL's 0.02 noise floor,
# because at this scale the curve has not bent by mid-run for the larger policies (their
# $A$ intervals reach the bound 1). Tan et al.'s claim does *not* reproduce here: the
# largest policy (788k parameters) learns *less* per unit of compute ($k$ about 0.28)
# than the two smaller ones (about 0.49 and 0.54), so $N_0$ sits at its lower bound and
# the law cannot predict the largest size. The plateau point $t_{90}$ moves later with
# size, and the first 30% of a run does not predict it for the largest size. Neither
# ablation (per-sample loss aggregation, batch-level advantage normalisation) moves $A$
# or $B$ detectably with three seeds: every difference's interval covers zero and every
# probability of improvement's interval covers 0.5, consistent with ScaleRL's finding
# that such choices matter little for the asymptote, but too few seeds to say more.
