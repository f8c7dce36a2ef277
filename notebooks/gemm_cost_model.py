# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   scalinglab:
#     title: "GEMM kernels and cost models: tile sizes, the roofline and a learned runtime predictor"
#     description: >-
#       Reproduces Liu and Halim (2024) at CPU scale: a packed, tiled numba GEMM swept over
#       tile sizes and shapes against OpenBLAS and the textbook loop; the roofline of every
#       kernel against the machine's measured hardware record; and runtime predictors (a
#       random forest, the roofline and a fitted model of the kernel's own work, alone and
#       with a learned correction) with R^2 and MAPE on shapes they never saw, all with
#       bootstrap CIs.
#     inputs:
#     - data/gemm_cost_model/*.nc
#     - data/hardware/*.json
#     tiny:
#       compute_class: tiny
#       reps: 200
#     variants:
#       retime:
#         rerun: true
# ---

# %% [markdown]
# # GEMM kernels and cost models
#
# Every compute-scaling law is a law about FLOPs, but what a budget buys is *time*, and
# time depends on how a kernel meets the hardware. Liu and Halim (2024) swept a tiled
# matmul kernel over tile sizes and matrix shapes on an Ada Lovelace GPU and found that
# the tile size alone changes performance by up to **3.2x**, and that a random forest on
# shape, tile and derived FLOPs/bytes features predicts run time with **R² 0.98**
# (mean error 15.6%).
#
# We reproduce the study at CPU scale on this machine:
#
# 1. **Hardware record**: peak FLOP/s (an FMA micro-benchmark), what BLAS reaches, and
#    memory bandwidth (a streaming copy): the two roofs every study's cost model uses.
# 2. **Tile sweep**: a packed, register-blocked, tiled GEMM in numba (`scalinglab.kernels`)
#    timed over tile sizes and square and skinny shapes, next to OpenBLAS sgemm and the
#    textbook triple loop. Which tile wins per shape, and how much it matters.
# 3. **Roofline**: every kernel's achieved FLOP/s against its arithmetic intensity.
# 4. **Runtime predictor**: the analytic roofline, a random forest, the roofline times
#    a learned correction, and a model of the kernel's own work (padded FLOPs,
#    micro-kernel calls, packing) with seven fitted costs per unit, alone and times a
#    learned correction; scored by 5-fold CV and on shapes never seen in training.
# 5. **Energy**, where the machine exposes a power counter.
#
# Timings are cached in `data/gemm_cost_model/` (re-timed only with `rerun=True`), so the
# report regenerates without re-running the sweep. Pass `timings=` to analyse your own
# measurements (one row per timed call: `M, N, K, tile_m, tile_n, tile_k, seconds`).
#
# The facts this study reproduces (papers, claims with their ids, formulas, protocols and
# published numbers) are in
# [`docs/studies/kernels_cost_models.md`](../docs/studies/kernels_cost_models.md).

# %% tags=["parameters"]
seed: int = 0  # RNG seed: operands, bootstrap resamples, forests, fold shuffling [>= 0]
compute_class: str = "small"  # tiny (tests: seconds) or small (minutes on 2 CPU cores) {tiny, small}
scheduler: str = ""  # unused: timings must run alone, so the sweep never goes to Dask
timings: str = ""  # your own timing table (csv/parquet/nc); "" = this study's sweep [file]
rerun: bool = False  # re-time the sweep even if data/gemm_cost_model/ has it
hardware: str = ""  # "" = this machine (cached); "H100 SXM/float32"; or a record .json
flush_mib: float = -1.0  # cache-flush buffer in MiB (-1 = class default, 1.25 x LLC for small)
reps: int = 2000  # bootstrap resamples for every CI [>= 1]
level: float = 0.95  # CI level [> 0, < 1]
n_splits: int = 5  # folds for CV and for the unseen-shape evaluation [>= 2]

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from scalinglab.studies.gemm import sweep as gemm
from scalinglab.studies.gemm import analysis as gemm_analysis
from scalinglab.studies.gemm import predictor
from scalinglab.kernels.energy import energy_source
from scalinglab.studies.gemm import plots
from scalinglab.record import findings_table, record

pd.set_option("display.precision", 3)
pd.set_option("display.width", 140)
BOOT = dict(level=level, reps=reps, seed=seed)
CI_REPEATS = "percentile bootstrap over repeats within each (shape, tile) cell"
CI_SHAPES = "percentile bootstrap over shapes (out-of-fold predictions)"

# %% [markdown]
# ## 1. The hardware record
#
# Measured once per machine by micro-benchmarks and cached with provenance in
# `data/hardware/`: independent FMA chains on registers (the arithmetic peak), NumPy's
# float32 matmul at 2048 (OpenBLAS), and a parallel streaming copy (bytes read + written).
# Measured while other work shares the machine (a load average near or above the core
# count), BLAS and bandwidth read low; `hardware_record(refresh=True)` re-measures.

