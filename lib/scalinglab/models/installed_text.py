"""The ``"installed"`` corpus source: text installed with Python and its packages, deduplicated.

Large enough that no run of the optimizer study's ``medium`` class sees a token twice
(tens of MB, against the 2 MB of ``pydoc_topics`` + ``stdlib_docstrings``). Documents,
each named ``<part>:<relative path>``:

- ``topics:<key>``: the ``pydoc`` topics (as the ``pydoc_topics`` source);
- ``stdlib:<path>``: the full text of every standard-library ``.py`` file (as
  ``stdlib_source``: test folders and ``site-packages`` excluded);
- ``docs:<path>``: for every ``.py`` file under the interpreter's ``purelib``
  (``site-packages``) its docstrings (module, class, function; read with :mod:`ast`),
  and every ``METADATA``, ``.rst``, ``.md`` and ``.txt`` file there as it is (package
  descriptions, READMEs, licences).

Excluded: editable-install shims (``__editable__*``), the ``scalinglab`` package itself
(the corpus must not change when this repository's code does), test folders, files of
more than 2 MB (generated tables) and files that are not UTF-8.

Deduplication: documents are visited sorted by name; a document whose text (stripped)
has the SHA-256 of an earlier one is dropped (vendored copies, identical licences,
boilerplate docstrings). :func:`installed_documents` returns ``(name, text)`` pairs;
:func:`scalinglab.models.corpus.build_corpus` hashes them (the corpus content hash covers
every byte), splits them by name hash into train and held-out parts and tokenizes them.

Cache: reading and parsing some 15,000 files takes a minute, so the document list is
pickled under ``data/.cache/corpus/`` (git-ignored), keyed by the Python version, the
``stdlib`` and ``purelib`` paths and the sorted names of the installed distributions
(``*.dist-info``, which carry their versions). A different installation gets a different
key; the content hash, computed from the documents actually used, is what identifies the
corpus in every dataset.
"""

from __future__ import annotations

import ast
import hashlib
import os
import pickle
import sys
import sysconfig
from collections import deque
from collections.abc import Iterator
from pathlib import Path

#: Files under ``purelib`` read as documents besides the ``.py`` docstrings.
DOC_SUFFIXES = (".rst", ".md", ".txt")
MAX_FILE_BYTES = 2_000_000
_SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "__pycache__", "testing"}


_DOC_NODES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
#: Nodes that can hold a class or function definition below them: statements (their bodies),
#: ``except`` handlers and ``match`` cases. Expressions never do (a lambda is no ``def``).
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def _blocks_breadth_first(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``tree`` that are a module, a statement, an ``except`` handler or a
    ``match`` case, in the order :func:`ast.walk` visits them (breadth first).

    Every ancestor of such a node is one too, so skipping the expressions (most of a
    tree) leaves each level, and the order within it, as the full walk has them: the
    docstrings come out in the same order, several times faster.
    """
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                todo.extend(v for v in value if isinstance(v, _BLOCKS))
        yield node


def docstrings(text: str) -> str:
    """The module, class and function docstrings of Python source ``text`` (in the order of
    :func:`ast.walk`), joined by blank lines; ``""`` for text that does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    out = []
    for node in _blocks_breadth_first(tree):
        if isinstance(node, _DOC_NODES):
            doc = ast.get_docstring(node)
            if doc:
                out.append(doc)
    return "\n\n".join(out)


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def _walk(root: Path, keep) -> list[Path]:
    """Files under ``root`` accepted by ``keep(relative path)``, sorted by relative path."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        out += [root / rel / f for f in filenames if keep(rel / f)]
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def _purelib_keep(rel: Path) -> bool:
    top = rel.parts[0]
    if top.startswith("__editable__") or top.split("-")[0] == "scalinglab":
        return False
    return rel.suffix in (".py", *DOC_SUFFIXES) or rel.name == "METADATA"


def _collect() -> list[tuple[str, str]]:
    from pydoc_data.topics import topics

    docs = [(f"topics:{k}", topics[k]) for k in sorted(topics)]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for p in _walk(stdlib, lambda rel: rel.suffix == ".py"):
        text = _read(p)
        if text is not None:
            docs.append((f"stdlib:{p.relative_to(stdlib).as_posix()}", text))
    pure = Path(sysconfig.get_paths()["purelib"])
    if pure.is_dir() and pure != stdlib:
        for p in _walk(pure, _purelib_keep):
            text = _read(p)
            if text is None:
                continue
            if p.suffix == ".py":
                text = docstrings(text)
            docs.append((f"docs:{p.relative_to(pure).as_posix()}", text))
    return dedup(docs)


def dedup(docs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop empty documents and any whose stripped text repeats an earlier one's (SHA-256).

    ``docs`` is visited in the order given (the caller sorts it); the first copy stays.
    """
    seen: set[bytes] = set()
    out = []
    for name, text in docs:
        body = text.strip()
        if not body:
            continue
        h = hashlib.sha256(body.encode("utf-8")).digest()
        if h in seen:
            continue
        seen.add(h)
        out.append((name, text))
    return out


def environment_key() -> str:
    """Key of this installation: Python version, library paths, installed distributions."""
    paths = sysconfig.get_paths()
    pure = Path(paths["purelib"])
    dists = sorted(p.name for p in pure.glob("*.dist-info")) if pure.is_dir() else []
    blob = repr((sys.version, paths["stdlib"], paths["purelib"], dists))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def cache_path() -> Path:
    """Where this installation's document list is cached (git-ignored)."""
    from scalinglab.paths import data_dir

    return data_dir() / ".cache" / "corpus" / f"installed-{environment_key()}.pkl"


def installed_documents(*, cache: bool = True) -> list[tuple[str, str]]:
    """``(name, text)`` documents of the ``"installed"`` source, deduplicated, sorted by name
    within each part (topics, stdlib, docs).

    Parameters
    ----------
    cache
        Read and write the pickled list under :func:`cache_path` (False: always rebuild).
    """
    path = cache_path()
    if cache and path.exists():
        try:
            with open(path, "rb") as fh:
                return pickle.load(fh)
        except Exception:  # torn or unreadable: rebuild
            pass
    docs = _collect()
    if cache:
        from scalinglab import atomic

        atomic.write_bytes(path, pickle.dumps(docs, protocol=pickle.HIGHEST_PROTOCOL))
    return docs
