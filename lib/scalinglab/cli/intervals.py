"""``scalinglab intervals``: interval estimates of aggregate metrics from score files.

Reads SCORES (tidy CSV/Parquet, rliable-style JSON per algorithm, netCDF, or
directories of them; see :mod:`scalinglab.data.scores`), computes stratified
bootstrap intervals of the requested metrics for every algorithm and, with
``--compare X:Y``, the probability of improvement P(X > Y), and prints JSON::

    {"confidence": 0.95, "reps": 50000, "method": "percentile", "seed": 0,
     "metrics": {ALG: {METRIC: {"point": x, "ci": [lo, hi]}}},
     "probability_of_improvement": {"X:Y": {"point": p, "ci": [lo, hi]}}}

``--profiles`` adds run-score performance profiles with pointwise bands (fraction
of runs above each threshold tau, ``--poi-reps`` replicates) under
``"performance_profiles"``; ``--plot PATH`` (``.png`` or ``.svg``) draws the
intervals, and with ``--profiles`` the profiles next to it (``<stem>-profiles<suffix>``).

Defaults follow the paper: 50,000 replicates for the metrics (``--reps``) and
2,000 for P(X > Y) (``--poi-reps``; the JSON's ``reps`` is the metrics' count).
``--seed`` (default 0) makes the output reproducible: metric intervals and
P(X > Y) draw from two independent streams of that seed, each keyed by
algorithm (or pair) name, so adding a comparison or an algorithm never changes
another number.

Big inputs: before reading more than ``BIG_INPUT`` bytes it says on stderr how many
score rows it expects and about how much memory they need (measured: about 180 bytes a
row while reading, ``benchmarks/bench_big_scores.py``, and about 3.5 kB per algorithm),
and refuses at once, naming the files, when that is more than this machine has
available. The bootstrap shows a tqdm bar on a terminal when it is long (many
algorithms or replicates). Algorithm names are printed with control characters
escaped in ``--format table`` (JSON escapes them itself).

Plain rliable-style JSON files with a plain CSV of references
(:mod:`scalinglab.data.plain_scores`) are read without pandas or xarray, the
heavy imports of the general path; the numbers are the same either way.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from scalinglab.data.plain_scores import NAN_POLICIES, read_plain_references, read_plain_scores
from scalinglab.stats.bootstrap import BATCH_BYTES
from scalinglab.stats.metrics import resolve_metrics
from scalinglab.stats.table_intervals import DEFAULT_METRICS, METHODS, tables_intervals
from scalinglab.textfmt import json_number


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "intervals",
        help="stratified bootstrap CIs of IQM, median, mean, optimality gap; P(X > Y)",
        description="\n\n".join(__doc__.split("\n\n")[:2]),
    )
    p.add_argument(
        "scores",
        nargs="+",
        metavar="SCORES",
        help="score files (.csv, .tsv, .parquet, .json, .nc) or directories",
    )
    p.add_argument(
        "--metrics",
        default=",".join(DEFAULT_METRICS),
        help="comma-separated metrics (default: %(default)s)",
    )
    p.add_argument(
        "--reps",
        type=int,
        default=50_000,
        help="bootstrap replicates for the metrics (default: %(default)s)",
    )
    p.add_argument(
        "--poi-reps",
        type=int,
        default=2_000,
        help="bootstrap replicates for P(X > Y) (default: %(default)s)",
    )
    p.add_argument(
        "--confidence", type=float, default=0.95, help="confidence level (default: %(default)s)"
    )
    p.add_argument(
        "--method",
        choices=METHODS,
        default="percentile",
        help="interval method (default: %(default)s)",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument(
        "--compare",
        action="extend",
        nargs="+",
        default=[],
        metavar="X:Y",
        help="pairs of algorithms for P(X > Y)",
    )
    p.add_argument(
        "--nan",
        choices=NAN_POLICIES,
        default="error",
        help="NaN scores: fail naming the cell, or drop them as absent runs "
        "with a warning (default: %(default)s)",
    )
    p.add_argument(
        "--references",
        metavar="FILE",
        default="",
        help="table with columns task, random, reference: normalize the scores to "
        "(raw - random) / (reference - random) first",
    )
    p.add_argument("--task-bootstrap", action="store_true", help="resample tasks as well as runs")
    p.add_argument(
        "--profiles",
        action="store_true",
        help="add run-score performance profiles with pointwise bands",
    )
    p.add_argument(
        "--plot",
        metavar="PATH",
        default="",
        help="write the intervals (and, with --profiles, the profiles) as a .png or .svg",
    )
    p.add_argument(
        "--format",
        choices=("json", "table"),
        default="json",
        help="output format (default: %(default)s)",
    )
    p.set_defaults(func=run)
    return p


#: Input size (bytes) above which ``intervals`` says on stderr what it is reading and
#: how much memory that needs.
BIG_INPUT = 50 * 2**20
#: Peak memory while reading and checking a tidy table, per score row (10M rows: 1.68
#: GiB above the imports, ``benchmarks/results/big_scores.json``).
BYTES_PER_ROW = 180
#: Memory per algorithm (its table, keyed generator and labels; 1e5 algorithms of a few
#: runs: about 350 MB above the imports).
BYTES_PER_ALGORITHM = 3_500
#: Replicates x algorithms above which the bootstrap is announced on stderr and shows
#: its bar on a terminal.
BAR_UNITS = 1_000_000


def compute(args: argparse.Namespace) -> dict:
    """The JSON-ready result of an ``intervals`` invocation.

    Warnings (NaN scores dropped, a single run per task, ...) go to stderr as one
    line each, ``scalinglab intervals: warning: ...``, each message once.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return _compute(args)
        finally:
            for message in dict.fromkeys(" ".join(str(w.message).split()) for w in caught):
                print(f"scalinglab intervals: warning: {message}", file=sys.stderr)


