"""Studies: discovery, header metadata and the ``parameters`` cell.

A study is ``notebooks/<study>.py`` in jupytext percent format. Its metadata
sits in the jupytext YAML header under ``jupyter: scalinglab:`` (so it lands in
the notebook metadata): ``title``, ``description``, ``inputs`` (globs relative
to the repository root), ``tiny`` (parameter overrides used by tests, available
as the variant ``tiny``), ``variants`` (named parameter overrides) and ``draft``
(true while the study's ``small`` results are not committed: ``run --all`` skips it).

The first code cell is tagged ``parameters`` and holds annotated literals whose
help comment may end in a value rule (:mod:`scalinglab.runner.param_rules`)::

    reps: int = 50_000  # bootstrap resamples [>= 1]

It is read with :mod:`ast` and :mod:`tokenize`, never executed, so bad names,
types and values are rejected before any kernel starts (papermill only warns
about unknown names and never checks types). Hand-written because no library
parses typed papermill parameter cells; papermill's own inference drops the types.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jupytext

from scalinglab.errors import ParameterError, StudyError
from scalinglab.paths import notebooks_dir
from scalinglab.runner.param_rules import check_value, parse_rules

#: Annotations a parameter may have.
SUPPORTED_TYPES = ("int", "float", "str", "bool", "list[int]", "list[float]", "list[str]")
#: Parameters every study must declare, with their types.
REQUIRED = {"seed": "int", "compute_class": "str", "scheduler": "str"}
#: Variant every study has (no overrides).
DEFAULT_VARIANT = "default"

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
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


@dataclass
class Study:
    """A study notebook and what its header and parameters cell declare."""

    name: str
    path: Path
    title: str
    description: str
    parameters: dict[str, Parameter]
    variants: dict[str, dict[str, Any]]
    inputs: list[str] = field(default_factory=list)
    notebook: Any = None  # the jupytext-read nbformat NotebookNode
    draft: bool = False  # header ``draft: true``: left out of ``run --all`` by default

    def cell_sources(self) -> list[str]:
        """Every code and markdown cell, in order, tagged with its type (part of the cache
        key: the report shows the narrative too, so editing it makes a report stale)."""
        return [f"{c.cell_type}:{c.source}" for c in self.notebook.cells
                if c.cell_type in ("code", "markdown")]

    def parameters_help(self) -> str:
        """The valid parameters, one per line, with types, defaults and help."""
        return "\n".join("  " + p.describe() for p in self.parameters.values())


def discover_studies(root: Path | None = None) -> list[str]:
    """Names of every study in ``notebooks/`` (``.py`` files whose header has ``scalinglab:``).

    Parameters
    ----------
    root
        The notebooks folder; default :func:`scalinglab.paths.notebooks_dir`.
    """
    folder = Path(root) if root is not None else notebooks_dir()
    names = []
    for path in sorted(folder.glob("*.py")):
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
        if head.startswith("# ---") and re.search(r"^#\s+scalinglab:", head, re.M):
            names.append(path.stem)
    return names


def load_study(name: str, *, root: Path | None = None) -> Study:
    """Read ``notebooks/<name>.py``: header metadata and the parameters cell.

    Raises
    ------
    StudyError
        Unknown study (the message lists the known ones) or a malformed notebook.
    """
    folder = Path(root) if root is not None else notebooks_dir()
    if not _NAME_RE.match(name or ""):
        raise StudyError(f"bad study name {name!r}: use the notebook's file name without .py")
    path = folder / f"{name}.py"
    if not path.is_file():
        known = ", ".join(discover_studies(folder)) or "none"
        raise StudyError(f"no study {name!r} in {folder} (studies: {known})")
    try:
        nb = jupytext.read(path, fmt="py:percent")
    except Exception as exc:  # jupytext raises many kinds
        raise StudyError(f"{path}: cannot read as a jupytext percent notebook: {exc}") from exc
    meta = nb.metadata.get("scalinglab")
    if not isinstance(meta, dict):
        raise StudyError(f"{path}: the header has no 'scalinglab:' metadata block")
    params = parse_parameters_cell(nb, path=path)
    variants = _variants(meta, params, path)
    inputs = meta.get("inputs") or []
    if isinstance(inputs, str):
        inputs = [inputs]
    return Study(
        name=name,
        path=path,
        title=str(meta.get("title") or name),
        description=str(meta.get("description") or ""),
        parameters=params,
        variants=variants,
        inputs=[str(g) for g in inputs],
        notebook=nb,
        draft=bool(meta.get("draft", False)),
    )


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
            f"(# %% tags=[\"parameters\"]), found {len(tagged)}"
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


def _variants(meta: dict, params: dict[str, Parameter], path: Path) -> dict[str, dict[str, Any]]:
    variants: dict[str, dict[str, Any]] = {DEFAULT_VARIANT: {}}
    declared = meta.get("variants") or {}
    if not isinstance(declared, dict):
        raise StudyError(f"{path}: header 'variants' must map names to parameter overrides")
    if meta.get("tiny") is not None:
        variants["tiny"] = dict(meta["tiny"] or {})
    for vname, overrides in declared.items():
        variants[str(vname)] = dict(overrides or {})
    for vname, overrides in variants.items():
        if not _NAME_RE.match(vname):
            raise StudyError(f"{path}: bad variant name {vname!r}")
        try:
            _apply(params, overrides, source=f"variant {vname!r}")
        except ParameterError as exc:
            raise StudyError(f"{path}: {exc}") from exc
    return variants


def _apply(
    params: dict[str, Parameter], overrides: dict[str, Any], *, source: str
) -> dict[str, Any]:
    out = {}
    for key, value in overrides.items():
        if key not in params:
            raise ParameterError(
                f"{source}: unknown parameter {key!r}. Valid parameters:\n"
                + "\n".join("  " + p.describe() for p in params.values())
            )
        try:
            out[key] = coerce(params[key], value)
        except ParameterError as exc:
            raise ParameterError(
                f"{source}: {exc}. Valid parameters:\n"
                + "\n".join("  " + p.describe() for p in params.values())
            ) from None
    return out


def resolve_parameters(
    study: Study,
    *,
    variant: str = DEFAULT_VARIANT,
    overrides: dict[str, Any] | list[tuple[str, Any]] | None = None,
) -> dict[str, Any]:
    """Merged parameters: cell defaults, then the variant's overrides, then ``overrides``.

    Parameters
    ----------
    study
        A loaded study.
    variant
        A name from the header's ``variants`` (or ``default``, or ``tiny``).
    overrides
        ``{name: value}`` or ``[(name, value), ...]``; string values are
        converted by the declared type (what ``-p NAME VALUE`` gives).

    Raises
    ------
    ParameterError
        Unknown variant, unknown parameter or a value of the wrong type; the
        message lists the valid parameters with types, defaults and help.
    """
    if variant not in study.variants:
        raise ParameterError(
            f"study {study.name!r} has no variant {variant!r} "
            f"(variants: {', '.join(study.variants)})"
        )
    merged = {name: p.default for name, p in study.parameters.items()}
    merged.update(_apply(study.parameters, study.variants[variant], source=f"variant {variant!r}"))
    items = list(overrides.items()) if isinstance(overrides, dict) else list(overrides or [])
    merged.update(_apply(study.parameters, dict(items), source=f"study {study.name!r}"))
    check_values(study, merged)
    return merged


def check_values(study: Study, values: dict[str, Any], *, cwd: Path | None = None) -> None:
    """Check every value against its parameter's declared rule (bounds, choices, files).

    Raises
    ------
    ParameterError
        One line naming the study, the parameter, the rule and the value.
    """
    for name, value in values.items():
        try:
            study.parameters[name].check(value, cwd=cwd)
        except ParameterError as exc:
            raise ParameterError(f"study {study.name!r}: {exc}") from None


def cwd_paths_absolute(value: str, *, cwd: Path | None = None) -> str:
    """Make file paths typed on the command line independent of the kernel's directory.

    A ``-p`` value whose comma-separated parts all name existing files relative
    to the directory the command was typed in is rewritten with absolute paths
    (the kernel runs in ``notebooks/``, where a relative path would point
    elsewhere). Any other value is returned unchanged.
    """
    base = Path.cwd() if cwd is None else cwd
    parts = [p.strip() for p in value.split(",")]
    if not value or not all(parts):
        return value
    try:
        if not all((base / p).is_file() for p in parts):
            return value
    except OSError:
        return value
    return ",".join(str((base / p).resolve()) for p in parts)
