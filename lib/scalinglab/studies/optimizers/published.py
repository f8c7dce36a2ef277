"""The paper's own final losses (Wen et al. 2025), re-analysed with intervals it lacks.

``data/published/fantastic_optimizers/final_losses.csv`` holds one final loss per
(optimizer, model size, data multiple): the best over that setting's hyperparameter
sweep, with no repeated seeds. The speedup engine (:mod:`scalinglab.fitting.speedup`)
turns it into the paper's speedup table. The file is read, like any loss table, by
:mod:`scalinglab.data.loss_tables`, the reader ``scalinglab speedup`` uses too
(``load_published`` and ``read_runs`` here are its names in this study). This module
adds what a single run per cell cannot give by itself, an interval.

**The noise model.** With no seeds, the only evidence about run-to-run noise is how far
each curve departs from a smooth law. Every optimizer's losses at each size are fitted by
the same ``L(D) = A D^-alpha + E`` the baseline uses; the pooled residual standard
deviation (``sum of squared residuals / sum of residual degrees of freedom``, 1-2 per
curve) is the loss noise ``sigma``. A parametric bootstrap then adds independent
``N(0, sigma^2)`` noise to every loss, refits the baseline per size and recomputes every
speedup, so an interval reflects both the baseline fit's and the cell's uncertainty. The
estimate is conservative where curvature the law does not capture is read as noise. How
often these intervals cover is simulated on the table's own fitted laws
(:mod:`.published_coverage`).

Refits are warm-started least squares from the point fit (``scipy.optimize.least_squares``
with the law's bounds), as the fitting engine's own bootstrap warm-starts its refits:
a multi-start per replicate would cost ~0.5 s each and find the same basin.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from scalinglab.data.loss_tables import RELEASED_COLUMNS, read_loss_table, read_released
from scalinglab.errors import InputError
from scalinglab.fitting.identify import RTOL, SHARE
from scalinglab.fitting.speedup import SpeedupResult, compute_speedups, effective_data
from scalinglab.paths import data_dir
from scalinglab.stats.bootstrap import percentile_interval
from scalinglab.stats.coverage_report import measured_on_data

#: Parameters of the paper's model sizes (its model names; non-embedding counts are not given).
PAPER_PARAMS: dict[str, float] = {"130m": 130e6, "300m": 300e6, "520m": 520e6, "1.2b": 1.2e9}
#: The paper's optimizer families (Wen et al. 2025, section 3).
PAPER_FAMILIES: dict[str, str] = {
    "adamw": "scalar",
    "nadamw": "scalar",
    "mars": "scalar",
    "cautious": "scalar",
    "lion": "scalar",
    "mini": "scalar",
    "muon": "matrix",
    "soape": "matrix",
    "kron": "matrix",
    "scion": "matrix",
}
#: The released file's columns (read by :mod:`scalinglab.data.loss_tables`).
PUBLISHED_COLUMNS = RELEASED_COLUMNS
#: The released file as a speedup table (:func:`scalinglab.data.loss_tables.read_released`).
load_published = read_released
#: A released file or a loss table (:func:`scalinglab.data.loss_tables.read_loss_table`).
read_runs = read_loss_table
#: The committed coverage of these intervals on the paper's table (:mod:`.published_coverage`).
COVERAGE_FILE = data_dir() / "optimizer_comparison" / "published_coverage.json"
_CELLS = ["optimizer", "model_size", "data_multiple", "loss"]


def _po(p: np.ndarray, x: np.ndarray) -> np.ndarray:
    return p[0] * x ** (-p[1]) + p[2]


def _refit(x: np.ndarray, y: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Least-squares ``A x^-alpha + E`` from ``start`` within the law's bounds."""
    r = least_squares(
        lambda p: _po(p, x) - y, start, bounds=([1e-12, 0.0, 0.0], [np.inf, 10.0, np.inf])
    )
    return r.x


