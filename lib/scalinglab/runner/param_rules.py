"""Value rules of study parameters, declared at the end of each parameter's help comment.

::

    reps: int = 50_000  # bootstrap resamples [≥ 1]
    confidence: float = 0.95  # confidence level [> 0, < 1]
    method: str = "percentile"  # interval method {percentile, bca}
    scores: str = ""  # your own score files, comma-separated [file]

``[...]`` holds comma-separated bounds (``≥ x`` or ``>= x``, ``> x``, ``≤ x`` or
``<= x``, ``< x``) for ``int``/``float`` parameters, or ``file`` for ``str`` ones
(each comma-separated part of a non-empty value must be an existing file or
directory; ``""`` means "not given"); ``{a, b}`` lists the allowed values. For ``list[...]`` types the
rule applies to every item. :func:`parse_rules` reads them (a malformed rule is a
:class:`~scalinglab.errors.StudyError` naming the notebook), :func:`check_value`
checks a value with a one-line :class:`~scalinglab.errors.ParameterError`.
"""

from __future__ import annotations

import math
import operator
import re
from pathlib import Path
from typing import Any

from scalinglab.errors import ParameterError, StudyError
from scalinglab.paths import notebooks_dir

_RULE_RE = re.compile(r"\s*(\[[^\[\]]*\]|\{[^{}]*\})\s*$")
_BOUND_RE = re.compile(r"^(>=|<=|≥|≤|>|<)\s*(\S+)$")
_OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
#: ``≥``/``≤`` are ``>=``/``<=``: papermill gives up on a parameter line with more than one
#: ``=`` (``papermill --help-notebook`` and its type inference then skip it), so the
#: studies' own cells write non-strict bounds this way.
_SYNONYMS = {"≥": ">=", "≤": "<="}


def check_value(param: Any, value: Any, *, cwd: Path | None = None) -> None:
    """Raise :class:`ParameterError` (one line) if ``value`` breaks ``param``'s rule.

    Parameters
    ----------
    param
        A :class:`scalinglab.runner.parameters.Parameter` (``name``, ``bounds``,
        ``choices``, ``file``).
    value
        Already converted to the parameter's type.
    cwd
        Where relative paths were typed (default: the current directory).
    """
    items = value if isinstance(value, list) else [value]
    for item in items:
        for op, limit in param.bounds:
            if isinstance(item, float) and math.isnan(item) or not _OPS[op](item, limit):
                raise ParameterError(
                    f"{param.name!r} must be {op} {_show(limit)}, got {_show(item)}"
                )
        if param.choices is not None and str(item) not in param.choices:
            raise ParameterError(
                f"{param.name!r} must be one of {', '.join(param.choices)}; got {item!r}"
            )
        if param.file and isinstance(item, str) and item:
            for part in (p.strip() for p in item.split(",")):
                if not _exists(part, cwd):
                    raise ParameterError(f"{param.name!r}: no such file or directory: {part!r}")


def _show(x: Any) -> str:
    """A number as a user typed it (``-1.0``, never ``np.float64(-1.0)``)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return repr(x)
    return str(int(x)) if isinstance(x, int) else repr(float(x))


def _exists(part: str, cwd: Path | None) -> bool:
    """``part`` names an existing file or directory: absolute, or from ``cwd``, the
    repository root or ``notebooks/`` (where the kernel runs)."""
    if not part:
        return False
    try:
        return any(
            (base / part).exists()
            for base in (
                Path.cwd() if cwd is None else cwd,
                notebooks_dir().parent,
                notebooks_dir(),
            )
        )
    except OSError:
        return False


def parse_rules(comment: str, typ: str, name: str, path: Path | str) -> dict[str, Any]:
    """The value rules at the end of a help comment, as :class:`Parameter` fields.

    The comment itself stays the help text (so ``--list`` shows the rules).
    """
    fields: dict[str, Any] = {}
    rest = comment
    scalar = typ[5:-1] if typ.startswith("list[") else typ
    while m := _RULE_RE.search(rest):
        rule, rest = m.group(1), rest[: m.start()].rstrip()
        body = [c.strip() for c in rule[1:-1].split(",") if c.strip()]
        if rule.startswith("{"):
            fields["choices"] = tuple(c.strip("'\"") for c in body)
            continue
        for clause in body:
            if clause == "file" and scalar == "str":
                fields["file"] = True
                continue
            bound = _BOUND_RE.match(clause)
            if not bound or scalar not in ("int", "float"):
                raise StudyError(
                    f"{path}: parameter {name!r}: bad rule {rule!r} (numbers take "
                    "[≥ x], [> x, < y]; str takes [file] or {a, b})"
                )
            try:
                text = bound.group(2).replace("_", "")
                limit = int(text) if re.fullmatch(r"[+-]?\d+", text) else float(text)
            except ValueError:
                raise StudyError(f"{path}: parameter {name!r}: bad limit in {rule!r}") from None
            fields.setdefault("bounds", ())
            op = _SYNONYMS.get(bound.group(1), bound.group(1))
            fields["bounds"] += ((op, limit),)
    return fields
