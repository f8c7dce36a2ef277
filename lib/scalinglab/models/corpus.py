"""A real-text corpus that ships with Python: no download, byte-level, hashed.

Sources (each a list of *documents*, sorted by name so the build is deterministic):

- ``"pydoc_topics"``: the Python language reference and library topics that
  ship as ``pydoc_data/topics.py`` in the standard library (79 documents, about
  470 kB of English prose with code examples on CPython 3.11). One document per
  topic key.
- ``"stdlib_docstrings"``: the docstrings (module, class and function) of every
  ``.py`` file under ``sysconfig.get_paths()["stdlib"]``, read with :mod:`ast`,
  excluding ``site-packages`` and test folders (``test``, ``tests``,
  ``idle_test``) and files that fail to parse. One document per file (its
  docstrings joined by blank lines): about 730 documents, 1.8 MB on CPython 3.11.
- ``"stdlib_source"``: the full text of the same ``.py`` files (about 12 MB),
  for the larger compute classes that need more tokens.
- ``"installed"``: the pydoc topics, the standard library's source and the docstrings and
  documentation files of the installed packages (``site-packages``), deduplicated
  (:mod:`scalinglab.models.installed_text`, cached under ``data/.cache/corpus/``): tens of
  MB, so that the optimizer study's ``medium`` runs never see a token twice.

The exact content therefore depends on the Python version; :attr:`Corpus.content_hash`
(SHA-256 of every document's name and bytes, split and tokenizer included)
identifies it and goes into every manifest and cached dataset.

Tokenization: UTF-8 bytes through :class:`~scalinglab.models.tokenizer.ByteTokenizer`
(ids ``byte + 3``, vocabulary 259); documents are joined by ``EOS``.

Split: a document goes to the held-out part when the first 8 bytes of
``sha256(name)`` read as an integer fall below ``heldout_fraction * 2**64``; the
split is by document (never inside one), so the parts are disjoint and a
document's side never depends on which other documents exist. Size controls:
``max_bytes`` keeps documents in sorted order until the budget is reached.

Hand-written because the point is a corpus with *no* download: a dataset
library would fetch its data from a hub.
"""

from __future__ import annotations

import functools
import hashlib
import sysconfig
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from scalinglab.models.installed_text import docstrings
from scalinglab.models.tokenizer import EOS, ByteTokenizer

SOURCES = ("pydoc_topics", "stdlib_docstrings", "stdlib_source", "installed")
_SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "__pycache__"}


@dataclass(frozen=True)
class CorpusConfig:
    """What the corpus is made of.

    Attributes
    ----------
    sources
        Any of :data:`SOURCES`, in order.
    heldout_fraction
        Expected fraction of documents held out (by name hash).
    max_bytes
        Keep documents (sorted by source then name) until this many UTF-8 bytes;
        0 keeps everything.
    """

    sources: tuple[str, ...] = ("pydoc_topics", "stdlib_docstrings")
    heldout_fraction: float = 0.1
    max_bytes: int = 0

    def __post_init__(self) -> None:
        unknown = [s for s in self.sources if s not in SOURCES]
        if unknown or not self.sources:
            raise ValueError(
                f"CorpusConfig: unknown or no sources {unknown}; choose from {SOURCES}"
            )
        if not 0.0 < self.heldout_fraction < 1.0:
            raise ValueError("CorpusConfig: heldout_fraction must be in (0, 1)")
        if self.max_bytes < 0:
            raise ValueError("CorpusConfig: max_bytes must be >= 0")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Corpus:
    """Token streams of a built corpus.

    Attributes
    ----------
    train, heldout
        Token ids, ``(n_train,)`` and ``(n_heldout,)`` uint16 arrays (documents
        joined by ``EOS``).
    train_docs, heldout_docs
        Document names (``source:name``) on each side.
    content_hash
        SHA-256 (hex) over the config, the tokenizer and every document.
    vocab_size
        259 (bytes + PAD, BOS, EOS).
    """

    config: CorpusConfig
    train: np.ndarray
    heldout: np.ndarray
    train_docs: tuple[str, ...]
    heldout_docs: tuple[str, ...]
    content_hash: str
    vocab_size: int = ByteTokenizer.vocab_size
    files: tuple[str, ...] = field(default=(), repr=False)

    def describe(self) -> dict:
        """Sizes and hash, for manifests and dataset attrs."""
        return {
            "corpus_hash": self.content_hash,
            "corpus_sources": ",".join(self.config.sources),
            "corpus_train_tokens": int(self.train.size),
            "corpus_heldout_tokens": int(self.heldout.size),
            "corpus_train_docs": len(self.train_docs),
            "corpus_heldout_docs": len(self.heldout_docs),
        }


