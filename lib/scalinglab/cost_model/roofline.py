"""The roofline model: the least time an operation can take on a machine.

An operation of ``F`` FLOPs that must move ``B`` bytes cannot finish faster than
``max(F / peak_flop_per_s, B / mem_bytes_per_s)`` (Williams, Waterman and
Patterson 2009). Its arithmetic intensity ``I = F / B`` (FLOP/byte) decides which
roof binds: below the ridge point ``peak / bandwidth`` it is memory-bound, above
it compute-bound, and the attainable rate is ``min(peak, I * bandwidth)``.

All functions are pure and vectorised over NumPy arrays; the machine is a
:class:`~scalinglab.cost_model.hardware.HardwareRecord`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from scalinglab.cost_model.flops import check_positive, scalar_or_array
from scalinglab.cost_model.hardware import HardwareRecord


def arithmetic_intensity(flops: ArrayLike, bytes_moved: ArrayLike) -> float | np.ndarray:
    """FLOP per byte, ``flops / bytes_moved``."""
    flops = check_positive("flops", flops, allow_zero=True)
    return scalar_or_array(flops / check_positive("bytes_moved", bytes_moved))


def ridge_point(hw: HardwareRecord) -> float:
    """Intensity (FLOP/byte) where the two roofs meet: ``peak_flop_per_s / mem_bytes_per_s``."""
    return hw.peak_flop_per_s / hw.mem_bytes_per_s


def attainable_flop_per_s(intensity: ArrayLike, hw: HardwareRecord) -> float | np.ndarray:
    """The roofline: ``min(peak_flop_per_s, intensity * mem_bytes_per_s)`` in FLOP/s."""
    i = check_positive("intensity", intensity, allow_zero=True)
    return scalar_or_array(np.minimum(hw.peak_flop_per_s, i * hw.mem_bytes_per_s))


def roofline_seconds(
    flops: ArrayLike, bytes_moved: ArrayLike, hw: HardwareRecord
) -> float | np.ndarray:
    """Lower bound on run time: ``max(flops / peak_flop_per_s, bytes_moved / mem_bytes_per_s)``.

    Parameters
    ----------
    flops
        Floating-point operations of the op.
    bytes_moved
        Bytes it must move to or from main memory.
    hw
        The machine.

    Returns
    -------
    float or numpy.ndarray
        Seconds, the broadcast shape of ``flops`` and ``bytes_moved``.
    """
    f = check_positive("flops", flops, allow_zero=True)
    b = check_positive("bytes_moved", bytes_moved, allow_zero=True)
    return scalar_or_array(np.maximum(f / hw.peak_flop_per_s, b / hw.mem_bytes_per_s))


def bound(flops: ArrayLike, bytes_moved: ArrayLike, hw: HardwareRecord) -> str | np.ndarray:
    """``"compute"`` or ``"memory"``: which roof limits the op (ties count as compute)."""
    f = check_positive("flops", flops, allow_zero=True)
    b = check_positive("bytes_moved", bytes_moved, allow_zero=True)
    out = np.where(f / hw.peak_flop_per_s >= b / hw.mem_bytes_per_s, "compute", "memory")
    return str(out) if out.ndim == 0 else out


def fraction_of_roofline(
    seconds: ArrayLike, flops: ArrayLike, bytes_moved: ArrayLike, hw: HardwareRecord
) -> float | np.ndarray:
    """How close a measured time comes to the roofline bound (1.0 = on the roof)."""
    return scalar_or_array(
        np.asarray(roofline_seconds(flops, bytes_moved, hw)) / check_positive("seconds", seconds)
    )
