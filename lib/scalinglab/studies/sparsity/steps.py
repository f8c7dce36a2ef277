"""A step of the sparsity report: the findings it names, its table, and one call to
record them.

:class:`Named` is one finding before it is recorded (an
:class:`~scalinglab.estimate.Estimate` with a name, a description, a unit and a headline
flag); :class:`Step` is what one step of ``notebooks/sparsity_laws.py`` computed;
:func:`record_all` records a step's findings with :func:`scalinglab.record.record`, so the
notebook types no ``level=..., method=...`` and the method a report prints is the one the
library used. The steps themselves are in :mod:`.findings` (our runs),
:mod:`.kernel_findings`, :mod:`.design_findings` and :mod:`.long_findings` (the longer
designs), :mod:`.wd_limits` (the width-depth families) and
:mod:`.paper_findings` (the paper's curves).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.finding import Finding
from scalinglab.record import record

PAPER_SIGN = {"relu": "negative", "silu": "positive"}
PAPER_TREND = {"relu": "decreasing", "silu": "increasing"}


@dataclass(frozen=True)
class Named:
    """One finding before it is recorded: name, estimate, and how it is shown."""

    name: str
    estimate: Estimate
    description: str
    unit: str | None = None
    headline: bool = False


@dataclass
class Step:
    """What one step of the report computed.

    Attributes
    ----------
    findings
        To record, in order (:func:`record_all`).
    table
        The step's table for the report (None when it has none).
    extra
        What later steps or figures need (fits, draws, names), by key.
    messages
        Lines the report prints (fits that failed, designs not run).
    """

    findings: list[Named] = field(default_factory=list)
    table: pd.DataFrame | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)


def record_all(step: Step | Iterable[Named]) -> list[Finding]:
    """Record every finding of ``step`` with :func:`scalinglab.record.record`, in order,
    and print its messages."""
    items = step.findings if isinstance(step, Step) else list(step)
    if isinstance(step, Step):
        for m in step.messages:
            print(m)
    # a headline needs an interval: one that has none here (one seed, no spread) is not one
    return [
        record(
            n.name,
            n.estimate,
            description=n.description,
            unit=n.unit,
            headline=n.headline and n.estimate.ci is not None,
        )
        for n in items
    ]


__all__ = ["PAPER_SIGN", "PAPER_TREND", "Named", "Step", "record_all"]
