"""What the interval-estimates benchmark is: its tasks, learners, compute classes and
the seeds that follow names.

* **tasks** (:data:`TASKS`): datasets that ship with scikit-learn (iris, wine, breast
  cancer, digits; no download) and synthetic ones (moons, circles, XOR, blobs,
  ``make_classification`` at two difficulties, Gaussian quantiles, Hastie).
* **seeds**: ``SeedSequence([seed, key(task), run, key(alg)])`` with ``key`` a hash of
  the name (:func:`derived_seed`), so a cell's numbers do not depend on which other
  algorithms or tasks are in the experiment, on chunking, or on execution order.
* **a run's data** (:func:`split`): the stratified, standardized 70/30 train/test
  split of run ``run``; :func:`chance_rate` is the majority-class rate.

* **learners** (:data:`ALGORITHMS`, :func:`make_estimator`): scikit-learn's
  ``MLPClassifier`` under each optimizer, logistic regression, and the tuned RBF SVM
  that sets each task's reference accuracy; :func:`experiment_config` is a compute
  class's full config (the cache key).

Running it (Dask, caching, assembly) is :mod:`scalinglab.studies.intervals.classifiers`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from scalinglab.errors import ParameterError

#: Bump when a change to the benchmark (here or in its runner, :mod:`.classifiers`)
#: changes any number it produces.
VERSION = "classifiers-v1"
REFERENCE = "reference"  # the pseudo-algorithm that computes the reference accuracies

TEST_FRACTION = 0.3


def _xor(rs: int) -> tuple[np.ndarray, np.ndarray]:
    r = np.random.default_rng(rs)
    x = r.uniform(-1, 1, size=(500, 2))
    y = (x[:, 0] * x[:, 1] > 0).astype(int)
    return x + r.normal(0, 0.1, size=x.shape), y


def _sk(name: str) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
    def load(rs: int) -> tuple[np.ndarray, np.ndarray]:
        from sklearn import datasets

        return getattr(datasets, f"load_{name}")(return_X_y=True)

    return load


def _make(fn: str, **kw) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
    def load(rs: int) -> tuple[np.ndarray, np.ndarray]:
        from sklearn import datasets

        return getattr(datasets, fn)(random_state=rs, **kw)[:2]

    return load


def _hastie(rs: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_hastie_10_2

    x, y = make_hastie_10_2(n_samples=800, random_state=rs)
    return x, (y > 0).astype(int)


#: Task name -> loader(random_state) -> (X, y). Bundled datasets ignore the state.
TASKS: dict[str, Callable[[int], tuple[np.ndarray, np.ndarray]]] = {
    "iris": _sk("iris"),
    "wine": _sk("wine"),
    "breast_cancer": _sk("breast_cancer"),
    "digits": _sk("digits"),
    "moons": _make("make_moons", n_samples=500, noise=0.3),
    "circles": _make("make_circles", n_samples=500, noise=0.15, factor=0.5),
    "xor": _xor,
    "blobs": _make("make_blobs", n_samples=600, centers=5, n_features=4, cluster_std=2.5),
    "classification_easy": _make(
        "make_classification",
        n_samples=600,
        n_features=10,
        n_informative=5,
        n_redundant=2,
        n_classes=2,
        class_sep=1.5,
    ),
    "classification_hard": _make(
        "make_classification",
        n_samples=600,
        n_features=20,
        n_informative=6,
        n_redundant=4,
        n_classes=4,
        n_clusters_per_class=2,
        flip_y=0.05,
        class_sep=1.0,
    ),
    "gaussian_quantiles": _make(
        "make_gaussian_quantiles", n_samples=600, n_features=3, n_classes=3
    ),
    "hastie": _hastie,
}


def name_key(name: str) -> int:
    """A stable 32-bit integer for a name (seeds follow names, not positions)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def derived_seed(seed: int, *parts: str | int) -> int:
    """``SeedSequence([seed, *parts])`` reduced to a 32-bit ``random_state`` (names hashed)."""
    entropy = [int(seed)] + [name_key(p) if isinstance(p, str) else int(p) for p in parts]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


