"""The optimizer study's findings rows (studies/optimizers/findings.py) and its claims file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scalinglab.record
from scalinglab.claims_file import claims_for, read_claims_file
from scalinglab.estimate import Estimate
from scalinglab.paths import data_dir, notebooks_dir
from scalinglab.studies.optimizers import analysis, findings, published

CLAIMS = notebooks_dir() / "claims" / "optimizer_comparison.toml"
RELEASED = data_dir() / "published" / "fantastic_optimizers" / "final_losses.csv"


@pytest.fixture(scope="module")
def paper() -> pd.DataFrame:
    return published.load_published(RELEASED)


@pytest.fixture(scope="module")
def seeded(paper) -> pd.DataFrame:
    """The paper's 130M and 300M rows, three seeds each with small loss noise."""
    rng = np.random.default_rng(1)
    base = paper[
        paper.model_size.isin(["130m", "300m"])
        & paper.optimizer.isin(["adamw", "muon", "nadamw", "soape"])
    ]
    parts = []
    for s in range(3):
        t = base.copy()
        t["seed"] = s
        t["loss"] = t.loss + rng.normal(0, 0.003, len(t))
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


def test_row_with_an_interval_carries_level_method_and_resamples():
    rows = findings.Rows(level=0.9, reps=123, baseline="adamw")
    row = rows.row("x", 1.2, 1.0, 1.5, method="m bootstrap", unit="x", headline=True)
    est = row["point"]
    assert isinstance(est, Estimate)
    assert (est.point, est.ci, est.level, est.method, est.resamples) == (
        1.2,
        (1.0, 1.5),
        0.9,
        "m bootstrap",
        123,
    )
    # an interval that resamples nothing states no resamples
    assert rows.row("t", 1.2, 1.0, 1.5, method="Student t over seeds")["point"].resamples is None
    assert row["headline"] is True and row["unit"] == "x"


def test_row_without_a_finite_interval_is_a_point_and_no_headline():
    rows = findings.Rows(level=0.95, reps=10, baseline="adamw")
    half = rows.row("x", 1.2, 1.1, float("nan"), method="m", description="d", headline=True)
    assert half["point"].ci is None and half["point"].method is None
    assert half["headline"] is False
    assert half["description"] == "d (CI [1.1, unbounded above])"
    assert rows.row("y", float("nan"), 0.0, 1.0, method="m") is None
    assert rows.row("z", None, method="m") is None


def test_final_losses_mean_and_interval_over_seeds(seeded, paper):
    final = findings.final_losses(seeded, level=0.95)
    assert len(final) == len(seeded) // 3 and (final.seeds == 3).all()
    want = seeded.groupby(["optimizer", "model_size", "data_multiple"], sort=False).loss.mean()
    np.testing.assert_allclose(final.loss, want.to_numpy())
    assert (final.lo <= final.loss).all() and (final.loss <= final.hi).all()
    # a Student t interval over the seeds (a percentile bootstrap of 3 covers about 0.73)
    g = seeded.groupby(["optimizer", "model_size", "data_multiple"], sort=False).loss
    half = 4.302652729911275 * g.sem().to_numpy()  # t(0.975, 2)
    np.testing.assert_allclose(final.hi - final.loss, half, rtol=1e-9)
    again = findings.final_losses(seeded, level=0.95)
    pd.testing.assert_frame_equal(final, again)
    one = findings.final_losses(paper, level=0.95)
    assert one.lo.isna().all() and one.hi.isna().all()
    rows = findings.Rows(level=0.95, reps=50, baseline="adamw").losses(one)
    assert all(r["description"].endswith("one run") and r["point"].ci is None for r in rows)


