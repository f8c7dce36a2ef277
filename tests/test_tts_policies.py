"""Policies at matched training: the schedule, determinism, and the quality-order check."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from scalinglab.studies.rl.tasks import sample_problems
from scalinglab.studies.tts import policies as pol


def test_schedule_warms_up_holds_then_decays_to_zero():
    r = pol.Recipe(sft_steps=100, lr=1e-3, warmup_steps=10, decay_steps=20)
    assert r.lr_at(0) == pytest.approx(1e-4) and r.lr_at(9) == pytest.approx(1e-3)
    assert r.lr_at(10) == r.lr_at(79) == pytest.approx(1e-3)  # stable
    assert r.lr_at(80) == pytest.approx(1e-3 * 19 / 20)  # the decay's first step
    assert r.lr_at(90) == pytest.approx(0.45e-3) and r.lr_at(99) == 0.0
    with pytest.raises(ValueError, match="must not exceed"):
        pol.Recipe(sft_steps=10, warmup_steps=5, decay_steps=6)


def test_every_size_gets_the_same_recipe_and_data():
    sweep = pol.rl_class("small")
    cfgs = [pol.policy_config(sweep, s, seed=0) for s in ("s", "m", "l")]
    for key in ("recipe", "task", "sets", "data_seed"):
        assert cfgs[0][key] == cfgs[1][key] == cfgs[2][key], key
    assert len({c["model"]["d_model"] for c in cfgs}) == 3
    assert pol.rl_class("medium") == sweep  # small and medium share policies


def test_policies_learn_a_task_whose_sets_fit_its_problem_space():
    sweep = pol.rl_class("medium")
    assert sweep.task == pol.TTS_TASK and sweep.task.op == "mul"
    sets = sample_problems(
        sweep.task,
        {"sft": sweep.n_sft, "train": sweep.n_train, "heldout": sweep.n_heldout},
        seed=sweep.data_seed,
    )
    seen = [set(zip(sets[k].a.tolist(), sets[k].b.tolist(), strict=True)) for k in sets]
    assert not (seen[0] & seen[2]) and not (seen[1] & seen[2])  # held out means unseen
    held = sets["heldout"]
    assert held.prompts[0].endswith("=") and "*" in held.prompts[0]
    assert len(held.prompts[0]) == sweep.task.prompt_len == 6
    # easy (a factor 0 or 1) and hard prompts are both held out: difficulty varies
    assert 0 < (held.b <= 1).mean() < 0.5


def test_quality_order_flags_a_set_not_ordered():
    ok = pol.quality_order({"s": 0.4, "m": 0.6, "l": 0.7}, ["s", "m", "l"])
    assert ok.ordered and not ok.problems and "ordered by quality" in ok.message()
    bad = pol.quality_order({"s": 0.82, "m": 0.79, "l": 0.46}, ["s", "m", "l"])
    assert not bad.ordered and len(bad.problems) == 2
    assert "m (0.790) is not above s (0.820)" in bad.message()
    tie = pol.quality_order({"s": 0.5, "m": 0.5}, ["s", "m"])
    assert not tie.ordered
    with pytest.raises(ValueError, match="no pass@1"):
        pol.quality_order({"s": 0.5}, ["s", "m"])


def test_training_is_deterministic_and_checks_on_training_prompts():
    sweep = pol.rl_class("tiny")
    cfg = sweep.run_config(sweep.sizes[0], "baseline")
    recipe = pol.Recipe(
        sft_steps=30, lr=3e-3, warmup_steps=5, decay_steps=10, check_every=15, check_prompts=16
    )
    a, info = pol.train_policy(cfg, recipe, seed=3)
    b, _ = pol.train_policy(cfg, recipe, seed=3)
    c, _ = pol.train_policy(cfg, recipe, seed=4)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(a[k], c[k]) for k in a)
    assert [s for s, _ in info["checks"]] == [15, 30]
    assert info["check_pass_rate"] == info["checks"][-1][1] and info["grpo_steps"] == 0
    _, ginfo = pol.train_policy(cfg, dataclasses.replace(recipe, grpo_steps=2), seed=3)
    assert ginfo["checks"][-1][0] == 32 and ginfo["grpo_steps"] == 2
    assert 0.0 <= ginfo["final_grpo_reward"] <= 1.0


def _samples(rates: dict[str, float], *, prompts: int = 200, n: int = 32, seed: int = 0):
    """A sample Dataset whose sizes solve each prompt with probability ``rate``."""
    import numpy as np
    import xarray as xr

    rng = np.random.default_rng(seed)
    corr = np.stack([(rng.random((prompts, n)) < r).astype(np.int8) for r in rates.values()])
    return xr.Dataset(
        {
            "correct": (("size", "prompt", "sample"), corr),
            "answer": (("size", "prompt", "sample"), np.where(corr == 1, 1, 2)),
        },
        coords={"size": list(rates)},
    )


def test_ordering_on_heldout_needs_every_gain_above_zero():
    from scalinglab.studies.tts import analysis as tta

    good = tta.ordering(
        tta.coverage_curves(_samples({"s": 0.3, "m": 0.5, "l": 0.7}), k_max=8, reps=200, seed=0)
    )
    assert good.ordered and set(good.gains) == {"m_vs_s", "l_vs_m"}
    assert good.extremes_ordered and good.extremes[0] == "l_vs_s"
    assert good.extremes[1].point == pytest.approx(0.4, abs=0.03)
    assert all(e.lo > 0 for e in good.gains.values())
    assert good.gains["m_vs_s"].point == pytest.approx(0.2, abs=0.03)
    # point order right but the top gain too small for its interval: not clearly ordered
    close = tta.ordering(
        tta.coverage_curves(_samples({"s": 0.3, "m": 0.5, "l": 0.502}), k_max=8, reps=200, seed=0)
    )
    assert not close.ordered and "l_vs_m" in close.message()
    assert close.extremes_ordered  # l is still clearly stronger than s
    reversed_ = tta.ordering(
        tta.coverage_curves(_samples({"s": 0.82, "m": 0.79, "l": 0.46}), k_max=8, reps=200, seed=0)
    )
    assert not reversed_.ordered and "not ordered" in reversed_.message()
    assert not reversed_.extremes_ordered


def test_interval_coverage_simulates_each_finding_at_its_number_of_prompts():
    import numpy as np

    from scalinglab.studies.tts import analysis as tta

    rng = np.random.default_rng(0)
    values = {
        "smooth": rng.normal(0.1, 0.05, size=200),
        "sparse": np.r_[np.zeros(198), 1.0, 1.0],  # two prompts carry the whole mean
    }
    t = tta.interval_coverage(values, sims=300, resamples=200, seed=0)
    assert set(t["finding"]) == {"smooth", "sparse"} and set(t["n"]) == {200}
    smooth = t[t.finding == "smooth"].set_index("method")["coverage"]
    sparse = t[t.finding == "sparse"].set_index("method")["coverage"]
    assert (smooth > 0.9).all()
    # a mean carried by two prompts in 200 is often resampled without them: no method
    # covers (the table is there to say so)
    assert (sparse < 0.9).all()


def test_a_deciding_finding_states_its_coverage_on_the_prompts_and_the_verdict_repeats_it():
    import numpy as np
    import pytest

    from scalinglab.estimate import Estimate
    from scalinglab.stats.coverage_report import coverage_note, stated_on_data
    from scalinglab.studies.tts import analysis as tta

    values = {"sparse": np.r_[np.zeros(198), 1.0, 1.0]}
    t = tta.interval_coverage(values, sims=300, resamples=200, seed=0)
    est = Estimate(0.01, 0.0, 0.025, level=0.95, method="bootstrap over prompts, percentile", n=200)
    got = tta.state_coverage(est, t, "sparse")
    c, n, se = stated_on_data(got.method)
    want = float(t[(t.finding == "sparse") & (t.method == "percentile bootstrap")].coverage.iloc[0])
    assert n == 200 and c == pytest.approx(want, abs=5e-4) and se > 0
    note = coverage_note({"ci": [0.0, 0.025], "level": 0.95, "method": got.method, "n": 200})
    assert note is not None and note.startswith(
        f"its interval's simulated coverage is {c:.3f} at n = 200"
    )
    with pytest.raises(KeyError, match="no percentile"):
        tta.state_coverage(est, t, "smooth")
