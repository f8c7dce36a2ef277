"""A real, cheap multi-task benchmark: small classifiers trained by different optimizers.

The interval-estimates study needs a benchmark with several algorithms, many tasks
and many independent runs, that it can run itself on a CPU in minutes. Here:

* **algorithms**: a one-hidden-layer MLP (32 units, scikit-learn's
  ``MLPClassifier``) trained with plain SGD, SGD with classical momentum, SGD with
  Nesterov momentum, Adam and L-BFGS, plus a logistic-regression baseline, all
  under a small fixed iteration budget (``max_iter`` epochs, or L-BFGS
  iterations). Small budgets are part of the design: they make the optimizers
  differ and make runs vary, so scikit-learn's ``ConvergenceWarning`` is
  deliberately silenced inside each fit.
* **tasks**: datasets that ship with scikit-learn and synthetic ones
  (:mod:`scalinglab.studies.intervals.benchmark_design`).
* **a run**: one seed that fixes the stratified 70/30 train/test split and the
  model's initialisation and shuffling. Seeds are derived from names, never from
  positions or execution order: ``SeedSequence([seed, key(task), run, key(alg)])``
  with ``key`` a hash of the name (and a ``"split"`` tag for the split), so a
  cell's numbers do not depend on which other algorithms or tasks are in the
  experiment, on chunking, or on the order in which Dask runs the tasks.
* **score**: normalized test accuracy ``(acc - chance) / (reference - chance)``
  where ``chance`` is the task's majority-class rate and ``reference`` is the
  mean test accuracy, over the same splits, of an RBF SVM whose ``C`` is tuned
  by 3-fold cross-validation on each training split (computed in the same
  experiment and stored). A score of 1 means "as good as a tuned SVM"; above 1 is
  possible.

Every fit runs with BLAS limited to one thread (no oversubscription on Dask
workers, and bit-identical results whether run in-process or on a cluster).
"""

from __future__ import annotations

import dataclasses
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xarray as xr

from scalinglab.compute import get_client
from scalinglab.errors import ParameterError
from scalinglab.stats.normalize import normalize
from scalinglab.studies.intervals.benchmark_design import (
    ALGORITHMS,
    REFERENCE,
    VERSION,
    chance_rate,
    derived_seed,
    experiment_config,
    load_task,
    make_estimator,
    split,
)
from scalinglab.sweeps import RunCache, cached_sweep, makespan, map_runs

STUDY = "interval_estimates"


# ------------------------------------------------------------------ fitting


@dataclass(frozen=True)
class FitItem:
    """One Dask task: ``algorithm`` on ``task`` for the runs in ``runs``."""

    algorithm: str
    task: str
    runs: tuple[int, ...]
    seed: int
    max_iter: int
    reference_c: tuple[float, ...]


def fit_item(item: FitItem) -> dict:
    """Train and test one algorithm on one task for a chunk of runs.

    Returns
    -------
    dict
        ``accuracy``: float array, shape ``(len(item.runs),)``, test accuracy per
        run; ``seconds``: wall time of the chunk.
    """
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    t0 = time.perf_counter()
    acc = np.empty(len(item.runs))
    with threadpool_limits(1), warnings.catch_warnings():
        # Small iteration budgets are deliberate: non-convergence is the point.
        warnings.simplefilter("ignore", ConvergenceWarning)
        for i, run in enumerate(item.runs):
            xtr, xte, ytr, yte = split(item.task, item.seed, run)
            est = make_estimator(
                item.algorithm,
                max_iter=item.max_iter,
                reference_c=item.reference_c,
                random_state=derived_seed(item.seed, item.task, run, item.algorithm),
            )
            acc[i] = float(np.mean(est.fit(xtr, ytr).predict(xte) == yte))
    return {"accuracy": acc, "seconds": time.perf_counter() - t0}


def build_items(config: dict, *, chunk_runs: int = 5) -> list[FitItem]:
    """All tasks of the experiment: run 0 of every (algorithm, task) first, then chunks.

    The reference SVM is one more algorithm named :data:`REFERENCE`.
    """
    algs = [*config["algorithms"], REFERENCE]
    rest = list(range(1, config["runs"]))
    chunks = [(0,)] + [tuple(rest[i : i + chunk_runs]) for i in range(0, len(rest), chunk_runs)]
    common = dict(
        seed=config["seed"], max_iter=config["max_iter"], reference_c=tuple(config["reference_c"])
    )
    return [FitItem(a, t, c, **common) for c in chunks for a in algs for t in config["tasks"]]


