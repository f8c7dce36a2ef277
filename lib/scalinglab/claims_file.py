"""Claims as data: a study's claims, in one TOML file, decided from its findings.

Each study keeps its claims in ``notebooks/claims/<study>.toml``, next to the notebook
whose findings decide them (the runner hashes it as one of the study's inputs, so an
edited rule re-decides the report); ``docs/studies/<study>.md`` shows the same file as a
table (:func:`claims_markdown`, kept in step by :func:`sync_docs`), so no statement is
typed twice. The notebook calls :func:`scalinglab.record.claims_from` once, after its
findings, with the values the file's templates name.

Layout::

    [sources]                       # short names for who claimed what
    LLM = "Brown et al. 2024 (Large Language Monkeys)"

    [[claim]]
    id = "LLM-1"                    # unique in the file; may use {fields}
    source = "LLM"                  # a key of [sources], or the citation itself
    cites = "LLM-1"                 # optional: the claim's id in docs/studies/<study>.md
    statement = "Coverage grows with k ... at every size"
    findings = ["loglinear/{sizes}/slope"]   # names; {field} from the notebook's values
    expect = "greater"              # greater | less | equal | between
    value = 0.0                     # a number, [lo, hi], or "{field}"
    tolerance = 0.0                 # for expect = "equal"
    if_missing = "reason"           # optional: untested (this reason) when a finding
                                    # was not recorded; without it, that is an error
    each = "pairs"                  # optional: one claim per element (a mapping) of
                                    # the value "pairs"; its keys fill the templates
    design = ["gpperf"]             # optional: only when the notebook passes one of these
                                    # as its value "design" (a study whose variants are
                                    # different designs; an id may then repeat across
                                    # designs, stated for each)
    untested = "reason"             # instead of findings and a rule
    scope = "paper"                 # paper | benchmark | project (scalinglab.verdict_scope)
    regime = "outside: our 25k-800k-parameter models"   # paper data | paper regime |
                                    # outside | proxy | user data, optionally ": detail"
    support = [0.0, inf]            # optional: the values the deciding findings take by
                                    # construction; a rule none of them could fail is
                                    # refused (scalinglab.verdict_checks)
    user_data = true                # optional: kept on a user's data (the notebook passes
                                    # data="user"), as this project's check, with no paper
                                    # attribution; every other claim is left out there
    detail = "..."                  # optional: how the study decides it (docs only)

Templates: ``{name}`` is replaced by the value ``name``; in ``findings``, a value that is
a list expands the name to one finding per element (``{sizes}`` with ``["s", "m"]``
gives two names, all of which must agree).
"""

from __future__ import annotations

import itertools
import re
import string
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scalinglab.claims import EXPECTS, Claim
from scalinglab.textfmt import fmt_num

#: Keys a ``[[claim]]`` table may have.
KEYS = frozenset(
    {
        "id",
        "source",
        "cites",
        "statement",
        "findings",
        "expect",
        "value",
        "tolerance",
        "if_missing",
        "each",
        "design",
        "untested",
        "scope",
        "regime",
        "support",
        "user_data",
        "detail",
    }
)
DOCS_BEGIN = "<!-- claims: {path} (generated: python -m scalinglab.claims_file {doc}) -->"
DOCS_END = "<!-- end of claims -->"


class ClaimsFileError(ValueError):
    """A claims file that cannot be read or decided, naming the file and the claim id."""


@dataclass(frozen=True)
class ClaimSpec:
    """One ``[[claim]]`` table as written (templates unfilled)."""

    path: Path
    raw: Mapping[str, Any]
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    def error(self, msg: str) -> ClaimsFileError:
        return ClaimsFileError(f"{self.path}, claim {self.id!r}: {msg}")

    @property
    def designs(self) -> list[str]:
        """The designs it applies to (``[]``: every design)."""
        d = self.raw.get("design") or []
        return [str(d)] if isinstance(d, str) else [str(x) for x in d]

    def applies(self, values: Mapping[str, Any]) -> bool:
        """Whether it belongs to the design the notebook passed as ``design``."""
        if not self.designs:
            return True
        if "design" not in values:
            raise self.error(f"it applies to design(s) {self.designs}: pass design=...")
        return str(values["design"]) in self.designs

    @property
    def paper(self) -> str:
        src = str(self.raw.get("source", ""))
        return self.sources.get(src, src)


