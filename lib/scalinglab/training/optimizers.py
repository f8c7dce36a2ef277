"""The optimizers of the optimizer study and their tuning grids, in one declarative table.

Sources (no optimizer is hand-written):

- ``adamw``: ``torch.optim.AdamW``.
- ``nadamw``: ``torch.optim.NAdam(decoupled_weight_decay=True)``, whose Nesterov momentum
  follows Dozat's schedule ``mu_t = beta1 (1 - 0.5 * 0.96^(t psi))`` (about 0.4-0.5 over
  runs of a few hundred steps): kept for the committed ``small`` and ``medium`` datasets.
- ``nadamw_paper``: the paper's NAdamW (:class:`NAdamW`), hand-written because torch has
  no constant-momentum NAdam: decoupled weight decay and constant Nesterov momentum
  ``beta1``, as Wen et al. (2025) take it from AlgoPerf (Dahl et al. 2023, "Benchmarking
  Neural Network Training Algorithms", Table 1; reference code
  ``mlcommons/algorithmic-efficiency``, ``reference_algorithms/target_setting_algorithms/
  pytorch_nadamw.py``).
- ``muon``: ``torch.optim.Muon`` on the 2-D weights inside the transformer blocks
  (attention and FFN matrices), with ``adjust_lr_fn="match_rms_adamw"`` (Moonshot's
  scaling, so its learning rate lives on AdamW's scale); ``torch.optim.AdamW`` on
  everything else (token embedding, output head, norms) at ``lr * adam_lr_ratio``.
- ``soap``, ``lion`` and ``scion`` from ``pytorch-optimizer`` (4.1.0,
  ``pytorch_optimizer.SOAP``, ``Lion``, ``SCION``): one maintained package that
  installs against ``torch==2.13.0`` without pulling another torch or any CUDA
  wheel (``kron-torch`` pulls ``triton``; ``heavyball`` is compile-first).
  Scion, not Kron, is the third matrix method: ``pytorch_optimizer.Kron`` draws from
  the *global* torch and NumPy RNGs inside ``step`` (runs would not be reproducible
  from a seed without global seeding) and took 1.2 s per step on CPU for a 7k-parameter
  model where AdamW takes 4 ms.

Scion's layers follow Pethick et al. (2025): spectral LMO on the hidden matrices
(radius ``scale``), column-RMS LMO on the embedding (radius ``scale``), sign LMO
on the head (radius ``60 scale``) and RMS on the norm gains; its ``momentum`` is
the weight of the new gradient (``1 - usual momentum``).

Weight decay applies to matrices only (2-D parameters); norm gains and biases are
never decayed. Learning rates are set by :meth:`OptimizerBundle.set_lr_factor`
(``base_lr * factor`` in every group), which the training loop calls with the
schedule's factor before each step.

Hyperparameters common to every optimizer: ``lr``, ``weight_decay``, ``warmup``
(fraction of the steps), ``min_lr_ratio`` (the schedule's end, times ``lr``),
``grad_clip`` (global norm; 0 = none). :data:`OPTIMIZER_TABLE` holds each
optimizer's defaults (the coordinate-descent start) and its discrete grid.

Embedding/head rule (optional, :data:`EMBED_HEAD_HPARAMS`): with ``eh_lr`` set, the
optimizer acts on the hidden matrices only and ``torch.optim.AdamW`` (``eh_lr``,
``eh_beta1``, ``eh_beta2``, ``eh_weight_decay``) on the embeddings, the head and the
1-D parameters, the same rule for every optimizer (the ``matched`` sweep sets them to
AdamW's tuned values at each size). Absent, each optimizer keeps its own treatment and
hyperparameter sets (and the run keys of the committed datasets) are unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

#: Common, non-optimizer knobs every hyperparameter set carries.
COMMON_DEFAULTS: dict[str, Any] = {"warmup": 0.05, "min_lr_ratio": 0.0, "grad_clip": 1.0}

_LR = (1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2, 3.2e-2, 6.4e-2, 1.28e-1)
_WARMUP = (0.0, 0.05, 0.1, 0.2)

#: name -> source, family ("scalar" or "matrix"), defaults (the tuning start) and grid.
OPTIMIZER_TABLE: dict[str, dict[str, Any]] = {
    "adamw": {
        "source": "torch.optim.AdamW",
        "family": "scalar",
        "defaults": {"lr": 8e-3, "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8},
        "grid": {
            "lr": _LR,
            "weight_decay": (0.0, 0.1, 0.2),
            "warmup": _WARMUP,
            "beta1": (0.7, 0.8, 0.9, 0.95),
            "beta2": (0.95, 0.98, 0.999),
        },
    },
    "nadamw": {
        "source": "torch.optim.NAdam(decoupled_weight_decay=True)",
        "family": "scalar",
        "defaults": {
            "lr": 8e-3,
            "weight_decay": 0.1,
            "beta1": 0.9,
            "beta2": 0.95,
            "eps": 1e-8,
            "momentum_decay": 0.004,
        },
        "grid": {
            "lr": _LR,
            "weight_decay": (0.0, 0.1, 0.2),
            "warmup": _WARMUP,
            "beta1": (0.8, 0.9, 0.95),
            "beta2": (0.95, 0.98, 0.999),
            "momentum_decay": (0.002, 0.004, 0.008),
        },
    },
    "nadamw_paper": {
        "source": "scalinglab NAdamW (AlgoPerf's; constant Nesterov momentum)",
        "family": "scalar",
        "defaults": {"lr": 8e-3, "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8},
        "grid": {
            "lr": _LR,
            "weight_decay": (0.0, 0.1, 0.2),
            "warmup": _WARMUP,
            "beta1": (0.8, 0.9, 0.95),
            "beta2": (0.95, 0.98, 0.999),
        },
    },
    "muon": {
        "source": "torch.optim.Muon (2-D hidden weights) + torch.optim.AdamW (the rest)",
        "family": "matrix",
        "defaults": {
            "lr": 8e-3,
            "weight_decay": 0.1,
            "momentum": 0.95,
            "adam_lr_ratio": 1.0,
            "beta1": 0.9,
            "beta2": 0.95,
        },
        "grid": {
            "lr": _LR,
            "weight_decay": (0.0, 0.1, 0.2),
            "warmup": _WARMUP,
            "momentum": (0.9, 0.95, 0.98),
            "adam_lr_ratio": (0.5, 1.0, 2.0),
        },
    },
    "soap": {
        "source": "pytorch_optimizer.SOAP",
        "family": "matrix",
        "defaults": {
            "lr": 8e-3,
            "weight_decay": 0.1,
            "beta1": 0.95,
            "beta2": 0.95,
            "precondition_frequency": 10,
        },
        "grid": {
            "lr": _LR,
            "weight_decay": (0.0, 0.1, 0.2),
            "warmup": _WARMUP,
            "beta1": (0.9, 0.95),
            "beta2": (0.95, 0.99),
            "precondition_frequency": (5, 10, 20),
        },
    },
    "lion": {
        "source": "pytorch_optimizer.Lion",
        "family": "scalar",
        "defaults": {"lr": 1e-3, "weight_decay": 0.3, "beta1": 0.9, "beta2": 0.99},
        "grid": {
            "lr": (2.5e-4, 5e-4, 1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2, 3.2e-2),
            "weight_decay": (0.0, 0.3, 1.0, 2.0),
            "warmup": _WARMUP,
            "beta1": (0.9, 0.95),
            "beta2": (0.98, 0.99),
        },
    },
    "scion": {
        "source": "pytorch_optimizer.SCION",
        "family": "matrix",
        "defaults": {"lr": 2.5e-4, "weight_decay": 0.0, "momentum": 0.1, "scale": 50.0},
        "grid": {
            "lr": (3.125e-5, 6.25e-5, 1.25e-4, 2.5e-4, 5e-4, 1e-3, 2e-3),
            "weight_decay": (0.0, 0.1, 0.2),
            "warmup": _WARMUP,
            "momentum": (0.05, 0.1, 0.2, 0.4),
        },
    },
}

#: The six optimizers of the study, in report order.
STUDY_OPTIMIZERS = ("adamw", "nadamw", "muon", "soap", "lion", "scion")


def optimizer_names() -> tuple[str, ...]:
    """Every optimizer in :data:`OPTIMIZER_TABLE`."""
    return tuple(OPTIMIZER_TABLE)


def _entry(name: str) -> dict[str, Any]:
    try:
        return OPTIMIZER_TABLE[name]
    except KeyError:
        raise ValueError(
            f"unknown optimizer {name!r}; known: {', '.join(OPTIMIZER_TABLE)}"
        ) from None


def default_hparams(name: str) -> dict[str, Any]:
    """The coordinate-descent start of ``name``: common knobs plus its own defaults."""
    return {**COMMON_DEFAULTS, **_entry(name)["defaults"]}


def hparam_grid(name: str) -> dict[str, tuple]:
    """The discrete grid of ``name``: hyperparameter -> candidate values."""
    return dict(_entry(name)["grid"])


#: Optional hyperparameters of every optimizer but AdamW: the embedding/head rule (see the
#: module docstring). Never defaults: a set without ``eh_lr`` keeps its old key.
EMBED_HEAD_HPARAMS = ("eh_lr", "eh_beta1", "eh_beta2", "eh_weight_decay")


def resolve_hparams(name: str, hparams: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Defaults of ``name`` updated by ``hparams``; unknown keys raise ``ValueError``.

    The embedding/head keys (:data:`EMBED_HEAD_HPARAMS`) are accepted for every optimizer
    but AdamW, all four or none.
    """
    out = default_hparams(name)
    given = set(hparams or {})
    eh = given & set(EMBED_HEAD_HPARAMS)
    if eh and (name == "adamw" or eh != set(EMBED_HEAD_HPARAMS)):
        raise ValueError(
            f"the embedding/head rule needs all of {list(EMBED_HEAD_HPARAMS)} and an "
            f"optimizer other than AdamW; {name!r} got {sorted(eh)}"
        )
    unknown = sorted(given - set(out) - eh)
    if unknown:
        raise ValueError(
            f"optimizer {name!r} has no hyperparameter(s) {unknown}; known: {sorted(out)}"
        )
    out.update(hparams or {})
    return out


