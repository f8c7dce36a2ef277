"""Tokenizers: a character vocabulary for the arithmetic tasks, bytes for text.

Both reserve ids 0, 1, 2 for ``PAD``, ``BOS`` and ``EOS``. Hand-written because
they are a few lines each and must not pull a tokenizer library (and its
downloads) into the project.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

PAD, BOS, EOS = 0, 1, 2
_N_SPECIAL = 3


class CharTokenizer:
    """One id per character of a fixed alphabet, after the three special ids.

    Parameters
    ----------
    alphabet
        The characters, each once (e.g. ``"0123456789+*%="``).
    """

    pad_id, bos_id, eos_id = PAD, BOS, EOS

    def __init__(self, alphabet: str) -> None:
        if len(set(alphabet)) != len(alphabet) or not alphabet:
            raise ValueError(f"alphabet must be non-empty with unique characters: {alphabet!r}")
        self.alphabet = alphabet
        self._to_id = {c: i + _N_SPECIAL for i, c in enumerate(alphabet)}

    @property
    def vocab_size(self) -> int:
        return len(self.alphabet) + _N_SPECIAL

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> list[int]:
        """Ids of ``text``; a character outside the alphabet raises ``ValueError``."""
        try:
            ids = [self._to_id[c] for c in text]
        except KeyError as exc:
            raise ValueError(
                f"character {exc.args[0]!r} is not in the alphabet {self.alphabet!r}"
            ) from None
        return ([BOS] if bos else []) + ids + ([EOS] if eos else [])

    def decode(self, ids: Iterable[int], *, stop_at_eos: bool = True) -> str:
        """Text of ``ids``: stops at the first EOS, skips PAD/BOS."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS and stop_at_eos:
                break
            if i >= _N_SPECIAL:
                out.append(self.alphabet[i - _N_SPECIAL])
        return "".join(out)

    def encode_batch(
        self, texts: Sequence[str], *, bos: bool = False, eos: bool = False
    ) -> torch.Tensor:
        """Right-padded ids (B, T_max) of several texts (int64)."""
        rows = [self.encode(t, bos=bos, eos=eos) for t in texts]
        width = max((len(r) for r in rows), default=0)
        out = torch.full((len(rows), width), PAD, dtype=torch.long)
        for i, r in enumerate(rows):
            out[i, : len(r)] = torch.tensor(r, dtype=torch.long)
        return out


class ByteTokenizer:
    """UTF-8 bytes shifted by the three special ids (vocabulary 259)."""

    pad_id, bos_id, eos_id = PAD, BOS, EOS
    vocab_size = 256 + _N_SPECIAL

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> list[int]:
        ids = [b + _N_SPECIAL for b in text.encode("utf-8")]
        return ([BOS] if bos else []) + ids + ([EOS] if eos else [])

    def decode(self, ids: Iterable[int], *, stop_at_eos: bool = True) -> str:
        """Text of ``ids`` (invalid UTF-8 is replaced), stopping at EOS."""
        out = bytearray()
        for i in ids:
            i = int(i)
            if i == EOS and stop_at_eos:
                break
            if i >= _N_SPECIAL:
                out.append(i - _N_SPECIAL)
        return out.decode("utf-8", errors="replace")


#: The alphabet of :mod:`scalinglab.studies.rl.tasks` prompts and answers.
ARITHMETIC_ALPHABET = "0123456789+*%="


def arithmetic_tokenizer() -> CharTokenizer:
    """The character tokenizer of the arithmetic tasks (vocabulary 17)."""
    return CharTokenizer(ARITHMETIC_ALPHABET)