def read_claims_file(path: Path | str) -> list[ClaimSpec]:
    """Parse and check a claims file (no values filled yet).

    Raises
    ------
    ClaimsFileError
        Not TOML, an unknown key, a missing id, source or statement, a repeated id, a
        claim with neither findings nor ``untested``, or an unknown ``expect``.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ClaimsFileError(f"{path}: no claims file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ClaimsFileError(f"{path}: not valid TOML: {exc}") from None
    sources = {str(k): str(v) for k, v in (data.get("sources") or {}).items()}
    specs: list[ClaimSpec] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for i, raw in enumerate(data.get("claim") or [], 1):
        if "id" not in raw:
            raise ClaimsFileError(f"{path}, claim #{i}: no id")
        spec = ClaimSpec(path, raw, sources)
        unknown = sorted(set(raw) - KEYS)
        if unknown:
            raise spec.error(
                f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(KEYS))}"
            )
        for key in ("source", "statement"):
            if not str(raw.get(key, "")).strip():
                raise spec.error(f"{key} is required")
        if "untested" not in raw:
            if not raw.get("findings"):
                raise spec.error("name the finding(s) that decide it, or give untested")
            if raw.get("expect") not in EXPECTS:
                raise spec.error(f"expect must be one of {EXPECTS}, got {raw.get('expect')!r}")
        ident = (spec.id, tuple(spec.designs))
        if ident in seen:
            raise spec.error("repeated id" + (" in the same design" if spec.designs else ""))
        seen.add(ident)
        specs.append(spec)
    if not specs:
        raise ClaimsFileError(f"{path}: no [[claim]] tables")
    return specs


def _fields(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


def _fill(spec: ClaimSpec, template: str, values: Mapping[str, Any]) -> str:
    try:
        return template.format_map(dict(values))
    except (KeyError, IndexError) as exc:
        raise spec.error(
            f"the template {template!r} names {exc}, which the notebook did not pass "
            f"(passed: {', '.join(sorted(values)) or 'nothing'})"
        ) from None


def _names(spec: ClaimSpec, template: str, values: Mapping[str, Any]) -> list[str]:
    """Finding names from one template; list values expand (a product over lists)."""
    fields = _fields(template)
    missing = [f for f in fields if f not in values]
    if missing:
        _fill(spec, template, values)  # raises, naming the field
    lists = [f for f in fields if isinstance(values[f], list | tuple)]
    out = []
    for combo in itertools.product(*(values[f] for f in lists)):
        out.append(_fill(spec, template, {**values, **dict(zip(lists, combo, strict=True))}))
    return out


def _value(spec: ClaimSpec, v: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(v, str):
        try:
            return float(_fill(spec, v, values))
        except ValueError:
            raise spec.error(f"value {v!r} is not a number once filled") from None
    if isinstance(v, list):
        return tuple(_value(spec, x, values) for x in v)
    return v


def expand(spec: ClaimSpec, values: Mapping[str, Any], recorded: Mapping[str, Any]) -> list[Claim]:
    """The claim(s) of one spec with ``values`` filled in, checked against ``recorded``.

    Raises
    ------
    ClaimsFileError
        A template names a value not passed, or a deciding finding was not recorded
        and the claim gives no ``if_missing`` reason.
    """
    raw = spec.raw
    if "each" in raw:
        items = values.get(str(raw["each"]))
        if not isinstance(items, list | tuple):
            raise spec.error(f"each = {raw['each']!r} needs a list value of that name")
        rounds = [{**values, **dict(item)} for item in items]
    else:
        rounds = [dict(values)]
    out = []
    for vals in rounds:
        cid = _fill(spec, spec.id, vals)
        common: dict[str, Any] = {
            "id": cid,
            "paper": spec.paper,
            "statement": _fill(spec, str(raw["statement"]), vals),
            # scope and regime may be templates ("{regime}"): a variant's data decide them
            "scope": _fill(spec, str(raw["scope"]), vals) if raw.get("scope") else None,
            "regime": _fill(spec, str(raw["regime"]), vals) if raw.get("regime") else None,
        }
        if "each" in raw:  # one claim per pair or size: Holm over them (claims.decide_all)
            common["family"] = spec.id
        if common["scope"] == "project":  # this project's check: the paper lent a method
            own = spec.paper.startswith("this project")
            common["paper"] = "this project's check" + ("" if own else f" (after {spec.paper})")
        if on_user_data(values):
            common.update(paper=USER_DATA_SOURCE, scope="project", regime="user data")
        if "untested" in raw:
            out.append(Claim(**common, untested=_fill(spec, str(raw["untested"]), vals)))
            continue
        templates = raw["findings"]
        templates = [templates] if isinstance(templates, str) else list(templates)
        names = [n for t in templates for n in _names(spec, str(t), vals)]
        missing = [n for n in names if n not in recorded]
        if missing:
            if "if_missing" in raw:
                # untested, but its rule is stated: the ledger shows what would decide it
                rule = {"expect": raw["expect"], "tolerance": float(raw.get("tolerance", 0.0))}
                try:
                    rule["value"] = _value(spec, raw.get("value"), vals)
                except ClaimsFileError:
                    rule = {}
                out.append(
                    Claim(
                        **common,
                        untested=_fill(spec, str(raw["if_missing"]), vals),
                        findings=tuple(names),
                        **rule,
                    )
                )
                continue
            raise ClaimsFileError(
                f"{spec.path}, claim {cid!r}: decided by finding(s) never recorded: "
                f"{', '.join(missing)} (record them first, or give if_missing)"
            )
        try:
            out.append(
                Claim(
                    **common,
                    findings=tuple(names),
                    expect=raw["expect"],
                    value=_value(spec, raw.get("value"), vals),
                    tolerance=float(raw.get("tolerance", 0.0)),
                    support=_support(spec, raw.get("support")),
                )
            )
        except (TypeError, ValueError) as exc:
            raise spec.error(str(exc)) from None
    return out


def _support(spec: ClaimSpec, v: Any) -> tuple[float, float] | None:
    if v is None:
        return None
    if not (isinstance(v, list) and len(v) == 2):
        raise spec.error(f"support must be [lo, hi] (inf allowed), got {v!r}")
    try:
        return float(v[0]), float(v[1])
    except (TypeError, ValueError):
        raise spec.error(f"support must be two numbers, got {v!r}") from None


def on_user_data(values: Mapping[str, Any]) -> bool:
    """Whether the notebook runs on a user's own data (it passes ``data="user"``)."""
    return str(values.get("data", "")) == "user"


