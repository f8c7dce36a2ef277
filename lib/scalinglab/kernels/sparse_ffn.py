"""A sparse FFN that computes only the active neurons (torch gather + GEMM, numba streaming).

For a gated FFN ``y = W_down (act(W_gate x) * (W_up x))`` (``W_gate, W_up``:
(F, D); ``W_down``: (D, F), the ``nn.Linear`` layouts) and a set of active
neurons ``S`` (from an activation predictor, or the union over a batch of the
tokens' active sets), the output restricted to ``S`` needs only rows ``S`` of
``W_gate`` and ``W_up`` and columns ``S`` of ``W_down``: a fraction ``|S| / F`` of
the weights, the point of activation sparsity (``docs/studies/sparsity_laws.md``).

Two implementations of :meth:`SparseFFN.forward`:

- ``impl="torch"``: gather the active rows (``W_down`` is stored transposed, so its
  columns are rows too) with ``index_select`` into *preallocated* buffers, then
  three GEMMs on the gathered ``(|S|, D)`` blocks. Gathering into fresh tensors
  allocates and page-faults ``3 |S| D`` floats per call, which collapses for large
  matrices (``docs/studies/kernels_cost_models.md``); the buffers are allocated once.
  Works on any torch device (CUDA included).
- ``impl="numba"``: a streaming kernel that never copies weights: each thread
  walks a chunk of the active neurons, computing the neuron's gate and up dot
  products for every token and adding ``h_i W_down[:, i]`` into its own
  accumulator (``(B, D)`` per thread, summed at the end). Each active weight row is
  read once from memory, the minimum traffic the cost model counts. Hand-written
  because no library has a gather-free sparse FFN for the CPU.

Per-token masks (``token_mask`` (B, F)) make the result equal to the dense FFN
with each token's inactive neurons zeroed while the weights of the union are read
once. The returned tensor of the torch path is a view of an internal buffer,
overwritten by the next call (copy it to keep it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numba
import numpy as np
import torch
import torch.nn.functional as F
import xarray as xr
from numba import njit, prange
from torch import Tensor

from scalinglab.kernels.simd import prefer_wide_vectors

Impl = Literal["torch", "numba"]


@njit(cache=True, fastmath=True, parallel=True)
def _stream(x, wg, wu, wdt, idx, act, gated, tmask, use_mask, parts):  # pragma: no cover - jit
    """Streaming sparse FFN; ``act`` 0 relu, 1 silu; ``parts`` (P, B, D) accumulators."""
    n_parts, b_sz, d = parts.shape
    k = idx.size
    for p in prange(n_parts):
        prefer_wide_vectors()
        acc = parts[p]
        acc[:, :] = 0.0
        lo = p * k // n_parts
        hi = (p + 1) * k // n_parts
        for j in range(lo, hi):
            i = idx[j]
            for b in range(b_sz):
                u = np.float32(0.0)
                g = np.float32(0.0)
                for c in range(d):
                    u += wu[i, c] * x[b, c]
                if gated:
                    for c in range(d):
                        g += wg[i, c] * x[b, c]
                else:
                    g = u
                    u = np.float32(1.0)
                if act == 0:
                    a = g if g > 0 else np.float32(0.0)
                else:
                    a = g / (np.float32(1.0) + np.exp(-g))
                h = a * u
                if use_mask:
                    h *= tmask[b, i]
                if h != 0:
                    for c in range(d):
                        acc[b, c] += h * wdt[i, c]


class SparseFFN:
    """An FFN evaluated on a subset of its neurons.

    Parameters
    ----------
    w_up
        (F, D) up projection (the only input projection of a plain FFN).
    w_down
        (D, F) down projection.
    w_gate
        (F, D) gate projection of a gated FFN, or None for ``W_down act(W_up x)``.
    activation
        ``"relu"`` or ``"silu"``.
    max_batch
        Most tokens per call (sizes the buffers).
    """

    def __init__(
        self,
        w_up: Tensor,
        w_down: Tensor,
        w_gate: Tensor | None = None,
        *,
        activation: Literal["relu", "silu"] = "relu",
        max_batch: int = 1,
    ) -> None:
        if activation not in ("relu", "silu"):
            raise ValueError(f"activation must be 'relu' or 'silu', got {activation!r}")
        f, d = w_up.shape
        if w_down.shape != (d, f) or (w_gate is not None and w_gate.shape != (f, d)):
            raise ValueError(
                f"shapes: w_up {tuple(w_up.shape)}, w_down {tuple(w_down.shape)}, "
                f"w_gate {None if w_gate is None else tuple(w_gate.shape)}"
            )
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        self.activation = activation
        self.max_batch = int(max_batch)
        self.w_up = w_up.detach().contiguous()
        self.w_gate = None if w_gate is None else w_gate.detach().contiguous()
        self.w_down_t = w_down.detach().t().contiguous()  # (F, D): columns as rows
        kw = {"dtype": self.w_up.dtype, "device": self.w_up.device}
        self._up = torch.empty((f, d), **kw)
        self._gate = torch.empty((f, d), **kw) if self.gated else None
        self._down = torch.empty((f, d), **kw)
        self._hu = torch.empty(self.max_batch * f, **kw)
        self._hg = torch.empty(self.max_batch * f, **kw)
        self._y = torch.empty((self.max_batch, d), **kw)

    @classmethod
    def from_module(cls, ffn: torch.nn.Module, *, max_batch: int = 1) -> SparseFFN:
        """From a :class:`scalinglab.models.transformer.FeedForward` (no biases)."""
        if any(
            getattr(m, "bias", None) is not None
            for m in (ffn.up, ffn.down, ffn.gate)
            if m is not None
        ):
            raise ValueError("SparseFFN supports FFNs without biases")
        name = {F.relu: "relu", F.silu: "silu"}.get(ffn.act)
        if name is None:
            raise ValueError("SparseFFN supports relu and silu activations")
        return cls(
            ffn.up.weight,
            ffn.down.weight,
            None if ffn.gate is None else ffn.gate.weight,
            activation=name,
            max_batch=max_batch,
        )

    @property
    def gated(self) -> bool:
        return self.w_gate is not None

    @property
    def d_ff(self) -> int:
        return self.w_up.shape[0]

    @property
    def d_model(self) -> int:
        return self.w_up.shape[1]

    def _act(self, g: Tensor, *, inplace: bool = False) -> Tensor:
        if self.activation == "relu":
            return torch.relu_(g) if inplace else torch.relu(g)
        return F.silu(g, inplace=inplace)

    def hidden(self, x: Tensor) -> Tensor:
        """Dense hidden ``h`` (B, F) of ``x`` (B, D)."""
        if self.gated:
            return self._act(x @ self.w_gate.t()) * (x @ self.w_up.t())
        return self._act(x @ self.w_up.t())

    def dense(self, x: Tensor, *, token_mask: Tensor | None = None) -> Tensor:
        """The dense FFN (B, D) (the reference); ``token_mask`` (B, F) zeroes neurons per token."""
        h = self.hidden(x)
        if token_mask is not None:
            h = h * token_mask
        return h @ self.w_down_t

    def _indices(self, active: Tensor) -> Tensor:
        if active.dtype == torch.bool:
            if active.shape != (self.d_ff,):
                raise ValueError(f"boolean active mask must have shape ({self.d_ff},)")
            return active.nonzero().squeeze(1)
        idx = active.to(torch.long).reshape(-1)
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= self.d_ff):
            raise ValueError(f"active indices must be in [0, {self.d_ff})")
        return idx

    def forward(
        self, x: Tensor, active: Tensor, *, token_mask: Tensor | None = None, impl: Impl = "torch"
    ) -> Tensor:
        """``W_down[:, S] h_S`` for tokens ``x`` (B, D) and active neurons ``S``.

        Parameters
        ----------
        x
            Tokens (B, D), ``B <= max_batch``, same dtype/device as the weights.
        active
            ``S``: neuron indices (k,) (distinct) or a boolean mask (F,).
        token_mask
            Optional (B, F) per-token activity (bool or float): neuron ``i`` of token
            ``b`` contributes ``token_mask[b, i] * h_i``; ``S`` must contain every
            neuron active for some token (e.g. :func:`union_indices`).
        impl
            ``"torch"`` (gather + GEMM) or ``"numba"`` (streaming, CPU float32).

        Returns
        -------
        Tensor
            (B, D). For ``"torch"``, a view of an internal buffer.
        """
        b = x.shape[0]
        if b > self.max_batch or x.shape[1] != self.d_model:
            raise ValueError(
                f"x must be (B <= {self.max_batch}, {self.d_model}), got {tuple(x.shape)}"
            )
        idx = self._indices(active)
        if impl == "numba":
            return torch.from_numpy(self._forward_numba(x, idx, token_mask))
        if impl != "torch":
            raise ValueError(f"impl must be 'torch' or 'numba', got {impl!r}")
        k = idx.numel()
        y = self._y[:b]
        if k == 0:
            return y.zero_()
        up = torch.index_select(self.w_up, 0, idx, out=self._up[:k])
        down = torch.index_select(self.w_down_t, 0, idx, out=self._down[:k])
        hu = torch.mm(x, up.t(), out=self._hu[: b * k].view(b, k))
        if self.gated:
            gate = torch.index_select(self.w_gate, 0, idx, out=self._gate[:k])
            hg = self._act(torch.mm(x, gate.t(), out=self._hg[: b * k].view(b, k)), inplace=True)
            hu.mul_(hg)
        else:
            self._act(hu, inplace=True)
        if token_mask is not None:
            hu.mul_(token_mask[:, idx].to(hu.dtype))
        return torch.mm(hu, down, out=y)

    def _forward_numba(self, x: Tensor, idx: Tensor, token_mask: Tensor | None) -> np.ndarray:
        if self.w_up.device.type != "cpu" or self.w_up.dtype != torch.float32:
            raise ValueError("the numba kernel needs float32 CPU weights")
        b, d = x.shape
        n_parts = max(1, min(numba.get_num_threads(), idx.numel()))
        parts = np.empty((n_parts, b, d), np.float32)  # small: per-thread accumulators
        mask = (
            np.zeros((1, 1), np.float32)
            if token_mask is None
            else np.ascontiguousarray(token_mask.to(torch.float32).numpy())
        )
        wg = self.w_up if self.w_gate is None else self.w_gate
        _stream(
            np.ascontiguousarray(x.detach().numpy()),
            wg.numpy(),
            self.w_up.numpy(),
            self.w_down_t.numpy(),
            idx.numpy(),
            0 if self.activation == "relu" else 1,
            self.gated,
            mask,
            token_mask is not None,
            parts,
        )
        if n_parts == 1:
            return parts[0].copy()
        return parts.sum(axis=0)


def union_indices(token_mask: Tensor) -> Tensor:
    """Indices (k,) of neurons active for at least one token of ``token_mask`` (B, F)."""
    return token_mask.bool().any(dim=0).nonzero().squeeze(1)


def random_token_mask(
    batch: int, d_ff: int, activation_ratio: float, *, generator: torch.Generator
) -> Tensor:
    """(batch, d_ff) bool: each token's ``round(a * d_ff)`` active neurons, uniformly at random.

    Tokens are independent, so the union covers about ``1 - (1 - a)^batch`` of the
    neurons (the cost model's assumption).
    """
    if not 0.0 <= activation_ratio <= 1.0:
        raise ValueError(f"activation_ratio must be in [0, 1], got {activation_ratio}")
    k = int(round(activation_ratio * d_ff))
    mask = torch.zeros((batch, d_ff), dtype=torch.bool)
    if k:
        idx = torch.rand((batch, d_ff), generator=generator).topk(k, dim=1).indices
        mask.scatter_(1, idx, True)
    return mask


def warm_up() -> None:
    """Compile the numba kernel (both activations) on a tiny problem."""
    g = torch.Generator().manual_seed(0)
    w = [torch.randn(8, 4, generator=g) for _ in range(2)]
    for act in ("relu", "silu"):
        ffn = SparseFFN(w[0], w[1].t(), w[1], activation=act)
        ffn.forward(torch.randn(1, 4, generator=g), torch.arange(3), impl="numba")


#: Implementations timed by :func:`benchmark_sparse_ffn`.
BENCH_IMPLS = ("dense", "sparse_torch", "sparse_numba", "gather_fresh")


def benchmark_sparse_ffn(
    d_model: int,
    d_ff: int,
    *,
    ratios: Sequence[float],
    batches: Sequence[int] = (1,),
    gated: bool = True,
    repeats: int = 7,
    flush_bytes: int | None = None,
    seed: int = 0,
    progress: bool = True,
) -> xr.Dataset:
    """Time the dense FFN and the sparse implementations with the shared harness.

    A random float32 ReLU FFN (``W_gate, W_up``: F x D scaled by ``D^-1/2``;
    ``W_down`` by ``F^-1/2``); for each ``(batch, ratio)`` every token gets
    ``round(ratio * F)`` random active neurons and the kernels read their union.
    Implementations: ``dense`` (the torch FFN on all neurons), ``sparse_torch``
    and ``sparse_numba`` (:meth:`SparseFFN.forward`), and ``gather_fresh``
    (``W[idx]`` into new tensors, the naive gather). The active set is given, not
    timed. Threads are whatever torch and numba are set to.

    Returns
    -------
    xarray.Dataset
        :func:`scalinglab.kernels.harness.benchmark`'s dataset (dims ``impl, case,
        repeat``) with case coords ``batch``, ``ratio`` and ``union_ratio`` (the
        measured fraction of neurons in the union).
    """
    from scalinglab.kernels.harness import benchmark

    warm_up()
    g = torch.Generator().manual_seed(seed)
    w_up = torch.randn(d_ff, d_model, generator=g) * d_model**-0.5
    w_gate = torch.randn(d_ff, d_model, generator=g) * d_model**-0.5 if gated else None
    w_down = torch.randn(d_model, d_ff, generator=g) * d_ff**-0.5
    ffn = SparseFFN(w_up, w_down, w_gate, activation="relu", max_batch=max(batches))
    cases = [{"batch": int(b), "ratio": float(a)} for b in batches for a in ratios]
    inputs = []
    for c in cases:
        x = torch.randn(c["batch"], d_model, generator=g)
        mask = random_token_mask(c["batch"], d_ff, c["ratio"], generator=g)
        inputs.append((x, mask, union_indices(mask)))

    def pick(case):
        return inputs[cases.index(dict(case))]

    def dense(case):
        x, mask, _ = pick(case)
        return lambda: ffn.dense(x, token_mask=mask)

    def sparse(impl):
        def factory(case):
            x, mask, idx = pick(case)
            return lambda: ffn.forward(x, idx, token_mask=mask, impl=impl)

        return factory

    def fresh(case):
        x, mask, idx = pick(case)

        def run():
            h = (
                torch.relu(x @ w_up[idx].t())
                if w_gate is None
                else torch.relu(x @ w_gate[idx].t()) * (x @ w_up[idx].t())
            )
            return (h * mask[:, idx]) @ ffn.w_down_t[idx]

        return run

    kernels = {
        "dense": dense,
        "sparse_torch": sparse("torch"),
        "sparse_numba": sparse("numba"),
        "gather_fresh": fresh,
    }
    ds = benchmark(
        kernels, cases, repeats=repeats, warmup=1, flush_bytes=flush_bytes, progress=progress
    )
    union = [inp[2].numel() / d_ff for inp in inputs]
    return ds.assign_coords(union_ratio=("case", union)).assign_attrs(
        d_model=d_model,
        d_ff=d_ff,
        n_matrices=3 if gated else 2,
        seed=seed,
        torch_threads=torch.get_num_threads(),
    )