def split_parameters(model: nn.Module) -> dict[str, list[tuple[str, nn.Parameter]]]:
    """Named trainable parameters by role (each parameter once, tied weights once).

    Returns
    -------
    dict
        ``"hidden"``: 2-D weights inside the transformer blocks (the matrices Muon and
        Scion's spectral LMO act on); ``"embedding"``: token and position embeddings;
        ``"head"``: the output projection weight (absent when tied); ``"vector"``: 1-D
        parameters (norm gains, biases).
    """
    roles: dict[str, list[tuple[str, nn.Parameter]]] = {
        "hidden": [],
        "embedding": [],
        "head": [],
        "vector": [],
    }
    seen: set[int] = set()
    for name, p in model.named_parameters():
        if not p.requires_grad or id(p) in seen:
            continue
        seen.add(id(p))
        if p.ndim < 2:
            roles["vector"].append((name, p))
        elif name.startswith("blocks."):
            roles["hidden"].append((name, p))
        elif "emb" in name:
            roles["embedding"].append((name, p))
        else:
            roles["head"].append((name, p))
    return roles


def _decay_groups(params: list[tuple[str, nn.Parameter]], wd: float, **extra) -> list[dict]:
    mats = [p for _, p in params if p.ndim >= 2]
    vecs = [p for _, p in params if p.ndim < 2]
    groups = []
    if mats:
        groups.append({"params": mats, "weight_decay": wd, **extra})
    if vecs:
        groups.append({"params": vecs, "weight_decay": 0.0, **extra})
    return groups


