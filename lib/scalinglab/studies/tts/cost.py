"""What repeated sampling costs: FLOPs and Kinetics eFLOPs per (size, k), priced over
each sample's own length, and the compute-optimal choice of size and k under each.

Cost of best-of-k on one problem (:func:`scalinglab.cost_model.inference.kinetics_cost`,
Sadhukhan et al. 2025): ``L_in`` prompt tokens, ``k`` samples sharing the prompt's KV
cache, a sample of ``L`` generated tokens (EOS included) costing::

    FLOPs(L)  = k (2 N L + 2 (2 L_in + L) L n_layer d_model)
    eFLOPs(L) = FLOPs(L) + I * s (2 L_in + k L) L n_layer d_model

with ``I`` the measured hardware record's peak FLOP/s over its memory bytes/s and
``s`` bytes per KV element of the record's dtype (this project's models have
``n_kv_heads = n_heads``). Kinetics prices a problem at each sample's own length and
averages; both costs are quadratic in ``L`` with no constant term (the attention and
KV-read terms grow as ``L^2``), so the average over the samples is exactly the cost at
the first two moments of the length, ``E[L]`` and ``E[L^2]``
(:func:`mean_cost`). Pricing at the mean length, ``cost(E[L])``, leaves out
``Var(L)`` times the quadratic coefficient (Jensen's gap), which the report shows as the
ratio :func:`jensen_ratio`. Both are affine in k, ``cost = fixed + per_sample * k``,
so a budget B buys ``k(B) = floor((B - fixed) / per_sample)`` samples.

Shapes: ``S`` sizes, ``K`` values of k (1..k_max), ``R`` bootstrap replicates,
``B`` budgets, ``P`` prompts, ``n`` samples per prompt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from scalinglab.cost_model.inference import kinetics_cost

MEASURES = ("flops", "eflops")
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}


@dataclass(frozen=True)
class Hardware:
    """What the cost needs from a hardware record."""

    name: str
    intensity_flop_per_byte: float
    kv_dtype_bytes: int


def load_hardware(path: str | Path) -> Hardware:
    """``I = peak_flop_per_s / mem_bytes_per_s`` and the KV element size from a record
    (``data/hardware/*.json``)."""
    rec = json.loads(Path(path).read_text())
    for key in ("peak_flop_per_s", "mem_bytes_per_s"):
        if not rec.get(key, 0) > 0:
            raise ValueError(f"{path}: hardware record needs a positive {key!r}")
    return Hardware(
        rec.get("name", Path(path).stem),
        float(rec["peak_flop_per_s"]) / float(rec["mem_bytes_per_s"]),
        _DTYPE_BYTES.get(rec.get("dtype", "float32"), 4),
    )


@dataclass(frozen=True)
class ModelShape:
    """One size: non-embedding parameters and attention shape."""

    n_params: float
    n_layer: int
    n_head: int
    d_model: int


@dataclass(frozen=True)
class Lengths:
    """The first two moments of a size's generation length over its samples.

    Attributes
    ----------
    mean
        ``E[L]``, tokens generated per sample (EOS included).
    mean_sq
        ``E[L^2]`` (``mean**2`` for pricing at the mean length).
    """

    mean: float
    mean_sq: float

    def __post_init__(self) -> None:
        if not self.mean >= 0 or not self.mean_sq >= self.mean**2 * (1 - 1e-12):
            raise ValueError(
                f"Lengths needs mean >= 0 and mean_sq >= mean**2, got {self.mean}, {self.mean_sq}"
            )

    @classmethod
    def of(cls, lengths: np.ndarray) -> Lengths:
        """From the lengths of every sample (any shape; NaN ignored)."""
        x = np.asarray(lengths, dtype=float)
        x = x[np.isfinite(x)]
        if x.size == 0:
            raise ValueError("no finite generation lengths")
        return cls(float(x.mean()), float(np.mean(x**2)))

    @classmethod
    def at_mean(cls, mean: float) -> Lengths:
        """Every sample at the mean length (the old pricing)."""
        return cls(float(mean), float(mean) ** 2)


def sample_cost(
    shape: ModelShape, *, prompt_len: float, gen_len: float, k: np.ndarray, hw: Hardware
) -> dict[str, np.ndarray]:
    """FLOPs, eFLOPs and the KV-memory part of eFLOPs of best-of-k with every sample
    ``gen_len`` tokens long, each (K,)."""
    c = kinetics_cost(
        shape.n_params,
        prompt_len,
        gen_len,
        n_layer=shape.n_layer,
        n_q_heads=shape.n_head,
        n_kv_heads=shape.n_head,
        head_dim=shape.d_model // shape.n_head,
        n_samples=np.asarray(k, dtype=float),
        intensity_flop_per_byte=hw.intensity_flop_per_byte,
        kv_dtype_bytes=hw.kv_dtype_bytes,
    )
    return {
        "flops": np.asarray(c.compute_flops, dtype=float),
        "eflops": np.asarray(c.eflops, dtype=float),
        "kv_eflops": np.asarray(c.memory_eflops, dtype=float),
    }


def mean_cost(
    shape: ModelShape, *, prompt_len: float, lengths: Lengths, k: np.ndarray, hw: Hardware
) -> dict[str, np.ndarray]:
    """:func:`sample_cost` averaged over each sample's own length, each (K,).

    Every cost is ``c1 L + c2 L^2`` in the length (no constant term), so its average is
    ``c1 E[L] + c2 E[L^2]``; ``c1`` and ``c2`` come from the cost at ``L = 1`` and
    ``L = 2`` (``c2 = (cost(2) - 2 cost(1)) / 2``, ``c1 = cost(1) - c2``).
    """
    one = sample_cost(shape, prompt_len=prompt_len, gen_len=1.0, k=k, hw=hw)
    two = sample_cost(shape, prompt_len=prompt_len, gen_len=2.0, k=k, hw=hw)
    out = {}
    for m in one:
        c2 = (two[m] - 2.0 * one[m]) / 2.0
        c1 = one[m] - c2
        out[m] = c1 * lengths.mean + c2 * lengths.mean_sq
    return out


def jensen_ratio(
    shape: ModelShape, *, prompt_len: float, lengths: Lengths, k: int, hw: Hardware
) -> dict[str, float]:
    """Per measure, the cost averaged over each sample's length over the cost at the
    mean length, at ``k`` samples (>= 1; 1 when every sample has the same length)."""
    ks = np.array([k])
    own = mean_cost(shape, prompt_len=prompt_len, lengths=lengths, k=ks, hw=hw)
    at = sample_cost(shape, prompt_len=prompt_len, gen_len=lengths.mean, k=ks, hw=hw)
    return {m: float(own[m][0] / at[m][0]) for m in ("flops", "eflops")}


def cost_table(
    shapes: dict[str, ModelShape],
    lengths: dict[str, Lengths],
    *,
    prompt_len: float,
    ks: np.ndarray,
    hw: Hardware,
) -> pd.DataFrame:
    """One row per (size, k): ``flops``, ``eflops``, ``kv_eflops``, ``kv_share``, each
    averaged over the size's sample lengths (:func:`mean_cost`)."""
    rows = []
    for s, shape in shapes.items():
        c = mean_cost(shape, prompt_len=prompt_len, lengths=lengths[s], k=ks, hw=hw)
        rows.append(
            pd.DataFrame(
                {"size": s, "k": np.asarray(ks), **c, "kv_share": c["kv_eflops"] / c["eflops"]}
            )
        )
    return pd.concat(rows, ignore_index=True)


def affordable_k(fixed: float, per_sample: float, budgets: np.ndarray, *, k_max: int) -> np.ndarray:
    """(B,) samples a budget buys, ``floor((B - fixed) / per_sample)`` capped at ``k_max``
    (0 when not even one sample fits)."""
    k = np.floor((np.asarray(budgets, dtype=float) - fixed) / per_sample + 1e-9)
    return np.clip(k, 0, k_max).astype(np.int64)


@dataclass
class Matched:
    """Coverage at equal cost.

    Attributes
    ----------
    budgets
        (B,) budgets in the measure's units.
    k
        (S, B) samples each size affords.
    coverage
        (S, B) coverage on all problems (NaN where k = 0).
    draws
        (R, S, B) the same on resampled problems.
    """

    measure: str
    sizes: list[str]
    budgets: np.ndarray
    k: np.ndarray
    coverage: np.ndarray
    draws: np.ndarray

    def best(self) -> np.ndarray:
        """(B,) index of the size with the highest coverage at each budget."""
        return np.nanargmax(np.where(np.isnan(self.coverage), -1, self.coverage), axis=0)


def matched(
    measure: str,
    costs: pd.DataFrame,
    curves: dict[str, np.ndarray],
    curve_draws: dict[str, np.ndarray],
    budgets: np.ndarray,
) -> Matched:
    """Coverage of each size at each budget under ``measure`` (``"flops"``/``"eflops"``).

    Parameters
    ----------
    costs
        :func:`cost_table` over k = 1..k_max (at least k = 1 and 2).
    curves
        size -> (k_max,) coverage at k = 1..k_max.
    curve_draws
        size -> (R, k_max) the same per resample.
    """
    sizes = list(curves)
    k_max = len(next(iter(curves.values())))
    ks, cov, draws = [], [], []
    for s in sizes:
        c = costs[costs["size"] == s].set_index("k")[measure]
        per = float(c.loc[2] - c.loc[1])
        k = affordable_k(float(c.loc[1]) - per, per, budgets, k_max=k_max)
        ks.append(k)
        idx = np.maximum(k - 1, 0)
        cov.append(np.where(k > 0, curves[s][idx], np.nan))
        draws.append(np.where(k > 0, curve_draws[s][:, idx], np.nan))
    return Matched(
        measure,
        sizes,
        np.asarray(budgets, dtype=float),
        np.array(ks),
        np.array(cov),
        np.stack(draws, axis=1),
    )


def common_budgets(costs: pd.DataFrame, measure: str, *, k_max: int, n: int = 12) -> np.ndarray:
    """(n,) log-spaced budgets where every size affords between 1 and ``k_max`` samples."""
    by = costs.pivot(index="k", columns="size", values=measure)
    lo, hi = float(by.loc[1].max()), float(by.loc[k_max].min())
    if not hi > lo:
        raise ValueError(f"no budget where every size affords 1..{k_max} samples under {measure}")
    return np.geomspace(lo, hi, n)


def advantage_small(m: Matched, small: str, large: str) -> tuple[np.ndarray, np.ndarray]:
    """Coverage of ``small`` minus ``large`` at each budget: point (B,) and draws (R, B)."""
    i, j = m.sizes.index(small), m.sizes.index(large)
    return m.coverage[i] - m.coverage[j], m.draws[:, i] - m.draws[:, j]


def disagreement(mf: Matched, me: Matched) -> tuple[float, np.ndarray]:
    """Share of budget ranks where the best size differs between two measures (point,
    and (R,) draws), budgets matched by rank (both grids span their common range)."""

    def best(draws):
        d = np.where(np.isnan(draws), -1, draws)
        return d.argmax(axis=-2)

    point = float(np.mean(mf.best() != me.best()))
    return point, np.mean(best(mf.draws) != best(me.draws), axis=-1)


def shapes_of(ds) -> dict[str, ModelShape]:
    """The model shapes a sample Dataset records per size (``n_params``, ``n_layer``,
    ``n_head``, ``d_model`` coords); ``{}`` when it has none (a user's table)."""
    need = ("n_params", "n_layer", "n_head", "d_model")
    if not all(c in ds.coords for c in need):
        return {}
    return {
        str(s): ModelShape(
            float(ds["n_params"].sel(size=s)),
            int(ds["n_layer"].sel(size=s)),
            int(ds["n_head"].sel(size=s)),
            int(ds["d_model"].sel(size=s)),
        )
        for s in ds["size"].values
    }


def params_text(ds) -> str:
    """The sampled sizes' parameter counts as a range in words, e.g. ``"25k-148k"`` (a
    claim's regime names them from the data); ``"unknown-size"`` when the samples record
    no shapes (a user's table)."""
    shapes = shapes_of(ds)
    if not shapes:
        return "unknown-size"
    n = sorted(sh.n_params for sh in shapes.values())
    return "-".join(dict.fromkeys(f"{v / 1e3:.0f}k" for v in (n[0], n[-1])))


def kv_share(
    shape: ModelShape, *, prompt_len: float, lengths: Lengths, k: int, hw: Hardware
) -> float:
    """KV-memory share of eFLOPs at ``k`` samples, over each sample's own length."""
    c = mean_cost(shape, prompt_len=prompt_len, lengths=lengths, k=np.array([k]), hw=hw)
    return float(c["kv_eflops"][0] / c["eflops"][0])


def kv_per_param_flop(
    shape: ModelShape, *, prompt_len: float, lengths: Lengths, k: int, hw: Hardware
) -> float:
    """KV-read eFLOPs per FLOP in the weights (``2 N`` per token) at ``k`` samples.

    With ``n_kv_heads = n_heads`` it is ``I s (2 L_in E[L] / k + E[L^2]) n_layer d_model
    / (2 N E[L])``; with ``N`` about ``12 n_layer d_model^2`` that is proportional to
    ``1 / d_model`` at given lengths: a property of the formula and the shapes, which
    the report checks rather than tests (KIN-2).
    """
    c = mean_cost(shape, prompt_len=prompt_len, lengths=lengths, k=np.array([k]), hw=hw)
    return float(c["kv_eflops"][0] / (2.0 * shape.n_params * lengths.mean * k))


def gen_lengths(ds) -> dict[str, Lengths]:
    """Each size's length moments over all its samples (``tokens``, NaN ignored)."""
    return {
        str(s): Lengths.of(np.asarray(ds["tokens"].sel(size=s).values, dtype=float))
        for s in ds["size"].values
    }


def equal_cost_upsample(
    m: Matched, small: str, large: str, *, k_large: int = 1
) -> tuple[float, np.ndarray, int]:
    """Coverage of ``small`` at the budget of ``k_large`` samples of ``large``, minus
    ``large``'s coverage there: point, (R,) draws and the k ``small`` affords.

    Uses the matched budgets' own cost grid: ``m`` must be built with ``budgets`` whose
    first entry is that budget (see :func:`matched`).
    """
    i, j = m.sizes.index(small), m.sizes.index(large)
    return (
        float(m.coverage[i, 0] - m.coverage[j, 0]),
        m.draws[:, i, 0] - m.draws[:, j, 0],
        int(m.k[i, 0]),
    )