def test_speedups_say_how_their_intervals_were_made(seeded, paper):
    one = findings.speedups(paper, baseline="adamw", reps=20, level=0.95, seed=0)
    assert one.one_run and one.method == findings.PARAMETRIC and one.sigma > 0
    assert set(one.identified) == set(published.PAPER_PARAMS)
    many = findings.speedups(seeded, baseline="adamw", reps=20, level=0.95, seed=0)
    assert not many.one_run and many.method == findings.OVER_SEEDS and many.sigma is None
    rows = findings.Rows(level=0.95, reps=20, baseline="adamw")
    speed = rows.speedups(many)
    assert speed and all(r["name"].startswith("speedup/") for r in speed)
    with_ci = [r for r in speed if r["point"].ci is not None]
    assert with_ci and all(r["point"].method == findings.OVER_SEEDS for r in with_ci)
    assert all(r["point"].resamples == 20 and r["point"].level == 0.95 for r in with_ci)
    per = rows.per_size(analysis.speedup_by_size(many.result), many)
    heads = {r["name"] for r in per if r.get("headline")}
    assert heads <= {"speedup_mean/muon/130m", "speedup_mean/muon/300m"}
    # the intervals rest on the 3 seeds (where a report reads their coverage); the
    # paper's one run per cell resamples no units, so its n stays unknown
    assert many.seeds == 3 and one.seeds is None
    assert all(r["point"].n == 3 for r in with_ci + per if r["point"].ci is not None)
    assert all(
        r["point"].n is None for r in rows.per_size(analysis.speedup_by_size(one.result), one)
    )


def test_seed_count_is_the_fewest_seeds_of_any_cell(seeded):
    assert findings.seed_count(seeded) == 3
    assert findings.seed_count(seeded.iloc[1:]) == 2
    assert findings.seed_count(seeded.iloc[:0]) is None
    final = findings.final_losses(seeded, level=0.95)
    rows = findings.Rows(level=0.95, reps=50, baseline="adamw").losses(final)
    assert rows and all(r["point"].n == 3 for r in rows)


def test_rows_record_as_they_are(seeded):
    sp = findings.speedups(seeded, baseline="adamw", reps=20, level=0.95, seed=0)
    rows = findings.Rows(level=0.95, reps=20, baseline="adamw")
    scalinglab.record.clear()
    try:
        for row in rows.baseline_fits(sp) + rows.speedups(sp):
            scalinglab.record.record(**row)
        names = {f.name for f in scalinglab.record.findings()}
        assert {"baseline_fit/E/130m", "speedup/muon/130m/1x"} <= names
    finally:
        scalinglab.record.clear()


def test_helpers_pick_sizes_names_and_budgets(paper):
    assert findings.trend_sizes(
        ["a", "b", "c", "d"], {"a": False, "b": True, "c": True, "d": True}
    ) == (["b", "c", "d"], True)
    assert findings.trend_sizes(["a", "b", "c"], {"a": False, "b": True, "c": True}) == (
        ["a", "b", "c"],
        False,
    )
    assert findings.soap_name(paper) == "soape"
    assert findings.shared_multiples(paper, "muon", "soape") == [1.0, 2.0, 4.0, 8.0]
    n, fam = findings.size_labels(None, ["130m", "1.2b"], ["muon", "adamw", "nadamw"])
    assert n == {"130m": published.PAPER_PARAMS["130m"], "1.2b": published.PAPER_PARAMS["1.2b"]}
    assert fam["muon"] == "matrix" and fam["nadamw"] == "scalar"
    n, _ = findings.size_labels(None, ["big", "small"], ["muon"])
    assert n is None


def _values(design_sizes, **kw):
    return findings.claim_values(
        kw.pop("recorded", []),
        sizes=design_sizes,
        identified=kw.pop("identified", {s: True for s in design_sizes}),
        sweep=kw.pop("sweep", True),
        follower=kw.pop("follower", "soap"),
        multiples=kw.pop("multiples", [1.0, 8.0]),
        ranked=kw.pop("ranked", ("l", 8.0)),
    )


def test_claim_values_choose_design_and_deciding_findings():
    v = _values(["s", "m", "l"], identified={"s": False, "m": True, "l": True})
    assert (v["design"], v["small"], v["large"], v["big"], v["most"]) == (
        "sweep",
        "m",
        "l",
        "l",
        "8",
    )
    assert v["low"] == "1" and v["high"] == "8"
    v = _values(
        ["s", "m"],
        recorded=[
            "t/tau_gain_constant/s/4x",
            "t/tau_gain_constant/pooled",
            "ranking/tau_gain_constant/pooled",  # percentile: decides nothing
            "t/transfer_ratio/muon/s",
            "t/transfer_ratio/muon/m",
            "transfer_ratio/muon/l",  # a percentile finding decides nothing
        ],
    )
    assert v["tau_gain"] == "t/tau_gain_constant/pooled"
    assert (v["transfer"], v["transfer_at"]) == ("t/transfer_ratio/muon/m", " at m")
    assert _values(["130m", "1.2b"], sweep=False, ranked=None)["design"] == "paper"
    assert _values(["1000", "2000"], sweep=False, ranked=None)["design"] == "table"