def stdlib_files() -> list[Path]:
    """The standard library's ``.py`` files used by the stdlib sources, sorted by relative path."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = [
        p for p in root.rglob("*.py") if not _SKIP_DIRS.intersection(p.relative_to(root).parts[:-1])
    ]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def source_documents(source: str) -> list[tuple[str, str]]:
    """``(name, text)`` documents of one source, sorted by name; empty documents dropped."""
    if source == "pydoc_topics":
        from pydoc_data.topics import topics

        docs = [(k, topics[k]) for k in sorted(topics)]
    elif source in ("stdlib_docstrings", "stdlib_source"):
        root = Path(sysconfig.get_paths()["stdlib"])
        docs = []
        for p in stdlib_files():
            try:
                text = p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            docs.append(
                (
                    p.relative_to(root).as_posix(),
                    docstrings(text) if source == "stdlib_docstrings" else text,
                )
            )
    elif source == "installed":
        from scalinglab.models.installed_text import installed_documents

        docs = installed_documents()
    else:
        raise ValueError(f"unknown corpus source {source!r}; choose from {SOURCES}")
    return [(f"{source}:{name}", text) for name, text in docs if text.strip()]


def is_heldout(name: str, fraction: float) -> bool:
    """Whether document ``name`` is held out (first 8 bytes of its SHA-256 < fraction * 2^64)."""
    h = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    return h < fraction * 2.0**64


def _join(docs: Sequence[bytes]) -> np.ndarray:
    if not docs:
        return np.zeros(0, dtype=np.uint16)
    parts = []
    for d in docs:
        parts.append(np.frombuffer(d, dtype=np.uint8).astype(np.uint16) + 3)
        parts.append(np.array([EOS], dtype=np.uint16))
    return np.concatenate(parts)


@functools.lru_cache(maxsize=4)
def build_corpus(config: CorpusConfig = CorpusConfig()) -> Corpus:
    """Build (or fetch from this process's cache) the corpus of ``config``.

    Returns
    -------
    Corpus
        Train and held-out token streams, both non-empty.
    """
    h = hashlib.sha256(repr(sorted(config.to_dict().items())).encode())
    h.update(b"ByteTokenizer+3;EOS-joined")
    train, held, tnames, hnames = [], [], [], []
    total = 0
    for source in config.sources:
        for name, text in source_documents(source):
            data = text.encode("utf-8")
            if config.max_bytes and total >= config.max_bytes:
                break
            total += len(data)
            h.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
            if is_heldout(name, config.heldout_fraction):
                held.append(data)
                hnames.append(name)
            else:
                train.append(data)
                tnames.append(name)
    if not train or not held:
        raise ValueError(
            f"corpus {config} has {len(train)} train and {len(held)} held-out "
            "documents; raise max_bytes or heldout_fraction"
        )
    return Corpus(
        config=config,
        train=_join(train),
        heldout=_join(held),
        train_docs=tuple(tnames),
        heldout_docs=tuple(hnames),
        content_hash=h.hexdigest(),
    )


def sample_batch(
    tokens: np.ndarray, batch_size: int, seq_len: int, *, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random windows of ``tokens`` as (inputs, targets), each ``(batch_size, seq_len)`` int64.

    Start positions are uniform over the stream, drawn from ``generator``.
    """
    n = tokens.size - seq_len - 1
    if n < 1:
        raise ValueError(f"token stream of {tokens.size} is shorter than seq_len + 1")
    starts = torch.randint(0, n, (batch_size,), generator=generator).numpy()
    idx = starts[:, None] + np.arange(seq_len + 1)[None, :]
    win = torch.from_numpy(tokens[idx].astype(np.int64))
    return win[:, :-1], win[:, 1:]


class PermutedWindows:
    """Batches of distinct windows: the stream cut into non-overlapping windows of
    ``seq_len + 1`` tokens, visited in a random order drawn once from ``generator``.

    No window (so no token) is seen twice until all ``n_windows`` have been drawn; then a
    new permutation starts (a second epoch), counted in :attr:`epochs`.
    """

    def __init__(self, tokens: np.ndarray, seq_len: int, *, generator: torch.Generator) -> None:
        self.tokens, self.seq_len, self.generator = tokens, int(seq_len), generator
        self.n_windows = tokens.size // (self.seq_len + 1)
        if self.n_windows < 1:
            raise ValueError(f"token stream of {tokens.size} is shorter than seq_len + 1")
        self.drawn = 0
        self._order = torch.randperm(self.n_windows, generator=generator).numpy()

    @property
    def epochs(self) -> float:
        """Windows drawn so far over windows available."""
        return self.drawn / self.n_windows

    def batch(self, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The next ``batch_size`` windows as (inputs, targets), each ``(batch_size, seq_len)``."""
        idx: list[int] = []
        while len(idx) < batch_size:
            pos = self.drawn % self.n_windows
            if pos == 0 and self.drawn:
                self._order = torch.randperm(self.n_windows, generator=self.generator).numpy()
            take = min(batch_size - len(idx), self.n_windows - pos)
            idx.extend(self._order[pos : pos + take].tolist())
            self.drawn += take
        starts = np.asarray(idx) * (self.seq_len + 1)
        win = torch.from_numpy(
            self.tokens[starts[:, None] + np.arange(self.seq_len + 1)[None, :]].astype(np.int64)
        )
        return win[:, :-1], win[:, 1:]


def eval_windows(tokens: np.ndarray, n_tokens: int, seq_len: int) -> torch.Tensor:
    """Fixed, non-overlapping windows ``(n, seq_len + 1)`` spread evenly over ``tokens``.

    ``n = max(1, n_tokens // seq_len)`` windows (fewer if the stream is short);
    the same for every run, so held-out losses are paired across runs.
    """
    n_max = (tokens.size - 1) // (seq_len + 1)
    n = max(1, min(n_tokens // seq_len, n_max))
    starts = (np.arange(n) * (n_max // n)) * (seq_len + 1)
    idx = starts[:, None] + np.arange(seq_len + 1)[None, :]
    return torch.from_numpy(tokens[idx].astype(np.int64))
