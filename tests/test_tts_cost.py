"""Cost accounting of repeated sampling (FLOPs, Kinetics eFLOPs) against hand counts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scalinglab.studies.tts import cost as ttc

SHAPE = ttc.ModelShape(n_params=1000.0, n_layer=2, n_head=2, d_model=8)
HW = ttc.Hardware("hand", intensity_flop_per_byte=10.0, kv_dtype_bytes=4)


def test_sample_cost_matches_hand_count():
    # L_in = 4, L_out = 3, k = 5, n_layer * d_model = 16
    c = ttc.sample_cost(SHAPE, prompt_len=4, gen_len=3, k=np.array([5]), hw=HW)
    flops = 5 * (2 * 1000 * 3 + 2 * (2 * 4 + 3) * 3 * 16)  # 35280
    kv_bytes = 4 * (2 * 4 + 5 * 3) * 3 * 16  # 4416: prompt KV read once, each sample its own
    assert c["flops"][0] == pytest.approx(flops)
    assert c["kv_eflops"][0] == pytest.approx(10 * kv_bytes)
    assert c["eflops"][0] == pytest.approx(flops + 10 * kv_bytes)


def test_cost_table_is_affine_in_k_and_kv_share():
    t = ttc.cost_table(
        {"x": SHAPE}, {"x": ttc.Lengths.at_mean(3.0)}, prompt_len=4, ks=np.arange(1, 6), hw=HW
    )
    for m in ("flops", "eflops"):
        d = np.diff(t[m].to_numpy())
        np.testing.assert_allclose(d, d[0])
    assert t["flops"].iloc[0] == pytest.approx(2 * 1000 * 3 + 2 * 11 * 3 * 16)
    share = t["kv_eflops"] / t["eflops"]
    np.testing.assert_allclose(t["kv_share"], share)
    # one sample: KV bytes 4 * (8 + 3) * 48 = 2112 -> 21120 eFLOPs of 28176 in total
    assert t["kv_share"].iloc[0] == pytest.approx(21120 / (7056 + 21120))


def test_per_sample_cost_matches_hand_average_over_lengths():
    # two samples' lengths, 2 and 4 tokens: E[L] = 3, E[L^2] = 10; L_in = 4, k = 5,
    # n_layer * d_model = 16, N = 1000, I = 10, s = 4 bytes
    lengths = np.array([2.0, 4.0])
    own = ttc.Lengths.of(lengths)
    assert (own.mean, own.mean_sq) == (3.0, 10.0)

    def by_hand(L):
        flops = 5 * (2 * 1000 * L + 2 * (2 * 4 + L) * L * 16)
        kv = 10 * 4 * (2 * 4 + 5 * L) * L * 16
        return flops, flops + kv, kv

    hand = np.mean([by_hand(L) for L in lengths], axis=0)  # (flops, eflops, kv)
    c = ttc.mean_cost(SHAPE, prompt_len=4, lengths=own, k=np.array([5]), hw=HW)
    assert c["flops"][0] == pytest.approx(hand[0])  # 5 * (6000 + 2 * (24 + 10) * 16) = 35440
    assert c["flops"][0] == pytest.approx(35440)
    assert c["eflops"][0] == pytest.approx(hand[1])
    assert c["kv_eflops"][0] == pytest.approx(hand[2])
    # priced at the mean length the quadratic terms lose Var(L) = 1
    at = ttc.sample_cost(SHAPE, prompt_len=4, gen_len=3.0, k=np.array([5]), hw=HW)
    assert c["eflops"][0] - at["eflops"][0] == pytest.approx(5 * 2 * 16 + 10 * 4 * 5 * 16)
    r = ttc.jensen_ratio(SHAPE, prompt_len=4, lengths=own, k=5, hw=HW)
    assert r["eflops"] == pytest.approx(hand[1] / at["eflops"][0]) and r["eflops"] > 1
    equal = ttc.jensen_ratio(SHAPE, prompt_len=4, lengths=ttc.Lengths.at_mean(3.0), k=5, hw=HW)
    assert equal["flops"] == pytest.approx(1.0) and equal["eflops"] == pytest.approx(1.0)


def test_lengths_refuse_impossible_moments():
    with pytest.raises(ValueError, match="mean_sq >= mean"):
        ttc.Lengths(3.0, 8.0)
    with pytest.raises(ValueError, match="no finite"):
        ttc.Lengths.of(np.array([np.nan]))


def test_kv_per_weight_flop_falls_as_one_over_width():
    # N = 12 n_layer d^2: KV eFLOPs per weight FLOP times d is the same at every width
    lens = ttc.Lengths(4.0, 17.0)
    out = []
    for d in (32, 64, 128):
        shape = ttc.ModelShape(12.0 * 2 * d * d, 2, 4, d)
        out.append(ttc.kv_per_param_flop(shape, prompt_len=8, lengths=lens, k=16, hw=HW) * d)
    np.testing.assert_allclose(out, out[0], rtol=1e-12)
    # and by hand at d = 32: I s (2 L_in E[L] / k + E[L^2]) n_layer d / (2 N E[L])
    expect = 10 * 4 * (2 * 8 * 4 / 16 + 17) * 2 * 32 / (2 * 12 * 2 * 32 * 32 * 4)
    assert out[0] / 32 == pytest.approx(expect)


def test_affordable_k():
    k = ttc.affordable_k(10.0, 5.0, np.array([9.0, 15.0, 24.9, 25.0, 1e9]), k_max=100)
    assert k.tolist() == [0, 1, 2, 3, 100]


def test_matched_coverage_and_small_model_advantage():
    costs = ttc.cost_table(
        {"s": ttc.ModelShape(100.0, 1, 1, 4), "l": ttc.ModelShape(1000.0, 1, 1, 4)},
        {"s": ttc.Lengths.at_mean(2.0), "l": ttc.Lengths.at_mean(2.0)},
        prompt_len=2,
        ks=np.arange(1, 9),
        hw=HW,
    )
    curves = {"s": np.linspace(0.1, 0.8, 8), "l": np.linspace(0.5, 0.9, 8)}
    draws = {s: np.tile(v, (3, 1)) for s, v in curves.items()}
    per = costs.set_index(["size", "k"])["flops"]
    budget = float(per[("l", 1)])
    m = ttc.matched("flops", costs, curves, draws, np.array([budget]))
    ks = int(np.floor(budget / float(per[("s", 1)])))  # flops are proportional to k
    assert m.k[:, 0].tolist() == [min(ks, 8), 1]
    adv, adv_d = ttc.advantage_small(m, "s", "l")
    assert adv[0] == pytest.approx(curves["s"][min(ks, 8) - 1] - 0.5)
    assert np.allclose(adv_d, adv)
    b = ttc.common_budgets(costs, "eflops", k_max=8, n=4)
    assert b[0] == pytest.approx(costs[costs.k == 1]["eflops"].max())


def test_load_hardware(tmp_path):
    p = tmp_path / "hw.json"
    p.write_text(
        json.dumps(
            {"name": "box", "peak_flop_per_s": 4e11, "mem_bytes_per_s": 2e10, "dtype": "float32"}
        )
    )
    hw = ttc.load_hardware(p)
    assert hw.intensity_flop_per_byte == pytest.approx(20.0) and hw.kv_dtype_bytes == 4
    p.write_text(json.dumps({"peak_flop_per_s": 4e11}))
    with pytest.raises(ValueError, match="mem_bytes_per_s"):
        ttc.load_hardware(p)


def test_disagreement_counts_budgets_where_best_size_differs():
    cov_f = np.array([[0.5, 0.6], [0.4, 0.7]])  # best: s, l
    cov_e = np.array([[0.3, 0.6], [0.4, 0.5]])  # best: l, s
    mf = ttc.Matched("flops", ["s", "l"], np.ones(2), np.ones((2, 2), int), cov_f, cov_f[None])
    me = ttc.Matched("eflops", ["s", "l"], np.ones(2), np.ones((2, 2), int), cov_e, cov_e[None])
    pt, dr = ttc.disagreement(mf, me)
    assert pt == 1.0 and dr.tolist() == [1.0]
