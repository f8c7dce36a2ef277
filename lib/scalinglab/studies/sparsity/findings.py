"""The sparsity study's results as named findings, one function per step of the report.

Each function takes what a step of ``notebooks/sparsity_laws.py`` computed from (the
curves, the fits, the committed timings) and returns a :class:`~.steps.Step`: the table
the report shows, the :class:`~.steps.Named` findings (each an
:class:`~scalinglab.estimate.Estimate` with its level and method) and what later steps
need; the notebook records them with :func:`~.steps.record_all`. This module holds the
steps on this study's main sweep (sections 2-6), the coverage check, and the claims
file's values, and re-exports the steps of :mod:`.kernel_findings`,
:mod:`.design_findings`, :mod:`.long_findings`, :mod:`.wd_limits` and :mod:`.paper_findings`, so
the notebook calls them all as
``findings.<step>``.

Intervals over seeds are Student t (:mod:`.seed_means`, which covers at 3 seeds); the
law fits keep the fitting engine's group bootstrap with its coverage stated
(:data:`.analysis.LAW_CI`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.studies.sparsity import analysis as sa
from scalinglab.studies.sparsity import seed_means
from scalinglab.studies.sparsity.design_findings import horizon, matched, ratio_frames, ratios
from scalinglab.studies.sparsity.kernel_findings import (
    kernel_live,
    kernel_masks,
    kernel_offline,
    kernel_pivot,
    live_shape,
    live_summary,
    mask_table,
    masks_summary,
    time_live,
    time_masks,
)
from scalinglab.studies.sparsity.long_findings import (
    PASSES_CONFOUND,
    block_checks,
    end_passes,
    horizons_text,
    long_design,
    long_frame,
    long_provenance,
    params_text,
    repetition_confounded,
    sizes_text,
)
from scalinglab.studies.sparsity.paper_findings import (
    calibration,
    min_effects,
    paper_late,
    paper_laws,
)
from scalinglab.studies.sparsity.steps import PAPER_SIGN, Named, Step, record_all
from scalinglab.studies.sparsity.wd_limits import (
    wd16_runs_text,
    wd_claim_values,
    width_depth_frame,
    width_depth_limits,
)


def trends(df: pd.DataFrame, *, level: float) -> Step:
    """Section 2: the sign of the trend with training tokens, per run then over models.

    ``extra["by_model"]``: ``{(activation, model): Estimate}`` (the trend a law's limit is
    checked against).
    """
    out = Step()
    slopes = sa.run_slopes(df)
    by_model: dict[tuple[str, str], Estimate] = {}
    for act, g in slopes.groupby("activation", sort=False):
        out.findings.append(
            Named(
                f"trend/{act}/slope_per_decade",
                seed_means.stratified_mean(g, "slope", level=level),
                f"{act}: sign of the activation-ratio trend with training tokens "
                f"(paper: {PAPER_SIGN.get(str(act), 'none')})",
                unit="activation ratio per 10x tokens",
                headline=True,
            )
        )
        for model, gm in g.groupby("model", sort=False):
            by_model[(str(act), str(model))] = seed_means.stratified_mean(gm, "slope", level=level)
    out.table = seed_means.group_means(slopes, "slope", by=["activation", "model"], level=level)
    out.extra.update(by_model=by_model, slopes=slopes)
    return out


def laws(
    df: pd.DataFrame,
    *,
    trends_by_model: Mapping[tuple[str, str], Estimate],
    user: bool,
    ours: bool,
    reps: int,
    level: float,
    seed: int,
) -> Step:
    """Section 2: the laws per model, their limits with identification.

    Parameters
    ----------
    user
        The user's curves without an ``activation`` column: both laws on every group,
        named ``law/<law>/A0``.
    ours
        This study's sweep (only model ``m``'s identified limits are headlines).
    """
    out = Step()
    user_laws = list(sa.LAWS.values()) if user else None
    table, fits = sa.fit_laws(
        df, by=["activation", "model"], laws=user_laws, reps=reps, level=level, seed=seed
    )
    for row in table.to_dict("records"):
        if isinstance(row.get("error"), str):
            out.messages.append(
                f"{row['activation']}/{row['model']}/{row['law']}: no fit ({row['error']})"
            )
            continue
        res = fits[(row["activation"], row["model"], row["law"])]
        est = sa.law_limit(res, trend=trends_by_model.get((row["activation"], row["model"])))
        out.findings.append(
            Named(
                f"law/{row['law']}/A0" if user else f"law/{row['activation']}/{row['model']}/A0",
                est,
                f"{row['law']} limit activation ratio, {row['n_runs']} runs"
                + (f" ({row['warnings']})" if row["warnings"] else ""),
                headline=(not ours or row["model"] == "m") and est.identified,
            )
        )
    out.table = sa.laws_display(table)
    out.extra["fits"] = fits
    return out


def width_depth(final: pd.DataFrame, *, ppl_budget: float, level: float) -> Step:
    """Section 3: the last-checkpoint ratio (and loss) against width/depth at about one
    parameter count; ``table``: seed means per shape."""
    out = Step()
    wd = final[final["in_width_depth"]]
    summary = seed_means.group_means(
        wd, "activation_ratio", by=["activation", "model"], level=level
    )
    out.table = summary.merge(
        wd.groupby("model")[["width_depth_ratio", "n_params"]].first(), on="model"
    ).sort_values(["activation", "width_depth_ratio"])
    for act, g in wd.groupby("activation", sort=False):
        out.findings += [
            Named(
                f"width_depth/{act}/slope_per_decade",
                seed_means.slope_vs_log(g, "activation_ratio", "width_depth_ratio", level=level),
                f"{act}: final PPL-{ppl_budget:g}% activation ratio vs width/depth at fixed "
                "parameters (paper: positive below a bottleneck)",
                unit="activation ratio per 10x width/depth",
                headline=act == "relu",
            ),
            Named(
                f"width_depth/{act}/loss_slope_per_decade",
                seed_means.slope_vs_log(g, "loss", "width_depth_ratio", level=level),
                f"{act}: final held-out loss vs width/depth (the cost of depth)",
                unit="nats/token per 10x width/depth",
            ),
        ]
    return out


def size(final: pd.DataFrame, *, level: float) -> Step:
    """Section 4: the last-checkpoint ratio against parameters at width/depth 16."""
    out = Step()
    sz = final[final["in_size_sweep"]]
    out.table = seed_means.group_means(
        sz, "activation_ratio", by=["activation", "model"], level=level
    ).merge(sz.groupby("model")["n_params"].first(), on="model")
    for act, g in sz.groupby("activation", sort=False):
        out.findings.append(
            Named(
                f"size/{act}/slope_per_decade",
                seed_means.slope_vs_log(g, "activation_ratio", "n_params", level=level),
                f"{act}: final activation ratio vs non-embedding parameters "
                "(paper: weak dependence)",
                unit="activation ratio per 10x parameters",
                headline=act == "relu",
            )
        )
    return out


def relu_vs_silu(final: pd.DataFrame, *, level: float) -> Step:
    """Section 5: final loss and ratio, ReLU minus SiLU, paired by model and seed."""
    loss, pairs = sa.paired_difference(final, "loss", level=level)
    ratio, _ = sa.paired_difference(final, "activation_ratio", level=level)
    return Step(
        findings=[
            Named(
                "loss/relu_minus_silu",
                loss,
                "final held-out loss, ReLU minus SiLU (paper: comparable)",
                unit="nats/token",
                headline=True,
            ),
            Named(
                "ratio/relu_minus_silu",
                ratio,
                "final activation ratio, ReLU minus SiLU (paper: ReLU far sparser, 6-8% vs 38-41%)",
            ),
        ],
        table=pairs.groupby("model")[["relu", "silu", "diff"]].mean(),
    )


def baselines(ds: xr.Dataset, *, ppl_budget: float, level: float) -> Step:
    """Section 6: the ratio each sparsity method reaches under the same budget."""
    base = (
        ds["final_ratio"]
        .where(ds["status"] == "ok")
        .to_dataframe()
        .reset_index()
        .dropna(subset=["final_ratio"])
    )
    methods = seed_means.group_means(
        base, "final_ratio", by=["activation", "sparsity_method", "model"], level=level
    )
    out = Step(
        table=methods.pivot_table(
            index=["activation", "model"], columns="sparsity_method", values="mean"
        )
    )
    for (act, method), g in base.groupby(["activation", "sparsity_method"], sort=False):
        out.findings.append(
            Named(
                f"method/{act}/{method}",
                seed_means.stratified_mean(g, "final_ratio", level=level),
                f"{act}: final PPL-{ppl_budget:g}% activation ratio with {method}, mean over "
                "models",
            )
        )
    return out


def coverage(slopes: pd.DataFrame, *, level: float, seed: int, sims: int = 2000) -> Step:
    """How often the seed-mean intervals cover at the study's numbers of seeds (3 and 5):
    Student t against the percentile bootstrap, on the per-run ReLU trend slopes of the
    main sweep resampled within models (:func:`.seed_means.coverage_at_seeds`)."""
    relu = slopes[slopes["activation"] == "relu"]
    tab = seed_means.coverage_at_seeds(relu, "slope", level=level, seed=seed, sims=sims)
    out = Step(table=tab)
    for r in tab.to_dict("records"):
        key = "student_t" if r["method"] == "Student t" else "percentile"
        out.findings.append(
            Named(
                f"coverage/{key}/n{r['n']}",
                Estimate(
                    float(r["coverage"]),
                    method=f"{r['sims']} simulated data sets of {r['n']} seeds drawn from the "
                    f"main sweep's per-run ReLU trends (centred within models); Monte Carlo "
                    f"standard error {r['se']:.3f}",
                ),
                f"simulated coverage of a nominal {100 * level:.0f}% {r['method']} interval of "
                f"a mean over {r['n']} seeds",
                unit="share",
            )
        )
    return out


def scale_regime(pairs: list[str], long: pd.DataFrame | None, sizes: str, horizons: str) -> str:
    """A size claim's regime: ``proxy`` when a size pair it rests on is confounded by
    repetition (:func:`.long_findings.repetition_confounded`: one size passed the corpus
    more than :data:`.long_findings.PASSES_CONFOUND` times as often as the other, so
    data repetition moves with size), else ``outside`` the paper's sizes."""
    passes = end_passes(long) if long is not None and not long.empty else {}
    hit = [p for p in pairs if repetition_confounded(p, passes)]
    if hit:
        said = "; ".join(
            f"{p}: {passes[p.split('-')[0]]:.1f} and {passes[p.split('-')[1]]:.1f} passes"
            for p in hit
        )
        return (
            "proxy: the size pairs with identified limits pass the training corpus a very "
            f"different number of times ({said}; more than "
            f"{PASSES_CONFOUND:g}x apart), so repetition moves with size and the pair "
            "reads it as much as size; " + f"{sizes}, {horizons}"
        )
    return f"outside: {sizes}, {horizons}, three or more orders of magnitude below the paper's 0.1B-2.4B"


