"""ScaleRL's scope: the stable runs its pooled sigmoids are fitted on, the unstable ones
reported apart.

Issue 31 states the rule before the ``v3`` data: a run whose last evaluation lies more
than 0.1 below its peak is *unstable* and outside ScaleRL's scope (ScaleRL's laws are
about runs that keep what they learn; :func:`.stopping.run_outcomes` flags them). The
pooled per-size sigmoids that decide the ScaleRL claims (the asymptote's identification,
SCALERL-1's RMSE, the per-size half-compute fits, A against size) are therefore fitted on
the stable runs of each (variant, size) only; a (variant, size) with fewer than
:data:`MIN_STABLE` stable runs is not fitted at all ("not identified (too few stable
runs)"): a sigmoid through one run has no spread over runs to give it an interval, and
a bootstrap over two runs has three distinct resamples (both copies of one run, or the
pair), so its percentile interval cannot cover at any stated level. Three runs is the
least from which a between-run interval is read anywhere in this project.

The evaluation the rule judges is held out of the fits
-------------------------------------------------------
The rule looks at one evaluation per run, its last, and keeps the runs where that
evaluation is high. Fitted together with the other points, it would then be the one point
chosen for being high, and it is the point at the largest compute, where the asymptote is
read. On the ``v3`` design at l (17 stable runs of 40) the stable runs' mean rose 0.08 from
the mean of their five evaluations before the last to the last, while the same mean over
the steps before it rose about 0.01 per 250 steps: the rule selects runs on the phase of
their last evaluation (the policies swing by about 0.1 from one evaluation to the next).
So :func:`stable_curves` drops each stable run's last :data:`JUDGED` evaluation: a point
used to choose the runs is not used to fit them (stated and committed before the fits were
read with it). :func:`end_jump_findings` reports, per arm and size, the stable runs' jump
at the judged evaluation and at the last one kept (each against the mean of the
:data:`JUMP_WINDOW` evaluations before it, Student t over runs), so a reader sees the
selection and whether the points left in the fit still carry it.

The rule is applied to every variant alike (the primary arm at the width rule's learning
rate, ``half_lr`` and the ablations); which arm is the headline is decided by the design,
not by which arm's runs are more stable. The same fit on all runs stays in the report as a
sensitivity (:func:`.asymptote.bound_findings` with ``prefix="scalerl/all_runs"``), so a
reader sees what the rule changed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.stats.calibration import mean_estimate, proportion_estimate
from scalinglab.studies.rl.named import Named

#: Evaluations at each run's end that the scope rule judges (its last): held out of fits.
JUDGED = 1
#: Evaluations before a point that its jump is measured against (:func:`end_jumps`).
JUMP_WINDOW = 5
#: Fewest stable runs a (variant, size) needs for its pooled sigmoid.
MIN_STABLE = 3
#: The issue's rule: a run that ends more than this below its peak is unstable.
DROP = 0.1
#: Keys of a run.
RUN = ["model_size", "variant", "seed"]


def run_scope(outcomes: pd.DataFrame, *, min_stable: int = MIN_STABLE) -> pd.DataFrame:
    """Per (variant, size): how many runs are stable and whether the size is fitted.

    Parameters
    ----------
    outcomes
        :func:`.stopping.run_outcomes` (one row per run, with ``unstable``).
    min_stable
        Fewest stable runs for a pooled fit.

    Returns
    -------
    pandas.DataFrame
        Indexed by (``variant``, ``model_size``) in ``outcomes``' order: ``runs``,
        ``stable``, ``unstable``, ``fitted`` (``stable >= min_stable``) and ``why``
        (the reason a (variant, size) is not fitted, else None).

    Raises
    ------
    KeyError
        When ``outcomes`` lacks the ``unstable`` column.
    """
    if "unstable" not in outcomes:
        raise KeyError("run_scope: outcomes need an 'unstable' column (stopping.run_outcomes)")
    g = outcomes.assign(unstable=outcomes["unstable"].astype(bool)).groupby(
        ["variant", "model_size"], sort=False
    )
    tab = pd.DataFrame({"runs": g.size(), "unstable": g["unstable"].sum().astype(int)})
    tab["stable"] = tab["runs"] - tab["unstable"]
    tab["fitted"] = tab["stable"] >= min_stable
    why = [
        None
        if ok
        else f"not identified (too few stable runs: {s} of {n}, a pooled fit needs "
        f"{min_stable}; {n - s} end more than {DROP:g} below their peak)"
        for ok, s, n in zip(tab["fitted"], tab["stable"], tab["runs"], strict=True)
    ]
    tab["why"] = pd.Series(why, index=tab.index, dtype=object)
    return tab[["runs", "stable", "unstable", "fitted", "why"]]


def stable_curves(
    curves: pd.DataFrame,
    outcomes: pd.DataFrame,
    *,
    min_stable: int = MIN_STABLE,
    hold_out: int = JUDGED,
) -> pd.DataFrame:
    """The evaluations of the stable runs of every (variant, size) with at least
    ``min_stable`` of them, less each run's last ``hold_out`` evaluations (the ones the
    rule judged: see the module's text), ``curves``: one row per evaluation (``step``
    orders a run's evaluations); ``outcomes``: :func:`.stopping.run_outcomes` of the
    same curves."""
    if hold_out < 0:
        raise ValueError(f"stable_curves: hold_out must be >= 0, got {hold_out}")
    scope = run_scope(outcomes, min_stable=min_stable)
    keep = outcomes.loc[~outcomes["unstable"].astype(bool), RUN]
    fitted = scope.index[scope["fitted"]]
    keep = keep[pd.MultiIndex.from_frame(keep[["variant", "model_size"]]).isin(fitted)]
    kept = curves.merge(keep, on=RUN, how="inner")
    if not hold_out:
        return kept
    from_end = kept.groupby(RUN, sort=False)["step"].rank(method="first", ascending=False)
    return kept[from_end > hold_out].reset_index(drop=True)


def end_jumps(curves: pd.DataFrame, *, window: int = JUMP_WINDOW) -> pd.DataFrame:
    """Per run: how far its last evaluation (``judged``) and the one before it
    (``kept``) lie above the mean of the ``window`` evaluations before each.

    Parameters
    ----------
    curves
        One row per evaluation of the runs to measure (``model_size, variant, seed,
        step, pass_rate``), at least ``window + 2`` evaluations per run.
    window
        Evaluations each point is compared with.

    Returns
    -------
    pandas.DataFrame
        One row per run: ``model_size, variant, seed, judged, kept``.
    """
    rows = []
    for (size, variant, seed), g in curves.groupby(RUN, sort=False):
        y = g.sort_values("step")["pass_rate"].to_numpy(float)
        if y.size < window + 2:
            raise ValueError(
                f"end_jumps: run ({size}, {variant}, seed {seed}) has {y.size} evaluations, "
                f"needs {window + 2}"
            )
        rows.append(
            {
                "model_size": size,
                "variant": variant,
                "seed": seed,
                "judged": float(y[-1] - y[-1 - window : -1].mean()),
                "kept": float(y[-2] - y[-2 - window : -2].mean()),
            }
        )
    return pd.DataFrame(rows, columns=[*RUN, "judged", "kept"])


def end_jump_findings(
    curves: pd.DataFrame,
    outcomes: pd.DataFrame,
    *,
    arms: Sequence[str],
    level: float = 0.95,
    window: int = JUMP_WINDOW,
) -> list[Named]:
    """Per arm and fitted size: the stable runs' mean :func:`end_jumps` (Student t over
    runs), ``scope/<arm>/<size>/jump_judged`` (the evaluation the rule chose them on) and
    ``scope/<arm>/<size>/jump_kept`` (the last one left in the fits). Runs with fewer
    than ``window + 2`` evaluations (a short design) have no jump and are left out."""
    scope = run_scope(outcomes)
    stable = stable_curves(curves, outcomes, hold_out=0)
    long_enough = stable.groupby(RUN, sort=False)["step"].transform("size") >= window + 2
    jumps = end_jumps(stable[long_enough], window=window)
    out = []
    for (arm, size), g in jumps.groupby(["variant", "model_size"], sort=False):
        if arm not in arms or len(g) < MIN_STABLE:
            continue
        n = int(scope.loc[(arm, size), "runs"])
        for col, what in (
            ("judged", "the last evaluation, which the scope rule judged (held out of fits)"),
            ("kept", "the last evaluation kept in the fits"),
        ):
            out.append(
                Named(
                    f"scope/{arm}/{size}/jump_{col}",
                    mean_estimate(g[col].to_numpy(float), level=level),
                    f"{arm} at {size}, the {len(g)} stable runs of {n}: {what}, minus the "
                    f"mean of the {window} evaluations before it (mean over runs)",
                )
            )
    return out


def stable_rows(table: pd.DataFrame, outcomes: pd.DataFrame) -> pd.DataFrame:
    """The rows of a per-run ``table`` (columns ``model_size, variant, seed``, e.g.
    :func:`.analysis.per_seed_sigmoids`) that belong to stable runs."""
    keep = outcomes.loc[~outcomes["unstable"].astype(bool), RUN]
    return table.merge(keep, on=RUN, how="inner")


def unstable_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """The unstable runs one by one: ``model_size, variant, seed, R0, peak, peak_step,
    final`` and ``drop`` (peak minus final), sorted by variant and size as given."""
    u = outcomes[outcomes["unstable"].astype(bool)]
    cols = ["model_size", "variant", "seed", "R0", "peak", "peak_step", "final"]
    return u[cols].assign(drop=u["peak"] - u["final"]).reset_index(drop=True)


def unstable_findings(
    scope: pd.DataFrame, *, arms: Sequence[str], level: float = 0.95
) -> list[Named]:
    """Per arm (a variant, e.g. the width-rule learning rate and ``half_lr``): the share
    of its runs that are unstable (Wilson interval over the runs: a count of k of n) and
    per size the number of unstable runs, with how many stay in ScaleRL's scope."""
    out = []
    for arm in arms:
        if arm not in scope.index.get_level_values("variant"):
            continue
        t = scope.loc[arm]
        k, n = int(t["unstable"].sum()), int(t["runs"].sum())
        share = proportion_estimate(k, n, level=level)
        out.append(
            Named(
                f"unstable/{arm}/share",
                share,
                f"share of the {n} {arm} runs whose last evaluation is more than {DROP:g} "
                f"below their peak (unstable: outside ScaleRL's scope, left out of its fits)",
            )
        )
        for size, r in t.iterrows():
            out.append(
                Named(
                    f"unstable/{arm}/{size}/runs",
                    Estimate(float(r["unstable"])),
                    f"unstable {arm} runs at {size}, of {int(r['runs'])} ({int(r['stable'])} "
                    "stable runs in ScaleRL's scope)",
                    unit="runs",
                )
            )
    return out


