"""Repeated samples per problem: a user's table as a Dataset, and coverage curves.

A table of ``problem, sample, correct`` becomes the Dataset layout the test-time
scaling study writes (``correct``, ``answer`` over size, prompt, sample);
:func:`coverage_curves` gives pass@k at every k with intervals from resampling
problems (used by the study and by ``scalinglab coverage``).

Columns (CSV, Parquet, or a netCDF in the study's own layout):

- ``problem``: the problem's id (any text or number);
- ``sample``: the sample's id within its problem;
- ``correct``: 0/1 or true/false, the verifier's verdict;
- optional ``model`` (default one model, ``"model"``), ``tokens`` (generated tokens)
  and ``answer`` (the final answer, for majority voting; any text).

Problems may have different numbers of samples; coverage is estimated at k up to the
smallest of them. Bad input raises :class:`scalinglab.errors.InputError` naming the
file, the column and the first bad row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.errors import InputError
from scalinglab.estimate import Estimate
from scalinglab.stats import passk as cv
from scalinglab.stats.calibration import share_with_floor
from scalinglab.stats.passk import INVALID, MISSING

REQUIRED = ("problem", "sample", "correct")
#: How every interval of :class:`Curves` is made.
METHOD = "bootstrap over prompts, percentile"
_TRUE = {"1", "true", "yes", "t", "1.0"}
_FALSE = {"0", "false", "no", "f", "0.0"}


def _read(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise InputError("file not found", file=path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            return pd.read_parquet(path)
        if suffix in (".csv", ".txt", ".tsv"):
            return pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot read the table: {exc}", file=path) from None
    raise InputError(f"unknown table format {suffix!r} (csv, tsv, parquet, nc)", file=path)


def _correct(col: pd.Series, path: Path) -> np.ndarray:
    text = col.astype(str).str.strip().str.lower()
    ok = text.isin(_TRUE | _FALSE)
    if not ok.all():
        row = int(np.flatnonzero(~ok.to_numpy())[0])
        raise InputError(
            f"correct must be 0/1 or true/false, got {col.iloc[row]!r}",
            file=path,
            column="correct",
            row=row + 1,
        )
    return text.isin(_TRUE).to_numpy()


def from_frame(df: pd.DataFrame, *, path: Path | str = "<table>") -> xr.Dataset:
    """The samples of ``df`` as a Dataset (size = model, prompt, sample), MISSING-padded.

    Returns
    -------
    xarray.Dataset
        ``correct`` (size, prompt, sample) int8 (-1 where missing), ``answer`` int64
        codes (:data:`MISSING` where missing; distinct answers get distinct codes;
        without an ``answer`` column, every correct sample answers 1 and every wrong
        one is :data:`INVALID`), ``tokens`` (NaN where unknown); ``n`` (size, prompt).
    """
    path = Path(path)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {missing}; need {list(REQUIRED)} (optional model, tokens, answer)",
            file=path,
            column=missing[0],
        )
    if df.empty:
        raise InputError("the table has no rows", file=path)
    df = df.copy()
    for col in ("problem", "sample"):
        bad = df[col].isna().to_numpy()
        if bad.any():
            raise InputError(
                "empty value", file=path, column=col, row=int(np.flatnonzero(bad)[0]) + 1
            )
    df["correct"] = _correct(df["correct"], path)
    if "model" not in df.columns:
        df["model"] = "model"
    if "tokens" in df.columns:
        tok = pd.to_numeric(df["tokens"], errors="coerce")
        bad = (tok.isna() & df["tokens"].notna()) | (tok < 0)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                f"tokens must be a number >= 0, got {df['tokens'].iloc[row]!r}",
                file=path,
                column="tokens",
                row=row + 1,
            )
        df["tokens"] = tok
    dup = df.duplicated(["model", "problem", "sample"]).to_numpy()
    if dup.any():
        row = int(np.flatnonzero(dup)[0])
        raise InputError(
            "duplicate (model, problem, sample)", file=path, column="sample", row=row + 1
        )
    if "answer" in df.columns:
        codes = pd.factorize(df["answer"].astype(str))[0].astype(np.int64)
        df["code"] = np.where(df["answer"].isna(), INVALID, codes)
    else:
        df["code"] = np.where(df["correct"], 1, INVALID)
    models = list(pd.unique(df["model"].astype(str)))
    problems = list(pd.unique(df["problem"].astype(str)))
    df["model"], df["problem"] = df["model"].astype(str), df["problem"].astype(str)
    df["j"] = df.groupby(["model", "problem"]).cumcount()
    n_max = int(df["j"].max()) + 1
    shape = (len(models), len(problems), n_max)
    correct = np.full(shape, -1, dtype=np.int8)
    answer = np.full(shape, MISSING, dtype=np.int64)
    tokens = np.full(shape, np.nan)
    mi = pd.Index(models).get_indexer(df["model"])
    pi = pd.Index(problems).get_indexer(df["problem"])
    j = df["j"].to_numpy()
    correct[mi, pi, j] = df["correct"].to_numpy().astype(np.int8)
    answer[mi, pi, j] = df["code"].to_numpy()
    if "tokens" in df.columns:
        tokens[mi, pi, j] = df["tokens"].to_numpy(dtype=float)
    n = (correct >= 0).sum(axis=2)
    return xr.Dataset(
        {
            "correct": (("size", "prompt", "sample"), correct),
            "answer": (("size", "prompt", "sample"), answer),
            "tokens": (("size", "prompt", "sample"), tokens),
            "n": (("size", "prompt"), n),
        },
        coords={"size": models, "prompt": problems},
        attrs={"source": str(path)},
    )


def load_samples(path: str | Path) -> xr.Dataset:
    """Read a user's table (CSV/TSV/Parquet) or a study Dataset (``.nc``)."""
    path = Path(path)
    if path.suffix.lower() == ".nc":
        if not path.exists():
            raise InputError("file not found", file=path)
        try:
            with xr.open_dataset(path, engine="h5netcdf") as ds:
                ds = ds.load()
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read netCDF: {exc}", file=path) from None
        for var in ("correct", "answer"):
            if var not in ds:
                raise InputError(f"netCDF has no {var!r} variable", file=path, column=var)
        if "n" not in ds:
            ds["n"] = (ds["correct"] >= 0).sum("sample")
        return ds
    return from_frame(_read(path), path=path)


