"""A report's interval methods with their coverage, and the coverage its verdicts state.

Every report lists, in one generic section, each interval method it uses and how often
it covers where it is used (:func:`report_coverage`: a finding's method text matched to
:data:`~scalinglab.stats.method_coverage.REGISTRY`, at the sample size
:func:`finding_n` reads). A method without a registry entry, or a finding whose sample
size is not known, is listed as "coverage not measured" (with the reason), never left
out.

A verdict decided by an interval that covers less than :data:`COVERAGE_TARGET` says so
(:func:`coverage_note`, from the committed table). A study that has simulated an
interval's coverage on its own data appends that measurement to the method text
(:func:`measured_on_data`); the row and the note then state it (:func:`stated_on_data`),
the note beside the generic table's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scalinglab.stats.method_coverage import (
    MAX_N,
    MethodCoverage,
    committed_coverage,
    match_method,
    measured_coverage,
)

#: Sample sizes shown for a registered method whose findings do not record theirs.
REFERENCE_NS = (3, 5, 10)

_N_IN_TEXT = re.compile(
    r"\bover (?:the )?(\d[\d,]*)(?: (?:seeds|runs|repeats|draws|values|processes|prompts|tasks))?\b"
)


def finding_n(finding: Mapping) -> int | None:
    """The sample size a finding's interval rests on: its ``n`` field, else a number the
    method text states (``"Student t over 3 seeds"``, ``"Wilson score over 40"``), else
    None."""
    n = finding.get("n")
    if n is not None:
        return int(n)
    m = _N_IN_TEXT.search(str(finding.get("method") or ""))
    return int(m.group(1).replace(",", "")) if m else None


#: :attr:`~scalinglab.stats.method_coverage.MethodCoverage.key` of a coverage a study
#: simulated on its own data (:func:`measured_on_data`), and the label its coverage-table
#: row shows.
ON_DATA = "on-data"
ON_DATA_LABEL = "simulated on this study's own data"


@dataclass(frozen=True)
class CoverageRow:
    """One interval method a report uses at one ``n``: its coverage, or why it has none."""

    method: str
    level: float | None
    n: int | None
    findings: int
    registered: str | None
    coverage: MethodCoverage | None
    simulated_as: str | None
    reason: str | None
    #: Where the simulation's n differs from the finding's, e.g. "simulated at n = 10,
    #: the nearest simulated n below 11" (coverage rises with n: the conservative reading).
    at: str | None = None
    #: Where the sample size is not recorded but the method is registered: its coverage
    #: at :data:`REFERENCE_NS`, for the reader to place the report's own n.
    reference: tuple[MethodCoverage, ...] = ()


def report_coverage(findings: Sequence[Mapping]) -> list[CoverageRow]:
    """Each interval method the findings use, grouped by (method text, level, n).

    Parameters
    ----------
    findings
        ``results.json`` findings (or :meth:`Finding.to_json` dicts); those without an
        interval are left out.

    Returns
    -------
    list of CoverageRow
        In order of first use; ``coverage`` None with a ``reason`` where the method is not
        registered or the finding's sample size is not recorded.
    """
    groups: dict[tuple, int] = {}
    for f in findings:
        ci = f.get("ci")
        if not ci or f.get("level") is None:
            continue
        key = (str(f.get("method") or "not stated"), float(f["level"]), finding_n(f))
        groups[key] = groups.get(key, 0) + 1
    rows = []
    for (text, level, n), count in groups.items():
        on_data = stated_on_data(text)
        if on_data is not None:  # the study simulated it on its own data: that measurement
            c, n_sim, se = on_data
            rows.append(
                CoverageRow(
                    text,
                    level,
                    n,
                    count,
                    ON_DATA_LABEL,
                    MethodCoverage(ON_DATA, n_sim, level, c, se, "these data's own spread", 0),
                    "data sets drawn from the study's own fitted model (the method says how)",
                    None,
                    None if n is None or n_sim == n else f"simulated at n = {n_sim}",
                )
            )
            continue
        reg = match_method(text)
        cov, reason, at = None, None, None
        reference: tuple[MethodCoverage, ...] = ()
        if reg is None:
            reason = "coverage not measured: no simulation registered for this method"
        elif n is None:
            reason = "coverage not measured: the sample size is not recorded"
            reference = tuple(measured_coverage(reg.key, r, level=level) for r in REFERENCE_NS)
        else:
            try:
                cov = measured_coverage(reg.key, n, level=level)
            except ValueError as exc:
                reason = f"coverage not measured: {exc}"
            if cov is not None and cov.n != n:
                where = (
                    "the largest simulated n" if n > MAX_N else f"the nearest simulated n below {n}"
                )
                at = f"simulated at n = {cov.n}, {where}"
        rows.append(
            CoverageRow(
                text,
                level,
                n,
                count,
                None if reg is None else reg.label,
                cov,
                None if reg is None else reg.simulated_as,
                reason,
                at,
                reference,
            )
        )
    return rows


#: Coverage a deciding interval must reach for its verdict to go without a caveat: below
#: it, the verdict's reason states the interval's measured coverage (issue 28: >= 0.93).
COVERAGE_TARGET = 0.93


#: How a finding's method text states the coverage its study simulated on its own data.
_ON_DATA = re.compile(
    r"coverage (\d(?:\.\d+)?) at n = (\d+) simulated on these data \(se (\d(?:\.\d+)?)\)"
)


def measured_on_data(coverage: float, n: int, *, se: float) -> str:
    """The words a study appends to an interval's method text when it has simulated that
    interval's coverage on a generator resampled from its own data (e.g. the per-seed
    deviations of its log speedups, the per-prompt values of a gain), so that
    :func:`coverage_note` states that measurement rather than the generic table's.

    Parameters
    ----------
    coverage
        Simulated coverage, in ``[0, 1]``.
    n
        Sample size simulated (the interval's ``n``).
    se
        Monte Carlo standard error of ``coverage``.
    """
    if not 0.0 <= float(coverage) <= 1.0 or int(n) < 1 or not float(se) >= 0.0:
        raise ValueError(
            f"measured_on_data: need coverage in [0, 1], n >= 1, se >= 0; got {coverage}, {n}, {se}"
        )
    return f"coverage {float(coverage):.3f} at n = {int(n)} simulated on these data (se {float(se):.3f})"


def stated_on_data(method: str | None) -> tuple[float, int, float] | None:
    """``(coverage, n, se)`` a method text states with :func:`measured_on_data`, else None."""
    m = _ON_DATA.search(str(method or ""))
    return (float(m.group(1)), int(m.group(2)), float(m.group(3))) if m else None


def coverage_note(finding: Mapping, *, target: float = COVERAGE_TARGET) -> str | None:
    """What a verdict decided by ``finding``'s interval must say about that interval's
    coverage, or None when nothing.

    Parameters
    ----------
    finding
        A ``results.json`` finding dict (``ci``, ``level``, ``method``, ``n``).
    target
        Coverage below which the measured value is stated.

    Returns
    -------
    str or None
        ``"its interval's simulated coverage is 0.92 at n = 3"`` when the method's measured coverage at
        the finding's ``n``
        (:func:`~scalinglab.stats.method_coverage.committed_coverage`) is below ``target``;
        where the method text states a coverage simulated on the study's own data
        (:func:`measured_on_data`), both are read and the note is given when either is
        below ``target``, naming both, the study's own first (e.g. ``"its interval's
        simulated coverage is 0.959 at n = 3 on these data's own spread (se 0.003); 0.92 on
        a generic log-normal (sigma 0.5) generator"``);
        ``"its interval's coverage is not measured: <why>"`` when the method is not
        registered, the sample size is not recorded, or the table has no entry; None for
        an interval that covers at least ``target``, or a finding without interval.
    """
    ci = finding.get("ci")
    if not ci or finding.get("level") is None:
        return None
    on_data = stated_on_data(finding.get("method"))
    if on_data is not None:  # the study's own generator, beside the generic table's
        c, n_sim, se = on_data
        data_said = f"{c:.3f} at n = {n_sim} on these data's own spread (se {se:.3f})"
        reg = match_method(finding.get("method"))
        n = finding_n(finding)
        level = float(finding["level"])
        generic = None if reg is None or n is None else committed_coverage(reg.key, n, level=level)
        low_generic = generic is not None and generic.coverage < target
        if c < target or low_generic:  # the study's own generator first, as it decides
            extra = (
                f"; {generic.coverage:.2f} on a generic {generic.generator} generator"
                if low_generic and generic is not None
                else ""
            )
            return f"its interval's simulated coverage is {data_said}{extra}"
        return None
    not_measured = "its interval's coverage is not measured: "
    reg = match_method(finding.get("method"))
    if reg is None:
        return (
            not_measured
            + f"no simulation is registered for its method ({finding.get('method') or 'not stated'})"
        )
    n = finding_n(finding)
    if n is None:
        return not_measured + f"its sample size is not recorded ({reg.label})"
    level = float(finding["level"])
    cov = committed_coverage(reg.key, n, level=level)
    if cov is None:
        return not_measured + f"no simulation of {reg.label} at level {level:g}, n = {n}"
    if cov.coverage >= target:
        return None
    at = "" if cov.n == n else f", as simulated at n = {cov.n}"
    return f"its interval's simulated coverage is {cov.coverage:.2f} at n = {n}{at}"
