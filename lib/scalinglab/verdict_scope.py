"""Whose claim it is and where it is tested: the scope of a verdict.

Every claim states its **scope** (who makes the claim) and its **regime** (where this
study tests it), so a reader can tell a replication from a check outside the claim's
reach:

scope (:data:`SCOPES`)
    ``paper``: a paper's claim; ``benchmark``: a claim a benchmark (or its authors)
    makes about itself; ``project``: this project's own check (a property of its own
    data, method or code, attributed to no paper).
regime (:data:`REGIMES`)
    ``paper data``: the paper's own published numbers; ``paper regime``: our data, in
    the regime the paper states (its scales, its benchmark); ``outside``: our data,
    outside that regime (e.g. our 25k-800k-parameter models for a claim made at 1B);
    ``proxy``: a stand-in for the paper's data or quantity (a proxy table, a
    substitute metric); ``user data``: a user's own scores or samples.

A paper's (or benchmark's) claim tested ``outside`` its regime can never be
``contradicts``: a finding there says what happens *at our scale*, so its verdict reads
``differs at our scale`` (or ``holds at our scale``). One tested on a ``proxy`` reads
``untested: proxy`` whatever the proxy gives, decided or not (the proxy's verdict and
reason stay in the reason), so a proxy's verdict never flickers in the ledger. A claim of any paper or
benchmark on ``user data`` is no claim about the user's data at all:
:func:`user_data_claims` keeps only the project's own checks for such runs.

This module is pure (no package imports): :mod:`scalinglab.claims` applies
:func:`scoped_verdict` to every decided verdict and the ledger (:mod:`scalinglab.ledger`)
groups its rows and its headline counts by scope (:func:`summary_by_scope`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SCOPES = ("paper", "benchmark", "project")
REGIMES = ("paper data", "paper regime", "outside", "proxy", "user data")
#: Words for each scope, as the ledger's group headings show them.
SCOPE_TITLES = {
    "paper": "Papers' claims",
    "benchmark": "Benchmarks' claims",
    "project": "This project's own checks",
    None: "Claims without a stated scope",
}
#: Verdicts of a paper's claim tested outside its regime or on a proxy.
SCALE_VERDICTS = ("holds at our scale", "differs at our scale", "untested: proxy")


class ScopeError(ValueError):
    """A scope or regime outside the vocabulary, or a combination that makes no sense."""


def parse_regime(regime: str | None) -> str | None:
    """The regime's keyword: the text before an optional ``": detail"``
    (``"outside: our 25k-800k-parameter models"`` -> ``"outside"``)."""
    if regime is None:
        return None
    return str(regime).split(":", 1)[0].strip()


def check_scope(scope: str | None, regime: str | None, *, where: str) -> None:
    """Raise :class:`ScopeError` unless ``scope`` is in :data:`SCOPES` and ``regime``'s
    keyword in :data:`REGIMES` (both may be None: not yet stated)."""
    if scope is not None and scope not in SCOPES:
        raise ScopeError(f"{where}: scope must be one of {SCOPES}, got {scope!r}")
    kw = parse_regime(regime)
    if kw is not None and kw not in REGIMES:
        raise ScopeError(
            f"{where}: regime must start with one of {REGIMES} (optionally ': detail'), "
            f"got {regime!r}"
        )
    if scope == "project" and kw == "paper data":
        raise ScopeError(f"{where}: the project's own check cannot run on a paper's data")


def scoped_verdict(
    verdict: str, reason: str, scope: str | None, regime: str | None
) -> tuple[str, str]:
    """The verdict a claim gets given where it was tested.

    Parameters
    ----------
    verdict, reason
        The verdict the rule gives on the data, and why.
    scope, regime
        The claim's (see the module docstring).

    Returns
    -------
    (verdict, reason)
        Unchanged for the project's own checks and for tests on the paper's data or in
        its regime; ``holds at our scale`` / ``differs at our scale`` for a paper's or
        benchmark's claim tested ``outside`` its regime; ``untested: proxy`` on a proxy,
        whatever the proxy gives (its verdict kept in the reason).
    """
    kw = parse_regime(regime)
    if scope not in ("paper", "benchmark") or kw not in ("outside", "proxy"):
        return verdict, reason
    if kw == "proxy" and verdict not in SCALE_VERDICTS and not verdict.startswith("untested"):
        # whatever the proxy says (decided or not), the paper's claim is not tested by it
        said = f"; on the proxy it reads {verdict}: {reason}" if reason else ""
        return "untested: proxy", f"tested on a proxy ({regime}), so it decides nothing{said}"
    if verdict not in ("reproduces", "contradicts"):
        return verdict, reason
    new = "holds at our scale" if verdict == "reproduces" else "differs at our scale"
    return new, f"tested outside the claim's regime ({regime}): {reason}"


def user_data_claims(claims: Sequence[Any]) -> list[Any]:
    """The claims that make sense on a user's data: the project's own checks only (a
    paper's or a benchmark's claim is about its own data, never the user's).

    ``claims`` are objects with a ``scope`` attribute or mappings with a ``"scope"`` key.
    """

    def scope(c: Any) -> Any:
        return c.get("scope") if isinstance(c, Mapping) else getattr(c, "scope", None)

    return [c for c in claims if scope(c) == "project"]


def group_by_scope(
    claims: Sequence[Mapping[str, Any]],
) -> dict[str | None, list[Mapping[str, Any]]]:
    """Claims (``results.json`` dicts) grouped by scope, in :data:`SCOPES` order then
    unscoped; empty groups left out."""
    out: dict[str | None, list[Mapping[str, Any]]] = {}
    for key in (*SCOPES, None):
        rows = [c for c in claims if c.get("scope") == key]
        if rows:
            out[key] = rows
    return out


def summary_by_scope(claims: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Headline counts per scope: ``{"paper": {"reproduces": 3, ...}, ...}`` (an
    unscoped claim counts under ``"unscoped"``); verdicts in first-seen order."""
    out: dict[str, dict[str, int]] = {}
    for key, rows in group_by_scope(claims).items():
        counts: dict[str, int] = {}
        for c in rows:
            counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
        out[key or "unscoped"] = counts
    return out
