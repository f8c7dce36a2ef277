"""Data-efficiency speedup over a baseline optimizer, by the paper's formula, with CIs.

For each model size the baseline's final loss is fitted against the data multiple
``D`` (Chinchilla units) with the fitting engine's ``power_offset`` law
``L(D) = A D^-alpha + E``. An optimizer that reaches loss ``L`` with ``D`` would
need ``D_eff = ((L - E) / A)^(-1 / alpha)`` with the baseline, and its speedup is
``D_eff / D`` (Wen et al. 2025, section 4).

- Seeds: an optimizer's loss in a cell (size, multiple) is the mean over its seeds.
  The baseline curve is fitted to every seed's point with least squares in linear
  space (``objective="ls"``, which on a balanced design is the fit to the means),
  with the seeds as groups.
- CIs (when at least two seeds): the baseline fit is group-bootstrapped by the
  fitting engine (seeds resampled, ``reps`` refits); each cell's mean is
  bootstrapped over its own seeds (:func:`scalinglab.stats.bootstrap.resample_groups`,
  one keyed generator per cell); replicate ``r`` pairs refit ``r`` with mean ``r``.
  The two resamplings are independent, which ignores any correlation between runs
  that share a seed (conservative when it is positive). Percentile intervals.
- No silent inf or NaN: a loss at or below the fitted asymptote ``E`` has no finite
  ``D_eff``; its speedup is ``None`` with status ``"below_asymptote"``. A size whose
  baseline has fewer than ``min_points`` distinct multiples (or whose fit fails)
  has no fit, and so has a size whose baseline losses are constant or whose fitted
  curve is flat (``A`` or ``alpha`` 0: no loss maps to a data amount); its cells get
  status ``"no_baseline_fit"`` and the reason is in ``baseline_fits[size]``.
  Replicates below the asymptote make the interval unbounded above: ``hi`` is
  ``None`` and a warning says how many there were.
"""

from __future__ import annotations

import math
import warnings as _warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scalinglab.data.loss_tables import validate_table
from scalinglab.errors import InputError
from scalinglab.stats.bootstrap import keyed_generators, percentile_interval, resample_groups
from scalinglab.textfmt import json_number