def _raise_failures(failures) -> None:
    if failures:
        lines = [
            f"  {f.config.algorithm} on {f.config.task}, runs {list(f.config.runs)}:\n"
            f"{f.error.strip().splitlines()[-1]}"
            for f in failures
        ]
        raise RuntimeError(f"{len(failures)} benchmark task(s) failed:\n" + "\n".join(lines))


def run_experiment(
    config: dict,
    *,
    scheduler: str = "",
    chunk_runs: int = 5,
    progress: bool = True,
    items_order: Sequence[int] | None = None,
    runs: RunCache | None = None,
) -> xr.Dataset:
    """Run the benchmark described by ``config`` (see :func:`experiment_config`).

    Run 0 of every (algorithm, task) goes first and is timed to print an estimate
    of the rest (:func:`scalinglab.sweeps.makespan` of each chunk's run-0 time times
    its runs); then the remaining runs are mapped in chunks of ``chunk_runs``.

    Parameters
    ----------
    scheduler
        ``"sync"`` (in-process), ``""`` (LocalCluster) or a scheduler address.
    items_order
        A permutation of the task list (tests: results must not depend on it).
    runs
        The per-run cache (:func:`scalinglab.sweeps.cached_sweep`): chunks found there
        are not fitted again. None: no caching.

    Returns
    -------
    xarray.Dataset
        ``accuracy`` and ``score`` dims ``(algorithm, run, task)``;
        ``reference_accuracy`` dims ``(run, task)``; ``reference`` and ``chance``
        dims ``(task,)``; ``n_samples``, ``n_features``, ``n_classes`` (task,).
    """
    items = build_items(config, chunk_runs=chunk_runs)
    if items_order is not None:
        items = [items[i] for i in items_order]
    first = [it for it in items if it.runs == (0,)]
    rest = [it for it in items if it.runs != (0,)]
    out: dict[FitItem, np.ndarray] = {}
    with get_client(scheduler) as client:
        workers = 1 if client is None else max(1, len(client.scheduler_info()["workers"]))
        t0 = time.perf_counter()
        res, fail = map_runs(
            fit_item,
            first,
            keys=[dataclasses.asdict(it) for it in first],
            runs=runs,
            client=client,
            scheduler=scheduler,
            desc="benchmark run 0",
            progress=progress,
        )
        _raise_failures(fail)
        out.update({it: r["accuracy"] for it, r in zip(first, res, strict=True)})
        busy = sum(r["seconds"] for r in res)
        n_rest = sum(len(it.runs) for it in rest)
        if progress:
            run0 = {(it.algorithm, it.task): r["seconds"] for it, r in zip(first, res, strict=True)}
            eta = makespan(
                [run0[(it.algorithm, it.task)] * len(it.runs) for it in rest], workers=workers
            )
            print(
                f"run 0: {len(first)} fits in {time.perf_counter() - t0:.1f} s "
                f"({busy:.1f} s of fitting); estimated remaining {n_rest // max(1, len(first))}"
                f" runs: ~{eta:.0f} s on {workers} worker(s)",
                file=sys.stderr,
            )
        if rest:
            res, fail = map_runs(
                fit_item,
                rest,
                keys=[dataclasses.asdict(it) for it in rest],
                runs=runs,
                client=client,
                scheduler=scheduler,
                desc="benchmark runs",
                progress=progress,
            )
            _raise_failures(fail)
            out.update({it: r["accuracy"] for it, r in zip(rest, res, strict=True)})
    return assemble(config, out)


