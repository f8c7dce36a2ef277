"""Mid-run rankings, the schedule control and hyperparameter transfer of the sweep design,
seed by seed, with Student-t intervals over the seeds (FPO-5, FPO-5b and FPO-7).

The percentile bootstraps of :func:`.analysis.ranking_agreement` and
:func:`.controls.transfer_effect` resample 3 seeds and cover about 0.71 of the time at a
nominal 95%; at a cell where every resample gives the same two rankings the tau interval
is a point (``0.667 [0.667, 0.667]``). As :mod:`.seed_t` does for the speedups, these
claims are decided on statistics computed once per seed, with a Student-t interval over
the seeds and the interval's coverage at ``n = 3`` simulated on the statistic's own
per-seed deviations (:func:`.seedwise.deviation_coverage`), stated in its method text:

- :func:`midrun`: Kendall's tau between the optimizers' ranking halfway through training
  and at the end *of the same seed's runs*, per cell (size, budget) and seed
  (:func:`.matched_report.tau_per_seed`). ``t/tau_midrun/all`` is each seed's mean over
  every cell where all seeds have complete curves (the deciding finding: a single ranked
  cell of 4 optimizers often gives the same tau on every seed, no spread to scale a t
  interval); ``t/tau_midrun/<size>/<m>x`` is the ranked cell alone. Intervals are clipped
  to tau's range ``[-1, 1]``. ``coverage/t_tau/n3`` and ``coverage/percentile_tau/n3``:
  simulated on the per-cell tau deviations.
- :func:`schedule_gain`: the same tau under the control schedule minus under the main
  one, per control cell and seed, and its per-seed mean over the cells
  (``t/tau_gain_<schedule>/pooled``, clipped to ``[-2, 2]``).
- :func:`transfer`: the optimizer's log speedup with AdamW's lr and weight decay minus its
  log speedup at its own optimum, AdamW's law fitted per seed (:func:`.seedwise.per_seed`,
  paired within the seed), mean over the budgets both ran, per seed:
  ``t/transfer_ratio/<opt>/<size>`` (exponentiated: below 1 the transfer deflates the
  speedup). ``coverage/t_transfer/n3`` and ``coverage/percentile_transfer/n3``: simulated
  on the per-cell deviations of that difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.stats.coverage_report import measured_on_data
from scalinglab.studies.optimizers import seedwise
from scalinglab.studies.optimizers.findings import tuning_note
from scalinglab.studies.optimizers.matched_report import not_identified, seed_estimate, tau_per_seed

Row = dict[str, Any]

#: How every interval of this module is made (``n`` seeds).
METHOD = "Student t over {n} seeds (statistic computed per seed)"


def _stated(cov: pd.DataFrame) -> str:
    """The Student-t coverage at n = 3 of ``cov`` as method-text words ('' without it)."""
    at3 = cov[(cov.method == "Student t") & (cov.n == 3)] if len(cov) else cov
    if not len(at3):
        return ""
    return "; " + measured_on_data(float(at3.coverage.iloc[0]), 3, se=float(at3.se.iloc[0]))


def _with_coverage(est: Estimate | None, values: np.ndarray, stated: str) -> Estimate | None:
    """``est`` with this module's method text and ``n`` (the coverage simulated at n = 3
    stated where the interval rests on 3 seeds)."""
    if est is None or est.lo is None:
        return est
    n = int(np.isfinite(values).sum())
    return est.replace(method=METHOD.format(n=n) + (stated if n == 3 else ""), n=n)


def _coverage_rows(cov: pd.DataFrame, key: str, what: str, level: float) -> list[Row]:
    rows = []
    for r in cov[cov.n == 3].itertuples() if len(cov) else ():
        k = "t" if r.method == "Student t" else "percentile"
        rows.append(
            {
                "name": f"coverage/{k}_{key}/n3",
                "point": Estimate(float(r.coverage), note=f"simulation standard error {r.se:.3f}"),
                "description": f"simulated coverage of a nominal {level:.0%} {r.method} interval "
                f"of a mean over 3 seeds, resampling the per-seed deviations of {what} "
                f"({r.sims} data sets)",
            }
        )
    return rows


def tau_cells(ds: xr.Dataset) -> dict[tuple[str, float], np.ndarray]:
    """``(size, multiple) -> tau per seed`` ``(n_seeds,)`` for every cell where every seed
    has complete curves (:func:`.matched_report.tau_per_seed`)."""
    dims = ("optimizer", "seed", "step")
    out = {}
    for s in map(str, ds.model_size.values):
        for m in map(float, ds.data_multiple.values):
            tau = tau_per_seed(ds.loss.sel(model_size=s, data_multiple=m).transpose(*dims).values)
            if np.isfinite(tau).all():
                out[(s, m)] = tau
    return out


def midrun(
    ds: xr.Dataset,
    *,
    ranked: tuple[str, float] | None,
    level: float = 0.95,
    seed: int = 0,
    sims: int = 4000,
    tuning: Mapping[str, Sequence[str]] | None = None,
) -> tuple[list[Row], pd.DataFrame]:
    """The mid-run ranking findings (module docstring) and their coverage table.

    Parameters
    ----------
    ds
        The sweep: ``loss`` ``(optimizer, model_size, data_multiple, seed, step)``.
    ranked
        The ranked cell (:func:`.findings.ranked_cell`), None for none.
    tuning
        Per size, its flagged tuned settings (:attr:`.findings.Speedups.tuning`): a
        ranking of runs tuned at their grids' edges ranks the tuning as much as the
        optimizers, so a finding over a flagged size is not identified, as the speedups
        there are.

    Returns
    -------
    rows, coverage
        Record rows; :func:`.seedwise.deviation_coverage` of the per-cell taus (empty
        without enough cells).
    """
    cells = tau_cells(ds)
    if not cells:
        return [], pd.DataFrame()
    cov = seedwise.deviation_coverage(list(cells.values()), level=level, sims=sims, seed=seed)
    stated = _stated(cov)
    rows: list[Row] = []
    where = ", ".join(f"{s} {m:g}x" for s, m in cells)
    mean = np.mean(list(cells.values()), axis=0)

    def gated(est: Estimate | None, sizes: Sequence[str]) -> Estimate | None:
        if est is None:
            return None
        flagged = [sz for sz in dict.fromkeys(sizes) if (tuning or {}).get(sz)]
        return not_identified(
            est, [f"at {sz}, {tuning_note(list((tuning or {})[sz]))}" for sz in flagged]
        )

    rows.append(
        {
            "name": "t/tau_midrun/all",
            "point": gated(
                _with_coverage(seed_estimate(mean, level=level, support=(-1.0, 1.0)), mean, stated),
                [str(sz) for sz, _ in cells],
            ),
            "unit": "",
            "description": "Kendall tau between the ranking halfway through training and at the "
            f"end, per seed averaged over every cell with complete curves ({where}); mean over "
            "seeds",
        }
    )
    if ranked is not None and (str(ranked[0]), float(ranked[1])) in cells:
        s, m = str(ranked[0]), float(ranked[1])
        rows.append(
            {
                "name": f"t/tau_midrun/{s}/{m:g}x",
                "point": gated(
                    _with_coverage(
                        seed_estimate(cells[(s, m)], level=level, support=(-1.0, 1.0)),
                        cells[(s, m)],
                        stated,
                    ),
                    [s],
                ),
                "unit": "",
                "description": "Kendall tau between the ranking halfway through training and "
                f"at the end at {s}, {m:g}x, per seed; mean over seeds",
            }
        )
    rows += _coverage_rows(cov, "tau", "the per-cell mid-run Kendall taus", level)
    return rows, cov


def transfer(
    table: pd.DataFrame,
    *,
    ds: xr.Dataset | None = None,
    baseline: str = "adamw",
    suffix: str = "@adamw",
    level: float = 0.95,
    seed: int = 0,
    sims: int = 4000,
    tuning: Mapping[str, Sequence[str]] | None = None,
) -> tuple[list[Row], pd.DataFrame]:
    """The transfer ratios per seed (module docstring) and their coverage table.

    Parameters
    ----------
    table
        One row per run: ``optimizer, model_size, data_multiple, seed, loss``, the
        transfer arm's runs named ``<optimizer><suffix>``
        (:func:`.controls.transfer_table`).
    ds
        A sweep with the transfer arm (``transfer_final_loss``): its runs are appended to
        ``table`` under those names.
    tuning
        ``size -> flagged tuned settings`` (:func:`.tuning_curves.size_flags`): a ratio
        at a flagged size is not identified (its "own optimum" may not be one).

    Returns
    -------
    rows, coverage
        Record rows (none without transfer runs); :func:`.seedwise.deviation_coverage`
        of the per-cell differences.
    """
    if ds is not None and "transfer_final_loss" in ds:
        from scalinglab.studies.optimizers.controls import transfer_table

        table = pd.concat([table, transfer_table(ds)], ignore_index=True)
    ps = seedwise.per_seed(table, baseline=baseline)
    seeds = seedwise.by_seed(ps)
    trans = ps[ps.optimizer.str.endswith(suffix)]
    jobs: list[tuple[str, str, list[float]]] = []
    diffs: list[np.ndarray] = []
    for (name, s), g in trans.groupby(["optimizer", "model_size"], sort=False):
        o = str(name).removesuffix(suffix)
        own = ps[(ps.optimizer == o) & (ps.model_size == s)]
        ms = sorted(set(map(float, g.data_multiple)) & set(map(float, own.data_multiple)))
        if not ms:
            continue
        jobs.append((o, str(s), ms))
        for m in ms:
            pair = [(d.get((str(name), str(s), m), np.nan), d.get((o, str(s), m), np.nan))
                    for d in seeds.values()]  # fmt: skip
            diffs.append(np.array([a - b for a, b in pair]))
    if not jobs:
        return [], pd.DataFrame()
    cov = seedwise.deviation_coverage(diffs, level=level, sims=sims, seed=seed)
    stated = _stated(cov)
    rows: list[Row] = []
    for o, s, ms in jobs:
        est, x = seedwise.summary(seeds, seedwise.transfer(o, s, ms, suffix), level=level)
        if est is None or not np.isfinite(est.point):
            continue
        point = _with_coverage(est, x, stated)
        if point is not None and (tuning or {}).get(s):
            point = not_identified(point, [tuning_note(list((tuning or {})[s]))])
        rows.append(
            {
                "name": f"t/transfer_ratio/{o}/{s}",
                "point": point,
                "unit": "x",
                "description": f"{o}'s speedup with {baseline}'s tuned lr and weight decay over "
                f"its speedup at its own optimum at {s} (geometric mean over "
                f"{', '.join(f'{m:g}x' for m in ms)}), per seed; below 1 the transfer deflates it",
            }
        )
    rows += _coverage_rows(cov, "transfer", "the transferred minus tuned log speedups", level)
    return rows, cov


def schedule_gain(
    ds: xr.Dataset, *, level: float = 0.95, seed: int = 0, sims: int = 4000
) -> tuple[list[Row], pd.DataFrame]:
    """FPO-5b per seed: the mid-run Kendall tau under the control schedule minus under the
    main one, per control cell and seed (both taus of the seed's own runs), and its mean
    over the control cells per seed (``pooled``, with two or more cells), each with a t
    interval over the seeds clipped to ``[-2, 2]``.

    Parameters
    ----------
    ds
        The sweep with the control arm: ``loss`` and ``control_loss`` ``(optimizer,
        model_size, data_multiple, seed, step)``, ``attrs["control_schedule"]``.

    Returns
    -------
    rows, coverage
        ``t/tau_gain_<schedule>/<size>/<m>x``, ``t/tau_gain_<schedule>/pooled`` and
        ``coverage/{t,percentile}_tau_gain/n3`` (simulated on the per-cell gains'
        deviations); none without a control arm.
    """
    if "control_loss" not in ds:
        return [], pd.DataFrame()
    dims = ("optimizer", "seed", "step")
    sched = str(ds.attrs.get("control_schedule", "control")) or "control"
    cells: dict[tuple[str, float], np.ndarray] = {}
    for s in map(str, ds.model_size.values):
        for m in map(float, ds.data_multiple.values):
            ctrl = ds.control_loss.sel(model_size=s, data_multiple=m).transpose(*dims).values
            if not np.isfinite(ctrl).any():
                continue
            main = ds.loss.sel(model_size=s, data_multiple=m).transpose(*dims).values
            gain = tau_per_seed(ctrl) - tau_per_seed(main)
            if np.isfinite(gain).all():
                cells[(s, m)] = gain
    if not cells:
        return [], pd.DataFrame()
    cov = seedwise.deviation_coverage(list(cells.values()), level=level, sims=sims, seed=seed)
    stated = _stated(cov)
    rows: list[Row] = []

    def add(name: str, values: np.ndarray, where: str) -> None:
        est = seed_estimate(values, level=level, support=(-2.0, 2.0))
        rows.append(
            {
                "name": name,
                "point": _with_coverage(est, values, stated),
                "unit": "",
                "description": f"Kendall tau halfway vs end under the {sched} schedule minus "
                f"under the main one, per seed, {where}; mean over seeds",
            }
        )

    for (s, m), g in cells.items():
        add(f"t/tau_gain_{sched}/{s}/{m:g}x", g, f"at {s}, {m:g}x")
    if len(cells) >= 2:
        where = ", ".join(f"{s} {m:g}x" for s, m in cells)
        add(f"t/tau_gain_{sched}/pooled", np.mean(list(cells.values()), axis=0), f"over {where}")
    rows += _coverage_rows(cov, "tau_gain", "the per-cell tau gains", level)
    return rows, cov
