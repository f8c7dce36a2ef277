"""Fit objectives: Huber on log residuals (summed) and least squares in linear space.

Both are sums over points of ``w_i * rho(r_i)`` where ``w_i`` is a per-point
weight (a per-group/per-curve weight expanded to its points, times the bootstrap
multiplicity of its group). The Huber loss is **summed, not averaged**:
averaging divides the gradient by ``n``, which shrinks it below L-BFGS's
stopping tolerance and ends the fit early (how Hoffmann et al.'s Chinchilla fit
went wrong, per Besiroglu et al. 2024). ``average=True`` exists only to show
that pitfall in tests and benchmarks.

Arrays: residuals ``r`` and weights ``w`` broadcast to ``(S, n)`` (S parameter
vectors, n points); values are ``(S,)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import huber as _scipy_huber

#: Epoch's (and our) default Huber threshold on log residuals.
DEFAULT_DELTA = 1e-3
#: Fraction of the IRLS weight used for Huber points outside the quadratic zone.
OUTER_CURVATURE = 0.1


@dataclass(frozen=True)
class Objective:
    """A fit objective.

    Parameters
    ----------
    kind
        ``"huber"``: Huber loss of ``log y - log yhat`` with threshold ``delta``;
        ``"ls"``: squared error ``(y - yhat)^2`` (halved, so the Gauss-Newton
        Hessian is ``J^T W J``).
    delta
        Huber threshold (ignored for ``"ls"``).
    average
        Divide by the total weight instead of summing (the pitfall; off by default).
    """

    kind: str = "huber"
    delta: float = DEFAULT_DELTA
    average: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("huber", "ls"):
            raise ValueError(f"objective must be 'huber' or 'ls', got {self.kind!r}")
        if not self.delta > 0:
            raise ValueError(f"Huber delta must be > 0, got {self.delta}")

    @property
    def log_space(self) -> bool:
        """Whether residuals are taken between logs (and y must be > 0)."""
        return self.kind == "huber"

    def transform_y(self, y: np.ndarray) -> np.ndarray:
        """The data in residual space: ``log y`` for Huber, ``y`` for least squares."""
        return np.log(y) if self.log_space else np.asarray(y, dtype=float)

    def rho(self, r: np.ndarray) -> np.ndarray:
        """Pointwise loss, same shape as ``r``."""
        if self.kind == "huber":
            return _scipy_huber(self.delta, r)
        return 0.5 * r * r

    def psi(self, r: np.ndarray) -> np.ndarray:
        """Derivative of :meth:`rho` with respect to ``r``."""
        if self.kind == "huber":
            return np.clip(r, -self.delta, self.delta)
        return r

    def irls_weight(self, r: np.ndarray) -> np.ndarray:
        """Per-point curvature used in the Gauss-Newton matrix ``J^T diag(w c) J``.

        Least squares: 1. Huber: 1 inside the quadratic zone ``|r| <= delta``,
        and ``OUTER_CURVATURE * delta / |r|`` outside. ``delta / |r|`` alone
        (IRLS, a majorizer) gives safe but slow, linearly converging steps; 0
        (the exact Hessian) leaves the system singular far from the optimum.
        A tenth of the IRLS weight converged in the fewest iterations on
        Chinchilla-like data; the optimizer's acceptance test keeps every step
        a descent step whatever this choice.
        """
        if self.kind == "huber":
            a = np.abs(r)
            return np.where(
                a <= self.delta, 1.0, OUTER_CURVATURE * self.delta / np.maximum(a, self.delta)
            )
        return np.ones_like(r)

    def scale(self, w: np.ndarray) -> np.ndarray:
        """Factor applied to the sum: 1, or ``1 / sum(w)`` per row when averaging."""
        if not self.average:
            return np.ones(np.shape(w)[:-1] or (1,))
        return 1.0 / np.maximum(np.sum(w, axis=-1), 1e-300)

    def value(self, r: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``sum_i w_i rho(r_i)`` per row (NaN residuals give ``inf``), shape ``(S,)``."""
        with np.errstate(invalid="ignore"):
            v = np.sum(w * self.rho(r), axis=-1) * self.scale(w)
        return np.where(np.isfinite(v), v, np.inf)

    def describe(self) -> str:
        """Short label, e.g. ``huber(delta=0.001, summed)``."""
        if self.kind == "ls":
            return "least squares (linear space" + (", averaged)" if self.average else ", summed)")
        return f"huber(delta={self.delta:g}, log residuals, {'averaged' if self.average else 'summed'})"
