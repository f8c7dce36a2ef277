"""Tan et al.'s learning efficiency k(N): ``log10 L = -k(N) log10 C + E0(N)`` with
``k(N) = Kmax N / (N + N0)`` and ``L = 1 - pass rate``, fitted jointly over the sizes
(:func:`fit_kn`, law ``loglinear_kn`` of :mod:`scalinglab.fitting`) with intervals that
resample the seeds of every size; whether ``N0`` is identified (off the bounds of its
range in the point fit and in most refits); and the held-out check (the law fitted
without the largest size predicts that size's k).

Inputs are the curves table of :mod:`scalinglab.studies.rl.analysis` (baseline:
its first variant).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalinglab.estimate import BOUND_SHARE, identified_by_share
from scalinglab.fitting import fit
from scalinglab.stats.bootstrap import percentile_interval, resample_groups
from scalinglab.studies.rl.analysis import ordered_sizes as _sizes


def _runs_by_size(df: pd.DataFrame) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """Per size, each seed's (compute, pass rate) points with C > 0 and R < 1."""
    out: dict[str, list] = {}
    for size in _sizes(df):
        g = df[(df["model_size"] == size) & (df["compute"] > 0) & (df["pass_rate"] < 1)]
        out[size] = [
            (r["compute"].to_numpy(), r["pass_rate"].to_numpy())
            for _, r in g.groupby("seed", sort=True)
        ]
    return out


def _kn_summary(runs: dict, picks: dict, sizes: list[str], nvals: dict, starts=None):
    """Kmax, N0, the law's k per size and each size's own slope, for one resample."""
    xs, ys, ns, slopes = [], [], [], []
    for s in sizes:
        chosen = [runs[s][i] for i in picks[s]]
        c = np.concatenate([a for a, _ in chosen])
        r = np.concatenate([b for _, b in chosen])
        xs.append(c)
        ys.append(1.0 - r)
        ns.append(np.full(c.size, nvals[s]))
        slopes.append(-np.polyfit(np.log10(c), np.log10(1.0 - r), 1)[0])
    n, x, y = np.concatenate(ns), np.concatenate(xs), np.concatenate(ys)
    # replicates start from the full-data optimum.
    # N0 is bounded to [N_min / 100, 100 N_max]: outside that range the data cannot
    # tell it apart from the bound (k flat in N), and an unbounded log N0 drifting to
    # -inf makes L-BFGS-B crawl (seconds per refit).
    res = fit(
        "loglinear_kn",
        np.column_stack([n, x]),
        y,
        groups=n,
        starts=starts,
        n_polish=5 if starts is None else 1,
        bounds={"N0": (min(nvals.values()) / 100, 100 * max(nvals.values()))},
    )
    kmax, n0 = res.params["Kmax"], res.params["N0"]
    k_law = [kmax * nvals[s] / (nvals[s] + n0) for s in sizes]
    return np.array([kmax, n0, *k_law, *slopes]), res


