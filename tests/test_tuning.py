"""Coordinate descent: finds a known optimum, stops by the tolerance rule, records its path."""

from __future__ import annotations

import math

import pytest

from scalinglab.studies.optimizers.tuning import (
    CoordinateDescent,
    config_key,
    coordinate_descent,
    descend_together,
    path_dataset,
    path_frame,
)

GRID = {"lr": (0.001, 0.01, 0.1, 1.0), "wd": (0.0, 0.1, 0.2), "warmup": (0, 10, 100)}


def bowl(c):
    """Separable, minimum at lr=0.1, wd=0.1, warmup=10 (value 0)."""
    return (
        (math.log10(c["lr"]) + 1) ** 2
        + 10 * (c["wd"] - 0.1) ** 2
        + (math.log10(c["warmup"] + 1) - math.log10(11)) ** 2
    )


def test_finds_the_known_optimum_and_converges():
    calls = []

    def f(c):
        calls.append(config_key(c))
        return bowl(c)

    s = coordinate_descent(f, GRID, {"lr": 0.001, "wd": 0.2, "warmup": 100, "fixed": 7})
    assert s.best == {"lr": 0.1, "wd": 0.1, "warmup": 10, "fixed": 7}
    assert s.current_value == pytest.approx(0.0)
    assert s.status == "converged" and s.round == 2  # one pass moves, the next confirms
    assert len(calls) == len(set(calls))  # every configuration evaluated once


def test_stops_when_no_single_change_beats_the_tolerance():
    def f(c):  # the best change of lr improves by 0.004 only
        return 1.0 - 0.004 * (c["lr"] == 0.1) - 0.5 * (c["wd"] == 0.1)

    strict = coordinate_descent(f, GRID, {"lr": 0.01, "wd": 0.1, "warmup": 10}, tol=0.005)
    assert strict.best["lr"] == 0.01 and strict.status == "converged" and strict.round == 1
    loose = coordinate_descent(f, GRID, {"lr": 0.01, "wd": 0.1, "warmup": 10}, tol=0.001)
    assert loose.best["lr"] == 0.1


def test_coupled_objective_needs_more_rounds_and_max_rounds_caps_them():
    grid = {"x": tuple(range(6)), "y": tuple(range(6))}

    def f(c):  # coupled x and y; a local walk moves each one step per pass
        return 0.5 * (c["x"] - c["y"]) ** 2 + (c["x"] - 5) ** 2 + (c["y"] - 5) ** 2

    full = coordinate_descent(f, grid, {"x": 0, "y": 0}, neighborhood=1)
    assert full.best == {"x": 5, "y": 5} and full.round > 2
    capped = coordinate_descent(f, grid, {"x": 0, "y": 0}, neighborhood=1, max_rounds=2)
    assert capped.status == "max_rounds" and capped.best != {"x": 5, "y": 5}


def test_neighborhood_only_proposes_adjacent_grid_values():
    s = CoordinateDescent(
        grid=GRID, start={"lr": 0.01, "wd": 0.1, "warmup": 10}, coords=("lr",), neighborhood=1
    )
    assert s.ask() == [{"lr": 0.01, "wd": 0.1, "warmup": 10}]
    s.tell(s.ask(), [1.0])
    assert sorted(c["lr"] for c in s.ask()) == [0.001, 0.1]


def test_non_finite_objective_counts_as_worst():
    def f(c):
        return math.nan if c["lr"] == 1.0 else bowl(c)

    s = coordinate_descent(f, GRID, {"lr": 1.0, "wd": 0.1, "warmup": 10})
    assert s.best["lr"] == 0.1


def test_lockstep_searches_batch_their_evaluations_and_path_is_recorded():
    batches = []

    def evaluate(batch):
        batches.append(len(batch))
        return [bowl(c) + (0.01 if lab == "b" else 0.0) for lab, c in batch]

    searches = {
        lab: CoordinateDescent(
            grid=GRID, start={"lr": 1.0, "wd": 0.0, "warmup": 0}, name=lab, stage="base"
        )
        for lab in ("a", "b")
    }
    descend_together(searches, evaluate)
    assert all(s.best == {"lr": 0.1, "wd": 0.1, "warmup": 10} for s in searches.values())
    assert batches[0] == 2 and max(batches) == 2 * 3  # both searches in every batch
    df = path_frame(searches)
    assert set(df.search) == {"a", "b"}
    assert (df.decision == "start").sum() == 2 and (df.decision == "moved").sum() >= 6
    for _, g in df.groupby("search"):
        inc = g.incumbent.to_numpy()
        assert (inc[1:] <= inc[:-1] + 1e-15).all()  # the incumbent never gets worse
    ds = path_dataset(searches)
    assert ds.sizes["evaluation"] == len(df) and "objective" in ds


def test_edge_of_grid_is_flagged():
    s = coordinate_descent(lambda c: -c["lr"], GRID, {"lr": 0.01, "wd": 0.1, "warmup": 10})
    assert any("lr=1.0 is at the edge" in w for w in s.edge_warnings())


def test_zero_at_the_low_end_is_not_an_edge():
    s = coordinate_descent(lambda c: c["wd"] + c["lr"], GRID, {"lr": 0.01, "wd": 0.1, "warmup": 10})
    assert s.best["wd"] == 0.0 and s.best["lr"] == 0.001
    warns = s.edge_warnings()
    assert not any("wd=" in w for w in warns) and any("lr=0.001" in w for w in warns)


def test_grid_extends_past_an_edge_until_the_optimum_is_inside():
    # optimum at lr = 10: two extensions past the top (1 -> 10 -> 100) bracket it
    def f(c):
        return (math.log10(c["lr"]) - 1) ** 2 + (c["wd"] - 0.1) ** 2

    s = coordinate_descent(f, GRID, {"lr": 0.01, "wd": 0.1, "warmup": 10}, extend={"lr": 10.0})
    assert s.best["lr"] == pytest.approx(10.0)
    assert s.grid["lr"][-2:] == (10.0, 100.0) and not s.edge_warnings()
    # the lower side, and the cap: the optimum at 1e-9 is beyond 3 extensions of 10x
    s = coordinate_descent(
        lambda c: c["lr"], GRID, {"lr": 0.01, "wd": 0.1, "warmup": 10}, extend={"lr": 10.0}
    )
    assert s.best["lr"] == pytest.approx(1e-6) and s.extended[("lr", "down")] == 3
    assert any("is at the edge" in w for w in s.edge_warnings())
    with pytest.raises(ValueError, match="factors must be > 1"):
        CoordinateDescent(grid=GRID, start={}, extend={"lr": 1.0})
