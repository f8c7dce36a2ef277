"""Would a longer horizon identify A at l? A horizon stage sized by simulation before it runs.

Why
---
After the seed stages (:mod:`.extension`, :mod:`.second_stage`) the primary arm's pooled
A (:func:`.analysis.fit_scalerl`, the stable runs) is identified at m and xl; at l (17
stable runs of 40, 4,000 steps each) it sits on its bound 1, and so does the fit with one
take-off per run (:mod:`.shared_asymptote`), whose shared slope B is about 0.4-0.5. The
issue's done-when needs A identified at 3 of 4 sizes, so l decides it. Stop 43 named the
horizon as the limit and proposed 8,000-step runs at l (about 4 core-hours on this
machine). This module asks, before any such run exists, how often that stage would
identify A.

The simulation (stated and committed before it was run)
-------------------------------------------------------
**Truths from the l runs.** For each A in :data:`TRUTH_A`, :data:`.shared_asymptote.SCALERL_RUNS`
with A held there is fitted to the stable l runs as the report fits them (their judged
last evaluation held out, :mod:`.scope`): its shared B and the mean and SD of the runs'
``ln C_mid`` are that truth's (:func:`truths`, with the rise in the fit's objective over
the free fit, so a reader sees how well the l data allow each A). Each simulated run's A
is drawn around A with SD :data:`.shared_asymptote.SD_A`, its pass rate binomial on 512
prompts plus the l runs' measured swing between evaluations
(:func:`.shared_asymptote.swing_sd`); R0 is the l runs' pre-RL pass rate and compute
grows linearly in steps at the l runs' mean compute per step, one evaluation every 50
steps.

**A stage** is :data:`RUNS` stable runs (7: a 16-run stage at the stable share l has had,
17 of 40) over :data:`HORIZONS` steps: 4,000 (the design as run, so the generator can be
checked against the l data, where A was not identified), 8,000 (the proposed stage) and
16,000. Both estimators are fitted with :data:`REPS` bootstrap refits over runs and A is
counted as identified by the library's rule (:func:`scalinglab.fitting.identification`):
``p_pooled`` and ``p_shared``, each over :data:`SIMS` simulated stages (Monte Carlo s.e.
at most 0.05), a Wilson interval in the report.

**The rule.** The horizon stage is run if, at 8,000 steps, the pooled estimator (the
report's) identifies A in at least :data:`TARGET` (0.8, as the seed stages were sized) of
the simulated stages at every truth A <= 0.9; otherwise the shortest horizon of
:data:`HORIZONS` that does is named with its cost, and where none does, the stage is not
run and the report says why.

Run it: ``python -m scalinglab.studies.rl.horizon`` (about 20 core-minutes; stored with
provenance as ``data/rl_scaling/horizon-sizing-<hash>.nc``, which the report reads).
Hand-written: the generator and the tally are this study's; the fits are the package's.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.fitting import fit, identification
from scalinglab.stats.calibration import proportion_estimate
from scalinglab.studies.rl.analysis import fit_points, fit_scalerl, pre_rl_rate
from scalinglab.studies.rl.config import STUDY
from scalinglab.studies.rl.named import Named
from scalinglab.studies.rl.shared_asymptote import SCALERL_RUNS, fit_shared, simulate_runs, swing_sd

#: The asymptotes the stage is sized for.
TRUTH_A = (0.85, 0.9, 0.95)
#: Horizons (RL steps) simulated.
HORIZONS = (4000, 8000, 16000)
#: Stable runs per simulated stage.
RUNS = 7
#: Simulated stages per (truth, horizon).
SIMS = 100
#: Bootstrap refits per fit.
REPS = 100
#: Share of stages that must identify A for the stage to run.
TARGET = 0.8
#: RL steps between evaluations.
EVAL_EVERY = 50
#: The stored sizing's name (``data/rl_scaling/<NAME>-<hash>.nc``).
NAME = "horizon-sizing"
#: The size and arm the stage would run.
SIZE = "l"
ARM = "baseline"


def truths(
    runs: pd.DataFrame, *, a_values: tuple[float, ...] = TRUTH_A, transient_frac: float = 0.1
) -> pd.DataFrame:
    """The generator's truths at each A, fitted to one size's stable runs.

    Parameters
    ----------
    runs
        One size's runs as the report fits them (``seed``, ``step``, ``compute``,
        ``pass_rate``; the compute-0 rows give each run's R0), at least 2 runs.
    a_values
        The asymptotes to hold A at.
    transient_frac
        As the pooled fit.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``A``: ``B``, ``mean_log_C_mid``, ``sd_log_C_mid`` (natural log),
        ``objective_rise`` (the fit's objective minus the free fit's: 0 where the data
        allow A as well as their best A), ``R0``, ``compute_per_step``, ``swing``.
    """
    pts = fit_points(runs, transient_frac)
    labels = pts["seed"].astype(str).to_numpy()
    r0 = runs[runs["compute"] == 0].groupby(runs["seed"].astype(str))["pass_rate"].mean()
    fixed = {f"R0[{g}]": float(r0[g]) for g in np.unique(labels)}
    x, y = pts["compute"].to_numpy(float), pts["pass_rate"].to_numpy(float)
    free = fit(SCALERL_RUNS, x, y, groups=labels, fixed=fixed)
    pos = runs[runs["step"] > 0]
    per_step = float((pos["compute"] / pos["step"]).mean())
    rows = []
    for a in a_values:
        res = fit(SCALERL_RUNS, x, y, groups=labels, fixed=fixed | {"A": float(a)})
        lc = np.log([v for k, v in res.params.items() if k.startswith("C_mid[")])
        rows.append(
            {
                "A": float(a),
                "B": float(res.params["B"]),
                "mean_log_C_mid": float(lc.mean()),
                "sd_log_C_mid": float(lc.std(ddof=1)) if lc.size > 1 else 0.0,
                "objective_rise": float(res.objective - free.objective),
            }
        )
    out = pd.DataFrame(rows).set_index("A")
    out["R0"] = pre_rl_rate(runs)
    out["compute_per_step"] = per_step
    out["swing"] = swing_sd(runs)
    return out


def simulate_stage(
    rng: np.random.Generator, truth: pd.Series, *, n_runs: int, steps: int
) -> pd.DataFrame:
    """One simulated stage: ``n_runs`` runs of ``steps`` RL steps drawn at ``truth`` (a
    row of :func:`truths`, its index the A), one evaluation every :data:`EVAL_EVERY`
    steps, as a tidy table the report's fits read (``model_size`` "sim", ``variant``
    "baseline", ``n_params`` 1, ``seed``, ``step``, ``compute``, ``pass_rate``)."""
    grid = np.arange(0, steps + 1, EVAL_EVERY)
    df = simulate_runs(
        rng,
        n_runs=n_runs,
        A=float(truth.name),
        B=float(truth["B"]),
        log_C_mid=float(truth["mean_log_C_mid"]),
        sd_log_C_mid=float(truth["sd_log_C_mid"]),
        R0=float(truth["R0"]),
        steps=grid * float(truth["compute_per_step"]),
        swing=float(truth["swing"]),
    )
    # the pre-RL evaluation is the warm start's measured R0, not a noisy draw
    df.loc[df["compute"] == 0, "pass_rate"] = float(truth["R0"])
    return df.assign(step=np.tile(grid, n_runs), model_size="sim", variant="baseline", n_params=1.0)


def identification_rate(
    truth: pd.Series,
    *,
    n_runs: int = RUNS,
    steps: int,
    sims: int = SIMS,
    reps: int = REPS,
    seed: int = 0,
    progress=None,
) -> dict[str, int]:
    """How many of ``sims`` simulated stages identify A, for the pooled and the
    shared-slope estimator (generator seeded by ``seed``; refits seeded per stage).
    ``progress``: a tqdm bar to advance by one per stage, or None."""
    rng = np.random.default_rng(seed)
    pooled = shared = 0
    for k in range(sims):
        df = simulate_stage(rng, truth, n_runs=n_runs, steps=steps)
        _, fits = fit_scalerl(df, reps=reps, seed=seed + k)
        pooled += bool(identification(next(iter(fits.values())), "A").identified)
        shared += bool(identification(fit_shared(df, reps=reps, seed=seed + k), "A").identified)
        if progress is not None:
            progress.update(1)
    return {"pooled": pooled, "shared": shared, "sims": sims}


def sizing(
    runs: pd.DataFrame,
    *,
    a_values: tuple[float, ...] = TRUTH_A,
    horizons: tuple[int, ...] = HORIZONS,
    n_runs: int = RUNS,
    sims: int = SIMS,
    reps: int = REPS,
    seed: int = 1,
    progress: bool = False,
) -> xr.Dataset:
    """The sizing table: stages identifying A per truth and horizon.

    Returns
    -------
    xarray.Dataset
        Dims ``(A, horizon)``: ``identified_pooled``, ``identified_shared`` (counts of
        ``sims`` stages); dim ``A``: the :func:`truths` columns; attrs ``sims``,
        ``n_runs``, ``reps``, ``seed``, ``target``.
    """
    from tqdm import tqdm

    tr = truths(runs, a_values=a_values)
    counts = np.zeros((2, len(a_values), len(horizons)), dtype=int)
    with tqdm(
        total=len(a_values) * len(horizons) * sims,
        disable=not progress,
        desc="horizon sizing",
        unit="stage",
    ) as bar:
        for i, a in enumerate(a_values):
            for j, h in enumerate(horizons):
                got = identification_rate(
                    tr.loc[a],
                    n_runs=n_runs,
                    steps=h,
                    sims=sims,
                    reps=reps,
                    seed=seed + 100 * i + 10 * j,
                    progress=bar,
                )
                counts[:, i, j] = got["pooled"], got["shared"]
    ds = xr.Dataset(
        {
            "identified_pooled": (("A", "horizon"), counts[0]),
            "identified_shared": (("A", "horizon"), counts[1]),
            **{c: ("A", tr[c].to_numpy(float)) for c in tr.columns},
        },
        coords={"A": list(a_values), "horizon": list(horizons)},
    )
    ds.attrs.update(sims=sims, n_runs=n_runs, reps=reps, seed=seed, target=TARGET)
    return ds


def decision(ds: xr.Dataset, *, decide_at: float = 0.9) -> dict:
    """The stated rule on a :func:`sizing` table: ``run`` (the 8,000-step stage
    identifies A in at least the target share at every truth A <= ``decide_at``) and
    ``shortest`` (the shortest horizon that does; None where none does)."""
    share = ds["identified_pooled"] / ds.attrs["sims"]
    ok = (share.sel(A=ds["A"] <= decide_at + 1e-9) >= ds.attrs["target"]).all("A")
    good = [int(h) for h in ds["horizon"].values if bool(ok.sel(horizon=h))]
    run = bool(ok.sel(horizon=8000)) if 8000 in ds["horizon"].values else False
    return {"run": run, "shortest": good[0] if good else None}


def sizing_table(ds: xr.Dataset) -> pd.DataFrame:
    """The sizing as a table: per true A, the :func:`truths` columns a reader needs
    (``B``, ``objective_rise``, ``swing``) and the share of stages identifying A per
    estimator and horizon (columns ``pooled <h>``, ``shared <h>``)."""
    n = int(ds.attrs["sims"])
    tab = ds[["B", "objective_rise", "swing"]].to_dataframe()
    for est in ("pooled", "shared"):
        for h in ds["horizon"].values:
            tab[f"{est} {int(h)}"] = ds[f"identified_{est}"].sel(horizon=h).to_numpy() / n
    return tab


def decision_text(ds: xr.Dataset, *, decide_at: float = 0.9) -> str:
    """The stated rule's outcome on a :func:`sizing` table, in words."""
    n, target = int(ds.attrs["sims"]), float(ds.attrs["target"])
    d = decision(ds, decide_at=decide_at)
    at = ds["identified_pooled"].sel(horizon=8000)
    pairs = zip(ds["A"].values, at.values, strict=True)
    shares = ", ".join(f"{int(k)}/{n} at A {a:g}" for a, k in pairs)
    head = (
        f"8,000 steps: the pooled fit identifies A in {shares} of the simulated stages; "
        f"the rule asks {target:g} at every true A <= {decide_at:g}: "
    )
    if d["run"]:
        return head + "the stage is run."
    if d["shortest"] is not None:
        return head + (
            f"the 8,000-step stage is not run; the shortest simulated horizon that meets "
            f"the rule is {d['shortest']:,} steps."
        )
    return head + (
        f"the stage is not run; no simulated horizon (up to {int(ds['horizon'].max()):,} "
        "steps) meets the rule."
    )


