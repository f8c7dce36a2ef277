"""The RL sweep's progress: a bar weighted by estimated run cost, an ETA from the pace so far."""

from __future__ import annotations

import io

import pytest

from scalinglab.studies.rl.config import sweep_config
from scalinglab.studies.rl.progress import RunTracker


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
