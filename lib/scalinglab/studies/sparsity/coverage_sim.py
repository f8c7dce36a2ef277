"""Coverage of the sparsity study's own interval procedures, simulated on its own data.

The generic coverage table (:mod:`scalinglab.stats.method_coverage`) has no entry for the
block bootstraps of the paper's released curves, nor for the law fits' group bootstrap
over a few seeds. Here each is measured on generators built from the data it is applied
to; the same procedure is rerun on every simulated data set, and the share of intervals
that contain the generator's true value is the coverage (Monte Carlo standard error
``sqrt(c (1 - c) / sims)``). Each finding then states it with
:func:`~scalinglab.stats.coverage_report.measured_on_data`, so its verdict does.

**Released curves** (one run per curve; :func:`curve_generators`). The mean is the law's
point fit to the curve; the noise is its residuals, either

- ``blocks``: resampled in moving blocks of :func:`.published.block_length` consecutive
  residuals (the dependence the bootstraps assume), or
- ``ar1``: a Gaussian AR(1) with the residuals' standard deviation and their lag-1
  autocorrelation (clipped to +-0.9), a smooth alternative as a robustness check.

The coverage stated is the **lower** of the two, the other named beside it.

- :func:`late_coverage`: :func:`.published.late_trends` and its two summaries (the mean
  relative last-decade slope over the test half's sizes, and the relative size slope of
  the end ratio); the truth is the summary of the noise-free mean curves (the procedure's
  estimand: the least-squares line of the law through the last decade).
- :func:`limit_coverage`: :func:`.published.paper_limit` (the moving-block residual
  bootstrap of ``A0``, with its fallback to the block bootstrap over checkpoints); the
  truth is the point fit's ``A0``. Each simulated curve needs ``reps + 1`` law fits, so this
  runs offline (:func:`build_limit_table`, ``python -m
  scalinglab.studies.sparsity.coverage_sim``) into ``data/sparsity_laws/
  published_limit_coverage.json``, read by the report with its provenance checked.

The coverage of our own runs' law fits and plateau pairs is in :mod:`.run_coverage`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from scalinglab.errors import InputError
from scalinglab.fitting import FitResult, fit
from scalinglab.paths import data_dir
from scalinglab.stats.coverage_report import measured_on_data
from scalinglab.studies.sparsity import published as pub

#: Generators of the released curves' noise (module docstring).
GENERATORS = ("blocks", "ar1")
#: The committed table of the ``published`` variant's coverage (:func:`build_table`).
TABLE = "published_coverage.json"
#: Its parts (:func:`build_table`).
PARTS = ("late", "silu", "relu")
#: Its size: simulated sets per generator for the late summaries and for the limits, and
#: residual-bootstrap refits per simulated curve.
LATE_SIMS, LIMIT_SIMS, LIMIT_REPS = 200, 150, 50


@dataclass(frozen=True)
class Coverage:
    """Simulated coverage of one interval procedure (lowest over :data:`GENERATORS`)."""

    coverage: float
    se: float
    n: int
    sims: int
    generator: str
    others: dict[str, float]
    how: str = ""

    def said(self) -> str:
        """The words appended to the finding's method text."""
        other = ", ".join(f"{k} {v:.3f}" for k, v in self.others.items())
        return (
            f"{measured_on_data(self.coverage, self.n, se=self.se)} ({self.sims} simulated "
            f"sets; generator: {_GEN_WORDS[self.generator]}"
            + (f"; other generators: {other}" if other else "")
            + (f"; {self.how}" if self.how else "")
            + ")"
        )


_GEN_WORDS = {
    "blocks": "the law fit plus moving blocks of its residuals",
    "ar1": "the law fit plus AR(1) residuals at its lag-1 correlation",
    "runs": "the law fit plus whole runs' residual curves drawn with replacement",
    "seeds": "each model's per-seed levels, centred at their mean, drawn with replacement",
}