def not_fitted_findings(
    scope: pd.DataFrame,
    *,
    variant: str,
    prefix: str = "scalerl",
    params: Sequence[str] = ("A", "B", "C_mid"),
    pooled: bool = True,
) -> list[Named]:
    """The findings of each size of ``variant`` that has too few stable runs to fit: the
    sigmoid's ``params`` and, with ``pooled``, the pooled half-compute fit's
    ``A_pred_error``, ``rmse`` and held-out MAE, each NaN and not identified with the
    reason (so a claim on them reads not identified, and never a fit on one run)."""
    out: list[Named] = []
    if variant not in scope.index.get_level_values("variant"):
        return out
    for size, r in scope.loc[variant].iterrows():
        if r["fitted"]:
            continue
        why = str(r["why"])
        names = [(f"{prefix}/{size}/{p}", f"ScaleRL {p}, model {size}") for p in params]
        if pooled:
            names += [
                (f"{prefix}/{size}/A_pred_error", "A of the half fit minus A of the full run"),
                (f"{prefix}/{size}/rmse", "RMSE of the full sigmoid fit"),
                (f"extrapolation/{size}/mae", "MAE of the sigmoid fitted on the first half"),
            ]
        for name, desc in names:
            out.append(
                Named(
                    name,
                    Estimate(np.nan, identified=False, note=why),
                    f"{desc} ({variant}; {why})",
                    unit="FLOPs" if name.endswith("C_mid") else None,
                )
            )
    return out


