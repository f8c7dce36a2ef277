"""The optimizer study's findings: every table of :mod:`.analysis`, :mod:`.controls`,
:mod:`.published` and :mod:`.rising` as rows the notebook records with one call each.

A row is the keyword arguments of :func:`scalinglab.record.record` (``name``, ``point``
an :class:`~scalinglab.estimate.Estimate` with the level, method and resamples the
analysis used, and ``unit``/``description``/``identified``/``headline``/``note``), so the
notebook writes ``for row in rows: record(**row)`` and never re-types how an interval was
made. An interval with a missing or unbounded end is no interval: the row keeps the point
alone, says the finite end in its description, and is no headline. A point that is not
finite gives no row.

:func:`speedups` computes the speedup table either way the data come (seeds resampled, or
the paper's one run per cell with the law-residual noise), :func:`final_losses` the mean
final loss per cell, and :func:`claim_values` the values the claims file
``notebooks/claims/optimizer_comparison.toml`` is filled with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.fitting.speedup import SpeedupResult, compute_speedups
from scalinglab.stats.calibration import t_interval
from scalinglab.studies.optimizers import published
from scalinglab.training.optimizers import OPTIMIZER_TABLE

#: Speedup intervals when seeds are resampled.
OVER_SEEDS = "percentile bootstrap over seeds (baseline fit refitted per replicate)"
#: Speedup intervals for one run per cell (the paper's table).
PARAMETRIC = "parametric bootstrap: law-residual loss noise, AdamW refitted per replicate"
#: Final losses: the mean over seeds (a Student t interval: a percentile bootstrap of a
#: 3-seed mean covers about 0.73, simulated on these sweeps' own spread).
LOSS_OVER_SEEDS = "Student t over seeds"
RISING = "percentile bootstrap over seeds of the paired change"
TAU_SEEDS = "percentile bootstrap over seeds (jointly for all optimizers)"
#: Why a Kendall tau over the seeds can have no interval (used only when it has zero width).
TAU_FIXED = (
    "every seed resample gives the same two rankings: a Kendall tau over a few optimizers "
    "takes a few values only, and resampling these seeds does not move it"
)
TAU_GAIN = "percentile bootstrap over seeds (both schedules resampled together)"
#: Why a size's speedups are not identified.
E_AT_BOUND = "E at its bound 0 in the point fit or in 20%+ of refits"
TUNING_EDGE = "tuned on the edge of what its tuning tried"

Row = dict[str, Any]


@dataclass(frozen=True)
class Speedups:
    """The speedup table and what decides how far it can be read.

    Attributes
    ----------
    result
        :class:`~scalinglab.fitting.speedup.SpeedupResult`: ``cells`` (optimizer,
        model_size, data_multiple, speedup, lo, hi, status), the baseline ``fits`` and
        the bootstrap replicates.
    identified
        ``size -> whether the size's speedups are identified``: the baseline's asymptote
        E is identified there and (after :func:`gate_tuning`) no tuned setting the size
        rests on is flagged.
    method
        How every speedup interval was made (:data:`OVER_SEEDS` or :data:`PARAMETRIC`).
    one_run
        True when every cell holds one run (no seeds to resample).
    sigma, sigma_dof
        The law-residual loss noise and its degrees of freedom (one run per cell only).
    seeds
        The interval's ``n``: the fewest seeds of any (optimizer, size, multiple) cell,
        the units the bootstrap resamples (None for one run per cell: the parametric
        bootstrap resamples no units; its coverage is measured on the table's own laws
        instead, :mod:`.published_coverage`).
    on_data
        ``finding name -> method text`` for the findings whose interval's coverage was
        simulated on this table (:func:`.published.on_data_methods`: the
        paper's table, where a measurement is committed); empty otherwise.
    e_identified
        ``size -> whether the baseline's asymptote E is identified`` (None: as
        :attr:`identified`, no tuning gate applied).
    tuning
        ``size -> the flagged tuned settings its findings rest on``
        (:func:`.tuning_curves.size_flags`; empty without the gate).
    misfit
        ``size -> why the baseline's law misses its own losses there``
        (:func:`.matched_report.law_misfit`; empty without :func:`gate_misfit`).
    """

    result: SpeedupResult
    identified: dict[str, bool]
    method: str
    one_run: bool
    sigma: float | None = None
    sigma_dof: int | None = None
    seeds: int | None = None
    on_data: Mapping[str, str] = dataclasses.field(default_factory=dict)
    e_identified: dict[str, bool] | None = None
    tuning: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    misfit: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)

    def method_of(self, name: str) -> str:
        """The method text of finding ``name``: :attr:`method`, with the coverage measured
        on these data where there is one (:attr:`on_data`)."""
        return self.on_data.get(name, self.method)

    def e_ok(self, size: str) -> bool:
        """Whether the baseline's E is identified at ``size`` (tuning aside)."""
        return (self.e_identified if self.e_identified is not None else self.identified)[size]

    def why_not(self, size: str) -> str | None:
        """Why ``size``'s speedups are not identified (None: they are)."""
        if self.identified[size]:
            return None
        why = [] if self.e_ok(size) else [E_AT_BOUND]
        if self.tuning.get(size):
            why.append(tuning_note(self.tuning[size]))
        why.extend(self.misfit.get(size, ()))
        return "; ".join(why) or None


