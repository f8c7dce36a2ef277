"""PPL-p% activation sparsity (Luo et al. 2024): CETT, per-layer thresholds, baselines.

The metric of ``docs/studies/sparsity_laws.md``. For a gated FFN ``out = W_down h``
with ``h = act(W_gate x) * (W_up x)`` (shapes: ``h`` (N, F) over N tokens,
``W_down`` (D, F) as stored by ``nn.Linear``), neuron ``i``'s contribution to a
token is ``c_i = |h_i| * ||W_down[:, i]||``. A neuron is *inactive* when
``c_i <= t`` for its layer's threshold ``t`` (``<=`` so that exact zeros, e.g. a
ReLU gate at 0, are inactive even at ``t = 0``; otherwise identical to "below").

- CETT (cumulative error of tail truncation) of a layer at ``t``: the mean over
  tokens of ``||W_down (h * inactive)|| / ||W_down h||`` (a token whose FFN output is
  exactly zero counts 0: nothing to truncate).
- For a CETT target, each layer's ``t`` is found on the *dense* model's hiddens by
  a bracketed root search (false position with a bisection safeguard), keeping the
  largest ``t`` whose CETT is at most the target; CETT evaluations are memoised per
  layer, so the outer search reuses them.
- (:mod:`scalinglab.studies.sparsity.ppl_sparsity`) An outer search over the CETT target finds the sparsest setting whose
  perplexity is at most ``(1 + p/100)`` times the dense perplexity on the same
  tokens (``p = 1``: PPL-1%). The activation ratio (fraction of active neurons,
  averaged over tokens, then over layers) is measured in that truncated forward
  pass, where each layer sees the hiddens of the already-truncated layers below.
- Baselines under the same PPL budget: Top-k per layer and per token (fixed
  kept fraction) and one fixed threshold on ``c_i`` shared by every layer.

Hand-written because no library implements CETT; torch does the vectorised
arithmetic (one matmul per CETT evaluation, over all tokens at once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import torch
from torch import Tensor

from scalinglab.models.transformer import Transformer

#: ``policy(layer, h) -> active`` (bool, same shape as ``h`` (..., F)).
MaskPolicy = Callable[[int, Tensor], Tensor]
Method = Literal["cett", "topk", "threshold"]
METHODS: tuple[str, ...] = ("cett", "topk", "threshold")


# ----------------------------------------------------------------------------- CETT
def down_column_norms(model: Transformer) -> list[Tensor]:
    """``||W_down[:, i]||`` of every layer: a list of ``n_layer`` tensors (F,)."""
    return [blk.ffn.down.weight.detach().norm(dim=0) for blk in model.blocks]


def contributions(h: Tensor, col_norms: Tensor) -> Tensor:
    """``|h_i| * ||W_down[:, i]||`` for hiddens ``h`` (..., F); same shape as ``h``."""
    return h.abs() * col_norms


def cett(h: Tensor, w_down: Tensor, threshold: float) -> float:
    """CETT of one layer at ``threshold``.

    Parameters
    ----------
    h
        Hiddens (N, F) (any leading shape is flattened to tokens).
    w_down
        The down projection (D, F).
    threshold
        ``t``: neurons with ``|h_i| ||W_down[:, i]|| <= t`` are truncated.

    Returns
    -------
    float
        Mean over tokens of ``||W_down (h * inactive)|| / ||W_down h||``.
    """
    return LayerCETT(h, w_down)(threshold)


class LayerCETT:
    """One layer's CETT as a function of the threshold, memoised (for the searches).

    Parameters
    ----------
    h
        Dense hiddens (..., F), flattened to (N, F).
    w_down
        Down projection (D, F).
    """

    def __init__(self, h: Tensor, w_down: Tensor) -> None:
        self.h = h.detach().reshape(-1, h.shape[-1]).float()
        self.w_t = w_down.detach().float().t().contiguous()  # (F, D)
        self.c = contributions(self.h, w_down.detach().float().norm(dim=0))
        den = (self.h @ self.w_t).norm(dim=1)
        self._den = den
        self._has = den > 0
        self.t_max = float(self.c.max()) if self.c.numel() else 0.0
        self.memo: dict[float, float] = {0.0: self._eval(0.0)}
        self.evaluations = 0

    def _eval(self, t: float) -> float:
        tail = (self.h * (self.c <= t)) @ self.w_t
        ratio = torch.where(
            self._has, tail.norm(dim=1) / self._den.clamp_min(1e-30), torch.zeros_like(self._den)
        )
        return float(ratio.double().mean()) if ratio.numel() else 0.0

    def __call__(self, t: float) -> float:
        t = float(t)
        if t not in self.memo:
            self.memo[t] = self._eval(t)
            self.evaluations += 1
        return self.memo[t]

    def threshold(self, target: float, *, tol: float = 1e-3, max_iter: int = 60) -> float:
        """The largest threshold found with CETT <= ``target`` (within ``tol`` below it).

        Starts from the tightest bracket among the memoised evaluations; stops
        when ``target - CETT(t) <= tol`` or the bracket is below float resolution.
        """
        if target < 0:
            raise ValueError(f"CETT target must be >= 0, got {target}")
        if target >= self(self.t_max):
            return self.t_max
        hi = min(t for t, v in self.memo.items() if v > target)
        lo = max((t for t, v in self.memo.items() if v <= target and t < hi), default=0.0)
        x_tol = 1e-7 * max(self.t_max, 1e-30)
        return bracket_search(
            lambda t: self(t) - target,
            lo,
            hi,
            self(lo) - target,
            self(hi) - target,
            x_tol=x_tol,
            f_tol=tol,
            max_iter=max_iter,
        )


def bracket_search(
    f: Callable[[float], float],
    lo: float,
    hi: float,
    f_lo: float,
    f_hi: float,
    *,
    x_tol: float,
    f_tol: float,
    max_iter: int = 60,
) -> float:
    """Largest feasible ``x`` (``f(x) <= 0``) of a nondecreasing ``f`` in ``[lo, hi]``.

    Needs ``f_lo <= 0 < f_hi``. False position (the secant through the bracket)
    with a bisection safeguard: a step that does not halve the bracket is
    followed by a bisection, so the bracket shrinks at least as fast as
    bisection every two steps. Stops when ``-f(lo) <= f_tol`` (close enough
    below the root), ``hi - lo <= x_tol`` or after ``max_iter`` evaluations.

    Returns
    -------
    float
        ``lo``, a point with ``f(lo) <= 0``.
    """
    if not f_lo <= 0.0 < f_hi:
        raise ValueError(f"bracket_search needs f(lo) <= 0 < f(hi), got {f_lo}, {f_hi}")
    bisect = False
    for _ in range(max_iter):
        width = hi - lo
        if -f_lo <= f_tol or width <= x_tol:
            break
        if bisect:
            x = lo + 0.5 * width
        else:
            x = lo + width * (-f_lo) / (f_hi - f_lo)
            x = min(max(x, lo + 0.02 * width), hi - 0.02 * width)
        fx = f(x)
        if fx <= 0.0:
            lo, f_lo = x, fx
        else:
            hi, f_hi = x, fx
        bisect = (not bisect) and (hi - lo) > 0.5 * width
    return lo


def cett_thresholds(layers: list[LayerCETT], target: float, *, tol: float = 1e-3) -> np.ndarray:
    """Per-layer thresholds (n_layer,) whose CETT is at most ``target`` (within ``tol``)."""
    return np.array([lc.threshold(target, tol=tol) for lc in layers])


# ----------------------------------------------------------------------------- policies
def threshold_policy(thresholds: np.ndarray | list[float], col_norms: list[Tensor]) -> MaskPolicy:
    """Active where ``|h_i| ||W_down[:, i]|| > thresholds[layer]``."""
    th = [float(t) for t in np.broadcast_to(np.asarray(thresholds, float), (len(col_norms),))]
    return lambda layer, h: contributions(h, col_norms[layer]) > th[layer]


def topk_policy(keep: float, col_norms: list[Tensor]) -> MaskPolicy:
    """Active: the ``round(keep * F)`` largest contributions of each token in each layer."""
    if not 0.0 <= keep <= 1.0:
        raise ValueError(f"keep fraction must be in [0, 1], got {keep}")

    def policy(layer: int, h: Tensor) -> Tensor:
        f = h.shape[-1]
        k = int(round(keep * f))
        active = torch.zeros_like(h, dtype=torch.bool)
        if k > 0:
            idx = contributions(h, col_norms[layer]).topk(k, dim=-1, sorted=False).indices
            active.scatter_(-1, idx, True)
        return active

    return policy