def _input_bytes(paths: list[str]) -> int:
    total = 0
    for item in map(Path, paths):
        files = [f for f in item.iterdir() if f.is_file()] if item.is_dir() else [item]
        total += sum(f.stat().st_size for f in files if f.exists())
    return total


def _plain_tables(args: argparse.Namespace) -> tuple[list[str], list[np.ndarray]] | None:
    """Algorithms and ``(run, task)`` tables of plain inputs, or None (see the docstring)."""
    plain = read_plain_scores(args.scores)
    if plain is not None and args.references:
        refs = read_plain_references(args.references)
        try:
            plain = None if refs is None else plain.normalized(*refs)
        except KeyError:  # a task without references: the general path words the error
            plain = None
    if plain is None or not np.isfinite(plain.values[~np.isnan(plain.values)]).all():
        return None
    return plain.algorithms, list(plain.values)


def _labelled_scores(args: argparse.Namespace):
    """The scores as :func:`scalinglab.data.scores.load_scores` reads them, normalized."""
    from scalinglab.data.scores import load_references, load_scores
    from scalinglab.stats.normalize import normalize

    scores = load_scores(args.scores, nan=args.nan)
    if args.references:
        random, reference = load_references(args.references)
        scores = normalize(scores, random=random, reference=reference)
    return scores


