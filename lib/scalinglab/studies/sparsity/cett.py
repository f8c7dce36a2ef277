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
- An outer search over the CETT target finds the sparsest setting whose
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

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
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


# ----------------------------------------------------------------------------- evaluation
@dataclass(frozen=True)
class SparseEval:
    """Held-out loss and activation of one (possibly truncated) forward pass.

    ``layer_ratio`` (n_layer,): active fraction per layer (tokens averaged);
    ``natural_ratio`` (n_layer,): fraction of ``h_i != 0`` before truncation.
    """

    nll: float
    layer_ratio: np.ndarray
    natural_ratio: np.ndarray
    n_tokens: int

    @property
    def activation_ratio(self) -> float:
        return float(np.mean(self.layer_ratio))


@torch.no_grad()
def evaluate_sparse(
    model: Transformer,
    windows: Tensor,
    policy: MaskPolicy | None = None,
    *,
    batch_size: int = 32,
    hiddens: list[list[Tensor]] | None = None,
) -> SparseEval:
    """Mean next-token NLL on ``windows`` with inactive neurons zeroed by ``policy``.

    Parameters
    ----------
    windows
        Token ids (n, T + 1): inputs ``[:, :-1]``, targets ``[:, 1:]``.
    policy
        ``policy(layer, h) -> active`` mask; None runs the dense model.
    batch_size
        Windows per forward pass.
    hiddens
        If given (a list of ``n_layer`` empty lists), each layer's hiddens (as the
        layer saw them) are appended per batch, each (b, T, F).
    """
    model.eval()
    n_layer = model.cfg.n_layer
    active = np.zeros(n_layer)
    nonzero = np.zeros(n_layer)
    count = np.zeros(n_layer)

    def hook(layer: int, h: Tensor) -> Tensor | None:
        if hiddens is not None:
            hiddens[layer].append(h.detach())
        nonzero[layer] += float((h != 0).sum())
        count[layer] += h.numel()
        if policy is None:
            active[layer] += float((h != 0).sum())
            return None
        mask = policy(layer, h)
        active[layer] += float(mask.sum())
        return h * mask

    total, n_tok = 0.0, 0
    windows = windows.to(model.device)
    for start in range(0, windows.shape[0], batch_size):
        w = windows[start : start + batch_size]
        logits = model(w[:, :-1], ffn_hook=hook)
        total += float(
            F.cross_entropy(logits.flatten(0, 1).double(), w[:, 1:].flatten(), reduction="sum")
        )
        n_tok += w[:, 1:].numel()
    return SparseEval(
        nll=total / n_tok, layer_ratio=active / count, natural_ratio=nonzero / count, n_tokens=n_tok
    )


# ----------------------------------------------------------------------------- PPL-p%
@dataclass(frozen=True)
class SparsityResult:
    """The sparsest setting of a method within the PPL budget.

    Attributes
    ----------
    method
        ``"cett"``, ``"topk"`` or ``"threshold"``.
    p
        PPL budget in percent.
    knob
        The searched setting: CETT target, Top-k kept fraction, or the threshold.
    thresholds
        (n_layer,) per-layer thresholds (CETT), the shared one (threshold), NaN (Top-k).
    layer_ratio, natural_ratio
        (n_layer,) active fraction after truncation; nonzero fraction of the dense model.
    activation_ratio
        Mean of ``layer_ratio``.
    nll, dense_nll
        Held-out mean NLL (nats/token) truncated and dense; ``ppl_ratio = exp(nll - dense_nll)``.
    n_tokens, n_forward
        Tokens evaluated; truncated forward passes the outer search used.
    cett_evaluations
        CETT evaluations of the per-layer threshold searches.
    extra
        ``infeasible_knob``: the nearest evaluated setting past ``knob`` that broke
        the budget (None if none did), the other end of the final bracket; for
        CETT also ``infeasible_thresholds``, the per-layer thresholds used there.
    """

    method: str
    p: float
    knob: float
    thresholds: np.ndarray
    layer_ratio: np.ndarray
    natural_ratio: np.ndarray
    activation_ratio: float
    nll: float
    dense_nll: float
    n_tokens: int
    n_forward: int
    cett_evaluations: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def ppl_ratio(self) -> float:
        return math.exp(self.nll - self.dense_nll)

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("thresholds", "layer_ratio", "natural_ratio"):
            d[k] = [float(v) for v in d[k]]
        d["ppl_ratio"] = self.ppl_ratio
        return d