@lru_cache(maxsize=32)
def load_task(task: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The task's full data ``(X (n, d) float, y (n,) int)``, fixed per ``(task, seed)``."""
    x, y = TASKS[task](derived_seed(seed, task, "data"))
    _, y = np.unique(y, return_inverse=True)
    return np.asarray(x, dtype=float), y.astype(np.int64)


def split(task: str, seed: int, run: int) -> tuple[np.ndarray, ...]:
    """Standardized stratified split of run ``run``: ``x_train, x_test, y_train, y_test``."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    x, y = load_task(task, seed)
    xtr, xte, ytr, yte = train_test_split(
        x,
        y,
        test_size=TEST_FRACTION,
        stratify=y,
        random_state=derived_seed(seed, task, run, "split"),
    )
    scaler = StandardScaler().fit(xtr)
    return scaler.transform(xtr), scaler.transform(xte), ytr, yte


def chance_rate(task: str, seed: int) -> float:
    """Majority-class rate of the task's full data (accuracy of always guessing it)."""
    _, y = load_task(task, seed)
    return float(np.bincount(y).max() / y.size)


#: Algorithm name -> (one-line description, MLP/logreg keyword arguments).
ALGORITHMS: dict[str, tuple[str, dict]] = {
    "sgd": (
        "MLP(32), SGD lr=0.01, no momentum",
        dict(solver="sgd", learning_rate_init=0.01, momentum=0.0),
    ),
    "momentum": (
        "MLP(32), SGD lr=0.01, momentum 0.9",
        dict(solver="sgd", learning_rate_init=0.01, momentum=0.9, nesterovs_momentum=False),
    ),
    "nesterov": (
        "MLP(32), SGD lr=0.01, Nesterov momentum 0.9",
        dict(solver="sgd", learning_rate_init=0.01, momentum=0.9, nesterovs_momentum=True),
    ),
    "adam": ("MLP(32), Adam lr=0.01", dict(solver="adam", learning_rate_init=0.01)),
    "lbfgs": ("MLP(32), L-BFGS (max_iter = iterations)", dict(solver="lbfgs")),
    "logreg": ("logistic regression (L-BFGS), the linear baseline", {}),
}

#: Sizes per compute class; ``max_iter`` is the iteration budget of every learner.
COMPUTE_CLASSES: dict[str, dict] = {
    "tiny": dict(
        algorithms=("sgd", "adam", "lbfgs"),
        tasks=tuple(TASKS)[:8],
        runs=5,
        max_iter=5,
        reference_c=(3.0,),
    ),
    "small": dict(
        algorithms=tuple(ALGORITHMS),
        tasks=tuple(TASKS)[:10],
        runs=25,
        max_iter=20,
        reference_c=(0.3, 1.0, 3.0, 10.0, 30.0),
    ),
    "medium": dict(
        algorithms=tuple(ALGORITHMS),
        tasks=tuple(TASKS),
        runs=50,
        max_iter=20,
        reference_c=(0.3, 1.0, 3.0, 10.0, 30.0),
    ),
    "large": dict(
        algorithms=tuple(ALGORITHMS),
        tasks=tuple(TASKS),
        runs=100,
        max_iter=20,
        reference_c=(0.3, 1.0, 3.0, 10.0, 30.0),
    ),
}

HIDDEN = (32,)
BATCH_SIZE = 32


def experiment_config(compute_class: str = "small", *, seed: int = 0, **overrides) -> dict:
    """The full config (the cache key) of the benchmark at a compute class.

    Parameters
    ----------
    compute_class
        ``tiny``, ``small``, ``medium`` or ``large`` (see :data:`COMPUTE_CLASSES`).
    seed
        Root of every random choice (data, splits, initialisations).
    overrides
        Replace any of ``algorithms``, ``tasks``, ``runs``, ``max_iter``, ``reference_c``.
    """
    if compute_class not in COMPUTE_CLASSES:
        raise ParameterError(
            f"unknown compute_class {compute_class!r}; choose one of {list(COMPUTE_CLASSES)}"
        )
    cfg = dict(COMPUTE_CLASSES[compute_class])
    unknown = set(overrides) - set(cfg)
    if unknown:
        raise ParameterError(f"unknown experiment options {sorted(unknown)}; valid: {list(cfg)}")
    cfg.update(overrides)
    for name in cfg["algorithms"]:
        if name not in ALGORITHMS:
            raise ParameterError(f"unknown algorithm {name!r}; choose from {list(ALGORITHMS)}")
    for name in cfg["tasks"]:
        if name not in TASKS:
            raise ParameterError(f"unknown task {name!r}; choose from {list(TASKS)}")
    return {
        "version": VERSION,
        "compute_class": compute_class,
        "seed": int(seed),
        "algorithms": list(cfg["algorithms"]),
        "tasks": list(cfg["tasks"]),
        "runs": int(cfg["runs"]),
        "max_iter": int(cfg["max_iter"]),
        "reference_c": [float(c) for c in cfg["reference_c"]],
        "hidden": list(HIDDEN),
        "batch_size": BATCH_SIZE,
        "test_fraction": TEST_FRACTION,
    }


def make_estimator(
    algorithm: str, *, max_iter: int, random_state: int, reference_c: Sequence[float] = (1.0,)
):
    """A fresh scikit-learn estimator for ``algorithm`` (or the tuned-SVM reference)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC

    if algorithm == REFERENCE:
        if len(reference_c) == 1:
            return SVC(C=reference_c[0], gamma="scale")
        return GridSearchCV(SVC(gamma="scale"), {"C": list(reference_c)}, cv=3)
    if algorithm == "logreg":
        return LogisticRegression(max_iter=max_iter)
    return MLPClassifier(
        hidden_layer_sizes=HIDDEN,
        batch_size=BATCH_SIZE,
        max_iter=max_iter,
        random_state=random_state,
        **ALGORITHMS[algorithm][1],
    )