class NAdamW(torch.optim.Optimizer):
    """NAdamW: Adam with constant Nesterov momentum and decoupled weight decay (AlgoPerf's).

    Per parameter ``p`` with gradient ``g`` at step ``t`` (from 1), learning rate ``lr``,
    weight decay ``wd``::

        p   <- p * (1 - lr * wd)
        m_t  = beta1 m_{t-1} + (1 - beta1) g
        v_t  = beta2 v_{t-1} + (1 - beta2) g^2
        p   <- p - lr * ((beta1 m_t + (1 - beta1) g) / (1 - beta1^t))
                     / (sqrt(v_t / (1 - beta2^t)) + eps)

    The Nesterov look-ahead ``beta1 m_t + (1 - beta1) g`` uses the constant ``beta1``
    (torch's ``NAdam`` instead warms its momentum up by ``momentum_decay``). Source:
    Dahl et al. (2023), "Benchmarking Neural Network Training Algorithms" (AlgoPerf),
    Table 1, as used by Wen et al. (2025); ``mlcommons/algorithmic-efficiency``,
    ``reference_algorithms/target_setting_algorithms/pytorch_nadamw.py``.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(
                f"NAdamW needs lr, eps, weight_decay >= 0 and betas in [0, 1); got lr={lr}, "
                f"betas={betas}, eps={eps}, weight_decay={weight_decay}"
            )
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = torch.zeros_like(p)
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"] += 1
                t = st["step"]
                m, v = st["exp_avg"], st["exp_avg_sq"]
                p.mul_(1 - lr * wd)
                m.lerp_(g, 1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                nesterov = m * b1 + g * (1 - b1)
                denom = (v / (1 - b2**t)).sqrt_().add_(eps)
                p.addcdiv_(nesterov, denom, value=-lr / (1 - b1**t))
        return loss


class OptimizerBundle:
    """One or more torch optimizers acting as one, with a schedulable learning rate.

    Attributes
    ----------
    name, hparams
        The optimizer's table name and resolved hyperparameters.
    optimizers
        The underlying ``torch.optim.Optimizer`` objects (two for Muon).
    """

    def __init__(
        self, name: str, hparams: dict[str, Any], optimizers: list[torch.optim.Optimizer]
    ) -> None:
        self.name, self.hparams, self.optimizers = name, hparams, optimizers
        for opt in optimizers:
            for g in opt.param_groups:
                g["base_lr"] = float(g["lr"])

    def zero_grad(self) -> None:
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=True)

    def set_lr_factor(self, factor: float) -> None:
        """Set every group's learning rate to ``base_lr * factor``."""
        for opt in self.optimizers:
            for g in opt.param_groups:
                g["lr"] = g["base_lr"] * factor

    def step(self) -> None:
        for opt in self.optimizers:
            opt.step()

    def state_bytes(self) -> int:
        """Bytes of optimizer state tensors (a memory cost next to the time cost)."""
        total = 0
        for opt in self.optimizers:
            for st in opt.state.values():
                for v in st.values() if isinstance(st, dict) else ():
                    if torch.is_tensor(v):
                        total += v.numel() * v.element_size()
                    elif isinstance(v, list | tuple):
                        total += sum(t.numel() * t.element_size() for t in v if torch.is_tensor(t))
        return total


