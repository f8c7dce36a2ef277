"""The rliable paper's own data: four published benchmarks, loaded and normalized.

Agarwal et al. 2021 re-analyse published per-run scores. Their data, copied with
provenance under ``data/published/rliable/`` (``PROVENANCE.md`` there), are read
here through the project's score and table readers
(:func:`scalinglab.data.scores.load_scores`, :func:`~scalinglab.data.scores.load_references`)
and normalized per task with :func:`scalinglab.stats.normalize.normalize`:

============  =====================================================================
benchmark     scores and normalization
============  =====================================================================
atari100k     8 algorithms x 26 games (100 runs; SimPLe 5, PlayVirtual 15), raw
              returns, human-normalized with the paper's human/random scores
atari200m     8 algorithms x the 55 games every algorithm has (3-11 runs), raw
              returns, human-normalized with DQN Zoo's human/random table
procgen       6 algorithms x 16 games x 10 runs, min-max normalized with the
              easy-mode constants of Cobbe et al. 2020
dmc           6 algorithms x 6 tasks x 10 runs (Dreamer 5) at 500k steps
              (``dmc100k``: 100k steps), divided by the maximum return 1000
============  =====================================================================

Files whose source layout the readers do not take (CURL's per-game records, the
200M file's ``{algorithm: {game: runs}}``, Procgen's and DM Control's nested
dicts) are *derived* into the readers' formats by the ``*_table`` functions of
this module; ``tests/test_published_rliable.py`` re-derives every committed
derived file from the committed byte copies and checks they agree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.errors import InputError, ParameterError
from scalinglab.paths import data_dir, resolve_input

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "atari200m_table",
    "curl_scores",
    "dmc_table",
    "in_repo",
    "load_benchmark",
    "published_dir",
    "procgen_table",
    "references_table",
]


@dataclass(frozen=True)
class Benchmark:
    """Where a published benchmark's scores and references lie (relative to the rliable folder).

    Attributes
    ----------
    scores
        Comma-separated score files/directories for :func:`load_scores`.
    references
        Table ``task, random, reference`` for :func:`load_references`.
    title, normalization
        How the report names the benchmark and its normalization.
    """

    scores: str
    references: str
    title: str
    normalization: str


BENCHMARKS: dict[str, Benchmark] = {
    "atari100k": Benchmark(
        "atari_100k/scores",
        "atari_100k/references.csv",
        "Atari 100k (26 games)",
        "human-normalized: (score - random) / (human - random), the paper's human/random scores",
    ),
    "atari200m": Benchmark(
        "atari_200m/scores.csv",
        "atari_200m/references.csv",
        "Atari 200M (55 games every algorithm has)",
        "human-normalized with DQN Zoo's human/random scores (google-deepmind/dqn_zoo)",
    ),
    "procgen": Benchmark(
        "procgen/scores.csv",
        "procgen/references.csv",
        "Procgen (16 games, easy mode)",
        "min-max normalized with the easy-mode R_min, R_max of Cobbe et al. 2020",
    ),
    "dmc": Benchmark(
        "dm_control/scores_500k.csv",
        "dm_control/references.csv",
        "DeepMind Control Suite, 500k steps (6 tasks)",
        "score / 1000 (maximum return)",
    ),
    "dmc100k": Benchmark(
        "dm_control/scores_100k.csv",
        "dm_control/references.csv",
        "DeepMind Control Suite, 100k steps (6 tasks)",
        "score / 1000 (maximum return)",
    ),
}


def published_dir() -> Path:
    """``data/published/rliable`` under the repository root."""
    return data_dir() / "published" / "rliable"


def in_repo(paths: str) -> str:
    """Comma-separated paths, each as given if it exists, else under the repository root.

    A variant names committed files relative to the root (``data/published/...``)
    while the kernel runs in ``notebooks/``; a path found neither way is kept
    as given, so the reader's error names it.
    """
    parts = (p.strip() for p in paths.split(","))
    return ",".join(str(resolve_input(p)) for p in parts if p)


def load_benchmark(name: str, *, root: Path | None = None) -> xr.DataArray:
    """One published benchmark's normalized scores.

    Parameters
    ----------
    name
        A key of :data:`BENCHMARKS`.
    root
        The rliable folder (default :func:`published_dir`).

    Returns
    -------
    xarray.DataArray
        Named ``score``, dims ``(algorithm, run, task)``, NaN = absent run
        (ragged run counts); attrs ``source``, ``title``, ``normalization``.
    """
    from scalinglab.data.scores import load_references, load_scores
    from scalinglab.stats.normalize import normalize

    if name not in BENCHMARKS:
        raise ParameterError(
            f"unknown published benchmark {name!r}; choose from {list(BENCHMARKS)}"
        )
    bench = BENCHMARKS[name]
    base = published_dir() if root is None else Path(root)
    paths = [base / p for p in bench.scores.split(",")]
    raw = load_scores(paths if len(paths) > 1 else paths[0])
    random, reference = load_references(base / bench.references)
    out = normalize(raw, random=random, reference=reference)
    return out.rename("score").assign_attrs(
        source=f"published {name}: {bench.scores} normalized by {bench.references}",
        title=bench.title,
        normalization=bench.normalization,
    )


# ------------------------------------------------------------ derivations


def curl_scores(records_dir: str | Path) -> dict[str, list[float]]:
    """CURL's raw returns ``{game: [run 1, ..., run 100]}`` from its per-game record files.

    Parameters
    ----------
    records_dir
        Folder of ``<Game>.json`` files, each a list of records with
        ``run_number`` and ``eval_average_return``.

    Returns
    -------
    dict
        Games in file-name order, runs in ``run_number`` order.
    """
    out: dict[str, list[float]] = {}
    for path in sorted(Path(records_dir).glob("*.json")):
        records = json.loads(path.read_text())
        numbers = [r["run_number"] for r in records]
        if len(set(numbers)) != len(numbers):
            raise InputError("repeated run_number", file=path)
        ordered = sorted(records, key=lambda r: r["run_number"])
        out[path.stem] = [float(r["eval_average_return"]) for r in ordered]
    if not out:
        raise InputError("no <Game>.json record file", file=records_dir)
    return out


def _tidy(nested: Mapping[str, Mapping[str, list[float]]]) -> pd.DataFrame:
    rows = [
        (alg, task, run, float(v))
        for alg, tasks in nested.items()
        for task, runs in tasks.items()
        for run, v in enumerate(runs)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "task", "run", "score"])


def atari200m_table(path: str | Path) -> pd.DataFrame:
    """Tidy ``algorithm, task, run, score`` of the 200M file, on the games all algorithms have.

    Parameters
    ----------
    path
        ``atari_200m_scores.json`` (``{"scores": {algorithm: {game: [runs]}}}``).

    Returns
    -------
    pandas.DataFrame
        One row per run; games in the order of the first algorithm, restricted
        to those present for every algorithm (55 of 60: M-IQN and DreamerV2
        lack AirRaid, Carnival, ElevatorAction, JourneyEscape and Pooyan).
    """
    scores = json.loads(Path(path).read_text())["scores"]
    common = set.intersection(*(set(g) for g in scores.values()))
    first = next(iter(scores.values()))
    games = [g for g in first if g in common]
    return _tidy({alg: {g: runs[g] for g in games} for alg, runs in scores.items()})


def procgen_table(path: str | Path) -> pd.DataFrame:
    """Tidy table of ``procgen_data.json`` (``{algorithm: {game: [runs]}}``)."""
    return _tidy(json.loads(Path(path).read_text()))


def dmc_table(files: list[str | Path], *, step: str) -> pd.DataFrame:
    """Tidy table of DM Control files ``{step: {task: [runs]}}`` at one step budget.

    Parameters
    ----------
    files
        One ``<Algorithm>.json`` per algorithm (the stem names it).
    step
        ``"100k"`` or ``"500k"``.
    """
    nested = {}
    for f in files:
        data = json.loads(Path(f).read_text())
        if step not in data:
            raise InputError(f"no step budget {step!r} (has {list(data)})", file=f)
        nested[Path(f).stem] = data[step]
    return _tidy(nested)


def references_table(random: Mapping[str, float], reference: Mapping[str, float]) -> pd.DataFrame:
    """``task, random, reference`` rows (tasks of ``reference``, in its order)."""
    tasks = list(reference)
    missing = [t for t in tasks if t not in random]
    if missing:
        raise InputError(f"no random score for task {missing[0]!r}")
    return pd.DataFrame(
        {
            "task": tasks,
            "random": [float(random[t]) for t in tasks],
            "reference": [float(reference[t]) for t in tasks],
        }
    )


def camel_game(snake: str) -> str:
    """DQN Zoo's game key (``'kung_fu_master'``) as the score files spell it (``'KungFuMaster'``)."""
    special = {"up_n_down": "UpNDown", "montezuma_revenge": "MontezumaRevenge"}
    return special.get(snake, "".join(part.capitalize() for part in snake.split("_")))


