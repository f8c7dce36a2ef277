"""The Sparsing Law paper's own activation-ratio curves, refitted (the ``published`` variant).

``data/published/sparsing_law/`` holds byte-for-byte copies of the eleven curves
released with Luo et al. (2024) (ReLU 0.1B-2.4B, SiLU 0.1B-1.2B; one JSON object
``{"token_passed": [...], "activation_ratio": [...]}`` per file) and the authors'
fitted parameters transcribed from their ``calc.py`` (``fitted_parameters.csv``).
This module reads them (checking sha256 against ``PROVENANCE.md``), refits every
curve with the shared fitting engine and compares with the authors' fits.

Units: the authors fit with ``D`` in **billions** of tokens; so do we, so that
``alpha``, ``b``, ``c`` and ``A0`` of our ``relu_sparsity`` law
(``exp(-c D^alpha + b) + A0``) and ``silu_sparsity`` law (``-c D^-alpha + A0``)
are theirs one to one (with raw tokens, only ``c`` would change:
``c_tokens = c_billions * 1e-9^alpha``).

Uncertainty: each curve is one training run, so the resampling unit is a
**contiguous block of checkpoints** (successive checkpoints of one run share its
noise: a point bootstrap would treat them as independent). Blocks are
non-overlapping, of length ``ceil(n^(1/3))`` (3-4 checkpoints for n = 24-42;
the ``n^(1/3)`` rate is the MSE-optimal block length for variances and
two-sided intervals, Hall, Horowitz & Jing 1995), the last short block merged
into its neighbour; the fitting engine's group bootstrap then draws whole blocks
with replacement (Carlstein's non-overlapping block bootstrap).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from scalinglab.errors import InputError
from scalinglab.estimate import Estimate
from scalinglab.fitting import FitResult, fit
from scalinglab.paths import data_dir
from scalinglab.stats.bootstrap import resample_groups
from scalinglab.studies.sparsity.analysis import law_identification

#: sha256 of the published files (``data/published/sparsing_law/PROVENANCE.md``).
SHA256 = {
    "data/0.1b_relu.txt": "5c4b6c3b016f3b6e8896cf8d14c2cad0bc132ca02c8d78bbb3eff1613a3bce88",
    "data/0.1b_silu.txt": "2a9ddd5cdc855dd4319fc71dcb35577abbf7cc72ee3161a40d10e6c313b23ac8",
    "data/0.2b_relu.txt": "16bf28f3866b0bde01d866d9795d63c116ad7e01e1ba117744f77c9c7a932155",
    "data/0.2b_silu.txt": "4cabcac2a369a279f310ef05e105573a8c5bb6cf14e5dd751e638c641640b54c",
    "data/0.4b_relu.txt": "fa3659e2aa81edf67751c802179b6f3fd5162e399dd8ea49121c75f9c97915eb",
    "data/0.4b_silu.txt": "3ef56a193533c95396a677c5056b51ee65cbc000770f753d833810c13d7648f8",
    "data/0.8b_relu.txt": "15752017548e3131b7f3cb26e7eab48a4d678e4c54a1e5bc805a4b4a948540a8",
    "data/0.8b_silu.txt": "4507e8ff6126443f59b9095cc54b8195d93e52af54173232bbd1362791d15be2",
    "data/1.2b_relu.txt": "5255980b5a3632492faa5a9f7d3a020fd1c19d0e35975d3534d426fbd982b052",
    "data/1.2b_silu.txt": "8108d896e2501a322922ecaa34f75faa4c975d5161db5bc2f69a9787dca66caf",
    "data/2.4b_relu.txt": "24c4ca4728aeb57922fa5622889466de54c80c441e292d5ccc6cba9d8ed05460",
    "fitted_parameters.csv": "037e32453e03ed06567035fc5e5f1e7be4133d13c79c850537b8be0d6f2e1199",
}
LAWS = {"relu": "relu_sparsity", "silu": "silu_sparsity"}


def published_dir() -> Path:
    """``data/published/sparsing_law/`` of this checkout."""
    return data_dir() / "published" / "sparsing_law"


def check_provenance(folder: str | Path | None = None) -> dict[str, str]:
    """sha256 of every published file, checked against :data:`SHA256`.

    Raises
    ------
    InputError
        A file is missing or differs from the published one.
    """
    folder = Path(folder) if folder is not None else published_dir()
    out = {}
    for name, expected in SHA256.items():
        path = folder / name
        if not path.exists():
            raise InputError("no such file (published Sparsing Law data)", file=path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != expected:
            raise InputError(
                f"sha256 {digest} differs from the published file's {expected}", file=path
            )
        out[name] = digest
    return out


def _read_curve(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        obj = json.loads(path.read_text())
        tokens = np.asarray(obj["token_passed"], dtype=float)
        ratio = np.asarray(obj["activation_ratio"], dtype=float)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"not a {{token_passed, activation_ratio}} JSON object ({exc})", file=path
        ) from exc
    if tokens.shape != ratio.shape or tokens.ndim != 1:
        raise InputError(
            f"token_passed ({tokens.size}) and activation_ratio ({ratio.size}) differ in length",
            file=path,
        )
    for i in range(tokens.size):
        if not (tokens[i] > 0 and (i == 0 or tokens[i] > tokens[i - 1])):
            raise InputError(
                f"token_passed[{i}] = {tokens[i]!r} is not positive and increasing",
                file=path,
                column="token_passed",
                row=i + 1,
            )
        if not 0 <= ratio[i] <= 1:
            raise InputError(
                f"activation_ratio[{i}] = {ratio[i]!r} is not in [0, 1]",
                file=path,
                column="activation_ratio",
                row=i + 1,
            )
    return tokens, ratio


def load_curves(folder: str | Path | None = None) -> pd.DataFrame:
    """Every published curve, one row per checkpoint.

    Returns
    -------
    pandas.DataFrame
        Columns ``activation, model, seed, run, checkpoint, tokens, D`` (billions of
        tokens), ``activation_ratio, usable`` (all True), ``n_params`` (the size's
        nominal count, e.g. 1e8 for ``0.1b``), ``block`` (see :func:`block_groups`).
    """
    folder = Path(folder) if folder is not None else published_dir()
    files = sorted((folder / "data").glob("*_*.txt"))
    if not files:
        raise InputError("no published curves (data/*_relu.txt, data/*_silu.txt)", file=folder)
    frames = []
    for path in files:
        size, act = path.stem.split("_", 1)
        tokens, ratio = _read_curve(path)
        n = tokens.size
        frames.append(
            pd.DataFrame(
                {
                    "activation": act,
                    "model": size,
                    "seed": 0,
                    "run": f"{size}/{act}",
                    "checkpoint": np.arange(n),
                    "tokens": tokens,
                    "D": tokens / 1e9,
                    "activation_ratio": ratio,
                    "usable": True,
                    "n_params": float(size.rstrip("b")) * 1e9,
                    "block": block_groups(n, block_length(n)),
                }
            )
        )
    df = pd.concat(frames, ignore_index=True)
    order = {"relu": 0, "silu": 1}
    return df.sort_values(
        ["activation", "n_params", "checkpoint"],
        key=lambda s: s.map(order) if s.name == "activation" else s,
    ).reset_index(drop=True)


def author_params(folder: str | Path | None = None) -> pd.DataFrame:
    """The authors' fitted parameters: ``model, size, activation, alpha, b, c, A0``."""
    folder = Path(folder) if folder is not None else published_dir()
    p = pd.read_csv(folder / "fitted_parameters.csv")
    return p.rename(columns={"A_0": "A0"})