def effective_data(
    loss: Any, *, A: float | np.ndarray, alpha: float | np.ndarray, E: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``D_eff = ((L - E) / A)^(-1/alpha)`` where defined.

    ``A``, ``alpha`` and ``E`` are scalars or arrays broadcasting against ``loss``
    (one fit per bootstrap draw, shape ``(reps,)`` against ``loss`` of ``(reps,)``).

    Returns
    -------
    d_eff, ok
        Arrays of ``loss``'s shape; ``ok`` is False (and ``d_eff`` NaN) where
        ``L <= E`` (no finite ``D_eff``) or the inputs are not finite.
    """
    L = np.asarray(loss, dtype=float)
    A, alpha = np.asarray(A, dtype=float), np.asarray(alpha, dtype=float)
    gap = L - E
    ok = np.isfinite(gap) & (gap > 0) & (A > 0) & (alpha > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        safe_a, safe_alpha = np.where(ok, A, 1.0), np.where(ok, alpha, 1.0)
        d = np.where(ok, (np.where(ok, gap, 1.0) / safe_a) ** (-1.0 / safe_alpha), np.nan)
    return d, ok


def _mult_key(m: float) -> str:
    return f"{float(m):g}"


@dataclass
class SpeedupResult:
    """Speedups of every optimizer over ``baseline`` per size and data multiple.

    Attributes
    ----------
    cells
        One row per (optimizer, model_size, data_multiple): ``loss`` (seed mean),
        ``n_seeds``, ``d_eff``, ``speedup``, ``lo``, ``hi``, ``status``, ``n_below``
        (bootstrap replicates below the asymptote).
    fits
        ``size -> {"A", "alpha", "E", "status", ...}`` (None values without a fit).
    draws
        ``(reps, len(cells))`` bootstrap replicates of the speedup (``inf`` below the
        asymptote, NaN where a refit failed); None without bootstrap.
    """

    baseline: str
    cells: pd.DataFrame
    fits: dict[str, dict[str, Any]]
    draws: np.ndarray | None = None
    level: float = 0.95
    reps: int = 0
    seed: int = 0
    warnings: list[str] = field(default_factory=list)
    #: ``size -> FitResult`` of the baseline (None where it could not be fitted); lets a
    #: caller ask whether ``E`` is identified (:func:`scalinglab.fitting.identification`).
    fit_results: dict[str, Any] = field(default_factory=dict)

    def _nest(self, column: str, fn=lambda v: v) -> dict:
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for r in self.cells.itertuples():
            out.setdefault(r.optimizer, {}).setdefault(r.model_size, {})[
                _mult_key(r.data_multiple)
            ] = fn(getattr(r, column) if column else r)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON: ``baseline, baseline_fits, speedup, ci`` plus statuses and details."""

        def ci(r):
            if self.draws is None or r.status != "ok" or (np.isnan(r.lo) and np.isnan(r.hi)):
                return None
            return [json_number(r.lo), json_number(r.hi)]

        return {
            "baseline": self.baseline,
            "baseline_fits": {
                s: {k: (json_number(v) if k in ("A", "alpha", "E") else v) for k, v in f.items()}
                for s, f in self.fits.items()
            },
            "speedup": self._nest("speedup", json_number),
            "ci": self._nest("", ci),
            "status": self._nest("status"),
            "d_eff": self._nest("d_eff", json_number),
            "loss": self._nest("loss", json_number),
            "n_seeds": self._nest("n_seeds", int),
            "level": self.level if self.draws is not None else None,
            "bootstrap": self.reps if self.draws is not None else 0,
            "seed": self.seed,
            "warnings": list(self.warnings),
        }

    def table(self) -> str:
        """A plain-text table of the cells."""
        df = self.cells.copy()
        df["ci"] = [
            (
                ""
                if self.draws is None or r.status != "ok"
                else f"[{r.lo:.3f}, {'inf' if np.isnan(r.hi) else f'{r.hi:.3f}'}]"
            )
            for r in df.itertuples()
        ]
        cols = [
            "optimizer",
            "model_size",
            "data_multiple",
            "loss",
            "n_seeds",
            "d_eff",
            "speedup",
            "ci",
            "status",
        ]
        lines = [df[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}")]
        for s, f in self.fits.items():
            lines.append(
                f"baseline {self.baseline} at {s}: "
                + (
                    f"A={f['A']:.4g} alpha={f['alpha']:.4g} E={f['E']:.4g}"
                    if f["status"] == "ok"
                    else f"{f['status']}: {f['reason']}"
                )
            )
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _order(values: pd.Series) -> list[str]:
    uniq = list(dict.fromkeys(values))
    try:
        return sorted(uniq, key=float)
    except ValueError:
        return uniq


def _fit_baseline(
    base: pd.DataFrame,
    size: str,
    *,
    min_points: int,
    reps: int,
    seed: int,
    level: float,
    objective: str,
    source: Any,
) -> tuple[dict, Any]:
    from scalinglab.fitting import fit

    mults = np.unique(base["data_multiple"])
    info: dict[str, Any] = {
        "A": None,
        "alpha": None,
        "E": None,
        "n_points": int(len(base)),
        "multiples": [float(m) for m in mults],
        "status": "ok",
        "reason": "",
        "warnings": [],
    }
    if len(mults) < min_points:
        info.update(
            status="insufficient_points",
            reason=f"the baseline has {len(mults)} distinct data multiple(s) "
            f"{[float(m) for m in mults]} at size {size!r}; the law "
            f"A D^-alpha + E needs at least {min_points}",
        )
        return info, None
    means = base.groupby("data_multiple")["loss"].mean()
    if means.nunique() == 1:
        info.update(
            status="constant_losses",
            reason=f"the baseline's losses at size {size!r} are constant "
            f"({float(means.iloc[0]):g} at every data multiple): a flat L(D) maps no loss "
            "to a data amount, so no speedup is defined",
        )
        return info, None
    seeds = base["seed"].to_numpy()
    counts = pd.Series(seeds).value_counts()
    boot = reps if (reps and len(counts) >= 2 and (counts >= 2).all()) else 0
    if reps and not boot:
        info["warnings"].append("no CI: the baseline needs >= 2 seeds with >= 2 points each")
    try:
        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore")
            res = fit(
                "power_offset",
                base["data_multiple"].to_numpy(),
                base["loss"].to_numpy(),
                groups=seeds if boot else None,
                objective=objective,
                bootstrap=boot,
                seed=seed,
                level=level,
            )
    except InputError as exc:
        info.update(status="fit_failed", reason=str(exc))
        return info, None
    info.update(
        A=res.params["A"],
        alpha=res.params["alpha"],
        E=res.params["E"],
        warnings=info["warnings"] + list(res.warnings),
    )
    if not (res.params["A"] > 0 and res.params["alpha"] > 0):
        info.update(
            status="flat_fit",
            reason=f"the baseline's fitted L(D) at size {size!r} is flat (A = "
            f"{res.params['A']:.3g}, alpha = {res.params['alpha']:.3g}): it maps no loss to "
            "a data amount, so no speedup is defined",
        )
        return info, None
    return info, res


def _interval_with_inf(col: np.ndarray, level: float) -> tuple[float, float, int]:
    """Percentile interval of replicates that may be ``+inf``; NaN ends are unbounded.

    NaN replicates (failed refits) are dropped. An end whose order statistic falls
    among the ``+inf`` replicates is returned as NaN (unbounded), never as a number.
    """
    vals = np.sort(col[~np.isnan(col)])
    n, k_inf = vals.size, int(np.isinf(vals).sum())
    alpha = (1.0 - level) / 2.0
    finite = np.where(np.isinf(vals), vals[: n - k_inf].max() if k_inf < n else 0.0, vals)
    lo, hi = (float(v) for v in percentile_interval(finite, level=level))
    if k_inf and math.ceil((1.0 - alpha) * (n - 1)) >= n - k_inf:
        hi = math.nan
    if k_inf and math.floor(alpha * (n - 1)) >= n - k_inf:
        lo = math.nan
    return lo, hi, k_inf


def compute_speedups(
    table: pd.DataFrame,
    *,
    baseline: str = "adamw",
    bootstrap: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    min_points: int = 3,
    objective: str = "ls",
    source: str | Path | None = None,
) -> SpeedupResult:
    """Speedup over ``baseline`` of every optimizer, size and multiple of ``table``.

    Parameters
    ----------
    table
        Final losses, one row per run (see
        :func:`~scalinglab.data.loss_tables.validate_table`; validated here).
    baseline
        The optimizer whose ``L(D)`` is fitted per size.
    bootstrap
        Replicates for CIs (0: none; CIs need >= 2 seeds).
    level, seed
        CI level and the seed of every resampling.
    min_points
        Distinct baseline multiples a size needs for its fit (>= 3: the law has 3
        parameters).
    objective
        ``"ls"`` (default) or ``"huber"`` for the baseline fit.
    source
        File name for error messages.
    """
    if min_points < 3:
        raise InputError(f"min_points must be >= 3 (the law has 3 parameters), got {min_points}")
    if bootstrap < 0 or not 0 < level < 1:
        raise InputError(f"need bootstrap >= 0 and level in (0, 1); got {bootstrap}, {level}")
    t = validate_table(table, file=source)
    if baseline not in set(t["optimizer"]):
        raise InputError(
            f"baseline optimizer {baseline!r} is not in the table (optimizers: "
            f"{sorted(set(t['optimizer']))})",
            file=source,
            column="optimizer",
        )
    sizes, opts = _order(t["model_size"]), list(dict.fromkeys(t["optimizer"]))
    opts = [baseline] + [o for o in opts if o != baseline]
    fits, fres, warn = {}, {}, []
    few: list[str] = []  # the few-seeds note is the same at every size: said once
    for s in sizes:
        info, res = _fit_baseline(
            t[(t.optimizer == baseline) & (t.model_size == s)],
            s,
            min_points=min_points,
            reps=bootstrap,
            seed=seed,
            level=level,
            objective=objective,
            source=source,
        )
        fits[s], fres[s] = info, res
        warn += [f"size {s}: {w}" for w in info["warnings"] if not w.startswith("bootstrap: only")]
        few += [w for w in info["warnings"] if w.startswith("bootstrap: only")]
        if info["status"] != "ok":
            warn.append(f"size {s}: {info['reason']}")
    warn += [f"baseline fits and cell means: {w}" for w in dict.fromkeys(few)]
    groups = t.groupby(["optimizer", "model_size", "data_multiple"], sort=False)
    rows, keys = [], []
    for o in opts:
        for s in sizes:
            for m in sorted(
                t.loc[(t.optimizer == o) & (t.model_size == s), "data_multiple"].unique()
            ):
                g = groups.get_group((o, s, m))
                rows.append(
                    {
                        "optimizer": o,
                        "model_size": s,
                        "data_multiple": float(m),
                        "loss": float(g["loss"].mean()),
                        "n_seeds": len(g),
                    }
                )
                keys.append((o, s, m))
    cells = pd.DataFrame(rows)
    cells["d_eff"], cells["speedup"] = np.nan, np.nan
    cells["lo"], cells["hi"], cells["n_below"] = np.nan, np.nan, 0
    status = []
    for i, r in cells.iterrows():
        f = fits[r.model_size]
        if f["status"] != "ok":
            status.append("no_baseline_fit")
            continue
        d, ok = effective_data(r.loss, A=f["A"], alpha=f["alpha"], E=f["E"])
        status.append("ok" if ok else "below_asymptote")
        if ok:
            cells.loc[i, "d_eff"], cells.loc[i, "speedup"] = float(d), float(d) / r.data_multiple
    cells["status"] = status
    for r in cells[cells.status == "below_asymptote"].itertuples():
        warn.append(
            f"{r.optimizer} at size {r.model_size}, {r.data_multiple:g}x: loss "
            f"{r.loss:.4g} is at or below the baseline asymptote E = "
            f"{fits[r.model_size]['E']:.4g}; no finite D_eff (speedup unbounded)"
        )
    draws = None
    if bootstrap and any(res is not None and res.draws is not None for res in fres.values()):
        draws = np.full((bootstrap, len(cells)), np.nan)
        gens = keyed_generators(np.random.default_rng(seed), [f"{o}|{s}|{m!r}" for o, s, m in keys])
        for i, (o, s, m) in enumerate(keys):
            res = fres[s]
            if res is None or res.draws is None:
                continue
            v = groups.get_group((o, s, m))["loss"].to_numpy()
            if len(v) < 2:
                continue
            idx = resample_groups(gens[f"{o}|{s}|{m!r}"], len(v), bootstrap)
            means = v[idx].mean(axis=1)
            names = res.names
            A, al, E = (res.draws[:, names.index(k)] for k in ("A", "alpha", "E"))
            d, ok = effective_data(means, A=A, alpha=al, E=E)
            valid = np.isfinite(A) & np.isfinite(al) & np.isfinite(E)
            draws[:, i] = np.where(ok, d / m, np.where(valid, np.inf, np.nan))
        for i in range(len(cells)):
            col = draws[:, i]
            if cells.loc[i, "status"] != "ok" or np.isnan(col).all():
                continue
            lo, hi, below = _interval_with_inf(col, level)
            cells.loc[i, "lo"], cells.loc[i, "hi"], cells.loc[i, "n_below"] = lo, hi, below
            if below:
                r = cells.loc[i]
                warn.append(
                    f"{r.optimizer} at size {r.model_size}, {r.data_multiple:g}x: "
                    f"{below} of {bootstrap} bootstrap replicates fall below the "
                    "asymptote" + ("; the CI is unbounded above" if np.isnan(hi) else "")
                )
    return SpeedupResult(
        baseline=baseline,
        cells=cells,
        fits=fits,
        draws=draws,
        level=level,
        reps=bootstrap if draws is not None else 0,
        seed=seed,
        warnings=warn,
        fit_results=fres,
    )
