"""PPL-p% activation sparsity (Luo et al. 2024): the sparsest setting within a
perplexity budget, for the CETT thresholds of :mod:`scalinglab.studies.sparsity.cett`
and the Top-k and fixed-threshold baselines.

- :func:`evaluate_sparse`: a truncated forward pass under a mask policy (each layer
  sees the hiddens of the already-truncated layers below): held-out loss and the
  activation ratio (fraction of active neurons, over tokens, then layers).
- :func:`ppl_sparsity`: the outer search over the CETT target (or the baselines' kept
  fraction / shared threshold) for the sparsest setting whose perplexity is at most
  ``(1 + p/100)`` times the dense perplexity on the same tokens.
- :func:`dense_pass`, :func:`sparsity_report`: the dense reference and every method
  at once.

Hand-written for the reason :mod:`.cett` gives: no library implements PPL-p%.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from scalinglab.models.transformer import Transformer
from scalinglab.studies.sparsity.cett import (
    METHODS,
    LayerCETT,
    MaskPolicy,
    Method,
    bracket_search,
    cett_thresholds,
    contributions,
    down_column_norms,
    threshold_policy,
    topk_policy,
)


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
    methods: tuple[Method, ...] = ("cett",),
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
