"""Prose bound to findings: ``{{ name }}`` in markdown becomes the finding as the report
shows it.

A study's narrative never types a number that a finding holds. It names the finding::

    Muon's speedup at 222k parameters is {{ speedup/muon/222k }} ...
    ... a slope of {{ speedup/slope | point }} per decade

and :func:`fill_markdown` replaces each reference with the finding rendered the way the
findings table renders it (:mod:`scalinglab.findings_view`): its point, its interval
(one-sided for a parameter on a bound, a dash for NaN) and its unit. An unknown name is
an error at render time, naming the reference and the closest recorded names, so prose
cannot outlive the finding it describes.

Format specs (after ``|``):

``full`` (default)
    ``point [lo, hi] unit``, e.g. ``0.236 [0.1593, 0.3256]``.
``point``
    the point only (with its unit).
``num``
    the point only, without its unit (a count the sentence names, e.g. ``47``).
``ci``
    the interval only, e.g. ``[0.1593, 0.3256]``.
``pct``
    point and interval as percentages, e.g. ``23.6% [15.9%, 32.6%]``.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from scalinglab.findings_view import interval_text, point_text
from scalinglab.textfmt import fmt_num

#: ``{{ name }}`` or ``{{ name | spec }}``; a name has no braces, bars or line breaks.
REFERENCE = re.compile(r"\{\{\s*([^{}|\n]+?)\s*(?:\|\s*([A-Za-z_]+)\s*)?\}\}")
SPECS = ("full", "point", "num", "ci", "pct")


class UnknownFindingError(KeyError):
    """Prose names a finding that the run did not record (or a spec that does not exist)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def _as_dicts(findings: Mapping[str, Any] | Iterable[Any]) -> dict[str, dict]:
    """Finding name -> ``results.json``-style dict, from a mapping or a list of findings."""
    items: Iterable[Any] = findings.values() if isinstance(findings, Mapping) else findings
    out = {}
    for f in items:
        d: dict = f.to_json() if hasattr(f, "to_json") else dict(f)
        out[d["name"]] = d
    return out


def _pct(x: Any) -> str:
    v = float(x)
    return "—" if math.isnan(v) else f"{fmt_num(100 * v)}%"


def render_finding(d: Mapping[str, Any], spec: str | None = None) -> str:
    """One finding as prose shows it (see the module's format specs).

    Parameters
    ----------
    d
        A ``results.json`` finding dict (``name``, ``point``, ``ci``, ``unit``,
        ``identified``, ``bound``, ``side``).
    spec
        ``full`` (default), ``point``, ``num``, ``ci`` or ``pct``.
    """
    spec = spec or "full"
    if spec not in SPECS:
        raise UnknownFindingError(
            f"unknown format {spec!r} for finding {d.get('name')!r}; use one of {', '.join(SPECS)}"
        )
    d = dict(d)
    unit = f" {d['unit']}" if d.get("unit") else ""
    point = point_text(d)
    ci = interval_text(d)
    has_ci = ci != "—"
    if spec == "pct":
        if not d.get("identified", True) or point == "—":
            return f"{point} {ci}".strip()
        lo, hi = d["ci"] if has_ci else (None, None)
        return _pct(d["point"]) + (f" [{_pct(lo)}, {_pct(hi)}]" if has_ci else "")
    if spec == "point":
        return point + (unit if point != "—" else "")
    if spec == "num":
        return point
    if spec == "ci":
        return ci
    return point + (f" {ci}" if has_ci else "") + (unit if point != "—" else "")


def references(text: str) -> list[tuple[str, str | None]]:
    """The ``(name, spec)`` references in ``text``, in order."""
    return [(m.group(1), m.group(2)) for m in REFERENCE.finditer(text)]


def fill_markdown(
    text: str,
    findings: Mapping[str, Any] | Iterable[Any],
    *,
    strict: bool = True,
    where: str = "markdown",
) -> str:
    """Replace every ``{{ name }}`` / ``{{ name | spec }}`` in ``text`` with the finding.

    Parameters
    ----------
    text
        Markdown source.
    findings
        The run's findings: a list of ``results.json`` dicts or
        :class:`~scalinglab.finding.Finding`, or a mapping name -> either.
    strict
        Raise on an unknown name (a report of a finished run); False renders it as
        ``⟨name: not recorded⟩`` (a failed run, whose later findings are missing).
    where
        Named in the error (e.g. ``"test_time_scaling, markdown cell 12"``).

    Raises
    ------
    UnknownFindingError
        A reference names no recorded finding, or an unknown format spec.
    """
    known = _as_dicts(findings)

    def one(m: re.Match[str]) -> str:
        name, spec = m.group(1), m.group(2)
        if name not in known:
            if not strict:
                return f"⟨{name}: not recorded⟩"
            close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownFindingError(
                f"{where}: {m.group(0)} names a finding this run did not record{hint}"
            )
        return render_finding(known[name], spec)

    return REFERENCE.sub(one, text)
