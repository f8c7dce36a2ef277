"""Both ratios and trends with a minimum size.

- :func:`both_ratios`: per model, activation and checkpoint, the PPL-p% activation
  ratio (the paper's metric) beside the **nonzero ratio** (the fraction of FFN units with
  ``h_i != 0``, ``natural_ratio``), seed means with their spread;
- :func:`metric_trends`: per model and activation, the slope of each ratio per decade of
  tokens (and relative to its level), with a t interval over seeds;
  :func:`relative_slopes` and :func:`relative_trend` the same per run and pooled;
- :func:`calibration_halves` and :func:`min_trend_effect`: a decreasing or increasing
  claim needs an effect of a stated minimum size, taken from *one half* of the paper's
  released curves (every other size), so the other half can test the rule without having
  set it; likewise :func:`scale_tolerance` for "weak dependence on size".

The paper's laws are stated for the PPL-1% activation ratio (its Section 3 defines
"activation sparsity" through PPL-p% sparsity, because for SiLU no unit is exactly zero);
the nonzero ratio is what a ReLU kernel can skip for free, and the two can move in
opposite directions. The limit rule and limits compared across sizes are in
:mod:`.limits`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.studies.sparsity.analysis import run_slopes
from scalinglab.studies.sparsity.seed_means import stratified_mean

METRICS = {"activation_ratio": "PPL-1% ratio", "natural_ratio": "nonzero ratio"}


def both_ratios(curves: pd.DataFrame) -> pd.DataFrame:
    """Seed means of both ratios at every checkpoint of every model and activation.

    Parameters
    ----------
    curves
        :func:`~scalinglab.studies.sparsity.analysis.curves_frame` rows (any design).

    Returns
    -------
    pandas.DataFrame
        One row per (activation, model, tokens): ``tokens_per_param``, ``n_seeds``,
        ``ppl1_ratio``, ``ppl1_sd``, ``nonzero_ratio``, ``nonzero_sd`` (sd over seeds),
        ``loss``, ``usable`` (every seed's FFN useful there).
    """
    g = curves.groupby(["activation", "model", "tokens"], sort=False)
    out = g.agg(
        tokens_per_param=("tokens_per_param", "first"),
        n_seeds=("seed", "nunique"),
        ppl1_ratio=("activation_ratio", "mean"),
        ppl1_sd=("activation_ratio", "std"),
        nonzero_ratio=("natural_ratio", "mean"),
        nonzero_sd=("natural_ratio", "std"),
        loss=("loss", "mean"),
        usable=("usable", "all"),
    ).reset_index()
    return out.sort_values(["activation", "model", "tokens"], kind="stable").reset_index(drop=True)


def metric_trends(curves: pd.DataFrame, *, min_x: float = 0.0, level: float = 0.95) -> pd.DataFrame:
    """Slope of each ratio per decade of tokens, per (activation, model), t interval over
    seeds.

    Returns
    -------
    pandas.DataFrame
        One row per (activation, model, metric): ``estimate`` (an
        :class:`~scalinglab.estimate.Estimate` of the ratio's change per 10x tokens over
        the usable checkpoints with ``tokens >= min_x``; runs with fewer than 3 such
        checkpoints are left out, so the frame may be empty), ``slope`` (its point),
        ``start`` and ``end`` (seed means at the first and last such checkpoint),
        ``relative`` (slope over the mean of start and end) and ``n_seeds``.
    """
    rows = []
    late = curves[curves["usable"] & (curves["tokens"] >= min_x)]
    for metric in METRICS:
        slopes = run_slopes(curves, y=metric, min_x=min_x)
        if slopes.empty:  # no run has 3 usable checkpoints
            continue
        for (act, model), g in slopes.groupby(["activation", "model"], sort=False):
            est = stratified_mean(g, "slope", level=level)
            pts = late[(late["activation"] == act) & (late["model"] == model)]
            by_t = pts.groupby("tokens")[metric].mean().sort_index()
            start, end = float(by_t.iloc[0]), float(by_t.iloc[-1])
            rows.append(
                {
                    "activation": act,
                    "model": model,
                    "metric": METRICS[metric],
                    "estimate": est,
                    "slope": est.point,
                    "start": start,
                    "end": end,
                    "relative": est.point / (0.5 * (start + end)),
                    "n_seeds": int(g["seed"].nunique()),
                }
            )
    cols = ["activation", "model", "metric", "estimate", "slope", "start", "end", "relative"]
    return pd.DataFrame(rows, columns=[*cols, "n_seeds"])


def relative_slopes(
    curves: pd.DataFrame, *, value: str = "activation_ratio", x: str = "tokens", min_x: float = 0.0
) -> pd.DataFrame:
    """Per run: the OLS slope of ``value`` against ``log10 x`` (usable checkpoints with
    ``x >= min_x``, :func:`~scalinglab.studies.sparsity.analysis.run_slopes`' rows) and,
    as ``relative``, that slope divided by the run's mean ``value`` there.

    Raises
    ------
    ValueError
        No run has 3 usable checkpoints in the window.
    """
    slopes = run_slopes(curves, y=value, x=x, min_x=min_x)
    if slopes.empty:
        raise ValueError(f"no run has 3 usable checkpoints with {x} >= {min_x}")
    late = curves[curves["usable"] & (curves[x] >= min_x)]
    level_of = late.groupby(["activation", "model", "seed"])[value].mean()
    slopes["relative"] = [
        s / level_of[(a, m, sd)]
        for a, m, sd, s in slopes[["activation", "model", "seed", "slope"]].itertuples(index=False)
    ]
    return slopes


def relative_trend(
    curves: pd.DataFrame,
    *,
    value: str = "activation_ratio",
    x: str = "tokens",
    min_x: float = 0.0,
    level: float = 0.95,
) -> Estimate:
    """Slope per decade of ``x`` relative to the level, mean over models, t over seeds.

    Per run: :func:`relative_slopes` (one window ``x >= min_x`` for every size; sizes
    trained to different horizons each need their own, :func:`last_decade_trend`); then
    the mean over models of the seed means
    (:func:`~scalinglab.studies.sparsity.seed_means.stratified_mean`).

    Raises
    ------
    ValueError
        No run has 3 usable checkpoints in the window.
    """
    slopes = relative_slopes(curves, value=value, x=x, min_x=min_x)
    return stratified_mean(slopes, "relative", level=level)


def calibration_halves(sizes: Sequence[str]) -> tuple[list[str], list[str]]:
    """Every other size, by parameter count: ``(calibration, test)``.

    ``sizes`` are the paper's model labels (e.g. ``"0.1b"``); sorted by the number in
    the label, sizes 1st, 3rd, ... calibrate and 2nd, 4th, ... test, so both halves span
    the range.
    """
    order = sorted(sizes, key=lambda s: float(str(s).lower().rstrip("b")))
    return order[0::2], order[1::2]


def min_trend_effect(
    late: pd.DataFrame, *, activation: str, models: Sequence[str], fraction: float = 0.5
) -> float:
    """The smallest trend a "decreasing"/"increasing" claim must show, from the paper.

    ``late`` is :func:`scalinglab.studies.sparsity.published.late_trends`' table; over the
    calibration curves ``models`` of ``activation``, each curve's last-decade slope relative
    to its end ratio; the minimum effect is ``fraction`` of the smallest of their magnitudes
    (half the weakest trend the paper itself shows, as a fraction of the level per 10x
    tokens).
    """
    t = late[(late["activation"] == activation) & late["model"].isin(list(models))]
    if t.empty:
        raise ValueError(f"no calibration curves for {activation} among {list(models)}")
    rel = (t["slope"] / t["end_ratio"]).abs()
    return float(fraction * rel.min())


def scale_tolerance(late: pd.DataFrame, *, activation: str, models: Sequence[str]) -> float:
    """What "weak dependence on size" means, from the calibration curves alone.

    The magnitude of the OLS slope of the calibration sizes' end ratios (``late``, as in
    :func:`min_trend_effect`) against ``log10`` parameters, over their mean: the relative
    change per 10x parameters that the paper itself calls weak.
    """
    t = late[(late["activation"] == activation) & late["model"].isin(list(models))]
    if len(t) < 2:
        raise ValueError(f"a tolerance needs two calibration sizes, got {len(t)}")
    y, lx = t["end_ratio"].to_numpy(float), np.log10(t["n_params"].to_numpy(float))
    xc = lx - lx.mean()
    return abs(float((y - y.mean()) @ xc / (xc @ xc) / y.mean()))


__all__ = [
    "METRICS",
    "both_ratios",
    "calibration_halves",
    "metric_trends",
    "min_trend_effect",
    "relative_slopes",
    "relative_trend",
    "scale_tolerance",
]
