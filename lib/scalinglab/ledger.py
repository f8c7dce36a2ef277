"""The claims ledger as a reader sees it: verdicts counted and rendered.

The ledger works on claims as ``results.json`` stores them
(:meth:`scalinglab.claims.Verdict.to_json` dicts), so a report renders its ledger from
that file alone, and the rules that decide a verdict (:mod:`scalinglab.claims`) stay
apart from how it is shown. This module is pure (no global state): :func:`summary`
counts claims per verdict in :data:`VERDICTS` order; :func:`summary_text` and
:func:`summary_scoped_text` say those counts in words, the latter per scope
(:mod:`scalinglab.verdict_scope`); :func:`ledger_html` renders the ledger as an HTML
table grouped by scope, each group headed by its counts, and :func:`ledger_text` as
plain text lines.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from scalinglab import verdict_checks as vc
from scalinglab.findings_view import no_interval_reason
from scalinglab.textfmt import fmt_ci, fmt_num
from scalinglab.verdict_scope import SCALE_VERDICTS, SCOPE_TITLES, group_by_scope

#: Every verdict a claim can get (:func:`scalinglab.claims.decide`), in the order the
#: ledger counts them.
VERDICTS = (
    "reproduces",
    "contradicts",
    "inconclusive",
    vc.MC_INCONCLUSIVE,
    "not identified",
    "untested",
    *SCALE_VERDICTS,
)


def summary(claims: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Count of claims per verdict, in :data:`VERDICTS` order (zeros left out)."""
    counts = {v: 0 for v in VERDICTS}
    for c in claims:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
    return {k: n for k, n in counts.items() if n}


def summary_text(claims: Sequence[Mapping[str, Any]]) -> str:
    """E.g. ``"3 reproduce, 1 contradicts, 2 inconclusive"``; ``"no claims"`` when empty."""
    words = {"reproduces": "reproduce", "contradicts": "contradict"}
    s = summary(claims)
    if not s:
        return "no claims declared"
    return ", ".join(f"{n} {words.get(k, k) if n > 1 else k}" for k, n in s.items())


def summary_scoped_text(claims: Sequence[Mapping[str, Any]]) -> str:
    """Headline counts per scope, e.g. ``"papers' claims: 2 reproduce, 1 differs at our
    scale; this project's own checks: 3 reproduce"``."""
    groups = group_by_scope(claims)
    if list(groups) == [None]:  # no claim states a scope: the plain counts
        return summary_text(claims)
    parts = []
    for key, rows in groups.items():
        parts.append(f"{SCOPE_TITLES[key]}: {summary_text(rows)}")
    return "; ".join(parts) or "no claims declared"


def _ledger_row(c: Mapping[str, Any]) -> str:
    esc = html.escape
    cls = "sl-v-" + re.sub(r"[^a-z]+", "-", c["verdict"]).strip("-")
    ev = "<br>".join(
        f"<code>{esc(e['name'])}</code> {fmt_num(e['point'])} {fmt_ci(e.get('ci'))}"
        + (
            f" <small>(no interval: {esc(e['no_interval'])})</small>"
            if e.get("no_interval")
            else ""
        )
        for e in c.get("evidence") or []
    )
    mde = (
        ""
        if c.get("mde") is None
        else f"<br><small>minimum detectable effect {fmt_num(c['mde'])}</small>"
    )
    regime = f"<br><small>tested on: {esc(c['regime'])}</small>" if c.get("regime") else ""
    against = (
        f"<br><small>contradicted by {esc(c['contradicted_by'])}</small>"
        if c.get("contradicted_by")
        else ""
    )
    return (
        f'<tr class="{cls}"><td><b>{esc(c["id"])}</b><br>{esc(c["statement"])}</td>'
        f"<td>{esc(c['paper'])}{regime}</td>"
        f'<td class="sl-verdict">{esc(c["verdict"])}</td>'
        f"<td>{esc(c.get('rule') or '')}{against}{'<br>' if ev else ''}{ev}{mde}"
        f"<br><small>{esc(c.get('reason') or '')}</small></td></tr>"
    )


def ledger_html(
    claims: Sequence[Mapping[str, Any]], findings: Sequence[Mapping[str, Any]] = ()
) -> str:
    """The ledger as an HTML table grouped by scope (papers' claims, benchmarks' claims,
    this project's own checks), each group headed by its verdict counts: claim, source
    and regime, verdict, rule and deciding evidence.

    ``findings`` (the report's) let evidence written before it carried ``no_interval``
    still say why a deciding finding has no interval (a refused zero-width one)."""
    esc = html.escape
    if not claims:
        return '<p class="sl-noclaims">No published claims declared for this study.</p>'
    why = {str(f.get("name")): no_interval_reason(f) for f in findings}
    if any(why.values()):
        claims = [
            {
                **c,
                "evidence": [
                    e
                    if e.get("no_interval") or not why.get(e.get("name"))
                    else {**e, "no_interval": why[e["name"]]}
                    for e in c.get("evidence") or []
                ],
            }
            for c in claims
        ]
    rows = []
    for key, group in group_by_scope(claims).items():
        rows.append(
            f'<tr class="sl-scope"><th colspan="4">{esc(SCOPE_TITLES[key])}: '
            f"{esc(summary_text(group))}</th></tr>"
        )
        rows.extend(_ledger_row(c) for c in group)
    return (
        '<div class="sl-scroll"><table class="sl-ledger"><thead><tr><th>claim</th>'
        "<th>source</th><th>verdict</th><th>rule and evidence</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


def ledger_text(claims: Sequence[Mapping[str, Any]]) -> str:
    """The ledger as plain text lines: ``verdict  id  rule``."""
    from scalinglab.textfmt import format_table

    return format_table(
        ["scope", "verdict", "claim", "rule", "paper"],
        [
            [c.get("scope") or "", c["verdict"], c["id"], c.get("rule") or "", c["paper"]]
            for c in claims
        ],
    )