def fit_kn(df: pd.DataFrame, *, reps: int = 500, seed: int = 0, level: float = 0.95) -> dict:
    """Tan et al.'s ``log10 L = -k(N) log10 C + E0(N)`` on the baseline, with CIs over seeds.

    ``L = 1 - pass rate``; points at compute 0 or pass rate 1 are left out. Each
    bootstrap replicate resamples the seeds of every size and refits from the
    full-data optimum (the law's grid is used for the full-data fit only).

    Returns
    -------
    dict
        ``Kmax``, ``N0`` as (point, (lo, hi)); ``k_law`` (the law's k(N)) and
        ``k_slope`` (each size's own log-log slope) per size, same form; and
        ``holdout``: the law fitted without the largest size predicting its k,
        against its measured slope (``error`` = predicted - measured, with CI).
    """
    base = df[df["variant"] == df["variant"].iloc[0]]
    sizes = _sizes(base)
    runs = _runs_by_size(base)
    nvals = {s: float(base.loc[base["model_size"] == s, "n_params"].iloc[0]) for s in sizes}
    every = {s: np.arange(len(runs[s])) for s in sizes}
    point, full = _kn_summary(runs, every, sizes, nvals)
    warm = {k: [v] for k, v in full.params.items()}
    held = held_warm = None
    if len(sizes) >= 3:
        held, hres = _kn_summary(runs, every, sizes[:-1], nvals)
        held_warm = {k: [v] for k, v in hres.params.items()}
    rng = np.random.default_rng(seed)
    picks = {s: resample_groups(rng, len(runs[s]), reps) for s in sizes}
    k = len(sizes)
    draws = np.full((reps, point.size), np.nan)
    err = np.full(reps, np.nan)
    for b in range(reps):
        pick = {s: picks[s][b] for s in sizes}
        try:
            draws[b] = _kn_summary(runs, pick, sizes, nvals, starts=warm)[0]
            if held is not None:
                h = _kn_summary(runs, pick, sizes[:-1], nvals, starts=held_warm)[0]
                err[b] = (
                    h[0] * nvals[sizes[-1]] / (nvals[sizes[-1]] + h[1]) - draws[b, 2 + 2 * k - 1]
                )
        except Exception:  # a failed refit is a NaN replicate, ignored by the interval
            continue
    lo, hi = percentile_interval(draws, level=level)
    pair = lambda i: (float(point[i]), (float(lo[i]), float(hi[i])))  # noqa: E731
    rise = draws[:, 2 + 2 * k - 1] - draws[:, 2 + k]
    rlo, rhi = percentile_interval(rise, level=level)
    n_bounds = (min(nvals.values()) / 100, 100 * max(nvals.values()))
    out = {
        "Kmax": pair(0),
        "N0": pair(1),
        "sizes": sizes,
        "n_params": [nvals[s] for s in sizes],
        "k_law": [pair(2 + i) for i in range(k)],
        "k_slope": [pair(2 + k + i) for i in range(k)],
        "k_rise": (float(point[2 + 2 * k - 1] - point[2 + k]), (float(rlo), float(rhi))),
        "N0_identified": _n0_identified(point[1], draws[:, 1], (lo[1], hi[1]), n_bounds),
        "N0_bounds": n_bounds,
        "reps": reps,
        "level": level,
        "failed_reps": int(np.isnan(draws[:, 0]).sum()),
    }
    if held is not None:
        n_big = nvals[sizes[-1]]
        k_pred = float(held[0] * n_big / (n_big + held[1]))
        elo, ehi = percentile_interval(err, level=level)
        h_bounds = (
            min(nvals[s] for s in sizes[:-1]) / 100,
            100 * max(nvals[s] for s in sizes[:-1]),
        )
        out["holdout"] = {
            "size": sizes[-1],
            "k_pred": k_pred,
            "k_measured": float(point[-1]),
            "error": k_pred - float(point[-1]),
            "error_ci": (float(elo), float(ehi)),
            "N0_identified": _n0_identified(held[1], np.array([]), None, h_bounds),
        }
    return out


def n0_bound_side(
    n0: float, bounds: tuple[float, float], *, rtol: float = 1e-3
) -> tuple[float, str] | None:
    """``(bound, "lower" | "upper")`` when N0 sits on a bound of its search range (in log
    space, within ``rtol`` of the range's width, as :func:`_n0_identified` reads it), so
    the finding shows the bound, not a value; None when it does not."""
    lo_b, hi_b = np.log(bounds[0]), np.log(bounds[1])
    tol = rtol * (hi_b - lo_b)
    if np.log(n0) - lo_b <= tol:
        return float(bounds[0]), "lower"
    if hi_b - np.log(n0) <= tol:
        return float(bounds[1]), "upper"
    return None


def _n0_identified(
    n0: float,
    draws: np.ndarray,
    ci,
    bounds: tuple[float, float],
    *,
    rtol: float = 1e-3,
    share: float = BOUND_SHARE,
) -> tuple[bool, str]:
    """Whether k(N)'s N0 is identified: not on a bound of its search range (in log
    space, within ``rtol`` of the range's width) in the point fit or in ``share`` of
    the refits, and not a zero-width interval. Returns ``(identified, reason)``."""
    lo_b, hi_b = np.log(bounds[0]), np.log(bounds[1])
    tol = rtol * (hi_b - lo_b)

    def side(v):
        lv = np.log(np.asarray(v, dtype=float))
        return lv - lo_b <= tol, hi_b - lv <= tol

    at_lo, at_hi = side(n0)
    if at_lo or at_hi:
        b = bounds[0] if at_lo else bounds[1]
        which = "lower" if at_lo else "upper"
        return False, (
            f"N0 = {n0:.4g} at the {which} bound {b:.4g} of its range in the point "
            "fit: k does not rise with N across these sizes"
        )
    d = draws[np.isfinite(draws)]
    if d.size:
        lo_s, hi_s = side(d)
        frac = float(max(lo_s.mean(), hi_s.mean()))
        if not identified_by_share(frac, threshold=share):
            return False, f"N0 at a bound of its range in {100 * frac:.0f}% of bootstrap refits"
    if ci is not None and np.isfinite(ci[0]) and ci[1] - ci[0] <= 1e-12 * max(1.0, abs(n0)):
        return False, "N0 has a zero-width interval"
    return True, ""