def from_hits(hits: dict[str, np.ndarray], n: int) -> Coverage:
    """Lowest coverage over generators, from ``(sims,)`` booleans per generator."""
    rates = {g: float(np.mean(h)) for g, h in hits.items()}
    worst = min(rates, key=lambda g: rates[g])
    sims = int(hits[worst].size)
    c = rates[worst]
    return Coverage(
        c,
        math.sqrt(max(c * (1 - c), 1.0 / sims) / sims),
        int(n),
        sims,
        worst,
        {g: v for g, v in rates.items() if g != worst},
    )


def residual_noise(
    resid: np.ndarray, generator: str, *, sims: int, rng: np.random.Generator
) -> np.ndarray:
    """``(sims, n)`` noise for a curve of ``n`` checkpoints from its residuals ``(n,)``:
    moving blocks of :func:`.published.block_length` residuals (``"blocks"``) or a
    stationary Gaussian AR(1) with their standard deviation and lag-1 correlation
    (``"ar1"``, clipped to +-0.9)."""
    resid = np.asarray(resid, float)
    n = resid.size
    if generator == "blocks":
        return resid[pub.moving_block_indices(rng, n, pub.block_length(n), (sims,))]
    if generator == "ar1":
        phi = float(np.clip(np.corrcoef(resid[:-1], resid[1:])[0, 1], -0.9, 0.9))
        sd = float(resid.std())
        e = np.empty((sims, n))
        e[:, 0] = rng.normal(0.0, sd, sims)
        innov = rng.normal(0.0, sd * math.sqrt(1 - phi**2), (sims, n))
        for t in range(1, n):
            e[:, t] = phi * e[:, t - 1] + innov[:, t]
        return e
    raise ValueError(f"unknown generator {generator!r}; one of {GENERATORS}")


