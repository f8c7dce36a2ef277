"""Findings: every claim a report makes, with its point estimate and interval.

A study notebook calls :func:`record` once per finding, with the
:class:`~scalinglab.estimate.Estimate` a library function returned (its level, method
and resamples are kept as the library made them). Findings are kept in
memory (so an interactive JupyterLab session can show them with
:func:`findings_table`) and, when the runner executes the notebook, also written
atomically to the ``results.json`` named by the ``SCALINGLAB_RESULTS``
environment variable after every call (:mod:`scalinglab.results_file`), so a run that
dies half-way still leaves the findings it reached. A finding is a
:class:`~scalinglab.finding.Finding`; the checks of its own numbers are
:mod:`scalinglab.finding`'s.

Rules a finding obeys (each raises ``ValueError`` when broken):

- its point lies inside its interval (a percentile interval that excludes its
  own point estimate says the statistic is biased or selected; fix the
  statistic, do not report it);
- a headline finding has an interval, and a report has at most
  :data:`MAX_HEADLINES` headlines (the 13th raises);
- a zero-width interval ``[x, x]`` (every resample gave the same value) does not cover:
  it is refused with a :class:`~scalinglab.finding.ZeroWidthInterval` error naming the
  finding, unless the caller states why there is none (``no_interval="reason"``, or an
  :class:`~scalinglab.estimate.Estimate` carrying ``no_interval``) or the estimate is not
  identified (pinned by its bound, which says why); the finding is then kept without
  an interval (its note says why; never a headline; a claim on it is inconclusive);
- a finding recorded ``identified=False`` (a fitted parameter on a bound, see
  :func:`scalinglab.fitting.identification`) is shown one-sided ("at bound 0,
  <= 0.016") and is never a headline: ``headline=True`` is dropped (the note keeps the
  finding's own reasons, which a claim's verdict quotes).

Published claims are declared with :func:`claim` after the findings that decide
them; their verdicts (:mod:`scalinglab.claims`) are recomputed from the current
findings whenever ``results.json`` is written.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scalinglab.claims import Claim, Verdict, decide, decide_all
from scalinglab.claims_file import claims_for, study_claims_path
from scalinglab.estimate import Estimate
from scalinglab.finding import (
    Finding,
    as_float,
    check_inside,
    checked_df,
    checked_room,
    checked_support,
    t_df,
    zero_width,
)
from scalinglab.findings_view import findings_html
from scalinglab.results_file import write_results
from scalinglab.textfmt import fmt_ci, fmt_num

RESULTS_ENV = "SCALINGLAB_RESULTS"
#: Most headline findings a report may have (the ledger carries the rest of the story).
MAX_HEADLINES = 12


_FINDINGS: dict[str, Finding] = {}
_CLAIMS: dict[str, Claim] = {}


def record(
    name: str,
    point: float | Estimate,
    *,
    ci: Sequence[float] | None = None,
    method: str | None = None,
    level: float | None = None,
    resamples: int | None = None,
    unit: str | None = None,
    description: str | None = None,
    headline: bool = False,
    identified: bool = True,
    note: str | None = None,
    bound: float | None = None,
    side: str | None = None,
    support: Sequence[float] | None = None,
    n: int | None = None,
    room: float | None = None,
    no_interval: str | None = None,
    df: float | None = None,
) -> Finding:
    """Record a finding (re-recording a name replaces it).

    Parameters
    ----------
    name
        Stable identifier, e.g. ``"iqm/adam"``; reports are diffed by name.
    point
        An :class:`~scalinglab.estimate.Estimate` (the library's result, taken as
        it is: its interval, level, method, resamples, identification, bound and
        note), or a plain number (a point estimate, or with the keywords below
        for code not yet returning estimates).
    ci
        ``(lo, hi)`` interval; the point must lie inside it (NaN endpoints
        aside). Not with an ``Estimate``.
    method, level, resamples
        How the interval was made, e.g. ``"stratified bootstrap, percentile"``,
        ``0.95`` and ``50000``. A finding with a CI must say its level. Not
        with an ``Estimate`` (it carries its own).
    unit, description
        Free text shown in the findings table.
    headline
        Shown in ``reports/index.html`` next to the study and in the report's
        forest plot; needs an interval; at most :data:`MAX_HEADLINES`.
    identified
        False for a parameter on (or near) a bound or otherwise not identified
        by the data: shown one-sided, never a headline, and a claim that rests
        on it reads ``not identified``.
    note
        Why (e.g. ``"alpha at its lower bound 0 in the point fit"``).
    bound, side
        The bound it sits on and which one (``"lower"`` / ``"upper"``), when
        known: the report then shows "at bound 0, <= hi".
    support
        ``(lo, hi)``: the values the finding can take by construction (``inf`` for
        none), e.g. ``(0, inf)`` for a pass@k coverage gain; a claim whose rule no value
        there could fail is refused (:mod:`scalinglab.verdict_checks`).
    n
        The sample size the interval rests on (seeds, runs, draws), when the
        ``Estimate`` does not carry it: the report states the method's simulated
        coverage at this ``n`` (:mod:`scalinglab.stats.method_coverage`).
    df
        Degrees of freedom of a Student-t interval, when the ``Estimate`` does not carry
        it. Without either, a method text naming Student t or Welch with ``n`` gives
        ``n - 1`` (:func:`~scalinglab.finding.t_df`); otherwise None: read as normal by
        the claims' Holm correction.
    room
        For a bounded quantity, when the ``Estimate`` does not carry it: the room left
        between its level and its bound, in the finding's units (the largest effect it
        could still show); a claim whose minimum meaningful effect exceeds it reads "not
        identified (saturated)" (:func:`scalinglab.verdict_checks.saturation`).
    no_interval
        Why this finding may have no interval (also an ``Estimate``'s own
        ``no_interval``): used only when the interval has zero width, which is then
        dropped with this reason. A zero-width interval of an identified finding without
        a reason is an error: choose a method that covers at this sample size, or say why
        there is none.

    Raises
    ------
    scalinglab.finding.ZeroWidthInterval
        A zero-width interval of an identified finding, with no ``no_interval`` reason.
    ValueError
        A bad interval, a point outside its interval, a headline without an
        interval, or a 13th headline.
    TypeError
        An ``Estimate`` given together with ``ci``, ``method``, ``level``,
        ``resamples``, ``bound`` or ``side`` (they would contradict it).

    Returns
    -------
    Finding
        Displays as a one-row findings table in a notebook.
    """
    if not isinstance(name, str) or not name:
        raise TypeError("record(): name must be a non-empty string")
    if isinstance(point, Estimate):
        given = {
            k: v
            for k, v in (
                ("ci", ci),
                ("method", method),
                ("level", level),
                ("resamples", resamples),
                ("bound", bound),
                ("side", side),
            )
            if v is not None
        }
        if given:
            raise TypeError(
                f"record({name!r}): an Estimate carries its own interval and method; "
                f"do not pass {', '.join(given)} with it"
            )
        est = point
        point, ci, method, level, resamples = (
            est.point,
            est.ci,
            est.method,
            est.level,
            est.resamples,
        )
        bound, side = est.bound, est.side
        mc_se = est.mc_se
        if est.n is not None:
            if n is not None and int(n) != est.n:
                raise TypeError(f"record({name!r}): n={n} contradicts the Estimate's n={est.n}")
            n = est.n
        if est.room is not None:
            if room is not None and float(room) != est.room:
                raise TypeError(
                    f"record({name!r}): room={room} contradicts the Estimate's room={est.room}"
                )
            room = est.room
        if est.df is not None:
            if df is not None and float(df) != est.df:
                raise TypeError(f"record({name!r}): df={df} contradicts the Estimate's df={est.df}")
            df = est.df
        identified = identified and est.identified
        no_interval = no_interval or est.no_interval
        if est.note:
            note = f"{est.note}; {note}" if note else est.note
    else:
        mc_se = None
    p = as_float(point, "point", name)
    interval = None
    if ci is not None:
        if len(ci) != 2:
            raise ValueError(f"record({name!r}): ci must be (lo, hi), got {ci!r}")
        lo, hi = (as_float(c, "ci", name) for c in ci)
        if not (math.isnan(lo) or math.isnan(hi)) and lo > hi:
            raise ValueError(f"record({name!r}): ci lower bound {lo} exceeds upper bound {hi}")
        if level is None:
            raise ValueError(f"record({name!r}): a finding with a ci must state its level")
        interval = (lo, hi)
        check_inside(name, p, lo, hi)
        refused = zero_width(name, lo, hi, method, no_interval, identified=bool(identified))
        if refused:
            # the interval is refused, the number kept: a claim on it has no interval to
            # decide by, and it is no headline
            interval, mc_se = None, None
            note = f"{note}; {refused}" if note else refused
            headline = False
    if side not in (None, "lower", "upper"):
        raise ValueError(f"record({name!r}): side must be 'lower', 'upper' or None, got {side!r}")
    identified = bool(identified)
    if not identified:  # no headline; the note keeps the finding's own reasons only
        headline = False
    if headline:
        if interval is None or any(math.isnan(c) for c in interval):
            raise ValueError(f"record({name!r}): a headline finding needs an interval")
        others = [n for n, g in _FINDINGS.items() if g.headline and n != name]
        if len(others) >= MAX_HEADLINES:
            raise ValueError(
                f"record({name!r}): a report has at most {MAX_HEADLINES} headline "
                f"findings; already {len(others)} ({', '.join(others)}). Keep the "
                "rest in the full findings table and the claims ledger."
            )
    f = Finding(
        name=name,
        point=p,
        ci=interval,
        level=None if level is None else float(level),
        method=method,
        resamples=None if resamples is None else int(resamples),
        unit=unit,
        description=description,
        headline=bool(headline),
        identified=identified,
        note=note,
        bound=None if bound is None else as_float(bound, "bound", name),
        side=side,
        mc_se=mc_se,
        support=None if support is None else checked_support(name, support),
        n=None if n is None else int(n),
        room=None if room is None else checked_room(name, room),
        df=None
        if interval is None
        else checked_df(name, df if df is not None else t_df(method, n)),
    )
    _FINDINGS[name] = f
    _flush()
    return f


def findings() -> list[Finding]:
    """All findings recorded in this process, in recording order."""
    return list(_FINDINGS.values())


def claim(
    id: str,  # noqa: A002 - the claim's id, as the ledger names it
    *,
    paper: str,
    statement: str,
    finding: str | Sequence[str] | None = None,
    expect: str | None = None,
    value: float | Sequence[float] | None = None,
    tolerance: float = 0.0,
    untested: str | None = None,
) -> Verdict:
    """Declare a published claim this study tests; its verdict is computed from findings.

    Parameters
    ----------
    id
        Unique within a report (re-declaring an id replaces it), e.g.
        ``"scalerl-half-compute"``.
    paper, statement
        Who claimed it, and what, in one sentence.
    finding
        The recorded finding name (or a list of names, all of which must agree)
        whose interval decides the claim. Record it before declaring the claim.
    expect, value, tolerance
        The rule: ``"greater"`` (effect > value), ``"less"`` (effect < value),
        ``"equal"`` (``|effect - value| <= tolerance``) or ``"between"``
        (``value = (lo, hi)``, bounds included).
    untested
        Instead of a rule: why the study cannot test the claim.

    Returns
    -------
    Verdict
        ``reproduces``, ``contradicts``, ``inconclusive`` (with the minimum
        detectable effect), ``not identified`` or ``untested``; see
        :mod:`scalinglab.claims`.

    Raises
    ------
    KeyError
        A named finding was never recorded.
    ValueError
        A malformed rule.
    """
    names: tuple[str, ...]
    if finding is None:
        names = ()
    elif isinstance(finding, str):
        names = (finding,)
    else:
        names = tuple(finding)
    if isinstance(value, Sequence) and not isinstance(value, str):
        value = tuple(float(v) for v in value)  # type: ignore[assignment]
    c = Claim(
        id=id,
        paper=paper,
        statement=statement,
        findings=names,
        expect=expect,
        value=value,
        tolerance=float(tolerance),
        untested=untested,
    )  # type: ignore[arg-type]
    verdict = decide(c, {n: f.to_json() for n, f in _FINDINGS.items()})
    _CLAIMS[id] = c
    _flush()
    return verdict


def claims_file(study: str) -> Path:
    """Where ``study``'s claims live: ``notebooks/claims/<study>.toml``."""
    return study_claims_path(study)


