"""The long width-depth family (SPARSE-4 on identified limits): its stated design, its
analysis on synthetic curves, and the claim it decides."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.studies.sparsity import findings as sf
from scalinglab.studies.sparsity import long_runs, wd_limits, wd_runs
from scalinglab.studies.sparsity.long_config import (
    LONG_WD,
    LONG_WD_HORIZON,
    long_configs,
    long_wd_configs,
)

# ----------------------------------------------------------------------------- design


def test_the_family_shares_xs_parameters_horizon_recipe_and_corpus_and_only_the_shape_moves():
    xs = long_configs("small")["size-xs"]
    fam = long_wd_configs("small")
    assert list(fam) == ["wd-u2", "wd-u4"]
    n_xs = xs.model_config(xs.models[0], "relu").n_params()
    ratios = {}
    for name, cfg in fam.items():
        (m,) = cfg.models
        n = cfg.model_config(m, "relu").n_params()
        assert abs(n / n_xs - 1) < 0.05, (name, n, n_xs)  # one parameter count
        assert cfg.tokens / n == pytest.approx(LONG_WD_HORIZON.tokens_per_param, rel=1e-3)
        assert cfg.activations == ("relu",) and cfg.seeds == (0, 1, 2, 3, 4)
        assert m.n_head == xs.models[0].n_head == 2
        assert cfg.n_checkpoints == 24 and cfg.checkpoint_steps()[0] == xs.checkpoint_steps()[0]
        for field in ("corpus", "lr", "batch_size", "seq_len", "weight_decay", "device"):
            assert getattr(cfg, field) == getattr(xs, field), field
        ratios[m.name] = m.d_model / m.n_layer
        assert cfg.compute_class == f"small-long-wd-{m.name}"
    assert ratios == {"u2": 6.0, "u4": 2.0}
    assert xs.models[0].d_model / xs.models[0].n_layer == 16.0
    assert LONG_WD_HORIZON.tokens_per_param == 8000.0
    assert [m.name for m in LONG_WD] == ["u2", "u4"]
    assert long_wd_configs("tiny") == {}
    with pytest.raises(ValueError, match="compute_class"):
        long_wd_configs("medium")


def test_an_unknown_shape_is_named_with_the_shapes_there_are():
    with pytest.raises(ValueError, match=r"no \['wd-q'\]: its shapes are \['wd-u2', 'wd-u4'\]"):
        wd_runs.run_long_wd("small", shapes=("wd-q",))


# ----------------------------------------------------------------------------- analysis
_SHAPES = {"u4": (8, 4, 3400.0), "u2": (12, 2, 3516.0), "xs": (16, 1, 3376.0)}


def _shape(
    model: str,
    ratio,
    *,
    seeds: int = 5,
    noise: float = 1e-3,
    seed: int = 0,
    end: float = 8000.0,
    looks: int = 1,
):
    """ReLU curves of one shape: ``ratio(tokens_per_param)`` plus an offset per seed and
    noise per checkpoint, 14 checkpoints from 2 to ``end`` tokens per parameter."""
    rng = np.random.default_rng(seed)
    d, layers, n = _SHAPES[model]
    rows = []
    for s in range(seeds):
        off = 0.002 * rng.normal()
        for tpp in np.geomspace(2.0, end, 14):
            rows.append(
                {
                    "activation": "relu",
                    "model": model,
                    "seed": s,
                    "run": f"{model}/relu/{s}",
                    "tokens": tpp * n,
                    "tokens_per_param": tpp,
                    "n_params": n,
                    "d_model": d,
                    "n_layer": layers,
                    "width_depth_ratio": d / layers,
                    "activation_ratio": float(ratio(tpp)) + off + noise * rng.normal(),
                    "natural_ratio": 0.5,
                    "loss": 2.0 - 0.05 * np.log10(tpp) + 0.01 * rng.normal(),
                    "usable": True,
                    "looks": looks,
                }
            )
    return pd.DataFrame(rows)


def _family(u4, u2=lambda t: 0.22, xs=lambda t: 0.25) -> pd.DataFrame:
    return pd.concat(
        [_shape("u4", u4, seed=1), _shape("u2", u2, seed=2), _shape("xs", xs, seed=3)],
        ignore_index=True,
    )


def _step(wdf):
    return sf.width_depth_limits(wdf, min_trend=0.05, reps=20, level=0.95, seed=0, coverage_sims=4)


def test_every_pair_of_identified_shapes_is_compared_per_10x_width_depth():
    step = _step(_family(lambda t: 0.18))
    est = {f.name: f.estimate for f in step.findings}
    assert {n for n in est if n.endswith("A0_relative_slope")} == {
        "long_wd/relu/u4-u2/A0_relative_slope",
        "long_wd/relu/u4-xs/A0_relative_slope",
        "long_wd/relu/u2-xs/A0_relative_slope",
    }
    main = est["long_wd/relu/u4-xs/A0_relative_slope"]
    want = (0.25 - 0.18) / ((0.25 + 0.18) / 2) / np.log10(16 / 2)
    assert main.point == pytest.approx(want, abs=0.02)
    assert 0 < main.lo < main.point < main.hi
    for m, r in (("u4", 2.0), ("u2", 6.0), ("xs", 16.0)):
        assert est[f"long_wd/relu/{m}/width_depth"].point == r
        assert est[f"long_wd/relu/{m}/A0"].identified
    desc = {f.name: f.description for f in step.findings}
    assert "decides deeper-sparser" in desc["long_wd/relu/u4-xs/A0_relative_slope"]
    assert "not in the verdict" in desc["long_wd/relu/u2-xs/A0_relative_slope"]
    assert list(step.table["pair"]) == ["u4-u2", "u4-xs", "u2-xs"]
    assert set(step.extra["A0"]) == {"u4", "u2", "xs"}


def test_a_shape_still_falling_has_no_limit_and_enters_no_pair():
    step = _step(_family(lambda t: 0.30 - 0.04 * np.log10(t)))
    est = {f.name: f.estimate for f in step.findings}
    assert not est["long_wd/relu/u4/A0"].identified
    assert {n for n in est if n.endswith("A0_relative_slope")} == {
        "long_wd/relu/u2-xs/A0_relative_slope"
    }
    assert any("not identified at u4" in m for m in step.messages)


def test_the_frame_joins_the_family_to_xs_relu_and_needs_both():
    fam = _family(lambda t: 0.18)
    ldf = pd.concat(
        [fam[fam["model"] == "xs"], fam[fam["model"] == "xs"].assign(activation="silu")]
    )
    got = wd_limits.width_depth_frame(ldf, fam[fam["model"] != "xs"])
    assert set(zip(got["model"], got["activation"], strict=True)) == {
        ("xs", "relu"),
        ("u2", "relu"),
        ("u4", "relu"),
    }
    assert wd_limits.width_depth_frame(None, fam) is None
    assert wd_limits.width_depth_frame(ldf, None) is None
    assert wd_limits.width_depth_frame(ldf[ldf["model"] == "q"], fam) is None


# ----------------------------------------------------------------------------- the claim
@pytest.mark.parametrize(
    ("u4", "want"),
    [(0.18, "holds at our scale"), (0.32, "differs at our scale"), (0.25, "inconclusive")],
)
def test_deeper_sparser_is_decided_on_the_extreme_pair_and_can_fail(u4, want, sparsity_claims):
    values, got = sparsity_claims(_step(_family(lambda t, a=u4: a)).findings, {"deeper-sparser"})
    v = got["deeper-sparser"]
    assert [e["name"] for e in v.evidence] == ["long_wd/relu/u4-xs/A0_relative_slope"]
    assert v.verdict == want, v.reason
    assert "u4 8 x 4 (width/depth 2, 3.4k, F 24)" in v.claim.statement
    assert values["wd_ratios"] == "2-16" and values["wd_params"] == "3.4k-3.5k"
    assert v.claim.regime.startswith("outside")


def test_deeper_sparser_is_untested_when_the_family_is_missing_or_a_limit_is_not_identified(
    sparsity_claims,
):
    _, got = sparsity_claims([], {"deeper-sparser"})
    v = got["deeper-sparser"]
    assert v.verdict == "untested" and "long_runs run --design wd" in v.reason
    step = _step(_family(lambda t: 0.30 - 0.04 * np.log10(t)))
    _, got = sparsity_claims(step.findings, {"deeper-sparser"})
    v = got["deeper-sparser"]
    assert v.verdict == "untested" and "not identified" in v.reason


def test_the_command_line_names_an_unknown_size_or_shape_without_a_traceback(capsys):
    assert long_runs.main(["run", "--design", "wd", "--size", "wd-q"]) == 2
    err = capsys.readouterr().err
    assert "error: the small width-depth family has no ['wd-q']" in err
    assert "Traceback" not in err
    assert long_runs.main(["run", "--size", "size-q"]) == 2
    assert "its sizes are ['size-xs', 'size-s', 'size-m']" in capsys.readouterr().err


def test_each_t_interval_over_seeds_states_its_coverage_simulated_on_the_runs_own_values():
    from scalinglab.stats.coverage_report import coverage_note, stated_on_data

    step = _step(_family(lambda t: 0.18))
    named = {f.name: f.estimate for f in step.findings}
    for m in ("u4", "u2", "xs"):
        for name in (f"long_wd/relu/{m}/trend/relative_last_decade", f"long_wd/relu/{m}/A0"):
            said = stated_on_data(named[name].method)
            assert said is not None, named[name].method
            cov, n, se = said
            assert n == 5 and 0.85 < cov < 1.0 and 0 < se < 0.02
            assert "15 values centred within model" in named[name].method
    # the ledger reads it: an interval that covers on these data and on the generic
    # table's generators needs no caveat, one below the target names the on-data number
    f = {"ci": [0.1, 0.2], "level": 0.95, "n": 5, "method": named["long_wd/relu/xs/A0"].method}
    note = coverage_note(f)
    assert note is None or "on these data's own spread" in note


def test_a_plateau_pair_states_its_welch_intervals_coverage_simulated_on_its_seeds():
    from scalinglab.stats.coverage_report import stated_on_data
    from scalinglab.studies.sparsity import run_coverage

    rng = np.random.default_rng(4)
    a, b = 0.25 + 0.01 * rng.normal(size=10), 0.30 + 0.01 * rng.normal(size=8)
    cov = run_coverage.plateau_pair_coverage((a, 2.0), (b, 16.0), sims=2000, seed=1)
    # normal levels at 8-10 seeds: the Welch t interval covers about its nominal level
    assert cov.n == 8 and cov.generator == "seeds" and 0.90 < cov.coverage < 0.985
    assert "per-seed levels" in cov.said() and "10 and 8 seeds" in cov.said()
    # a heavy outlier in few seeds: the resampled generator sees it, coverage falls
    c = np.array([0.25, 0.25, 0.25, 0.25, 0.40])
    low = run_coverage.plateau_pair_coverage((c, 2.0), (b[:5], 16.0), sims=2000, seed=1)
    assert low.coverage < cov.coverage
    # the family's plateau pairs carry it, so the ledger reads it
    step = _step(_family(lambda t: 0.18))
    est = {f.name: f.estimate for f in step.findings}
    said = stated_on_data(est["long_wd/relu/u4-xs/A0_relative_slope"].method)
    assert said is not None and said[1] == 5


def test_the_figure_draws_every_shape_and_marks_an_unidentified_limit():
    import matplotlib

    matplotlib.use("Agg")
    from scalinglab.studies.sparsity import plots

    wdf = _family(lambda t: 0.30 - 0.04 * np.log10(t))
    step = _step(wdf)
    fig = plots.width_depth_limits(wdf, step.extra["A0"])
    left, right = fig.axes
    assert len(left.get_lines()) >= 3  # a curve per shape (and its last-decade marks)
    labels = [t.get_text() for t in right.texts]
    assert "u4: last-decade mean,\nlimit not identified" in labels and {"u2", "xs"} <= set(labels)
    assert "or last-decade mean where\nnot identified" in right.get_ylabel()
    # no limit identified: the axis and title say what the points are
    flat = {m: None for m in step.extra["A0"]}
    right = plots.width_depth_limits(wdf, flat).axes[1]
    assert right.get_ylabel().endswith("(no limit identified)")
    assert right.get_title().startswith("no limit identified")
    lo, hi = right.get_ylim()
    ys = [t.xy[1] for t in right.texts]
    assert lo < min(ys) - 0.1 * (hi - lo) and hi > max(ys) + 0.1 * (hi - lo)  # padded


def test_an_untested_deeper_sparser_names_the_shape_and_the_rules_reason(sparsity_claims):
    wdf = _family(lambda t: 0.30 - 0.04 * np.log10(t))
    step = _step(wdf)
    from scalinglab import record

    record.clear()
    try:
        sf.record_all(step.findings)
        current = {f.name: f.to_json() for f in record.findings()}
    finally:
        record.clear()
    cal = sf.Step(extra={"values": {}})
    got = sf.sweep_claim_values(cal, sf.Step(extra={"deciding": []}), wd=wdf, recorded=current)
    assert got["wd_missing"].startswith("the deciding pair (u4, xs) cannot be read: u4's limit")
    assert "still falling" in got["wd_missing"] and "xs's limit" not in got["wd_missing"]
    # each shape's horizon, seeds and passes from the runs
    assert got["wd_horizon"].startswith("xs to 8000 tokens per parameter (5 seeds")


# ----------------------------------------------------------------------------- at 16000
def test_the_family_at_16000_is_u4_and_xs_anew_one_block_per_seed_at_matched_passes():
    from scalinglab.studies.sparsity.long_config import LONG_WD16_HORIZONS, long_wd16_blocks

    xs = long_configs("small")["size-xs"]
    fam = long_wd16_blocks("small")
    assert list(fam) == ["wd16-u4", "wd16-xs"]
    assert {s: sorted(b) for s, b in fam.items()} == {
        "wd16-u4": list(range(15)),
        "wd16-xs": list(range(12)),
    }
    passes, keys = {}, set()
    for name, blocks in fam.items():
        for sd, cfg in blocks.items():
            (m,) = cfg.models
            n = cfg.model_config(m, "relu").n_params()
            assert cfg.seeds == (sd,) and cfg.activations == ("relu",)
            assert cfg.tokens / n == pytest.approx(16000.0, rel=1e-3)
            assert cfg.n_checkpoints == 26 and cfg.checkpoint_steps()[0] == xs.checkpoint_steps()[0]
            for field in ("corpus", "lr", "batch_size", "seq_len", "weight_decay", "device"):
                assert getattr(cfg, field) == getattr(xs, field), field
            assert cfg.compute_class == f"small-long-{name}"
            keys.add(str(cfg.to_dict()))
            passes[m.name] = cfg.tokens
        assert blocks[0].models[0].family == "width_depth"
    assert len(keys) == 27  # every block its own key
    # both shapes see the corpus as often (passes within 1%), twice the family at 8000
    assert passes["u4"] / passes["xs"] == pytest.approx(1.0, rel=0.01)
    assert passes["xs"] / xs.tokens == pytest.approx(2.0, rel=0.01)
    assert {s: h.looks for s, h in LONG_WD16_HORIZONS.items()} == {"u4": 2, "xs": 2}
    assert long_wd16_blocks("tiny") == {}
    with pytest.raises(ValueError, match="compute_class"):
        long_wd16_blocks("medium")


def test_the_blocks_a_call_trains_follow_the_shapes_and_seeds_given():
    got = [(s, sd) for s, sd, _ in wd_runs.wd16_todo("small", seeds=(14, 11, 0))]
    assert got == [
        ("wd16-u4", 14),
        ("wd16-u4", 11),
        ("wd16-u4", 0),
        ("wd16-xs", 11),
        ("wd16-xs", 0),
    ]
    assert len(wd_runs.wd16_todo("small", shapes=("wd16-xs",))) == 12
    with pytest.raises(ValueError, match=r"no \['wd16-q'\]: its shapes are"):
        wd_runs.wd16_todo("small", shapes=("wd16-q",))
    with pytest.raises(ValueError, match=r"no seed \[13\] in \['wd16-xs'\]: wd16-xs: seeds 0-11"):
        wd_runs.wd16_todo("small", shapes=("wd16-xs",), seeds=(13,))


def test_the_command_line_says_a_seed_belongs_to_the_family_at_16000_only(capsys):
    assert long_runs.main(["run", "--design", "wd", "--seed", "1"]) == 2
    assert "--seed chooses runs of the width-depth family at 16000 only" in capsys.readouterr().err


def _block(model: str, seed: int) -> xr.Dataset:
    return xr.Dataset(
        {"activation_ratio": (("seed", "step"), np.full((1, 3), 0.3 + 0.01 * seed))},
        coords={"seed": [seed], "step": [1, 2, 3]},
        attrs={"config_hash": f"{model}{seed}", "train_machine": "cpu", "git_commit": "abc"},
    )


def test_the_family_at_16000_is_read_complete_or_not_at_all(monkeypatch):
    import json

    from scalinglab.studies.sparsity.long_config import long_wd16_blocks

    blocks = long_wd16_blocks("small")
    missing = {("u4", 7)}

    def cached(cfg, devices=("cpu", "cuda")):
        (m,), (sd,) = cfg.models, cfg.seeds
        return None if (m.name, sd) in missing else _block(m.name, sd)

    monkeypatch.setattr(wd_runs, "cached_block", cached)
    seen = []
    monkeypatch.setattr(
        wd_runs, "cached_block", lambda cfg, devices=("cpu",): seen.append(cfg) or cached(cfg)
    )
    fam = wd_runs.wd16_family("small")
    assert fam.progress == {"wd16-u4": (14, 15), "wd16-xs": (12, 12)}
    assert fam.datasets == {}  # u4 lacks seed 7: no shape is read
    assert len(seen) == 27  # every block looked up once
    missing.clear()
    got = wd_runs.wd16_family("small").datasets
    assert list(got) == list(blocks)
    ds = got["wd16-xs"]
    assert list(ds["seed"].values) == list(range(12)) and ds.attrs["plateau_looks"] == 2
    assert ds.attrs["plateau_looks_why"].startswith("at a new horizon")  # not seeds added
    assert "0.05 + 0.025" in got["wd16-u4"].attrs["plateau_looks_why"]
    info = json.loads(ds.attrs["seed_blocks"])
    assert [b["seeds"] for b in info] == [[sd] for sd in range(12)]
    assert {b["config_hash"] for b in info} == {f"xs{sd}" for sd in range(12)}
    assert got["wd16-u4"].sizes["seed"] == 15


def _family16(u4, xs=lambda t: 0.25, seeds: int = 6) -> pd.DataFrame:
    return pd.concat(
        [
            _shape("u4", u4, seed=5, seeds=seeds, end=16000.0, looks=2),
            _shape("xs", xs, seed=6, seeds=seeds, end=16000.0, looks=2),
        ],
        ignore_index=True,
    )


def _step16(wdf):
    return sf.width_depth_limits(
        wdf, min_trend=0.05, reps=20, level=0.95, seed=0, coverage_sims=4, prefix="long_wd16"
    )


@pytest.mark.parametrize(
    ("u4", "want"), [(0.18, "holds at our scale"), (0.32, "differs at our scale")]
)
def test_once_read_the_family_at_16000_decides_deeper_sparser(u4, want, sparsity_claims):
    at8 = _step(_family(lambda t: 0.30 - 0.04 * np.log10(t)))  # u4 not identified at 8000
    step = _step16(_family16(lambda t, a=u4: a))
    named = {f.name: f for f in step.findings}
    assert "decides deeper-sparser" in named["long_wd16/relu/u4-xs/A0_relative_slope"].description
    assert "Bonferroni over 2 looks" in named["long_wd16/relu/u4/A0"].estimate.note
    assert "as seeds were added" in named["long_wd16/relu/u4/A0"].estimate.note  # the default
    why = _family16(lambda t, a=u4: a).assign(looks_why="at a new horizon")
    named = {f.name: f for f in _step16(why).findings}
    assert "read at look 2 of 2, at a new horizon" in named["long_wd16/relu/u4/A0"].estimate.note
    wdf16 = _family16(lambda t, a=u4: a)
    values, got = sparsity_claims([*at8.findings, *step.findings], {"deeper-sparser"}, wd16=wdf16)
    v = got["deeper-sparser"]
    assert [e["name"] for e in v.evidence] == ["long_wd16/relu/u4-xs/A0_relative_slope"]
    assert v.verdict == want, v.reason
    assert "at 16000 tokens per parameter" in v.claim.statement
    assert "over 2 looks" in v.claim.statement and "u2" not in values["wd_shapes"]
    assert (
        values["wd_horizon"] == "xs to 16000 tokens per parameter (6 seeds), u4 to 16000 (6 seeds)"
    )


def test_until_then_the_family_at_8000_decides_and_says_how_many_runs_at_16000_are_in(
    sparsity_claims,
):
    at8 = _step(_family(lambda t: 0.30 - 0.04 * np.log10(t)))
    runs = {"wd16-u4": (4, 15), "wd16-xs": (12, 12)}
    values, got = sparsity_claims(at8.findings, {"deeper-sparser"}, wd16_runs=runs)
    v = got["deeper-sparser"]
    assert v.verdict == "untested"
    assert "u4's limit is not identified" in v.reason
    assert "16 of 27 runs in (wd16-u4 4 of 15, wd16-xs 12 of 12)" in v.reason
    assert "run --design wd16" in v.reason
    assert values["wd_deciding"] == ["long_wd/relu/u4-xs/A0_relative_slope"]
    # a pair of the family at 8000 read beside the one at 16000 is shown only
    shown = sf.width_depth_limits(
        _family(lambda t: 0.18),
        min_trend=0.05,
        reps=20,
        level=0.95,
        seed=0,
        coverage_sims=4,
        deciding=None,
    )
    desc = {f.name: f.description for f in shown.findings}
    assert "another family decides" in desc["long_wd/relu/u4-xs/A0_relative_slope"]


def test_a_limit_the_rule_reads_states_the_coverage_of_the_rules_own_trend_interval():
    step = _step(_family(lambda t: 0.30 - 0.04 * np.log10(t)))
    notes = {f.name: f.estimate.note for f in step.findings}
    for m in ("u4", "xs"):  # one not identified, one a plateau: both read by the rule
        note = notes[f"long_wd/relu/{m}/A0"]
        assert "the rule's 90% t interval of the trend: coverage" in note, note
        assert "at n = 5 simulated on these data" in note
    # two looks: the rule's interval is at 95%, and its coverage is simulated there
    at16 = _step16(_family16(lambda t: 0.18))
    note = {f.name: f.estimate.note for f in at16.findings}["long_wd16/relu/u4/A0"]
    assert "the rule's 95% t interval of the trend: coverage" in note and "n = 6" in note


def test_the_rule_coverage_reads_the_reports_level_and_simulates_only_the_trend(monkeypatch):
    from scalinglab.studies.sparsity import long_limits

    ldf = _family16(lambda t: 0.30 - 0.01 * np.log10(t), seeds=4)
    both = long_limits.seed_coverage(ldf, level=0.95, seed=3, sims=60)
    trend = long_limits.seed_coverage(ldf, level=0.95, seed=3, sims=60, quantities=("trend",))
    assert {k[1] for k in both} == {"trend", "level"} and {k[1] for k in trend} == {"trend"}
    assert trend == {k: v for k, v in both.items() if k[1] == "trend"}
    calls = []
    real = long_limits.seed_coverage
    monkeypatch.setattr(
        long_limits, "seed_coverage", lambda *a, **k: calls.append(k) or real(*a, **k, sims=60)
    )
    # two looks: the rule's level is 95%, the report's here, so nothing is simulated
    said = long_limits.rule_coverage(ldf, seed=3, known={0.95: both})
    assert calls == []
    assert said[("relu", 2, 4)].startswith("the rule's 95% t interval of the trend: ")
    assert said[("relu", 2, 4)].endswith(both[("relu", "trend", 4)])
    # at another report level the rule's own level is simulated, the trend alone
    assert long_limits.rule_coverage(ldf, seed=3, known={0.9: {}}) == said
    assert [c["quantities"] for c in calls] == [("trend",)] and calls[0]["level"] == 0.95


def test_an_unidentified_extreme_pair_shows_its_level_difference_not_a_limit():
    # u4 still falling at 16000 (no limit), xs flat and lower
    wdf = _family16(lambda t: 0.45 - 0.04 * np.log10(t), xs=lambda t: 0.25)
    named = {f.name: f for f in _step16(wdf).findings}
    assert not named["long_wd16/relu/u4/A0"].estimate.identified
    assert np.isnan(named["long_wd16/relu/u4/A0"].estimate.point)  # no value, not the law's
    est = named["long_wd16/relu/u4-xs/last_decade_level_difference"].estimate
    late = 0.45 - 0.04 * np.log10(np.geomspace(1600.0, 16000.0, 50))
    assert est.lo < est.point < est.hi and est.lo > 0  # u4 above xs: deeper less sparse
    assert abs(est.point - (late.mean() - 0.25)) < 0.01
    assert est.method.startswith("Welch t over 6 and 6 seeds")
    assert "long_wd16/relu/u4-xs/A0_relative_slope" not in named
    # both identified: no level difference, the pair's limit slope instead
    named = {f.name: f for f in _step16(_family16(lambda t: 0.3)).findings}
    assert "long_wd16/relu/u4-xs/last_decade_level_difference" not in named
    assert "long_wd16/relu/u4-xs/A0_relative_slope" in named