def law_noise(table: pd.DataFrame, *, min_points: int = 4) -> tuple[float, int]:
    """Pooled residual standard deviation of every optimizer's per-size law fit.

    Parameters
    ----------
    table
        ``optimizer, model_size, data_multiple, loss`` with one row per cell.
    min_points
        Curves with fewer distinct multiples are skipped (the law has 3 parameters).

    Returns
    -------
    sigma, dof
        The noise estimate (loss units) and its residual degrees of freedom.
    """
    ssr, dof = 0.0, 0
    for _, g in table.groupby(["optimizer", "model_size"], sort=False):
        if g.data_multiple.nunique() < min_points:
            continue
        x, y = g.data_multiple.to_numpy(float), g.loss.to_numpy(float)
        start = np.array([max(y[0] - y[-1], 1e-3) * x[0], 0.5, max(y.min() - 0.1, 0.0)])
        p = _refit(x, y, start)
        ssr += float(np.sum((_po(p, x) - y) ** 2))
        dof += len(y) - 3
    if dof == 0:
        raise InputError(f"no curve has {min_points}+ data multiples: cannot estimate the noise")
    return float(np.sqrt(ssr / dof)), dof


def noise_bootstrap(
    table: pd.DataFrame,
    *,
    sigma: float,
    baseline: str = "adamw",
    reps: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[SpeedupResult, dict[str, float]]:
    """Speedups of a one-run-per-cell table with parametric-bootstrap intervals.

    Parameters
    ----------
    table
        ``optimizer, model_size, data_multiple, loss``, one row per cell.
    sigma
        Loss noise (from :func:`law_noise`).
    baseline, reps, seed, level
        As in :func:`scalinglab.fitting.speedup.compute_speedups`.

    Returns
    -------
    result
        The point speedups with ``draws`` of shape ``(reps, n_cells)`` and ``lo, hi``
        filled in (``inf`` draws where a noisy loss fell below the refitted asymptote).
    e_at_bound
        ``size -> share of replicates whose refitted E sits at its bound 0``.
    """
    if sigma <= 0 or reps < 1:
        raise InputError(f"need sigma > 0 and reps >= 1; got {sigma}, {reps}")
    res = compute_speedups(table, baseline=baseline, bootstrap=0, level=level, seed=seed)
    cells = res.cells
    rng = np.random.default_rng(seed)
    loss = {(r.optimizer, r.model_size, r.data_multiple): r.loss for r in cells.itertuples()}
    keys = list(loss)
    noise = rng.normal(0.0, sigma, size=(reps, len(keys)))
    noisy = np.array([loss[k] for k in keys])[None, :] + noise
    col = {k: i for i, k in enumerate(keys)}
    draws = np.full((reps, len(cells)), np.nan)
    e_at_bound: dict[str, float] = {}
    for s, f in res.fits.items():
        if f["status"] != "ok":
            continue
        base = [k for k in keys if k[0] == baseline and k[1] == s]
        x = np.array([k[2] for k in base])
        start = np.array([f["A"], f["alpha"], f["E"]])
        params = np.array([_refit(x, noisy[r, [col[k] for k in base]], start) for r in range(reps)])
        e_at_bound[s] = float(np.mean(params[:, 2] <= RTOL * max(abs(f["E"]), 1.0)))
        for i, r in enumerate(cells.itertuples()):
            if r.model_size != s:
                continue
            d, ok = effective_data(
                noisy[:, col[(r.optimizer, s, r.data_multiple)]],
                A=params[:, 0],
                alpha=params[:, 1],
                E=params[:, 2],
            )
            draws[:, i] = np.where(ok, d / r.data_multiple, np.inf)
    cells = cells.copy()
    for i in range(len(cells)):
        c = draws[:, i]
        if cells.loc[i, "status"] != "ok" or np.isnan(c).all():
            continue
        n_inf = int(np.isinf(c).sum())
        lo, hi = percentile_interval(
            np.where(np.isinf(c), np.nanmax(c[np.isfinite(c)]), c), level=level
        )
        cells.loc[i, "lo"] = float(lo)
        cells.loc[i, "hi"] = float(hi) if n_inf <= (1 - level) / 2 * reps else np.nan
        cells.loc[i, "n_below"] = n_inf
    out = SpeedupResult(
        baseline=baseline,
        cells=cells,
        fits=res.fits,
        draws=draws,
        level=level,
        reps=reps,
        seed=seed,
        warnings=list(res.warnings),
    )
    return out, e_at_bound


def e_identified(
    result: SpeedupResult, e_at_bound: Mapping[str, float] | None = None
) -> dict[str, bool]:
    """``size -> whether the baseline's asymptote E is identified``.

    With the baseline's bootstrapped fits (``result.fit_results``, seeds) this is
    :func:`scalinglab.fitting.identification`; for a one-run-per-cell table, the same rule
    on the parametric refits: E off its bound 0 in the point fit and in all but a
    ``SHARE`` of the refits (``e_at_bound`` from :func:`noise_bootstrap`).
    """
    from scalinglab.fitting import identification

    out = {}
    for s, f in result.fits.items():
        fr = result.fit_results.get(s)
        if f["status"] != "ok":
            out[s] = False
        elif fr is not None and e_at_bound is None:
            out[s] = identification(fr, "E").identified
        else:
            out[s] = (
                f["E"] > RTOL * max(abs(f["E"]), 1.0) and (e_at_bound or {}).get(s, 0.0) < SHARE
            )
    return out


def catch_up(
    result: SpeedupResult,
    *,
    leader: str = "muon",
    follower: str = "soape",
    low: float = 1.0,
    high: float = 8.0,
) -> pd.DataFrame:
    """How much ``follower`` gains on ``leader`` from ``low`` to ``high`` data multiples.

    ``change = (s_f / s_l at high) / (s_f / s_l at low)`` per size; above 1 the follower
    catches up with more data (the paper: SOAP and Kron catch up with Muon at 8x).

    Returns
    -------
    pandas.DataFrame
        model_size, change, lo, hi (percentile interval over ``result.draws``).
    """
    c = result.cells
    rows = []
    for s in dict.fromkeys(c.model_size):
        idx = {}
        for o in (leader, follower):
            for m in (low, high):
                hit = c.index[
                    (c.optimizer == o)
                    & (c.model_size == s)
                    & (c.data_multiple == m)
                    & (c.status == "ok")
                ]
                if len(hit):
                    idx[(o, m)] = int(hit[0])
        if len(idx) < 4:
            continue

        def ratio(v: np.ndarray, idx: dict = idx) -> np.ndarray:
            return (v[..., idx[(follower, high)]] / v[..., idx[(leader, high)]]) / (
                v[..., idx[(follower, low)]] / v[..., idx[(leader, low)]]
            )

        point = float(ratio(c.speedup.to_numpy()))
        lo: Any = np.nan
        hi: Any = np.nan
        if result.draws is not None:
            with np.errstate(invalid="ignore"):
                d = ratio(result.draws)
            lo, hi = percentile_interval(np.where(np.isfinite(d), d, np.nan), level=result.level)
        rows.append({"model_size": s, "change": point, "lo": float(lo), "hi": float(hi)})
    return pd.DataFrame(rows)


def table_hash(table: pd.DataFrame) -> str:
    """SHA-256 of ``table``'s cells (optimizer, model_size, data_multiple, loss in full
    precision, sorted): the same losses give the same hash whatever file they came from."""
    t = table[_CELLS].sort_values(_CELLS[:3]).reset_index(drop=True)
    text = "\n".join(
        f"{o},{s},{float(m)!r},{float(v)!r}" for o, s, m, v in t.itertuples(index=False)
    )
    return hashlib.sha256(text.encode()).hexdigest()


def on_data_methods(
    table: pd.DataFrame, *, method: str, level: float, path: Path = COVERAGE_FILE
) -> dict[str, str]:
    """``finding name -> method text`` stating the committed coverage measured on this
    table (:func:`scalinglab.stats.coverage_report.measured_on_data`, the lower of the two
    generators, ``n = 1`` run per cell); empty when nothing is committed for a table with
    these losses at this level."""
    if not path.exists():
        return {}
    saved = json.loads(path.read_text(encoding="utf-8"))
    if saved.get("table_sha256") != table_hash(table) or float(saved.get("level", -1)) != level:
        return {}
    low: Mapping[str, Mapping[str, Any]] = saved["lowest"]
    return {
        name: f"{method}; " + measured_on_data(float(v["coverage"]), 1, se=float(v["se"]))
        for name, v in low.items()
        if np.isfinite(v["coverage"])
    }