#: The source a claim kept on user data shows (never a paper's name).
USER_DATA_SOURCE = "this project's check on your data"


def claims_for(
    path: Path | str, values: Mapping[str, Any], recorded: Mapping[str, Any]
) -> list[Claim]:
    """Every claim of a claims file, filled with ``values``, in file order.

    On a user's data (``data="user"``) only the claims marked ``user_data = true`` are
    kept, as this project's checks (no paper attribution, regime ``user data``).
    """
    specs = [s for s in read_claims_file(path) if s.applies(values)]
    if on_user_data(values):
        specs = [s for s in specs if s.raw.get("user_data") is True]
    return [c for spec in specs for c in expand(spec, values, recorded)]


def study_claims_path(study: str | Path) -> Path:
    """Where a study's claims live: ``notebooks/claims/<study>.toml`` for a study's name,
    ``study`` itself for a path (a :class:`~pathlib.Path` or a name ending ``.toml``)."""
    if isinstance(study, Path) or str(study).endswith(".toml"):
        return Path(study)
    from scalinglab.paths import notebooks_dir

    return notebooks_dir() / "claims" / f"{study}.toml"


def claim_value(study: str | Path, claim_id: str, *, design: str | None = None) -> float:
    """The number a claim states as its ``value`` (its threshold), read from the claims file,
    so code that needs a claim's threshold reads the ledger's number rather than a copy.

    Parameters
    ----------
    study
        A study's name (its file is ``notebooks/claims/<study>.toml``) or a claims file.
    claim_id
        The claim's ``id`` as written in the file (templates unfilled).
    design
        For an id stated once per design: the design whose claim to read.

    Raises
    ------
    ClaimsFileError
        No claim ``claim_id`` in the file (naming the file, the id and the ids there are),
        an id stated for several designs and no ``design`` to tell them apart, or a claim
        whose ``value`` is absent or not one number (naming the file and the id).
    """
    path = study_claims_path(study)
    specs = read_claims_file(path)
    hits = [s for s in specs if s.id == claim_id]
    if design is not None:
        hits = [s for s in hits if not s.designs or str(design) in s.designs]
    if not hits:
        known = ", ".join(dict.fromkeys(s.id for s in specs))
        raise ClaimsFileError(f"{path}: no claim {claim_id!r} (claims there: {known})")
    if len(hits) > 1:
        designs = sorted({d for s in hits for d in s.designs})
        raise ClaimsFileError(
            f"{path}, claim {claim_id!r}: stated for several designs ({', '.join(designs)}); "
            "pass design=..."
        )
    spec = hits[0]
    if "value" not in spec.raw:
        raise spec.error("has no 'value' to read")
    v = spec.raw["value"]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise spec.error(f"its value {v!r} is not one number")
    return float(v)