# %%
hw = gemm.resolve_hardware(hardware, quick=compute_class == "tiny")
display(pd.Series({
    "machine": hw.name, "source": hw.source, "dtype": hw.dtype,
    "peak GFLOP/s": hw.peak_flop_per_s / 1e9,
    "BLAS sgemm GFLOP/s": (hw.blas_flop_per_s or float("nan")) / 1e9,
    "BLAS / peak": hw.blas_fraction_of_peak,
    "copy GB/s": hw.mem_bytes_per_s / 1e9,
    "ridge point FLOP/byte": hw.ridge_flop_per_byte,
    "1-min load when measured": hw.provenance.get("load_before", [float("nan")])[0],
}, name="hardware record").to_frame())
record("hardware/peak_gflops", hw.peak_flop_per_s / 1e9, unit="GFLOP/s",
       description=f"arithmetic roof ({hw.source}; measured: best of FMA micro-benchmark runs)")
record("hardware/bandwidth_gbs", hw.mem_bytes_per_s / 1e9, unit="GB/s",
       description="memory roof (streaming copy, read + write)")
if hw.blas_fraction_of_peak is not None:
    record("hardware/blas_fraction_of_peak", hw.blas_fraction_of_peak, headline=True,
           description="OpenBLAS sgemm (2048) as a fraction of the FMA peak")

# %% [markdown]
# ## 2. The tile-size sweep
#
# The tiled kernel packs `A` and `B` tiles into contiguous panels, keeps a 12x32 block of
# `C` in vector registers while it accumulates outer products along `k` (the BLIS/OpenBLAS
# scheme; 6x16 on CPUs without AVX-512), and works on output tiles in parallel. Tiles are
# whole register blocks, so the sweep measures the blocking, not padding waste. Every timed call follows a cache flush; each (shape, tile) cell is
# timed `repeats` times after a warm-up (so numba's compile time is never counted), and
# the machine's load average is recorded with each cell.

# %%
if timings:
    ds = None
    calls = gemm.load_timings(timings)
else:
    ds = gemm.cached_sweep(gemm.sweep_config(compute_class, seed=seed, flush_mib=flush_mib),
                           rerun=rerun)
    calls = gemm.timings_table(ds)
cells = gemm.cell_medians(calls)
print(f"{len(calls)} timed calls, {len(cells)} (shape, tile) cells, "
      f"{calls.groupby(gemm.SHAPE).ngroups} shapes, {calls.groupby(gemm.TILE).ngroups} tiles")
if ds is not None:
    loads = ds["tiled_load_before"].values
    print(f"load average during the sweep: median {pd.Series(loads.ravel()).median():.2f}, "
          f"max {loads.max():.2f} on {ds.attrs.get('cpu_count')} cores "
          f"(flush {ds.attrs['flush_bytes'] / 2**20:.0f} MiB, {ds.attrs['repeats']} repeats)")

# %%
fig = plots.plot_tile_heatmap(cells)
plt.show()

# %% [markdown]
# How much the tile size matters, per shape: the worst tile's median time over the best
# tile's, with a bootstrap CI that resamples every cell's repeats (`best_share` is how
# often the winning tile stays the winner across resamples).

# %%
effects = gemm_analysis.tile_effects(calls, **BOOT)
display(effects)
fig = plots.plot_tile_effects(effects, level=level)
plt.show()

# %%
point, ci, where = gemm_analysis.max_tile_effect(calls, **BOOT)
record("tile/max_worst_over_best", point, ci=ci, level=level, method=CI_REPEATS + ", max over shapes",
       resamples=reps, unit="x", headline=True,
       description=f"largest slowdown from the tile choice (at {where}); paper: up to 3.2x on GPU")
median_ratio, median_ci, _ = gemm_analysis.max_tile_effect(calls, over="median", **BOOT)
record("tile/median_worst_over_best", median_ratio, ci=median_ci, level=level,
       method=CI_REPEATS + ", median over shapes", resamples=reps, unit="x",
       description="typical slowdown from the tile choice (median over shapes)")
for row in effects.itertuples():
    record(f"tile/worst_over_best/{row.M}x{row.N}x{row.K}", row.ratio,
           ci=(row.ratio_lo, row.ratio_hi), level=level, method=CI_REPEATS, resamples=reps,
           unit="x", description=f"best tile {row.best_tile}, worst {row.worst_tile}")
winners = effects["best_tile"].value_counts()
display(winners.rename("shapes won").to_frame())

# %% [markdown]
# ### Against BLAS and the textbook loop
#
# The best tile per shape against OpenBLAS sgemm and the textbook triple loop, in the
# same run. (`benchmarks/bench_gemm.py` holds the kernel's speed target: at least 60% of
# BLAS at 1024-2048 on all cores.)

