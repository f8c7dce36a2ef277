"""Verifiable synthetic arithmetic tasks: prompts, exact answers, a strict checker.

A task is ``a OP b`` with ``n_digits``-digit operands written zero-padded, so that
every prompt of a task has the same length (no padding inside a batch)::

    add   "042+917="   -> "959"
    mul   "042*917="   -> "38514"
    mod   "042*917%97=" -> str((42 * 917) % 97)

The answer is the canonical decimal (no leading zeros), optionally written
least-significant digit first (``reverse_answer``, which makes carries local and
the task easier), followed by EOS. Difficulty knobs: the operation, ``n_digits``,
``n_digits_b`` (second operand), ``modulus`` and ``reverse_answer``.

Prompt sets: problems are drawn without replacement from the whole problem space
with a seeded ``np.random.Generator``, so the warm-up (``sft``), RL (``train``)
and evaluation (``heldout``) sets never share a problem. All three operations are
commutative, so a problem is the unordered pair ``{a, b}`` (when both operands
have the same width): ``b OP a`` never leaks a held-out problem into training.

The checker is exact: a completion is correct only if it is exactly the answer
digits followed by EOS (no missing EOS, extra characters, signs or leading zeros).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import torch

from scalinglab.models.tokenizer import EOS, PAD, CharTokenizer, arithmetic_tokenizer

_SYMBOL = {"add": "+", "mul": "*", "mod": "*"}


@dataclass(frozen=True)
class TaskSpec:
    """One arithmetic task and its difficulty knobs.

    Attributes
    ----------
    op
        ``"add"``, ``"mul"`` or ``"mod"`` (``(a * b) mod modulus``).
    n_digits, n_digits_b
        Operand widths (``n_digits_b=0``: same as ``n_digits``).
    modulus
        For ``op="mod"``.
    reverse_answer
        Write the answer least-significant digit first.
    """

    op: Literal["add", "mul", "mod"] = "add"
    n_digits: int = 3
    n_digits_b: int = 0
    modulus: int = 97
    reverse_answer: bool = False

    def __post_init__(self) -> None:
        if self.op not in _SYMBOL:
            raise ValueError(f"TaskSpec: unknown op {self.op!r} (add, mul, mod)")
        if not 1 <= self.n_digits <= 9 or not 0 <= self.n_digits_b <= 9:
            raise ValueError("TaskSpec: n_digits must be 1..9 and n_digits_b 0..9")
        if self.op == "mod" and self.modulus < 2:
            raise ValueError("TaskSpec: modulus must be >= 2")

    @property
    def width_b(self) -> int:
        return self.n_digits_b or self.n_digits

    @property
    def prompt_len(self) -> int:
        """Characters (= tokens) of every prompt."""
        extra = 1 + len(str(self.modulus)) if self.op == "mod" else 0
        return self.n_digits + 1 + self.width_b + extra + 1

    @property
    def max_answer_len(self) -> int:
        """Most answer digits (EOS not included)."""
        if self.op == "add":
            return max(self.n_digits, self.width_b) + 1
        if self.op == "mul":
            return self.n_digits + self.width_b
        return len(str(self.modulus - 1))

    @property
    def space_size(self) -> int:
        """Number of distinct problems (unordered pairs when the widths match)."""
        na, nb = 10**self.n_digits, 10**self.width_b
        return na * (na + 1) // 2 if na == nb else na * nb

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Problems:
    """A set of problems: operands ``a``, ``b`` (n,), prompt and answer strings."""

    spec: TaskSpec
    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return len(self.a)

    @property
    def values(self) -> np.ndarray:
        """The true results (n,), int64."""
        if self.spec.op == "add":
            return self.a + self.b
        prod = self.a * self.b
        return prod % self.spec.modulus if self.spec.op == "mod" else prod

    @property
    def prompts(self) -> list[str]:
        s = self.spec
        tail = f"%{s.modulus}=" if s.op == "mod" else "="
        sym = _SYMBOL[s.op]
        return [
            f"{a:0{s.n_digits}d}{sym}{b:0{s.width_b}d}{tail}"
            for a, b in zip(self.a, self.b, strict=True)
        ]

    @property
    def answers(self) -> list[str]:
        return [format_answer(int(v), reverse=self.spec.reverse_answer) for v in self.values]

    def subset(self, index: np.ndarray | slice) -> Problems:
        return Problems(self.spec, self.a[index], self.b[index])

    def prompt_tensor(self, tokenizer: CharTokenizer | None = None) -> torch.Tensor:
        """Prompt ids (n, prompt_len), int64."""
        tok = tokenizer or arithmetic_tokenizer()
        return tok.encode_batch(self.prompts)

    def sft_tensor(
        self, tokenizer: CharTokenizer | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Supervised sequences ``prompt + answer + EOS``, right-padded with PAD.

        Returns
        -------
        tokens : Tensor (n, prompt_len + max_answer_len + 1)
        target_mask : Tensor (n, same) bool, True on the answer and EOS positions.
        """
        tok = tokenizer or arithmetic_tokenizer()
        p, width = self.spec.prompt_len, self.spec.prompt_len + self.spec.max_answer_len + 1
        tokens = torch.full((len(self), width), PAD, dtype=torch.long)
        mask = torch.zeros((len(self), width), dtype=torch.bool)
        for i, (q, ans) in enumerate(zip(self.prompts, self.answers, strict=True)):
            ids = tok.encode(q + ans, eos=True)
            tokens[i, : len(ids)] = torch.tensor(ids)
            mask[i, p : len(ids)] = True
        return tokens, mask