def sweep_claim_values(
    cal: Step,
    kernel: Step,
    *,
    long: pd.DataFrame | None = None,
    wd: pd.DataFrame | None = None,
    wd16: pd.DataFrame | None = None,
    wd16_runs: Mapping[str, tuple[int, int]] | None = None,
    compute_class: str = "small",
    recorded: Iterable[str] | Mapping[str, Mapping] | None = None,
) -> dict[str, Any]:
    """What the claims file's ``sweep`` design names: the calibration values, the
    longest runs there are (the long design, else the horizon probe), each long-design
    size's horizon and seeds (``horizons``: from its runs ``long``, else from the design's
    configs), the sizes read (``sizes``, ``sizes_text``, ``trend_params``), the size pairs
    whose identified limits were compared (``relu_pairs``, ``silu_pairs``:
    :func:`~scalinglab.studies.sparsity.long_findings.size_comparisons`' findings, or
    ``["none"]``, which names no finding, so the size claim is untested; ``*_pairs_text``
    the same in words; ``*_scale_regime``, the size claim's regime, :func:`scale_regime`;
    ``*_trends``, the trend findings a trend claim is decided on: each long-design size's
    own last-decade trend, else the horizon probe's)
    and the committed
    kernel timings' deciding findings (a missing name leaves the claim untested).

    ``wd``, ``wd16``, ``wd16_runs``: the width-depth families' frames at 8000
    (:func:`.wd_limits.width_depth_frame`) and 16000, and the runs in of the one at 16000,
    for the claim's words and deciding finding (:func:`.wd_limits.wd_claim_values`).

    ``recorded``: the finding names recorded so far, or ``{name: finding dict}`` (default:
    this process's, :func:`scalinglab.record.findings`)."""
    from scalinglab.record import findings
    from scalinglab.studies.sparsity.config import horizon_config
    from scalinglab.studies.sparsity.long_config import long_configs

    if recorded is None:
        notes = {f.name: f.note or "" for f in findings()}
    elif isinstance(recorded, Mapping):
        notes = {str(k): str(v.get("note") or "") for k, v in recorded.items()}
    else:
        notes = {str(k): "" for k in recorded}
    have = set(notes)
    trend = "long" if "long/relu/trend/relative_last_decade" in have else "horizon"
    planned, params = {}, {}
    for cfg in long_configs(compute_class).values():
        (spec,) = cfg.models
        n = cfg.model_config(spec, "relu").n_params()
        planned[spec.name] = (cfg.tokens / n, len(cfg.seeds))
        params[spec.name] = float(n)
    horizons = horizons_text(long, planned, design=planned)
    if long is not None and not long.empty:
        sizes = list(long.groupby("model")["n_params"].first().sort_values().index)
        read = long.groupby("model")["n_params"].first()
    else:
        sizes = sorted(params, key=params.__getitem__)
        read = pd.Series(params)
    if trend == "long":
        trend_params = f"{params_text(read.min())}-{params_text(read.max())}"
    else:
        h = horizon_config(compute_class)
        trend_params = params_text(h.model_config(h.models[0], "relu").n_params())
    pairs: dict[str, Any] = {}
    for act in ("relu", "silu"):
        head, tail = f"long/{act}/scale/", "/A0_relative_slope"
        found = [n[len(head) : -len(tail)] for n in have if n.startswith(head) and n.endswith(tail)]
        order = {m: k for k, m in enumerate(sizes)}
        found.sort(key=lambda p: tuple(order.get(m, len(order)) for m in p.split("-")))
        pairs[f"{act}_pairs"] = found or ["none"]
        pairs[f"{act}_pairs_text"] = ", ".join(found) if found else "none"
        pairs[f"{act}_scale_regime"] = scale_regime(found, long, sizes_text(long, params), horizons)
        pairs[f"{act}_trends"] = (
            [f"long/{act}/{m}/trend/relative_last_decade" for m in sizes]
            if trend == "long"
            else [f"horizon/{act}/trend/relative_last_decade"]
        )
    return {
        **cal.extra["values"],
        **wd_claim_values(compute_class, notes, wd, wd16=wd16, wd16_runs=wd16_runs),
        "trend": trend,
        "trend_runs": "our longest runs ("
        + (
            f"the long design: {horizons}; each size over its own last decade, decided at "
            "every size, Holm over the sizes"
            if trend == "long"
            else "horizon probe, model s"
        )
        + ")",
        "trend_params": trend_params,
        "horizons": horizons,
        "sizes": [str(m) for m in sizes],
        "sizes_text": sizes_text(long, params),
        **pairs,
        "kernel": kernel.extra.get("deciding") or ["kernel/offline/none"],
    }


def paper_claim_values(cal: Step, laws_step: Step) -> dict[str, Any]:
    """What the claims file's ``paper`` design names: the calibration values and the
    released sizes per activation."""
    ptab = laws_step.extra["ptab"]
    return {
        **cal.extra["values"],
        **{
            f"{act}_models": list(ptab[ptab["activation"] == act]["model"])
            for act in ("relu", "silu")
        },
    }


__all__ = [
    "Named",
    "Step",
    "baselines",
    "calibration",
    "coverage",
    "horizon",
    "horizons_text",
    "kernel_live",
    "kernel_masks",
    "kernel_offline",
    "kernel_pivot",
    "live_shape",
    "time_live",
    "time_masks",
    "live_summary",
    "long_frame",
    "block_checks",
    "long_provenance",
    "min_effects",
    "mask_table",
    "masks_summary",
    "paper_claim_values",
    "sweep_claim_values",
    "laws",
    "long_design",
    "matched",
    "paper_late",
    "paper_laws",
    "ratio_frames",
    "ratios",
    "record_all",
    "relu_vs_silu",
    "size",
    "trends",
    "width_depth",
    "wd16_runs_text",
    "wd_claim_values",
    "width_depth_frame",
    "width_depth_limits",
]
