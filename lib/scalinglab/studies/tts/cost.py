"""What repeated sampling costs: FLOPs and Kinetics eFLOPs per (size, k), and the
compute-optimal choice of size and k under each.

Cost of best-of-k on one problem (:func:`scalinglab.cost_model.inference.kinetics_cost`,
Sadhukhan et al. 2025): ``L_in`` prompt tokens, ``L_out`` generated tokens (the
size's measured mean, EOS included), ``k`` samples sharing the prompt's KV cache::

    FLOPs  = k (2 N L_out + 2 (2 L_in + L_out) L_out n_layer d_model)
    eFLOPs = FLOPs + I * s (2 L_in + k L_out) L_out n_layer d_model

with ``I`` the measured hardware record's peak FLOP/s over its memory bytes/s and
``s`` bytes per KV element of the record's dtype (this project's models have
``n_kv_heads = n_heads``). Both are affine in k, ``cost = fixed + per_sample * k``,
so a budget B buys ``k(B) = floor((B - fixed) / per_sample)`` samples.

Shapes: ``S`` sizes, ``K`` values of k (1..k_max), ``R`` bootstrap replicates,
``B`` budgets.
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


def sample_cost(
    shape: ModelShape, *, prompt_len: float, gen_len: float, k: np.ndarray, hw: Hardware
) -> dict[str, np.ndarray]:
    """FLOPs, eFLOPs and the KV-memory part of eFLOPs of best-of-k, each (K,)."""
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


def cost_table(
    shapes: dict[str, ModelShape],
    gen_len: dict[str, float],
    *,
    prompt_len: float,
    ks: np.ndarray,
    hw: Hardware,
) -> pd.DataFrame:
    """One row per (size, k): ``flops``, ``eflops``, ``kv_eflops``, ``kv_share``."""
    rows = []
    for s, shape in shapes.items():
        c = sample_cost(shape, prompt_len=prompt_len, gen_len=gen_len[s], k=ks, hw=hw)
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


def kv_share(
    shape: ModelShape, *, prompt_len: float, gen_len: np.ndarray, k: int, hw: Hardware
) -> np.ndarray:
    """KV-memory share of eFLOPs at ``k`` samples for each mean generation length (R,)."""
    out = [
        sample_cost(shape, prompt_len=prompt_len, gen_len=float(g), k=np.array([k]), hw=hw)
        for g in np.atleast_1d(gen_len)
    ]
    return np.array([o["kv_eflops"][0] / o["eflops"][0] for o in out])


def gen_lengths(ds, draws: np.ndarray) -> dict[str, tuple[float, np.ndarray]]:
    """Mean generated tokens per size: point and (R,) per problem resample ``draws`` (R, P)."""
    out = {}
    for s in ds["size"].values:
        tok = np.asarray(ds["tokens"].sel(size=s).values, dtype=float)
        per = np.nanmean(tok, axis=1)
        out[str(s)] = (float(per.mean()), per[draws].mean(axis=1))
    return out


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
