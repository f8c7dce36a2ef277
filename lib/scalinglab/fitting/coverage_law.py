"""The exponentiated power law of coverage (Large Language Monkeys), fitted per model.

``coverage(k) = exp(a * k^b)`` with ``a < 0`` and ``b < 0`` (Brown et al. 2024): the
log of coverage is a power law in k. Registered with the fitting engine as
``exp_power`` (declared in :mod:`scalinglab.fitting.exp_power`, registered with the
built-in laws), fitted in log space (the law's
``space="log"``) with least squares on ``log coverage``: the objective is Huber with a
threshold far above any residual, which is least squares.

:func:`fit_coverage` fits one curve; :func:`fit_bootstrap` refits it on coverage
curves recomputed from problems drawn with replacement (the interval the study
reports), and :func:`extrapolate` fits on ``k <= k_fit`` and predicts ``k_max``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scalinglab.estimate import Estimate
from scalinglab.fitting import FitResult, Law, fit, get_law, list_laws, register_law
from scalinglab.fitting.exp_power import LAW, NAME

#: Huber threshold on log residuals above every residual: least squares in log space.
LS_DELTA = 10.0


def ensure_registered() -> Law:
    """Register :data:`LAW` once (idempotent) and return the registered law."""
    if NAME not in list_laws():
        register_law(LAW)
    return get_law(NAME)


ensure_registered()


def fit_coverage(ks: np.ndarray, cov: np.ndarray) -> FitResult:
    """Fit ``exp_power`` to one coverage curve.

    Parameters
    ----------
    ks, cov
        (K,) sample counts and coverage in (0, 1]; points with coverage 0 (log
        undefined) or exactly 1 (no information on the slope) are left out.
    """
    ks = np.asarray(ks, dtype=float)
    cov = np.asarray(cov, dtype=float)
    keep = (cov > 0) & (cov < 1.0 - 1e-12)
    if keep.sum() < 3:
        raise ValueError(
            f"exp_power needs >= 3 points with 0 < coverage < 1, got {int(keep.sum())}"
        )
    return fit(LAW, ks[keep], cov[keep], delta=LS_DELTA)


def predict(params: dict[str, float], ks: np.ndarray) -> np.ndarray:
    """Coverage under the law at ``ks`` (K,)."""
    return np.exp(params["a"] * np.asarray(ks, dtype=float) ** params["b"])


@dataclass
class BootstrapFit:
    """A point fit and its refits on resampled problems.

    Attributes
    ----------
    point
        The fit on all problems.
    draws
        (R, 2) refitted ``(a, b)``; NaN where a refit failed.
    """

    point: FitResult
    draws: np.ndarray

    def ci(self, name: str, level: float = 0.95) -> tuple[float, float]:
        j = ["a", "b"].index(name)
        d = self.draws[:, j][np.isfinite(self.draws[:, j])]
        q = (1.0 - level) / 2.0
        return float(np.quantile(d, q)), float(np.quantile(d, 1.0 - q))

    def estimate(self, name: str, *, level: float, method: str) -> Estimate:
        """Parameter ``name`` (``"a"`` or ``"b"``) with its percentile interval over the
        refits that succeeded; not identified when the point fit sits on a bound of the
        law (within 1e-6)."""
        j = ["a", "b"].index(name)
        v = float(self.point.params[name])
        lo_b, hi_b = LAW.params[j].bounds
        at = [float(b) for b in (lo_b, hi_b) if abs(v - float(b)) < 1e-6]  # type: ignore[arg-type]
        lo, hi = self.ci(name, level)
        return Estimate(
            v,
            lo,
            hi,
            level=level,
            method=method,
            resamples=int(np.isfinite(self.draws[:, j]).sum()),
            identified=not at,
            bound=at[0] if at else None,
            side=None if not at else ("lower" if at[0] == lo_b else "upper"),
            note=f"{name} at its bound in the point fit" if at else None,
        )


def fit_bootstrap(ks: np.ndarray, per_problem: np.ndarray, draws: np.ndarray) -> BootstrapFit:
    """Fit the law to the mean of ``per_problem`` (P, K) and to each resample.

    ``draws`` (R, P) are problem indices (:func:`~scalinglab.stats.passk.prompt_draws`).
    """
    point = fit_coverage(ks, per_problem.mean(axis=0))
    out = np.full((len(draws), 2), np.nan)
    for r, idx in enumerate(draws):
        try:
            f = fit_coverage(ks, per_problem[idx].mean(axis=0))
            out[r] = f.params["a"], f.params["b"]
        except ValueError:
            continue
    return BootstrapFit(point, out)


def extrapolate(
    ks: np.ndarray, per_problem: np.ndarray, draws: np.ndarray, *, k_fit: int
) -> tuple[float, np.ndarray]:
    """Fit on ``k <= k_fit``, predict coverage at ``ks[-1]``: the error and its resamples.

    Returns
    -------
    error, error_draws
        ``predicted - observed`` coverage at the largest k on all problems, and (R,)
        the same on each resample (NaN where the fit failed).
    """
    ks = np.asarray(ks)
    sel = ks <= k_fit

    def err(pp: np.ndarray) -> float:
        f = fit_coverage(ks[sel], pp[:, sel].mean(axis=0))
        return float(predict(f.params, ks[-1:])[0] - pp[:, -1].mean())

    point = err(per_problem)
    out = np.full(len(draws), np.nan)
    for r, idx in enumerate(draws):
        try:
            out[r] = err(per_problem[idx])
        except ValueError:
            continue
    return point, out
