"""Arithmetic tasks: prompts, answers, the exact checker, disjoint prompt sets."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scalinglab.models import EOS, PAD, arithmetic_tokenizer
from scalinglab.studies.rl.tasks import (
    Problems,
    TaskSpec,
    cap_binds,
    check_completion,
    format_answer,
    sample_problems,
    score_completions,
)


def _problems(spec, pairs):
    a, b = (np.array(x, dtype=np.int64) for x in zip(*pairs, strict=True))
    return Problems(spec, a, b)


def test_prompts_and_answers_by_hand():
    add = _problems(TaskSpec(op="add", n_digits=3), [(42, 917), (999, 1)])
    assert add.prompts == ["042+917=", "999+001="]
    assert add.answers == ["959", "1000"]
    rev = _problems(TaskSpec(op="add", n_digits=3, reverse_answer=True), [(42, 917), (999, 1)])
    assert rev.answers == ["959", "0001"]
    mul = _problems(TaskSpec(op="mul", n_digits=2, n_digits_b=1), [(12, 7), (0, 5)])
    assert mul.prompts == ["12*7=", "00*5="] and mul.answers == ["84", "0"]
    mod = _problems(TaskSpec(op="mod", n_digits=2, modulus=13), [(12, 7)])
    assert mod.prompts == ["12*07%13="] and mod.answers == [str(84 % 13)]


@pytest.mark.parametrize(
    "spec",
    [
        TaskSpec(op="add", n_digits=2),
        TaskSpec(op="mul", n_digits=2),
        TaskSpec(op="mod", n_digits=3, modulus=101),
        TaskSpec(op="mul", n_digits=3, n_digits_b=1),
    ],
)
def test_lengths_are_fixed_and_answers_fit(spec):
    p = sample_problems(spec, {"x": 300}, seed=0)["x"]
    assert {len(q) for q in p.prompts} == {spec.prompt_len}
    assert max(len(a) for a in p.answers) <= spec.max_answer_len
    # answers agree with Python's own integer arithmetic on the prompt text
    for q, ans in zip(p.prompts, p.answers, strict=True):
        lhs = q.rstrip("=").split("%")
        x, y = (int(t) for t in lhs[0].replace("*", "+").split("+"))
        val = x + y if spec.op == "add" else x * y
        if spec.op == "mod":
            val %= int(lhs[1])
        assert ans == str(val)


@pytest.mark.parametrize(
    ("completion", "ok"),
    [
        ("959", True),
        ("0959", False),
        ("95", False),
        ("9590", False),
        ("", False),
        ("95a", False),
        (" 959", False),
        ("+959", False),
        ("959=", False),
        (None, False),
    ],
)
def test_checker_is_exact(completion, ok):
    assert check_completion(completion, "959") is ok


def test_score_completions_handles_malformed_rows():
    tok = arithmetic_tokenizer()
    probs = _problems(TaskSpec(op="add", n_digits=2), [(12, 30), (5, 5)])  # 42, 10
    rows = [
        tok.encode("42", eos=True) + [PAD],  # right
        tok.encode("42"),  # no EOS: truncated -> wrong
        tok.encode("42", eos=True) + tok.encode("7"),  # junk after EOS is ignored
        tok.encode("4") + [PAD, EOS],  # PAD inside the answer
        tok.encode("10", eos=True) + [PAD],  # right for problem 2
        tok.encode("01", eos=True) + [PAD],  # leading zero
    ]
    width = max(len(r) for r in rows)
    t = torch.tensor([r + [PAD] * (width - len(r)) for r in rows])
    scores = score_completions(t, probs, repeats=3)
    assert scores.tolist() == [1, 0, 1, 0, 1, 0]
    with pytest.raises(ValueError, match="completions"):
        score_completions(t[:5], probs, repeats=3)


def test_prompt_sets_are_disjoint_even_under_commutation():
    spec = TaskSpec(op="add", n_digits=2)
    sets = sample_problems(spec, {"sft": 2000, "train": 1500, "heldout": 500}, seed=3)
    keys = {
        name: {(min(a, b), max(a, b)) for a, b in zip(p.a, p.b, strict=True)}
        for name, p in sets.items()
    }
    assert [len(k) for k in keys.values()] == [2000, 1500, 500]  # no duplicates inside
    assert not keys["sft"] & keys["train"]
    assert not keys["sft"] & keys["heldout"]
    assert not keys["train"] & keys["heldout"]
    both_orders = {(a < b) for a, b in zip(sets["sft"].a, sets["sft"].b, strict=True)}
    assert both_orders == {True, False}


def test_prompt_sets_are_seeded():
    spec = TaskSpec(op="mul", n_digits=3, n_digits_b=2)
    a = sample_problems(spec, {"x": 50, "y": 50}, seed=1)
    b = sample_problems(spec, {"x": 50, "y": 50}, seed=1)
    c = sample_problems(spec, {"x": 50, "y": 50}, seed=2)
    assert a["y"].prompts == b["y"].prompts and a["y"].prompts != c["y"].prompts
    assert not set(a["x"].prompts) & set(a["y"].prompts)


def test_too_many_problems_is_an_error():
    spec = TaskSpec(op="add", n_digits=1)
    assert spec.space_size == 55
    sample_problems(spec, {"all": 55}, seed=0)
    with pytest.raises(ValueError, match="only 55"):
        sample_problems(spec, {"a": 50, "b": 6}, seed=0)


def test_sft_tensor_targets_answer_and_eos():
    spec = TaskSpec(op="add", n_digits=2)
    p = _problems(spec, [(12, 30), (99, 99)])
    tokens, mask = p.sft_tensor()
    tok = arithmetic_tokenizer()
    assert tok.decode(tokens[0]) == "12+30=42"
    assert tokens[0].tolist()[spec.prompt_len + 2] == EOS
    assert mask.sum(1).tolist() == [3, 4]  # "42"+EOS, "198"+EOS
    assert not mask[:, : spec.prompt_len].any()


def test_format_answer_and_spec_validation():
    assert format_answer(1200, reverse=True) == "0021"
    with pytest.raises(ValueError, match="op"):
        TaskSpec(op="div")


def test_length_cap_on_a_share_of_prompts_binds_only_long_answers():
    spec = TaskSpec(op="add", n_digits=3, reverse_answer=True)
    sets = sample_problems(spec, {"a": 20000, "b": 4000}, seed=3)
    long = np.array([len(x) == spec.max_answer_len for x in sets["a"].answers])
    assert not cap_binds(sets["a"], share=0.0).any()
    np.testing.assert_array_equal(cap_binds(sets["a"], share=1.0), long)  # every long sum
    binds = cap_binds(sets["a"], share=0.1)
    assert not binds[~long].any()  # a sum that fits is never cut
    # about a tenth of the long sums (about half of all): a few percent of prompts
    assert 0.08 < binds[long].mean() < 0.12 and 0.03 < binds.mean() < 0.07
    # the choice is a property of the problem: the same in any set, in either operand order
    p = sets["a"].subset(slice(0, 500))
    swapped = Problems(spec, p.b, p.a)
    np.testing.assert_array_equal(cap_binds(p, share=0.3), cap_binds(swapped, share=0.3))
    # a larger share caps a superset
    assert (cap_binds(sets["b"], share=0.2) >= cap_binds(sets["b"], share=0.1)).all()
    # a cap above every answer binds nothing
    assert not cap_binds(sets["a"], share=1.0, cap_tokens=spec.max_answer_len + 1).any()
    with pytest.raises(ValueError, match="share"):
        cap_binds(p, share=1.5)
