"""Which interval methods a report uses, and how often each covers at the report's n.

Every finding states the method of its interval in words (``Estimate.method``) and, where
the library knows it, the sample size the interval rests on (``Estimate.n``: seeds,
runs, draws). This module maps the words to a registered method (:data:`REGISTRY`, by
regular expression) and looks up that method's simulated coverage at that ``n``
(:func:`measured_coverage`, with the simulation's Monte Carlo standard error), so that
every report can list, in one generic section, each interval method it uses and how
often it covers where it is used. A method without a registry entry, or a finding whose
sample size is not known, is listed as "coverage not measured" (with the reason), never
left out.

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

A distribution-free method whose coverage is known in closed form (the range of ``n``
values as an interval for their median: ``1 - 2^(1 - n)`` for any continuous
distribution) is registered with that formula (``RegisteredMethod.exact``): its coverage
is read from the formula at any ``n`` and level, with no Monte Carlo error, and the tests
check the formula against its simulation.

The simulations are deterministic (seeded by method, ``n`` and generator). At the nominal
level 0.95 they are computed once, for every registered method on the grid :data:`GRID`,
and committed as ``method_coverage.json`` beside this module (a percentile bootstrap at
``n = 100`` takes about 10 s, too slow to repeat on every render); an ``n`` between grid
points is read at the largest grid ``n`` below it (coverage rises with ``n``, so that is
the conservative reading), and the row names the ``n`` simulated. Regenerate the file with
``python -m scalinglab.stats.method_coverage`` after changing a method or a generator
(``tests/test_method_coverage.py`` checks entries against a fresh simulation).
"""

from __future__ import annotations

import functools
import json
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy import stats as sps

from scalinglab.stats import calibration as cal
from scalinglab.stats.bootstrap import bc_interval

#: Simulated data sets per (method, n, generator): MC standard error about 0.0034 at 0.95.
SIMS = 4000
#: Bootstrap resamples per simulated data set for the bootstrap methods.
RESAMPLES = 1000
#: Sample sizes of the committed table; a larger ``n`` is read at the last one.
GRID = (2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40, 50, 75, 100)
#: Largest ``n`` simulated; a larger one is looked up at this ``n`` (coverage rises with n).
MAX_N = GRID[-1]
#: Sample sizes shown for a registered method whose findings do not record theirs.
REFERENCE_NS = (3, 5, 10)
#: The committed table (level 0.95, :data:`SIMS` data sets per generator).
TABLE_FILE = Path(__file__).with_name("method_coverage.json")

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