def build_optimizer(
    name: str, model: nn.Module, hparams: Mapping[str, Any] | None = None
) -> OptimizerBundle:
    """The optimizer ``name`` over ``model``'s parameters with ``hparams`` (over the defaults).

    Parameters
    ----------
    name
        A key of :data:`OPTIMIZER_TABLE`.
    model
        A :class:`~scalinglab.models.transformer.Transformer` (roles come from
        :func:`split_parameters`).
    hparams
        Overrides of :func:`default_hparams`.
    """
    hp = resolve_hparams(name, hparams)
    roles = split_parameters(model)
    eh_opts: list[torch.optim.Optimizer] = []
    if "eh_lr" in hp:  # the embedding/head rule: AdamW on everything but the hidden matrices
        rest = roles["embedding"] + roles["head"] + roles["vector"]
        if rest:
            eh_opts.append(
                torch.optim.AdamW(
                    _decay_groups(rest, float(hp["eh_weight_decay"])),
                    lr=float(hp["eh_lr"]),
                    betas=(hp["eh_beta1"], hp["eh_beta2"]),
                )
            )
        roles = {"hidden": roles["hidden"], "embedding": [], "head": [], "vector": []}
    everything = [p for r in roles.values() for p in r]
    lr, wd = float(hp["lr"]), float(hp["weight_decay"])
    if name == "adamw":
        opts = [
            torch.optim.AdamW(
                _decay_groups(everything, wd),
                lr=lr,
                betas=(hp["beta1"], hp["beta2"]),
                eps=hp["eps"],
            )
        ]
    elif name == "nadamw":
        opts = [
            torch.optim.NAdam(
                _decay_groups(everything, wd),
                lr=lr,
                betas=(hp["beta1"], hp["beta2"]),
                eps=hp["eps"],
                momentum_decay=hp["momentum_decay"],
                decoupled_weight_decay=True,
            )
        ]
    elif name == "nadamw_paper":
        opts = [
            NAdamW(
                _decay_groups(everything, wd),
                lr=lr,
                betas=(hp["beta1"], hp["beta2"]),
                eps=hp["eps"],
            )
        ]
    elif name == "muon":
        hidden = [p for _, p in roles["hidden"]]
        rest = roles["embedding"] + roles["head"] + roles["vector"]
        opts = [
            torch.optim.Muon(
                hidden,
                lr=lr,
                weight_decay=wd,
                momentum=hp["momentum"],
                nesterov=True,
                adjust_lr_fn="match_rms_adamw",
            )
        ]
        if rest:
            opts.append(
                torch.optim.AdamW(
                    _decay_groups(rest, wd),
                    lr=lr * hp["adam_lr_ratio"],
                    betas=(hp["beta1"], hp["beta2"]),
                )
            )
    elif name == "soap":
        from pytorch_optimizer import SOAP

        opts = [
            SOAP(
                _decay_groups(everything, wd),
                lr=lr,
                betas=(hp["beta1"], hp["beta2"]),
                precondition_frequency=int(hp["precondition_frequency"]),
            )
        ]
    elif name == "lion":
        from pytorch_optimizer import Lion

        opts = [Lion(_decay_groups(everything, wd), lr=lr, betas=(hp["beta1"], hp["beta2"]))]
    elif name == "scion":
        from pytorch_optimizer import SCION
        from pytorch_optimizer.optimizer.scion import LMONorm

        r = float(hp["scale"])
        groups = [
            {
                "params": [p for _, p in roles["hidden"]],
                "norm_type": LMONorm.SPECTRAL,
                "scale": r,
                "weight_decay": wd,
            },
            {
                "params": [p for _, p in roles["embedding"]],
                "norm_type": LMONorm.COL,
                "norm_kwargs": {"normalized": True, "transpose": True},
                "scale": r,
                "weight_decay": wd,
            },
            {
                "params": [p for _, p in roles["head"]],
                "norm_type": LMONorm.SIGN,
                "scale": 60.0 * r,
                "weight_decay": wd,
            },
            {
                "params": [p for _, p in roles["vector"]],
                "norm_type": LMONorm.BIAS,
                "scale": r,
                "weight_decay": 0.0,
            },
        ]
        opts = [SCION([g for g in groups if g["params"]], lr=lr, momentum=hp["momentum"])]
    else:
        raise ValueError(f"unknown optimizer {name!r}; known: {', '.join(OPTIMIZER_TABLE)}")
    return OptimizerBundle(name, hp, opts + eh_opts)
