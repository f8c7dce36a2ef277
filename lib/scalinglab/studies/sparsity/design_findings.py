"""Findings of the sparsity study's probe and matched designs: the horizon probe (section
8), the matched sizes and second width-depth family (8b) and both ratios per design (8c).
The long size design's findings (8d) are in :mod:`.long_findings`. Intervals over seeds
are Student t (:mod:`.seed_means`); law limits come from :func:`.analysis.law_limit`.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.studies.sparsity import analysis as sa
from scalinglab.studies.sparsity import matched as sm
from scalinglab.studies.sparsity import seed_means
from scalinglab.studies.sparsity import trends as strd
from scalinglab.studies.sparsity.steps import PAPER_SIGN, Named, Step


def horizon(hdf: pd.DataFrame, *, model: str, reps: int, level: float, seed: int) -> Step:
    """Section 8: the smallest model trained 16x longer; trends over the whole run and its
    last decade, the relative last-decade trend, and the laws' limits."""
    out = Step()
    t_end = float(hdf["tokens"].max())
    windows = {"whole": 0.0, "last_decade": t_end / 10}
    last: dict[str, Estimate] = {}
    for window, min_x in windows.items():
        hs = sa.run_slopes(hdf, min_x=min_x)
        for act, g in hs.groupby("activation", sort=False):
            est = seed_means.stratified_mean(g, "slope", level=level)
            if window == "last_decade":
                last[str(act)] = est
            out.findings.append(
                Named(
                    f"horizon/{act}/slope_per_decade/{window}",
                    est,
                    f"{act}, model {model}, {window.replace('_', ' ')} of a "
                    f"{t_end / 1e6:.0f}M-token run (paper: {PAPER_SIGN.get(str(act))})",
                    unit="activation ratio per 10x tokens",
                    headline=act == "relu" and window == "last_decade",
                )
            )
    for act, g in hdf.groupby("activation", sort=False):
        try:
            est = strd.relative_trend(g, min_x=windows["last_decade"], level=level)
        except ValueError as err:
            out.messages.append(f"horizon/{act}: no last-decade trend ({err})")
            continue
        out.findings.append(
            Named(
                f"horizon/{act}/trend/relative_last_decade",
                est,
                f"{act}, model {model}: last-decade slope over the run's mean ratio there",
                unit="fraction of the level per 10x tokens",
            )
        )
    table, fits = sa.fit_laws(hdf, reps=reps, level=level, seed=seed)
    for row in table.to_dict("records"):
        if isinstance(row.get("error"), str):
            continue
        res = fits[(row["activation"], row["model"], row["law"])]
        out.findings.append(
            Named(
                f"horizon/{row['activation']}/A0",
                sa.law_limit(res, trend=last.get(row["activation"])),
                f"{row['law']} limit on the long run, {row['n_runs']} runs"
                + (f" ({row['warnings']})" if row["warnings"] else ""),
            )
        )
    out.table = sa.laws_display(table)
    out.extra["final"] = (
        hdf[hdf["tokens"] == t_end].groupby("activation")[["activation_ratio", "loss"]].mean()
    )
    return out


def matched(mdf: pd.DataFrame, main: pd.DataFrame, *, level: float) -> Step:
    """Section 8b: sizes at matched tokens per parameter; a second width-depth family."""
    out = Step()
    msz = mdf[mdf["family"] == "size"]
    mfinal = sa.final_values(msz)
    out.table = seed_means.group_means(
        mfinal, "activation_ratio", by=["activation", "model"], level=level
    ).merge(mfinal.groupby("model")["n_params"].first(), on="model")
    tpp_end = float(msz.groupby("run")["tokens_per_param"].max().mean())
    for act, g in mfinal.groupby("activation", sort=False):
        out.findings += [
            Named(
                f"matched/{act}/scale/slope_per_decade",
                sm.scale_slope(g, level=level),
                f"{act}: activation ratio at {tpp_end:.0f} tokens per parameter (every size) "
                "vs non-embedding parameters",
                unit="activation ratio per 10x parameters",
            ),
            Named(
                f"matched/{act}/scale/relative_slope",
                sm.scale_slope(g, relative=True, level=level),
                f"{act}: the same slope relative to the mean ratio (paper: weak dependence; "
                "the published variant applies the same criterion)",
                unit="fraction of the level per 10x parameters",
                headline=True,
            ),
        ]
    wdt = sm.width_depth_table(
        {"main (77-83k)": main, "second (25-28k)": mdf[mdf["family"] == "width_depth"]}, level=level
    )
    for row in wdt[wdt["family"] == "second (25-28k)"].to_dict("records"):
        out.findings.append(
            Named(
                f"width_depth_25k/{row['activation']}/slope_per_decade",
                row["estimate"],
                f"{row['activation']}: final activation ratio vs width/depth at "
                f"{row['params_lo'] / 1e3:.0f}-{row['params_hi'] / 1e3:.0f}k parameters, "
                f"{row['n_shapes']} shapes, {row['tokens_per_param']:.0f} tokens per parameter "
                "(paper: positive below a bottleneck)",
                unit="activation ratio per 10x width/depth",
                headline=row["activation"] == "relu",
            )
        )
    out.extra["width_depth"] = wdt.assign(estimate=wdt["estimate"].map(str))
    return out


def ratio_frames(
    main: pd.DataFrame | None,
    *,
    horizon: pd.DataFrame | None,
    matched: pd.DataFrame | None,
    long: pd.DataFrame | None,
) -> dict[str, pd.DataFrame]:
    """The designs whose two ratios section 8c shows, in order: the main sweep's size
    family, the horizon probe, the matched sizes and the long design (those that ran)."""
    frames = {
        "main": None if main is None else main[main["in_size_sweep"]],
        "horizon": horizon,
        "matched": None if matched is None else matched[matched["family"] == "size"],
        "long": long,
    }
    return {k: v for k, v in frames.items() if v is not None}


def ratios(frames: Mapping[str, pd.DataFrame], *, level: float) -> Step:
    """Section 8c: both ratios per design and size; ``extra["both"]``: their seed means
    by design (:func:`.trends.both_ratios`)."""
    out = Step(extra={"both": {}})
    for design, frame in frames.items():
        out.extra["both"][design] = strd.both_ratios(frame)
        for r in strd.metric_trends(frame, level=level).to_dict("records"):
            metric = "nonzero" if r["metric"].startswith("nonzero") else "ppl1"
            if r["activation"] == "silu" and metric == "nonzero":
                continue  # no exact zeros: the nonzero ratio is 1 at every checkpoint
            out.findings.append(
                Named(
                    f"ratios/{design}/{r['activation']}/{r['model']}/{metric}/slope_per_decade",
                    r["estimate"],
                    f"{r['metric']}, {design} design, model {r['model']} ({r['activation']}): "
                    f"{r['start']:.3f} at the first usable checkpoint, {r['end']:.3f} at the "
                    "last",
                    unit="ratio per 10x tokens",
                )
            )
    return out


__all__ = ["horizon", "matched", "ratio_frames", "ratios"]