def sizing_findings(ds: xr.Dataset, *, level: float = 0.95) -> list[Named]:
    """``horizon/<estimator>/A<a>/steps<h>/p_identified`` (Wilson interval over the
    simulated stages) and ``horizon/l/objective_rise/A<a>`` (how much worse the l runs
    fit with A held at a)."""
    out = []
    n = int(ds.attrs["sims"])
    for est in ("pooled", "shared"):
        for a in ds["A"].values:
            for h in ds["horizon"].values:
                k = int(ds[f"identified_{est}"].sel(A=a, horizon=h))
                out.append(
                    Named(
                        f"horizon/{est}/A{a:g}/steps{int(h)}/p_identified",
                        proportion_estimate(k, n, level=level),
                        f"share of {n} simulated l stages of {ds.attrs['n_runs']} stable "
                        f"runs x {int(h)} steps whose {est} fit identifies A (true A {a:g})",
                    )
                )
    return out


def sizing_config(*, sims: int = SIMS) -> dict:
    """The stored sizing's configuration (its file's hash)."""
    return {
        "base": "v3",
        "size": SIZE,
        "arm": ARM,
        "truth_a": list(TRUTH_A),
        "horizons": list(HORIZONS),
        "n_runs": RUNS,
        "sims": sims,
        "reps": REPS,
        "seed": 1,
    }


