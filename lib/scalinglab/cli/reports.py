"""``scalinglab reports``: list versioned reports (read only), write the index, diff, prune.

Usage::

    scalinglab reports [STUDY] [--limit N] [--format table|json]
    scalinglab reports --write-index
    scalinglab reports diff STUDY[/VARIANT] [--rtol R] [--atol A] [--format table|json]
    scalinglab reports diff RUN_B [...]
    scalinglab reports diff RUN_A RUN_B [...]
    scalinglab reports prune [--keep N]

``reports`` reads and prints; it writes nothing. Without STUDY it prints one line per
study and variant, newest run first (the first N with ``--limit``); with STUDY, each of
its variants' claims summary, newest N versions (default 10) and the latest version's
headline findings. Local variant folders that git ignores (``tiny``, ``user``,
``*-custom``) are listed, marked ``local``. ``--write-index`` writes
``reports/index.html`` and ``reports/index.json`` (what ``nox -s reports`` and
``scalinglab run`` do).

A RUN is a run folder path, ``study/variant/run_id`` (or ``study/variant/latest``),
or a unique run-id prefix. With one argument, ``diff`` compares that run (a
study's latest run, variant ``default`` unless given) with the most recent
earlier good version whose findings differ, saying how many identical versions
it skipped. It prints what differs between the two runs (parameters, inputs,
notebook, library, lock, commit, packages), then the claims whose verdict changed,
then the findings that changed beyond ``--rtol`` (those that moved beyond their
interval first); unchanged findings are counted. A missing or corrupt manifest is
an error naming the file (exit 2). ``prune`` removes the HTML and executed notebooks
of all but the newest N runs of each study and variant (never ``latest``), keeping
every version's findings and manifest, and rewrites the index.
"""

from __future__ import annotations

import argparse
import json

FORMATS = ("table", "json")
#: Versions per variant that ``reports STUDY`` shows unless ``--limit`` says otherwise.
DEFAULT_RUNS_SHOWN = 10

_DESCRIPTION = (
    "List every study's report versions (reads only; --write-index writes "
    "reports/index.html and index.json). 'reports diff ...': what differs between two "
    "versions and which findings moved; 'reports prune': drop old runs' HTML. "
    "See 'scalinglab reports diff --help'."
)


def _listing_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=int, default=None, metavar="N", help="show at most N rows")
    p.add_argument("--format", choices=FORMATS, default=None)
    p.add_argument(
        "--write-index",
        action="store_true",
        help="write reports/index.html and reports/index.json instead of listing",
    )


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "reports",
        help="list report versions (read only), write the index, diff two versions",
        description=_DESCRIPTION,
    )
    p.add_argument(
        "study",
        nargs="?",
        metavar="STUDY | diff | prune",
        help="list one study's versions; or 'diff RUN [RUN]', or 'prune'",
    )
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    _listing_options(p)
    p.set_defaults(func=main)


def _diff_parser() -> argparse.ArgumentParser:
    from scalinglab.runner.diff import NOISE_ATOL, NOISE_RTOL

    d = argparse.ArgumentParser(
        prog="scalinglab reports diff",
        description="What differs between two versions of a report (parameters, inputs, "
        "notebook, library, lock, commit, packages), the claims whose verdict changed, and "
        "the findings that changed beyond a noise threshold: delta and delta relative to "
        "the CI half-width, 'MOVED' when |delta| exceeds it; unchanged findings are counted. "
        "With one argument (a study, study/variant or run), compare it with the most recent "
        "earlier version whose findings differ.",
    )
    d.add_argument(
        "runs", metavar="RUN", nargs="+", help="STUDY[/VARIANT] or RUN_B, or RUN_A RUN_B"
    )
    d.add_argument(
        "--rtol",
        type=float,
        default=NOISE_RTOL,
        help="a finding changed when its point or a CI bound moved by more than "
        "atol + rtol * max(|A|, |B|, CI half-width) (default: %(default)g)",
    )
    d.add_argument("--atol", type=float, default=NOISE_ATOL, help="(default: %(default)g)")
    d.add_argument("--format", choices=FORMATS, default=None)
    return d


def _prune_parser() -> argparse.ArgumentParser:
    pr = argparse.ArgumentParser(
        prog="scalinglab reports prune",
        description="Remove report.html and the executed notebook of all but the newest N "
        "runs per study and variant (never latest); results.json and manifest.json stay, "
        "and the index is rewritten.",
    )
    pr.add_argument("--keep", type=int, default=1, help="runs kept whole (default: %(default)s)")
    return pr


