"""The one bootstrap engine shared by ``stats`` and ``fitting``.

Resampling is done as index arrays drawn from an explicit ``np.random.Generator``
(never the global RNG), so the same seed gives the same interval bit for bit.
Interval construction from replicates (percentile; BCa in ``stats.intervals``)
also lives here.
"""

from __future__ import annotations

import numpy as np


def resample_groups(rng: np.random.Generator, n_groups: int, reps: int) -> np.ndarray:
    """Indices of groups drawn with replacement, one row per bootstrap replicate.

    Returns
    -------
    numpy.ndarray
        Shape ``(reps, n_groups)``, dtype int64, values in ``[0, n_groups)``.
    """
    if n_groups < 1 or reps < 1:
        raise ValueError(f"need n_groups >= 1 and reps >= 1, got {n_groups}, {reps}")
    return rng.integers(0, n_groups, size=(reps, n_groups))


def percentile_interval(
    replicates: np.ndarray, *, level: float = 0.95, axis: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap replicates along ``axis``.

    NaN replicates (e.g. failed refits) are ignored.

    Returns
    -------
    lo, hi
        Arrays of the replicates' shape with ``axis`` removed.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    alpha = (1 - level) / 2
    lo, hi = np.nanquantile(np.asarray(replicates, dtype=float), [alpha, 1 - alpha], axis=axis)
    return lo, hi
