"""The interior-optimum walks on synthetic loss surfaces (no training)."""

from __future__ import annotations

import math

import pytest

from scalinglab.studies.optimizers.tuning import config_key, descend_together, path_frame
from scalinglab.studies.optimizers.walk import Ladder, WalkDescent, lr_ladder


def _run(search, objective):
    calls = []

    def evaluate(batch):
        calls.extend(config_key(c) for _, c in batch)
        return [objective(c) for _, c in batch]

    descend_together({"s": search}, evaluate)
    assert len(calls) == len(set(calls)), "a configuration was evaluated twice"
    return calls


def bowl(lr_opt, curvature=1.0):
    return lambda c: curvature * (math.log2(c["lr"]) - math.log2(lr_opt)) ** 2


def test_walk_ends_with_the_optimum_strictly_inside():
    s = WalkDescent({"lr": lr_ladder(0.016)}, {"lr": 0.016, "beta1": 0.9})
    calls = _run(s, bowl(0.004))
    assert s.best["lr"] == 0.004
    assert s.walk_status == {"lr": "interior"} and not s.flagged
    tried = sorted(r["value"] for r in s.path)
    assert tried[0] < 0.004 < tried[-1]  # 0.002 and 0.008 were both tried
    assert {0.002, 0.008} <= set(tried)
    assert len(calls) == 5  # 0.016, 0.008, 0.032, 0.004, 0.002


def test_an_optimum_on_the_grid_edge_extends_the_grid():
    # the optimum lies far below the start: the ladder grows downwards until it is inside
    s = WalkDescent({"lr": lr_ladder(0.008)}, {"lr": 0.008}, max_evals=20)
    _run(s, bowl(1.25e-4))
    assert s.best["lr"] == pytest.approx(1.25e-4)
    assert s.walk_status["lr"] == "interior"
    assert min(r["value"] for r in s.path) == pytest.approx(6.25e-5)


def test_the_safety_cap_flags_the_setting_on_edge():
    s = WalkDescent({"lr": lr_ladder(0.008)}, {"lr": 0.008}, max_evals=4)
    _run(s, bowl(1e-5))
    assert s.walk_status["lr"] == "on_edge" and s.flagged
    assert len(s.path) == 4
    assert s.best["lr"] == min(r["value"] for r in s.path)  # still on the edge of the tried
    assert any("on edge" in w for w in s.edge_warnings())


def test_a_fixed_ladder_end_is_flagged_at_bound():
    s = WalkDescent({"warmup": Ladder((0.0, 0.05, 0.1, 0.2))}, {"warmup": 0.1})
    _run(s, lambda c: c["warmup"])  # best at 0: no value below to make it interior
    assert s.best["warmup"] == 0.0 and s.walk_status["warmup"] == "at_bound" and s.flagged


def test_a_feasible_limit_is_a_constrained_optimum_not_flagged():
    s = WalkDescent({"warmup": Ladder((0.0, 0.05, 0.1, 0.2), limits=(0.0,))}, {"warmup": 0.1})
    _run(s, lambda c: c["warmup"])
    assert s.best["warmup"] == 0.0 and s.walk_status["warmup"] == "at_limit"
    assert not s.flagged and s.edge_warnings() == []
    # the ladder's other end is only where it was cut: still flagged there
    t = WalkDescent({"warmup": Ladder((0.0, 0.05, 0.1, 0.2), limits=(0.0,))}, {"warmup": 0.1})
    _run(t, lambda c: -c["warmup"])
    assert t.walk_status["warmup"] == "at_bound" and t.flagged


def test_a_limit_must_be_an_end_of_a_fixed_ladder():
    with pytest.raises(ValueError, match="limits"):
        Ladder((0.0, 0.05, 0.1), limits=(0.05,))
    with pytest.raises(ValueError, match="limits"):
        Ladder((0.01, 0.02), factor=2.0, limits=(0.01,))


def test_a_start_off_the_ladder_is_walked_from_where_it_is():
    s = WalkDescent({"beta1": Ladder((0.8, 0.9, 0.95))}, {"beta1": 0.85})
    _run(s, lambda c: (c["beta1"] - 0.9) ** 2)
    assert s.best["beta1"] == 0.9 and s.walk_status["beta1"] == "interior"


def test_descent_over_coordinates_ends_interior_in_each():
    lad = {"lr": lr_ladder(0.016), "beta1": Ladder((0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98))}

    def f(c):  # coupled: the best beta1 depends on lr
        x = math.log2(c["lr"] / 0.004)
        return x**2 + 30 * (c["beta1"] - 0.8 - 0.05 * x) ** 2 + 0.5 * x * (c["beta1"] - 0.8)

    s = WalkDescent(lad, {"lr": 0.016, "beta1": 0.95}, max_passes=5)
    _run(s, f)
    assert s.status == "done" and not s.flagged
    assert s.best == {"lr": 0.004, "beta1": 0.8}
    assert s.pass_ >= 2  # the first pass moved, so a second one confirmed nothing moves
    # the path reads as a table; each walk starts with its incumbent
    df = path_frame([s])
    assert (df.groupby(["round", "coordinate"]).decision.first() == "start").all()


def test_a_descent_that_runs_out_of_passes_is_flagged():
    lad = {"lr": lr_ladder(0.016), "beta1": Ladder((0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98))}
    s = WalkDescent(lad, {"lr": 0.016, "beta1": 0.95}, max_passes=1)
    _run(s, lambda c: math.log2(c["lr"] / 0.004) ** 2 + (c["beta1"] - 0.8) ** 2)
    assert s.status == "max_passes" and s.flagged
    assert any("still moving" in w for w in s.edge_warnings())


def test_diverged_runs_count_as_worse_than_any_finite_loss():
    s = WalkDescent({"lr": lr_ladder(0.004)}, {"lr": 0.004})
    _run(s, lambda c: math.nan if c["lr"] > 0.005 else bowl(0.002)(c))
    assert s.best["lr"] == 0.002 and s.walk_status["lr"] == "interior"


def test_a_shared_cache_replays_without_new_evaluations():
    first = WalkDescent({"lr": lr_ladder(0.016)}, {"lr": 0.016})
    _run(first, bowl(0.004))
    again = WalkDescent({"lr": lr_ladder(0.016)}, {"lr": 0.016}, cache=dict(first.cache))
    assert _run(again, bowl(0.004)) == []
    assert again.best == first.best


def test_bad_walks_are_refused():
    with pytest.raises(ValueError, match="factor"):
        Ladder((0.0, 1.0), factor=2.0)
    with pytest.raises(ValueError, match="no value"):
        WalkDescent({"lr": lr_ladder(0.01)}, {"beta1": 0.9})


def test_walk_table_marks_each_walks_optimum_and_flags_the_edge():
    from scalinglab.studies.optimizers.walk import walk_table

    good = WalkDescent({"lr": lr_ladder(0.016)}, {"lr": 0.016}, name="a", stage="A lr w32 1x")
    _run(good, bowl(0.004))
    capped = WalkDescent({"lr": lr_ladder(0.008)}, {"lr": 0.008}, max_evals=3, name="b", stage="x")
    _run(capped, bowl(1e-5))
    t = walk_table(path_frame([good, capped])).set_index("search")
    assert t.loc["a", "best"] == 0.004 and bool(t.loc["a", "interior"])
    assert t.loc["a", "values"] == sorted(t.loc["a", "values"])
    assert t.loc["b", "best"] == 0.004 and not bool(t.loc["b", "interior"])
    assert capped.walk_status["lr"] == "on_edge"  # the table agrees with the walk's own flag