def tuning_note(flags: Sequence[str], *, show: int = 2) -> str:
    """One line for a size's flagged tuned settings (the first ``show``, then a count)."""
    more = f" and {len(flags) - show} more" if len(flags) > show else ""
    return f"{TUNING_EDGE}: " + "; ".join(flags[:show]) + more


def gate_tuning(sp: Speedups, flags: Mapping[str, Sequence[str]]) -> Speedups:
    """``sp`` with every size whose tuning is flagged not identified.

    ``flags``: :func:`.tuning_curves.size_flags`. A speedup over a baseline tuned less
    than it could be (or of an optimizer tuned less) measures the tuning, so a size with
    a flagged setting keeps its speedups, and every finding and claim on them, *not
    identified*; :attr:`Speedups.e_identified` keeps the asymptote's own status.
    """
    e = dict(sp.identified)
    return dataclasses.replace(
        sp,
        identified={s: ok and not flags.get(s) for s, ok in e.items()},
        e_identified=e,
        tuning={s: tuple(flags.get(s, ())) for s in e},
    )


def gate_misfit(sp: Speedups, misfit: Mapping[str, Sequence[str]]) -> Speedups:
    """``sp`` with every size where the baseline's law misses its own losses not
    identified (``misfit``: :func:`.matched_report.law_misfit`): every speedup there
    inverts that law, so it reads the misfit as much as the optimizer. Applied after
    :func:`gate_tuning`; :attr:`Speedups.e_identified` keeps the asymptote's own status.
    """
    e = dict(sp.e_identified if sp.e_identified is not None else sp.identified)
    return dataclasses.replace(
        sp,
        identified={s: ok and not misfit.get(s) for s, ok in sp.identified.items()},
        e_identified=e,
        misfit={s: tuple(misfit[s]) for s in sp.identified if misfit.get(s)},
    )


def seed_count(table: pd.DataFrame) -> int | None:
    """The fewest runs (seeds) of any (optimizer, model_size, data_multiple) cell of
    ``table``: the ``n`` a bootstrap over seeds rests on (None for an empty table)."""
    if not len(table):
        return None
    return int(table.groupby(["optimizer", "model_size", "data_multiple"]).size().min())


def speedups(table: pd.DataFrame, *, baseline: str, reps: int, level: float, seed: int) -> Speedups:
    """Every run's speedup over ``baseline`` with bootstrap CIs.

    ``table``: one row per run (optimizer, model_size, data_multiple, loss[, seed]). With
    one run per (optimizer, size, multiple) the noise is the pooled residual spread of the
    law fits and a parametric bootstrap refits the baseline
    (:func:`.published.noise_bootstrap`); else seeds are resampled
    (:func:`scalinglab.fitting.speedup.compute_speedups`).
    """
    one_run = bool((table.groupby(["optimizer", "model_size", "data_multiple"]).size() == 1).all())
    if one_run:
        sigma, dof = published.law_noise(table)
        res, at_bound = published.noise_bootstrap(
            table, sigma=sigma, baseline=baseline, reps=reps, seed=seed, level=level
        )
        on_data = published.on_data_methods(table, method=PARAMETRIC, level=level)
        ident = published.e_identified(res, at_bound)
        return Speedups(res, ident, PARAMETRIC, True, sigma, dof, on_data=on_data)
    res = compute_speedups(table, baseline=baseline, bootstrap=reps, level=level, seed=seed)
    return Speedups(
        res, published.e_identified(res, None), OVER_SEEDS, False, seeds=seed_count(table)
    )


