"""The ``matched`` design's findings: every FPO statistic at every size, t over seeds.

:func:`analyse` turns a walk-protocol sweep (:mod:`.protocol`) into record rows (the
keyword arguments of :func:`scalinglab.record.record`), one call in the notebook:

- **Tuning** (:mod:`.tuning_curves`): every final walk and its end state; a cell that
  trains with a flagged setting (optimum on the edge of what its walk tried, or at the
  end of a fixed ladder) makes every speedup resting on it "not identified".
- **Speedups** (:mod:`.seedwise`): each (optimizer, size, budget) over AdamW fitted per
  seed, Student t over the 3 evaluation seeds, ``t/speedup/<opt>/<size>/<m>x`` (not
  identified where AdamW's pooled fit leaves E unidentified, or where a per-seed fit puts
  E on its bound: the library's share rule over the seeds); read at
  the **matched budget** (the tuning budget, 1x, at every size) and at **matched steps**
  (per size the budget whose step count is nearest the largest size's at 1x: with one
  batch, w32 8x, w48 4x, w64 2x, w96 1x), :func:`matched_cells`.
- Per size, at both readings: the matrix family over the scalar one
  (``t/matrix_over_scalar/<size>/<m>x``); over sizes, the slope of each optimizer's log
  speedup per log N (``t/size_slope/<opt>/budget`` and ``/steps``); SOAP's speedup
  relative to Muon's, highest over lowest budget both ran (``t/catch_up/soap_vs_muon/
  <size>``, each budget re-tuned); the speedup with AdamW's lr and weight decay over the
  tuned one (``t/transfer_ratio/<opt>/<size>``) and how far it is off either way
  (``t/transfer_misstatement/<opt>/<size>``, ``exp|log ratio|``); Kendall's tau between
  the ranking halfway and at the end per seed (``t/tau_midrun/<size>/<m>x``) and its
  gain under the constant-LR control (``t/tau_gain/<size>/<m>x``).
- **Coverage** of the t interval at ``n = 3`` on the data's own per-seed deviations
  (``coverage/t/n3``, beside the percentile bootstrap's, ``coverage/percentile/n3``),
  and the same on the slopes' per-seed deviations (``coverage/slope/t/n3``,
  ``coverage/slope/percentile/n3``).

:func:`claim_values` gives the values the claims file's ``matched`` design is filled
with (one claim per size, Holm over the sizes).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate, identified_by_share
from scalinglab.studies.optimizers import seedwise, tuning_curves
from scalinglab.training.optimizers import OPTIMIZER_TABLE

Row = dict[str, Any]


@dataclass(frozen=True)
class Matched:
    """What :func:`analyse` found.

    Attributes
    ----------
    rows
        Record rows (``name``, ``point`` an :class:`~scalinglab.estimate.Estimate`, ...).
    cells
        The matched readings: ``size, budget, steps_multiple, steps`` (steps of the
        matched-steps cell), ``target_steps``.
    speedups
        ``optimizer, size, multiple, speedup, lo, hi, identified, reading`` (``budget``,
        ``steps``, both or ``""``) for the table and the figure.
    tuning
        :func:`.tuning_curves.overview`; ``curves`` the walks (:func:`.tuning_curves.curves`).
    flags
        :func:`.tuning_curves.cell_flags`.
    coverage
        :func:`.seedwise.coverage` of the log speedups and
        :func:`.seedwise.deviation_coverage` of the slopes' per-seed values, a
        ``statistic`` column telling them apart.
    per_seed
        :func:`.seedwise.per_seed`.
    """

    rows: list[Row]
    cells: pd.DataFrame
    speedups: pd.DataFrame
    tuning: pd.DataFrame
    curves: pd.DataFrame
    flags: dict
    coverage: pd.DataFrame
    per_seed: pd.DataFrame


def matched_cells(ds: xr.Dataset, *, tune_multiple: float, baseline: str = "adamw") -> pd.DataFrame:
    """The matched-budget and matched-steps cell of every size.

    At each size, among the budgets every optimizer but the baseline ran there, the
    matched-steps budget is the one whose step count is nearest (in log) to the largest
    size's at ``tune_multiple``.

    Returns
    -------
    pandas.DataFrame
        size, budget (``tune_multiple``), steps_multiple, steps, target_steps.
    """
    others = [o for o in ds.optimizer.values if o != baseline]
    ran = (ds.status.sel(optimizer=others) != "skipped").all("optimizer").any("seed")
    sizes = [str(s) for s in ds.model_size.values]
    target = int(ds.steps.sel(model_size=sizes[-1], data_multiple=tune_multiple))
    rows = []
    for s in sizes:
        ms = [
            float(m)
            for m in ds.data_multiple.values
            if bool(ran.sel(model_size=s, data_multiple=m))
        ]
        steps = {m: int(ds.steps.sel(model_size=s, data_multiple=m)) for m in ms}
        best = min(ms, key=lambda m: (abs(math.log(steps[m] / target)), m))
        rows.append(
            {
                "size": s,
                "budget": float(tune_multiple),
                "steps_multiple": best,
                "steps": steps[best],
                "target_steps": target,
            }
        )
    return pd.DataFrame(rows)


def tau_per_seed(loss: np.ndarray) -> np.ndarray:
    """Kendall tau between the ranking at the mid evaluation and at the last, per seed.

    ``loss`` ``(optimizers, seeds, steps)``; NaN for a seed without complete curves.
    """
    from scalinglab.studies.optimizers.analysis import kendall_tau

    out = np.full(loss.shape[1], np.nan)
    for j in range(loss.shape[1]):
        cur = loss[:, j]
        valid = np.flatnonzero(np.isfinite(cur).all(axis=0))
        if len(valid) >= 2:
            last = int(valid[-1])
            out[j] = float(kendall_tau(cur[:, last // 2][None], cur[:, last][None])[0])
    return out


def seed_estimate(
    values: np.ndarray, *, level: float, support: tuple[float, float]
) -> Estimate | None:
    """Mean over seeds with its t interval, clipped to the values the statistic can take
    (``support``: the truth lies there, so clipping keeps the coverage)."""
    from scalinglab.stats import calibration

    x = values[np.isfinite(values)]
    if not x.size:
        return None
    if x.size < len(values) or x.size < 2 or np.ptp(x) == 0:
        return Estimate(
            float(x.mean()),
            note=f"mean over {x.size} seeds; no interval (no spread or a seed missing)",
        )
    lo, hi = calibration.t_interval(x, level=level)
    return Estimate(
        float(x.mean()),
        max(float(lo), support[0]),
        min(float(hi), support[1]),
        level=level,
        method=seedwise.T_METHOD.format(n=x.size)
        + f", clipped to [{support[0]:g}, {support[1]:g}]",
        df=x.size - 1,
    )


def not_identified(est: Estimate, reasons: Sequence[str]) -> Estimate:
    """``est`` marked not identified: its own note (e.g. why it has no interval) first,
    then ``reasons``; ``est`` itself when there are none."""
    if not reasons:
        return est
    note = "; ".join(w for w in (est.note, *reasons) if w)
    return dataclasses.replace(est, identified=False, note=note)


def e_flags(
    ps: pd.DataFrame, e_identified: Mapping[str, bool], *, baseline: str = "adamw"
) -> dict[str, list[str]]:
    """Why each size's baseline asymptote ``E`` does not pin its speedups (empty: it does).

    ``E`` is not identified where the pooled fit says so (``e_identified``) or where the
    per-seed fits (:func:`.seedwise.per_seed`) put it on its bound 0 in a share of the
    seeds that the library's rule (:func:`scalinglab.estimate.identified_by_share`) calls
    not identified (with 3 seeds: any one of them).
    """
    at_bound = ps[ps.optimizer == baseline].groupby("model_size").E_at_bound.mean()
    out: dict[str, list[str]] = {}
    for s in dict.fromkeys([*map(str, ps.model_size), *e_identified]):
        why = []
        if not e_identified.get(s, False):
            why.append(f"AdamW's E at {s} is not identified")
        share = float(at_bound.get(s, 1.0))
        if not identified_by_share(share):
            why.append(f"AdamW's per-seed fits put E on its bound 0 at {s} ({share:.0%})")
        out[s] = why
    return out


def law_misfit(
    table: pd.DataFrame, *, baseline: str = "adamw", level: float = 0.95
) -> dict[str, list[str]]:
    """:func:`baseline_misfit` from the final runs ``table`` (``optimizer, model_size,
    data_multiple, seed, loss``): the sizes where the baseline's law misses its own
    losses, for gating every design's findings alike
    (:func:`.findings.gate_misfit`)."""
    ps = seedwise.per_seed(table, baseline=baseline)
    return baseline_misfit(ps, seedwise.by_seed(ps), baseline=baseline, level=level)


def baseline_misfit(
    ps: pd.DataFrame,
    seeds: Mapping[int, Mapping[tuple[str, str, float], float]],
    *,
    baseline: str = "adamw",
    level: float = 0.95,
) -> dict[str, list[str]]:
    """Sizes where the baseline's law misses its own losses (a lack-of-fit check).

    Every speedup at a size inverts the baseline's per-seed ``L(D)`` fit there; where
    the fit misses the baseline's own points, the speedups read that misfit. At each size,
    the baseline's own speedup at each of its budgets (1 for a law that fits) gets a
    Student-t interval over the seeds at level ``1 - (1 - level) / k`` (Bonferroni over
    the size's ``k`` budgets); a budget whose interval excludes 1 flags the size.

    Parameters
    ----------
    ps, seeds
        :func:`.seedwise.per_seed` and :func:`.seedwise.by_seed` (the baseline's own
        rows included).

    Returns
    -------
    dict
        ``size -> ["adamw's law misses its own 1x point at w32: 0.82 [0.77, 0.87] ..."]``
        (sizes that pass are absent).
    """
    base = ps[ps.optimizer == baseline]
    out: dict[str, list[str]] = {}
    for size, g in base.groupby("model_size", sort=False):
        budgets = sorted(set(map(float, g.data_multiple)))
        lvl = 1.0 - (1.0 - level) / max(len(budgets), 1)
        for m in budgets:
            est, _ = seedwise.summary(seeds, seedwise.cell(baseline, str(size), m), level=lvl)
            if est is None or est.lo is None or est.hi is None or est.lo <= 1.0 <= est.hi:
                continue
            out.setdefault(str(size), []).append(
                f"{baseline}'s law misses its own {m:g}x point at {size}: {est.point:.3g} "
                f"[{est.lo:.3g}, {est.hi:.3g}] (t over seeds, Bonferroni over "
                f"{len(budgets)} budgets)"
            )
    return out


def analyse(
    table: pd.DataFrame,
    ds: xr.Dataset,
    *,
    ladders: Mapping[str, Sequence[float]],
    max_passes: int,
    limits: Mapping[str, Sequence[float]] | None = None,
    tune_multiple: float,
    e_identified: Mapping[str, bool],
    baseline: str = "adamw",
    level: float = 0.95,
    seed: int = 0,
    sims: int = 4000,
) -> Matched:
    """Every finding of the matched design (see the module docstring).

    Parameters
    ----------
    table
        The sweep's final runs (``optimizer, model_size, data_multiple, seed, loss``).
    ds
        The sweep's dataset (tuning path, steps, arms, curves).
    ladders, max_passes, limits
        The walks' fixed ladders, pass cap and feasible limits
        (:func:`.tuning_curves.curves`).
    tune_multiple
        The budget every size was tuned at (the matched budget).
    e_identified
        ``size -> whether AdamW's pooled fit identifies E`` (a size that does not has
        no identified speedup).
    seed, sims
        Seed and simulated data sets of the coverage table.
    """
    from scalinglab.studies.optimizers.controls import transfer_table

    curves = tuning_curves.curves(
        tuning_curves.path_table(ds), ladders=ladders, max_passes=max_passes, limits=limits
    )
    sizes = [str(s) for s in ds.model_size.values]
    flags = tuning_curves.cell_flags(curves, sizes=sizes, tune_multiple=tune_multiple)
    full = table
    if "transfer_final_loss" in ds:
        full = pd.concat([table, transfer_table(ds)], ignore_index=True)
    ps = seedwise.per_seed(full, baseline=baseline)
    seeds = seedwise.by_seed(ps)
    n_params = dict(zip(sizes, ds.n_params.values.astype(float), strict=True))
    fam = {o: OPTIMIZER_TABLE[o]["family"] for o in ds.optimizer.values}
    others = [str(o) for o in ds.optimizer.values if o != baseline]
    cells = matched_cells(ds, tune_multiple=tune_multiple, baseline=baseline)
    steps_m = dict(zip(cells["size"], cells.steps_multiple, strict=True))
    rows: list[Row] = []
    table_rows = []

    e_why = e_flags(ps, e_identified, baseline=baseline)
    misfit = baseline_misfit(ps, seeds, baseline=baseline, level=level)
    for sz, why in misfit.items():
        e_why.setdefault(sz, []).extend(why)
    # a slope over size spans the sizes whose baseline law fits its own losses, when at
    # least three do (as the other designs' trend rule); else every size, not identified
    fits = [s for s in sizes if s not in misfit]
    trend = fits if len(fits) >= 3 else sizes

    def why_not(opts: Sequence[str], pairs: Sequence[tuple[str, float]]) -> list[str]:
        out = []
        for s, m in pairs:
            out += e_why.get(s, [])
            out += tuning_curves.speedup_flags(flags, opts, s, m, baseline=baseline)
        return list(dict.fromkeys(out))

    def add(
        name: str, est: Estimate | None, reasons: list[str], desc: str, unit: str = "x"
    ) -> None:
        if est is None or not np.isfinite(est.point):
            return
        est = not_identified(est, reasons)
        # the headlines: Muon's speedup at the matched budget and its slopes over size
        lead = name.startswith("t/size_slope/muon/") or (
            name.startswith("t/speedup/muon/") and name.endswith(f"/{tune_multiple:g}x")
        )
        rows.append(
            {
                "name": name,
                "point": est,
                "unit": unit,
                "description": desc,
                "headline": lead and not reasons and est.lo is not None,
            }
        )

    # ---- every cell's speedup
    for (o, s, m), _ in ps[ps.optimizer.isin(others)].groupby(
        ["optimizer", "model_size", "data_multiple"], sort=False
    ):
        est, _ = seedwise.summary(seeds, seedwise.cell(o, s, m), level=level)
        reasons = why_not([o], [(s, m)])
        reading = ("budget" if m == tune_multiple else "") + (
            "+steps" if m == steps_m.get(s) else ""
        )
        add(
            f"t/speedup/{o}/{s}/{m:g}x",
            est,
            reasons,
            f"speedup over {baseline} at {s}, {m:g}x (AdamW fitted per seed)"
            + {
                "budget": "; matched budget",
                "+steps": "; matched steps",
                "budget+steps": "; matched budget and steps",
            }.get(reading, ""),
        )
        if est is not None:
            table_rows.append(
                {
                    "optimizer": o,
                    "size": s,
                    "multiple": m,
                    "speedup": est.point,
                    "lo": est.lo,
                    "hi": est.hi,
                    "identified": not reasons,
                    "reading": reading.strip("+"),
                }
            )
    matrix = [o for o in others if fam.get(o) == "matrix"]
    scalar = [o for o in others if fam.get(o) == "scalar"]
    # ---- per size: matrix over scalar at both readings
    for s in sizes:
        for m in sorted({tune_multiple, steps_m[s]}):
            if matrix and scalar:
                stat = seedwise.family(matrix, scalar, s, m, with_baseline=True)
                est, _ = seedwise.summary(seeds, stat, level=level)
                add(
                    f"t/matrix_over_scalar/{s}/{m:g}x",
                    est,
                    why_not(matrix + scalar, [(s, m)]),
                    f"geometric-mean speedup of matrix ({', '.join(matrix)}) over scalar "
                    f"({baseline} at 1 by definition, {', '.join(scalar)}) methods at {s}, "
                    f"{m:g}x",
                )
    # ---- the trend with size, at matched budget and at matched steps
    slope_cells = []  # each slope's per-seed values: the slopes' own coverage simulation
    for o in others:
        for reading, per in (
            ("budget", dict.fromkeys(trend, tune_multiple)),
            ("steps", {s: steps_m[s] for s in trend}),
        ):
            est, per_seed = seedwise.summary(
                seeds, seedwise.slope(o, per, n_params), level=level, ratio=False
            )
            slope_cells.append(per_seed)
            add(
                f"t/size_slope/{o}/{reading}",
                est,
                why_not([o], list(per.items())),
                f"slope of {o}'s log speedup per log N over "
                + ", ".join(f"{s} {m:g}x" for s, m in per.items())
                + f" (matched {reading})",
                unit="",
            )
    # ---- SOAP catching up with Muon, lowest to highest budget both ran (re-tuned each)
    if {"soap", "muon"} <= set(others):
        for s in sizes:
            both = sorted(
                set(ps[(ps.optimizer == "soap") & (ps.model_size == s)].data_multiple)
                & set(ps[(ps.optimizer == "muon") & (ps.model_size == s)].data_multiple)
            )
            both = [m for m in both if m >= tune_multiple]
            if len(both) >= 2:
                lo_m, hi_m = both[0], both[-1]
                est, _ = seedwise.summary(
                    seeds, seedwise.catch_up("soap", "muon", s, lo_m, hi_m), level=level
                )
                add(
                    f"t/catch_up/soap_vs_muon/{s}",
                    est,
                    why_not(["soap", "muon"], [(s, lo_m), (s, hi_m)]),
                    f"SOAP's speedup relative to Muon's at {hi_m:g}x over the same at {lo_m:g}x "
                    f"at {s} (above 1: SOAP catches up with more data)",
                )
    # ---- hyperparameter transfer: how much AdamW's settings misstate the speedup
    trans = ps[ps.optimizer.str.endswith("@adamw")]
    for (name, s), g in trans.groupby(["optimizer", "model_size"], sort=False):
        o = str(name).removesuffix("@adamw")
        ms = sorted(
            set(g.data_multiple) & set(ps[(ps.optimizer == o) & (ps.model_size == s)].data_multiple)
        )
        est, _ = seedwise.summary(seeds, seedwise.transfer(o, s, ms), level=level)
        reasons = why_not([o], [(s, m) for m in ms])
        add(
            f"t/transfer_ratio/{o}/{s}",
            est,
            reasons,
            f"{o}'s speedup with AdamW's tuned lr and weight decay over its speedup at its own "
            f"optimum at {s} (geometric mean over {', '.join(f'{m:g}x' for m in ms)}); below 1 "
            "the transfer deflates it, above 1 it inflates it",
        )
        add(
            f"t/transfer_misstatement/{o}/{s}",
            seedwise.misstatement(est),
            reasons,
            f"factor by which transferring AdamW's settings misstates {o}'s speedup at {s}, "
            "either way (exp |log ratio|)",
        )
    # ---- mid-run rankings, and the schedule control
    dims = ("optimizer", "seed", "step")
    taus, tau_cells = [], []
    for s in sizes:
        for m in sorted({tune_multiple, steps_m[s]}):
            loss = ds.loss.sel(model_size=s, data_multiple=m).transpose(*dims).values
            tau = tau_per_seed(loss)
            if np.isfinite(tau).all():
                taus.append(tau)
                tau_cells.append(f"{s} {m:g}x")
            add(
                f"t/tau_midrun/{s}/{m:g}x",
                seed_estimate(tau, level=level, support=(-1.0, 1.0)),
                [],
                f"Kendall tau between the ranking halfway through training and at the end at "
                f"{s}, {m:g}x (per seed, mean over seeds)",
                unit="",
            )
    if taus:
        # one cell's tau over 4 optimizers moves in steps of 1/3, so a 3-seed mean above
        # 0.9 needs 1, 1, 1 (no interval): the claim is read on each seed's mean over cells
        add(
            "t/tau_midrun/all",
            seed_estimate(np.mean(taus, axis=0), level=level, support=(-1.0, 1.0)),
            [],
            "Kendall tau between the ranking halfway through training and at the end, each "
            f"seed's mean over the {len(tau_cells)} cells with complete curves "
            f"({', '.join(tau_cells)}), mean over seeds",
            unit="",
        )
    if "control_loss" in ds:
        for s in sizes:
            for m in (float(v) for v in ds.data_multiple.values):
                ctrl = ds.control_loss.sel(model_size=s, data_multiple=m).transpose(*dims).values
                if not np.isfinite(ctrl).any():
                    continue
                main = ds.loss.sel(model_size=s, data_multiple=m).transpose(*dims).values
                gain = tau_per_seed(ctrl) - tau_per_seed(main)
                add(
                    f"t/tau_gain/{s}/{m:g}x",
                    seed_estimate(gain, level=level, support=(-2.0, 2.0)),
                    [],
                    f"Kendall tau halfway vs end under the {ds.attrs.get('control_schedule', 'control')} "
                    f"schedule minus under the main one at {s}, {m:g}x (per seed)",
                    unit="",
                )
    # ---- coverage of the t interval on the data's own deviations: the speedups', and
    # the slopes' (a slope's per-seed values spread and skew unlike one cell's)
    cov = seedwise.coverage(ps[ps.optimizer.isin(others)], level=level, sims=sims, seed=seed)
    slope_cov = seedwise.deviation_coverage(slope_cells, level=level, sims=sims, seed=seed)
    for what, prefix, c, text in (
        ("log speedup", "coverage", cov, "these log speedups"),
        ("slope per log N", "coverage/slope", slope_cov, "the per-seed slopes over size"),
    ):
        for r in c[c.n == 3].itertuples() if len(c) else ():
            key = "t" if r.method == "Student t" else "percentile"
            rows.append(
                {
                    "name": f"{prefix}/{key}/n3",
                    "point": Estimate(
                        float(r.coverage), note=f"simulation standard error {r.se:.3f}"
                    ),
                    "description": f"simulated coverage of a nominal {level:.0%} {r.method} "
                    f"interval of a mean over 3 seeds, resampling the per-seed deviations of "
                    f"{text} ({r.sims} data sets, {r.deviations} deviations)",
                }
            )
        if len(c):
            c.insert(0, "statistic", what)
    cov = pd.concat([cov, slope_cov], ignore_index=True) if len(slope_cov) else cov
    rows.append(
        {
            "name": "tuning/flagged_cells",
            "point": Estimate(float(sum(bool(v) for v in flags.values()))),
            "description": "tuned cells (optimizer, size, budget) that train with a setting whose "
            "walk ended on an edge or a bound",
        }
    )
    return Matched(
        rows,
        cells,
        pd.DataFrame(table_rows),
        tuning_curves.overview(curves, flags),
        curves,
        flags,
        cov,
        ps,
    )


def claim_values(
    ds: xr.Dataset, cells: pd.DataFrame, recorded: Sequence[str], *, baseline: str = "adamw"
) -> dict[str, Any]:
    """The values the claims file's ``matched`` design is filled with.

    Returns
    -------
    dict
        ``design`` (``"matched"``), ``small``/``large`` (smallest, largest size),
        ``budget`` (the matched budget, formatted), ``sizes_each`` (``[{"size": s}, ...]``:
        one claim per size), ``scalar`` (the scalar optimizer), ``transfer_each``
        (``[{"opt": o, "tsize": s}, ...]`` for every transfer ratio recorded), ``tau_gain``
        (the control's finding or a name never recorded), ``low``/``high`` (SOAP vs
        Muon's budgets at the smallest size).
    """
    names = set(recorded)
    sizes = [str(s) for s in ds.model_size.values]
    fam = {o: OPTIMIZER_TABLE[o]["family"] for o in ds.optimizer.values if o != baseline}
    scalar = str(next((o for o, f in fam.items() if f == "scalar"), "nadamw_paper"))
    trans = sorted(n for n in names if n.startswith("t/transfer_misstatement/"))
    gain = sorted(n for n in names if n.startswith("t/tau_gain/"))
    budget = float(cells.budget.iloc[0]) if len(cells) else 1.0
    small = sizes[0]
    desc_ms = [
        float(v)
        for v in ds.data_multiple.values
        if f"t/speedup/soap/{small}/{float(v):g}x" in names
        and f"t/speedup/muon/{small}/{float(v):g}x" in names
        and float(v) >= budget
    ]
    return {
        "design": "matched",
        "small": small,
        "large": sizes[-1],
        "budget": f"{budget:g}",
        "sizes_each": [{"size": s} for s in sizes],
        "scalar": scalar,
        # without a transfer arm, one claim on a name never recorded: untested, with why
        "transfer_each": [{"opt": n.split("/")[2], "tsize": n.split("/")[3]} for n in trans]
        or [{"opt": "muon", "tsize": small}],
        "tau_gain": (gain or ["t/tau_gain (no schedule control)"])[-1],
        "low": f"{min(desc_ms):g}" if desc_ms else f"{budget:g}",
        "high": f"{max(desc_ms):g}" if desc_ms else f"{budget:g}",
    }