def main(args: argparse.Namespace) -> int:
    from scalinglab.errors import StudyError

    command, rest = args.study, list(getattr(args, "rest", None) or [])
    if command == "diff":
        sub = _diff_parser().parse_args(rest)
        sub.format = sub.format or args.format
        return _diff(sub)
    if command == "prune":
        sub = _prune_parser().parse_args(rest)
        return _prune(sub.keep)
    if rest:  # options typed after STUDY
        later = argparse.ArgumentParser(prog="scalinglab reports STUDY")
        _listing_options(later)
        extra = later.parse_args(rest)
        for key in ("limit", "format", "write_index"):
            if getattr(extra, key) not in (None, False):
                setattr(args, key, getattr(extra, key))
    if args.limit is not None and args.limit < 1:
        raise StudyError(f"--limit must be >= 1, got {args.limit}")
    if args.write_index:
        if command:
            raise StudyError("--write-index writes the whole index: give no STUDY")
        return _write_index(args.format)
    return _list(command, limit=args.limit, fmt=args.format)


def _list(study: str | None, *, limit: int | None, fmt: str | None) -> int:
    from scalinglab.errors import StudyError
    from scalinglab.runner import index
    from scalinglab.textfmt import json_safe

    idx = index.collect(studies=[study] if study else None, include_ignored=True)
    if study and not idx["studies"]:
        from scalinglab.runner.store import list_runs

        known = sorted({r.study for r in list_runs()})
        raise StudyError(f"no reports of study {study!r} (reports of: {', '.join(known)})")
    if fmt == "json":
        print(json.dumps(json_safe(idx), indent=2))
        return 0
    if study:
        print(index.listing_text(idx, limit=limit or DEFAULT_RUNS_SHOWN, detail=True))
    else:
        print(index.listing_text(idx, limit=limit))
    return 0


def _write_index(fmt: str | None) -> int:
    from scalinglab.runner import index

    html_path, json_path, idx = index.write_index()
    if fmt == "json":
        print(json.dumps(idx, indent=2))
    else:
        print(f"wrote {html_path} and {json_path.name}")
    return 0


def _prune(keep: int) -> int:
    from scalinglab.errors import StudyError
    from scalinglab.runner import index
    from scalinglab.runner.store import prune_html

    if keep < 1:
        raise StudyError(f"--keep must be >= 1 (the newest run stays whole), got {keep}")
    removed = prune_html(keep=keep)
    index.write_index()
    print(
        f"removed {len(removed)} files (HTML and notebooks of older runs); "
        "findings and manifests kept; index rewritten"
    )
    return 0


def _diff(args: argparse.Namespace) -> int:
    from scalinglab.errors import StudyError
    from scalinglab.runner.diff import diff_runs, diff_text, previous_differing
    from scalinglab.runner.store import resolve_run
    from scalinglab.textfmt import json_safe

    if len(args.runs) > 2:
        raise StudyError("reports diff: give one run (or study) or two runs")
    if not (args.rtol >= 0 and args.atol >= 0):
        raise StudyError(f"--rtol and --atol must be >= 0, got {args.rtol} and {args.atol}")
    tol = {"rtol": args.rtol, "atol": args.atol}
    if len(args.runs) == 2:
        d = diff_runs(resolve_run(args.runs[0]), resolve_run(args.runs[1]), **tol)
    else:
        run_b = _resolve_one(args.runs[0])
        run_a, skipped = previous_differing(run_b)
        if run_a is None:
            print(f"{args.runs[0]}: no earlier good version to compare with")
            return 0
        d = diff_runs(run_a, run_b, **tol)
        d["note"] = (
            f"compared with the latest earlier version whose findings differ; "
            f"{skipped} identical version(s) in between skipped"
            if skipped
            else "compared with the previous version"
        )
    if args.format == "json":
        print(json.dumps(json_safe(d), indent=2))
    else:
        print(diff_text(d))
    return 0


def _resolve_one(spec: str):
    """A study (``study`` or ``study/variant``: its latest run) or any run spec."""
    from scalinglab.runner.store import latest_run, resolve_run
    from scalinglab.runner.study import DEFAULT_VARIANT

    parts = spec.strip("/").split("/")
    if len(parts) <= 2:
        run = latest_run(parts[0], parts[1] if len(parts) == 2 else DEFAULT_VARIANT)
        if run is not None:
            return run
    return resolve_run(spec)
