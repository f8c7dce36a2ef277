"""The offline corpus: deterministic build, content hash, disjoint split, batches."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scalinglab.models.corpus import (
    CorpusConfig,
    build_corpus,
    eval_windows,
    is_heldout,
    sample_batch,
    source_documents,
    stdlib_files,
)
from scalinglab.models.tokenizer import EOS, ByteTokenizer

TOPICS = CorpusConfig(sources=("pydoc_topics",), heldout_fraction=0.2)


def _fresh(cfg: CorpusConfig):
    return build_corpus.__wrapped__(cfg)  # bypass the per-process cache


def test_build_is_deterministic_and_hashed():
    a, b = _fresh(TOPICS), _fresh(TOPICS)
    assert a is not b
    assert a.content_hash == b.content_hash and len(a.content_hash) == 64
    np.testing.assert_array_equal(a.train, b.train)
    np.testing.assert_array_equal(a.heldout, b.heldout)
    assert a.describe()["corpus_hash"] == a.content_hash


def test_hash_changes_with_content_and_split():
    base = _fresh(TOPICS)
    smaller = _fresh(
        CorpusConfig(sources=("pydoc_topics",), heldout_fraction=0.2, max_bytes=200_000)
    )
    other_split = _fresh(CorpusConfig(sources=("pydoc_topics",), heldout_fraction=0.3))
    assert len({base.content_hash, smaller.content_hash, other_split.content_hash}) == 3
    assert smaller.train.size + smaller.heldout.size < base.train.size + base.heldout.size


def test_split_is_disjoint_by_document_and_follows_the_name_hash():
    c = _fresh(TOPICS)
    assert c.train_docs and c.heldout_docs
    assert not set(c.train_docs) & set(c.heldout_docs)
    assert all(is_heldout(n, 0.2) for n in c.heldout_docs)
    assert not any(is_heldout(n, 0.2) for n in c.train_docs)
    names = [n for n, _ in source_documents("pydoc_topics")]
    assert sorted(c.train_docs + c.heldout_docs) == sorted(names)


def test_tokens_are_bytes_plus_three_joined_by_eos():
    c = _fresh(TOPICS)
    docs = dict(source_documents("pydoc_topics"))
    first = c.train_docs[0]
    ids = ByteTokenizer().encode(docs[first])
    np.testing.assert_array_equal(c.train[: len(ids)], ids)
    assert c.train[len(ids)] == EOS
    assert c.train.max() < ByteTokenizer.vocab_size and c.train.min() >= EOS


@pytest.mark.slow
def test_stdlib_sources_skip_tests_and_site_packages():
    files = stdlib_files()
    assert files, "the standard library has .py files"
    bad = {"test", "tests", "idle_test", "site-packages"}
    assert not any(bad & set(p.parts[-4:-1]) for p in files)


def test_unknown_source_and_bad_fraction_rejected():
    with pytest.raises(ValueError, match="unknown"):
        CorpusConfig(sources=("wikipedia",))
    with pytest.raises(ValueError, match="heldout_fraction"):
        CorpusConfig(heldout_fraction=1.5)


def test_batches_come_from_the_generator_and_shift_by_one():
    c = build_corpus(TOPICS)
    x1, y1 = sample_batch(c.train, 4, 16, generator=torch.Generator().manual_seed(3))
    x2, y2 = sample_batch(c.train, 4, 16, generator=torch.Generator().manual_seed(3))
    x3, _ = sample_batch(c.train, 4, 16, generator=torch.Generator().manual_seed(4))
    assert torch.equal(x1, x2) and torch.equal(y1, y2) and not torch.equal(x1, x3)
    assert x1.shape == (4, 16) and torch.equal(x1[:, 1:], y1[:, :-1])


def test_eval_windows_are_fixed_and_non_overlapping():
    c = build_corpus(TOPICS)
    w = eval_windows(c.heldout, 1024, 32)
    assert w.shape == (32, 33)
    assert torch.equal(w, eval_windows(c.heldout, 1024, 32))
    assert len({tuple(r.tolist()) for r in w}) == w.shape[0]
    # every window is a contiguous slice of the held-out stream
    stream = c.heldout.astype(np.int64)
    for row in w[:3].numpy():
        hits = np.flatnonzero(
            np.lib.stride_tricks.sliding_window_view(stream, row.size).__eq__(row).all(axis=1)
        )
        assert hits.size >= 1
