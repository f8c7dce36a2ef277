"""The long design's third size, xs: its config (the existing sizes' cache keys pinned), a
CPU call that never retrains sizes cached from a GPU, and the analysis at three sizes
(limits per size, every identified pair compared, the claims read on them)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scalinglab.compute import config_hash
from scalinglab.fitting import fit
from scalinglab.studies.sparsity import findings as sf
from scalinglab.studies.sparsity import limits as lm
from scalinglab.studies.sparsity import long_blocks, long_findings, long_runs
from scalinglab.studies.sparsity.config import ModelSpec
from scalinglab.studies.sparsity.long_config import (
    LONG_HORIZONS,
    LONG_XS,
    LongHorizon,
    long_configs,
    long_extra_configs,
    long_horizons,
)

# ----------------------------------------------------------------------------- config
#: config_hash(cfg.to_dict()) of sizes s and m, every block and reading, as committed
#: before xs was added (their Datasets in data/sparsity_laws/ are keyed by them: a change
#: would make the report look for runs that do not exist, and a CPU call retrain them).
#: s's design horizon moved to 8000 tokens per parameter (stated 2026-11-28), so its
#: design keys are new; its 2000-token reading (``previous``) keeps the committed key.
PINNED = {
    ("cpu", False, "first", "size-s"): "d545f2d6f945",
    ("cpu", False, "first", "size-m"): "a8e6fd708ef6",
    ("cpu", False, "later", "size-m"): "1bea690efa53",
    ("cpu", True, "first", "size-s"): "8f383c49e497",
    ("cpu", True, "first", "size-m"): "1582c4d5ece6",
    ("cpu", True, "later", "size-m"): "5048634aaf94",
    ("cuda", False, "first", "size-s"): "05f562d7897e",
    ("cuda", False, "first", "size-m"): "d3d6e0b3a7fa",
    ("cuda", False, "later", "size-m"): "b2158a39e073",
    ("cuda", True, "first", "size-s"): "6d5331f1a5be",
    ("cuda", True, "first", "size-m"): "fe2d184216be",
    ("cuda", True, "later", "size-m"): "93d9a88a4f2c",
}


def test_adding_xs_leaves_the_cache_keys_of_s_and_m_unchanged():
    got = {}
    for device in ("cpu", "cuda"):
        for previous in (False, True):
            for kind, fn in (("first", long_configs), ("later", long_extra_configs)):
                for name, cfg in fn("small", device=device, previous=previous).items():
                    if name != "size-xs":
                        got[(device, previous, kind, name)] = config_hash(cfg.to_dict())
    assert got == PINNED
    # the tiny design (tests, smoke runs) keeps its two sizes and their keys
    tiny = long_configs("tiny")
    assert list(tiny) == ["size-s", "size-m"]
    assert {n: config_hash(c.to_dict()) for n, c in tiny.items()} == {
        "size-s": "4f7779e4c4a5",
        "size-m": "241692b3742a",
    }
    assert long_extra_configs("tiny") == {}


def test_xs_is_stated_below_s_to_8000_tokens_per_parameter_with_5_seeds():
    assert LONG_XS == ModelSpec("xs", 16, 1, 2, family="size")
    assert LONG_HORIZONS["xs"] == LongHorizon(
        8000.0, (0, 1, 2, 3, 4), 24, later_seeds=tuple(range(5, 15)), looks=2
    )
    cfgs = long_configs("small")
    assert list(cfgs) == ["size-xs", "size-s", "size-m"]  # smallest first
    xs = cfgs["size-xs"]
    (spec,) = xs.models
    assert spec == LONG_XS and spec.d_model / spec.n_layer == 16  # s/m/l's width/depth
    n = xs.model_config(spec, "relu").n_params()
    assert (
        n == 3376 and n < cfgs["size-s"].model_config(cfgs["size-s"].models[0], "relu").n_params()
    )
    assert xs.steps == 13188 and xs.seeds == (0, 1, 2, 3, 4) and xs.device == "cpu"
    assert set(xs.activations) == {"relu", "silu"} and xs.corpus == cfgs["size-s"].corpus
    grid = np.array(xs.checkpoint_steps()) * xs.batch_size * xs.seq_len / n
    assert len(grid) == 24 and grid[0] == pytest.approx(2.0, rel=0.1)  # step 3 of 13188
    assert grid[-1] == pytest.approx(8000.0, rel=1e-3)
    assert long_horizons("small")["xs"] == pytest.approx(8000.0, rel=1e-3)
    later = long_extra_configs("small")["size-xs"]  # seeds 5-14, a block of their own
    assert later.seeds == tuple(range(5, 15)) and later.steps == xs.steps
    assert dataclasses.replace(later, seeds=xs.seeds) == xs
    # not one of the base sweep's models: the other designs are unchanged
    from scalinglab.studies.sparsity.config import sweep_config

    assert "xs" not in [m.name for m in sweep_config("small").models]


def test_s_is_stated_to_8000_tokens_per_parameter_and_read_at_2000_until_trained():
    s = LONG_HORIZONS["s"]
    assert s == LongHorizon(
        8000.0, (0, 1, 2, 3, 4), 24, previous=LongHorizon(2000.0, (0, 1, 2, 3, 4), 20)
    )
    cfg = long_configs("small")["size-s"]
    n = cfg.model_config(cfg.models[0], "relu").n_params()
    grid = np.array(cfg.checkpoint_steps()) * cfg.batch_size * cfg.seq_len / n
    assert cfg.steps == 98625 and len(grid) == 24 and grid[-1] == pytest.approx(8000.0)
    assert set(cfg.activations) == {"relu", "silu"}  # one horizon per size
    before = long_configs("small", previous=True)["size-s"]
    assert before.steps == 24656 and before.n_checkpoints == 20
    assert long_horizons("small")["s"] == pytest.approx(8000.0)


def test_xs_is_read_at_its_second_look_and_its_provenance_names_each_block():
    from scalinglab.studies.sparsity.long_config import plateau_looks

    assert plateau_looks("small") == {"xs": 2, "s": 1, "m": 1}
    assert set(plateau_looks("tiny").values()) == {1}
    ds = xr.Dataset(
        {"status": (("seed",), ["ok", "ok", "ok"])},
        coords={"seed": [0, 1, 5]},
        attrs={
            "plateau_looks": 2,
            "seed_blocks": (
                '[{"seeds": [0, 1], "config_hash": "aaa", "train_machine": null}, '
                '{"seeds": [5], "config_hash": "bbb", '
                '"train_machine": "{\\"cuda_device\\": \\"NVIDIA H200\\"}"}]'
            ),
        },
    )
    got = long_findings.long_provenance({"size-xs": ds})
    assert got == (
        "size-xs: 3 runs ok; seeds 0-1 on the project's CPU machine (config aaa); "
        "seeds 5 on NVIDIA H200 (config bbb)"
    )
    # more blocks than compact_over: one clause per machine and commit
    got = long_findings.long_provenance({"size-xs": ds}, compact_over=1)
    assert got == (
        "size-xs: 3 runs ok; seeds 0-1 on the project's CPU machine (1 block, a config hash "
        "each, trained at ?); seeds 5 on NVIDIA H200 (1 block, a config hash each, trained at ?)"
    )


def _store(cfg, seeds):
    from scalinglab.compute import dataset_path, save_dataset

    key = long_blocks.sweep_key(cfg)
    ds = xr.Dataset({"x": ("seed", [1.0] * len(seeds))}, coords={"seed": list(seeds)})
    save_dataset(ds, dataset_path("sparsity_laws", f"sweep-{cfg.compute_class}", key), config=key)


def test_a_cpu_call_reads_sizes_cached_from_a_gpu_and_trains_only_what_is_missing(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    from scalinglab.studies.sparsity import sweep

    trained = []

    def fake_run_sweep(cfg, **kw):
        trained.append(cfg.models[0].name)
        return xr.Dataset()

    monkeypatch.setattr(sweep, "run_sweep", fake_run_sweep)
    # the keys' corpus hash: one stand-in (building the long corpus takes a minute)
    monkeypatch.setattr(sweep, "build_corpus", lambda c: SimpleNamespace(content_hash="c"))
    for name, cfg in long_configs("small", device="cuda").items():
        if name != "size-xs":
            _store(cfg, cfg.seeds)
    _store(long_extra_configs("small", device="cuda")["size-m"], (3, 4))
    got = long_runs.run_long("small", progress=False)
    # xs's two blocks are trained here; s and m (both blocks) are read, never retrained
    assert trained == ["xs", "xs"]
    assert list(got) == ["size-xs", "size-s", "size-m", "size-xs/later", "size-m/later"]
    trained.clear()
    only = long_runs.run_long("small", sizes=("size-m",), progress=False)
    assert trained == [] and list(only) == ["size-m", "size-m/later"]
    with pytest.raises(ValueError, match=r"no \['size-l'\]"):
        long_runs.run_long("small", sizes=("size-l",))


def test_the_committed_runs_of_s_and_m_are_found_under_their_keys():
    from scalinglab.paths import repo_root

    if not list((repo_root() / "data" / "sparsity_laws").glob("sweep-small-long-s-*.nc")):
        pytest.skip("the long design's committed Datasets are not in this checkout")
    before = long_configs("small", device="cuda", previous=True)
    for name, cfg in long_configs("small", device="cuda").items():
        if name != "size-xs":  # the design's horizon, or the one it extends until trained
            found = [long_blocks.cached_block(c) for c in (cfg, before[name])]
            assert any(ds is not None for ds in found), name
    assert long_blocks.cached_block(long_extra_configs("small", device="cuda")["size-m"])
    read = long_runs.cached_long("small")
    assert {n: d.attrs["plateau_looks"] for n, d in read.items()} == {
        "size-xs": 2,
        "size-s": 1,
        "size-m": 1,
    }
    frame = long_findings.long_frame({"size-xs": read["size-xs"]}, min_ffn_gain=0.05)
    assert frame is not None and set(frame["looks"]) == {2}


# ----------------------------------------------------------------------------- analysis
_N = {"xs": 3.4e3, "s": 2.5e4, "m": 8.3e4}


def _size(act: str, model: str, ratio, *, seeds: int = 5, noise: float = 1e-3, seed: int = 0):
    """One (activation, size): ``ratio(tokens_per_param)`` plus an offset per seed and
    noise per checkpoint, 14 checkpoints from 2 to 2e4 tokens per parameter."""
    rng = np.random.default_rng(seed)
    n = _N[model]
    rows = []
    for s in range(seeds):
        off = 0.002 * rng.normal()
        for tpp in np.geomspace(2.0, 2e4, 14):
            rows.append(
                {
                    "activation": act,
                    "model": model,
                    "seed": s,
                    "run": f"{act}/{model}/{s}",
                    "tokens": tpp * n,
                    "tokens_per_param": tpp,
                    "n_params": n,
                    "activation_ratio": float(ratio(tpp)) + off + noise * rng.normal(),
                    "natural_ratio": 0.5,
                    "loss": 2.0 - 0.05 * np.log10(tpp) + 0.01 * rng.normal(),
                    "usable": True,
                }
            )
    return pd.DataFrame(rows)


def _three_sizes() -> pd.DataFrame:
    """ReLU flat at xs and s (plateaus 0.25 and 0.22), still rising at m; SiLU flat at xs
    (0.45), still falling at s (no law can say that), on the SiLU law at m (limit 0.5)."""
    return pd.concat(
        [
            _size("relu", "xs", lambda t: 0.25, seed=1),
            _size("relu", "s", lambda t: 0.22, seed=2),
            _size("relu", "m", lambda t: 0.15 + 0.03 * np.log10(t), seed=3),
            _size("silu", "xs", lambda t: 0.45, seed=4),
            _size("silu", "s", lambda t: 0.5 - 0.04 * np.log10(t), seed=5),
            _size("silu", "m", lambda t: 0.5 - 0.3 * (t * _N["m"]) ** -0.25, seed=6),
        ],
        ignore_index=True,
    )


@pytest.fixture(scope="module")
def three():
    step = sf.long_design(
        _three_sizes(),
        min_trend={"relu": 0.05, "silu": 0.05},
        reps=30,
        level=0.95,
        seed=0,
        coverage_sims=4,
    )
    return step


def test_each_size_and_activation_gets_its_limit_by_the_rule(three):
    lim = three.extra["limits"].set_index(["activation", "model"])
    assert len(lim) == 6
    for key in [("relu", "xs"), ("relu", "s"), ("silu", "xs"), ("silu", "m")]:
        assert lim.loc[key, "route"] in ("law", "plateau"), (key, lim.loc[key, "why"])
    assert (
        lim.loc[("relu", "m"), "route"] == "none"
        and "still rising" in lim.loc[("relu", "m"), "why"]
    )
    assert (
        lim.loc[("silu", "s"), "route"] == "none"
        and "still falling" in lim.loc[("silu", "s"), "why"]
    )
    est = {f.name: f.estimate for f in three.findings}
    assert est["long/relu/xs/A0"].point == pytest.approx(0.25, abs=0.005)
    assert est["long/relu/s/A0"].point == pytest.approx(0.22, abs=0.005)
    assert est["long/silu/m/A0"].point == pytest.approx(0.5, abs=0.02)
    assert not est["long/relu/m/A0"].identified and not est["long/silu/s/A0"].identified
    for model in _N:
        assert est[f"long/relu/{model}/trend/relative_last_decade"].ci is not None
        assert f"long/{model}/tokens_per_param" in est


def test_every_pair_of_identified_sizes_is_compared_and_no_other(three):
    est = {f.name: f.estimate for f in three.findings}
    pairs = {n for n in est if "/scale/" in n}
    assert pairs == {
        "long/relu/scale/xs-s/A0_relative_slope",
        "long/silu/scale/xs-m/A0_relative_slope",
    }
    relu = est["long/relu/scale/xs-s/A0_relative_slope"]
    decades = np.log10(_N["s"] / _N["xs"])
    assert relu.point == pytest.approx((0.22 - 0.25) / 0.235 / decades, abs=0.02)
    assert relu.lo < relu.point < relu.hi
    silu = est["long/silu/scale/xs-m/A0_relative_slope"]
    assert silu.lo < silu.point < silu.hi and silu.point > 0  # 0.45 at xs, 0.5 at m
    table = three.extra["pairs"]
    assert list(table["pair"]) == ["xs-s", "xs-m"] and list(table["activation"]) == ["relu", "silu"]
    desc = {f.name: f.description for f in three.findings}
    assert "one of 1 size pair(s)" in desc["long/relu/scale/xs-s/A0_relative_slope"]


def test_three_identified_sizes_give_three_pairs_and_one_gives_none():
    df = pd.concat(
        [
            _size("relu", m, lambda t, v=v: v, seed=k)
            for k, (m, v) in enumerate([("xs", 0.25), ("s", 0.24), ("m", 0.23)])
        ],
        ignore_index=True,
    )
    step = long_findings.size_comparisons(
        df,
        {
            ("relu", m): ("plateau", lm.plateau_levels(df[df["model"] == m]).to_numpy(), _N[m])
            for m in _N
        },
        act="relu",
        level=0.95,
        seed=0,
    )
    assert [f.name.split("/")[3] for f in step.findings] == ["xs-s", "xs-m", "s-m"]
    assert all("one of 3 size pair(s)" in f.description for f in step.findings)
    one = long_findings.size_comparisons(
        df, {("relu", "s"): ("plateau", [0.2, 0.21], _N["s"])}, act="relu", level=0.95, seed=0
    )
    assert one.findings == [] and one.table.empty and "needs two" in one.messages[0]


def _silu_law_fit(seed: int = 0):
    g = _size("silu", "m", lambda t: 0.5 - 0.3 * (t * _N["m"]) ** -0.25, seed=6)
    return fit(
        "silu_sparsity",
        g["tokens"].to_numpy(float),
        g["activation_ratio"].to_numpy(float),
        groups=g["run"].to_numpy(),
        bootstrap=40,
        seed=seed,
    )


def test_a_law_limit_and_a_plateau_are_compared_by_pairing_their_bootstraps():
    res = _silu_law_fit()
    levels = [0.44, 0.45, 0.46, 0.45, 0.45]
    small, large = ("plateau", levels, 3.4e3), ("law", res, 8.3e4)
    est = lm.size_pair_slope(small, large, level=0.9, seed=1)
    a0, decades = res.params["A0"], np.log10(8.3e4 / 3.4e3)
    assert est.point == pytest.approx((a0 - 0.45) / (0.5 * (a0 + 0.45)) / decades)
    assert est.method == lm.MIXED_SCALE_CI and est.resamples == 40
    assert est.lo < est.point < est.hi
    # seeded: the same seed gives the same interval, another seed another one
    again = lm.size_pair_slope(small, large, level=0.9, seed=1)
    assert again.ci == est.ci
    assert lm.size_pair_slope(small, large, level=0.9, seed=2).ci != est.ci
    # the law on the smaller size: the same formula, the other way round
    flip = lm.size_pair_slope(("law", res, 3.4e3), ("plateau", levels, 8.3e4), seed=1)
    assert flip.point == pytest.approx((0.45 - a0) / (0.5 * (a0 + 0.45)) / decades)
    # one route each way: the existing estimators
    both = lm.size_pair_slope(("plateau", levels, 3.4e3), ("plateau", [0.5, 0.51, 0.49], 8.3e4))
    assert both.method.startswith(lm.PLATEAU_SCALE_CI)
    laws = lm.size_pair_slope(("law", res, 3.4e3), ("law", _silu_law_fit(1), 8.3e4))
    assert laws.method == lm.LIMIT_SCALE_CI
    with pytest.raises(ValueError, match="identified limits"):
        lm.size_pair_slope(("none", levels, 3.4e3), large)
    with pytest.raises(ValueError, match="more parameters"):
        lm.size_pair_slope(large, small)


# ----------------------------------------------------------------------------- claims
def test_the_size_and_limit_claims_read_every_size_and_every_identified_pair(
    three, sparsity_claims
):
    ldf = _three_sizes()
    values, got = sparsity_claims(
        three.findings, {"relu-limit", "silu-limit", "weak-scale-relu", "weak-scale-silu"}, ldf
    )
    assert values["sizes"] == ["xs", "s", "m"]
    assert values["sizes_text"] == "sizes xs, s and m (3.4k, 25k and 83k non-embedding parameters)"
    assert values["relu_pairs"] == ["xs-s"] and values["silu_pairs"] == ["xs-m"]
    assert values["trend_params"] == "3.4k-83k"
    # the limits: every size read; one outside the paper's band decides (differs at our
    # scale), whatever the unidentified size says
    lim = got["relu-limit"]
    assert [e["name"] for e in lim.evidence] == [f"long/relu/{m}/A0" for m in ("xs", "s", "m")]
    assert lim.verdict == "differs at our scale", lim.reason
    assert "sizes xs, s and m" in lim.claim.regime
    # the size claims: the identified pairs only, scoped to our scale
    relu = got["weak-scale-relu"]
    assert [e["name"] for e in relu.evidence] == ["long/relu/scale/xs-s/A0_relative_slope"]
    assert "(xs-s)" in relu.claim.statement
    assert relu.verdict in ("holds at our scale", "differs at our scale", "inconclusive")
    assert got["weak-scale-silu"].evidence[0]["name"] == "long/silu/scale/xs-m/A0_relative_slope"


def test_a_size_claim_with_no_identified_pair_is_untested(sparsity_claims):
    ldf = pd.concat(
        [
            _size("relu", "xs", lambda t: 0.25, seed=1),
            _size("relu", "s", lambda t: 0.15 + 0.03 * np.log10(t), seed=3),
        ],
        ignore_index=True,
    )
    step = sf.long_design(
        ldf, min_trend={"relu": 0.05}, reps=20, level=0.95, seed=0, coverage_sims=4
    )
    values, got = sparsity_claims(step.findings, {"weak-scale-relu"}, ldf)
    assert values["relu_pairs"] == ["none"] and values["relu_pairs_text"] == "none"
    v = got["weak-scale-relu"]
    assert v.verdict == "untested" and "not identified at two sizes" in v.reason


def test_a_pair_outside_the_tolerance_decides_only_after_holm_over_the_pairs():
    from scalinglab.claims import decide_all
    from scalinglab.claims_file import expand, read_claims_file, study_claims_path

    def finding(name, point, ci):
        return {"name": name, "point": point, "ci": ci, "level": 0.95, "identified": True}

    # three pairs; one excludes +-0.05 barely (p near 0.04): not after Holm over three
    current = {
        "long/relu/scale/xs-s/A0_relative_slope": finding("a", 0.0, [-0.02, 0.02]),
        "long/relu/scale/xs-m/A0_relative_slope": finding("b", 0.0, [-0.02, 0.02]),
        "long/relu/scale/s-m/A0_relative_slope": finding("c", 0.09, [0.051, 0.129]),
    }
    values = {
        "design": "sweep",
        "relu_tol": 0.05,
        "relu_pairs": ["xs-s", "xs-m", "s-m"],
        "relu_pairs_text": "xs-s, xs-m, s-m",
        "horizons": "h",
        "sizes_text": "sizes",
        "relu_scale_regime": "outside: sizes, h",
    }
    (spec,) = [
        s
        for s in read_claims_file(study_claims_path("sparsity_laws"))
        if s.id == "weak-scale-relu" and s.applies(values)
    ]
    (v,) = decide_all(expand(spec, values, current), current)
    assert v.verdict == "inconclusive" and "Holm" in v.reason
    # alone, the same pair would decide it
    one = {k: v for k, v in current.items() if k.endswith("s-m/A0_relative_slope")}
    (w,) = decide_all(expand(spec, {**values, "relu_pairs": ["s-m"]}, one), one)
    assert w.verdict == "differs at our scale"


def test_the_plateau_side_of_a_mixed_comparison_has_the_t_intervals_width():
    # a law with no spread (every draw its point): the interval is the plateau's alone,
    # and its ends are the Student-t interval of the plateau's mean carried through the
    # (monotone) relative change; a bootstrap of 5 seed means would be about 0.75 as wide
    import dataclasses

    from scalinglab.stats.calibration import t_interval

    res = _silu_law_fit()
    flat = np.tile([res.params[k] for k in res.params], (40_000, 1))
    res = dataclasses.replace(res, draws=flat)
    levels = np.array([0.44, 0.47, 0.43, 0.46, 0.45])
    small, large = ("plateau", levels, 3.4e3), ("law", res, 8.3e4)
    est = lm.size_pair_slope(small, large, level=0.95, seed=3)
    a0, decades = res.params["A0"], np.log10(8.3e4 / 3.4e3)
    lo, hi = t_interval(levels, level=0.95)

    def rel(p):
        return (a0 - p) / (0.5 * (a0 + p)) / decades

    # larger plateau level, smaller slope: the ends swap
    assert est.lo == pytest.approx(rel(hi), abs=3e-3)
    assert est.hi == pytest.approx(rel(lo), abs=3e-3)


def test_a_size_claim_on_pairs_whose_corpus_passes_differ_is_a_proxy():
    from scalinglab.studies.sparsity.findings import scale_regime

    frame = pd.DataFrame(
        {"model": ["xs", "xs", "s", "s", "m"], "passes": [0.2, 2.0, 1.0, 14.9, 12.3]}
    )
    passes = long_findings.end_passes(frame)
    assert passes == {"xs": 2.0, "s": 14.9, "m": 12.3}
    assert long_findings.repetition_confounded("xs-s", passes)
    assert not long_findings.repetition_confounded("s-m", passes)  # 14.9 / 12.3 < 2
    assert not long_findings.repetition_confounded("s-l", passes)  # l unknown
    proxy = scale_regime(["xs-s", "s-m"], frame, "sizes xs, s and m", "h")
    assert proxy.startswith("proxy: ") and "xs-s: 2.0 and 14.9 passes" in proxy
    assert "s-m" not in proxy
    assert scale_regime(["s-m"], frame, "sizes s and m", "h").startswith(
        "outside: sizes s and m, h"
    )
    assert scale_regime(["none"], None, "sizes", "h").startswith("outside: ")


def test_seeds_from_two_machines_are_compared_by_welch_t_at_a_bonferroni_level():
    # the GPU seeds sit 0.02 higher than the CPU seeds, flat curves, little noise
    frames = []
    for seed in range(8):
        shift = 0.02 if seed >= 3 else 0.0
        g = _size("relu", "xs", lambda t, d=shift: 0.28 + d, seeds=1, seed=seed)
        g = g.assign(seed=seed, run=f"relu/xs/{seed}", machine="H200" if seed >= 3 else "cpu")
        frames.append(g)
    one_machine = _size("relu", "s", lambda t: 0.22).assign(machine="H200")
    ldf = pd.concat([*frames, one_machine], ignore_index=True)
    step = long_findings.block_checks(ldf, level=0.95)
    got = {n.name: n.estimate for n in step.findings}
    assert set(got) == {
        "long/relu/xs/blocks/trend_difference",
        "long/relu/xs/blocks/level_difference",
    }
    level = got["long/relu/xs/blocks/level_difference"]
    assert level.point == pytest.approx(0.02, abs=0.003) and level.lo > 0  # they differ
    assert level.level == pytest.approx(1 - 0.05 / 2)  # Bonferroni over the 2 checks
    assert "Bonferroni over 2 checks" in level.method
    assert long_findings.block_checks(ldf.drop(columns="machine"), level=0.95).findings == []
