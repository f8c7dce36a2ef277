"""The interval methods whose coverage the registry simulates, and their generators.

Each method computes its interval on many simulated data sets at once
(:data:`Simulated`: ``(values (sims, n), level, rng) -> (lo, hi)``); each generator draws
those data sets and knows the truth they are drawn around (:func:`generators`, by the kind
of statistic a method estimates). :mod:`scalinglab.stats.method_coverage` registers the
methods by name and simulates or reads their coverage.

Coverage is simulated with :mod:`scalinglab.stats.calibration` on generic generators: a
normal and a moderately right-skewed log-normal (sigma 0.5) for methods of a mean or a
median (the truth: the generator's mean or median), Bernoulli
``p = 0.05, 0.2, 0.5`` for methods of a proportion; the **lowest** coverage over the
generators is the one reported, with the generator that gave it. A method registered
for "a mean of n values" that a study applies to another statistic resampled over ``n``
units (a fitted parameter, a median) is simulated as the mean: the row says so, and a
statistic that is less regular than the mean usually covers worse.

Two resampling schemes the studies use on structured data have their own generators: a
**stratified bootstrap** (runs resampled within each task, rliable's scheme; ``n`` = runs
per task) is simulated as the IQM of :data:`STRAT_TASKS` tasks whose means differ 20-fold
(log-normal, sigma 1), runs normal (sd 0.3 of the task's mean) or log-normal (sigma 0.5)
around them; with ``n`` runs per task it sees ``(n - 1) / n`` of the sampling variance,
which is what makes it undercover at 3-5 runs whatever the statistic, so the row stands
for the study's other stratified statistics (an IQM difference, a top-task share, a
few-run flip rate) as the mean's row does for a fitted parameter. A **percentile
bootstrap over shapes of out-of-fold predictions** (the GEMM predictors' R^2 and MAPE;
``n`` = shapes) is simulated as the R^2 of :data:`CLUSTER_CELLS` tiles per shape, with a
shape part in the prediction error (normal, R^2 0.90; Student t with 3 df, R^2 0.98). These
two take fewer simulated data sets (``RegisteredMethod.sims``: 1500 and 1000, MC standard
error about 0.006-0.011), the rows say so.

Three methods of the RL study have generators of their own. **Welch's t** for a
difference of two means (``n`` runs per group; the smaller group's where they differ) is
simulated on two groups of normal or log-normal (sigma 0.5) values, of equal standard
deviation or in the ratio :data:`WELCH_SD_RATIO`. The **chi-square interval of a standard
deviation** (``n``: its degrees of freedom) is simulated as the SD of ``n + 1`` normal or
Laplace values (excess kurtosis 3): exact for normal values, it is not robust to heavier
tails; a pooled within-group SD from groups of 2-4 values is somewhat less sensitive to
them than one sample of the same df, so the reading is conservative. The **paired
percentile bootstrap over seeds within sizes** (the mean over sizes of each size's mean
paired difference, seeds resampled within size; ``n`` seeds per size) is simulated with
:data:`PAIRED_SIZES` sizes of normal or log-normal (sigma 0.5) differences; within each
size it sees ``(n - 1) / n`` of the variance, as the stratified bootstrap does.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable

import numpy as np
from scipy import stats as sps

from scalinglab.stats import calibration as cal
from scalinglab.stats.bootstrap import bc_interval

#: Bootstrap resamples per simulated data set for the bootstrap methods.
RESAMPLES = 1000

#: ``(values (sims, n), level, rng) -> (lo, hi)``, each ``(sims,)``.
Simulated = Callable[[np.ndarray, float, np.random.Generator], tuple[np.ndarray, np.ndarray]]


def _boot_means(
    x: np.ndarray, rng: np.random.Generator, resamples: int, stat: Callable = np.mean
) -> np.ndarray:
    """``(resamples, sims)`` bootstrap values of ``stat`` (mean) of each row of ``x``
    ``(sims, n)``."""
    sims, n = x.shape
    out = np.empty((resamples, sims))
    step = max(1, 2_000_000 // max(1, resamples * n))
    for a in range(0, sims, step):
        rows = x[a : a + step]
        idx = rng.integers(0, n, size=(rows.shape[0], resamples, n))
        out[:, a : a + step] = stat(np.take_along_axis(rows[:, None, :], idx, axis=2), axis=2).T
    return out


def percentile_mean(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """Percentile bootstrap interval of the mean of each row of ``x`` ``(sims, n)``
    (:func:`scalinglab.stats.calibration.percentile_bootstrap_mean`, :data:`RESAMPLES`)."""
    return cal.percentile_bootstrap_mean(x, level=level, resamples=RESAMPLES, rng=rng)


def percentile_median(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """Percentile bootstrap interval of the median of each row of ``x`` ``(sims, n)``."""
    reps = _boot_means(x, rng, RESAMPLES, np.median)
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return lo, hi


def basic_mean(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """Basic bootstrap interval of the mean of each row of ``x`` ``(sims, n)``
    (``2 mean - q_hi``, ``2 mean - q_lo``)."""
    reps = _boot_means(x, rng, RESAMPLES)
    q_lo, q_hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=0)
    point = x.mean(axis=1)
    return 2 * point - q_hi, 2 * point - q_lo


def range_interval(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """``[min, max]`` of each row of ``x`` ``(sims, n)`` (``level`` and ``rng`` unused: its
    coverage is :func:`range_coverage`)."""
    return x.min(axis=-1), x.max(axis=-1)


def range_coverage(n: int) -> float:
    """``[min, max]`` of ``n`` i.i.d. continuous values holds their median unless all
    ``n`` fall on one side of it: ``1 - 2 (1/2)^n``."""
    return 1.0 - 2.0 ** (1 - int(n))


def next_draw_in_range(x: np.ndarray) -> tuple:
    """``[min, max]`` of each row's ``n`` values (``x`` ``(sims, n)``) as an interval for
    one more draw of their distribution, which holds it with probability
    ``(n - 1) / (n + 1)`` for exchangeable continuous values (the new draw is equally
    likely to take any of the ``n + 1`` ranks). The new draw is the next row's first
    value (rows are independent draws of one generator); a hit is returned as
    ``(-inf, inf)`` and a miss as ``(nan, nan)``, so that the registry's
    ``lo <= truth <= hi`` counts the hits whatever the generator's truth."""
    new = np.roll(x[:, 0], -1)
    hit = (x.min(axis=-1) <= new) & (new <= x.max(axis=-1))
    return np.where(hit, -np.inf, np.nan), np.where(hit, np.inf, np.nan)


