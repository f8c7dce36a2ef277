"""Claims: which published claims a study tests, and the verdict its findings give.

A study's claims live in its claims file (:mod:`scalinglab.claims_file`), declared by
:func:`scalinglab.record.claims_from` (or one by one with
:func:`scalinglab.record.claim`); this module
holds the pure logic (no global state): the :class:`Claim` as declared and the
rules that turn recorded findings into a :class:`Verdict` (the ledger counts and
renders the verdicts: :mod:`scalinglab.ledger`). The verdict is computed, never typed:

``reproduces``
    every deciding finding's interval lies entirely on the claim's side
    (``greater``: ``lo > value``; ``less``: ``hi < value``; ``equal``/``between``:
    the interval lies inside the claimed region, bounds included).
``contradicts``
    some deciding finding's interval excludes the claim
    (``greater``: ``hi <= value``; ``less``: ``lo >= value``; ``equal``/``between``:
    the interval and the region do not overlap).
``inconclusive``
    neither: an interval admits both. The ledger states the minimum detectable
    effect at this sample size, ``(z_{1-a/2} + z_{0.8}) * se`` with
    ``se = half-width / z_{1-a/2}`` (80% power, two-sided level ``1 - a``).
``not identified``
    a deciding finding was recorded ``identified=False`` (its parameter sits on a
    bound or cannot be told apart from it), or it is *saturated*: a bounded quantity
    whose room left to its bound (``room``) is smaller than the claim's minimum
    meaningful effect (:func:`scalinglab.verdict_checks.saturation`).
``untested``
    the claim is declared with ``untested="reason"``.

With several deciding findings the claim must hold for all of them: all
``reproduces`` reproduce it; one ``contradicts`` contradicts it only if it still
excludes the claim after Holm's correction over the claim's findings, and then whatever
the other findings read (a size that is not identified does not rescue a size that
excludes the claim); else one ``not identified`` leaves it not identified; anything
else is ``inconclusive``.

Before a verdict is signed (:mod:`scalinglab.verdict_checks`, :mod:`scalinglab.verdict_scope`):

- a rule that no value of its finding's declared ``support`` could fail is refused
  (:class:`~scalinglab.verdict_checks.UnfalsifiableRule`);
- a deciding bound within two Monte Carlo standard errors of its threshold gives
  ``inconclusive (Monte Carlo)``, and so does an undecided one whose bound lies that close
  to a threshold it would decide by (the verdict is then the same under any seed);
- a decided verdict says its interval's coverage where that is below 0.93 at the
  finding's ``n`` ("its interval's simulated coverage is 0.92 at n = 3") or not measured (method not
  registered, ``n`` not recorded): :func:`scalinglab.stats.coverage_report.coverage_note`;
- a paper's or benchmark's claim tested outside its regime reads ``holds at our scale``
  / ``differs at our scale``, on a proxy ``untested: proxy`` (never ``contradicts``);
  the ledger groups claims and counts verdicts by scope (:mod:`scalinglab.ledger`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy.stats import norm

from scalinglab import verdict_checks as vc
from scalinglab.findings_view import no_interval_reason
from scalinglab.ledger import ledger_html
from scalinglab.stats.coverage_report import coverage_note
from scalinglab.textfmt import fmt_ci, fmt_num
from scalinglab.verdict_scope import check_scope, scoped_verdict

EXPECTS = ("greater", "less", "equal", "between")
#: Power at which the minimum detectable effect of an inconclusive claim is stated.
MDE_POWER = 0.8


@dataclass(frozen=True)
class Claim:
    """A published claim as declared in a notebook (see :func:`scalinglab.record.claim`)."""

    id: str
    paper: str
    statement: str
    findings: tuple[str, ...] = ()
    expect: str | None = None
    value: float | tuple[float, float] | None = None
    tolerance: float = 0.0
    untested: str | None = None
    #: Whose claim it is and the regime it is tested in (:mod:`scalinglab.verdict_scope`).
    scope: str | None = None
    regime: str | None = None
    #: ``(lo, hi)``: the values the deciding findings take by construction; a rule no
    #: value there could fail is refused (:func:`scalinglab.verdict_checks.check_falsifiable`).
    support: tuple[float, float] | None = None
    #: Claims of one family (one per pair or size of the same statement) are decided,
    #: either way, only after Holm's correction over the family (:func:`decide_all`).
    family: str | None = None

    def __post_init__(self) -> None:
        where = f"claim({self.id!r})"
        if not isinstance(self.id, str) or not self.id:
            raise TypeError("claim(): id must be a non-empty string")
        if not self.paper or not self.statement:
            raise ValueError(f"{where}: paper and statement are required")
        check_scope(self.scope, self.regime, where=where)
        if self.untested is not None:
            if not str(self.untested).strip():
                raise ValueError(f"{where}: untested needs its reason")
            return
        if not self.findings:
            raise ValueError(f"{where}: name the finding(s) that decide it, or pass untested=")
        if self.expect not in EXPECTS:
            raise ValueError(f"{where}: expect must be one of {EXPECTS}, got {self.expect!r}")
        if self.expect == "between":
            if not (isinstance(self.value, Sequence) and len(self.value) == 2):
                raise ValueError(f"{where}: expect='between' needs value=(lo, hi)")
            a, b = (float(v) for v in self.value)
            if not a <= b:
                raise ValueError(f"{where}: value (lo, hi) has lo > hi: {self.value!r}")
        else:
            try:
                float(self.value)  # type: ignore[arg-type]
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{where}: value must be a number, got {self.value!r}") from exc
        if not (self.tolerance >= 0):
            raise ValueError(f"{where}: tolerance must be >= 0, got {self.tolerance!r}")
        if self.support is not None:
            self.check_support(self.support, where=where)

    def check_support(self, support: Sequence[float], *, where: str | None = None) -> None:
        """Raise :class:`~scalinglab.verdict_checks.UnfalsifiableRule` when no value in
        ``support`` (``(lo, hi)``) could fail the rule."""
        if self.untested is not None:
            return
        vc.check_falsifiable(
            where=where or f"claim({self.id!r})",
            rule=self.rule,
            expect=str(self.expect),
            region=self.region(),
            support=support,
        )

    @property
    def contradicted_by(self) -> str:
        """The effect that would contradict the claim, in words."""
        if self.untested is not None:
            return ""
        a, b = self.region()
        if self.expect == "greater":
            return f"an interval at or below {fmt_num(a)}"
        if self.expect == "less":
            return f"an interval at or above {fmt_num(b)}"
        return f"an interval entirely outside [{fmt_num(a)}, {fmt_num(b)}]"

    @property
    def rule(self) -> str:
        """The deciding rule in words, e.g. ``"effect > 1"`` or ``"|effect - 0| <= 0.02"``;
        an untested claim whose rule is stated (a claims file's ``if_missing``) says the
        rule it would be decided by: ``"untested; would be decided by effect > 0"``."""
        if self.untested is not None:
            if self.expect in EXPECTS and self.value is not None:
                return f"untested; would be decided by {self._rule()}"
            return "untested"
        return self._rule()

    def _rule(self) -> str:
        if self.expect == "greater":
            return f"effect > {fmt_num(self.value)}"
        if self.expect == "less":
            return f"effect < {fmt_num(self.value)}"
        if self.expect == "equal":
            return f"|effect - {fmt_num(self.value)}| <= {fmt_num(self.tolerance)}"
        lo, hi = self.value  # type: ignore[misc]
        return f"{fmt_num(lo)} <= effect <= {fmt_num(hi)}"

    def region(self) -> tuple[float, float]:
        """The claimed values of the effect as a closed or open interval ``(lo, hi)``."""
        if self.expect == "greater":
            return float(self.value), math.inf  # type: ignore[arg-type]
        if self.expect == "less":
            return -math.inf, float(self.value)  # type: ignore[arg-type]
        if self.expect == "equal":
            v = float(self.value)  # type: ignore[arg-type]
            return v - self.tolerance, v + self.tolerance
        lo, hi = self.value  # type: ignore[misc]
        return float(lo), float(hi)


@dataclass(frozen=True)
class Verdict:
    """A claim with its computed verdict.

    Attributes
    ----------
    verdict
        One of :data:`scalinglab.ledger.VERDICTS`.
    reason
        Why, in words (the deciding interval, the bound, or the untested reason).
    evidence
        One ``{"name", "point", "ci", "level", "verdict"}`` per deciding finding.
    mde
        Minimum detectable effect (distance from the claim's boundary detectable
        with 80% power at this sample size), for ``inconclusive`` only.
    """

    claim: Claim
    verdict: str
    reason: str
    evidence: tuple[dict, ...] = ()
    mde: float | None = None

    def to_json(self) -> dict:
        c = self.claim
        value = list(c.value) if isinstance(c.value, tuple | list) else c.value
        return {
            "id": c.id,
            "paper": c.paper,
            "statement": c.statement,
            "findings": list(c.findings),
            "expect": c.expect,
            "value": value,
            "tolerance": c.tolerance,
            "rule": c.rule,
            "untested": c.untested,
            "scope": c.scope,
            "regime": c.regime,
            "support": None if c.support is None else list(c.support),
            "contradicted_by": c.contradicted_by,
            "verdict": self.verdict,
            "reason": self.reason,
            "evidence": [dict(e) for e in self.evidence],
            "mde": self.mde,
        }

    def _repr_html_(self) -> str:
        return ledger_html([self.to_json()])

    def __repr__(self) -> str:
        return f"<{self.claim.id}: {self.verdict} ({self.reason})>"


def minimum_detectable_effect(
    ci: Sequence[float], level: float, *, power: float = MDE_POWER
) -> float:
    """``(z_{1-a/2} + z_power) * se`` with ``se`` from the interval's half-width.

    Parameters
    ----------
    ci
        ``(lo, hi)`` at two-sided confidence ``level``.
    """
    z = float(norm.ppf(0.5 + level / 2))
    se = (float(ci[1]) - float(ci[0])) / 2 / z
    return (z + float(norm.ppf(power))) * se


def _one(claim: Claim, f: Mapping[str, Any]) -> tuple[str, str]:
    """Verdict and reason for one deciding finding (a ``results.json`` finding dict)."""
    name = f["name"]
    if f.get("support") is not None:
        s_lo, s_hi = f["support"]  # null in JSON: unbounded on that side
        support = (
            -math.inf if s_lo is None else float(s_lo),
            math.inf if s_hi is None else float(s_hi),
        )
        claim.check_support(support, where=f"claim({claim.id!r}) on {name}")
    if not f.get("identified", True):
        note = f.get("note") or "on a bound or unidentifiable"
        return "not identified", f"{name} is not identified: {note}"
    sat = vc.saturation(str(claim.expect), claim.region(), f.get("room"))
    if sat:
        return "not identified", (
            f"{name} = {fmt_num(f['point'])} is not identified ({sat}): its bound leaves "
            "less room than the smallest effect the claim calls meaningful, so it cannot "
            "test the claim"
        )
    ci = f.get("ci")
    if not ci or any(c is None or math.isnan(float(c)) for c in ci):
        why = no_interval_reason(f)
        why = f" ({why})" if why else ""
        return "inconclusive", f"{name} has no interval{why}, so it cannot decide the claim"
    lo, hi = float(ci[0]), float(ci[1])
    a, b = claim.region()
    shown = f"{name} = {fmt_num(f['point'])} {fmt_ci(ci)}"
    inside, outside = vc.sides(str(claim.expect), (a, b), lo, hi)
    if inside or outside:
        v = "reproduces" if inside else "contradicts"
        near = vc.mc_guard(str(claim.expect), (a, b), (lo, hi), f.get("mc_se"), v)
        if near:
            return vc.MC_INCONCLUSIVE, f"{shown} would {v[:-1]}, but {near}"
    cov = coverage_note(f)
    said = f" ({cov})" if cov else ""
    if inside:
        return "reproduces", f"{shown} lies within {claim.rule}{said}"
    if outside:
        return "contradicts", f"{shown} excludes {claim.rule}{said}"
    near = vc.mc_guard(str(claim.expect), (a, b), (lo, hi), f.get("mc_se"), "inconclusive")
    if near:
        return vc.MC_INCONCLUSIVE, f"{shown} admits both sides of {claim.rule}, but {near}"
    return "inconclusive", f"{shown} admits both sides of {claim.rule}"


def _holm(claim: Claim, rows: list[list[Any]]) -> None:
    """Downgrade (in place) the ``contradicts`` rows of a claim with several findings
    that no longer exclude it after Holm's correction over all of them."""
    if len(rows) < 2 or not any(r[0] == "contradicts" for r in rows):
        return
    level = min(float(r[2].get("level") or 0.95) for r in rows)
    pvals = [
        vc.contradiction_p(
            str(claim.expect),
            claim.region(),
            float(r[2]["point"]),
            r[2]["ci"],
            level,
            df=r[2].get("df"),
        )
        if r[0] == "contradicts"
        else 1.0
        for r in rows
    ]
    reject, adjusted = vc.holm_contradictions(pvals, alpha=1 - level)
    for r, rej, padj in zip(rows, reject, adjusted, strict=True):
        if r[0] == "contradicts" and not rej:
            r[0] = "inconclusive"
            r[1] += (
                f", but not after Holm's correction over {len(rows)} findings "
                f"(adjusted p = {padj:.2g} > {1 - level:.2g})"
            )
        elif r[0] == "contradicts":
            r[1] += f" (Holm-adjusted p = {padj:.2g} over {len(rows)} findings)"


def _seed_could_decide(claim: Claim, rows: list[list[Any]], before_holm: list[str]) -> bool:
    """Whether another resampling seed could decide an undecided claim: every finding can
    reach "reproduces" with its ends moved within their Monte Carlo error, or some
    finding's contradiction, its end pushed out by that much, survives Holm's correction
    over the claim's findings (:func:`scalinglab.verdict_checks.reachable`,
    :func:`~scalinglab.verdict_checks.shrunk`). A finding without Monte Carlo errors
    reaches only the verdict it has."""
    expect, region = str(claim.expect), claim.region()
    reach = []
    for (_, _, f), first in zip(rows, before_holm, strict=True):
        ci = f.get("ci")
        if ci and f.get("mc_se") and not any(c is None or math.isnan(float(c)) for c in ci):
            reach.append(vc.reachable(expect, region, ci, f["mc_se"]))
        else:
            reach.append({first} & {"reproduces", "contradicts"})
    if all("reproduces" in r for r in reach):
        return True
    level = min(float(f.get("level") or 0.95) for _, _, f in rows)
    now = [
        vc.contradiction_p(expect, region, float(f["point"]), f["ci"], level, df=f.get("df"))
        if first == "contradicts"
        else 1.0
        for (_, _, f), first in zip(rows, before_holm, strict=True)
    ]
    for j, (r, (_, _, f)) in enumerate(zip(reach, rows, strict=True)):
        if "contradicts" not in r:
            continue
        p = list(now)
        p[j] = vc.contradiction_p(
            expect,
            region,
            float(f["point"]),
            vc.shrunk(f["ci"], f.get("mc_se")),
            level,
            df=f.get("df"),
        )
        if vc.holm_contradictions(p, alpha=1 - level)[0][j]:
            return True
    return False


def decide(claim: Claim, findings: Mapping[str, Mapping[str, Any]]) -> Verdict:
    """Compute a claim's verdict from recorded findings.

    Parameters
    ----------
    claim
        The declared claim.
    findings
        Finding name -> finding dict (as in ``results.json``).

    Raises
    ------
    KeyError
        A deciding finding was never recorded.
    scalinglab.verdict_checks.UnfalsifiableRule
        A deciding finding declares a ``support`` in which the rule cannot fail.
    """
    v = _decide(claim, findings)
    verdict, reason = scoped_verdict(v.verdict, v.reason, claim.scope, claim.regime)
    # the evidence rows are scoped too, also when the claim's own verdict is not (a claim
    # "not identified" on one size must not show another size's row as "contradicts")
    evidence = tuple(
        {**e, "verdict": scoped_verdict(e["verdict"], "", claim.scope, claim.regime)[0]}
        for e in v.evidence
    )
    return Verdict(claim, verdict, reason, evidence, v.mde)


def decide_all(claims: Sequence[Claim], findings: Mapping[str, Mapping[str, Any]]) -> list[Verdict]:
    """Decide every claim; within a family (claims with the same ``family``, e.g. one per
    leaderboard pair or one per size), each decided claim (``contradicts`` or
    ``reproduces``) stands only if its p-value
    (:func:`~scalinglab.verdict_checks.contradiction_p` or
    :func:`~scalinglab.verdict_checks.support_p`) survives Holm's correction over the
    family's tested claims (a member not identified or untested makes no test and is left
    out), one correction per direction; otherwise it reads ``inconclusive``.
    Each p-value is two-sided, so each direction's false decisions are held to
    ``(1 - level) / 2`` and both together to ``1 - level``. (One correction over both
    directions would not do: a claim's two hypotheses are complementary, so rejecting
    one leaves the other true, and Holm's step-down would wrongly shrink the multiplier.)
    Claims decided by several findings are corrected within themselves (:func:`decide`)
    and left out here."""
    verdicts = [decide(c, findings) for c in claims]
    families: dict[str, list[int]] = {}
    for i, c in enumerate(claims):
        if c.family and c.untested is None and len(c.findings) == 1:
            families.setdefault(c.family, []).append(i)
    decided = ("contradicts", "reproduces")
    for members in families.values():
        raw = {i: _decide(claims[i], findings) for i in members}
        # the family is the claims actually tested: one whose finding is not identified
        # (or that is untested) makes no test, so it can make no false decision
        idx = [i for i in members if not raw[i].verdict.startswith(("not identified", "untested"))]
        if len(idx) < 2 or not any(raw[i].verdict in decided for i in idx):
            continue
        level = min(float(findings[claims[i].findings[0]].get("level") or 0.95) for i in idx)
        for direction, p_of in (("contradicts", vc.contradiction_p), ("reproduces", vc.support_p)):
            pvals = [
                p_of(
                    str(claims[i].expect),
                    claims[i].region(),
                    float(findings[claims[i].findings[0]]["point"]),
                    findings[claims[i].findings[0]]["ci"],
                    level,
                    df=findings[claims[i].findings[0]].get("df"),
                )
                if raw[i].verdict == direction
                else 1.0
                for i in idx
            ]
            if min(pvals) >= 1.0:
                continue
            reject, adjusted = vc.holm_contradictions(pvals, alpha=1 - level)
            for i, rej, padj in zip(idx, reject, adjusted, strict=True):
                if raw[i].verdict != direction:
                    continue
                tested = f"tested claims of {re.sub(r'[{][^}]*[}]', '*', str(claims[i].family))}"
                note = f" (Holm-adjusted p = {padj:.2g} over the {len(idx)} {tested})"
                if rej:
                    v = verdicts[i]
                    verdicts[i] = Verdict(v.claim, v.verdict, v.reason + note, v.evidence, v.mde)
                else:
                    r = raw[i]
                    reason = (
                        f"{r.reason}, but not after Holm's correction{note}: "
                        f"the adjusted p exceeds {1 - level:.2g}"
                    )
                    ev = tuple({**e, "verdict": "inconclusive"} for e in r.evidence)
                    verdicts[i] = Verdict(r.claim, "inconclusive", reason, ev)
    return verdicts


def _decide(claim: Claim, findings: Mapping[str, Mapping[str, Any]]) -> Verdict:
    if claim.untested is not None:
        return Verdict(claim, "untested", str(claim.untested))
    missing = [n for n in claim.findings if n not in findings]
    if missing:
        raise KeyError(
            f"claim({claim.id!r}) names finding(s) never recorded: "
            f"{', '.join(missing)} (record them before declaring the claim)"
        )
    rows: list[list[Any]] = []
    for name in claim.findings:
        f = findings[name]
        v, why = _one(claim, f)
        rows.append([v, why, f])
    before_holm = [r[0] for r in rows]
    _holm(claim, rows)
    evidence = [
        {
            "name": f["name"],
            "point": f.get("point"),
            "ci": f.get("ci"),
            "level": f.get("level"),
            "unit": f.get("unit"),
            "mc_se": f.get("mc_se"),
            "verdict": v,
        }
        | ({"room": f["room"]} if f.get("room") is not None else {})
        | ({"no_interval": no_interval_reason(f)} if no_interval_reason(f) else {})
        for v, _, f in rows
    ]
    kinds = [v for v, _, _ in rows]
    # a claim must hold for every deciding finding, so one that excludes it (after Holm)
    # decides it whatever the others are; otherwise an unidentified one leaves it open
    for want in ("contradicts", "not identified"):
        if want in kinds:
            return Verdict(
                claim, want, "; ".join(w for v, w, _ in rows if v == want), tuple(evidence)
            )
    if all(k == "reproduces" for k in kinds):
        return Verdict(claim, "reproduces", "; ".join(w for _, w, _ in rows), tuple(evidence))
    if vc.MC_INCONCLUSIVE in kinds and _seed_could_decide(claim, rows, before_holm):
        return Verdict(
            claim,
            vc.MC_INCONCLUSIVE,
            "; ".join(w for v, w, _ in rows if v == vc.MC_INCONCLUSIVE),
            tuple(evidence),
        )
    mdes = [
        minimum_detectable_effect(f["ci"], float(f.get("level") or 0.95))
        for v, _, f in rows
        if v == "inconclusive"
        and f.get("ci")
        and not any(c is None or math.isnan(float(c)) for c in f["ci"])
    ]
    mde = max(mdes) if mdes else None
    reason = "; ".join(w for v, w, _ in rows if v in ("inconclusive", vc.MC_INCONCLUSIVE))
    if mde is not None:
        reason += (
            f"; at this sample size only an effect {fmt_num(mde)} or more beyond the "
            f"claim's boundary would be detected (80% power)"
        )
    return Verdict(claim, "inconclusive", reason, tuple(evidence), mde)