def author_predict(params: Mapping[str, float], activation: str, D: np.ndarray) -> np.ndarray:
    """The authors' curve at ``D`` (billions of tokens, any shape), as ``calc.py`` computes it."""
    D = np.asarray(D, dtype=float)
    if activation == "relu":
        return np.exp(-params["c"] * D ** params["alpha"] + params["b"]) + params["A0"]
    return -params["c"] * D ** (-params["alpha"]) + params["A0"]


def block_length(n: int) -> int:
    """Block length for ``n`` checkpoints: ``ceil(n^(1/3))``, at least 2."""
    return max(2, math.ceil(n ** (1 / 3)))


def moving_block_indices(
    rng: np.random.Generator, n: int, length: int, shape: tuple[int, ...] = ()
) -> np.ndarray:
    """Indices of Kunsch's moving blocks over ``n`` checkpoints, shape ``(*shape, n)``:
    blocks of ``length`` consecutive indices, each starting at a uniformly drawn
    checkpoint, strung together and cut to ``n`` (one ``rng.integers`` call)."""
    first = rng.integers(0, n - length + 1, size=(*shape, -(-n // length)))
    return (first[..., None] + np.arange(length)).reshape(*shape, -1)[..., :n]


def block_groups(n: int, length: int) -> np.ndarray:
    """Contiguous block label of each of ``n`` checkpoints, shape ``(n,)``.

    ``n // length`` blocks of ``length`` (the remainder spread over the last blocks
    by :func:`numpy.array_split`, so no block is shorter than ``length``).
    """
    k = max(1, n // length)
    return np.repeat(np.arange(k), [len(a) for a in np.array_split(np.arange(n), k)])


def refit(
    curves: pd.DataFrame, *, reps: int = 500, level: float = 0.95, seed: int = 0
) -> tuple[pd.DataFrame, dict[tuple[str, str], FitResult]]:
    """Refit every curve with its law (block bootstrap) and compare with the authors' fit.

    Returns
    -------
    table, fits
        One row per curve: ``activation, model, n_points, block_len, n_blocks``, our
        parameters with ``_lo/_hi``, the authors' (``auth_*``), RMSE of ours and of
        theirs on the same points, and the lag-1 autocorrelation of our residuals;
        and our :class:`FitResult` by ``(activation, model)``.
    """
    auth = author_params().set_index("model")
    rows, fits = [], {}
    for (act, model), g in curves.groupby(["activation", "model"], sort=False):
        D, y = g["D"].to_numpy(float), g["activation_ratio"].to_numpy(float)
        res = fit(
            LAWS[act], D, y, groups=g["block"].to_numpy(), bootstrap=reps, level=level, seed=seed
        )
        fits[(act, model)] = res
        a = auth.loc[f"{model}_{act}"]
        resid = y - res.predict(D)
        row = {
            "activation": act,
            "model": model,
            "n_points": len(g),
            "block_len": int(np.bincount(g["block"]).min()),
            "n_blocks": g["block"].nunique(),
        }
        for p, v in res.params.items():
            lo, hi = res.ci[p] if res.ci else (np.nan, np.nan)
            row.update(
                {
                    p: v,
                    f"{p}_lo": lo,
                    f"{p}_hi": hi,
                    f"auth_{p}": float(a[p]) if p in a and pd.notna(a[p]) else np.nan,
                }
            )
        row["rmse"] = float(np.sqrt(np.mean(resid**2)))
        row["auth_rmse"] = float(np.sqrt(np.mean((author_predict(a, act, D) - y) ** 2)))
        row["resid_lag1"] = float(np.corrcoef(resid[:-1], resid[1:])[0, 1])
        rows.append(row)
    return pd.DataFrame(rows), fits


def _wls_slope(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted OLS of ``y`` on ``x`` per row of weights ``w`` ``(R, n)``: slopes and
    intercepts, shape ``(R,)`` each."""
    sw = w.sum(1)
    xm, ym = (w @ x) / sw, (w @ y) / sw
    xc = x[None, :] - xm[:, None]
    slope = (w * xc * (y[None, :] - ym[:, None])).sum(1) / (w * xc**2).sum(1)
    return slope, ym - slope * xm


def late_trends(
    curves: pd.DataFrame, *, window: float = 10.0, reps: int = 500, seed: int = 0
) -> tuple[pd.DataFrame, dict[tuple[str, str], np.ndarray]]:
    """Per curve, the slope of the ratio per decade of tokens over its last ``window``-fold
    of tokens and the ratio at its last checkpoint from that line, with block-bootstrap draws.

    Returns
    -------
    table, draws
        One row per curve (``activation, model, n_params, D_from, D_to, n_points, slope,
        end_ratio``); and ``(reps, 2)`` draws of (slope, end_ratio) by
        ``(activation, model)``, resampling the window's blocks (:func:`block_groups`
        on the window's checkpoints).
    """
    rows, draws = [], {}
    for k, ((act, model), g) in enumerate(curves.groupby(["activation", "model"], sort=False)):
        D_end = float(g["D"].max())
        late = g[g["D"] >= D_end / window]
        x = np.log10(late["D"].to_numpy(float))
        y = late["activation_ratio"].to_numpy(float)
        blocks = block_groups(x.size, block_length(x.size))
        G = int(blocks.max()) + 1
        rng = np.random.default_rng([seed, k])
        idx = resample_groups(rng, G, reps)
        counts = np.zeros((reps, G))
        np.add.at(counts, (np.repeat(np.arange(reps), G), idx.ravel()), 1.0)
        w = counts[:, blocks]
        s, c = _wls_slope(x, y, np.vstack([np.ones_like(x), w]))
        xe = math.log10(D_end)
        draws[(act, model)] = np.column_stack([s[1:], c[1:] + s[1:] * xe])
        rows.append(
            {
                "activation": act,
                "model": model,
                "n_params": float(g["n_params"].iloc[0]),
                "D_from": float(late["D"].min()),
                "D_to": D_end,
                "n_points": x.size,
                "slope": float(s[0]),
                "end_ratio": float(c[0] + s[0] * xe),
            }
        )
    return pd.DataFrame(rows), draws


#: How :func:`late_trends`' draws become intervals.
LATE_CI = (
    "block bootstrap over each curve's last-decade checkpoints (one run per curve, so its "
    "checkpoints are the only resampling unit), percentile"
)


def mean_over_models(
    table: pd.DataFrame,
    draws: dict[tuple[str, str], np.ndarray],
    *,
    activation: str,
    column: int = 0,
    level: float = 0.95,
    models: Sequence[str] | None = None,
) -> Estimate:
    """Mean over one activation's curves (or ``models`` of them) of column ``column``
    (0 slope, 1 end ratio, 2 slope over end ratio) of :func:`late_trends`, with its
    interval from the curves' independent draws."""
    t = table[table["activation"] == activation]
    if models is not None:
        t = t[t["model"].isin(list(models))]
    per = {m: draws[(activation, m)] for m in t["model"]}
    if column == 2:
        point = float((t["slope"] / t["end_ratio"]).mean())
        d = np.mean([v[:, 0] / v[:, 1] for v in per.values()], axis=0)
    else:
        point = float(t[["slope", "end_ratio"][column]].mean())
        d = np.mean([v[:, column] for v in per.values()], axis=0)
    return Estimate.from_draws(point, d, level=level, method=LATE_CI + ", mean over sizes")


def scale_slope(
    table: pd.DataFrame,
    draws: dict[tuple[str, str], np.ndarray],
    *,
    activation: str,
    level: float = 0.95,
) -> Estimate:
    """Relative slope of the end-of-training ratio against log10(parameters).

    OLS slope of :func:`late_trends`' ``end_ratio`` on ``log10 n_params`` over one
    activation's sizes, divided by the sizes' mean end ratio (a fraction of the
    limit per 10x parameters); interval from the curves' draws.
    """
    t = table[table["activation"] == activation]
    lx = np.log10(t["n_params"].to_numpy(float))
    xc = lx - lx.mean()
    ends = np.stack([draws[(activation, m)][:, 1] for m in t["model"]], 1)  # (R, S)
    rel = (ends - ends.mean(1, keepdims=True)) @ xc / (xc @ xc) / ends.mean(1)
    y = t["end_ratio"].to_numpy(float)
    point = float((y - y.mean()) @ xc / (xc @ xc) / y.mean())
    return Estimate.from_draws(
        point, rel, level=level, method=LATE_CI + "; OLS on log10 parameters over the mean"
    )


def residual_block_bootstrap(
    res: FitResult,
    D: np.ndarray,
    y: np.ndarray,
    *,
    param: str = "A0",
    reps: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[np.ndarray, Estimate]:
    """Interval of one curve's ``param`` from a moving-block bootstrap of its residuals.

    Resampling whole blocks of checkpoints leaves only 6-14 blocks per curve to rebuild
    a four-parameter law (and drops the curve's ends at random); here every replicate keeps
    every checkpoint: ``y* = fit(D) + e*``, where ``e*`` strings together blocks of
    :func:`block_length` consecutive residuals of the point fit, each starting at a
    uniformly drawn checkpoint (Kunsch's moving blocks, so the residuals' serial
    correlation is kept), cut to the curve's length. Each replicate is refitted from the
    point fit's parameters.

    Parameters
    ----------
    res
        The curve's point fit (:func:`refit`'s), with the law and bounds it used.
    D, y
        The curve's tokens (billions) and ratios, ``(n,)`` each, in token order.

    Returns
    -------
    draws, estimate
        The ``(reps,)`` refitted values (NaN where a refit failed) and the point fit's
        ``param`` with their percentile interval (:data:`RESIDUAL_CI`).
    """
    order = np.argsort(np.asarray(D, float), kind="stable")
    D, y = np.asarray(D, float)[order], np.asarray(y, float)[order]
    fitted = res.predict(D)
    resid = y - fitted
    n = y.size
    L = block_length(n)
    rng = np.random.default_rng(seed)
    starts = {k: [v] for k, v in res.params.items()}
    out = np.full(reps, np.nan)
    for r in range(reps):
        idx = moving_block_indices(rng, n, L)
        try:
            out[r] = fit(res.law, D, fitted + resid[idx], starts=starts).params[param]
        except (InputError, ValueError):
            continue
    ok = out[np.isfinite(out)]
    if ok.size < max(10, reps // 2):
        raise ValueError(f"only {ok.size} of {reps} residual-bootstrap refits succeeded")
    return out, Estimate.from_draws(
        float(res.params[param]), ok, level=level, method=RESIDUAL_CI.format(L=L), resamples=reps
    )


#: How :func:`residual_block_bootstrap` makes its interval (its coverage, simulated on the
#: curve's own fit and residuals by :mod:`.coverage_sim`, is appended by the findings).
RESIDUAL_CI = (
    "moving-block residual bootstrap (blocks of {L} residuals, every checkpoint kept), "
    "refits from the point fit, percentile"
)


def paper_limit(
    res: FitResult,
    D: np.ndarray,
    y: np.ndarray,
    *,
    reps: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """One released curve's limit ``A0``: the point fit, the residual block bootstrap's
    interval (:func:`residual_block_bootstrap`) and the fit's identification (a limit on
    its bound, in the point fit or in >= 20% of the block-bootstrap refits, is not
    identified).

    Where the residual interval excludes the point fit (a refit that settles in another
    optimum), the interval is the fit's block bootstrap over checkpoints, and the method
    says so.
    """
    ident = law_identification(res, "A0")
    _, est = residual_block_bootstrap(res, D, y, reps=reps, level=level, seed=seed)
    point = float(res.params["A0"])
    if est.ci is None or not est.ci[0] <= point <= est.ci[1]:
        lo, hi = res.ci["A0"] if res.ci else (None, None)
        est = Estimate(
            point,
            lo,
            hi,
            level=level if lo is not None else None,
            method=f"block bootstrap over checkpoints (blocks of {block_length(len(y))}), "
            "percentile (the residual bootstrap's interval excluded the point fit)",
            resamples=res.bootstrap_info.get("reps"),
        )
    return est.replace(
        identified=ident.identified, note=ident.reason or None, bound=ident.bound, side=ident.side
    )