def claims_from(study: str | Path, **values: Any) -> list[Verdict]:
    """Declare every claim of a study's claims file, decided by the findings recorded so far.

    Parameters
    ----------
    study
        The study's name (its file is :func:`claims_file`) or a path to a claims file.
    values
        What the file's templates name, e.g. ``sizes=["s", "m"]`` (a list expands a
        finding name to one per element) or ``pairs=[{"x": ..., "y": ...}, ...]``
        (for ``each = "pairs"``); see :mod:`scalinglab.claims_file`.

    Returns
    -------
    list of Verdict
        In file order.

    Raises
    ------
    scalinglab.claims_file.ClaimsFileError
        A malformed file, a template naming a value not passed, or a claim decided by a
        finding that was never recorded (naming the file and the claim id).
    """
    path = study_claims_path(study)
    current = {n: f.to_json() for n, f in _FINDINGS.items()}
    declared = claims_for(path, values, current)
    for c in declared:
        _CLAIMS[c.id] = c
    _flush()
    return decide_all(declared, current)


def claims() -> list[Verdict]:
    """Every declared claim with its verdict on the current findings, in declaration order.

    A claim whose finding has since been forgotten (:func:`clear`) is left out; an
    untested one is kept (its findings, named only to state its rule, were never there).
    """
    current = {n: f.to_json() for n, f in _FINDINGS.items()}
    live = [
        c
        for c in _CLAIMS.values()
        if c.untested is not None or all(n in current for n in c.findings)
    ]
    return decide_all(live, current)


def clear() -> None:
    """Forget recorded findings and claims (tests, or a fresh interactive run)."""
    _FINDINGS.clear()
    _CLAIMS.clear()
    _flush()


def _flush() -> None:
    target = os.environ.get(RESULTS_ENV)
    if not target:
        return
    write_results(Path(target), findings(), claims(), durable=False)


class _Table:
    def __init__(self, items: Sequence[Finding]) -> None:
        self.items = list(items)

    def _repr_html_(self) -> str:
        return findings_html(self.items)

    def __repr__(self) -> str:
        lines = []
        for f in self.items:
            ci = fmt_ci(f.ci)
            lines.append(f"{f.name:40s} {fmt_num(f.point):>12s} {ci}")
        return "\n".join(lines)


def findings_table() -> _Table:
    """Every finding recorded so far, displayed as a table in a notebook."""
    return _Table(findings())
