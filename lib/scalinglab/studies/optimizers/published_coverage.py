"""How often the parametric bootstrap of the paper's one-run-per-cell table covers.

The paper's final losses (:mod:`.published`) have one run per setting, so their intervals
come from a parametric bootstrap (:func:`.published.noise_bootstrap`: the pooled
law-residual noise added to every loss, AdamW's law refitted per replicate). No generic
simulation describes that procedure, so its coverage is measured on a generator built
from the table itself:

- **The truth.** Every (optimizer, size) curve is replaced by its own fitted
  ``L(D) = A D^-alpha + E`` (the fit :func:`.published.law_noise` makes; a curve with too
  few multiples for the law keeps its losses). The truth's value of a finding is what the
  analysis gives on that noise-free table: AdamW's law is then exactly its fitted law, and
  every speedup, geometric mean, family ratio, size slope and catch-up follows from it.
- **Simulated tables.** Each adds independent noise to every truth loss: ``normal``, the
  bootstrap's own assumption, ``N(0, sigma^2)`` with ``sigma`` the table's pooled residual
  standard deviation; or, as a robustness check, ``residuals``: the table's own law
  residuals, centred and scaled by ``sqrt(points / dof)`` (a 3-parameter law fitted to 4
  points leaves residuals that show a quarter of the noise variance), resampled with
  replacement.
- **The same interval procedure** on every simulated table (:func:`deciding_intervals`,
  the notebook's own calls: :func:`.findings.speedups`, then
  :func:`.analysis.speedup_by_size`, :func:`.analysis.size_trend` over the matched budgets
  and the identified sizes, :func:`.analysis.family_gap` and :func:`.published.catch_up`),
  noise re-estimated from the simulated table, with fewer bootstrap replicates than the
  report (:data:`REPS`; a percentile interval from fewer replicates covers about as often,
  its ends only move more).
- **Coverage** is the share of simulated tables whose interval holds the truth's value,
  with its Monte Carlo standard error ``sqrt(c (1 - c) / sims)``. An interval without an
  upper end (too many replicates below AdamW's refitted asymptote) counts as unbounded
  above.

A full measurement (:data:`SIMS` tables for each generator at :data:`REPS` replicates)
takes about 26 CPU minutes (2.4 s a table), too slow for every render, so it is computed once with
``python -m scalinglab.studies.optimizers.published_coverage`` and committed as
:data:`.published.COVERAGE_FILE` with its provenance (the table's hash, seed, sizes of the simulation).
:func:`.published.on_data_methods` reads it back only for a table with the same hash, and the
findings' method texts then state the lower of the two generators' coverages
(:func:`scalinglab.stats.coverage_report.measured_on_data`), so every verdict decided on
them says how often its interval covers when that is below the target.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.errors import InputError
from scalinglab.fitting.speedup import compute_speedups
from scalinglab.paths import data_dir
from scalinglab.studies.optimizers import analysis, findings, matching, published

#: Simulated tables per generator in the committed measurement (MC s.e. about 0.012 at 0.95).
SIMS = 320
#: Bootstrap replicates of the interval on each simulated table (the report uses 1000).
REPS = 200
#: The generators: the bootstrap's own normal noise, and the table's own residuals.
GENERATORS = ("normal", "residuals")
#: The paper's table the committed measurement is made on.
PAPER_TABLE = data_dir() / "published" / "fantastic_optimizers" / "final_losses.csv"
#: The findings measured: those the claims FPO-1 to FPO-4 and FPO-6 read, at every size.
MEASURED = (
    "speedup_mean/muon/",
    "speedup_mean/nadamw/",
    "size_slope/muon",
    "matrix_over_scalar/",
    "catch_up/",
)


def truth_table(table: pd.DataFrame, *, min_points: int = 4) -> tuple[pd.DataFrame, np.ndarray]:
    """The generator's truth and the residuals it is fitted with.

    Parameters
    ----------
    table
        ``optimizer, model_size, data_multiple, loss``, one row per cell.
    min_points
        As in :func:`.published.law_noise`: curves with fewer multiples keep their losses.

    Returns
    -------
    truth
        ``table`` with ``loss`` replaced by each curve's fitted law (same row order).
    residuals
        ``(cells in fitted curves,)`` observed minus fitted loss, centred and scaled by
        ``sqrt(points / dof)`` so that their mean square is the pooled noise variance.
    """
    truth = table.copy()
    res, dof = [], 0
    for _, g in table.groupby(["optimizer", "model_size"], sort=False):
        if g.data_multiple.nunique() < min_points:
            continue
        x, y = g.data_multiple.to_numpy(float), g.loss.to_numpy(float)
        start = np.array([max(y[0] - y[-1], 1e-3) * x[0], 0.5, max(y.min() - 0.1, 0.0)])
        fit = published._po(published._refit(x, y, start), x)
        truth.loc[g.index, "loss"] = fit
        res.append(y - fit)
        dof += len(y) - 3
    if dof == 0:
        raise InputError(f"no curve has {min_points}+ data multiples: no law to simulate from")
    r = np.concatenate(res)
    return truth, (r - r.mean()) * np.sqrt(len(r) / dof)


def deciding_intervals(
    table: pd.DataFrame, *, baseline: str, reps: int, level: float, seed: int
) -> dict[str, tuple[float, float, float]]:
    """``name -> (point, lo, hi)`` of every finding :data:`MEASURED` names, made as the
    notebook makes them from a one-run-per-cell table (``lo``/``hi`` NaN where missing)."""
    sp = findings.speedups(table, baseline=baseline, reps=reps, level=level, seed=seed)
    return _intervals(sp, table)


def _intervals(sp: findings.Speedups, table: pd.DataFrame) -> dict[str, tuple[float, float, float]]:
    """:func:`deciding_intervals` from the speedups of ``table``."""
    res = sp.result
    out: dict[str, tuple[float, float, float]] = {}
    per = analysis.speedup_by_size(res)
    for r in per.itertuples():
        out[f"speedup_mean/{r.optimizer}/{r.model_size}"] = (r.speedup, r.lo, r.hi)
    sizes = list(dict.fromkeys(res.cells.model_size))
    n_params, families = findings.size_labels(None, sizes, res.cells.optimizer.unique())
    res_matched, mults = matching.matched(res)
    use, _ = findings.trend_sizes(sizes, sp.identified)
    if n_params is not None and mults:
        _, trend = analysis.size_trend(matching.at_sizes(res_matched, use), n_params)
        for r in trend.itertuples():
            out[f"size_slope/{r.optimizer}"] = (r.slope, r.lo, r.hi)
    for r in analysis.family_gap(res, families).itertuples():
        out[f"matrix_over_scalar/{r.model_size}"] = (r.ratio, r.lo, r.hi)
    soap = findings.soap_name(table)
    shared = findings.shared_multiples(table, "muon", soap)
    catch = published.catch_up(res, leader="muon", follower=soap, low=shared[0], high=shared[-1])
    for r in catch.itertuples():
        out[f"catch_up/{soap}_vs_muon/{r.model_size}"] = (r.change, r.lo, r.hi)
    return {
        k: tuple(float(x) for x in v)  # type: ignore[misc]
        for k, v in out.items()
        if k.startswith(MEASURED)
    }


def _truth_values(truth: pd.DataFrame, *, baseline: str, level: float) -> dict[str, float]:
    """The truth's value of every measured finding: the analysis of the noise-free table
    (points only, no bootstrap)."""
    res = compute_speedups(truth, baseline=baseline, bootstrap=0, level=level, seed=0)
    sp = findings.Speedups(res, published.e_identified(res, {}), findings.PARAMETRIC, True)
    return {k: v[0] for k, v in _intervals(sp, truth).items()}


def simulate_hits(
    table: pd.DataFrame,
    sims: range,
    *,
    noise: str = "normal",
    reps: int = REPS,
    baseline: str = "adamw",
    level: float = 0.95,
    seed: int = 0,
    sigma: float | None = None,
) -> list[dict[str, Any]]:
    """Whether each simulated table's intervals hold the truth's values.

    Parameters
    ----------
    table
        ``optimizer, model_size, data_multiple, loss``, one row per cell.
    sims
        Which simulated tables (indices): table ``i`` draws from the ``i``-th child of
        ``numpy.random.SeedSequence(seed)``, so any split of ``range(S)`` into pieces gives
        the same tables as one run.
    noise
        ``"normal"`` or ``"residuals"`` (module docstring).
    reps
        Bootstrap replicates per simulated table.
    baseline, level
        As in the report.
    seed
        Seeds every draw (noise and each table's bootstrap seed).
    sigma
        Standard deviation of the ``normal`` noise; None: the table's pooled law-residual
        one (:func:`.published.law_noise`), as the bootstrap assumes.

    Returns
    -------
    list of dict
        One per simulated table: ``sim`` (index), ``hit`` and ``open`` (``name -> 0/1``:
        the interval holds the truth; it misses an end), for the findings it has.
    """
    if noise not in GENERATORS:
        raise InputError(f"noise must be one of {GENERATORS}, got {noise!r}")
    if reps < 1:
        raise InputError(f"need reps >= 1; got {reps}")
    truth, resid = truth_table(table)
    if sigma is None:
        sigma = published.law_noise(table)[0]
    elif not sigma > 0:
        raise InputError(f"need sigma > 0; got {sigma}")
    true = _truth_values(truth, baseline=baseline, level=level)
    base = truth.loss.to_numpy(float)
    children = np.random.SeedSequence(seed).spawn(max(sims, default=-1) + 1)
    out = []
    for i in sims:
        rng = np.random.default_rng(children[i])
        if noise == "normal":
            eps = rng.normal(0.0, sigma, size=base.shape)
        else:
            eps = rng.choice(resid, size=base.shape, replace=True)
        got = deciding_intervals(
            truth.assign(loss=base + eps),
            baseline=baseline,
            reps=reps,
            level=level,
            seed=int(rng.integers(2**31)),
        )
        hit, open_end = {}, {}
        for k, t in true.items():
            if k not in got or not np.isfinite(got[k][0]):
                continue
            _, lo, hi = got[k]
            open_end[k] = int(not (np.isfinite(lo) and np.isfinite(hi)))
            lo = -np.inf if np.isnan(lo) else lo
            hi = np.inf if np.isnan(hi) else hi
            hit[k] = int(lo <= t <= hi)
        out.append({"sim": i, "hit": hit, "open": open_end})
    return out


def coverage_table(
    table: pd.DataFrame,
    hits: Sequence[Mapping[str, Any]],
    *,
    noise: str,
    baseline: str = "adamw",
    level: float = 0.95,
) -> pd.DataFrame:
    """Coverage per finding from :func:`simulate_hits` records.

    Returns
    -------
    pandas.DataFrame
        One row per finding: name, truth, coverage, se (Monte Carlo,
        ``sqrt(c (1 - c) / sims)``), sims, unbounded (tables whose interval missed an
        end), generator.
    """
    true = _truth_values(truth_table(table)[0], baseline=baseline, level=level)
    rows = []
    for k, t in true.items():
        h = [r["hit"][k] for r in hits if k in r["hit"]]
        n = len(h)
        c = float(np.mean(h)) if n else float("nan")
        rows.append(
            {
                "name": k,
                "truth": float(t),
                "coverage": c,
                "se": float(np.sqrt(c * (1 - c) / n)) if n else float("nan"),
                "sims": n,
                "unbounded": int(sum(r["open"].get(k, 0) for r in hits)),
                "generator": noise,
            }
        )
    return pd.DataFrame(rows)


def simulate_coverage(
    table: pd.DataFrame,
    *,
    noise: str = "normal",
    sims: int = SIMS,
    reps: int = REPS,
    baseline: str = "adamw",
    level: float = 0.95,
    seed: int = 0,
    sigma: float | None = None,
) -> pd.DataFrame:
    """Coverage of :func:`deciding_intervals` on ``sims`` tables simulated from
    ``table``'s laws (:func:`simulate_hits`, then :func:`coverage_table`)."""
    if sims < 1:
        raise InputError(f"need sims >= 1; got {sims}")
    kw = dict(baseline=baseline, level=level)
    hits = simulate_hits(table, range(sims), noise=noise, reps=reps, seed=seed, sigma=sigma, **kw)  # type: ignore[arg-type]
    return coverage_table(table, hits, noise=noise, **kw)  # type: ignore[arg-type]


def summarize(
    table: pd.DataFrame,
    per: Mapping[str, pd.DataFrame],
    *,
    sims: int,
    reps: int,
    seed: int,
    baseline: str = "adamw",
    level: float = 0.95,
    seconds: float | None = None,
) -> dict[str, Any]:
    """The measurement as committed: every generator's coverage per finding
    (:func:`coverage_table` each), the lowest per finding, and the provenance (table hash,
    seed, sims, reps, level, noise sigma, seconds). The ``i``-th generator of ``per`` was
    simulated with seed ``seed + i`` (:func:`simulate_hits`)."""
    lowest: dict[str, dict[str, Any]] = {}
    for g, df in per.items():
        for r in df.itertuples():
            if r.name not in lowest or r.coverage < lowest[r.name]["coverage"]:
                lowest[r.name] = {"coverage": r.coverage, "se": r.se, "generator": g}
    return {
        "what": "coverage of the parametric-bootstrap intervals of the one-run-per-cell table "
        "(scalinglab.studies.optimizers.published_coverage)",
        "table_sha256": published.table_hash(table),
        "seed": seed,
        "seeds": {g: seed + i for i, g in enumerate(per)},
        "sims": sims,
        "reps": reps,
        "level": level,
        "baseline": baseline,
        "sigma": published.law_noise(table)[0],
        "seconds": seconds,
        "by_generator": {g: df.to_dict("records") for g, df in per.items()},
        "lowest": lowest,
    }


def _main(argv: Sequence[str]) -> None:
    """``run GENERATOR START STOP FILE``: append simulated tables ``START..STOP-1`` of the
    paper's table to ``FILE`` (JSON lines, one per table, written as they finish);
    ``write FILE_NORMAL FILE_RESIDUALS CPU_SECONDS``: summarize both into :data:`.published.COVERAGE_FILE`."""
    table = published.read_runs(str(PAPER_TABLE))
    if argv[0] == "run":
        noise, a, b, path = argv[1], int(argv[2]), int(argv[3]), Path(argv[4])
        seed = GENERATORS.index(noise)  # generator i draws from seed i (as summarize says)
        for i in range(a, b, 10):  # ten tables at a time, written as they finish
            recs = simulate_hits(table, range(i, min(i + 10, b)), noise=noise, seed=seed)
            with path.open("a", encoding="utf-8") as fh:
                fh.writelines(json.dumps(r) + "\n" for r in recs)
        return
    if argv[0] == "write":
        per, sims = {}, []
        for noise, file in zip(GENERATORS, argv[1:3], strict=True):
            hits = [json.loads(x) for x in Path(file).read_text(encoding="utf-8").splitlines()]
            if sorted(h["sim"] for h in hits) != list(range(len(hits))):
                raise InputError(
                    f"{file}: the simulated tables are not 0..{len(hits) - 1} once each"
                )
            per[noise] = coverage_table(table, hits, noise=noise)
            sims.append(len(hits))
        out = summarize(table, per, sims=min(sims), reps=REPS, seed=0, seconds=float(argv[3]))
        out["command"] = "python -m scalinglab.studies.optimizers.published_coverage run|write"
        published.COVERAGE_FILE.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {published.COVERAGE_FILE}")
        return
    raise SystemExit(f"unknown command {argv[0]!r}: run or write")


if __name__ == "__main__":  # the committed measurement (about 26 CPU minutes)
    import sys

    _main(sys.argv[1:])