# %%
if ds is not None:
    ref = gemm.reference_table(ds, hw_peak_flop_per_s=hw.peak_flop_per_s)
    display(ref)
    big = ref.assign(f=ref.M * ref.N * ref.K).sort_values("f").iloc[-1]["shape"]
    best_tile = ds["tiled_seconds"].sel(shape=big).median("repeat").idxmin("tile").item()
    frac, frac_ci = gemm_analysis.speed_ratio(ds["ref_seconds"].sel(impl="blas", shape=big).values,
                                     ds["tiled_seconds"].sel(shape=big, tile=best_tile).values,
                                     **BOOT)
    record("kernel/tiled_fraction_of_blas", frac, ci=frac_ci, level=level,
           method="percentile bootstrap over repeats (ratio of medians)", resamples=reps,
           headline=True, description=f"numba tiled ({best_tile}) speed / OpenBLAS at {big}")

# %% [markdown]
# ## 3. The roofline
#
# Each kernel's achieved FLOP/s at its minimum-traffic arithmetic intensity
# `2MNK / 4(MK + KN + MN)`, under the measured roofs. Skinny shapes sit left (less reuse
# per byte); the textbook loop sits far below every roof whatever the shape.

# %%
if ds is not None:
    fig = plots.plot_roofline(gemm.roofline_points(ds), hw)
    plt.show()

# %% [markdown]
# ## 4. Predicting run time
#
# Five predictors of each cell's median time: the analytic roofline (a lower bound, no
# fitting); a random forest on shape, tile and derived features with a log target; the
# roofline times a forest-learned correction; the **kernel model**, which counts the
# kernel's work on its busiest thread (`scalinglab.cost_model.tiled_gemm_counts`: FLOPs
# including the padding of partial register blocks, micro-kernel calls, panel steps,
# bytes packed, thread-pool wake-ups) and fits one non-negative cost per count; and the
# kernel model times a forest-learned correction. A forest cannot predict beyond the
# range it was trained on (the smallest and largest shapes); a sum of physical costs
# can. Out-of-fold predictions under two protocols:
# shuffled 5-fold CV over cells, and grouped 5-fold over shapes (every shape predicted by
# a model that never saw it). R² is of log time; MAPE of time; CIs resample shapes.

# %%
n_threads = int(ds.attrs.get("numba_threads", hw.n_cores or 1)) if ds is not None else (
    hw.n_cores or 1)
oof = predictor.out_of_fold(cells, hw, n_threads=n_threads, seed=seed, n_splits=n_splits)
acc = predictor.accuracy(oof, **BOOT)
display(acc)

# %%
fig = plots.plot_accuracy(acc, level=level)
plt.show()
fig = plots.plot_predictions(oof, protocol="unseen_shapes")
plt.show()

# %%
for row in acc.itertuples():
    headline = row.protocol == "unseen_shapes" and row.model in (
        "random_forest", "kernel_model_x_correction")
    record(f"predictor/{row.protocol}/{row.model}/r2_log", row.r2_log, ci=(row.r2_lo, row.r2_hi),
           level=level, method=CI_SHAPES, resamples=reps, headline=headline,
           description=f"R^2 of log time, {row.n_cells} cells, {row.n_shapes} shapes "
                       "(target >= 0.95 on unseen shapes; paper 0.98)")
    record(f"predictor/{row.protocol}/{row.model}/mape", row.mape, ci=(row.mape_lo, row.mape_hi),
           level=level, method=CI_SHAPES, resamples=reps,
           description="mean absolute percentage error of time (paper: 15.6%)")

# %% [markdown]
# Would the predictor pick good tiles for a shape it has never seen? For each held-out
# shape: the tile with the lowest predicted time, and its measured time over the best
# measured tile's (1.0 = it picked the winner).

# %%
regret = predictor.tile_choice_regret(oof, cells, model="kernel_model_x_correction")
display(regret)
record("predictor/unseen_shapes/tile_choice_regret_median", regret["regret"].median(), unit="x",
       description="measured time of the predicted-best tile over the best tile, median over "
                   "unseen shapes (kernel model x correction)")

# %% [markdown]
# ## 5. Energy

# %%
source, reason = energy_source()
energy_note = ds.attrs.get("energy", reason) if ds is not None else reason
if ds is not None and pd.notna(ds["tiled_energy_j"].values).any():
    display(Markdown(f"Energy measured with {energy_note}."))
    per_call = ds["tiled_energy_j"] / (ds.attrs["repeats"] + ds.attrs["warmup"])
    display(per_call.to_dataframe(name="joules per call (incl. flush)").unstack())
else:
    display(Markdown(f"**Energy could not be measured on this machine**: {energy_note}. "
                     "The paper's power model (R² 0.78) is therefore not reproduced here."))

# %% [markdown]
# ## Findings

# %%
findings_table()
