"""The registry of interval methods a finding can name, and their committed coverage.

Every finding states the method of its interval in words (``Estimate.method``) and, where
the library knows it, the sample size the interval rests on (``Estimate.n``: seeds,
runs, draws). This module maps the words to a registered method (:data:`REGISTRY`, by
regular expression) and looks up that method's simulated coverage at that ``n``
(:func:`measured_coverage`, with the simulation's Monte Carlo standard error): the
lowest over the method's generators, with the generator that gave it. The methods and
their generators are :mod:`scalinglab.stats.coverage_methods`; a report's coverage rows
and what its verdicts say of coverage are :mod:`scalinglab.stats.coverage_report`.

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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from scalinglab.stats import calibration as cal
from scalinglab.stats import coverage_methods as cm

#: Simulated data sets per (method, n, generator): MC standard error about 0.0034 at 0.95.
SIMS = 4000
#: Sample sizes of the committed table; a larger ``n`` is read at the last one.
GRID = (2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40, 50, 75, 100)
#: Largest ``n`` simulated; a larger one is looked up at this ``n`` (coverage rises with n).
MAX_N = GRID[-1]
#: The committed table (level 0.95, :data:`SIMS` data sets per generator).
TABLE_FILE = Path(__file__).with_name("method_coverage.json")


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
        The interval on simulated data,
        :data:`~scalinglab.stats.coverage_methods.Simulated`.
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
    simulate: cm.Simulated
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
        cm.stratified_iqm,
        f"the IQM of {cm.STRAT_TASKS} tasks x n runs each (n: runs per task)",
        exclude=r"\bbca\b|parametric|block",
        sims=cm.STRAT_SIMS,
    ),
    RegisteredMethod(
        "cluster-bootstrap-r2",
        "percentile bootstrap over shapes of out-of-fold predictions",
        r"bootstrap over shapes \((?:grouped )?out-of-fold predictions\)",
        "clustered-r2",
        cm.cluster_r2,
        f"the R^2 of predictions over n shapes x {cm.CLUSTER_CELLS} tiles, shapes resampled "
        "(a MAPE over the same resamples is read here too)",
        sims=1000,
        grid=(5, 10, 20, 30, 50),
    ),
    RegisteredMethod(
        "welch-t",
        "Welch t (difference of two means)",
        r"\bwelch t over \d+ and \d+\b",
        "two-sample",
        cm.welch,
        "the difference of two means of n values each (n: runs per group, the smaller "
        "group's where they differ)",
        exclude=r"delta method",
    ),
    RegisteredMethod(
        "chi-square-sd",
        "chi-square interval of a standard deviation",
        r"\bchi-square interval \(df \d+\)",
        "sd",
        cm.chi2_sd,
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
        cm.paired_within_sizes,
        f"the mean over {cm.PAIRED_SIZES} sizes of the mean of n paired differences each, "
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
        cm.bc_mean,
        "the mean of n values",
        exclude=_NOT_IID + r"|\bbca\b",
    ),
    RegisteredMethod(
        "bootstrap-basic",
        "basic bootstrap",
        r"\bbasic\b.*bootstrap|bootstrap.*\bbasic\b",
        "mean",
        cm.basic_mean,
        "the mean of n values",
        exclude=_NOT_IID,
    ),
    RegisteredMethod(
        "bootstrap-percentile-median",
        "percentile bootstrap of a median",
        r"\bmedian\b.*percentile bootstrap|percentile bootstrap.*\bmedian\b",
        "median",
        cm.percentile_median,
        "the median of n values",
        exclude=_NOT_IID + r"|\bbca\b|ratio|noise|shifted|range",
    ),
    RegisteredMethod(
        "range-median",
        "range of n values as an interval for their median",
        r"\bmedian and range over\b",
        "median",
        cm.range_interval,
        "the median of n values (distribution-free: exact for any continuous distribution)",
        exact=cm.range_coverage,
    ),
    RegisteredMethod(
        "range-next-draw",
        "range of n values as a prediction interval for one more",
        r"prediction interval for one more\b",
        "median",
        lambda x, level, rng: cm.next_draw_in_range(x),
        "one more draw of the n values' distribution (distribution-free: exact for any "
        "continuous distribution)",
        exact=cm.next_draw_coverage,
    ),
    RegisteredMethod(
        "bootstrap-percentile",
        "percentile bootstrap",
        r"percentile.*bootstrap|bootstrap.*percentile",
        "mean",
        cm.percentile_mean,
        "the mean of n values",
        exclude=_NOT_IID + r"|\bbca\b",
    ),
)


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
    for name, (sampler, truth) in cm.generators(method.kind).items():
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
    return {"sims": SIMS if sims is None else sims, "resamples": cm.RESAMPLES, "coverage": rows}


def update_table(keys: Sequence[str]) -> dict:
    """The committed table with the rows of ``keys`` simulated afresh (the other rows as
    committed): for adding or changing one method without re-simulating the others."""
    fresh = build_table(keys=keys)  # first: the file is read as it is once that is done
    old = json.loads(TABLE_FILE.read_text(encoding="utf-8")) if TABLE_FILE.is_file() else {}
    kept = [r for r in old.get("coverage", []) if r["key"] not in set(keys)]
    order = {m.key: i for i, m in enumerate(REGISTRY)}
    rows = sorted(kept + fresh["coverage"], key=lambda r: (order.get(r["key"], 99), r["n"]))
    return {**fresh, **{k: v for k, v in old.items() if k != "coverage"}, "coverage": rows}


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


if __name__ == "__main__":  # regenerate the committed table (minutes on 2 cores)
    import sys

    # ``python -m scalinglab.stats.method_coverage [KEY ...]``: only those methods' rows
    table = update_table(sys.argv[1:]) if sys.argv[1:] else build_table()
    TABLE_FILE.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {TABLE_FILE}")