def _percentile(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    return cal.percentile_bootstrap_mean(x, level=level, resamples=RESAMPLES, rng=rng)


def _percentile_median(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    reps = _boot_means(x, rng, RESAMPLES, np.median)
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return lo, hi


def _basic(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    reps = _boot_means(x, rng, RESAMPLES)
    q_lo, q_hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=0)
    point = x.mean(axis=1)
    return 2 * point - q_hi, 2 * point - q_lo


def _range(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
    return x.min(axis=-1), x.max(axis=-1)


def _range_coverage(n: int) -> float:
    """``[min, max]`` of ``n`` i.i.d. continuous values holds their median unless all
    ``n`` fall on one side of it: ``1 - 2 (1/2)^n``."""
    return 1.0 - 2.0 ** (1 - int(n))


def _next_draw_in_range(x: np.ndarray) -> tuple:
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


def _next_draw_coverage(n: int) -> float:
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


def _stratified_iqm(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
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


def _cluster_r2(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
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


def _bc(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
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


def _welch(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
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


def _chi2_sd(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
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


def _paired_within_sizes(x: np.ndarray, level: float, rng: np.random.Generator) -> tuple:
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


@dataclass(frozen=True)
class RegisteredMethod:
    """An interval method whose coverage the registry can simulate.

    Attributes
    ----------
    key
        Stable identifier, e.g. ``"student-t"``.
    label
        Name shown in the report.
    pattern
        Regular expression (case-insensitive) matched against a finding's method text.
    kind
        ``"mean"``, ``"median"`` or ``"proportion"``: which generators (and truths) the
        simulation draws from.
    simulate
        The interval on simulated data, :data:`Simulated`.
    simulated_as
        What the simulation computes, in words (shown next to the coverage).
    exclude
        Method texts matching this are not this method (e.g. a *stratified* bootstrap).
    sims
        Simulated data sets per generator in the committed table (0: :data:`SIMS`).
    grid
        The ``n`` of the committed table (:data:`GRID` unless the method is dear to
        simulate); an ``n`` off it is read at the largest grid ``n`` below it.
    exact
        ``n -> coverage`` for a distribution-free method whose coverage is known in
        closed form for every continuous distribution (its nominal level is that
        coverage); such a method is not in the committed table, and :func:`simulate`
        checks the formula in the tests.
    """

    key: str
    label: str
    pattern: str
    kind: str
    simulate: Simulated
    simulated_as: str
    exclude: str | None = None
    exact: Callable[[int], float] | None = None
    sims: int = 0
    grid: tuple[int, ...] = GRID

    @property
    def n_sims(self) -> int:
        """Simulated data sets per generator for the committed table (:data:`SIMS`
        unless the method sets fewer: a stratified bootstrap of 10 tasks is ~10x dearer)."""
        return self.sims or SIMS

    def matches(self, text: str) -> bool:
        """Whether ``text`` (a finding's method) names this method."""
        if not re.search(self.pattern, text, flags=re.I):
            return False
        return not (self.exclude and re.search(self.exclude, text, flags=re.I))


#: Resampling schemes the "mean of n values" simulation does not stand for.
_NOT_IID = r"stratified|parametric|block|residual|out-of-fold|group bootstrap|rliable|noise|shifted"

#: Registered methods, most specific first (the first match wins).
REGISTRY: tuple[RegisteredMethod, ...] = (
    RegisteredMethod(
        "wilson",
        "Wilson score",
        r"\bwilson\b",
        "proportion",
        lambda x, level, rng: cal.wilson(x.sum(axis=-1), x.shape[-1], level=level),
        "a share of n 0/1 draws",
    ),
    RegisteredMethod(
        "clopper-pearson",
        "Clopper-Pearson",
        r"clopper",
        "proportion",
        lambda x, level, rng: cal.clopper_pearson(x.sum(axis=-1), x.shape[-1], level=level),
        "a share of n 0/1 draws",
    ),
    RegisteredMethod(
        "stratified-bootstrap",
        "stratified percentile bootstrap (runs resampled within tasks)",
        r"stratified bootstrap",
        "stratified",
        _stratified_iqm,
        f"the IQM of {STRAT_TASKS} tasks x n runs each (n: runs per task)",
        exclude=r"\bbca\b|parametric|block",
        sims=STRAT_SIMS,
    ),
    RegisteredMethod(
        "cluster-bootstrap-r2",
        "percentile bootstrap over shapes of out-of-fold predictions",
        r"bootstrap over shapes \((?:grouped )?out-of-fold predictions\)",
        "clustered-r2",
        _cluster_r2,
        f"the R^2 of predictions over n shapes x {CLUSTER_CELLS} tiles, shapes resampled "
        "(a MAPE over the same resamples is read here too)",
        sims=1000,
        grid=(5, 10, 20, 30, 50),
    ),
    RegisteredMethod(
        "welch-t",
        "Welch t (difference of two means)",
        r"\bwelch t over \d+ and \d+\b",
        "two-sample",
        _welch,
        "the difference of two means of n values each (n: runs per group, the smaller "
        "group's where they differ)",
        exclude=r"delta method",
    ),
    RegisteredMethod(
        "chi-square-sd",
        "chi-square interval of a standard deviation",
        r"\bchi-square interval \(df \d+\)",
        "sd",
        _chi2_sd,
        "the standard deviation of n + 1 values (n: degrees of freedom; a pooled "
        "within-group SD from groups of 2-4 is less sensitive to heavy tails than one "
        "sample of the same df, so this reading is conservative)",
        exclude=r"graybill",
    ),
    RegisteredMethod(
        "paired-bootstrap-sizes",
        "paired percentile bootstrap over seeds within sizes",
        r"paired percentile bootstrap over seeds within sizes",
        "paired-sizes",
        _paired_within_sizes,
        f"the mean over {PAIRED_SIZES} sizes of the mean of n paired differences each, "
        "seeds resampled within size (n: seeds per size; more sizes cover a little more, "
        "never above 2 Phi(1.96 sqrt((n - 1) / n)) - 1, 0.92 at n = 5)",
        grid=(2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20),
    ),
    RegisteredMethod(
        "student-t",
        "Student t",
        r"\bstudent[- ]?t\b|\bt[- ]interval\b",
        "mean",
        lambda x, level, rng: cal.t_interval(x, level=level),
        "the mean of n values",
    ),
    RegisteredMethod(
        "bootstrap-bc",
        "bias-corrected percentile bootstrap",
        r"bias[- ]corrected|\bbc\b",
        "mean",
        _bc,
        "the mean of n values",
        exclude=_NOT_IID + r"|\bbca\b",
    ),
    RegisteredMethod(
        "bootstrap-basic",
        "basic bootstrap",
        r"\bbasic\b.*bootstrap|bootstrap.*\bbasic\b",
        "mean",
        _basic,
        "the mean of n values",
        exclude=_NOT_IID,
    ),
    RegisteredMethod(
        "bootstrap-percentile-median",
        "percentile bootstrap of a median",
        r"\bmedian\b.*percentile bootstrap|percentile bootstrap.*\bmedian\b",
        "median",
        _percentile_median,
        "the median of n values",
        exclude=_NOT_IID + r"|\bbca\b|ratio|noise|shifted|range",
    ),
    RegisteredMethod(
        "range-median",
        "range of n values as an interval for their median",
        r"\bmedian and range over\b",
        "median",
        _range,
        "the median of n values (distribution-free: exact for any continuous distribution)",
        exact=_range_coverage,
    ),
    RegisteredMethod(
        "range-next-draw",
        "range of n values as a prediction interval for one more",
        r"prediction interval for one more\b",
        "median",
        lambda x, level, rng: _next_draw_in_range(x),
        "one more draw of the n values' distribution (distribution-free: exact for any "
        "continuous distribution)",
        exact=_next_draw_coverage,
    ),
    RegisteredMethod(
        "bootstrap-percentile",
        "percentile bootstrap",
        r"percentile.*bootstrap|bootstrap.*percentile",
        "mean",
        _percentile,
        "the mean of n values",
        exclude=_NOT_IID + r"|\bbca\b",
    ),
)

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


def _generators(kind: str) -> dict[str, tuple[cal.Sampler, float]]:
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


def match_method(text: str | None) -> RegisteredMethod | None:
    """The registered method a finding's method text names, or None."""
    if not text:
        return None
    return next((m for m in REGISTRY if m.matches(text)), None)


@dataclass(frozen=True)
class MethodCoverage:
    """Simulated coverage of a registered method at one ``n`` (lowest over generators)."""

    key: str
    n: int
    level: float
    coverage: float
    se: float
    generator: str
    sims: int


@functools.lru_cache(maxsize=1)
def _committed() -> dict[tuple[str, int], MethodCoverage]:
    if not TABLE_FILE.is_file():
        return {}
    rows = json.loads(TABLE_FILE.read_text(encoding="utf-8"))["coverage"]
    return {(r["key"], int(r["n"])): MethodCoverage(**r) for r in rows}


def measured_coverage(key: str, n: int, *, level: float = 0.95) -> MethodCoverage:
    """Coverage of registered method ``key`` at sample size ``n``: the committed entry at
    the largest grid ``n`` not above ``n`` (level 0.95), else a fresh simulation
    (:func:`simulate_coverage`). ``MethodCoverage.n`` is the ``n`` simulated.

    Raises
    ------
    KeyError, ValueError
        As :func:`simulate_coverage`.
    """
    exact = _exact(key, n, level)
    if exact is not None:
        return exact
    hit = committed_coverage(key, n, level=level)
    return hit if hit is not None else simulate_coverage(key, int(n), level=level)


def _exact(key: str, n: int, level: float) -> MethodCoverage | None:
    """The closed-form coverage of a distribution-free method (``exact``), else None."""
    method = next((m for m in REGISTRY if m.key == key), None)
    if method is None or method.exact is None or int(n) < 2:
        return None
    cover = float(method.exact(int(n)))
    return MethodCoverage(key, int(n), level, cover, 0.0, EXACT, 0)


#: The ``generator`` of a closed-form coverage (no simulation, no Monte Carlo error).
EXACT = "any continuous distribution (exact)"


@functools.lru_cache(maxsize=256)
def simulate_coverage(
    key: str, n: int, *, level: float = 0.95, sims: int | None = None
) -> MethodCoverage:
    """Simulated coverage of registered method ``key`` at sample size ``n``: the lowest
    over its generators, with its Monte Carlo standard error ``sqrt(c (1 - c) / sims)``.

    Parameters
    ----------
    key
        A :data:`REGISTRY` key.
    n
        Sample size (``>= 2``; above :data:`MAX_N` it is simulated at ``MAX_N``, a
        conservative stand-in since coverage rises with ``n``).
    level
        Nominal two-sided level.
    sims
        Simulated data sets per generator (None: the method's, :attr:`RegisteredMethod.n_sims`).

    Raises
    ------
    KeyError
        ``key`` is not registered.
    ValueError
        ``n < 2`` for a method of a mean, or ``n < 1``.
    """
    method = next((m for m in REGISTRY if m.key == key), None)
    if method is None:
        raise KeyError(f"no registered interval method {key!r}: {[m.key for m in REGISTRY]}")
    if n < (1 if method.kind == "proportion" else 2):
        raise ValueError(f"coverage of {method.label} needs n >= 2, got {n}")
    sims = method.n_sims if sims is None else int(sims)
    n_sim = min(int(n), MAX_N)
    worst: MethodCoverage | None = None
    for name, (sampler, truth) in _generators(method.kind).items():
        seed = [zlib.crc32(f"{key}|{name}".encode()), n_sim, int(round(level * 1e6))]
        rng = np.random.default_rng(seed)
        x = sampler(rng, sims, n_sim)
        lo, hi = method.simulate(x, level, rng)
        c = float(((np.asarray(lo) <= truth) & (truth <= np.asarray(hi))).mean())
        se = float(np.sqrt(max(c * (1 - c), 1e-12) / sims))
        if worst is None or c < worst.coverage:
            worst = MethodCoverage(key, n_sim, level, c, se, name, sims)
    assert worst is not None
    return worst


def build_table(
    *, grid: Sequence[int] | None = None, sims: int | None = None, keys: Sequence[str] | None = None
) -> dict:
    """Registered methods' coverage at level 0.95 on ``grid``: the committed table's
    content (``{"sims": ..., "coverage": [MethodCoverage as dict, ...]}``).

    Parameters
    ----------
    grid
        Sample sizes (None: each method's own, ``RegisteredMethod.grid``).
    sims
        Simulated data sets per generator (None: each method's own, ``n_sims``).
    keys
        Only these methods (None: every simulated one).
    """
    rows = [
        asdict(simulate_coverage(m.key, int(n), level=0.95, sims=sims))
        for m in REGISTRY
        if keys is None or m.key in keys
        for n in (m.grid if grid is None else grid)
        if n >= (1 if m.kind == "proportion" else 2) and m.exact is None
    ]
    return {"sims": SIMS if sims is None else sims, "resamples": RESAMPLES, "coverage": rows}


def update_table(keys: Sequence[str]) -> dict:
    """The committed table with the rows of ``keys`` simulated afresh (the other rows as
    committed): for adding or changing one method without re-simulating the others."""
    fresh = build_table(keys=keys)  # first: the file is read as it is once that is done
    old = json.loads(TABLE_FILE.read_text(encoding="utf-8")) if TABLE_FILE.is_file() else {}
    kept = [r for r in old.get("coverage", []) if r["key"] not in set(keys)]
    order = {m.key: i for i, m in enumerate(REGISTRY)}
    rows = sorted(kept + fresh["coverage"], key=lambda r: (order.get(r["key"], 99), r["n"]))
    return {**fresh, **{k: v for k, v in old.items() if k != "coverage"}, "coverage": rows}


_N_IN_TEXT = re.compile(
    r"\bover (?:the )?(\d[\d,]*)(?: (?:seeds|runs|repeats|draws|values|processes|prompts|tasks))?\b"
)


def finding_n(finding: Mapping) -> int | None:
    """The sample size a finding's interval rests on: its ``n`` field, else a number the
    method text states (``"Student t over 3 seeds"``, ``"Wilson score over 40"``), else
    None."""
    n = finding.get("n")
    if n is not None:
        return int(n)
    m = _N_IN_TEXT.search(str(finding.get("method") or ""))
    return int(m.group(1).replace(",", "")) if m else None


#: :attr:`MethodCoverage.key` of a coverage a study simulated on its own data
#: (:func:`measured_on_data`), and the label its coverage-table row shows.
ON_DATA = "on-data"
ON_DATA_LABEL = "simulated on this study's own data"


@dataclass(frozen=True)
class CoverageRow:
    """One interval method a report uses at one ``n``: its coverage, or why it has none."""

    method: str
    level: float | None
    n: int | None
    findings: int
    registered: str | None
    coverage: MethodCoverage | None
    simulated_as: str | None
    reason: str | None
    #: Where the simulation's n differs from the finding's, e.g. "simulated at n = 10,
    #: the nearest simulated n below 11" (coverage rises with n: the conservative reading).
    at: str | None = None
    #: Where the sample size is not recorded but the method is registered: its coverage
    #: at :data:`REFERENCE_NS`, for the reader to place the report's own n.
    reference: tuple[MethodCoverage, ...] = ()


def report_coverage(findings: Sequence[Mapping]) -> list[CoverageRow]:
    """Each interval method the findings use, grouped by (method text, level, n).

    Parameters
    ----------
    findings
        ``results.json`` findings (or :meth:`Finding.to_json` dicts); those without an
        interval are left out.

    Returns
    -------
    list of CoverageRow
        In order of first use; ``coverage`` None with a ``reason`` where the method is not
        registered or the finding's sample size is not recorded.
    """
    groups: dict[tuple, int] = {}
    for f in findings:
        ci = f.get("ci")
        if not ci or f.get("level") is None:
            continue
        key = (str(f.get("method") or "not stated"), float(f["level"]), finding_n(f))
        groups[key] = groups.get(key, 0) + 1
    rows = []
    for (text, level, n), count in groups.items():
        on_data = stated_on_data(text)
        if on_data is not None:  # the study simulated it on its own data: that measurement
            c, n_sim, se = on_data
            rows.append(
                CoverageRow(
                    text,
                    level,
                    n,
                    count,
                    ON_DATA_LABEL,
                    MethodCoverage(ON_DATA, n_sim, level, c, se, "these data's own spread", 0),
                    "data sets drawn from the study's own fitted model (the method says how)",
                    None,
                    None if n is None or n_sim == n else f"simulated at n = {n_sim}",
                )
            )
            continue
        reg = match_method(text)
        cov, reason, at = None, None, None
        reference: tuple[MethodCoverage, ...] = ()
        if reg is None:
            reason = "coverage not measured: no simulation registered for this method"
        elif n is None:
            reason = "coverage not measured: the sample size is not recorded"
            reference = tuple(measured_coverage(reg.key, r, level=level) for r in REFERENCE_NS)
        else:
            try:
                cov = measured_coverage(reg.key, n, level=level)
            except ValueError as exc:
                reason = f"coverage not measured: {exc}"
            if cov is not None and cov.n != n:
                where = (
                    "the largest simulated n" if n > MAX_N else f"the nearest simulated n below {n}"
                )
                at = f"simulated at n = {cov.n}, {where}"
        rows.append(
            CoverageRow(
                text,
                level,
                n,
                count,
                None if reg is None else reg.label,
                cov,
                None if reg is None else reg.simulated_as,
                reason,
                at,
                reference,
            )
        )
    return rows


#: Coverage a deciding interval must reach for its verdict to go without a caveat: below
#: it, the verdict's reason states the interval's measured coverage (issue 28: >= 0.93).
COVERAGE_TARGET = 0.93


def committed_coverage(key: str, n: int, *, level: float = 0.95) -> MethodCoverage | None:
    """The committed table's coverage of ``key`` at the largest grid ``n`` not above
    ``n`` (None off the table: another level, or ``n`` below the grid). Never simulates,
    so it is cheap enough to call on every verdict."""
    exact = _exact(key, n, level)
    if exact is not None:
        return exact
    method = next((m for m in REGISTRY if m.key == key), None)
    grid = GRID if method is None else method.grid
    if level != 0.95 or n < grid[0]:
        return None
    return _committed().get((key, max(g for g in grid if g <= n)))


#: How a finding's method text states the coverage its study simulated on its own data.
_ON_DATA = re.compile(
    r"coverage (\d(?:\.\d+)?) at n = (\d+) simulated on these data \(se (\d(?:\.\d+)?)\)"
)


def measured_on_data(coverage: float, n: int, *, se: float) -> str:
    """The words a study appends to an interval's method text when it has simulated that
    interval's coverage on a generator resampled from its own data (e.g. the per-seed
    deviations of its log speedups, the per-prompt values of a gain), so that
    :func:`coverage_note` states that measurement rather than the generic table's.

    Parameters
    ----------
    coverage
        Simulated coverage, in ``[0, 1]``.
    n
        Sample size simulated (the interval's ``n``).
    se
        Monte Carlo standard error of ``coverage``.
    """
    if not 0.0 <= float(coverage) <= 1.0 or int(n) < 1 or not float(se) >= 0.0:
        raise ValueError(
            f"measured_on_data: need coverage in [0, 1], n >= 1, se >= 0; got {coverage}, {n}, {se}"
        )
    return f"coverage {float(coverage):.3f} at n = {int(n)} simulated on these data (se {float(se):.3f})"


def stated_on_data(method: str | None) -> tuple[float, int, float] | None:
    """``(coverage, n, se)`` a method text states with :func:`measured_on_data`, else None."""
    m = _ON_DATA.search(str(method or ""))
    return (float(m.group(1)), int(m.group(2)), float(m.group(3))) if m else None


def coverage_note(finding: Mapping, *, target: float = COVERAGE_TARGET) -> str | None:
    """What a verdict decided by ``finding``'s interval must say about that interval's
    coverage, or None when nothing.

    Parameters
    ----------
    finding
        A ``results.json`` finding dict (``ci``, ``level``, ``method``, ``n``).
    target
        Coverage below which the measured value is stated.

    Returns
    -------
    str or None
        ``"its interval's simulated coverage is 0.92 at n = 3"`` when the method's measured coverage at
        the finding's ``n`` (:func:`committed_coverage`) is below ``target``; where the
        method text states a coverage simulated on the study's own data
        (:func:`measured_on_data`), both are read and the note is given when either is
        below ``target``, naming both (e.g. ``"its interval's simulated coverage is 0.92 at n = 3 on a
        generic log-normal (sigma 0.5) generator (0.959 at n = 3 on these data's own
        spread (se 0.003))"``);
        ``"its interval's coverage is not measured: <why>"`` when the method is not
        registered, the sample size is not recorded, or the table has no entry; None for
        an interval that covers at least ``target``, or a finding without interval.
    """
    ci = finding.get("ci")
    if not ci or finding.get("level") is None:
        return None
    on_data = stated_on_data(finding.get("method"))
    if on_data is not None:  # the study's own generator, beside the generic table's
        c, n_sim, se = on_data
        data_said = f"{c:.3f} at n = {n_sim} on these data's own spread (se {se:.3f})"
        reg = match_method(finding.get("method"))
        n = finding_n(finding)
        level = float(finding["level"])
        generic = None if reg is None or n is None else committed_coverage(reg.key, n, level=level)
        low_generic = generic is not None and generic.coverage < target
        if c < target:
            extra = (
                f"; {generic.coverage:.2f} on a generic {generic.generator} generator"
                if low_generic and generic is not None
                else ""
            )
            return f"its interval's simulated coverage is {data_said}{extra}"
        if low_generic and generic is not None:
            return (
                f"its interval's simulated coverage is {generic.coverage:.2f} at n = {n} on a generic "
                f"{generic.generator} generator ({data_said})"
            )
        return None
    not_measured = "its interval's coverage is not measured: "
    reg = match_method(finding.get("method"))
    if reg is None:
        return (
            not_measured
            + f"no simulation is registered for its method ({finding.get('method') or 'not stated'})"
        )
    n = finding_n(finding)
    if n is None:
        return not_measured + f"its sample size is not recorded ({reg.label})"
    level = float(finding["level"])
    cov = committed_coverage(reg.key, n, level=level)
    if cov is None:
        return not_measured + f"no simulation of {reg.label} at level {level:g}, n = {n}"
    if cov.coverage >= target:
        return None
    at = "" if cov.n == n else f", as simulated at n = {cov.n}"
    return f"its interval's simulated coverage is {cov.coverage:.2f} at n = {n}{at}"


if __name__ == "__main__":  # regenerate the committed table (minutes on 2 cores)
    import sys

    # ``python -m scalinglab.stats.method_coverage [KEY ...]``: only those methods' rows
    table = update_table(sys.argv[1:]) if sys.argv[1:] else build_table()
    TABLE_FILE.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {TABLE_FILE}")