def final_losses(table: pd.DataFrame, *, level: float) -> pd.DataFrame:
    """Mean final loss per (optimizer, model_size, data_multiple) with a Student t
    interval over seeds (NaN ends with fewer than two seeds).

    Returns
    -------
    pandas.DataFrame
        One row per cell, in the table's order: optimizer, model_size, data_multiple,
        loss, lo, hi, seeds.
    """
    rows = []
    for (o, s, m), g in table.groupby(["optimizer", "model_size", "data_multiple"], sort=False):
        v = g.loss.to_numpy()
        lo = hi = float("nan")
        if len(v) >= 2:
            lo, hi = (float(e) for e in t_interval(v, level=level))
        rows.append(
            {
                "optimizer": o,
                "model_size": s,
                "data_multiple": m,
                "loss": v.mean(),
                "lo": lo,
                "hi": hi,
                "seeds": len(v),
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Overview:
    """What the sweep ran: ``models`` (params, width, layers, batch per size), ``text``
    (corpus, schedule, failures in words), ``failed`` (status of runs neither ok nor left
    out by design), ``runs`` (final runs per optimizer x size), ``epochs`` (passes over the
    training stream per run, size x multiple; NaN where no run), ``total`` (final runs)."""

    models: pd.DataFrame
    text: str
    failed: pd.Series
    runs: pd.DataFrame
    epochs: pd.DataFrame
    total: int


def overview(ds: xr.Dataset, planned: np.ndarray) -> Overview:
    """:class:`Overview` of a sweep's dataset; ``planned``: the sweep's planned epochs
    ``(size, multiple)``, used when the dataset does not carry its own."""
    models = pd.DataFrame(
        {
            "non-embedding params": ds.n_params.values,
            "d_model": ds.d_model.values,
            "layers": ds.n_layer.values,
            "batch (sequences)": ds.batch_size.values,
        },
        index=ds.model_size.values,
    )
    text = (
        f"Corpus `{ds.attrs['corpus_sources']}`: {ds.attrs['corpus_train_tokens']:,} training "
        f"and {ds.attrs['corpus_heldout_tokens']:,} held-out byte tokens, SHA-256 "
        f"`{ds.attrs['corpus_hash'][:16]}...`. Schedule: {ds.attrs['schedule']}; "
        f"{int(ds.attrs['n_failed'])} failed or diverged runs; "
        f"{int(ds.attrs.get('n_skipped', 0))} (optimizer, size, budget, seed) cells left "
        "out by design."
    )
    status = ds.status.to_series()
    ran = (status != "skipped").groupby(["optimizer", "model_size"], sort=False).sum().unstack()
    ran_cell = (ds.status != "skipped").any(["optimizer", "seed"])
    epochs = pd.DataFrame(
        np.where(
            ran_cell.transpose("model_size", "data_multiple").values,
            np.asarray(ds.epochs if "epochs" in ds.coords else planned),
            np.nan,
        ),
        index=ds.model_size.values,
        columns=ds.data_multiple.values,
    )
    return Overview(
        models,
        text,
        status[(status != "ok") & (status != "skipped")],
        ran.rename_axis(columns="final runs per (optimizer, size)"),
        epochs.rename_axis(index="model_size", columns="epochs per run at data multiple"),
        int((status != "skipped").sum()),
    )


def size_labels(
    ds: xr.Dataset | None, sizes: Sequence[str], optimizers: Iterable[str]
) -> tuple[dict[str, float] | None, dict[str, str]]:
    """Non-embedding parameters per size and each optimizer's family (matrix/scalar).

    From the sweep's dataset; for the paper's table, its published sizes and families;
    for another table, sizes that read as numbers (else None: no trend with size) and
    the families of optimizers this project knows.
    """
    if ds is not None:
        n = dict(zip(ds.model_size.values, ds.n_params.values.astype(float), strict=True))
        return n, {o: OPTIMIZER_TABLE[o]["family"] for o in ds.optimizer.values}
    names = list(dict.fromkeys(optimizers))
    if set(sizes) <= set(published.PAPER_PARAMS):
        fam = {o: published.PAPER_FAMILIES[o] for o in names if o in published.PAPER_FAMILIES}
        return {s: published.PAPER_PARAMS[s] for s in sizes}, fam
    try:
        n_params: dict[str, float] | None = {s: float(s) for s in sizes}
    except ValueError:
        n_params = None
    return n_params, {o: OPTIMIZER_TABLE[o]["family"] for o in names if o in OPTIMIZER_TABLE}


def trend_sizes(sizes: Sequence[str], identified: Mapping[str, bool]) -> tuple[list[str], bool]:
    """The sizes a trend with size is fitted over, and whether it is identified: the sizes
    whose baseline E is identified when at least three are (a trend, not one ratio), else
    every size (and then the trend is not identified)."""
    ident = [s for s in sizes if identified.get(s)]
    use = ident if len(ident) >= 3 else list(sizes)
    return use, all(identified.get(s) for s in use)


def soap_name(table: pd.DataFrame) -> str:
    """SOAP's name in the table: the paper's ``soape`` or this project's ``soap``."""
    return "soape" if "soape" in set(table.optimizer) else "soap"


def shared_multiples(table: pd.DataFrame, a: str, b: str) -> list[float]:
    """The data multiples both ``a`` and ``b`` ran (else every multiple of the table)."""
    both = set(table[table.optimizer == a].data_multiple) & set(
        table[table.optimizer == b].data_multiple
    )
    return sorted(both) or sorted(table.data_multiple.unique())


def ranked_cell(tau: pd.DataFrame, ds: xr.Dataset) -> tuple[str, float]:
    """The largest size, and its largest budget, at which every optimizer finished its runs
    (``tau`` from :func:`.analysis.ranking_agreement`); the sweep's last cell without one."""
    ranked = set(tau.model_size.unique()) if len(tau) else set()
    big = next((s for s in ds.model_size.values[::-1] if s in ranked), ds.model_size.values[-1])
    most = (
        float(tau[tau.model_size == big].data_multiple.max())
        if len(tau)
        else float(ds.data_multiple.values[-1])
    )
    return str(big), most


class Rows:
    """Turns the study's tables into record rows with one level and resample count.

    Parameters
    ----------
    level
        Two-sided level of every interval.
    reps
        Bootstrap resamples of every interval.
    baseline
        The optimizer the speedups are over.
    headlines
        False: no row is a headline (a design whose claims are decided on other findings,
        e.g. the walk protocol's ``t/`` findings, does not headline these).
    """

    def __init__(self, *, level: float, reps: int, baseline: str, headlines: bool = True) -> None:
        self.level = level
        self.reps = reps
        self.baseline = baseline
        self.headlines = headlines

    def row(
        self,
        name: str,
        point: Any,
        lo: Any = None,
        hi: Any = None,
        *,
        method: str,
        n: int | None = None,
        **kw: Any,
    ) -> Row | None:
        """One row: ``point`` with its interval ``[lo, hi]`` made by ``method`` over ``n``
        units (seeds; None: not known, or no units resampled); None for a point that is
        missing or not finite."""
        if point is None or not np.isfinite(point):
            return None
        ok = lo is not None and hi is not None and bool(np.isfinite([lo, hi]).all())
        if not ok and lo is not None and np.isfinite(lo) and hi is not None and np.isnan(hi):
            kw["description"] = kw.get("description", "") + f" (CI [{lo:.3g}, unbounded above])"
        if not ok or not self.headlines:
            kw["headline"] = False
        if not ok:
            est = Estimate(float(point))
        else:
            est = Estimate(
                float(point),
                lo,
                hi,
                level=self.level,
                method=method,
                resamples=self.reps if "bootstrap" in method else None,
                n=None if n is None or int(n) < 1 else int(n),
            )
        return {"name": name, "point": est, **kw}

    @staticmethod
    def _keep(rows: Iterable[Row | None]) -> list[Row]:
        return [r for r in rows if r is not None]

    def rising(self, rise: pd.DataFrame) -> list[Row]:
        """Cells whose seed-mean loss rises with twice the data (:func:`.rising.diagnose`)."""
        return self._keep(
            self.row(
                f"rising/{r['optimizer']}/{r['model_size']}/{r['from_multiple']:g}x-"
                f"{r['to_multiple']:g}x",
                r["delta"],
                r["delta_lo"],
                r["delta_hi"],
                method=RISING,
                n=len(r["seed_deltas"]),
                unit="nats/token",
                description=f"cause: {r['cause']}; per seed "
                + ", ".join(f"{x:+.3f}" for x in r["seed_deltas"])
                + f"; training loss {r['train_delta']:+.3f}; {r['epochs']:.2f} epochs; "
                f"lr {r['lr']:g}{' (grid edge)' if r['lr_on_grid_edge'] else ''}",
            )
            for r in rise.to_dict("records")
        )

    def losses(self, final: pd.DataFrame) -> list[Row]:
        """Final losses (:func:`final_losses`); the description says over how many seeds."""
        return self._keep(
            self.row(
                f"loss/{r.optimizer}/{r.model_size}/{r.data_multiple:g}x",
                r.loss,
                r.lo,
                r.hi,
                method=LOSS_OVER_SEEDS,
                n=r.seeds,
                unit="nats/byte",
                description="final held-out loss, "
                + ("mean over seeds" if r.seeds > 1 else "one run"),
            )
            for r in final.itertuples()
        )

    def baseline_fits(self, sp: Speedups) -> list[Row]:
        """The baseline's fitted asymptote E per size (a point; identified or not)."""
        return self._keep(
            self.row(
                f"baseline_fit/E/{s}",
                f["E"],
                method=sp.method,
                n=sp.seeds,
                identified=sp.e_ok(s),
                unit="nats",
                note=None if sp.e_ok(s) else E_AT_BOUND,
                description=f"{self.baseline}'s fitted asymptote E at {s}",
            )
            for s, f in sp.result.fits.items()
            if f["status"] == "ok"
        )

    def speedups(self, sp: Speedups) -> list[Row]:
        """Every finite speedup cell."""
        cells = sp.result.cells
        return self._keep(
            self.row(
                f"speedup/{r.optimizer}/{r.model_size}/{r.data_multiple:g}x",
                r.speedup,
                r.lo,
                r.hi,
                method=sp.method,
                n=sp.seeds,
                unit="x",
                identified=sp.identified[r.model_size],
                note=sp.why_not(r.model_size),
                description=f"data-efficiency speedup over {self.baseline} (D_eff / D)",
            )
            for r in cells[cells.status == "ok"].itertuples()
        )

    def noise_floor(self, floor: pd.DataFrame, sp: Speedups) -> list[Row]:
        """Minimum detectable speedups (:func:`.controls.noise_floor`)."""
        return self._keep(
            self.row(
                f"noise/mde/{r.model_size}",
                r.mde,
                method=sp.method,
                n=sp.seeds,
                unit="x",
                identified=sp.identified[r.model_size],
                note=sp.why_not(r.model_size),
                description=f"minimum detectable speedup (80% power) from {self.baseline}'s "
                f"speedup over itself, interval [{r.lo:.3g}, {r.hi:.3g}]",
            )
            for r in floor.itertuples()
        )

    def per_size(self, per_size: pd.DataFrame, sp: Speedups) -> list[Row]:
        """Geometric-mean speedup per (optimizer, size) (:func:`.analysis.speedup_by_size`);
        Muon's are headlines where identified."""
        return self._keep(
            self.row(
                f"speedup_mean/{r.optimizer}/{r.model_size}",
                r.speedup,
                r.lo,
                r.hi,
                method=sp.method_of(f"speedup_mean/{r.optimizer}/{r.model_size}"),
                n=sp.seeds,
                unit="x",
                identified=sp.identified[r.model_size],
                note=sp.why_not(r.model_size),
                headline=r.optimizer == "muon" and sp.identified[r.model_size],
                description="geometric mean of the speedup over data budgets",
            )
            for r in per_size.itertuples()
        )

    def size_slopes(
        self,
        trend: pd.DataFrame,
        sp: Speedups,
        *,
        sizes: Sequence[str],
        identified: bool,
        multiples: Sequence[float],
    ) -> list[Row]:
        """Slope of log speedup per log N (:func:`.analysis.size_trend`) over ``sizes`` and
        the shared budgets ``multiples``."""
        over = ", ".join(f"{m:g}x" for m in multiples)
        return self._keep(
            self.row(
                f"size_slope/{r.optimizer}",
                r.slope,
                r.lo,
                r.hi,
                method=sp.method_of(f"size_slope/{r.optimizer}"),
                n=sp.seeds,
                headline=r.optimizer == "muon",
                identified=identified,
                note=None if identified else "rests on a size whose speedups are not identified",
                description="slope of log speedup per log N (negative: the speedup shrinks), "
                f"over the budgets every size ran ({over}) at " + ", ".join(sizes),
            )
            for r in trend[trend.optimizer != self.baseline].itertuples()
        )

    def family_gap(self, gap: pd.DataFrame, sp: Speedups, sizes: Sequence[str]) -> list[Row]:
        """Matrix over scalar family (:func:`.analysis.family_gap`); headlines at the
        smallest and largest size."""
        return self._keep(
            self.row(
                f"matrix_over_scalar/{r.model_size}",
                r.ratio,
                r.lo,
                r.hi,
                method=sp.method_of(f"matrix_over_scalar/{r.model_size}"),
                n=sp.seeds,
                unit="x",
                headline=r.model_size in (sizes[0], sizes[-1]),
                identified=sp.identified[r.model_size],
                note=sp.why_not(r.model_size),
                description=f"geo-mean speedup of matrix ({r.matrix}) over scalar ({r.scalar}) "
                "methods",
            )
            for r in gap.itertuples()
        )

    def catch_up(
        self, catch: pd.DataFrame, sp: Speedups, *, follower: str, multiples: Sequence[float]
    ) -> list[Row]:
        """SOAP's speedup relative to Muon's, high over low budget (:func:`.published.catch_up`)."""
        low, high = multiples[0], multiples[-1]
        return self._keep(
            self.row(
                f"catch_up/{follower}_vs_muon/{r.model_size}",
                r.change,
                r.lo,
                r.hi,
                method=sp.method_of(f"catch_up/{follower}_vs_muon/{r.model_size}"),
                n=sp.seeds,
                unit="x",
                identified=sp.identified[r.model_size],
                note=sp.why_not(r.model_size),
                description=f"SOAP's speedup relative to Muon's at {high:g}x over the same at "
                f"{low:g}x (above 1: SOAP catches up with more data)",
            )
            for r in catch.itertuples()
        )

    def transfer(self, transfer: pd.DataFrame, sp: Speedups) -> list[Row]:
        """Speedup with the baseline's lr and weight decay over the tuned one
        (:func:`.controls.transfer_effect`)."""
        return self._keep(
            self.row(
                f"transfer_ratio/{r.optimizer}/{r.model_size}",
                r.ratio,
                r.lo,
                r.hi,
                method=sp.method,
                n=sp.seeds,
                unit="x",
                identified=sp.identified[r.model_size],
                note=sp.why_not(r.model_size),
                description=f"geo-mean speedup with {self.baseline}'s lr and weight decay over "
                "the speedup at the optimizer's own tuned optimum",
            )
            for r in transfer.itertuples()
        )

    def tau_midrun(self, tau: pd.DataFrame, big: str, most: float) -> list[Row]:
        """Kendall tau of the seed-mean rankings halfway vs the end at (``big``, ``most``),
        a percentile bootstrap over seeds (where the design has seeds to read it per seed,
        ``t/tau_midrun/...`` of :func:`.seed_t_arms.midrun` decides FPO-5)."""
        mid = tau[
            (tau.model_size == big)
            & (tau.data_multiple == most)
            & (tau.step == tau.step.max() // 2)
        ]
        return self._keep(
            self.row(
                f"ranking/tau_midrun/{big}/{most:g}x",
                r.tau,
                r.lo,
                r.hi,
                method=TAU_SEEDS,
                n=getattr(r, "seeds", None),
                headline=False,
                description="Kendall tau between the seed-mean ranking halfway through "
                "training and at the end (a percentile bootstrap over seeds)",
                no_interval=TAU_FIXED,
            )
            for r in mid.itertuples()
        )

    def schedule_control(self, sched: pd.DataFrame) -> list[Row]:
        """Tau gain of the control schedule (:func:`.controls.schedule_control`)."""
        return self._keep(
            self.row(
                "ranking/tau_gain_"
                + r.schedule
                + "/"
                + (
                    "pooled" if r.model_size == "pooled" else f"{r.model_size}/{r.data_multiple:g}x"
                ),
                r.diff,
                r.lo,
                r.hi,
                method=TAU_GAIN,
                n=getattr(r, "seeds", None),
                description=f"Kendall tau halfway vs end under the {r.schedule} schedule minus "
                "the same under the main schedule",
            )
            for r in sched.itertuples()
        )

    def wallclock(self, wc: pd.DataFrame, sp: Speedups) -> list[Row]:
        """Step-time ratios and wall-clock speedups (:func:`.analysis.wallclock_table`)."""
        out: list[Row | None] = []
        for r in wc[wc.optimizer != self.baseline].itertuples():
            out.append(
                self.row(
                    f"step_time_ratio/{r.optimizer}/{r.model_size}",
                    r.time_ratio,
                    r.ratio_lo,
                    r.ratio_hi,
                    method=r.ratio_method,
                    unit="x",
                    description=f"seconds per step over {self.baseline}'s",
                )
            )
            out.append(
                self.row(
                    f"wallclock_speedup/{r.optimizer}/{r.model_size}",
                    r.wallclock_speedup,
                    r.wallclock_lo,
                    r.wallclock_hi,
                    method=sp.method,
                    n=sp.seeds,
                    unit="x",
                    identified=sp.identified[r.model_size],
                    note=sp.why_not(r.model_size),
                    description="token speedup / step-time ratio (replicates paired)",
                )
            )
        return self._keep(out)


def claim_values(
    recorded: Iterable[str],
    *,
    sizes: Sequence[str],
    identified: Mapping[str, bool],
    sweep: bool,
    follower: str,
    multiples: Sequence[float],
    ranked: tuple[str, float] | None,
    matched: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The values ``notebooks/claims/optimizer_comparison.toml`` is filled with.

    Parameters
    ----------
    recorded
        Names of the findings recorded so far.
    sizes
        Model sizes, smallest first; ``identified``: whether each size's E is identified.
    sweep
        True for this project's sweep (design ``"sweep"``); else a table of final losses:
        design ``"paper"`` when its sizes are the paper's, else ``"table"``.
    follower, multiples
        SOAP's name and the budgets SOAP and Muon share (:func:`shared_multiples`).
    ranked
        The (size, multiple) of the mid-run ranking (:func:`ranked_cell`), None without
        checkpoints.
    matched
        For a walk-protocol sweep, :func:`.matched_report.claim_values`: its values
        replace these (design ``"matched"``).

    Returns
    -------
    dict
        ``design``; ``small`` (the smallest size whose E is identified, else the
        smallest) and ``large``; ``soap``, ``low``/``high`` (formatted multiples);
        ``big``/``most`` (the ranked cell); ``tau_gain`` and ``transfer`` (the finding
        that decides FPO-5b and FPO-7, or a name never recorded: then untested).
    """
    names = set(recorded)
    # per seed with a t interval (:mod:`.seed_t_arms`); the percentile ones decide nothing
    gain = sorted(n for n in names if n.startswith("t/tau_gain_"))
    pooled = [n for n in gain if n.endswith("/pooled")]
    # the largest size at which Muon's transfer ratio was recorded per seed with a t
    # interval (:mod:`.seed_t_arms`; the percentile one over 3 seeds decides nothing)
    moved = [f"t/transfer_ratio/muon/{s}" for s in sizes if f"t/transfer_ratio/muon/{s}" in names]
    if sweep:
        design = "sweep"
    elif set(sizes) <= set(published.PAPER_PARAMS):
        design = "paper"
    else:
        design = "table"
    big, most = ranked if ranked is not None else ("", float("nan"))
    out = {
        "design": design,
        "small": next((s for s in sizes if identified.get(s)), sizes[0]),
        "large": sizes[-1],
        "soap": follower,
        "low": f"{multiples[0]:g}",
        "high": f"{multiples[-1]:g}",
        "big": big,
        "most": f"{most:g}",
        "tau_gain": (pooled or gain or ["t/tau_gain (no schedule control)"])[-1],
        "transfer": (moved or ["t/transfer_ratio/muon (no transfer arm)"])[-1],
        "transfer_at": f" at {moved[-1].split('/')[-1]}" if moved else "",
    }
    return {**out, **matched} if matched is not None else out