def l_runs() -> pd.DataFrame:
    """The primary arm's stable runs at l in the committed ``v3`` design (its seed
    stages joined), as the report fits them (the judged evaluation held out)."""
    from scalinglab.studies.rl.analysis import curves_frame
    from scalinglab.studies.rl.config import sweep_config
    from scalinglab.studies.rl.report_data import load_sweep
    from scalinglab.studies.rl.scope import stable_curves
    from scalinglab.studies.rl.stopping import EquivalenceRule, run_outcomes

    curves = curves_frame(load_sweep(sweep_config("v3")))
    out = run_outcomes(curves, rule=EquivalenceRule(min_steps=400))
    st = stable_curves(curves, out)
    return st[(st["variant"] == ARM) & (st["model_size"] == SIZE)]


def stored_sizing(*, sims: int = SIMS) -> xr.Dataset | None:
    """The stored sizing table, or None when it was never run (a tiny design)."""
    from scalinglab.compute import dataset_path, load_dataset

    config = sizing_config(sims=sims)
    return load_dataset(dataset_path(STUDY, NAME, config), config)


def main(argv: list[str] | None = None) -> None:
    """``python -m scalinglab.studies.rl.horizon``: size the horizon stage on the
    committed ``v3`` design and store the table (reused when stored)."""
    from scalinglab.compute import dataset_path
    from scalinglab.sweeps import cached_sweep

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sims", type=int, default=SIMS, help="simulated stages per cell")
    args = ap.parse_args(argv)
    if args.sims < 1:
        ap.error(f"--sims {args.sims}: must be >= 1")
    config = sizing_config(sims=args.sims)

    def execute(_runs) -> xr.Dataset:
        return sizing(l_runs(), sims=args.sims, progress=True)

    ds = cached_sweep(STUDY, NAME, config, execute)
    print(dataset_path(STUDY, NAME, config), decision(ds), file=sys.stderr)


if __name__ == "__main__":
    main()