def _compute(args: argparse.Namespace) -> dict:
    from scalinglab.errors import InputError

    names = resolve_metrics(args.metrics)
    for flag, value in (("--reps", args.reps), ("--poi-reps", args.poi_reps)):
        if value < 1:
            raise InputError(f"{flag} must be >= 1, got {value}")
    if not 0 < args.confidence < 1:
        raise InputError(f"--confidence must be in (0, 1), got {args.confidence}")
    if args.seed < 0:
        raise InputError(f"--seed must be >= 0, got {args.seed}")
    for pair in args.compare:
        x, sep, y = pair.partition(":")
        if sep and x.strip() and x.strip() == y.strip():
            raise InputError(
                f"--compare {pair}: compares {x.strip()!r} with itself "
                "(P(X > X) is 0.5 by definition); give two algorithms X:Y"
            )
    size = _input_bytes(args.scores)
    if size > BIG_INPUT:
        _check_memory(args.scores, size)
    plot = getattr(args, "plot", "")
    if plot and Path(plot).suffix.lower() not in (".png", ".svg"):
        raise InputError(f"--plot {plot}: give a .png or .svg path")
    profiles = getattr(args, "profiles", False)
    # spawn(3) gives the same first two children as spawn(2): metrics and P(X > Y) keep
    # their streams, the profiles get their own
    rng_metrics, rng_poi, rng_profiles = np.random.default_rng(args.seed).spawn(3)
    plain = None if (args.compare or profiles) else _plain_tables(args)
    scores = None
    if plain is not None:
        algorithms, tables = plain
    else:
        from scalinglab.stats.layout import check_scores

        scores = _labelled_scores(args)
        checked = check_scores(scores)
        algorithms = [str(a) for a in checked.coords["algorithm"].values]
        tables = list(checked.values)
    point, lo, hi = tables_intervals(
        tables,
        algorithms,
        metrics=names,
        reps=args.reps,
        level=args.confidence,
        method=args.method,
        rng=rng_metrics,
        task_bootstrap=args.task_bootstrap,
        progress=_announce_bootstrap(args.reps, algorithms, tables),
    )
    out: dict = {
        "confidence": args.confidence,
        "reps": args.reps,
        "method": args.method,
        "seed": args.seed,
        "metrics": {
            alg: {
                m: {
                    "point": json_number(float(point[a, k])),
                    "ci": [json_number(float(lo[a, k])), json_number(float(hi[a, k]))],
                }
                for k, m in enumerate(names)
            }
            for a, alg in enumerate(algorithms)
        },
        "probability_of_improvement": {},
    }
    if args.compare:
        from scalinglab.stats.improvement import pairwise_probability_of_improvement

        assert scores is not None  # comparisons take the general path
        poi = pairwise_probability_of_improvement(
            scores, args.compare, reps=args.poi_reps, level=args.confidence, rng=rng_poi
        )
        for i, label in enumerate(poi.coords["pair"].values):
            out["probability_of_improvement"][str(label)] = {
                "point": json_number(poi.point.values[i]),
                "ci": [json_number(poi.lo.values[i]), json_number(poi.hi.values[i])],
            }
    profile = None
    if profiles:
        from scalinglab.stats.profiles import performance_profile

        assert scores is not None  # profiles take the general path
        taus = np.linspace(min(0.0, float(scores.quantile(0.01))), float(scores.quantile(0.99)), 51)
        profile = performance_profile(
            scores, taus, reps=args.poi_reps, level=args.confidence, rng=rng_profiles, kind="score"
        )
        out["performance_profiles"] = {
            "kind": "score",
            "taus": [json_number(float(t)) for t in taus],
            "algorithms": {
                str(a): {
                    v: [json_number(float(x)) for x in profile[v].sel(algorithm=a).values]
                    for v in ("point", "lo", "hi")
                }
                for a in profile.coords["algorithm"].values
            },
        }
    if plot:
        out["plots"] = _write_plots(Path(plot), algorithms, names, point, lo, hi, profile)
    return out


def _write_plots(path: Path, algorithms, names, point, lo, hi, profile) -> list[str]:
    """Draw the intervals (and the profiles) with :mod:`scalinglab.plots.intervals`."""
    import matplotlib

    matplotlib.use("Agg")
    import xarray as xr

    from scalinglab.plots import intervals as plots

    dims = ("algorithm", "metric")
    ds = xr.Dataset(
        {"point": (dims, point), "lo": (dims, lo), "hi": (dims, hi)},
        coords={"algorithm": list(algorithms), "metric": list(names)},
    )
    written = []
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = plots.plot_interval_estimates(ds)
    fig.savefig(path, bbox_inches="tight")
    written.append(str(path))
    if profile is not None:
        other = path.with_name(f"{path.stem}-profiles{path.suffix}")
        fig = plots.plot_performance_profiles([profile], titles=["score distribution"])
        fig.savefig(other, bbox_inches="tight")
        written.append(str(other))
    return written


def _f(x: float | None) -> str:
    return "nan" if x is None else f"{x:.4f}"


def _table(result: dict) -> str:
    level = f"{100 * result['confidence']:g}%"
    lines = [
        f"{result['method']} {level} CIs, {result['reps']} bootstrap replicates, "
        f"seed {result['seed']}",
        "",
    ]
    width = max(len("algorithm"), *(len(printable(a)) for a in result["metrics"]))
    lines.append(f"{'algorithm':<{width}}  {'metric':<15} {'point':>10}  {'CI':<24}")
    for name, metrics in result["metrics"].items():
        alg = printable(name)
        for m, v in metrics.items():
            lo, hi = v["ci"]
            lines.append(f"{alg:<{width}}  {m:<15} {_f(v['point']):>10}  [{_f(lo)}, {_f(hi)}]")
    if result["probability_of_improvement"]:
        lines += ["", f"{'P(X > Y)':<{width + 17}} {'point':>10}  CI"]
        for label, v in result["probability_of_improvement"].items():
            pair = printable(label)
            lo, hi = v["ci"]
            lines.append(f"{pair:<{width + 17}} {_f(v['point']):>10}  [{_f(lo)}, {_f(hi)}]")
    return "\n".join(lines)