def assemble(config: dict, results: dict[FitItem, np.ndarray]) -> xr.Dataset:
    """Put per-chunk accuracies into the benchmark Dataset (see :func:`run_experiment`)."""
    algs, tasks, runs, seed = config["algorithms"], config["tasks"], config["runs"], config["seed"]
    acc = np.full((len(algs) + 1, runs, len(tasks)), np.nan)
    index = {a: i for i, a in enumerate([*algs, REFERENCE])}
    for it, a in results.items():
        acc[index[it.algorithm], list(it.runs), tasks.index(it.task)] = a
    coords = {"algorithm": list(algs), "run": np.arange(runs), "task": list(tasks)}
    accuracy = xr.DataArray(acc[:-1], dims=("algorithm", "run", "task"), coords=coords)
    ref_acc = xr.DataArray(
        acc[-1], dims=("run", "task"), coords={"run": coords["run"], "task": coords["task"]}
    )
    chance = xr.DataArray(
        [chance_rate(t, seed) for t in tasks], dims="task", coords={"task": coords["task"]}
    )
    reference = ref_acc.mean("run")
    shapes = [load_task(t, seed) for t in tasks]
    ds = xr.Dataset(
        {
            "accuracy": accuracy.assign_attrs(long_name="test accuracy"),
            "score": normalize(accuracy, random=chance, reference=reference).assign_attrs(
                long_name="normalized score", formula="(accuracy - chance) / (reference - chance)"
            ),
            "reference_accuracy": ref_acc.assign_attrs(
                long_name="test accuracy of the RBF SVM reference (C tuned by 3-fold CV)"
            ),
            "reference": reference.assign_attrs(long_name="mean reference accuracy over runs"),
            "chance": chance.assign_attrs(long_name="majority-class rate"),
            "n_samples": ("task", [x.shape[0] for x, _ in shapes]),
            "n_features": ("task", [x.shape[1] for x, _ in shapes]),
            "n_classes": ("task", [int(y.max()) + 1 for _, y in shapes]),
        }
    )
    ds["algorithm_description"] = ("algorithm", [ALGORITHMS[a][0] for a in algs])
    ds.attrs.update(
        title="Small classifiers x optimizers benchmark (normalized test accuracy)",
        experiment=VERSION,
        seeding="SeedSequence([seed, sha256(task)[:4], run, sha256(algorithm)[:4]])",
        warnings="sklearn ConvergenceWarning silenced: small budgets are by design",
    )
    return ds


def benchmark(
    *,
    compute_class: str = "small",
    seed: int = 0,
    scheduler: str = "",
    rerun: bool = False,
    progress: bool = True,
) -> xr.Dataset:
    """The benchmark Dataset, loaded from ``data/interval_estimates/`` or run and saved.

    Through :func:`scalinglab.sweeps.cached_sweep`: an interrupted benchmark resumes
    chunk by chunk.
    """
    config = experiment_config(compute_class, seed=seed)
    return cached_sweep(
        STUDY,
        f"classifiers-{compute_class}",
        config,
        lambda runs: run_experiment(config, scheduler=scheduler, progress=progress, runs=runs),
        rerun=rerun,
    )


def load_or_run(
    scores: str = "",
    *,
    compute_class: str = "small",
    seed: int = 0,
    scheduler: str = "",
    rerun: bool = False,
    nan: str = "error",
    references: str = "",
    progress: bool = True,
) -> xr.DataArray:
    """The study's scores: the user's own files, or this benchmark's normalized scores.

    Parameters
    ----------
    scores
        Comma-separated paths (tidy CSV/Parquet, rliable JSON, netCDF; see
        :func:`scalinglab.data.scores.load_scores`); ``""`` runs (or reuses) the
        benchmark at ``compute_class`` and ``seed``.
    nan
        NaN policy for the user's files: ``"error"`` or ``"drop"``.
    references
        With ``scores``: a table ``task, random, reference``
        (:func:`scalinglab.data.scores.load_references`); the scores are normalized
        to ``(raw - random) / (reference - random)``. ``""``: they already are.

    Returns
    -------
    xarray.DataArray
        Named ``score``, dims ``(algorithm, run, task)``; attrs ``source``.
    """
    references = references.strip()
    if scores.strip():
        from scalinglab.data.scores import load_scores

        paths = [p.strip() for p in scores.split(",") if p.strip()]
        out = load_scores(paths if len(paths) > 1 else paths[0], nan=nan)
        source = "user files: " + ", ".join(map(_shown, paths))
        if references:
            from scalinglab.data.scores import load_references

            random, reference = load_references(references)
            out = normalize(out, random=random, reference=reference)
            source += f", normalized by {_shown(references)}"
        return out.rename("score").assign_attrs(source=source)
    if references:
        raise ParameterError("references normalizes your own scores: pass scores= too")
    ds = benchmark(
        compute_class=compute_class, seed=seed, scheduler=scheduler, rerun=rerun, progress=progress
    )
    cfg = ds.attrs.get("config_hash", "")
    return (
        ds["score"]
        .rename("score")
        .assign_attrs(
            source=f"classifiers benchmark ({compute_class}, seed {seed}, config {cfg})",
            title=ds.attrs.get("title", ""),
        )
    )


def _shown(path: str) -> str:
    """A path as a report may print it: relative to the repository when under it (a
    report never names the folder of the machine that ran it), else its file name."""
    from pathlib import Path

    from scalinglab.paths import repo_root

    p = Path(path)
    try:
        return str(p.resolve().relative_to(repo_root().resolve()))
    except (ValueError, OSError):
        return p.name if p.is_absolute() else str(p)
