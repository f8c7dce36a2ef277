"""Models: the one configurable transformer every study uses, and its tokenizers."""

from scalinglab.models.tokenizer import (
    ARITHMETIC_ALPHABET,
    BOS,
    EOS,
    PAD,
    ByteTokenizer,
    CharTokenizer,
    arithmetic_tokenizer,
)
from scalinglab.models.transformer import FFNHook, KVCache, Transformer, TransformerConfig

__all__ = [
    "ARITHMETIC_ALPHABET",
    "BOS",
    "EOS",
    "PAD",
    "ByteTokenizer",
    "CharTokenizer",
    "FFNHook",
    "KVCache",
    "Transformer",
    "TransformerConfig",
    "arithmetic_tokenizer",
]