def next_draw_coverage(n: int) -> float:
    """``[min, max]`` of ``n`` exchangeable continuous values holds one more unless it
    takes the lowest or the highest of the ``n + 1`` ranks: ``(n - 1) / (n + 1)`` (the
    ``k``-th to ``(n + 1 - k)``-th order statistics: ``(n + 1 - 2k) / (n + 1)``, here
    ``k = 1``)."""
    return (int(n) - 1) / (int(n) + 1)


#: Tasks of the stratified generator: a small benchmark (DMC has 6, Procgen 16, Atari 26).
STRAT_TASKS = 10
#: Simulated benchmarks per generator for the stratified bootstrap (MC SE about 0.006).
STRAT_SIMS = 1500


def _task_scales() -> np.ndarray:
    """``(STRAT_TASKS,)`` mean scores of the stratified generator's tasks: log-normal
    (sigma 1, a fixed draw), tasks as unlike as normalized scores across a benchmark's
    games (a 20-fold range)."""
    return np.sort(np.random.default_rng(2811).lognormal(0.0, 1.0, STRAT_TASKS))


def _runs(noise: str) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    """Run-to-run variation within a task, multiplying its scale (mean 1)."""
    if noise == "normal":
        return lambda rng, size: 1.0 + 0.3 * rng.standard_normal(size)
    return lambda rng, size: rng.lognormal(-0.125, 0.5, size)  # mean exp(-1/8 + 1/8) = 1