def ppl_sparsity(
    model: Transformer,
    windows: Tensor,
    *,
    p: float = 1.0,
    method: Method = "cett",
    batch_size: int = 32,
    cett_tol: float = 1e-3,
    knob_tol: float = 1e-3,
    ppl_tol: float = 2e-4,
    max_outer: int = 24,
    dense: tuple[SparseEval, list[list[Tensor]]] | None = None,
) -> SparsityResult:
    """PPL-p% sparsity of ``model`` on ``windows`` with one method.

    Parameters
    ----------
    windows
        Held-out token windows (n, T + 1); the same tokens calibrate the
        thresholds and measure perplexity.
    p
        Allowed perplexity rise in percent: the result satisfies
        ``ppl <= (1 + p/100) * dense ppl``.
    method
        ``"cett"`` (per-layer thresholds from a CETT target, the paper's metric),
        ``"topk"`` (kept fraction per token and layer) or ``"threshold"`` (one
        contribution threshold for every layer).
    cett_tol
        Per-layer CETT tolerance of the threshold search (absolute).
    knob_tol
        Stop when the searched setting's bracket is this narrow (relative to its
        range: CETT target in [0, 1], kept fraction, threshold / max contribution);
        for Top-k the search stops at one neuron of the narrowest layer.
    ppl_tol
        Stop when ``log(1 + p/100) - log(ppl / dense ppl) <= ppl_tol``.
    max_outer
        Most truncated forward passes of the outer search.
    dense
        A precomputed ``(dense SparseEval, dense hiddens)`` from
        :func:`dense_pass` on the same windows (reused across methods).

    Returns
    -------
    SparsityResult
    """
    if method not in METHODS:
        raise ValueError(f"unknown sparsity method {method!r}; choose from {METHODS}")
    if p < 0:
        raise ValueError(f"PPL budget p must be >= 0, got {p}")
    base, hid = dense if dense is not None else dense_pass(model, windows, batch_size=batch_size)
    norms = down_column_norms(model)
    budget = math.log1p(p / 100.0)
    evals: dict[float, SparseEval] = {}
    layers: list[LayerCETT] = []

    if method == "cett":
        layers = [
            LayerCETT(torch.cat(h), blk.ffn.down.weight)
            for h, blk in zip(hid, model.blocks, strict=True)
        ]
        x_max, x_tol = 1.0, knob_tol

        def policy_of(x: float) -> MaskPolicy:
            return threshold_policy(cett_thresholds(layers, x, tol=cett_tol), norms)
    elif method == "topk":
        x_max, x_tol = 1.0, max(knob_tol, 0.5 / model.cfg.ffn_width)

        def policy_of(x: float) -> MaskPolicy:
            return topk_policy(1.0 - x, norms)
    else:
        x_max = max(
            float(contributions(torch.cat(h), n).max()) for h, n in zip(hid, norms, strict=True)
        )
        x_tol = knob_tol * x_max

        def policy_of(x: float) -> MaskPolicy:
            return threshold_policy([x] * len(norms), norms)

    def f(x: float) -> float:
        if x not in evals:
            evals[x] = evaluate_sparse(model, windows, policy_of(x), batch_size=batch_size)
        return (evals[x].nll - base.nll) - budget

    f_hi = f(x_max)
    x = (
        x_max
        if f_hi <= 0
        else bracket_search(
            f, 0.0, x_max, -budget, f_hi, x_tol=x_tol, f_tol=ppl_tol, max_iter=max_outer
        )
    )
    if x == 0.0 and 0.0 not in evals:
        evals[0.0] = evaluate_sparse(model, windows, policy_of(0.0), batch_size=batch_size)
    ev = evals[x]
    over = min((k for k, e in evals.items() if e.nll - base.nll > budget), default=None)
    extra: dict = {"infeasible_knob": over}
    if over is not None and method == "topk":
        extra["infeasible_knob"] = 1.0 - over
    if over is not None and method == "cett":
        extra["infeasible_thresholds"] = cett_thresholds(layers, over, tol=cett_tol).tolist()
    if method == "cett":
        thresholds, knob = cett_thresholds(layers, x, tol=cett_tol), x
    elif method == "topk":
        thresholds, knob = np.full(len(norms), np.nan), 1.0 - x
    else:
        thresholds, knob = np.full(len(norms), x), x
    return SparsityResult(
        method=method,
        p=float(p),
        knob=float(knob),
        thresholds=thresholds,
        layer_ratio=ev.layer_ratio,
        natural_ratio=base.natural_ratio,
        activation_ratio=ev.activation_ratio,
        nll=ev.nll,
        dense_nll=base.nll,
        n_tokens=ev.n_tokens,
        n_forward=len(evals),
        cett_evaluations=sum(lc.evaluations for lc in layers),
        extra=extra,
    )


def dense_pass(
    model: Transformer, windows: Tensor, *, batch_size: int = 32
) -> tuple[SparseEval, list[list[Tensor]]]:
    """The dense evaluation and every layer's hiddens (lists of (b, T, F) per batch)."""
    hid: list[list[Tensor]] = [[] for _ in range(model.cfg.n_layer)]
    return evaluate_sparse(model, windows, None, batch_size=batch_size, hiddens=hid), hid


def sparsity_report(
    model: Transformer,
    windows: Tensor,
    *,
    p: float = 1.0,
    methods: tuple[str, ...] = ("cett",),
    batch_size: int = 32,
    **options,
) -> dict[str, SparsityResult]:
    """:func:`ppl_sparsity` for several methods sharing one dense pass."""
    dense = dense_pass(model, windows, batch_size=batch_size)
    return {
        m: ppl_sparsity(
            model, windows, p=p, method=m, batch_size=batch_size, dense=dense, **options
        )
        for m in methods
    }
