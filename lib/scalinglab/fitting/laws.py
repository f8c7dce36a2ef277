"""What a scaling law is: each law is declared once, as a :class:`Law`, here or by a user.

A :class:`Law` names its inputs (``x_names``), its parameters (:class:`Param`,
with bounds and an optional log transform), the formula as text, a vectorized
model function, an optional analytic Jacobian and an initialization grid. The
engine (:mod:`scalinglab.fitting.multistart`) needs nothing else; the registry
(:mod:`scalinglab.fitting.registry`) names the built-in laws and the user's, so a new law is
a few lines::

    from scalinglab.fitting import Law, Param, register_law

    register_law(Law(
        name="power", formula="y = A * x^(-alpha)", x_names=("x",),
        params=(Param("A", bounds=(0, None), transform="log"), Param("alpha", bounds=(0, 5))),
        fn=lambda x, log_A, alpha: np.exp(log_A - alpha * np.log(x)),
        init={"log_A": [0.0, 5.0], "alpha": [0.3, 1.0]},
        x_positive=(True,),
    ))

Conventions (shapes)
--------------------
The model is evaluated for a batch of ``S`` parameter vectors at once:
``fn(**xcols, **params)`` receives each input column as an array of shape
``(n,)`` and each *internal* parameter as shape ``(S, 1)`` (or ``(S, G)`` for a
per-group parameter, together with ``group``: integer codes of shape ``(n,)``),
and returns the model, shape ``(S, n)``, in the law's ``space`` (``"linear"``:
y itself; ``"log"``: the natural log of y). ``jac`` (optional) takes the same
arguments and returns ``(value, {internal_name: d value / d param})`` with each
derivative of shape ``(S, n)`` (``(S, n, G)`` for a per-group parameter).
Without ``jac`` the engine uses central finite differences.

A parameter with ``transform="log"`` is optimized as ``log_<name>`` (or the
``internal`` name given) and reported as its exponential; its bounds are given
in reported units (``0`` maps to ``-inf``). Bounds may be callables of the data,
``bound(x, y) -> float`` with ``x`` of shape ``(n, k)``, e.g. ``A0 < min(y)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Bound = float | None | Callable[[np.ndarray, np.ndarray], float]

#: Objectives a law may default to (see :mod:`scalinglab.fitting.objectives`).
OBJECTIVES = ("huber", "ls")


@dataclass(frozen=True)
class Param:
    """One parameter of a law.

    Parameters
    ----------
    name
        Reported name (JSON key), e.g. ``"alpha"`` or ``"E"``.
    bounds
        ``(lo, hi)`` in reported units; ``None`` is unbounded; either may be a
        callable ``(x, y) -> float`` evaluated on the data being fitted.
    transform
        ``"identity"`` or ``"log"`` (optimized as the log of the value; keeps a
        positive scale parameter positive and well conditioned).
    internal
        Name under which ``fn``/``jac`` receive it (default ``name``, or
        ``"log_" + name`` for a log transform).
    per_group
        One value per group (e.g. ``E0`` of ``loglinear_kn``), reported as
        ``name[<group label>]``.
    """

    name: str
    bounds: tuple[Bound, Bound] = (None, None)
    transform: str = "identity"
    internal: str | None = None
    per_group: bool = False

    def __post_init__(self) -> None:
        if self.transform not in ("identity", "log"):
            raise ValueError(f"transform must be 'identity' or 'log', got {self.transform!r}")

    @property
    def iname(self) -> str:
        """Internal (optimizer) name."""
        if self.internal:
            return self.internal
        return f"log_{self.name}" if self.transform == "log" else self.name

    def to_internal(self, value: np.ndarray | float) -> np.ndarray:
        """Reported value(s) -> internal value(s)."""
        v = np.asarray(value, dtype=float)
        if self.transform == "log":
            with np.errstate(divide="ignore"):
                return np.log(v)
        return v

    def to_reported(self, value: np.ndarray | float) -> np.ndarray:
        """Internal value(s) -> reported value(s); an internal value past the float range
        (an optimizer's trial step) reads ``inf``, silently: the fit rejects it, and a
        warning would only print into a report."""
        v = np.asarray(value, dtype=float)
        if self.transform == "log":
            with np.errstate(over="ignore"):
                return np.exp(v)
        return v

    def internal_bounds(self, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """Bounds in internal units on data ``x`` (n, k), ``y`` (n,); +-inf if unbounded."""
        out = []
        for b, inf in zip(self.bounds, (-np.inf, np.inf), strict=True):
            if b is None:
                out.append(inf)
                continue
            v = float(b(x, y)) if callable(b) else float(b)
            if self.transform == "log":
                v = -np.inf if v <= 0 else float(np.log(v))
            out.append(v)
        return out[0], out[1]


@dataclass(frozen=True)
class Law:
    """A scaling law: formula, inputs, parameters, model, Jacobian, starts.

    Parameters
    ----------
    name
        Registry key (``scalinglab fit NAME``).
    formula
        Human-readable formula (shown by ``--help`` and in results).
    x_names
        Input names in CLI order, e.g. ``("N", "D")``; ``fn`` receives them as
        keywords.
    params
        The parameters, in reported order.
    fn
        Vectorized model (see module docstring for shapes).
    jac
        Optional analytic Jacobian returning ``(value, {internal_name: deriv})``.
    space
        ``"linear"`` if ``fn`` returns y, ``"log"`` if it returns ``log(y)``.
    init
        Either a mapping ``internal_name -> values`` (the full product is the
        start grid) or a callable ``init(x, y, groups, n_groups) -> ndarray`` of
        starts, shape ``(S, P)`` in internal units and internal parameter order
        (per-group parameters expanded to ``G`` columns).
    objective
        Default objective, ``"huber"`` (log residuals) or ``"ls"``.
    x_positive
        Per input: whether it must be > 0 (logs or real powers are taken).
    group_by_x
        If set, the default groups (when the user gives none) are the distinct
        values of this input column (``loglinear_kn``: one ``E0`` per model size).
    linearize
        Optional ``(params, x, y, groups) -> list of (label, u, v, {"slope": (name, f),
        "intercept": (name, f)})`` for the log-log OLS cross-check
        (:mod:`scalinglab.fitting.diagnostics`): ``params`` maps reported names
        to values, ``groups`` maps group labels to boolean masks ``(n,)``, ``u``
        and ``v`` are the linearized data, and ``f(params)`` is the value the
        OLS coefficient should equal under the fit (``name`` labels it).
    description
        One line for listings.
    """

    name: str
    formula: str
    x_names: tuple[str, ...]
    params: tuple[Param, ...]
    fn: Callable[..., np.ndarray]
    jac: Callable[..., tuple[np.ndarray, dict[str, np.ndarray]]] | None = None
    space: str = "linear"
    init: Mapping[str, Sequence[float]] | Callable[..., np.ndarray] = field(default_factory=dict)
    objective: str = "ls"
    x_positive: tuple[bool, ...] = ()
    group_by_x: int | None = None
    linearize: Callable[..., list] | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if self.space not in ("linear", "log"):
            raise ValueError(f"space must be 'linear' or 'log', got {self.space!r}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if self.x_positive and len(self.x_positive) != len(self.x_names):
            raise ValueError("x_positive needs one flag per input")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate parameter names in {names}")

    @property
    def has_groups(self) -> bool:
        """Whether some parameter is per group."""
        return any(p.per_group for p in self.params)

    def param_names(self, group_labels: Sequence[str] = ()) -> list[str]:
        """Reported names with per-group parameters expanded (``E0[<label>]``)."""
        out: list[str] = []
        for p in self.params:
            if p.per_group:
                out.extend(f"{p.name}[{g}]" for g in group_labels)
            else:
                out.append(p.name)
        return out

    def expanded_params(self, n_groups: int) -> list[Param]:
        """One :class:`Param` per column of the internal vector (per-group repeated)."""
        out: list[Param] = []
        for p in self.params:
            out.extend([p] * (n_groups if p.per_group else 1))
        return out

    def starts(self, x: np.ndarray, y: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
        """Initialization grid, shape ``(S, P)`` in internal units."""
        if callable(self.init):
            s = np.asarray(self.init(x, y, groups, n_groups), dtype=float)
        else:
            missing = [p.iname for p in self.params if p.iname not in self.init]
            if missing:
                raise ValueError(f"law {self.name!r}: no initial values for {missing}")
            if self.has_groups:
                raise ValueError(f"law {self.name!r}: per-group parameters need a callable init")
            s = product_grid(**{p.iname: self.init[p.iname] for p in self.params})
        width = len(self.expanded_params(n_groups))
        if s.ndim != 2 or s.shape[1] != width:
            raise ValueError(f"law {self.name!r}: init gave shape {s.shape}, need (S, {width})")
        return s

    def call_kwargs(
        self, xcols: np.ndarray, theta: np.ndarray, groups: np.ndarray | None, n_groups: int
    ) -> dict[str, Any]:
        """Keyword arguments for ``fn``/``jac`` from inputs ``(n, k)`` and ``theta`` ``(S, P)``."""
        kw: dict[str, Any] = {name: xcols[:, j] for j, name in enumerate(self.x_names)}
        col = 0
        for p in self.params:
            width = n_groups if p.per_group else 1
            kw[p.iname] = theta[:, col : col + width]
            col += width
        if self.has_groups:
            kw["group"] = groups
        return kw


def product_grid(**values: Sequence[float]) -> np.ndarray:
    """Cartesian product of per-parameter values, shape ``(prod of sizes, n params)``.

    The column order is the keyword order; the last keyword varies fastest.
    """
    lists = [np.atleast_1d(np.asarray(v, dtype=float)) for v in values.values()]
    return np.array(list(itertools.product(*lists)), dtype=float).reshape(-1, len(lists))
