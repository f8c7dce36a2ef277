"""ScaleRL's scope (studies/rl/scope.py): the issue's rule that a run ending more than 0.1
below its peak is unstable; the pooled sigmoids use the stable runs only, a size with
fewer than 3 stable runs is not fitted, and the unstable runs are counted apart."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from scalinglab.studies.rl import analysis as rla
from scalinglab.studies.rl import asymptote, scope
from scalinglab.studies.rl import findings as rlf
from scalinglab.studies.rl.stopping import run_outcomes

C = np.linspace(0.0, 1e12, 26)


def _run(size, k, variant, sd, y):
    return [
        {
            "model_size": size,
            "n_params": 1e4 * 10**k,
            "variant": variant,
            "seed": sd,
            "step": i,
            "compute": c,
            "pass_rate": v,
        }
        for i, (c, v) in enumerate(zip(C, y, strict=True))
    ]


def _curves(collapse: dict[tuple[str, str], set[int]], *, seed=0) -> pd.DataFrame:
    """4 runs per (variant, size) of a sigmoid from R0 = 0.2 to A = 0.7 (C_mid 1e11);
    the runs named in ``collapse[(variant, size)]`` fall to 0.3 over their last third
    (0.4 below their peak: unstable by the issue's rule)."""
    rng = np.random.default_rng(seed)
    rows = []
    for variant in ("baseline", "half_lr"):
        for k, size in enumerate(("s", "m", "l")):
            for sd in range(4):
                y = np.full(C.shape, 0.2)
                y[1:] = 0.2 + 0.5 / (1 + (1e11 / C[1:]) ** 2.0)
                y[1:] += rng.normal(0, 0.01, C.size - 1)
                if sd in collapse.get((variant, size), set()):
                    y[-8:] = np.linspace(y[-9], 0.3, 8)
                rows += _run(size, k, variant, sd, np.clip(y, 0, 1))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def setup():
    # m: one baseline run collapses (3 stable); l: three do (1 stable: not fitted);
    # half_lr: every run stable
    df = _curves({("baseline", "m"): {1}, ("baseline", "l"): {0, 1, 3}})
    out = run_outcomes(df)
    tab = scope.run_scope(out)
    stable = scope.stable_curves(df, out)
    table, fits = rla.fit_scalerl(stable, reps=40, seed=0)
    return df, out, tab, stable, table, fits


def test_a_collapsing_run_is_counted_unstable_and_left_out_of_the_pooled_fit(setup):
    df, out, tab, stable, table, fits = setup
    assert tab.loc[("baseline", "m"), ["runs", "stable", "unstable"]].tolist() == [4, 3, 1]
    assert bool(tab.loc[("baseline", "m"), "fitted"]) and tab.loc[("baseline", "m"), "why"] is None
    m = stable[(stable["variant"] == "baseline") & (stable["model_size"] == "m")]
    assert sorted(m["seed"].unique()) == [0, 2, 3]  # the collapsed run 1 is gone
    row = table[(table["variant"] == "baseline") & (table["model_size"] == "m")].iloc[0]
    assert row["n_seeds"] == 3
    # without the collapse the fit finds the runs' asymptote; with it, it would not
    assert row["A"] == pytest.approx(0.7, abs=0.03)
    t_all, _ = rla.fit_scalerl(df[df["variant"] == "baseline"], reps=1, seed=0)
    a_all = float(t_all.loc[t_all["model_size"] == "m", "A"].iloc[0])
    assert abs(a_all - 0.7) > abs(row["A"] - 0.7)
    # the unstable runs one by one, with peak and end
    u = scope.unstable_table(out)
    assert len(u) == 4 and set(u["model_size"]) == {"m", "l"}
    assert (u["drop"] > 0.1).all() and (u["peak"] > u["final"]).all()
    # the share per arm: a Wilson interval over the arm's runs, counts per size
    named = {n.name: n.estimate for n in scope.unstable_findings(tab, arms=["baseline", "half_lr"])}
    share = named["unstable/baseline/share"]
    assert share.point == pytest.approx(4 / 12) and "Wilson" in share.method and share.n == 12
    assert 0 < share.lo < 4 / 12 < share.hi < 1
    assert named["unstable/half_lr/share"].point == 0.0 and named["unstable/half_lr/share"].hi > 0
    assert named["unstable/baseline/l/runs"].point == 3.0


def test_a_size_with_fewer_than_two_stable_runs_is_not_identified_never_fitted(setup):
    df, out, tab, stable, table, fits = setup
    assert not bool(tab.loc[("baseline", "l"), "fitted"])
    assert "too few stable runs: 1 of 4" in tab.loc[("baseline", "l"), "why"]
    assert ("baseline", "l") not in fits and ("half_lr", "l") in fits
    per_seed = scope.stable_rows(rla.per_seed_sigmoids(df), out)
    a = asymptote.bound_table(table, fits, per_seed, base="baseline", scope=tab)
    assert list(a.index) == ["s", "m", "l"] and a["stable"].tolist() == [4, 3, 1]
    assert not bool(a.loc["l", "identified"]) and math.isnan(a.loc["l", "A"])
    assert "too few stable runs" in a.loc["l", "why"]
    count = {n.name: n.estimate for n in asymptote.bound_findings(a, base="baseline")}
    assert count["scalerl/A_identified_sizes"].point == 2.0
    assert "l: not identified (too few stable runs" in count["scalerl/A_identified_sizes"].note
    # its findings exist (a claim on them reads not identified), NaN with the reason
    nf = {n.name: n.estimate for n in scope.not_fitted_findings(tab, variant="baseline")}
    assert set(nf) == {
        "scalerl/l/A",
        "scalerl/l/B",
        "scalerl/l/C_mid",
        "scalerl/l/A_pred_error",
        "scalerl/l/rmse",
        "extrapolation/l/mae",
    }
    assert all(not e.identified and math.isnan(e.point) and "1 of 4" in e.note for e in nf.values())
    # the secondary arm is decided by the same rule, under its own names: all 3 sizes
    h = asymptote.bound_table(table, fits, per_seed, base="half_lr", scope=tab)
    hn = {
        n.name: n.estimate
        for n in asymptote.bound_findings(h, base="half_lr", prefix="scalerl/half_lr")
    }
    assert hn["scalerl/half_lr/A_identified_sizes"].point == 3.0
    assert scope.not_fitted_findings(tab, variant="half_lr") == []
    sig = {
        n.name: n
        for n in rlf.sigmoid_findings(
            table, fits, base="half_lr", prefix="scalerl/half_lr", params=("A",), headline=False
        )
    }
    assert set(sig) == {f"scalerl/half_lr/{s}/A" for s in ("s", "m", "l")}
    assert not any(n.headline for n in sig.values())
    # the claims' regime names the stable runs per size
    text = scope.regime_text(tab, variant="baseline", sizes=["s", "m", "l"])
    assert text.endswith("s 4 of 4, m 3 of 4, l 1 of 4 (not fitted)")


def test_run_scope_needs_the_unstable_column():
    with pytest.raises(KeyError, match="unstable"):
        scope.run_scope(pd.DataFrame({"variant": ["b"], "model_size": ["s"]}))


def test_the_evaluation_the_rule_judged_is_held_out_of_the_stable_curves(setup):
    df, out, *_ = setup
    held = scope.stable_curves(df, out)
    full = scope.stable_curves(df, out, hold_out=0)
    per_run = full.groupby(scope.RUN).size()
    assert (held.groupby(scope.RUN).size() == per_run - scope.JUDGED).all()
    # exactly each run's last step is gone
    last = full.groupby(scope.RUN)["step"].max().rename("last").reset_index()
    m = held.merge(last, on=scope.RUN)
    assert (m["step"] < m["last"]).all()
    assert len(full) - len(held) == len(per_run)
    with pytest.raises(ValueError, match="hold_out"):
        scope.stable_curves(df, out, hold_out=-1)


def _plateau_runs(n_runs: int, *, sd: float, seed: int) -> pd.DataFrame:
    """Runs that rise to a plateau at 0.75 and then swing by ``sd`` from one evaluation
    to the next (independent draws): no run falls for good, so the rule selects them on
    the phase of their last evaluation only."""
    rng = np.random.default_rng(seed)
    rows = []
    for sd_ in range(n_runs):
        y = np.full(C.shape, 0.2)
        y[1:] = 0.2 + 0.55 / (1 + (1e10 / C[1:]) ** 3.0) + rng.normal(0, sd, C.size - 1)
        rows += _run("l", 2, "baseline", sd_, np.clip(y, 0, 1))
    return pd.DataFrame(rows)


def test_the_rule_selects_the_last_evaluation_and_the_jumps_show_it():
    df = _plateau_runs(300, sd=0.06, seed=3)
    out = run_outcomes(df)
    assert 0.2 < out["unstable"].mean() < 0.9  # the rule cuts on the last swing
    stable_jumps = scope.end_jumps(scope.stable_curves(df, out, hold_out=0))
    all_jumps = scope.end_jumps(df)
    # over all runs neither point is special; among the stable ones the judged one is high
    assert abs(all_jumps["judged"].mean()) < 0.01
    assert stable_jumps["judged"].mean() > 0.03
    assert abs(stable_jumps["kept"].mean()) < 0.01
    f = {
        x.name: x.estimate for x in scope.end_jump_findings(df, out, arms=["baseline"], level=0.95)
    }
    judged, kept = f["scope/baseline/l/jump_judged"], f["scope/baseline/l/jump_kept"]
    assert judged.lo > 0.02 and kept.lo < 0 < kept.hi
    assert judged.n == len(stable_jumps)


def test_end_jumps_needs_enough_evaluations():
    df = _plateau_runs(2, sd=0.01, seed=0)
    with pytest.raises(ValueError, match="needs 7"):
        scope.end_jumps(df[df["step"] < 6])


def test_end_jump_findings_leave_out_runs_too_short_for_the_window():
    df = _plateau_runs(4, sd=0.01, seed=0)
    short = df[df["step"] < 6]
    out = run_outcomes(short)
    assert scope.end_jump_findings(short, out, arms=["baseline"]) == []
    assert len(scope.end_jump_findings(df, run_outcomes(df), arms=["baseline"])) == 2
