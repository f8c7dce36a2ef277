"""The RL sweep's progress: a bar weighted by estimated run cost, an ETA from the pace so far."""

from __future__ import annotations

import io

import pytest

from scalinglab.studies.rl.config import sweep_config
from scalinglab.studies.rl.sweep_tracker import RunTracker


def test_eta_scales_the_estimated_rest_by_the_measured_pace():
    sweep = sweep_config("v3")
    costs = {
        "sizes": {
            s.name: {"warmup_s": 10.0 * (i + 1), "step_s": 0.01 * (i + 1), "eval_s": 0.5}
            for i, s in enumerate(sweep.sizes)
        }
    }
    log = io.StringIO()
    tr = RunTracker(sweep, costs, file=log, bar=False)
    run_s = 4000 * 0.01 + 81 * 0.5  # 4000 steps, 81 evaluations, size s
    assert tr.estimate("GRPO", "s") == pytest.approx(run_s)
    assert tr.estimate("warm-up", "xl") == 40.0
    tr.add("warm-up", "s", cached=True)  # stored: not to run, not in the total
    tr.add("GRPO", "s", cached=False)
    tr.add("GRPO", "xl", cached=False)
    tr.start()
    assert tr.todo_s == pytest.approx(run_s + tr.estimate("GRPO", "xl"))
    assert tr.eta_s() == pytest.approx(tr.todo_s)  # no pace measured yet: the estimate
    tr.done("GRPO", "s", 2 * run_s)  # the machine runs at half the estimated speed
    assert tr.ratio() == pytest.approx(2.0)
    assert tr.eta_s() == pytest.approx(2 * tr.estimate("GRPO", "xl"))
    lines = log.getvalue().splitlines()
    assert "2 runs to do (1 stored)" in lines[0]
    assert "1/2 runs" in lines[1] and "x2.00 the estimate" in lines[1] and "ETA" in lines[1]
    # each stage at its own pace: a slow warm-up does not slow the GRPO estimate
    tr2 = RunTracker(sweep, costs, file=io.StringIO(), bar=False)
    for stage, size in (("warm-up", "s"), ("warm-up", "m"), ("GRPO", "s"), ("GRPO", "m")):
        tr2.add(stage, size, cached=False)
    tr2.start()
    tr2.done("warm-up", "s", 3 * 10.0)
    assert tr2.ratio("warm-up") == pytest.approx(3.0)
    rest = 3 * 20.0 + 3 * (tr2.estimate("GRPO", "s") + tr2.estimate("GRPO", "m"))
    assert tr2.eta_s() == pytest.approx(rest)  # no GRPO run yet: the overall pace
    tr2.done("GRPO", "s", 0.5 * tr2.estimate("GRPO", "s"))
    assert tr2.ratio("GRPO") == pytest.approx(0.5) and tr2.ratio("warm-up") == pytest.approx(3.0)
    assert tr2.eta_s() == pytest.approx(3 * 20.0 + 0.5 * tr2.estimate("GRPO", "m"))
