"""The matched design: sizes at equal tokens per parameter, width-depth at two counts.

The main sweep trains every size on the same tokens, so its size slope mixes
parameter count with tokens per parameter (60 for the smallest model, 7.5 for
the largest), and its width-depth family sits at one parameter count. The
matched sweeps (:func:`scalinglab.studies.sparsity.config.matched_configs`)
give every size the same tokens per parameter and add a second width-depth
family; this module turns their Datasets into the tables the claims need:

- :func:`matched_frame`: every matched run's curve, one frame, with the design
  it belongs to;
- :func:`scale_slope`: the end-of-training ratio against ``log10`` parameters,
  absolute and relative to the mean ratio (the paper's "weak dependence" is a
  relative statement, the same criterion as the published variant's);
- :func:`width_depth_table`: per parameter count, the last-checkpoint ratio
  against ``log10`` width/depth, with intervals.

Intervals are Student t over seeds within each model (models are the design),
:mod:`scalinglab.studies.sparsity.seed_means`.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.studies.sparsity.analysis import curves_frame, final_values
from scalinglab.studies.sparsity.seed_means import slope_vs_log


def matched_frame(dsets: Mapping[str, xr.Dataset], *, min_ffn_gain: float = 0.05) -> pd.DataFrame:
    """Every matched run's checkpoints in one frame.

    Parameters
    ----------
    dsets
        ``{design: Dataset}`` from :func:`scalinglab.studies.sparsity.sweep.run_matched`
        (designs ``size-<model>`` and ``wd25k``).

    Returns
    -------
    pandas.DataFrame
        :func:`~scalinglab.studies.sparsity.analysis.curves_frame`'s columns plus
        ``design`` and ``family`` (``"size"`` or ``"width_depth"``).
    """
    if not dsets:
        raise ValueError("no matched sweeps given")
    parts = []
    for design, ds in dsets.items():
        df = curves_frame(ds, min_ffn_gain=min_ffn_gain)
        df["design"] = design
        df["family"] = "size" if design.startswith("size-") else "width_depth"
        parts.append(df)
    out = pd.concat(parts, ignore_index=True)
    if out.groupby("run")["design"].nunique().max() > 1:
        raise ValueError("two matched designs share a model name; runs would be mixed")
    return out


def scale_slope(
    final: pd.DataFrame,
    value: str = "activation_ratio",
    *,
    relative: bool = False,
    level: float = 0.95,
) -> Estimate:
    """Slope of ``value`` per decade of non-embedding parameters, t interval over seeds.

    Parameters
    ----------
    final
        One row per (model, seed) of one activation, with ``model``, ``n_params``
        and ``value`` (e.g. :func:`final_values` of the size designs).
    relative
        Divide the slope by the mean over models of the seed means, so the result is a
        fraction of the level per 10x parameters (the delta method carries the division
        into the interval, :func:`.seed_means.welch_estimate`).

    Raises
    ------
    ValueError
        Fewer than 2 sizes.
    """
    return slope_vs_log(final, value, "n_params", relative=relative, level=level)


def width_depth_table(
    families: Mapping[str, pd.DataFrame], *, value: str = "activation_ratio", level: float = 0.95
) -> pd.DataFrame:
    """Per parameter count and activation, ``value`` against ``log10(width/depth)``.

    Parameters
    ----------
    families
        ``{label: curves}``, e.g. ``{"80k": main sweep, "25k": wd25k}``; each frame
        has :func:`curves_frame`'s columns; runs with ``in_width_depth`` are used,
        at their last checkpoint.

    Returns
    -------
    pandas.DataFrame
        One row per (family, activation): ``n_shapes``, ``n_seeds`` (fewest per
        shape), ``params_lo``/``params_hi``, ``ratio_lo``/``ratio_hi`` (width/depth
        range), ``tokens_per_param`` (mean), ``estimate`` (an
        :class:`~scalinglab.estimate.Estimate` of the change of ``value`` per decade of
        width/depth, t over seeds) and ``slope`` (its point).
    """
    rows = []
    for label, curves in families.items():
        fin = final_values(curves, value)
        fin = fin[fin["in_width_depth"]]
        tpp = curves.loc[curves.groupby("run")["tokens"].idxmax()]
        tpp = tpp[tpp["in_width_depth"]]
        for act, g in fin.groupby("activation", sort=False):
            est = slope_vs_log(g, value, "width_depth_ratio", level=level)
            rows.append(
                {
                    "family": label,
                    "activation": act,
                    "n_shapes": int(g["model"].nunique()),
                    "n_seeds": int(g.groupby("model")["seed"].nunique().min()),
                    "params_lo": int(g["n_params"].min()),
                    "params_hi": int(g["n_params"].max()),
                    "ratio_lo": float(g["width_depth_ratio"].min()),
                    "ratio_hi": float(g["width_depth_ratio"].max()),
                    "tokens_per_param": float(
                        tpp[tpp["activation"] == act]["tokens_per_param"].mean()
                    ),
                    "estimate": est,
                    "slope": est.point,
                }
            )
    return pd.DataFrame(rows)


__all__ = ["matched_frame", "scale_slope", "width_depth_table"]
