"""``scalinglab reports``: list versioned reports, write the index, diff two runs.

Usage::

    scalinglab reports [--format table|json]
    scalinglab reports diff STUDY[/VARIANT] [--format table|json]
    scalinglab reports diff RUN_B [--format table|json]
    scalinglab reports diff RUN_A RUN_B [--format table|json]
    scalinglab reports prune [--keep N]

A RUN is a run folder path, ``study/variant/run_id`` (or ``study/variant/latest``),
or a unique run-id prefix. With one argument, ``diff`` compares that run (a
study's latest run, variant ``default`` unless given) with the most recent
earlier good version whose findings differ, saying how many identical versions
it skipped. Verdict changes come first, then findings that moved beyond their
interval, then those that changed within it; unchanged findings are counted.
``reports`` prints every version with its claims-ledger summary and headline
findings, and writes ``reports/index.html`` and ``reports/index.json``. ``prune`` removes the HTML and executed notebooks of all
but the newest N runs of each study and variant (never ``latest``), keeping every
version's findings and manifest.
"""

from __future__ import annotations

import argparse
import json

FORMATS = ("table", "json")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "reports",
        help="list report versions and write reports/index.html; diff two runs",
        description="List every study's report versions with status and headline findings, "
        "and write reports/index.html and reports/index.json.",
    )
    p.add_argument("--format", choices=FORMATS, default="table")
    sub = p.add_subparsers(dest="reports_cmd", metavar="{diff,prune}")
    d = sub.add_parser(
        "diff",
        help="which verdicts and findings moved between two versions",
        description="Compare the findings and claim verdicts of two runs: delta "
        "and delta relative to the CI half-width; 'moved' when |delta| exceeds "
        "it. With one argument (a study, study/variant or run), compare it with "
        "the most recent earlier version whose findings differ.",
    )
    d.add_argument(
        "runs", metavar="RUN", nargs="+", help="STUDY[/VARIANT] or RUN_B, or RUN_A RUN_B"
    )
    d.add_argument("--format", dest="diff_format", choices=FORMATS, default=None)
    pr = sub.add_parser(
        "prune",
        help="drop old runs' HTML, keep their findings",
        description="Remove report.html, report-code.html and the executed "
        "notebook of all but the newest N runs per study and variant (never "
        "latest); results.json and manifest.json stay, and the index is "
        "rewritten.",
    )
    pr.add_argument("--keep", type=int, default=1, help="runs kept whole (default: %(default)s)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from scalinglab.runner import index

    if getattr(args, "reports_cmd", None) == "diff":
        return _diff(args)
    if getattr(args, "reports_cmd", None) == "prune":
        from scalinglab.runner.store import prune_html

        if args.keep < 1:
            from scalinglab.errors import StudyError

            raise StudyError(f"--keep must be >= 1 (the newest run stays whole), got {args.keep}")
        removed = prune_html(keep=args.keep)
        index.write_index()
        print(
            f"removed {len(removed)} files (HTML and notebooks of older runs); "
            "findings and manifests kept; index rewritten"
        )
        return 0
    html_path, json_path, idx = index.write_index()
    if args.format == "json":
        print(json.dumps(idx, indent=2))
    else:
        print(index.listing_text(idx))
        print(f"wrote {html_path} and {json_path.name}")
    return 0


def _diff(args: argparse.Namespace) -> int:
    from scalinglab.runner.diff import diff_runs, diff_text, previous_differing
    from scalinglab.runner.store import resolve_run
    from scalinglab.textfmt import json_safe

    if len(args.runs) > 2:
        raise SystemExit("scalinglab reports diff: give one run (or study) or two runs")
    if len(args.runs) == 2:
        d = diff_runs(resolve_run(args.runs[0]), resolve_run(args.runs[1]))
    else:
        run_b = _resolve_one(args.runs[0])
        run_a, skipped = previous_differing(run_b)
        if run_a is None:
            print(f"{args.runs[0]}: no earlier good version to compare with")
            return 0
        d = diff_runs(run_a, run_b)
        d["note"] = (
            f"compared with the latest earlier version whose findings differ; "
            f"{skipped} identical version(s) in between skipped"
            if skipped
            else "compared with the previous version"
        )
    if (args.diff_format or args.format) == "json":
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