def regime_text(
    scope: pd.DataFrame, *, variant: str, sizes: Sequence[str], by_block: pd.DataFrame | None = None
) -> str:
    """The claims' regime phrase for ScaleRL's pooled fits, e.g. ``"stable runs
    (ScaleRL's scope), s 4 of 4, l 1 of 4 (not fitted)"``.

    ``by_block`` (:func:`.blocks.runs_by_block`, a design read with later seed blocks):
    a size whose runs come from more than one block states them block by block, e.g.
    ``"l 3 of 16 [v3 1 of 4, ext-l 2 of 12]"``."""
    if variant not in scope.index.get_level_values("variant"):
        return "stable runs (ScaleRL's scope)"
    t = scope.loc[variant]
    parts = []
    for s in sizes:
        if s not in t.index:
            continue
        part = f"{s} {int(t.loc[s, 'stable'])} of {int(t.loc[s, 'runs'])}"
        if by_block is not None:
            b = by_block.reset_index()
            b = b[(b["variant"] == variant) & (b["model_size"] == s)]
            if len(b) > 1:
                each = [f"{r.block} {int(r.stable)} of {int(r.runs)}" for r in b.itertuples()]
                part += " [" + ", ".join(each) + "]"
        parts.append(part + ("" if t.loc[s, "fitted"] else " (not fitted)"))
    return "stable runs (ScaleRL's scope), n stable of N per size: " + ", ".join(parts)