def printable(name: str) -> str:
    """``name`` with control characters (ANSI escapes, newlines, tabs) shown escaped.

    A score file's algorithm names reach the terminal: ``"\\x1b[31mA"`` must not
    recolour it nor a newline break the table. Printable text, non-ASCII included,
    is kept.
    """
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in name)


def _bar_wanted(reps: int, n_tables: int, *, tty: bool) -> bool | None:
    """True (show the bootstrap's bar) for long jobs on a terminal; else None (its own
    rule: only very large tables, and only on a terminal)."""
    return True if tty and reps * n_tables >= BAR_UNITS else None


def _announce_bootstrap(reps: int, algorithms: list[str], tables: list) -> bool | None:
    """Before a long bootstrap: one line on stderr, and whether to show the bar.

    Refuses (one line) when it would not fit in memory: each algorithm's state, and
    one resampling batch (at most ``BATCH_BYTES``) per worker thread.
    """
    from scalinglab.errors import InputError

    if reps * len(algorithms) < BAR_UNITS:
        return None
    largest = max(np.asarray(t).size for t in tables)
    workers = min(len(tables), os.cpu_count() or 1)
    batch = min(BATCH_BYTES, 8 * reps * largest)
    need = len(algorithms) * BYTES_PER_ALGORITHM + workers * batch
    avail = _available_memory()
    if avail is not None and need > avail:
        raise InputError(
            f"{len(algorithms):,} algorithms need about {need / 2**30:,.1f} GiB of memory "
            f"to bootstrap; {avail / 2**30:,.1f} GiB is available"
        )
    print(
        f"scalinglab intervals: bootstrapping {len(algorithms):,} algorithms x {reps:,} "
        f"replicates (about {need / 2**20:,.0f} MiB of memory) ...",
        file=sys.stderr,
        flush=True,
    )
    return _bar_wanted(reps, len(algorithms), tty=sys.stderr.isatty())


def _estimate_rows(path: Path) -> int:
    """About how many score rows ``path`` holds, without reading it all."""
    size = path.stat().st_size
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq

            return int(pq.read_metadata(path).num_rows)
        except Exception:  # unreadable: the reader names the problem
            return size // 8
    if suffix in (".csv", ".tsv", ".txt"):
        with path.open("rb") as fh:
            head = fh.read(1 << 20)
        lines = max(head.count(b"\n"), 1)
        return max(round(size / (len(head) / lines)) - 1, 0)  # less the header line
    if suffix == ".json":
        return size // 12  # rliable JSON: a score and its separator
    return size // 8  # netCDF and others: float64 scores


def _available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``), or None if unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for item in map(Path, paths):
        out += sorted(f for f in item.iterdir() if f.is_file()) if item.is_dir() else [item]
    return [f for f in out if f.exists()]


def memory_needed(paths: list[str]) -> tuple[int, int]:
    """``(rows, bytes)``: the score rows expected in ``paths`` and the peak memory that
    reading and bootstrapping them needs, above the imports (an estimate)."""
    files = _files(paths)
    rows = sum(_estimate_rows(f) for f in files)
    # one rliable JSON file per algorithm; a table's algorithms are known once read
    algorithms = len(files) if all(f.suffix.lower() == ".json" for f in files) else 0
    return rows, rows * BYTES_PER_ROW + algorithms * BYTES_PER_ALGORITHM


def _check_memory(paths: list[str], size: int) -> None:
    """Say on stderr what a big input needs; refuse one this machine cannot hold."""
    from scalinglab.errors import InputError

    rows, need = memory_needed(paths)
    avail = _available_memory()
    named = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    if avail is not None and need > avail:
        raise InputError(
            f"{named}: about {rows:,} score rows ({size / 2**20:,.0f} MiB) need about "
            f"{need / 2**30:,.1f} GiB of memory to read and bootstrap; "
            f"{avail / 2**30:,.1f} GiB is available. Split the table (by algorithm or "
            "task) or run on a machine with more memory"
        )
    print(
        f"scalinglab intervals: reading {size / 2**20:,.0f} MiB of scores (about "
        f"{rows:,} rows; needs about {need / 2**30:,.1f} GiB of memory"
        + (f", {avail / 2**30:,.1f} GiB available) ..." if avail is not None else ") ..."),
        file=sys.stderr,
        flush=True,
    )


def run(args: argparse.Namespace) -> int:
    result = compute(args)
    if args.format == "json":
        print(json.dumps(result, indent=2))
    else:
        print(_table(result))
    return 0
