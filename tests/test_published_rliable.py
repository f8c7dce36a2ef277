"""rliable's published benchmarks: committed copies, derivations, loading, and the ordering analysis."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy.stats import trim_mean

import scalinglab.cli as cli
from scalinglab.errors import InputError, ParameterError
from scalinglab.paths import PACKAGE_DIR
from scalinglab.stats.improvement import pairwise_probability_of_improvement
from scalinglab.stats.intervals import interval_estimates
from scalinglab.studies.intervals import published as P
from scalinglab.studies.intervals.orderings import (
    leaderboard_pairs,
    ordering_table,
    pair_flip_rates,
    separated_pairs,
    top_task_share,
)

REPO = PACKAGE_DIR.parent.parent
DATA = REPO / "data" / "published" / "rliable"
SHARED = Path("/work/shared/published/rliable")


def _provenance_rows() -> list[list[str]]:
    rows = []
    for line in (DATA / "PROVENANCE.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 4:
            rows.append(cells)
    return rows


def test_every_committed_file_has_its_sha256_in_the_provenance():
    rows = _provenance_rows()
    listed = {}
    for cells in rows:
        path = cells[0].strip("`")
        sha = next(c.strip("`") for c in cells if re.fullmatch(r"`[0-9a-f]{64}`", c))
        listed[path] = sha
    files = {str(p.relative_to(DATA)) for p in DATA.rglob("*") if p.is_file()}
    assert files - {"PROVENANCE.md", "README.md"} == set(listed)
    for path, sha in listed.items():
        assert hashlib.sha256((DATA / path).read_bytes()).hexdigest() == sha, path


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared published-data folder is not here")
def test_byte_copies_equal_the_shared_sources():
    pairs = [
        (f"atari_100k/scores/{a}.json", f"atari_100k/{a}.json")
        for a in ("DER", "DrQ", "DrQ(eps)", "OTRainbow", "PlayVirtual", "SPR", "SimPLe")
    ]
    pairs += [
        ("atari_200m/atari_200m_scores.json", "ALE/atari_200m_scores.json"),
        ("procgen/procgen_data.json", "procgen/procgen_data.json"),
    ]
    pairs += [
        (f"atari_100k/CURL_records/{p.name}", f"atari_100k/CURL/{p.name}")
        for p in (SHARED / "atari_100k" / "CURL").glob("*.json")
    ]
    for ours, theirs in pairs:
        assert (DATA / ours).read_bytes() == (SHARED / theirs).read_bytes(), ours


def test_derived_files_re_derive_from_the_copies():
    curl = P.curl_scores(DATA / "atari_100k" / "CURL_records")
    committed = json.loads((DATA / "atari_100k" / "scores" / "CURL.json").read_text())
    assert committed == {g: curl[g] for g in committed} and set(committed) == set(curl)
    assert all(len(v) == 100 for v in committed.values())
    der = json.loads((DATA / "atari_100k" / "scores" / "DER.json").read_text())
    assert list(committed) == list(der)

    def same(df: pd.DataFrame, path: Path) -> None:
        pd.testing.assert_frame_equal(
            df.reset_index(drop=True), pd.read_csv(path), check_exact=True, check_dtype=False
        )

    same(
        P.atari200m_table(DATA / "atari_200m" / "atari_200m_scores.json"),
        DATA / "atari_200m" / "scores.csv",
    )
    same(P.procgen_table(DATA / "procgen" / "procgen_data.json"), DATA / "procgen" / "scores.csv")
    files = [
        DATA / "dm_control" / f"{a}.json"
        for a in ("DrQ", "Dreamer", "PISAC", "RAD", "SAC+AE", "SLAC")
    ]
    for step in ("100k", "500k"):
        same(P.dmc_table(files, step=step), DATA / "dm_control" / f"scores_{step}.csv")
    human = {k: v[0] for k, v in json.loads((DATA / "atari_100k/HUMAN.json").read_text()).items()}
    rand = {k: v[0] for k, v in json.loads((DATA / "atari_100k/RANDOM.json").read_text()).items()}
    same(P.references_table(rand, human), DATA / "atari_100k" / "references.csv")


def test_200m_table_keeps_the_games_every_algorithm_has(tmp_path):
    src = {
        "scores": {
            "A": {"g1": [1.0, 2.0], "g2": [3.0], "g3": [0.5]},
            "B": {"g2": [4.0], "g1": [5.0]},
        }
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(src))
    df = P.atari200m_table(path)
    assert list(dict.fromkeys(df.task)) == ["g1", "g2"]
    assert df[(df.algorithm == "A") & (df.task == "g1")].score.tolist() == [1.0, 2.0]
    table = pd.read_csv(DATA / "atari_200m" / "scores.csv")
    assert table.task.nunique() == 55 and table.algorithm.nunique() == 8
    assert not {"AirRaid", "Carnival", "Pooyan"} & set(table.task)


def test_references_agree_across_sources_and_cover_every_game():
    h100 = pd.read_csv(DATA / "atari_100k" / "references.csv").set_index("task")
    zoo = pd.read_csv(DATA / "atari_200m" / "references.csv").set_index("task")
    assert len(zoo) == 57 and len(h100) == 26
    # the paper's human/random scores for the 26 Atari 100k games are DQN Zoo's
    pd.testing.assert_frame_equal(h100, zoo.loc[h100.index, ["random", "reference"]])
    assert set(pd.read_csv(DATA / "atari_200m" / "scores.csv").task) <= set(zoo.index)
    assert P.camel_game("kung_fu_master") == "KungFuMaster"
    assert P.camel_game("up_n_down") == "UpNDown"
    assert zoo.loc["MontezumaRevenge", "source_key"] == "montezuma_revenge"
    proc = pd.read_csv(DATA / "procgen" / "references.csv").set_index("task")
    assert len(proc) == 16 and (proc.reference > proc.random).all()


@pytest.mark.parametrize(
    ("name", "shape", "runs"),
    [
        ("atari100k", (8, 26), {"DER": 100, "SimPLe": 5, "PlayVirtual": 15, "CURL": 100}),
        ("atari200m", (8, 55), {"C51": 5, "M-IQN": 3, "DreamerV2": 11}),
        ("procgen", (6, 16), {"PPO": 10}),
        ("dmc", (6, 6), {"DrQ": 10, "Dreamer": 5}),
        ("dmc100k", (6, 6), {"Dreamer": 5}),
    ],
)
def test_load_benchmark_normalizes_through_the_readers(name, shape, runs):
    data = P.load_benchmark(name)
    assert data.dims == ("algorithm", "run", "task")
    assert (data.sizes["algorithm"], data.sizes["task"]) == shape
    counts = P.n_runs(data)
    assert {a: counts[a] for a in runs} == runs
    bench = P.BENCHMARKS[name]
    refs = pd.read_csv(DATA / bench.references).set_index("task")
    scores_path = DATA / bench.scores
    if scores_path.is_dir():
        alg, task, run = "DER", "Alien", 3
        value = json.loads((scores_path / "DER.json").read_text())["Alien"][run]
    else:
        row = pd.read_csv(scores_path).iloc[7]
        alg, task, run, value = row.algorithm, row.task, int(row.run), row.score
    expect = (value - refs.loc[task, "random"]) / (
        refs.loc[task, "reference"] - refs.loc[task, "random"]
    )
    assert float(data.sel(algorithm=alg, task=task, run=run)) == pytest.approx(expect, rel=1e-12)


def test_unknown_benchmark_and_in_repo_paths(tmp_path, monkeypatch):
    with pytest.raises(ParameterError, match="atari100k"):
        P.load_benchmark("atari57")
    monkeypatch.chdir(tmp_path)
    rel = "data/published/rliable/procgen/scores.csv"
    assert P.in_repo(rel) == str(REPO / rel)
    assert P.in_repo(f" {rel}, nowhere.csv") == f"{REPO / rel},nowhere.csv"
    assert P.in_repo("") == ""


def test_atari100k_iqm_is_the_trimmed_mean_of_the_pooled_human_normalized_scores():
    data = P.load_benchmark("atari100k")
    ci = interval_estimates(
        data, metrics=["iqm", "median"], reps=200, rng=np.random.default_rng(0), progress=False
    )
    for alg in ("SPR", "SimPLe"):
        pooled = data.sel(algorithm=alg).values.ravel()
        pooled = pooled[~np.isnan(pooled)]
        assert float(ci["point"].sel(algorithm=alg, metric="iqm")) == pytest.approx(
            trim_mean(pooled, 0.25)
        )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["atari100k", "atari200m", "procgen", "dmc"])
def test_cli_intervals_reads_each_benchmark(capsys, name):
    bench = P.BENCHMARKS[name]
    data = P.load_benchmark(name)
    x, y = (str(a) for a in data.algorithm.values[:2])
    code = cli.main(
        [
            "intervals",
            str(DATA / bench.scores),
            "--references",
            str(DATA / bench.references),
            "--reps",
            "200",
            "--poi-reps",
            "50",
            "--metrics",
            "iqm",
            "--compare",
            f"{x}:{y}",
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    res = json.loads(out)
    assert list(res["metrics"]) == [str(a) for a in data.algorithm.values]
    pooled = data.sel(algorithm=x).values.ravel()
    assert res["metrics"][x]["iqm"]["point"] == pytest.approx(
        trim_mean(pooled[~np.isnan(pooled)], 0.25)
    )
    assert f"{x}:{y}" in res["probability_of_improvement"]


# ---------------------------------------------------------------- orderings


def _scores(
    means: dict[str, list[float]], *, runs: int = 12, sd: float = 0.05, seed: int = 0
) -> xr.DataArray:
    rng = np.random.default_rng(seed)
    algs = list(means)
    tasks = len(next(iter(means.values())))
    vals = np.stack(
        [np.asarray(means[a])[None, :] + sd * rng.normal(size=(runs, tasks)) for a in algs]
    )
    return xr.DataArray(
        vals,
        dims=("algorithm", "run", "task"),
        coords={"algorithm": algs, "run": np.arange(runs), "task": [f"t{j}" for j in range(tasks)]},
    )


def test_leaderboard_table_and_separated_pairs():
    data = _scores({"low": [0.1] * 5, "high": [0.9] * 5, "mid": [0.5] * 5, "mid2": [0.5] * 5})
    pairs = leaderboard_pairs(data, metric="median")
    assert [p[0] for p in pairs][0] == "high" and pairs[-1][1] == "low"
    assert len(pairs) == 3
    with pytest.raises(InputError):
        leaderboard_pairs(data, metric="optimality_gap")
    rng = np.random.default_rng(1)
    everything = [
        ("high", "mid"),
        ("high", "mid2"),
        ("high", "low"),
        ("mid", "mid2"),
        ("mid", "low"),
        ("mid2", "low"),
        ("low", "high"),
    ]
    poi = pairwise_probability_of_improvement(data, everything, reps=300, rng=rng)
    sep = separated_pairs(poi)
    assert ("high", "low") in sep and ("high", "mid") in sep
    assert ("mid", "mid2") not in sep and ("mid2", "mid") not in sep
    assert sep.count(("high", "low")) == 2  # the reversed pair is re-oriented
    ci = interval_estimates(data, reps=300, rng=rng, progress=False)
    table = ordering_table([("high", "mid"), ("mid", "mid2")], ci, poi)
    assert table.loc["high > mid", "supported"] and not table.loc["mid > mid2", "supported"]
    assert not table.loc["high > mid", "iqm_overlap"] and table.loc["mid > mid2", "iqm_overlap"]
    assert table.loc["high > mid", "mean_agrees"]
    assert table.loc["high > mid", "median_x"] == pytest.approx(
        float(data.sel(algorithm="high").mean("run").median())
    )
    with pytest.raises(InputError, match="low:mid"):
        ordering_table([("low", "mid")], ci, poi)


@pytest.mark.slow
def test_pair_flip_rates_count_reversals_of_the_full_data_order():
    data = _scores({"a": [0.9] * 6, "b": [0.1] * 6, "c": [0.5] * 6, "d": [0.5] * 6}, sd=0.2)
    # d: c's runs, a hair better, so all runs order d above c by every metric
    data.loc[{"algorithm": "d"}] = data.sel(algorithm="c").values + 1e-9
    res = pair_flip_rates(
        data, [("a", "b"), ("c", "d")], n_runs=3, draws=200, reps=20, rng=np.random.default_rng(0)
    )
    assert list(res.pair.values) == ["a:b", "c:d", "(mean)"]
    far, tie = res.sel(pair="a:b"), res.sel(pair="c:d")
    assert (far["point"] == 0).all() and (far["hi"] == 0).all()
    # c and d are the same runs: two independent 3-run studies order them at random
    assert (0.35 < tie["point"]).all() and (tie["point"] < 0.65).all()
    mean = res.sel(pair="(mean)", metric="iqm")
    assert float(mean["point"]) == pytest.approx(float(tie.sel(metric="iqm")["point"]) / 2)
    assert (res["lo"] <= res["hi"]).all() and (res["hi"] <= 1).all() and (res["lo"] >= 0).all()
    again = pair_flip_rates(
        data, [("a", "b"), ("c", "d")], n_runs=3, draws=200, reps=20, rng=np.random.default_rng(0)
    )
    xr.testing.assert_identical(res, again)
    with pytest.raises(InputError, match="zz"):
        pair_flip_rates(data, [("a", "zz")], n_runs=3, rng=np.random.default_rng(0))
    with pytest.raises(InputError):
        pair_flip_rates(data, [], n_runs=3, rng=np.random.default_rng(0))


def test_top_task_share_measures_concentration_on_fixed_tasks():
    even = _scores({"even": [1.0] * 10, "spiky": [0.1] * 9 + [9.1]}, sd=0.0)
    res = top_task_share(even, reps=20, rng=np.random.default_rng(0))
    assert res.attrs["k"] == 1 and res.attrs["uniform_share"] == pytest.approx(0.1)
    assert float(res["point"].sel(algorithm="even")) == pytest.approx(0.1)
    assert float(res["point"].sel(algorithm="spiky")) == pytest.approx(9.1 / 10.0)
    assert str(res["top_tasks"].sel(algorithm="spiky").values[0]) == "t9"
    noisy = _scores({"x": [0.2] * 20 + [3.0] * 2}, sd=0.1, runs=8)
    res = top_task_share(noisy, reps=50, rng=np.random.default_rng(2))
    assert res.attrs["k"] == 3
    cell = res.sel(algorithm="x")
    assert float(cell["lo"]) <= float(cell["point"]) <= float(cell["hi"])
    assert 0.6 < float(cell["point"]) < 0.75  # (3 + 3 + 0.2) / (6 + 4)
    with pytest.raises(InputError):
        top_task_share(noisy, k=22, rng=np.random.default_rng(0))


def test_der_iterations_give_sample_efficiency_curves_ending_at_the_final_scores():
    from scalinglab.data.scores import load_references
    from scalinglab.stats.intervals import interval_estimates
    from scalinglab.studies.intervals.published import iteration_scores

    base = Path(__file__).resolve().parents[1] / "data" / "published" / "rliable" / "atari_100k"
    curves = iteration_scores(base / "DER_iterations", base / "references.csv")
    assert curves.sizes == {"algorithm": 1, "run": 100, "task": 26, "step": 10}
    # the last iteration is the final score of scores/DER.json (runs in run_number order)
    final = json.loads((base / "scores" / "DER.json").read_text())
    random, reference = load_references(base / "references.csv")
    for game in ("Pong", "Breakout"):
        raw = np.array(final[game])
        want = (raw - random[game]) / (reference[game] - random[game])
        got = curves.sel(algorithm="DER", task=game, step=9).values
        np.testing.assert_allclose(got, want, rtol=1e-9)
    ci = interval_estimates(curves, metrics=("iqm",), reps=200, rng=np.random.default_rng(0))
    iqm = ci["point"].sel(algorithm="DER", metric="iqm").values
    assert iqm[-1] > iqm[0]  # DER learns
    assert (ci["lo"] <= ci["point"]).all() and (ci["point"] <= ci["hi"]).all()
