"""A law bound to data and an objective: batched objective, gradient and Gauss-Newton matrix.

:class:`Problem` is what the optimizers see. It maps the free parameters
(``(S, F)``: S parameter vectors, F free parameters; fixed ones are filled in)
to the objective per vector and, on request, its gradient and the Gauss-Newton
(IRLS) matrix ``J^T diag(w psi(r)/r) J`` of shape ``(S, F, F)``. Point weights
have shape ``(n,)`` or one row per vector ``(S, n)``; a bootstrap replicate is
just a row of weights (each group's multiplicity), so all replicates can be
optimized in one batch.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from scalinglab.errors import InputError
from scalinglab.fitting.laws import Law
from scalinglab.fitting.loader import FitData
from scalinglab.fitting.objectives import Objective

#: Points x starts evaluated per chunk (keeps temporaries in cache).
CHUNK_ELEMENTS = 32_768


class Problem:
    """Law + data + objective + fixed parameters + bounds.

    Parameters
    ----------
    law, data, objective
        What to fit.
    fixed
        Reported name -> value for parameters held fixed (e.g. ``{"R0": 0.12}``).
    bounds
        Reported name -> ``(lo, hi)`` overriding the law's bounds (reported units).
    weights
        Per-point weights, shape ``(n,)`` (default 1).
    """

    def __init__(
        self,
        law: Law,
        data: FitData,
        objective: Objective,
        *,
        fixed: Mapping[str, float] | None = None,
        bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
        weights: np.ndarray | None = None,
    ) -> None:
        self.law, self.data, self.objective = law, data, objective
        self.names = law.param_names(data.group_labels)
        self.params = law.expanded_params(data.n_groups)
        self.P = len(self.names)
        base_names = {p.name for p in law.params}
        fixed = dict(fixed or {})
        for name in list(fixed) + list(bounds or {}):
            if name not in self.names and name not in base_names:
                raise InputError(
                    f"law {law.name!r} has no parameter {name!r}; its parameters "
                    f"are {', '.join(self.names)}"
                )
        self.fixed_mask = np.zeros(self.P, dtype=bool)
        self.fixed_values = np.zeros(self.P)
        for j, (name, p) in enumerate(zip(self.names, self.params, strict=True)):
            v = fixed.get(name, fixed.get(p.name) if p.per_group else None)
            if v is not None:
                iv = float(p.to_internal(float(v)))
                if not np.isfinite(iv):
                    raise InputError(f"fixed value {name}={v} is outside the parameter's domain")
                self.fixed_mask[j], self.fixed_values[j] = True, iv
        self.free = np.flatnonzero(~self.fixed_mask)
        self.F = self.free.size
        self.bound_overrides = dict(bounds or {})
        with np.errstate(divide="ignore", invalid="ignore"):  # y <= 0 is reported by check_data
            self.y_t = objective.transform_y(data.y)
        self.weights = np.ones(data.n_points) if weights is None else np.asarray(weights, float)
        if self.weights.shape != (data.n_points,) or (self.weights < 0).any():
            raise InputError("weights must be one non-negative number per point")
        self.lo, self.hi = self.bounds_on(np.ones(data.n_points, dtype=bool))

    # ------------------------------------------------------------------ parameters
    def bounds_on(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Internal bounds of the free parameters on the points in ``mask``; each ``(F,)``."""
        x, y = self.data.x[mask], self.data.y[mask]
        lo, hi = np.empty(self.P), np.empty(self.P)
        for j, (name, p) in enumerate(zip(self.names, self.params, strict=True)):
            over = self.bound_overrides.get(name, self.bound_overrides.get(p.name))
            q = p if over is None else type(p)(p.name, bounds=tuple(over), transform=p.transform)
            lo[j], hi[j] = q.internal_bounds(x, y)
        return lo[self.free], hi[self.free]

    def full(self, theta_free: np.ndarray) -> np.ndarray:
        """Free ``(S, F)`` -> full internal ``(S, P)`` with fixed values filled in."""
        theta_free = np.atleast_2d(theta_free)
        out = np.empty((theta_free.shape[0], self.P))
        out[:, self.free] = theta_free
        out[:, self.fixed_mask] = self.fixed_values[self.fixed_mask]
        return out

    def reported(self, theta_full: np.ndarray) -> np.ndarray:
        """Internal ``(S, P)`` -> reported values ``(S, P)``."""
        theta_full = np.atleast_2d(theta_full)
        out = np.empty_like(theta_full)
        for j, p in enumerate(self.params):
            out[:, j] = p.to_reported(theta_full[:, j])
        return out

    def internal(self, values: Mapping[str, float]) -> np.ndarray:
        """Reported ``{name: value}`` (all names) -> internal vector ``(P,)``."""
        return np.array(
            [float(p.to_internal(values[n])) for n, p in zip(self.names, self.params, strict=True)]
        )

    # ------------------------------------------------------------------ model
    def model(
        self,
        theta_full: np.ndarray,
        *,
        jac: bool,
        x: np.ndarray | None = None,
        groups: np.ndarray | None = None,
    ):
        """Model in residual space (``log yhat`` for Huber, ``yhat`` for LS).

        Returns
        -------
        m
            Shape ``(S, n)``; NaN where the model is undefined (e.g. ``yhat <= 0``
            under log residuals).
        J
            ``d m / d theta_free``, shape ``(S, F, n)`` (parameter-major, so the
            Gauss-Newton products are contiguous), or None if ``jac`` is False.
        """
        law = self.law
        x = self.data.x if x is None else x
        groups = self.data.groups if groups is None else groups
        kw = law.call_kwargs(x, theta_full, groups, self.data.n_groups)
        S, n = theta_full.shape[0], x.shape[0]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if not jac:
                v = np.broadcast_to(law.fn(**kw), (S, n))
                d = None
            elif law.jac is not None:
                v, parts = law.jac(**kw)
                v = np.broadcast_to(v, (S, n))
                d = self._assemble(parts, S, n)
            else:
                v = np.broadcast_to(law.fn(**kw), (S, n))
                d = self._finite_diff(theta_full, x, groups, S, n)
            log_target = self.objective.log_space
            if log_target and law.space == "linear":
                if d is not None:
                    d = d / v[:, None, :]
                v = np.where(v > 0, np.log(np.where(v > 0, v, 1.0)), np.nan)
            elif not log_target and law.space == "log":
                v = np.exp(v)
                if d is not None:
                    d = d * v[:, None, :]
        return v, d

    def _assemble(self, parts: Mapping[str, np.ndarray], S: int, n: int) -> np.ndarray:
        J = np.empty((S, self.F, n))
        col = k = 0
        for p in self.law.params:
            a = np.asarray(parts[p.iname])
            width = self.data.n_groups if p.per_group else 1
            for c in range(width):
                if not self.fixed_mask[col + c]:
                    J[:, k, :] = a[..., c] if p.per_group else a
                    k += 1
            col += width
        return J

    def _finite_diff(self, theta_full, x, groups, S, n) -> np.ndarray:
        J = np.empty((S, self.F, n))
        for k, j in enumerate(self.free):
            h = 1e-6 * np.maximum(1.0, np.abs(theta_full[:, j]))
            tp, tm = theta_full.copy(), theta_full.copy()
            tp[:, j] += h
            tm[:, j] -= h
            fp = self.law.fn(**self.law.call_kwargs(x, tp, groups, self.data.n_groups))
            fm = self.law.fn(**self.law.call_kwargs(x, tm, groups, self.data.n_groups))
            J[:, k, :] = (np.broadcast_to(fp, (S, n)) - np.broadcast_to(fm, (S, n))) / (
                2 * h[:, None]
            )
        return J

    # ------------------------------------------------------------------ objective
    def evaluate(self, theta_free: np.ndarray, w: np.ndarray | None = None, *, need: str = "value"):
        """Objective (and derivatives) for a batch, computed in cache-sized chunks.

        Parameters
        ----------
        theta_free
            Shape ``(S, F)``.
        w
            Point weights ``(n,)`` or ``(S, n)``; default the problem's weights.
        need
            ``"value"``, ``"grad"`` or ``"gn"`` (gradient and Gauss-Newton matrix).

        Returns
        -------
        f, g, H
            ``(S,)``, ``(S, F)`` or None, ``(S, F, F)`` or None.
        """
        w = self.weights if w is None else np.asarray(w, dtype=float)
        theta_free = np.atleast_2d(theta_free)
        S = theta_free.shape[0]
        chunk = max(1, CHUNK_ELEMENTS // max(self.data.n_points, 1))
        if S <= chunk:
            return self._evaluate(theta_free, w, need)
        f = np.empty(S)
        g = None if need == "value" else np.empty((S, self.F))
        H = None if need != "gn" else np.empty((S, self.F, self.F))
        for i in range(0, S, chunk):
            sl = slice(i, i + chunk)
            fi, gi, Hi = self._evaluate(theta_free[sl], w[sl] if w.ndim == 2 else w, need)
            f[sl] = fi
            if g is not None:
                g[sl] = gi
            if H is not None:
                H[sl] = Hi
        return f, g, H

    def _evaluate(self, theta_free: np.ndarray, w: np.ndarray, need: str):
        m, J = self.model(self.full(theta_free), jac=need != "value")
        r = self.y_t - m
        f = self.objective.value(r, w)
        if need == "value":
            return f, None, None
        ok = np.isfinite(f)
        r = np.where(ok[:, None], r, 0.0)
        if not ok.all():
            J = np.where(ok[:, None, None], J, 0.0)
        scale = self.objective.scale(w)[..., None]
        wpsi = w * self.objective.psi(r) * scale
        g = -np.einsum("sfn,sn->sf", J, np.broadcast_to(wpsi, r.shape))
        if need == "grad":
            return f, g, None
        omega = np.broadcast_to(w * self.objective.irls_weight(r) * scale, r.shape)
        H = np.matmul(J * omega[:, None, :], np.swapaxes(J, 1, 2))
        return f, g, H

    def predict(
        self, theta_full: np.ndarray, x: np.ndarray, groups: np.ndarray | None = None
    ) -> np.ndarray:
        """Model y (linear space) at new inputs ``x`` ``(m, k)``; shape ``(S, m)``."""
        kw = self.law.call_kwargs(
            np.atleast_2d(x),
            np.atleast_2d(theta_full),
            np.zeros(len(x), dtype=np.int64) if groups is None else groups,
            self.data.n_groups,
        )
        with np.errstate(over="ignore", invalid="ignore"):
            v = self.law.fn(**kw)
        return np.exp(v) if self.law.space == "log" else v
