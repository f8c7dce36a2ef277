"""Character and byte tokenizers."""

from __future__ import annotations

import pytest

from scalinglab.models import BOS, EOS, PAD, ByteTokenizer, CharTokenizer, arithmetic_tokenizer


def test_char_roundtrip_and_specials():
    tok = arithmetic_tokenizer()
    assert tok.vocab_size == 3 + len("0123456789+*%=")
    ids = tok.encode("12+7=", bos=True, eos=True)
    assert ids[0] == BOS and ids[-1] == EOS and len(ids) == 7
    assert len(set(ids[1:-1]) & {PAD, BOS, EOS}) == 0
    assert tok.decode(ids) == "12+7="
    assert tok.decode(tok.encode("34") + [EOS] + tok.encode("99")) == "34"
    assert tok.decode(tok.encode("34") + [EOS] + tok.encode("99"), stop_at_eos=False) == "3499"


def test_char_rejects_unknown_characters():
    with pytest.raises(ValueError, match="'x'"):
        arithmetic_tokenizer().encode("1x2")
    with pytest.raises(ValueError, match="unique"):
        CharTokenizer("aab")


def test_encode_batch_pads_right():
    tok = CharTokenizer("ab")
    batch = tok.encode_batch(["a", "abb"], eos=True)
    assert batch.shape == (2, 4)
    assert batch[0].tolist() == [3, EOS, PAD, PAD]
    assert batch[1].tolist() == [3, 4, 4, EOS]


def test_byte_roundtrip_unicode():
    tok = ByteTokenizer()
    text = "naïve ∑ text"
    ids = tok.encode(text, eos=True)
    assert tok.vocab_size == 259 and max(ids) < 259
    assert len(ids) == len(text.encode("utf-8")) + 1
    assert tok.decode(ids) == text
