"""Which cells of a speedup result a comparison reads, when a design leaves cells out.

A sweep may run some optimizers at fewer data budgets than others (the ``medium``
optimizer sweep runs NAdamW, Muon and SOAP at 1x only at its largest size, and AdamW
alone at 8x and 16x at its two smallest). A summary that averages over budgets then
compares like with like only over the budgets both sides ran:

- :func:`matched`: the budgets every compared optimizer ran at every size (a trend over
  sizes);
- :func:`compared`: at each size, the budgets the compared optimizers ran there (the
  baseline's speedup over itself, the noise floor of those speedups);
- :func:`at_sizes`: some sizes only (those whose baseline fit identifies ``E``).

Each returns a :class:`~scalinglab.fitting.speedup.SpeedupResult` whose ``cells`` are
renumbered ``0..n-1`` and whose ``draws`` keep the matching columns, so every analysis of
:mod:`scalinglab.studies.optimizers.analysis` runs on it unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from scalinglab.fitting.speedup import SpeedupResult


def matched(result: SpeedupResult) -> tuple[SpeedupResult, list[float]]:
    """The speedups at the data multiples that every compared optimizer ran at every size.

    A design may leave cells out (the ``medium`` sweep runs the optimizers other than the
    baseline only at 1x at its largest size) or add baseline-only budgets; a trend over
    sizes then compares like with like only at the budgets all sizes share.

    Returns
    -------
    matched, multiples
        ``result`` with only the cells (and their columns of ``draws``) at ``multiples``,
        the sorted multiples every non-baseline optimizer has at every size (all of the
        baseline's when it is alone). Unchanged when the design is complete.
    """
    c = result.cells
    others = c[c.optimizer != result.baseline]
    groups = others if len(others) else c
    common: set[float] | None = None
    for _, g in groups.groupby(["optimizer", "model_size"], sort=False):
        have = set(g.data_multiple.astype(float))
        common = have if common is None else common & have
    keep = sorted(common or ())
    return _only(result, c.data_multiple.astype(float).isin(keep).to_numpy()), keep


def compared(result: SpeedupResult) -> SpeedupResult:
    """``result`` at each size's budgets where an optimizer other than the baseline ran.

    The baseline's speedup over itself (the noise floor, :func:`.controls.noise_floor`)
    then averages over the same budgets as the speedups it is the floor of (at the
    ``medium`` design's largest size: 1x only, not the baseline's 0.5-4x).
    """
    c = result.cells
    others = c[c.optimizer != result.baseline]
    if not len(others):
        return result
    have = set(zip(others.model_size, others.data_multiple.astype(float), strict=True))
    keys = zip(c.model_size, c.data_multiple.astype(float), strict=True)
    return _only(result, np.array([k in have for k in keys]))


def at_sizes(result: SpeedupResult, sizes: Sequence[str]) -> SpeedupResult:
    """``result`` at ``sizes`` only (e.g. those whose baseline fit identifies ``E``)."""
    return _only(result, result.cells.model_size.isin(list(sizes)).to_numpy())


def _only(result: SpeedupResult, mask: np.ndarray) -> SpeedupResult:
    """``result`` with the cells where ``mask`` (and their columns of ``draws``)."""
    if mask.all():
        return result
    pos = np.flatnonzero(mask)
    cells = result.cells.iloc[pos].reset_index(drop=True)
    draws = None if result.draws is None else result.draws[:, pos]
    return dataclasses.replace(result, cells=cells, draws=draws)
