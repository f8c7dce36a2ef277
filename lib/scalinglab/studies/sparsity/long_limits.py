"""The long designs' limits by the limit rule, per (activation, model).

:func:`group_limits` reads every (activation, model) group of a long frame: the law fit,
the limit by :func:`.limits.decide_limit` (the law's identified ``A0``, else a plateau
shown flat over the model's own last decade, else not identified), its last-decade trend
and held-out loss change. The size design (section 8d,
:func:`.long_findings.long_design`) and the width-depth families (sections 8e-8f,
:func:`.wd_limits.width_depth_limits`) both read their limits through it, so both apply
one rule; :func:`pair_estimate` compares two groups' limits for either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.stats import calibration
from scalinglab.stats.coverage_report import measured_on_data
from scalinglab.studies.sparsity import analysis as sa
from scalinglab.studies.sparsity import limits as slim
from scalinglab.studies.sparsity import run_coverage, seed_means
from scalinglab.studies.sparsity import trends as strd
from scalinglab.studies.sparsity.steps import Named, Step

#: The law each activation's limit comes from.
LAW_OF = sa.LAWS


def group_limits(
    ldf: pd.DataFrame,
    *,
    min_trend: Mapping[str, float],
    reps: int,
    level: float,
    seed: int,
    coverage_sims: int | None = None,
    prefix: str = "long",
) -> Step:
    """Each (activation, model) group's limit by the limit rule, its own last-decade
    trend and held-out loss change.

    Parameters
    ----------
    ldf
        A long frame (:func:`.long_findings.long_frame`): one row per (activation,
        model, seed, checkpoint), with ``looks`` (the looks a model's equivalence test is
        corrected over).
    min_trend
        The minimum trend effect per activation (a fraction of the level per 10x tokens).
    reps, level, seed
        Bootstrap refits of the law, the intervals' level, the seed.
    coverage_sims
        A law limit states the coverage of its group bootstrap simulated on its runs
        (:func:`.run_coverage.group_coverage`: ``coverage_sims`` simulated experiments,
        default ``min(reps, 200)``, of ``min(reps, 200)`` refits each).
    prefix
        The findings' first name part: ``<prefix>/<act>/<model>/A0``,
        ``.../trend/relative_last_decade``, ``.../loss_change_last_decade``.

    Returns
    -------
    Step
        Those findings; ``table`` the law fits (:func:`.analysis.laws_display`);
        ``extra["limits"]`` one row per group (route, ``A0``, trend, reason);
        ``extra["decided"]`` ``{(activation, model): (route, evidence, n_params)}`` of the
        identified groups (evidence: the law's fit, or the per-seed plateau levels);
        ``extra["A0"]`` ``{(activation, model): Estimate}``, every group's limit (one of
        route ``none`` has no value).
    """
    out = Step()
    table, fits = sa.fit_laws(ldf, reps=reps, level=level, seed=seed)
    on_data = seed_coverage(ldf, level=level, seed=seed)
    rule_cov = rule_coverage(ldf, seed=seed, known={level: on_data})
    decided: dict[tuple[str, str], tuple[str, Any, float]] = {}
    limits: dict[tuple[str, str], Estimate] = {}
    rows = []
    by_row = {(r["activation"], r["model"]): r for r in table.to_dict("records")}
    for (act, model), g in ldf.groupby(["activation", "model"], sort=False):
        act, model = str(act), str(model)
        row = by_row.get((act, model), {})
        tpp_end = float(g["tokens_per_param"].max())
        n_seeds = int(g["seed"].nunique())
        late = slim.own_last_decade(g)
        raw = sa.run_slopes(late, x="tokens_per_param")
        trend = None if raw.empty else seed_means.stratified_mean(raw, "slope", level=level)
        res = None
        if isinstance(row.get("error"), str) or not row:
            out.messages.append(f"{act}/{model}: no fit ({row.get('error', 'no usable rows')})")
        else:
            res = fits[(act, model, row["law"])]
        looks = int(g["looks"].max()) if "looks" in g else 1
        why = {"looks_why": str(g["looks_why"].iloc[0])} if "looks_why" in g else {}
        est, route = slim.decide_limit(
            res, g, delta=min_trend[act], trend=trend, level=level, looks=looks, **why
        )
        said = rule_cov.get((act, looks, n_seeds))
        if route != "law" and said is not None:
            est = est.replace(note=f"{est.note}; {said}")
        if route == "plateau" and est.ci is not None:
            est = est.replace(method=f"{est.method}; {on_data[(act, 'level', n_seeds)]}")
        if route == "law" and res is not None and est.ci is not None:
            cov = run_coverage.group_coverage(
                g[g["usable"]],
                res,
                sims=coverage_sims or min(reps, 200),
                reps=min(reps, 200),
                level=level,
                seed=seed,
            )
            # the generic words on a 3-seed mean (LAW_CI) give way to the coverage on these runs
            est = est.replace(method=f"{sa.LAW_CI_BASE}; {cov.said()}", n=cov.n)
        limits[(act, model)] = est
        out.findings.append(
            Named(
                f"{prefix}/{act}/{model}/A0",
                est,
                f"{LAW_OF[act]} limit, model {model} to {tpp_end:.0f} tokens per parameter, "
                f"{n_seeds} seeds; route: {route} (law, plateau over the last decade, or none)",
                unit="activation ratio",
            )
        )
        n_params = float(g["n_params"].iloc[0])
        levels = slim.plateau_levels(g).to_numpy(float)  # per seed, its last decade's mean
        if route == "law":
            decided[(act, model)] = (route, res, n_params)
        elif route == "plateau":
            decided[(act, model)] = (route, levels, n_params)
        try:
            own = slim.last_decade_trend(g, level=level)
        except ValueError as err:
            out.messages.append(f"{prefix}/{act}/{model}: no last-decade trend ({err})")
            own = None
        if own is not None and own.ci is not None and (act, "trend", n_seeds) in on_data:
            own = own.replace(method=f"{own.method}; {on_data[(act, 'trend', n_seeds)]}")
        window = f"{float(late['tokens_per_param'].min()):.0f}-{tpp_end:.0f} tokens per parameter"
        if own is not None:
            out.findings.append(
                Named(
                    f"{prefix}/{act}/{model}/trend/relative_last_decade",
                    own,
                    f"{act}, model {model}: slope over its own last decade ({window}) over "
                    "the run's mean ratio there",
                    unit="fraction of the level per 10x tokens",
                )
            )
        loss = loss_change(late, level=level)
        if loss is not None:
            out.findings.append(
                Named(
                    f"{prefix}/{act}/{model}/loss_change_last_decade",
                    loss,
                    f"{act}, model {model}: held-out loss at {tpp_end:.0f} minus at "
                    f"{float(late['tokens_per_param'].min()):.0f} tokens per parameter "
                    "(negative: still learning; positive: repetition of the corpus hurts)",
                    unit="nats/token",
                )
            )
        mean_level = calibration.mean_estimate(levels, level=level) if levels.size > 1 else None
        if mean_level is not None:
            out.findings.append(
                Named(
                    f"{prefix}/{act}/{model}/last_decade_level",
                    mean_level,
                    f"{act}, model {model}: mean ratio over its own last decade ({window}), "
                    "a level that is the limit only where the limit rule reads a plateau",
                    unit="activation ratio",
                )
            )
        rows.append(
            {
                "activation": act,
                "model": model,
                "tokens_per_param": round(tpp_end),
                "seeds": n_seeds,
                "route": route,
                "A0": str(est) if route != "none" else "not identified",
                "last-decade mean": "" if mean_level is None else str(mean_level),
                "last-decade trend (95% t)": "" if own is None else str(own),
                "min effect": min_trend[act],
                "why": est.note,
            }
        )
    out.table = sa.laws_display(table)
    out.extra["limits"] = pd.DataFrame(rows)
    out.extra["decided"] = decided
    out.extra["A0"] = limits
    return out


#: Simulated data sets per (activation, quantity, number of seeds) of :func:`seed_coverage`.
SEED_COVERAGE_SIMS = 2000


def seed_coverage(
    ldf: pd.DataFrame,
    *,
    level: float,
    seed: int,
    sims: int = SEED_COVERAGE_SIMS,
    quantities: Sequence[str] = ("trend", "level"),
) -> dict[tuple[str, str, int], str]:
    """The coverage of the Student-t interval of a seed mean, simulated on the long runs'
    own per-seed values, for each activation, quantity and number of seeds a group has.

    The quantities are the two a limit and a trend claim read through a t interval over
    seeds: each run's relative trend over its model's own last decade
    (:func:`.trends.relative_slopes`, ``"trend"``) and its mean ratio there
    (:func:`.limits.plateau_levels`, ``"level"``). The generator draws ``n`` values with
    replacement from every model's per-seed values of that activation, centred within
    model (:func:`.seed_means.coverage_at_seeds`): pooling models of different spread
    gives a heavier-tailed generator than any one model's, so the reading is conservative.
    Each quantity's simulation starts from ``seed`` on its own, so asking for one
    quantity (``quantities``) gives the same words as asking for both.

    Returns
    -------
    dict
        ``{(activation, "trend" | "level", n): words}``, the words of
        :func:`~scalinglab.stats.coverage_report.measured_on_data` with the generator named,
        appended to the interval's method so the ledger states this coverage beside the
        generic table's.
    """
    out: dict[tuple[str, str, int], str] = {}
    for act, a in ldf.groupby("activation", sort=False):
        rows_t, rows_l = [], []
        pool = ", ".join(map(str, a["model"].unique()))
        for model, g in a.groupby("model", sort=False):
            late = slim.own_last_decade(g)
            try:
                rel = strd.relative_slopes(late, x="tokens_per_param")
            except ValueError:
                continue
            rows_t.append(rel[["model", "seed", "relative"]])
            lv = slim.plateau_levels(g)
            rows_l.append(pd.DataFrame({"model": model, "seed": lv.index, "level": lv.to_numpy()}))
        ns = sorted({int(n) for n in a.groupby("model")["seed"].nunique() if n >= 2})
        for what, rows, col in (("trend", rows_t, "relative"), ("level", rows_l, "level")):
            if what not in quantities or not rows or not ns:
                continue
            per_run = pd.concat(rows, ignore_index=True)
            tab = seed_means.coverage_at_seeds(
                per_run, col, ns=ns, sims=sims, level=level, resamples=100, seed=seed
            )
            for r in tab[tab["method"] == "Student t"].to_dict("records"):
                words = measured_on_data(float(r["coverage"]), int(r["n"]), se=float(r["se"]))
                out[(str(act), what, int(r["n"]))] = (
                    f"{words} (Student t; generator: the per-seed {what}s of {act} models "
                    f"{pool}, {len(per_run)} values centred within model)"
                )
    return out


def rule_coverage(
    ldf: pd.DataFrame,
    *,
    seed: int,
    known: Mapping[float, Mapping[tuple[str, str, int], str]] | None = None,
) -> dict[tuple[str, int, int], str]:
    """The coverage of the limit rule's own trend interval (the t interval over seeds at
    :data:`.limits.PLATEAU_TREND_LEVEL`, Bonferroni over a group's looks), simulated on
    the runs' per-seed trends as :func:`seed_coverage` does at the report's level.
    ``known`` maps a level to :func:`seed_coverage`'s words already simulated at it (the
    report's level): a rule level found there is read, not simulated again. Only the
    trend is simulated at the rule's other levels.

    Returns
    -------
    dict
        ``{(activation, looks, n): words}`` for every looks count in ``ldf["looks"]``
        (1 when absent), e.g. ``"the rule's 90% t interval of the trend: coverage 0.887
        at n = 5 simulated on these data (se 0.007; ...)"``, appended to the note of a
        limit the rule reads (plateau or none), so a pass or a failure by a small margin
        can be weighed against how well the interval covers.
    """
    looks = sorted({int(v) for v in ldf["looks"].unique()}) if "looks" in ldf else [1]
    out: dict[tuple[str, int, int], str] = {}
    for k in looks:
        rule_level = 1.0 - (1.0 - slim.PLATEAU_TREND_LEVEL) / k
        said = next((v for lv, v in (known or {}).items() if np.isclose(lv, rule_level)), None)
        if said is None:
            said = seed_coverage(ldf, level=rule_level, seed=seed, quantities=("trend",))
        for (act, what, n), words in said.items():
            if what == "trend":
                out[(act, k, n)] = f"the rule's {rule_level:.0%} t interval of the trend: {words}"
    return out


def pair_estimate(
    a: tuple[str, Any, float],
    b: tuple[str, Any, float],
    rows: tuple[pd.DataFrame, pd.DataFrame],
    *,
    level: float,
    seed: int,
    coverage_sims: int = 0,
    coverage_reps: int = 200,
) -> Estimate:
    """The change of an identified limit between two models per 10x ``x``
    (:func:`.limits.size_pair_slope`, each side ``(route, evidence, x)`` by its route),
    with its interval's coverage simulated on the two models' own runs where the routes
    match: two law limits by :func:`.run_coverage.pair_coverage` (``coverage_reps``
    refits per model, ``rows`` the two models' usable rows), two plateaus by
    :func:`.run_coverage.plateau_pair_coverage`; ``coverage_sims`` simulated experiments
    (0: none)."""
    est = slim.size_pair_slope(a, b, level=level, seed=seed)
    if not coverage_sims or est.ci is None or a[0] != b[0]:
        return est
    if a[0] == "law":
        cov = run_coverage.pair_coverage(
            (rows[0], a[1], a[2]),
            (rows[1], b[1], b[2]),
            sims=coverage_sims,
            reps=coverage_reps,
            level=level,
            seed=seed,
        )
    else:
        cov = run_coverage.plateau_pair_coverage(
            (a[1], a[2]), (b[1], b[2]), sims=10 * coverage_sims, level=level, seed=seed
        )
    return est.replace(method=f"{est.method}; {cov.said()}", n=cov.n)


def loss_change(late: pd.DataFrame, *, level: float) -> Estimate | None:
    """Per seed, the held-out loss at the last checkpoint minus at the first of the
    window; their mean with a Student-t interval (None with fewer than 2 seeds)."""
    diffs = []
    for _, r in late.groupby("seed"):
        r = r.sort_values("tokens")
        if len(r) >= 2:
            diffs.append(float(r["loss"].iloc[-1] - r["loss"].iloc[0]))
    if len(diffs) < 2:
        return None
    return calibration.mean_estimate(np.array(diffs), level=level)


__all__ = ["group_limits", "pair_estimate", "loss_change", "rule_coverage", "seed_coverage"]