def _iqm_last(v: np.ndarray) -> np.ndarray:
    """Interquartile mean along the last axis (as :func:`scalinglab.stats.metrics.iqm`:
    ``floor(P / 4)`` dropped from each end)."""
    size = v.shape[-1]
    cut = size // 4
    return np.sort(v, axis=-1)[..., cut : size - cut].mean(axis=-1)


def _stratified_sampler(noise: str) -> tuple[cal.Sampler, float]:
    """``(sims, STRAT_TASKS * n)`` scores, task-major (each task's ``n`` runs together),
    and the truth: the IQM of the pooled population (tasks weighing the same), from
    200,000 runs per task (its error is negligible next to any ``n``-run interval)."""
    scales, runs = _task_scales(), _runs(noise)

    def sample(rng: np.random.Generator, sims: int, n: int) -> np.ndarray:
        return (scales[None, :, None] * runs(rng, (sims, STRAT_TASKS, n))).reshape(sims, -1)

    big = scales[:, None] * runs(
        np.random.default_rng(zlib.crc32(noise.encode())), (STRAT_TASKS, 200_000)
    )
    return sample, float(_iqm_last(big.ravel()))


def stratified_iqm(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """Percentile interval of the IQM, runs resampled within each task (rliable's
    stratified bootstrap); ``x`` ``(sims, STRAT_TASKS * n)`` task-major."""
    sims = x.shape[0]
    n = x.shape[1] // STRAT_TASKS
    tasks = x.reshape(sims, STRAT_TASKS, n)
    lo, hi = np.empty(sims), np.empty(sims)
    step = max(1, 20_000_000 // (RESAMPLES * STRAT_TASKS * n))
    q = [(1 - level) / 2, (1 + level) / 2]
    for a in range(0, sims, step):
        rows = tasks[a : a + step]
        idx = rng.integers(0, n, size=(rows.shape[0], RESAMPLES, STRAT_TASKS, n))
        reps = np.take_along_axis(rows[:, None], idx, axis=3).reshape(rows.shape[0], RESAMPLES, -1)
        lo[a : a + step], hi[a : a + step] = np.quantile(_iqm_last(reps), q, axis=1)
    return lo, hi


#: Cells (tiles) per shape of the clustered-prediction generator.
CLUSTER_CELLS = 6


def _cluster_sampler(errors: str) -> tuple[cal.Sampler, float]:
    """Measured and predicted log times of ``n`` shapes x :data:`CLUSTER_CELLS` tiles,
    packed ``(sims, 2 * n * CLUSTER_CELLS)`` (measured, then predicted, shape-major), and
    the truth: the population R^2 ``1 - E[e^2] / Var(y)``.

    ``y`` = shape effect (sd 1.5) + tile effect (sd 0.5); the prediction error has a
    shape part and a tile part (a model that misjudges a shape misjudges its tiles
    alike): ``"normal"`` sd 0.45 and 0.2 (R^2 about 0.90, this project's unseen-shape
    predictors), ``"t3"`` Student t with 3 df scaled 0.12 and 0.05 (R^2 about 0.98, heavy
    tails: a few shapes far off)."""
    shape_sd, cell_sd = (0.45, 0.2) if errors == "normal" else (0.12, 0.05)
    var_y = 1.5**2 + 0.5**2
    var_e = shape_sd**2 + cell_sd**2 if errors == "normal" else 3 * (shape_sd**2 + cell_sd**2)

    def err(rng: np.random.Generator, size: tuple[int, ...], sd: float) -> np.ndarray:
        z = rng.standard_normal(size) if errors == "normal" else rng.standard_t(3, size)
        return sd * z

    def sample(rng: np.random.Generator, sims: int, n: int) -> np.ndarray:
        shp, cell = (sims, n, 1), (sims, n, CLUSTER_CELLS)
        y = 1.5 * rng.standard_normal(shp) + 0.5 * rng.standard_normal(cell)
        p = y + err(rng, shp, shape_sd) + err(rng, cell, cell_sd)
        return np.concatenate([y.reshape(sims, -1), p.reshape(sims, -1)], axis=1)

    return sample, 1.0 - var_e / var_y


def _r2(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """R^2 along the last axis."""
    sse = ((y - p) ** 2).sum(axis=-1)
    sst = ((y - y.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    return 1.0 - sse / sst


def cluster_r2(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """Percentile interval of R^2, whole shapes (their tiles together) resampled; ``x`` as
    :func:`_cluster_sampler` packs it."""
    sims = x.shape[0]
    n = x.shape[1] // (2 * CLUSTER_CELLS)
    y = x[:, : n * CLUSTER_CELLS].reshape(sims, n, CLUSTER_CELLS)
    p = x[:, n * CLUSTER_CELLS :].reshape(sims, n, CLUSTER_CELLS)
    lo, hi = np.empty(sims), np.empty(sims)
    step = max(1, 10_000_000 // (RESAMPLES * n * CLUSTER_CELLS))
    q = [(1 - level) / 2, (1 + level) / 2]
    for a in range(0, sims, step):
        b = min(step, sims - a)
        idx = rng.integers(0, n, size=(b, RESAMPLES, n))
        rows = np.arange(a, a + b)[:, None, None]
        ys = y[rows, idx].reshape(b, RESAMPLES, -1)
        ps = p[rows, idx].reshape(b, RESAMPLES, -1)
        lo[a : a + b], hi[a : a + b] = np.quantile(_r2(ys, ps), q, axis=1)
    return lo, hi


def bc_mean(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """Bias-corrected percentile bootstrap interval of the mean of each row of ``x``
    ``(sims, n)`` (:func:`scalinglab.stats.bootstrap.bc_interval`)."""
    import warnings

    with warnings.catch_warnings():  # a constant resample set (n = 2, equal values)
        warnings.simplefilter("ignore")
        lo, hi = bc_interval(_boot_means(x, rng, RESAMPLES), x.mean(axis=1), level=level)
    return lo, hi


# --- the RL study's two-sample, variance and paired-within-size intervals ---------------

#: Sizes of the paired-bootstrap generator: the RL reuse comparison's design (sizes s, m).
PAIRED_SIZES = 2
#: Standard-deviation ratio of the two groups in the unequal-variance Welch generators.
WELCH_SD_RATIO = 2.0


def welch(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """Welch's t interval of ``mean(a) - mean(b)``; ``x`` ``(sims, 2 n)``: ``a`` then ``b``
    (as :func:`scalinglab.studies.rl.tanlaw.k_rise`, Welch-Satterthwaite df)."""
    n = x.shape[1] // 2
    _, lo, hi = cal.welch_interval(x[:, :n], x[:, n:], level=level)
    return lo, hi


def _two_sample_sampler(dist: str, ratio: float) -> tuple[cal.Sampler, float]:
    """``(sims, 2 n)``: ``n`` values of ``a`` then ``n`` of ``b = ratio x`` the same
    distribution (normal, or log-normal sigma 0.5: right-skewed, so the difference is
    skewed unless ``ratio`` is 1); truth ``mean(a) - mean(b)``."""
    mean = 0.0 if dist == "normal" else float(np.exp(0.125))

    def draw(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
        if dist == "normal":
            return rng.standard_normal(size)
        return rng.lognormal(0.0, 0.5, size)

    def sample(rng: np.random.Generator, sims: int, n: int) -> np.ndarray:
        return np.concatenate([draw(rng, (sims, n)), ratio * draw(rng, (sims, n))], axis=1)

    return sample, mean - ratio * mean


def chi2_sd(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """Chi-square interval of a standard deviation from ``df = x.shape[1] - 1`` degrees of
    freedom (exact for normal values); ``x`` ``(sims, df + 1)``."""
    df = x.shape[1] - 1
    s2 = x.var(axis=1, ddof=1)
    a = (1 - level) / 2
    return np.sqrt(df * s2 / sps.chi2.ppf(1 - a, df)), np.sqrt(df * s2 / sps.chi2.ppf(a, df))


def _sd_sampler(dist: str) -> tuple[cal.Sampler, float]:
    """``n + 1`` values per data set (``n``: the degrees of freedom), standard deviation 1
    (the truth): normal, or Laplace (excess kurtosis 3: heavier tails)."""

    def sample(rng: np.random.Generator, sims: int, n: int) -> np.ndarray:
        if dist == "normal":
            return rng.standard_normal((sims, n + 1))
        return rng.laplace(0.0, 1.0 / np.sqrt(2.0), (sims, n + 1))

    return sample, 1.0


def _paired_sizes_sampler(dist: str) -> tuple[cal.Sampler, float]:
    """``(sims, PAIRED_SIZES n)``: ``n`` paired differences per size, size-major, each
    normal or log-normal (sigma 0.5); truth their mean (the mean over sizes of it)."""
    sampler, truth = cal.normal() if dist == "normal" else cal.lognormal(0.5)

    def sample(rng: np.random.Generator, sims: int, n: int) -> np.ndarray:
        return sampler(rng, sims, PAIRED_SIZES * n)

    return sample, truth


def paired_within_sizes(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    """Percentile interval of the mean over sizes of each size's mean paired difference,
    seeds resampled within each size (:func:`scalinglab.stats.group_means.mean_of_group_means`);
    ``x`` ``(sims, PAIRED_SIZES n)`` size-major."""
    n = x.shape[1] // PAIRED_SIZES
    reps = np.mean(
        [_boot_means(x[:, s * n : (s + 1) * n], rng, RESAMPLES) for s in range(PAIRED_SIZES)],
        axis=0,
    )
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return lo, hi


_GENERATORS: dict[str, dict[str, tuple[cal.Sampler, float]]] = {
    "mean": {"normal": cal.normal(), "log-normal (sigma 0.5)": cal.lognormal(0.5)},
    # the same generators, the truth their median (0 and exp(0) = 1)
    "median": {
        "normal": (cal.normal()[0], 0.0),
        "log-normal (sigma 0.5)": (cal.lognormal(0.5)[0], 1.0),
    },
    "proportion": {f"Bernoulli p={p:g}": cal.bernoulli(p) for p in (0.05, 0.2, 0.5)},
}


@functools.lru_cache(maxsize=1)
def _stratified_generators() -> dict[str, tuple[cal.Sampler, float]]:
    return {
        f"{STRAT_TASKS} log-normal tasks x normal runs (sd 0.3)": _stratified_sampler("normal"),
        f"{STRAT_TASKS} log-normal tasks x log-normal runs (sigma 0.5)": _stratified_sampler(
            "lognormal"
        ),
    }


def generators(kind: str) -> dict[str, tuple[cal.Sampler, float]]:
    """The generators a method of ``kind`` (``RegisteredMethod.kind``) is simulated on:
    ``{name: (sampler, truth)}``; the names enter the simulations' seeds."""
    if kind == "stratified":
        return _stratified_generators()
    if kind == "clustered-r2":
        return {
            f"{CLUSTER_CELLS} tiles per shape, normal errors (R^2 0.90)": _cluster_sampler(
                "normal"
            ),
            f"{CLUSTER_CELLS} tiles per shape, t3 errors (R^2 0.98)": _cluster_sampler("t3"),
        }
    if kind == "two-sample":
        return {
            f"{d}, sd ratio {r:g}": _two_sample_sampler(d.split(" ")[0], r)
            for d in ("normal", "log-normal (sigma 0.5)")
            for r in (1.0, WELCH_SD_RATIO)
        }
    if kind == "sd":
        return {"normal": _sd_sampler("normal"), "Laplace": _sd_sampler("laplace")}
    if kind == "paired-sizes":
        return {
            f"{PAIRED_SIZES} sizes x n normal differences": _paired_sizes_sampler("normal"),
            f"{PAIRED_SIZES} sizes x n log-normal (sigma 0.5) differences": (
                _paired_sizes_sampler("lognormal")
            ),
        }
    return _GENERATORS[kind]