@pytest.mark.parametrize("design", ["sweep", "paper", "table"])
def test_claims_file_decides_every_claim_in_each_design(design):
    sizes = {"sweep": ["s", "m", "l"], "paper": ["130m", "1.2b"], "table": ["1", "2"]}[design]
    v = _values(sizes, sweep=design == "sweep", ranked=("l", 8.0) if design == "sweep" else None)
    assert v["design"] == design
    small, large = v["small"], v["large"]
    est = {"point": 1.1, "ci": [1.0, 1.2], "level": 0.95, "identified": True}
    # the sweep design decides its speedup claims on the t-over-seeds findings (seed_t)
    t = "t/" if design == "sweep" else ""
    recorded = {
        n: est
        for n in [
            f"{t}speedup_mean/muon/{small}",
            f"{t}speedup_mean/muon/{large}",
            f"{t}speedup_mean/nadamw/{small}",
            f"{t}matrix_over_scalar/{small}",
            f"{t}size_slope/muon",
            f"{t}catch_up/soap_vs_muon/{small}",
            "t/tau_midrun/all" if design == "sweep" else "ranking/tau_midrun/l/8x",
        ]
    }
    claims = claims_for(CLAIMS, v, recorded)
    if design == "sweep":  # the percentile findings alone decide none of them any more
        old = {n.removeprefix("t/"): e for n, e in recorded.items()}
        old["ranking/tau_midrun/l/8x"] = est
        old["transfer_ratio/muon/l"] = est
        stale = {c.id for c in claims_for(CLAIMS, v, old) if c.untested}
        assert {"FPO-1", "FPO-2", "FPO-2b", "FPO-3", "FPO-3b", "FPO-4", "FPO-5", "FPO-6"} <= stale
    ids = [c.id for c in claims]
    assert ids == [
        "FPO-1",
        "FPO-2",
        "FPO-2b",
        "FPO-3",
        "FPO-3b",
        "FPO-4",
        "FPO-6",
        "FPO-5",
        "FPO-5b",
        "FPO-7",
    ]
    assert all(c.scope and c.regime for c in claims)
    untested = {c.id for c in claims if c.untested}
    assert untested == ({"FPO-5b", "FPO-7"} if design == "sweep" else {"FPO-5", "FPO-5b", "FPO-7"})
    if design == "sweep":
        pinned = {c.id: c.regime for c in claims}
        assert "cannot contradict" in pinned["FPO-2b"] and "cannot contradict" in pinned["FPO-3b"]


def test_claims_file_reads_with_four_designs():
    specs = read_claims_file(CLAIMS)
    assert {d for s in specs for d in s.designs} == {"sweep", "paper", "table", "matched"}
    assert len(specs) == 40
    # the matched design states every paper claim (FPO-1 to FPO-7), per size where it can
    matched = [s for s in specs if s.designs == ["matched"]]
    assert {s.id.split("/")[0] for s in matched} == {
        "FPO-1", "FPO-2", "FPO-2b", "FPO-3", "FPO-3b", "FPO-4", "FPO-5", "FPO-5b", "FPO-6", "FPO-7"
    }  # fmt: skip
    assert all(
        s.raw.get("scope") == "paper" and s.raw["regime"].startswith("outside") for s in matched
    )


def test_the_family_gap_counts_the_baseline_at_zero_and_works_on_replicates():
    from scalinglab.studies.optimizers.analysis import family_log_gap

    assert family_log_gap([0.4, 0.2], [0.1]) == pytest.approx(0.2)
    # AdamW among the scalars at log speedup 0: (0.3) - (0.1 + 0) / 2
    assert family_log_gap([0.4, 0.2], [0.1], with_baseline=True) == pytest.approx(0.25)
    assert family_log_gap([0.4], [], with_baseline=True) == pytest.approx(0.4)
    reps = family_log_gap([np.array([0.4, 0.6])], [np.array([0.2, 0.0])], with_baseline=True)
    assert reps == pytest.approx([0.3, 0.6])
    with pytest.raises(ValueError, match="matrix and a scalar"):
        family_log_gap([0.4], [])