def curve_generators(curves: pd.DataFrame) -> dict[tuple[str, str], tuple[FitResult, np.ndarray]]:
    """Per released curve ``(activation, model)``: its law's point fit (no bootstrap) and
    its residuals ``(n,)`` in token order."""
    out = {}
    for (act, model), g in curves.groupby(["activation", "model"], sort=False):
        D, y = g["D"].to_numpy(float), g["activation_ratio"].to_numpy(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = fit(pub.LAWS[str(act)], D, y)
        out[(str(act), str(model))] = (res, y - res.predict(D))
    return out


def _late_summary(table, draws, *, activation, models, summary, level):
    if summary == "trend":
        return pub.mean_over_models(
            table, draws, activation=activation, column=2, level=level, models=models
        )
    t = table[(table["activation"] == activation) & table["model"].isin(list(models))]
    return pub.scale_slope(t, draws, activation=activation, level=level)


def late_coverage(
    curves: pd.DataFrame,
    *,
    activation: str,
    models: Sequence[str],
    summary: str,
    sims: int = 400,
    reps: int = 500,
    level: float = 0.95,
    seed: int = 0,
    generators: dict | None = None,
) -> Coverage:
    """Coverage of a :func:`.published.late_trends` summary over ``models`` of one activation.

    Parameters
    ----------
    curves
        :func:`.published.load_curves` rows (at least ``models`` of ``activation``).
    summary
        ``"trend"`` (mean over the sizes of the last-decade slope over the end ratio,
        :func:`.published.mean_over_models` column 2) or ``"scale"``
        (:func:`.published.scale_slope`).
    sims, reps
        Simulated curve sets per generator, block-bootstrap resamples per set (the
        report's ``reps``).
    generators
        :func:`curve_generators`' output, to reuse (default: fitted here).

    Returns
    -------
    Coverage
        ``n`` is the number of checkpoints in the shortest last decade of ``models``.
    """
    if summary not in ("trend", "scale"):
        raise ValueError(f"summary must be 'trend' or 'scale', got {summary!r}")
    sub = curves[(curves["activation"] == activation) & curves["model"].isin(list(models))]
    if sub["model"].nunique() != len(set(models)):
        raise ValueError(f"curves lack some of {list(models)} for {activation}")
    gens = generators if generators is not None else curve_generators(sub)
    sub = sub.sort_values(["model", "D"]).reset_index(drop=True)
    mean = sub.copy()
    for (act, model), g in sub.groupby(["activation", "model"], sort=False):
        res = gens[(act, model)][0]
        mean.loc[g.index, "activation_ratio"] = res.predict(g["D"].to_numpy(float))
    tab0, draws0 = pub.late_trends(mean, reps=1, seed=seed)
    truth = _late_summary(
        tab0, draws0, activation=activation, models=models, summary=summary, level=level
    ).point
    rng = np.random.default_rng([seed, 7919])
    noise = {
        (act, model): {
            gen: residual_noise(gens[(act, model)][1], gen, sims=sims, rng=rng)
            for gen in GENERATORS
        }
        for (act, model) in sub.groupby(["activation", "model"], sort=False).groups
    }
    hits = {gen: np.zeros(sims, bool) for gen in GENERATORS}
    for gen in GENERATORS:
        for s in range(sims):
            sim = mean.copy()
            for key, g in sub.groupby(["activation", "model"], sort=False):
                sim.loc[g.index, "activation_ratio"] += noise[key][gen][s]
            tab, draws = pub.late_trends(sim, reps=reps, seed=seed + 1 + s)
            est = _late_summary(
                tab, draws, activation=activation, models=models, summary=summary, level=level
            )
            hits[gen][s] = est.ci is not None and est.ci[0] <= truth <= est.ci[1]
    n = int(tab0["n_points"].min())
    return dataclasses.replace(from_hits(hits, n), how=f"{reps} block resamples per set")


def limit_coverage(
    res: FitResult,
    D: np.ndarray,
    resid: np.ndarray,
    *,
    sims: int = LIMIT_SIMS,
    reps: int = LIMIT_REPS,
    level: float = 0.95,
    seed: int = 0,
    grid: bool = True,
) -> Coverage:
    """Coverage of :func:`.published.paper_limit`'s interval for one released curve.

    Each simulated curve is ``res.predict(D) + noise`` (:func:`residual_noise`), refitted
    with the law (its full start grid, as :func:`.published.refit`), and given
    :func:`.published.paper_limit`'s interval: the residual block bootstrap with ``reps``
    refits, or, where that interval excludes the point fit, the block bootstrap over
    checkpoints. A simulated curve whose refit fails counts as not covered.

    Parameters
    ----------
    res
        The curve's point fit (the generator's mean; truth: its ``A0``).
    D, resid
        Tokens (billions) and residuals of the point fit, ``(n,)`` each, token order.
    grid
        Refit each simulated curve from the law's full start grid (False: from the
        generator's parameters only, faster, and if anything kinder to the interval).
    """
    D = np.asarray(D, float)
    mu = res.predict(D)
    truth = float(res.params["A0"])
    blocks = pub.block_groups(D.size, pub.block_length(D.size))
    rng = np.random.default_rng([seed, 104729])
    starts = {k: [v] for k, v in res.params.items()}
    hits = {}
    for gen in GENERATORS:
        e = residual_noise(resid, gen, sims=sims, rng=rng)
        h = np.zeros(sims, bool)
        for s in range(sims):
            y = mu + e[s]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    r = fit(res.law, D, y, starts=None if grid else starts)
                    _, est = pub.residual_block_bootstrap(
                        r, D, y, reps=reps, level=level, seed=seed + s
                    )
                    ci = est.ci
                    if ci is None or not ci[0] <= r.params["A0"] <= ci[1]:
                        rb = fit(res.law, D, y, groups=blocks, bootstrap=reps, seed=seed + s)
                        ci = rb.ci["A0"] if rb.ci else None
            except (InputError, ValueError):
                continue
            h[s] = ci is not None and ci[0] <= truth <= ci[1]
        hits[gen] = h
    cov = from_hits(hits, D.size)
    how = f"{reps} refits per simulated curve" + (
        "" if grid else ", each simulated curve refitted from the generator's parameters"
    )
    return dataclasses.replace(cov, how=how)


def _table_path(folder: str | Path | None = None) -> Path:
    return (Path(folder) if folder is not None else data_dir() / "sparsity_laws") / TABLE


def _late_name(act: str, summary: str) -> str:
    what = "trend/late_relative_slope" if summary == "trend" else "scale/relative_slope"
    return f"paper/{act}/{what}/test_half"


def build_table(
    parts: Sequence[str] = PARTS,
    *,
    late_sims: int = LATE_SIMS,
    limit_sims: int = LIMIT_SIMS,
    reps: int = LIMIT_REPS,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, dict]:
    """Rows by finding name of the ``published`` variant (``parts``; ``"relu/0.1b"`` names
    one curve's limit): ``"late"``, :func:`late_coverage`
    of the test half's four deciding summaries (``late_sims`` sets per generator, 500
    block resamples each); ``"silu"`` / ``"relu"``, :func:`limit_coverage` of every curve
    whose point fit puts ``A0`` inside its bounds (``limit_sims`` per generator, ``reps``
    refits; ReLU's simulated curves are refitted from the generator's parameters instead
    of the full start grid, 3-5 s a fit there, and the row says so)."""
    from scalinglab.studies.sparsity import trends as strd

    curves = pub.load_curves()
    gens = curve_generators(curves)
    rows: dict[str, dict] = {}
    for act in ("relu", "silu"):
        if "late" not in parts:
            break
        _, test = strd.calibration_halves(curves[curves["activation"] == act]["model"].unique())
        for summary in ("trend", "scale"):
            cov = late_coverage(
                curves,
                activation=act,
                models=test,
                summary=summary,
                sims=late_sims,
                reps=500,
                level=level,
                seed=seed,
                generators=gens,
            )
            rows[_late_name(act, summary)] = asdict(cov)
            print(_late_name(act, summary), cov, flush=True)
    for (act, model), (res, resid) in gens.items():
        if not {act, f"{act}/{model}"} & set(parts) or not 0.0 < res.params["A0"] < 1.0:
            continue
        D = curves[(curves["activation"] == act) & (curves["model"] == model)]["D"]
        cov = limit_coverage(
            res,
            D.to_numpy(float),
            resid,
            sims=limit_sims,
            reps=reps,
            level=level,
            seed=seed,
            grid=act != "relu",
        )
        rows[f"paper/law/{act}/{model}/A0"] = asdict(cov)
        print(f"{act}/{model}", cov, flush=True)
    return rows


def write_table(
    rows: dict[str, dict], *, sizes: dict[str, int], folder: str | Path | None = None
) -> Path:
    """Merge ``rows`` into the committed table, with its provenance (``sizes``: the
    simulation's sizes and seed)."""
    path = _table_path(folder)
    old = json.loads(path.read_text()) if path.exists() else {"rows": {}}
    old["rows"].update(rows)
    old["provenance"] = {
        "data_sha256": pub.check_provenance(),
        "procedure": "scalinglab.studies.sparsity.coverage_sim.build_table",
        "rebuild": "python -m scalinglab.studies.sparsity.coverage_sim late silu relu",
        **sizes,
    }
    path.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read_table(*, folder: str | Path | None = None) -> dict[str, Coverage]:
    """The committed coverage by finding name (empty when the file is absent); refused
    when it was simulated on other released curves."""
    path = _table_path(folder)
    if not path.exists():
        return {}
    obj = json.loads(path.read_text())
    if obj.get("provenance", {}).get("data_sha256") != pub.check_provenance():
        raise InputError("simulated for other released curves (sha256 differs)", file=path)
    return {k: Coverage(**v) for k, v in obj["rows"].items()}


def with_coverage(name: str, est, table: dict[str, Coverage], *, level: float):
    """``est`` with its method text stating ``table[name]`` (when there, at the table's
    level 0.95 only), else unchanged."""
    cov = table.get(name)
    if cov is None or est.ci is None or not math.isclose(level, 0.95):
        return est
    return est.replace(method=f"{est.method}; {cov.said()}", n=est.n if est.n else cov.n)


if __name__ == "__main__":  # ``python -m ...coverage_sim [late] [silu] [relu]``: ~1 h, 2 cores
    import sys

    parts = tuple(sys.argv[1:]) or PARTS
    sizes = {"late_sims": LATE_SIMS, "limit_sims": LIMIT_SIMS, "reps": LIMIT_REPS, "seed": 0}
    print(f"wrote {write_table(build_table(parts), sizes=sizes)}")