def format_answer(value: int, *, reverse: bool = False) -> str:
    """The canonical answer text of ``value`` (no leading zeros; reversed if asked)."""
    s = str(int(value))
    return s[::-1] if reverse else s


def check_completion(completion: str | None, answer: str) -> bool:
    """Exact check of one decoded completion (``None`` when no EOS was produced)."""
    return completion is not None and completion == answer


def score_completions(
    tokens: torch.Tensor,
    problems: Problems,
    *,
    tokenizer: CharTokenizer | None = None,
    repeats: int = 1,
) -> np.ndarray:
    """Binary rewards of generated token rows.

    Parameters
    ----------
    tokens
        Generated ids only (B, L), B = ``len(problems) * repeats``, rows of one
        problem adjacent (``repeat_interleave`` order); anything after the first
        EOS is ignored, a row without EOS scores 0.
    problems
        The problems answered.
    repeats
        Completions per problem.

    Returns
    -------
    numpy.ndarray
        (B,) float64 in {0, 1}.
    """
    tok = tokenizer or arithmetic_tokenizer()
    answers = problems.answers
    rows = tokens.detach().cpu().tolist()
    if len(rows) != len(answers) * repeats:
        raise ValueError(f"{len(rows)} completions for {len(answers)} problems x {repeats}")
    out = np.zeros(len(rows))
    for i, row in enumerate(rows):
        completion = tok.decode(row) if EOS in row else None
        if completion is not None and PAD in row[: row.index(EOS)]:
            completion = None  # a PAD inside the answer is malformed
        out[i] = float(check_completion(completion, answers[i // repeats]))
    return out


def _unordered_pairs(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode triangular indices ``k = hi (hi + 1) / 2 + lo`` into pairs ``lo <= hi``."""
    hi = np.array([(math.isqrt(8 * int(k) + 1) - 1) // 2 for k in ids], dtype=np.int64)
    lo = ids - hi * (hi + 1) // 2
    return lo, hi


def sample_problems(spec: TaskSpec, sizes: dict[str, int], *, seed: int) -> dict[str, Problems]:
    """Disjoint problem sets drawn without replacement, e.g. ``{"sft": 2000, "train": 1000,
    "heldout": 200}``.

    Parameters
    ----------
    spec
        The task.
    sizes
        Name -> number of problems; the total must not exceed ``spec.space_size``.
    seed
        Seed of the ``np.random.Generator`` (problem choice, operand order).

    Returns
    -------
    dict
        Name -> :class:`Problems`, in the order of ``sizes``.
    """
    total = sum(sizes.values())
    if total > spec.space_size:
        raise ValueError(f"asked for {total} problems but the task has only {spec.space_size}")
    rng = np.random.default_rng(seed)
    ids = rng.choice(spec.space_size, size=total, replace=False).astype(np.int64)
    if 10**spec.n_digits == 10**spec.width_b:
        lo, hi = _unordered_pairs(ids)
        swap = rng.random(total) < 0.5
        a, b = np.where(swap, hi, lo), np.where(swap, lo, hi)
    else:
        a, b = ids // 10**spec.width_b, ids % 10**spec.width_b
    out, start = {}, 0
    for name, n in sizes.items():
        out[name] = Problems(spec, a[start : start + n], b[start : start + n])
        start += n
    return out


def cap_binds(problems: Problems, *, share: float, cap_tokens: int = 0) -> np.ndarray:
    """Which problems a length cap on a fixed ``share`` of prompts makes unanswerable.

    A prompt is under the cap when a hash of its operands (the same for a problem
    in any set, whatever the seed) falls below ``share``; the cap binds when the
    answer plus EOS needs more than ``cap_tokens`` tokens (0: the longest answer's
    digits, so only the longest answers cannot end). For 3-digit addition about half
    the sums have 4 digits, so ``share = 0.1`` binds about 5% of prompts: a cap at the
    scale of the claims' tolerances (a cap on every prompt binds half of them).

    Returns
    -------
    numpy.ndarray
        (len(problems),) bool.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"cap_binds: share must be in [0, 1], got {share}")
    if share == 0.0:
        return np.zeros(len(problems), dtype=bool)
    cap = cap_tokens or problems.spec.max_answer_len
    lo, hi = np.minimum(problems.a, problems.b), np.maximum(problems.a, problems.b)
    x = (lo.astype(np.uint64) << np.uint64(32)) | hi.astype(np.uint64)
    with np.errstate(over="ignore"):  # splitmix64's finaliser: wraps by design
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    under = (x >> np.uint64(11)).astype(np.float64) / float(1 << 53) < share
    long = np.array([len(s) + 1 for s in problems.answers]) > cap
    return under & long