@dataclass
class Curves:
    """Coverage and majority-vote accuracy per size at every k = 1..k_max.

    Attributes
    ----------
    ks
        (k_max,) 1..k_max.
    per_problem
        size -> (P, k_max) pass@k per problem.
    cov, cov_draws
        size -> (k_max,) coverage, and (R, k_max) per resample.
    draws
        (R, P) the resamples' problem indices.
    """

    sizes: list[str]
    ks: np.ndarray
    per_problem: dict[str, np.ndarray]
    cov: dict[str, np.ndarray]
    cov_draws: dict[str, np.ndarray]
    draws: np.ndarray
    level: float

    def ci(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = (1.0 - self.level) / 2.0
        return np.nanquantile(x, q, axis=0), np.nanquantile(x, 1.0 - q, axis=0)

    def estimate(self, size: str, k: int) -> Estimate:
        """Coverage of ``size`` at ``k`` samples with its interval over the prompt resamples;
        where every prompt's pass@k is 1 (or 0), so that every resample gives the same
        coverage, the Wilson interval of P (or 0) solved prompts out of P instead
        (:func:`~scalinglab.stats.calibration.share_with_floor`)."""
        lo, hi = self.ci(self.cov_draws[size][:, k - 1])
        est = Estimate(
            float(self.cov[size][k - 1]),
            float(lo),
            float(hi),
            level=self.level,
            method=METHOD,
            resamples=len(self.draws),
            n=int(self.draws.shape[1]),
        )
        return share_with_floor(est, n=int(self.per_problem[size].shape[0]))

    def over_prompts(self, point: float, draws: np.ndarray) -> Estimate:
        """Any statistic's estimate from its ``(R,)`` values on these curves' prompt
        resamples (NaN values left out): the percentile interval at the curves' level,
        resting on ``n`` = the number of prompts (where a report reads its coverage)."""
        return Estimate.from_draws(
            point, draws, level=self.level, method=METHOD, n=int(self.draws.shape[1])
        )

    def table(self, ks: np.ndarray) -> pd.DataFrame:
        """Coverage with its interval at ``ks``: one row per (size, k)."""
        rows = []
        for s in self.sizes:
            lo, hi = self.ci(self.cov_draws[s])
            for k in ks:
                rows.append(
                    {
                        "size": s,
                        "k": int(k),
                        "coverage": self.cov[s][k - 1],
                        "lo": lo[k - 1],
                        "hi": hi[k - 1],
                    }
                )
        return pd.DataFrame(rows)


def size_arrays(ds: xr.Dataset, size: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` (P,), ``c`` (P,), ``answer`` (P, n_max) and ``correct`` (P, n_max) bool of a size."""
    corr = np.asarray(ds["correct"].sel(size=size).values)
    ans = np.asarray(ds["answer"].sel(size=size).values).astype(np.int64)
    present = corr >= 0
    ans = np.where(present, ans, cv.MISSING)
    return present.sum(axis=1), (corr == 1).sum(axis=1), ans, corr == 1


def max_k(ds: xr.Dataset) -> int:
    """The largest k every problem of every size supports (the smallest n)."""
    return int((np.asarray(ds["correct"].values) >= 0).sum(axis=2).min())


def coverage_curves(
    ds: xr.Dataset, *, k_max: int, reps: int, seed: int, level: float = 0.95
) -> Curves:
    """Pass@k at k = 1..k_max per size, and coverage per problem resample."""
    sizes = [str(s) for s in ds["size"].values]
    ks = np.arange(1, k_max + 1)
    draws = cv.prompt_draws(ds.sizes["prompt"], reps=reps, seed=seed)
    weights = np.zeros((reps, ds.sizes["prompt"]))
    np.add.at(weights, (np.repeat(np.arange(reps), draws.shape[1]), draws.ravel()), 1.0)
    weights /= draws.shape[1]
    per, cov, cdraws = {}, {}, {}
    for s in sizes:
        n, c, _, _ = size_arrays(ds, s)
        per[s] = cv.pass_at_k(n, c, ks)
        cov[s] = per[s].mean(axis=0)
        cdraws[s] = weights @ per[s]
    return Curves(sizes, ks, per, cov, cdraws, draws, level)
