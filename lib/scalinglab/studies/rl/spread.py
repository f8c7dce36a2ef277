"""Base-model spread against RL spread: variance components over warm starts and RL seeds.

ScaleRL's noise floor on ``A`` (about +-0.02) is RL noise from one base model. A design
whose every seed re-initialises and re-warms its model mixes the spread of base models
with that of RL. A design with ``warm_start`` and ``rl_seed`` coordinates (several RL
seeds from each warmed-up policy) separates them: within each model size the runs
nest as RL seeds within warm starts, and a nested (one-way within size) random-effects
ANOVA gives

- the RL component ``sigma_rl^2`` = the mean square within warm starts, with its exact
  chi-square interval (normal errors);
- the base-model component ``sigma_ws^2 = (MS_ws - MS_rl) / n0`` (``n0`` RL seeds per
  warm start; truncated at 0), with the modified large-sample interval of Graybill and
  Wang (Burdick & Graybill 1992, sec. 3.3), which keeps close to its level at a handful
  of groups, unlike a bootstrap over 2 warm starts (where its upper end falls to 0,
  the conservative ``MS_ws / n0`` at its chi-square bound is kept: never ``[0, 0]``).

Model sizes are fixed effects (their means are removed), so the components pool the
sizes. :func:`variance_components` takes one value per run (the fitted ``A``, the final
pass rate); :func:`run_values` builds that table from the curves and the per-run
sigmoids. On data without the coordinates both say so rather than guess.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from scalinglab.estimate import Estimate
from scalinglab.studies.rl.analysis import NEST


def has_nesting(table: pd.DataFrame) -> bool:
    """Whether ``table`` places its runs by warm start and RL seed, with at least one
    warm start holding two or more RL seeds."""
    if not set(NEST) <= set(table.columns):
        return False
    per = table.groupby(["model_size", "warm_start"])["rl_seed"].nunique()
    return bool((per >= 2).any())


def run_values(
    curves: pd.DataFrame, per_seed: pd.DataFrame, *, variant: str, last: int = 3
) -> pd.DataFrame:
    """One row per run of ``variant``: ``model_size, seed, A`` (the per-run sigmoid's,
    :func:`.analysis.per_seed_sigmoids`), ``A_on_bound``, ``final`` (the mean of its last
    ``last`` evaluations) and, when the curves carry them, ``warm_start`` and ``rl_seed``."""
    g = curves[curves["variant"] == variant].sort_values("step")
    cols = ["model_size", "seed"] + [c for c in NEST if c in g.columns]
    runs = g.groupby(cols, sort=False)["pass_rate"].apply(lambda s: float(s.iloc[-last:].mean()))
    out = runs.rename("final").reset_index()
    ps = per_seed.loc[per_seed["variant"] == variant, ["model_size", "seed", "A"]]
    out = out.merge(ps, on=["model_size", "seed"], how="left")
    out["A_on_bound"] = out["A"] >= 1.0 - 1e-3
    return out


def _mls_interval(
    ms1: float, ms2: float, df1: int, df2: int, n0: float, level: float
) -> tuple[float, float]:
    """Graybill-Wang modified large-sample interval of ``(ms1 - ms2) / n0``."""
    a = (1.0 - level) / 2
    c = 1.0 / n0
    f1_hi, f1_lo = sps.chi2.ppf(1 - a, df1) / df1, sps.chi2.ppf(a, df1) / df1
    f2_hi, f2_lo = sps.chi2.ppf(1 - a, df2) / df2, sps.chi2.ppf(a, df2) / df2
    g1, h1 = 1 - 1 / f1_hi, 1 / f1_lo - 1
    g2, h2 = 1 - 1 / f2_hi, 1 / f2_lo - 1
    f12_hi, f12_lo = sps.f.ppf(1 - a, df1, df2), sps.f.ppf(a, df1, df2)
    g12 = ((f12_hi - 1) ** 2 - g1**2 * f12_hi**2 - h2**2) / f12_hi
    h12 = ((1 - f12_lo) ** 2 - h1**2 * f12_lo**2 - g2**2) / f12_lo
    theta = c * (ms1 - ms2)
    lo = theta - np.sqrt(
        max(0.0, g1**2 * c**2 * ms1**2 + h2**2 * c**2 * ms2**2 + g12 * c**2 * ms1 * ms2)
    )
    hi = theta + np.sqrt(
        max(0.0, h1**2 * c**2 * ms1**2 + g2**2 * c**2 * ms2**2 + h12 * c**2 * ms1 * ms2)
    )
    if hi <= 0:
        # the warm starts differ less than their RL seeds: the MLS upper end falls to 0;
        # keep the conservative one, E[MS_ws] / n0 at its chi-square upper bound
        hi = c * ms1 / f1_lo
    return max(0.0, float(lo)), float(hi)


def pooled_sd(
    table: pd.DataFrame, value: str, *, by: list[str], level: float = 0.95, what: str = ""
) -> Estimate | None:
    """Pooled within-group standard deviation of ``value`` with its chi-square interval.

    Parameters
    ----------
    table
        One row per run, with the columns ``by`` and ``value`` (NaN rows left out).
    by
        The columns whose combinations are the groups (``["model_size"]``: within sizes;
        ``["model_size", "warm_start"]``: RL seeds within warm starts).
    what
        Words for the method text naming the groups (e.g. ``"within sizes"``).

    Returns
    -------
    Estimate or None
        The root of the pooled mean square within groups, its chi-square interval (exact
        for normal errors only; heavier tails or clipped values make it too narrow, see
        the ``chi-square-sd`` coverage row) on ``runs - groups`` degrees of freedom, ``n`` = those degrees of
        freedom; None with fewer than 1.
    """
    t = table.dropna(subset=[value])
    groups = [g[value].to_numpy(float) for _, g in t.groupby(by)]
    df_w = sum(g.size - 1 for g in groups)
    if df_w < 1:
        return None
    ms_w = sum(float(((g - g.mean()) ** 2).sum()) for g in groups) / df_w
    a = (1.0 - level) / 2
    lo = df_w * ms_w / sps.chi2.ppf(1 - a, df_w)
    hi = df_w * ms_w / sps.chi2.ppf(a, df_w)
    words = f"pooled SD {what}, " if what else ""
    return Estimate(
        float(np.sqrt(ms_w)),
        float(np.sqrt(lo)),
        float(np.sqrt(hi)),
        level=level,
        method=f"{words}chi-square interval (df {df_w})",
        # the interval rests on df_w within-group deviations: its coverage is read at
        # n = df (``chi-square-sd`` in scalinglab.stats.method_coverage)
        n=int(df_w),
    )


def variance_components(
    table: pd.DataFrame, value: str, *, level: float = 0.95
) -> dict[str, Estimate] | None:
    """Base-model (warm-start) and RL standard deviations of one per-run ``value``.

    Parameters
    ----------
    table
        One row per run: ``model_size, warm_start, rl_seed`` and ``value`` (NaN rows
        left out).
    value
        The column to split, e.g. ``"A"`` or ``"final"``.

    Returns
    -------
    dict or None
        ``{"warm_start": Estimate, "rl": Estimate}``: standard deviations (the square
        roots of the components and of their interval ends); None when the table has no
        nesting (:func:`has_nesting`) or no warm start with 2 or more RL seeds after NaN
        are dropped.
    """
    if not has_nesting(table):
        return None
    t = table.dropna(subset=[value])
    groups = [g[value].to_numpy(float) for _, g in t.groupby(["model_size", "warm_start"])]
    if not any(g.size >= 2 for g in groups):
        return None
    ss_w = sum(float(((g - g.mean()) ** 2).sum()) for g in groups)
    df_w = sum(g.size - 1 for g in groups)
    ss_b, df_b, nsq = 0.0, 0, 0.0
    for _, s in t.groupby("model_size"):
        gs = [g[value].to_numpy(float) for _, g in s.groupby("warm_start")]
        grand = float(np.concatenate(gs).mean())
        ss_b += sum(g.size * (g.mean() - grand) ** 2 for g in gs)
        df_b += len(gs) - 1
        n_s = sum(g.size for g in gs)
        nsq += n_s - sum(g.size**2 for g in gs) / n_s
    if df_w < 1 or df_b < 1:
        return None
    ms_w, ms_b = ss_w / df_w, ss_b / df_b
    n0 = nsq / df_b  # RL seeds per warm start (the unbalanced-design average)
    rl = pooled_sd(t, value, by=["model_size", "warm_start"], level=level)
    assert rl is not None  # df_w >= 1
    ws = max(0.0, (ms_b - ms_w) / n0)
    ws_lo, ws_hi = _mls_interval(ms_b, ms_w, df_b, df_w, n0, level)
    k_ws = len(groups)
    return {
        "warm_start": Estimate(
            float(np.sqrt(ws)),
            float(np.sqrt(ws_lo)),
            float(np.sqrt(ws_hi)),
            level=level,
            method=(
                f"nested ANOVA, Graybill-Wang interval ({k_ws} warm starts in "
                f"{t['model_size'].nunique()} sizes, df {df_b} and {df_w})"
            ),
            note="truncated at 0: the warm starts differ less than the RL seeds within them"
            if ws == 0
            else None,
            n=k_ws,
        ),
        "rl": rl.replace(method=f"nested ANOVA, {rl.method}"),
    }
