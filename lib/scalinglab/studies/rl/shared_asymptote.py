"""ScaleRL's asymptote with each run's own take-off: one A and B per size, one C_mid per run.

Why
---
The pooled sigmoid (:func:`.analysis.fit_scalerl`) fits one curve to every point of a
size's runs, so it fits their mean curve. When the runs take off at different compute,
that mean keeps rising slowly through the horizon and has no bend for A to sit under:
at l, after the second stage (:mod:`.second_stage`), the pooled A sits on its bound 1
in the point fit and its B falls from 0.92 to 0.44, while 12 of the 17 stable runs have
their own A off the bound. ScaleRL's A is the level a run's curve approaches; runs of one
recipe differ in when they take off (base model, RL noise) far more than in where they
end (ScaleRL's +-0.02 on A). The estimator here separates the two.

The estimator (stated and committed before it was read on the study's runs)
---------------------------------------------------------------------------
Per arm and size, on the same runs and points as the pooled fit (the arm's stable runs;
points before 10% of each run's compute left out; R0 of each run held at its own pre-RL
pass rate):

    R_i(C) = R0_i + (A - R0_i) / (1 + (C_mid_i / C)^B)

A and B shared by the size's runs, ``C_mid_i`` one per run, least squares
(:data:`SCALERL_RUNS`, fitted by the package's multi-start engine). Interval: the group
bootstrap over runs (:data:`REPS` refits, percentile), its coverage of A simulated at
the size's number of runs by :func:`coverage` on the generator :func:`simulate_runs`
at the size's own fitted A, B and spread of log C_mid, with a per-run spread of A of
:data:`SD_A` (ScaleRL's noise floor), binomial evaluation noise on
:data:`N_PROMPTS` prompts and, since 2026-11-27, the size's measured swing between
evaluations (:func:`swing_sd`, 0.06-0.08 on the ``v3`` runs, three to four times the
binomial noise the generator had alone); the coverage is stated with the interval. A
is identified by the library's rule (:func:`scalinglab.fitting.identification`: off its bound in the point
fit and in more than ``1 -`` :data:`~scalinglab.estimate.BOUND_SHARE` of the refits).
The design's target (:data:`.asymptote.TARGET`, A identified at 3 of 4 sizes) is counted
for this estimator as ``scalerl/shared/A_identified_sizes``, beside the pooled fit's
count, which stays in the report as it was.

Hand-written (the law, its start grid, the generator): no library in the stack fits a
bounded nonlinear model with per-run nuisance parameters and resamples runs; the fitting
itself is :mod:`scalinglab.fitting`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import t as student_t

from scalinglab.estimate import Estimate
from scalinglab.fitting import FitResult, fit, identification, param_estimate
from scalinglab.fitting.laws import Law, Param
from scalinglab.stats.coverage_report import measured_on_data
from scalinglab.studies.rl.analysis import fit_points, pre_rl_rate
from scalinglab.studies.rl.asymptote import TARGET
from scalinglab.studies.rl.named import Named, reinterval

#: Bootstrap refits per size (the pooled fit uses 1000; these fits carry one C_mid per run).
REPS = 400
#: Per-run standard deviation of A in the coverage generator (ScaleRL's noise floor).
SD_A = 0.02
#: Prompts of the held-out evaluation (binomial noise of each evaluation).
N_PROMPTS = 512
#: The interval's method, as findings state it (:func:`a_interval`).
T_OVER_RUNS = "Student t on runs - 1 df, standard error from a bootstrap over runs"
#: Simulated data sets per coverage estimate (Monte Carlo s.e. about 0.02 at 0.95).
SIMS = 100


def _fn(C, A, B, log_C_mid, R0, group):
    s = expit(B * (np.log(C) - log_C_mid[:, group]))
    r0 = R0[:, group]
    return r0 + (A - r0) * s


def _jac(C, A, B, log_C_mid, R0, group):
    d = np.log(C) - log_C_mid[:, group]  # (S, n)
    s = expit(B * d)
    r0 = R0[:, group]
    ds = (A - r0) * s * (1.0 - s)
    onehot = np.zeros((group.shape[0], log_C_mid.shape[1]))
    onehot[np.arange(group.shape[0]), group] = 1.0
    return r0 + (A - r0) * s, {
        "A": s,
        "B": ds * d,
        "log_C_mid": (-ds * B)[..., None] * onehot,
        "R0": (1.0 - s)[..., None] * onehot,
    }


def _init(x, y, groups, n_groups):
    """Starts: A from just above the highest pass rate to 1, four slopes, and each run's
    C_mid where it first passes half way from its lowest to its highest pass rate."""
    lc = np.log(x[:, 0])
    mid = np.empty(n_groups)
    r0 = np.empty(n_groups)
    for g in range(n_groups):
        m = groups == g
        lg, yg = lc[m], y[m]
        order = np.argsort(lg)
        lg, yg = lg[order], yg[order]
        half = 0.5 * (yg.min() + yg.max())
        mid[g] = lg[int(np.argmax(yg >= half))]
        r0[g] = float(np.clip(yg.min(), 0.0, 1.0))
    ymax = float(np.max(y))
    rows = []
    for a in (min(ymax + f * (1.0 - ymax), 1.0) for f in (0.05, 0.3, 0.7)):
        for b in (0.5, 1.0, 2.0, 4.0):
            rows.append([a, b, *mid, *r0])
    return np.array(rows)


SCALERL_RUNS = Law(
    name="scalerl_runs",
    formula="R_i(C) = R0_i + (A - R0_i) / (1 + (C_mid_i / C)^B)",
    x_names=("C",),
    params=(
        Param("A", bounds=(0.0, 1.0)),
        Param("B", bounds=(0.0, None)),
        Param("C_mid", bounds=(0.0, None), transform="log", per_group=True),
        Param("R0", bounds=(0.0, 1.0), per_group=True),
    ),
    fn=_fn,
    jac=_jac,
    init=_init,
    objective="ls",
    x_positive=(True,),
    description="ScaleRL sigmoid, A and B shared by the runs, C_mid per run (fix each R0)",
)


def fit_shared(
    runs: pd.DataFrame, *, transient_frac: float = 0.1, reps: int = REPS, seed: int = 0
) -> FitResult:
    """Fit :data:`SCALERL_RUNS` to one size's runs, group bootstrap over runs.

    Parameters
    ----------
    runs
        The curves of one arm and size (the tidy table of :func:`.analysis.curves_frame`:
        ``seed``, ``compute``, ``pass_rate``; rows at ``compute == 0`` give each run's R0),
        at least 2 runs.
    transient_frac, reps, seed
        Points below this fraction of each run's compute are left out (as the pooled
        fit); bootstrap refits and the seed of their draws.

    Returns
    -------
    FitResult
        With ``A``, ``B``, ``C_mid[<run>]`` and the fixed ``R0[<run>]``; ``ci`` and
        ``draws`` from the bootstrap when ``reps`` > 0.
    """
    pts = fit_points(runs, transient_frac)
    labels = pts["seed"].astype(str).to_numpy()
    r0 = runs[runs["compute"] == 0].groupby(runs["seed"].astype(str))["pass_rate"].mean()
    fixed = {f"R0[{g}]": float(r0[g]) for g in np.unique(labels)}
    return fit(
        SCALERL_RUNS,
        pts["compute"].to_numpy(float),
        pts["pass_rate"].to_numpy(float),
        groups=labels,
        fixed=fixed,
        bootstrap=reps,
        seed=seed,
    )


def simulate_runs(
    rng: np.random.Generator,
    *,
    n_runs: int,
    A: float,
    B: float,
    log_C_mid: float,
    sd_log_C_mid: float,
    R0: float,
    steps: np.ndarray,
    sd_A: float = SD_A,
    n_prompts: int = N_PROMPTS,
    deviation: np.ndarray | None = None,
    swing: float = 0.0,
) -> pd.DataFrame:
    """Runs drawn from the per-run-midpoint sigmoid: the coverage generator.

    Parameters
    ----------
    rng
        The generator of every draw.
    n_runs
        Runs to draw.
    A, B, log_C_mid, sd_log_C_mid, R0
        The size's asymptote and slope, the mean and standard deviation of the runs'
        ``log C_mid`` (natural log, compute units of ``steps``) and the pre-RL pass rate.
    steps
        Evaluation compute ``(T,)``, ``0`` first (the pre-RL evaluation).
    sd_A, n_prompts
        Per-run spread of A (each run's A drawn normal around ``A``, clipped to [R0, 1])
        and prompts per evaluation (each evaluation binomial).
    deviation
        ``(T,)`` added to every run's expected pass rate before the binomial draw (a
        shape the sigmoid cannot follow; :mod:`.lack_of_fit`'s generator), or None.
    swing
        Standard deviation of independent normal noise added to every evaluation after
        the binomial draw (the policies' swing from one evaluation to the next,
        :func:`swing_sd` of the runs; clipped to [0, 1]); drawn only when > 0.

    Returns
    -------
    pandas.DataFrame
        ``n_runs * T`` rows: ``seed`` (0..n_runs-1), ``compute``, ``pass_rate``.
    """
    a = np.clip(A + sd_A * rng.standard_normal(n_runs), R0, 1.0)
    lc = log_C_mid + sd_log_C_mid * rng.standard_normal(n_runs)
    c = np.asarray(steps, float)
    with np.errstate(divide="ignore"):
        s = expit(B * (np.log(c)[None, :] - lc[:, None]))
    p = R0 + (a - R0)[:, None] * s  # (n_runs, T)
    if deviation is not None:
        p = p + np.asarray(deviation, float)[None, :]
    y = rng.binomial(n_prompts, np.clip(p, 0.0, 1.0)) / n_prompts
    if swing > 0:
        y = np.clip(y + swing * rng.standard_normal(y.shape), 0.0, 1.0)
    return pd.DataFrame(
        {
            "seed": np.repeat(np.arange(n_runs), c.size),
            "compute": np.tile(c, n_runs),
            "pass_rate": y.ravel(),
        }
    )


def swing_sd(runs: pd.DataFrame, *, start_frac: float = 0.5) -> float:
    """How far runs' evaluations swing from one to the next: per run, the standard
    deviation of the second differences ``y[t] - (y[t-1] + y[t+1]) / 2`` of its
    evaluations from ``start_frac`` of its compute on, over ``sqrt(1.5)`` (independent noise
    of SD s gives second differences of SD ``s sqrt(1.5)``; a smooth trend adds little),
    median over runs. Binomial evaluation noise is included; a swing that lasts several
    evaluations is partly missed.

    Parameters
    ----------
    runs
        One row per evaluation: ``seed``, ``compute``, ``pass_rate``; runs with fewer
        than 4 evaluations after ``start_frac`` are skipped.

    Returns
    -------
    float
        The median SD (0.0 when no run has enough evaluations).
    """
    sds = []
    for _, g in runs.groupby("seed", sort=False):
        g = g.sort_values("compute")
        late = g["compute"].to_numpy(float) >= start_frac * g["compute"].max()
        y = g["pass_rate"].to_numpy(float)[late]
        if y.size >= 4:
            d = y[1:-1] - (y[:-2] + y[2:]) / 2
            sds.append(float(np.std(d, ddof=1)) / np.sqrt(1.5))
    return float(np.median(sds)) if sds else 0.0


def a_interval(res: FitResult, *, level: float = 0.95) -> tuple[float, float]:
    """A's interval: Student t on ``n - 1`` degrees of freedom around the point fit, with
    the bootstrap's standard deviation of A scaled by ``sqrt(n / (n - 1))`` as its
    standard error (``n`` runs), the upper end capped at A's bound 1.

    The percentile interval of the same refits covers 0.82-0.89 at 4-5 runs on the
    generator of :func:`simulate_runs` (:func:`coverage` states both); the t interval
    widens with few runs as a mean's does.

    Parameters
    ----------
    res
        :func:`fit_shared` with its bootstrap draws.
    level
        Two-sided level.

    Returns
    -------
    tuple of float
        ``(lo, hi)``; NaN when the fit has no bootstrap draws.
    """
    if res.draws is None or res.problem is None:
        return (np.nan, np.nan)
    n = res.problem.data.n_groups
    a = res.draws[:, res.names.index("A")]
    sd = float(np.nanstd(a, ddof=1)) * np.sqrt(n / (n - 1))
    half = float(student_t.ppf(0.5 + level / 2, n - 1)) * sd
    point = float(res.params["A"])
    return (point - half, min(point + half, 1.0))


@dataclass(frozen=True)
class Coverage:
    """Simulated behaviour of the estimator at one truth and number of runs.

    Attributes
    ----------
    coverage, se
        Share of simulated intervals (:func:`a_interval`) that contain the true A, and
        its Monte Carlo s.e.
    percentile
        The same share for the percentile interval of the same refits.
    identified
        Share of simulated fits whose A the identification rule accepts.
    n_runs, sims
        Runs per simulated data set, simulated data sets.
    """

    coverage: float
    se: float
    percentile: float
    identified: float
    n_runs: int
    sims: int


def coverage(
    *,
    n_runs: int,
    A: float,
    B: float,
    log_C_mid: float,
    sd_log_C_mid: float,
    R0: float,
    steps: np.ndarray,
    sims: int = SIMS,
    reps: int = REPS,
    seed: int = 0,
    sd_A: float = SD_A,
    swing: float = 0.0,
) -> Coverage:
    """How often :func:`fit_shared`'s interval contains the true A, at ``n_runs`` runs
    drawn by :func:`simulate_runs` at the given truth (generator seeded by ``seed``),
    with the runs' measured ``swing`` (:func:`swing_sd`) added to every evaluation.

    The true A is the generator's ``A`` (the centre of the runs' A; clipping at 1 moves
    it slightly when ``A`` is within about ``2 sd_A`` of 1). Every simulated interval
    counts, identified or not.
    """
    rng = np.random.default_rng(seed)
    hit = hit_pct = ident = 0
    for k in range(sims):
        df = simulate_runs(
            rng,
            n_runs=n_runs,
            A=A,
            B=B,
            log_C_mid=log_C_mid,
            sd_log_C_mid=sd_log_C_mid,
            R0=R0,
            steps=steps,
            sd_A=sd_A,
            swing=swing,
        )
        res = fit_shared(df, reps=reps, seed=seed + k)
        lo, hi = a_interval(res)
        hit += int(lo <= A <= hi)
        lo, hi = res.ci["A"] if res.ci else (np.nan, np.nan)
        hit_pct += int(lo <= A <= hi)
        ident += int(identification(res, "A").identified)
    p = hit / sims
    return Coverage(
        coverage=p,
        se=float(np.sqrt(max(p * (1 - p), 1.0 / sims) / sims)),
        percentile=hit_pct / sims,
        identified=ident / sims,
        n_runs=n_runs,
        sims=sims,
    )


def shared_table(
    curves: pd.DataFrame,
    run_scope: pd.DataFrame,
    *,
    base: str,
    sizes: list[str],
    transient_frac: float = 0.1,
    reps: int = REPS,
    sims: int = SIMS,
    seed: int = 0,
) -> tuple[pd.DataFrame, dict[str, FitResult]]:
    """:func:`fit_shared` size by size for one arm, with identification and the simulated
    coverage of A's interval.

    Parameters
    ----------
    curves
        The arm's runs as fitted by the pooled sigmoid (the stable runs; tidy table with
        ``variant``, ``model_size``, ``seed``, ``compute``, ``pass_rate``).
    run_scope
        :func:`.scope.run_scope`: a size of ``base`` it does not mark ``fitted`` (too few
        stable runs) gets a row with its reason and no fit.
    base, sizes
        The arm, and its sizes in order.
    transient_frac, reps, sims, seed
        As :func:`fit_shared` and :func:`coverage` (the coverage generator is seeded
        ``seed + 1000 * (size's position + 1)``).

    Returns
    -------
    table : pandas.DataFrame
        Indexed by ``model_size``: ``runs``, ``A``, ``A_lo``, ``A_hi``, ``B``,
        ``share_refits_at_bound``, ``identified``, ``why`` (``A_lo``, ``A_hi`` from
        :func:`a_interval`), ``swing`` (:func:`swing_sd`, the coverage generator's
        evaluation noise), and, where A is off its bound in the point fit,
        ``coverage``, ``coverage_se``, ``coverage_percentile`` and ``sim_identified``
        (:class:`Coverage`; NaN elsewhere).
    fits : dict
        ``model_size -> FitResult`` of the fitted sizes.
    """
    rows, fits = [], {}
    mine = curves[curves["variant"] == base]
    for k, size in enumerate(sizes):
        g = mine[mine["model_size"] == size]
        row: dict = {"model_size": size, "runs": int(g["seed"].nunique())}
        if (base, size) in run_scope.index and not bool(run_scope.loc[(base, size), "fitted"]):
            row.update(identified=False, why=str(run_scope.loc[(base, size), "why"]))
            rows.append(row)
            continue
        res = fit_shared(g, transient_frac=transient_frac, reps=reps, seed=seed)
        fits[size] = res
        ident = identification(res, "A")
        lo, hi = a_interval(res)
        row.update(
            A=float(res.params["A"]),
            A_lo=lo,
            A_hi=hi,
            B=float(res.params["B"]),
            share_refits_at_bound=float(ident.share_at_bound),
            identified=bool(ident.identified),
            why=ident.reason,
            swing=swing_sd(g),
        )
        if res.params["A"] < 1.0 - 1e-3 and sims > 0:
            assert res.problem is not None  # fit() attaches it
            lc = np.log([res.params[f"C_mid[{r}]"] for r in res.problem.data.group_labels])
            cmax = float(fit_points(g, transient_frac)["compute"].max())
            r0 = pre_rl_rate(g)
            steps = np.unique(g["compute"].to_numpy(float))
            steps = steps[steps <= cmax]
            cov = coverage(
                n_runs=row["runs"],
                A=row["A"],
                B=row["B"],
                log_C_mid=float(np.mean(lc)),
                sd_log_C_mid=float(np.std(lc, ddof=1)) if lc.size > 1 else 0.0,
                R0=r0,
                steps=steps,
                sims=sims,
                reps=reps,
                seed=seed + 1000 * (k + 1),
                swing=row["swing"],
            )
            row.update(
                coverage=cov.coverage,
                coverage_se=cov.se,
                coverage_percentile=cov.percentile,
                sim_identified=cov.identified,
            )
        rows.append(row)
    cols = ["runs", "A", "A_lo", "A_hi", "B", "share_refits_at_bound", "identified", "why"]
    cols += ["swing", "coverage", "coverage_se", "coverage_percentile", "sim_identified"]
    return pd.DataFrame(rows).set_index("model_size").reindex(columns=cols), fits


def shared_findings(
    tab: pd.DataFrame, fits: dict[str, FitResult], *, base: str, what: str = ""
) -> list[Named]:
    """``scalerl/shared/<size>/A`` (the shared A with its bootstrap interval, the method
    text stating its simulated coverage at the size's runs) and
    ``scalerl/shared/A_identified_sizes`` (the sizes whose A is identified, a count of
    the design's sizes, no interval), from :func:`shared_table`."""
    out = []
    for size, r in tab.iterrows():
        if size not in fits:
            continue
        est = param_estimate(fits[str(size)], "A")
        if est.ci is not None and est.identified:
            method = f"{T_OVER_RUNS} ({est.resamples} refits)"
            if np.isfinite(r["coverage"]):
                cov = measured_on_data(
                    float(r["coverage"]), int(r["runs"]), se=float(r["coverage_se"])
                )
                method = f"{method}; {cov}"
            est = reinterval(est, lo=r["A_lo"], hi=r["A_hi"], method=method, n=int(r["runs"]))
        out.append(
            Named(
                f"scalerl/shared/{size}/A",
                est,
                f"ScaleRL A, model {size}, one A and B for the size's runs and one C_mid "
                f"per run ({base}{what}, {int(r['runs'])} runs)",
                headline=False,
            )
        )
    n_ok = int(tab["identified"].astype(bool).sum())
    off = [f"{s}: {r['why'] or 'A on its bound'}" for s, r in tab.iterrows() if not r["identified"]]
    out.append(
        Named(
            "scalerl/shared/A_identified_sizes",
            Estimate(float(n_ok), note=("not identified at " + "; ".join(off) if off else None)),
            f"sizes whose {base} A{what}, fitted with one C_mid per run, is off its bound "
            f"(identified), of {len(tab)}; the design aims at >= {TARGET} of 4",
            unit="sizes",
        )
    )
    return out