def n_runs(scores: xr.DataArray) -> dict[str, int]:
    """Present runs per algorithm (the most any task has), for the report's table."""
    present = (~np.isnan(scores.transpose("algorithm", "run", "task").values)).sum(axis=1)
    return {str(a): int(present[i].max()) for i, a in enumerate(scores.algorithm.values)}


def iteration_scores(folder: str | Path, references: str | Path) -> xr.DataArray:
    """Per-iteration returns of one algorithm, normalized, for sample-efficiency curves.

    Parameters
    ----------
    folder
        One JSON file per game, each a list of records ``{"iteration",
        "eval_average_return", "game", "run_number", "agent"}`` (rliable's
        ``atari_100k/DER/<Game>.json``).
    references
        Table ``task, random, reference`` (:func:`scalinglab.data.scores.load_references`).

    Returns
    -------
    xarray.DataArray
        Dims ``(algorithm, run, task, step)`` (step = iteration), normalized as
        ``(return - random) / (reference - random)``; NaN = absent run.
    """
    from scalinglab.data.scores import load_references
    from scalinglab.stats.normalize import normalize

    files = sorted(Path(folder).glob("*.json"))
    if not files:
        raise InputError(f"{folder}: no per-iteration JSON files")
    frames = []
    for path in files:
        try:
            records = json.loads(path.read_text())
            df = pd.DataFrame(records)[
                ["agent", "game", "run_number", "iteration", "eval_average_return"]
            ]
        except (ValueError, KeyError) as exc:
            raise InputError(f"{path}: not a list of per-iteration records ({exc})") from None
        bad = df["eval_average_return"].isna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{path}: record {row} has no eval_average_return")
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    da = (
        df.rename(
            columns={
                "agent": "algorithm",
                "game": "task",
                "run_number": "run",
                "iteration": "step",
                "eval_average_return": "score",
            }
        )
        .set_index(["algorithm", "run", "task", "step"])["score"]
        .to_xarray()
    )
    random, reference = load_references(references)
    return normalize(da, random=random, reference=reference)
