"""Which library modules a study notebook imports, found by reading (never importing) them.

A report depends on the ``scalinglab`` code its notebook runs, not on the whole
package: :func:`imported_modules` parses the notebook's code cells with :mod:`ast`,
collects every ``import scalinglab...`` / ``from scalinglab... import ...`` (at any
depth: imports inside functions count, and so do those under ``if TYPE_CHECKING:``),
and follows them through the library's own modules, relative imports included, until
nothing new is found. Importing ``scalinglab.a.b`` runs ``scalinglab/__init__.py`` and
``scalinglab/a/__init__.py`` as well, so every enclosing package counts too.

:func:`module_hashes` hashes each of those files (and the non-Python files, such as
YAML or templates, that sit in the folder of an imported package: data a module may
read), so the cache key changes when, and only when, code the study runs changes, and
``status`` can name the module that did.

Imports built at run time (``importlib.import_module(f"...{name}")``) cannot be seen
this way; the library has none outside the CLI, which no notebook imports.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from scalinglab.errors import StudyError
from scalinglab.paths import PACKAGE_DIR
from scalinglab.provenance import file_hash

#: The package whose modules are followed.
PACKAGE = "scalinglab"

#: A line of IPython syntax (``%magic``, ``!shell``) that :mod:`ast` cannot parse.
_MAGIC = re.compile(r"^(\s*)[%!].*$", re.M)


def module_file(name: str, *, package_dir: Path = PACKAGE_DIR) -> Path | None:
    """The source file of module ``name`` (``scalinglab.a.b``), or None if there is none.

    A package resolves to its ``__init__.py``.
    """
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = package_dir.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _parse(source: str, *, where: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError:
        pass
    try:  # IPython syntax: blank out magics and shell escapes, keeping the lines
        return ast.parse(_MAGIC.sub(r"\1pass", source))
    except SyntaxError as exc:
        raise StudyError(f"{where}: cannot parse line {exc.lineno}: {exc.msg}") from None


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _imports_in(
    tree: ast.Module, *, module: str | None, is_package: bool, package_dir: Path
) -> set[str]:
    """Names of the ``scalinglab`` modules ``tree`` imports (with their parent packages)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    found.update(_with_parents(alias.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if module is None:
                    continue  # a relative import in a notebook cell imports nothing of ours
                parts = module.split(".")
                anchor = parts if is_package else parts[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            if base.split(".")[0] != PACKAGE:
                continue
            found.update(_with_parents(base))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if alias.name != "*" and module_file(sub, package_dir=package_dir) is not None:
                    found.add(sub)  # a submodule, not a name in ``base``
    return {m for m in found if module_file(m, package_dir=package_dir) is not None}


#: ``{(path, mtime_ns, size): imports}``: ``status`` prepares every study and variant, and
#: they share most modules, so each file is parsed once while it is unchanged.
_CACHE: dict[tuple[str, int, int, str], frozenset[str]] = {}


def _module_imports(name: str, path: Path, package_dir: Path) -> frozenset[str]:
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size, str(package_dir))
    if key not in _CACHE:
        tree = _parse(path.read_text(encoding="utf-8"), where=str(path))
        _CACHE[key] = frozenset(
            _imports_in(
                tree, module=name, is_package=path.name == "__init__.py", package_dir=package_dir
            )
        )
    return _CACHE[key]


_HASHES: dict[tuple[str, int, int], str] = {}


def _file_hash(path: Path) -> str:
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _HASHES:
        _HASHES[key] = file_hash(path)
    return _HASHES[key]


def imported_modules(
    code_cells: Iterable[str], *, where: str = "notebook", package_dir: Path = PACKAGE_DIR
) -> list[str]:
    """Every ``scalinglab`` module the code cells import, directly or through other modules.

    Parameters
    ----------
    code_cells
        The source of each code cell (IPython magics and shell escapes are allowed).
    where
        Named in the error message (the notebook's path).
    package_dir
        The ``scalinglab`` package folder whose modules are followed.

    Returns
    -------
    list of str
        Sorted dotted module names, enclosing packages included.

    Raises
    ------
    StudyError
        A cell or a library module does not parse (the message names it and the line).
    """
    todo: list[str] = []
    for i, source in enumerate(code_cells, start=1):
        tree = _parse(source, where=f"{where}, code cell {i}")
        todo += sorted(_imports_in(tree, module=None, is_package=False, package_dir=package_dir))
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(name, package_dir=package_dir)
        assert path is not None  # _imports_in keeps only resolvable names
        todo += sorted(_module_imports(name, path, package_dir) - seen)
    return sorted(seen)


def module_hashes(modules: Iterable[str], *, package_dir: Path = PACKAGE_DIR) -> dict[str, str]:
    """SHA-256 of each module's file, keyed by module name; a package's data files too.

    A package (``__init__.py``) also contributes every non-Python file in its folder
    (not its subfolders), keyed ``<package>/<file name>``: data its modules may read.
    """
    out: dict[str, str] = {}
    for name in modules:
        path = module_file(name, package_dir=package_dir)
        if path is None:
            continue
        out[name] = _file_hash(path)
        if path.name == "__init__.py":
            for data in sorted(path.parent.iterdir()):
                if (
                    data.is_file()
                    and data.suffix not in (".py", ".pyc")
                    and data.name != "py.typed"
                ):
                    out[f"{name}/{data.name}"] = _file_hash(data)
    return out