def _rule(raw: Mapping[str, Any]) -> str:
    if "untested" in raw:
        return f"untested: {raw['untested']}"
    v = raw.get("value")
    shown = (
        "[" + ", ".join(map(str, v)) + "]"
        if isinstance(v, list)
        else (v if isinstance(v, str) else fmt_num(v))
    )
    return {
        "greater": f"> {shown}",
        "less": f"< {shown}",
        "equal": f"within {fmt_num(raw.get('tolerance', 0.0))} of {shown}",
        "between": f"in {shown}",
    }[raw["expect"]]


def _scope(raw: Mapping[str, Any]) -> str:
    parts = [str(raw[k]) for k in ("scope", "regime") if raw.get(k)]
    if raw.get("support") is not None:
        lo, hi = raw["support"]
        parts.append(f"takes values in [{fmt_num(lo)}, {fmt_num(hi)}]")
    if raw.get("user_data") is True:
        parts.append("kept on user data")
    return "; ".join(parts) or "—"


def _cell(text: Any) -> str:
    return re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip()


def claims_markdown(path: Path | str) -> str:
    """The claims file as a markdown table: id, source, statement, decided by, rule."""
    specs = read_claims_file(path)
    rows = [
        "| claim | source | statement | decided by | rule | scope, regime |",
        "|---|---|---|---|---|---|",
    ]
    for s in specs:
        raw = s.raw
        ident = s.id + (f" ({raw['cites']})" if raw.get("cites") else "")
        if raw.get("each"):
            ident += f", one per `{raw['each']}`"
        if s.designs:
            ident += f" [{', '.join(s.designs)}]"
        found = raw.get("findings") or []
        found = [found] if isinstance(found, str) else found
        by = ", ".join(f"`{f}`" for f in found) or "—"
        stmt = str(raw["statement"]).strip()
        extra = ""
        if raw.get("detail"):
            extra = ("" if stmt.endswith((".", "?", "!")) else ".") + f" {raw['detail']}"
        rows.append(
            f"| **{_cell(ident)}** | {_cell(s.paper)} | {_cell(stmt + extra)} "
            f"| {by} | {_cell(_rule(raw))} | {_cell(_scope(raw))} |"
        )
    return "\n".join(rows)


def docs_block(claims_path: str, doc_path: str, root: Path) -> str:
    """The generated block (markers included) that ``doc_path`` shows for ``claims_path``."""
    head = DOCS_BEGIN.format(path=claims_path, doc=doc_path)
    return f"{head}\n\n{claims_markdown(root / claims_path)}\n\n{DOCS_END}"


_BLOCK = re.compile(r"<!-- claims: (\S+) \(generated: [^)]*\) -->.*?<!-- end of claims -->", re.S)


def sync_docs(doc: Path, root: Path, *, write: bool = False) -> bool:
    """Whether ``doc``'s generated claims block matches its claims file (rewrite it if
    ``write``). A doc without a block is in step."""
    text = doc.read_text()
    rel = doc.resolve().relative_to(root.resolve()).as_posix()
    new = _BLOCK.sub(lambda m: docs_block(m.group(1), rel, root), text)
    if write and new != text:
        doc.write_text(new)
    return new == text


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scalinglab.claims_file DOC.md ...``: regenerate the docs' claims tables."""
    import sys

    from scalinglab.paths import repo_root

    docs = list(sys.argv[1:] if argv is None else argv)
    for d in docs:
        changed = not sync_docs(Path(d), repo_root(), write=True)
        print(f"{d}: {'rewritten' if changed else 'in step'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
