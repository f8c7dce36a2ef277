"""A study's ``parameters`` cell: typed literals with help and value rules.

The first code cell of a study notebook is tagged ``parameters`` and holds annotated
literals whose help comment may end in a value rule
(:mod:`scalinglab.runner.param_rules`)::

    reps: int = 50_000  # bootstrap resamples [>= 1]

It is read with :mod:`ast` and :mod:`tokenize`, never executed, so bad names, types
and values are rejected before any kernel starts (papermill only warns about unknown
names and never checks types). Hand-written because no library parses typed papermill
parameter cells; papermill's own inference drops the types. :func:`coerce` turns a
command-line string into the declared type.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalinglab.errors import ParameterError, StudyError
from scalinglab.runner.param_rules import check_value, parse_rules

#: Annotations a parameter may have.
SUPPORTED_TYPES = ("int", "float", "str", "bool", "list[int]", "list[float]", "list[str]")
#: Parameters every study must declare, with their types.
REQUIRED = {"seed": "int", "compute_class": "str", "scheduler": "str"}

#: A valid parameter or variant name.
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TRUE = {"true", "1", "yes", "y", "on"}
_FALSE = {"false", "0", "no", "n", "off"}


@dataclass(frozen=True)
class Parameter:
    """One declared parameter: ``name: type = default  # help [rule]``.

    ``bounds``: ``((op, limit), ...)`` with op in ``>=, >, <=, <``; ``choices``:
    allowed values (None: any); ``file``: every comma-separated part of a
    non-empty value must be an existing file or directory (user data).
    """

    name: str
    type: str
    default: Any
    help: str = ""
    bounds: tuple[tuple[str, int | float], ...] = ()
    choices: tuple[str, ...] | None = None
    file: bool = False

    def describe(self) -> str:
        """One line: ``name: type = default  # help``."""
        line = f"{self.name}: {self.type} = {self.default!r}"
        return f"{line}  # {self.help}" if self.help else line

    def check(self, value: Any, *, cwd: Path | None = None) -> None:
        """Raise :class:`ParameterError` (one line) if ``value`` breaks the declared rule."""
        check_value(self, value, cwd=cwd)


def parse_parameters_cell(nb: Any, *, path: Path | str = "<notebook>") -> dict[str, Parameter]:
    """Parse the notebook's ``parameters`` cell into :class:`Parameter` objects.

    The cell must be the first code cell, the only one tagged ``parameters``,
    and hold only ``name: type = literal`` statements.
    """
    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [c for c in code if "parameters" in (c.metadata.get("tags") or [])]
    if len(tagged) != 1:
        raise StudyError(
            f"{path}: needs exactly one code cell tagged 'parameters' "
            f'(# %% tags=["parameters"]), found {len(tagged)}'
        )
    if code[0] is not tagged[0]:
        raise StudyError(f"{path}: the 'parameters' cell must be the first code cell")
    params = parse_parameters_source(tagged[0].source, path=path)
    for req, typ in REQUIRED.items():
        if req not in params:
            raise StudyError(f"{path}: the parameters cell must declare '{req}: {typ}'")
        if params[req].type != typ:
            raise StudyError(f"{path}: parameter {req!r} must be {typ}, not {params[req].type}")
    return params


def parse_parameters_source(source: str, *, path: Path | str = "<cell>") -> dict[str, Parameter]:
    """Parse ``name: type = literal  # help`` lines (no execution)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise StudyError(f"{path}: parameters cell: {exc}") from exc
    comments = _line_comments(source)
    params: dict[str, Parameter] = {}
    for node in tree.body:
        if not (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.value is not None
        ):
            raise StudyError(
                f"{path}: parameters cell line {node.lineno}: only 'name: type = literal' "
                "statements are allowed"
            )
        name = node.target.id
        typ = ast.unparse(node.annotation).replace(" ", "")
        if typ not in SUPPORTED_TYPES:
            raise StudyError(
                f"{path}: parameter {name!r} has type {typ!r}; supported: "
                + ", ".join(SUPPORTED_TYPES)
            )
        try:
            value = ast.literal_eval(node.value)
        except ValueError as exc:
            raise StudyError(f"{path}: parameter {name!r}: default must be a literal") from exc
        try:
            value = check_type(name, typ, value)
        except ParameterError as exc:
            raise StudyError(f"{path}: default of {exc}") from exc
        if name in params:
            raise StudyError(f"{path}: parameter {name!r} declared twice")
        end = node.end_lineno or node.lineno
        comment = comments.get(end, comments.get(node.lineno, ""))
        param = Parameter(name, typ, value, comment, **parse_rules(comment, typ, name, path))
        if not param.file:  # a file default is checked when it is used, from where
            try:
                param.check(value)
            except ParameterError as exc:
                raise StudyError(f"{path}: default breaks its rule: {exc}") from None
        params[name] = param
    return params


def _line_comments(source: str) -> dict[int, str]:
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError):
        pass
    return out


def check_type(name: str, typ: str, value: Any) -> Any:
    """Return ``value`` as type ``typ`` if it already is one (ints widen to float).

    Raises
    ------
    ParameterError
        The value does not have the declared type.
    """

    def scalar(t: str, v: Any) -> Any:
        if t == "bool":
            if isinstance(v, bool):
                return v
        elif t == "int":
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        elif t == "float":
            if isinstance(v, int | float) and not isinstance(v, bool):
                return float(v)
        elif t == "str":
            if isinstance(v, str):
                return v
        raise ParameterError(f"{name!r}: expected {typ}, got {v!r}")

    if typ.startswith("list["):
        if not isinstance(value, list | tuple):
            raise ParameterError(f"{name!r}: expected {typ}, got {value!r}")
        return [scalar(typ[5:-1], v) for v in value]
    return scalar(typ, value)


def coerce(param: Parameter, value: Any) -> Any:
    """Convert a CLI string (or an already typed value) to ``param``'s type.

    Strings are parsed: ``bool`` accepts true/false/1/0/yes/no; lists accept
    JSON (``[1, 2]``) or comma-separated values (``1,2``).
    """
    typ = param.type
    if not isinstance(value, str) or typ == "str":
        return check_type(param.name, typ, value)
    text = value.strip()
    if typ.startswith("list["):
        inner = typ[5:-1]
        if text.startswith("["):
            try:
                items = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ParameterError(f"{param.name!r}: bad JSON list {value!r}: {exc}") from exc
            return check_type(param.name, typ, items)
        parts = [p.strip() for p in text.split(",")] if text else []
        if inner == "str":
            return parts
        return [_parse_scalar(param.name, typ, inner, p) for p in parts]
    return _parse_scalar(param.name, typ, typ, text)


def _parse_scalar(name: str, typ: str, inner: str, text: str) -> Any:
    try:
        if inner == "int":
            return int(text)
        if inner == "float":
            return float(text)
    except ValueError:
        raise ParameterError(f"{name!r}: expected {typ}, got {text!r}") from None
    if inner == "bool":
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ParameterError(f"{name!r}: expected bool (true/false/1/0/yes/no), got {text!r}")
    return text
