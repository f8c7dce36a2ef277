"""ScaleRL's half-compute test run by run: how far past C_mid must the half reach?

ScaleRL fits its sigmoid on the first half of a run's compute and predicts the
asymptote ``A`` of the full run (SCALERL-2). Their half window ends at about 20x the
run's ``C_mid``; a window that ends before the curve bends holds no asymptote to
predict. Pooling seeds that take off at different times blurs that, so here every run
is fitted on its own (:func:`per_run_half_fits`): the full fit and the half fit (the
run's own ``R0`` held fixed, points before ``transient_frac`` of its compute left out,
as :func:`.analysis.per_seed_sigmoids`), the error ``A_half - A_full`` and the
multiple of the full fit's ``C_mid`` that the half window reaches. The error against
that multiple (:func:`error_by_multiple`) says where the test starts to mean anything;
the claim is decided only on the runs, of every variant the design ran, whose half
reaches ``min_multiple`` (4) x ``C_mid``, whose full fit has ``A`` off its bound 1, at
least 0.1 above ``R0`` (taken off) and ``C_mid`` after the first evaluation, and that did
not fall more than ``drop`` (0.1) below their peak (an unstable run is outside ScaleRL's
scope; :func:`population` counts them, :func:`scope_text` states them in the claim's
regime)
(:func:`half_fit_decision`: the mean ``|A_half - A_full|`` over those runs with a
Student-t interval over their warm starts, :mod:`.units`; fewer than 3 such runs: not
identified, with the reason).

The half fit's error on the later evaluations (``rmse_later``) is kept for the model
comparison with Tan et al.'s power law (:mod:`.tanlaw`); its error on the run's last
evaluation (``final_error``) decides SCALERL-2-final size by size, a Student-t mean over
the size's stable runs' warm starts (:func:`final_error_by_size`, :mod:`.units`), in place of a percentile bootstrap
of the pooled fit over 3-5 seeds (which covers about 0.7-0.8 at a nominal 0.95). The
evaluation the stability rule judged (the run's last) is held out of the full fit and of
``final_error``, which is read at the last evaluation kept (:mod:`.scope`: a point used
to choose the runs is not used to score them).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.fitting import fit
from scalinglab.studies.rl import units
from scalinglab.studies.rl.scope import JUDGED, MIN_STABLE

#: An asymptote this close to 1 sits on its bound (as :mod:`.predict`).
AT_ONE = 1.0 - 1e-3
#: Fewest evaluations a half fit needs.
MIN_POINTS = 4
#: Bins of the C_mid multiple for :func:`error_by_multiple` (upper ends; the last open).
MULTIPLE_BINS = (1.0, 2.0, 4.0, 8.0, np.inf)


def failed(reason: str) -> dict:
    """The columns of a run whose fits could not be made, with ``reason`` as its error."""
    return dict.fromkeys(
        [
            "A_full",
            "B_full",
            "C_mid_full",
            "A_half",
            "A_error",
            "multiple",
            "rmse_later",
            "final_error",
        ],
        np.nan,
    ) | {
        "A_full_on_bound": False,
        "A_half_on_bound": False,
        "C_mid_inside": False,
        "took_off": False,
        "error": reason,
    }


def _fit(c: np.ndarray, y: np.ndarray, r0: float):
    return fit("scalerl", c, y, fixed={"R0": r0})


def per_run_half_fits(
    curves: pd.DataFrame,
    *,
    fit_frac: float = 0.5,
    transient_frac: float = 0.1,
    drop: float = 0.1,
    took_off: float = 0.1,
    hold_out: int = JUDGED,
) -> pd.DataFrame:
    """The sigmoid of every run fitted on all of its compute and on its first ``fit_frac``.

    Parameters
    ----------
    curves
        One row per evaluation (``model_size, n_params, variant, seed, step, compute,
        pass_rate``; the compute-0 row is the run's ``R0``), e.g.
        :func:`.analysis.curves_frame`.
    fit_frac
        The half: evaluations with compute <= ``fit_frac`` x the run's final compute.
    transient_frac
        Evaluations before this share of the run's compute are left out of both fits.
    drop
        A run whose last evaluation is more than ``drop`` below its peak is ``unstable``.
    took_off
        A full fit whose ``A`` exceeds ``R0`` by at least this much ``took_off`` (a run
        still at its ``R0`` has no asymptote to predict, whatever its ``C_mid``).
    hold_out
        The run's last evaluations the stability rule judged (:data:`.scope.JUDGED`):
        left out of the full fit, the later window and ``final_error`` (which is read at
        the last evaluation kept), as :func:`.scope.stable_curves` leaves them out of the
        pooled fits. The half window is still the first ``fit_frac`` of the run's compute.

    Returns
    -------
    pandas.DataFrame
        One row per run: ``model_size, n_params, variant, seed, R0, A_full, B_full,
        C_mid_full, A_half, A_error`` (half - full), ``multiple`` (the half window's end
        over the full fit's ``C_mid``), ``A_full_on_bound``, ``A_half_on_bound``,
        ``C_mid_inside`` (the full fit's ``C_mid`` at or after the run's first
        evaluation after step 0: a rise before any evaluation is not pinned),
        ``took_off``,
        ``unstable``, ``rmse_later`` (the half fit's RMSE on the evaluations after the
        half), ``final_error`` (the half fit's prediction at the run's final compute minus
        its last evaluation), ``n_half``, ``n_later`` and ``error`` (why a fit failed; "" otherwise,
        the numbers then NaN); ``warm_start`` when ``curves`` has it (the unit of the
        intervals over runs, :mod:`.units`).
    """
    if not 0.0 < fit_frac < 1.0:
        raise ValueError(f"per_run_half_fits: fit_frac must be in (0, 1), got {fit_frac}")
    if hold_out < 0:
        raise ValueError(f"per_run_half_fits: hold_out must be >= 0, got {hold_out}")
    rows = []
    keys = ["model_size", "variant", "seed"]
    for (size, var, sd), g in curves.groupby(keys, sort=False):
        g = g.sort_values("compute")
        c, y = g["compute"].to_numpy(float), g["pass_rate"].to_numpy(float)
        cmax = float(c.max())
        r0 = float(y[c == 0].mean()) if (c == 0).any() else float(y[0])
        judged = np.zeros(c.size, bool)
        judged[c.size - hold_out :] = hold_out > 0
        keep = (c > 0) & (c >= transient_frac * cmax) & ~judged
        half = keep & (c <= fit_frac * cmax)
        later = (c > fit_frac * cmax) & ~judged
        row: dict = {
            "model_size": size,
            "n_params": float(g["n_params"].iloc[0]),
            "variant": var,
            "seed": sd,
            **({"warm_start": g["warm_start"].iloc[0]} if "warm_start" in g else {}),
            "R0": r0,
            "unstable": bool(y[-1] < y.max() - drop),
            "n_half": int(half.sum()),
            "n_later": int(later.sum()),
            "error": "",
        }
        if half.sum() < MIN_POINTS or later.sum() < 1:
            rows.append(
                row | failed(f"{int(half.sum())} evaluations in the half (need {MIN_POINTS})")
            )
            continue
        try:
            full = _fit(c[keep], y[keep], r0)
            hf = _fit(c[half], y[half], r0)
        except Exception as exc:  # a failed fit is a row with its reason, kept in the table
            rows.append(row | failed(str(exc)))
            continue
        a_f, a_h = float(full.params["A"]), float(hf.params["A"])
        c_mid = float(full.params["C_mid"])  # 0 when B = 0: a flat fit, no midpoint
        pred = np.asarray(hf.predict(c[later]), dtype=float)
        rows.append(
            row
            | {
                "A_full": a_f,
                "B_full": float(full.params["B"]),
                "C_mid_full": c_mid,
                "A_half": a_h,
                "A_error": a_h - a_f,
                "multiple": fit_frac * cmax / c_mid if c_mid > 0 else np.nan,
                "rmse_later": float(np.sqrt(np.mean((pred - y[later]) ** 2))),
                "final_error": float(pred[-1] - y[later][-1]),
                "A_full_on_bound": bool(a_f >= AT_ONE),
                "C_mid_inside": bool(c_mid >= c[c > 0].min()),
                "took_off": bool(a_f - r0 >= took_off),
                "A_half_on_bound": bool(a_h >= AT_ONE),
            }
        )
    cols = [
        "model_size",
        "n_params",
        "variant",
        "seed",
        "R0",
        "A_full",
        "B_full",
        "C_mid_full",
        "A_half",
        "A_error",
        "multiple",
        "A_full_on_bound",
        "A_half_on_bound",
        "C_mid_inside",
        "took_off",
        "unstable",
        "rmse_later",
        "final_error",
        "n_half",
        "n_later",
        "error",
    ]
    cols += ["warm_start"] if "warm_start" in curves else []
    return pd.DataFrame(rows, columns=cols)


#: SCALERL-2's rules in the order they are applied: what a rule leaves out, what the runs
#: it keeps are (None: a precondition the claim's text does not state) and which runs it
#: keeps, as ``(runs, min_multiple) -> boolean Series``; the one source of the code
#: (:func:`eligible`, :func:`population`) and the text (:func:`keep_text`).
_RULES: list[tuple[str, str | None, Callable[[pd.DataFrame, float], pd.Series]]] = [
    ("without both fits", None, lambda r, m: r["A_error"].notna()),
    (
        "unstable (> 0.1 below their peak at the end)",
        "stable",
        lambda r, m: ~r["unstable"].astype(bool),
    ),
    (
        "with A on its bound 1",
        "have A off its bound 1",
        lambda r, m: ~r["A_full_on_bound"].astype(bool),
    ),
    ("that never took off", "took off", lambda r, m: r["took_off"].astype(bool)),
    (
        "with C_mid before their first evaluation",
        "have C_mid after their first evaluation",
        lambda r, m: r["C_mid_inside"].astype(bool),
    ),
    (
        "whose half reaches < {m:g}x C_mid",
        "have a half window reaching >= {m:g}x their C_mid",
        lambda r, m: r["multiple"] >= m,
    ),
]


def _rules(runs: pd.DataFrame, min_multiple: float) -> list[tuple[str, pd.Series]]:
    """:data:`_RULES` applied: what each rule leaves out, and the runs it keeps."""
    return [(what.format(m=min_multiple), keeps(runs, min_multiple)) for what, _, keeps in _RULES]


def keep_text(min_multiple: float = 4.0) -> str:
    """The runs SCALERL-2 keeps, in words (:data:`_RULES`): ``"stable, have A off its
    bound 1, took off, have C_mid after their first evaluation and have a half window
    reaching >= 4x their C_mid"``."""
    kept = [k.format(m=min_multiple) for _, k, _ in _RULES if k]
    return ", ".join(kept[:-1]) + " and " + kept[-1]


def variants_text(pop: dict) -> str:
    """:func:`population`'s runs entering per variant: ``"baseline 20 of 68, half_lr 20
    of 32"``."""
    return ", ".join(f"{v} {k} of {n}" for v, (k, n) in pop["by_variant"].items())


def eligible(runs: pd.DataFrame, *, min_multiple: float = 4.0) -> pd.Series:
    """Runs on which the half-compute test means something: a fitted half reaching
    ``min_multiple`` x ``C_mid``, the full fit's ``A`` off its bound and above ``R0``
    (taken off), its ``C_mid`` after the first evaluation, and stable. Runs of every
    variant in ``runs`` are judged alike (:func:`population` counts them).

    Returns
    -------
    pandas.Series
        Boolean, aligned with ``runs`` (:func:`per_run_half_fits`).
    """
    ok = pd.Series(True, index=runs.index)
    for _, keeps in _rules(runs, min_multiple):
        ok &= keeps
    return ok


def population(runs: pd.DataFrame, *, min_multiple: float = 4.0) -> dict:
    """Which runs enter SCALERL-2 (:func:`eligible`), counted: every run of ``runs`` (all
    variants of the design: :func:`half_fit_decision` does not pick one), then the rules
    in the order they are applied.

    Returns
    -------
    dict
        ``runs`` (rows of ``runs``), ``left_out`` (``(what, count)`` per rule, in order,
        each counting only the runs the rules before it kept: no half fit (listed only
        when some run has none), unstable, ``A`` on its bound 1, never took off,
        ``C_mid`` before the first evaluation, a half short of ``min_multiple`` x
        ``C_mid``), ``n_eligible`` and ``by_variant`` (variant -> ``(entering, runs)``,
        in ``runs``' order).
    """
    keep = pd.Series(True, index=runs.index)
    left_out = []
    for i, (what, keeps) in enumerate(_rules(runs, min_multiple)):
        n = int((keep & ~keeps).sum())
        if i or n:
            left_out.append((what, n))
        keep &= keeps
    by_variant = {
        str(v): (int(keep[g.index].sum()), len(g)) for v, g in runs.groupby("variant", sort=False)
    }
    return {
        "runs": len(runs),
        "left_out": left_out,
        "n_eligible": int(keep.sum()),
        "by_variant": by_variant,
    }


def scope_text(pop: dict) -> str:
    """SCALERL-2's regime phrase from :func:`population`, e.g. ``"each run fitted alone,
    every variant of the design: 47 of 116 runs enter (baseline 20 of 68, half_lr
    20 of 32, ...); left out in turn: 43 unstable (...), 19 with A on its bound 1, ..."``."""
    each = variants_text(pop)
    out = ", ".join(f"{n} {what}" for what, n in pop["left_out"])
    return (
        f"each run fitted alone, every variant of the design: {pop['n_eligible']} of "
        f"{pop['runs']} runs enter ({each}); left out in turn: {out}"
    )


def error_by_multiple(
    runs: pd.DataFrame, *, tol: float = 0.02, bins: tuple[float, ...] = MULTIPLE_BINS
) -> pd.DataFrame:
    """The half fit's error of ``A`` by how far past ``C_mid`` the half window reaches
    (stable runs that took off, with ``C_mid`` inside their fitted window).

    Parameters
    ----------
    runs
        :func:`per_run_half_fits` (fitted, stable runs are used).
    tol
        ScaleRL's noise floor on ``A``.
    bins
        Upper ends of the multiple's bins (the first starts at 0).

    Returns
    -------
    pandas.DataFrame
        One row per bin (``bin`` as ``"<= 1x"``, ``"1-2x"``, ...): ``runs``,
        ``median_abs_error``, ``share_within_tol``, ``share_half_on_bound``.
    """
    r = runs[
        runs["A_error"].notna()
        & ~runs["unstable"].astype(bool)
        & runs["took_off"].astype(bool)
        & runs["C_mid_inside"].astype(bool)
    ]
    rows, lo = [], 0.0
    for hi in bins:
        m = r[(r["multiple"] > lo) & (r["multiple"] <= hi)] if lo > 0 else r[r["multiple"] <= hi]
        label = f"<= {hi:g}x" if lo == 0 else (f"> {lo:g}x" if np.isinf(hi) else f"{lo:g}-{hi:g}x")
        err = m["A_error"].abs()
        rows.append(
            {
                "bin": label,
                "runs": len(m),
                "median_abs_error": float(err.median()) if len(m) else np.nan,
                "share_within_tol": float((err <= tol).mean()) if len(m) else np.nan,
                "share_half_on_bound": float(m["A_half_on_bound"].mean()) if len(m) else np.nan,
            }
        )
        lo = hi
    return pd.DataFrame(rows)


def half_fit_decision(
    runs: pd.DataFrame, *, min_multiple: float = 4.0, level: float = 0.95, min_runs: int = 3
) -> dict:
    """What decides SCALERL-2: the mean ``|A_half - A_full|`` over the :func:`eligible` runs.

    Returns
    -------
    dict
        ``estimate`` (:class:`~scalinglab.estimate.Estimate`, Student t over the eligible
        runs; not identified with the reason when fewer than ``min_runs``), ``signed``
        (the mean signed error, same interval method), ``n_eligible``, ``n_runs`` (fitted
        runs), ``n_unstable``, ``max_multiple`` (the furthest any half of a run that
        took off, with its ``C_mid`` inside the window, reaches), ``clustered``
        (whether the interval's units are warm starts) and ``population``
        (:func:`population`: the runs that enter, by variant, and those each rule left
        out; :func:`scope_text` states it).
    """
    fitted = runs[runs["A_error"].notna()]
    ok = eligible(runs, min_multiple=min_multiple)
    err = runs.loc[ok, "A_error"].to_numpy(float)
    n, n_all = int(err.size), len(fitted)
    picked = runs.loc[ok].assign(abs_error=np.abs(err))
    usable = fitted[fitted["took_off"].astype(bool) & fitted["C_mid_inside"].astype(bool)]
    reach = float(usable["multiple"].max()) if len(usable) else float("nan")
    n_unstable = int(runs["unstable"].sum())
    pop = population(runs, min_multiple=min_multiple)
    u_abs, u_signed = units.unit_values(picked, "abs_error"), units.unit_values(picked, "A_error")
    method = f"Student t over {u_abs.describe()} (half window >= {min_multiple:g}x C_mid)"
    if n < min_runs or u_abs.n - u_abs.n_strata < 2:
        note = (
            f"only {n} of {n_all} fitted runs are {keep_text(min_multiple)} (the furthest "
            f"half reaches {reach:.2g}x; ScaleRL's half sits at about 20x): the runs are too "
            "short for the half-compute test"
            if n < min_runs
            else f"the {n} eligible runs sit in {u_abs.n} {u_abs.label} in {u_abs.n_strata} "
            f"size(s): {u_abs.n - u_abs.n_strata} degree(s) of freedom (need 2)"
        )
        nan = Estimate(float("nan"), identified=False, note=note, method=method)
        return {
            "estimate": nan,
            "signed": nan,
            "n_eligible": n,
            "n_runs": n_all,
            "n_unstable": n_unstable,
            "max_multiple": reach,
            "clustered": u_abs.clustered,
            "population": pop,
        }

    def t_est(u: units.UnitValues) -> Estimate:
        point, lo, hi = units.t_over_units(u, level=level)
        return Estimate(point, lo, hi, level=level, method=method, n=u.n, df=u.df)

    return {
        "estimate": t_est(u_abs),
        "signed": t_est(u_signed),
        "n_eligible": n,
        "n_runs": n_all,
        "n_unstable": n_unstable,
        "max_multiple": reach,
        "clustered": u_abs.clustered,
        "population": pop,
    }


def final_error_by_size(
    runs: pd.DataFrame, *, variant: str, level: float = 0.95, min_runs: int = MIN_STABLE
) -> pd.DataFrame:
    """SCALERL-2-final run by run: per size, the mean over ``variant``'s stable runs of
    the half fit's absolute error on the final pass rate (the claim: each run's
    prediction within 0.02; signed errors of opposite sign would cancel in a mean), and
    of its signed error (the bias), each with a Student-t interval over the runs' units
    (warm starts where the design has them, :mod:`.units`).

    Parameters
    ----------
    runs
        :func:`per_run_half_fits`.
    variant
        The variant judged (the baseline).
    level
        Two-sided level of the interval.
    min_runs
        Fewest stable fitted runs for an interval (NaN ends below it): the project's
        least number of runs for a between-run interval (:data:`.scope.MIN_STABLE`; a
        t interval over 2 runs is as narrow as their two values happen to be close).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``model_size`` (in ``runs``' order): ``n_params``, ``final_error``,
        ``final_error_lo``, ``final_error_hi`` (signed), ``final_abs_error``,
        ``final_abs_error_lo``, ``final_abs_error_hi``, ``runs`` (stable fitted runs used),
        ``unstable`` (runs left out as unstable: outside ScaleRL's scope), ``units``,
        ``unit_method`` (the interval's units and method text) and ``clustered``
        (whether the units are warm starts).
    """
    rows = []
    for size, g in runs[runs["variant"] == variant].groupby("model_size", sort=False):
        ok = g["final_error"].notna() & ~g["unstable"].astype(bool)
        kept = g.loc[ok].assign(final_abs_error=g.loc[ok, "final_error"].abs())
        u = units.unit_values(kept, "final_error")
        point, lo, hi = units.t_over_units(u, level=level)
        a_point, a_lo, a_hi = units.t_over_units(
            units.unit_values(kept, "final_abs_error"), level=level
        )
        if u.n_runs < min_runs:
            lo = hi = a_lo = a_hi = np.nan
        rows.append(
            {
                "model_size": size,
                "n_params": float(g["n_params"].iloc[0]),
                "final_error": point,
                "final_error_lo": lo,
                "final_error_hi": hi,
                "final_abs_error": a_point,
                "final_abs_error_lo": a_lo,
                "final_abs_error_hi": a_hi,
                "runs": u.n_runs,
                "unstable": int(g["unstable"].astype(bool).sum()),
                "units": u.n,
                "unit_method": f"Student t over {u.describe()}",
                "clustered": u.clustered,
            }
        )
    cols = ["n_params", "final_error", "final_error_lo", "final_error_hi"]
    cols += ["final_abs_error", "final_abs_error_lo", "final_abs_error_hi", "runs", "unstable"]
    cols += ["units", "unit_method", "clustered"]
    return pd.DataFrame(rows, columns=["model_size", *cols]).set_index("model_size")
