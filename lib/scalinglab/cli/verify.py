"""``scalinglab verify RUN``: re-run a report's study and check every finding is reproduced.

Usage::

    scalinglab verify RUN [--timeout S] [--format table|json] [-q]
    scalinglab verify RUN --seeds 1,2 [--seed-param seed]

The re-run uses the manifest's parameters and goes into a temporary reports
folder (the real ``reports/`` and ``latest`` are untouched). Exit status 0 when
every finding (point and interval) is identical, 1 otherwise; 2 when the run cannot be
verified: it did not finish ``ok``, or it is corrupt (an unreadable ``manifest.json`` or
``results.json``, or a ``results.json`` that differs from the SHA-256 in its manifest;
the message names the file); 130 after Ctrl-C and 143 after ``SIGTERM`` (the re-run is
stopped and its temporary folder removed). ``-q`` prints only the
verdict (with the findings that differ, if any), for scripts.

With ``--seeds``, the analysis is re-run once per seed (the parameter ``seed``, or
``--seed-param``), everything else as recorded, and every claim whose verdict changes is
listed (:mod:`scalinglab.runner.seeds`); exit status 0 when none changes.

Neither form runs an experiment: the re-runs read the committed results under ``data/``.
A re-run that would compute a dataset (one that is missing, or keyed by the parameter
``--seeds`` changes: a training or timing seed rather than an analysis seed) is refused
before anything is computed, with exit status 2 and a message naming the dataset.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "verify",
        help="re-run a report and check its findings are reproduced exactly",
        description="Re-run RUN's study with the parameters in its manifest (into a temporary "
        "folder) and compare every finding exactly.",
    )
    p.add_argument(
        "run",
        metavar="RUN",
        help="run folder, study/variant/run_id (or .../latest), or run-id prefix",
    )
    p.add_argument(
        "--timeout", type=float, default=None, metavar="S", help="per-cell timeout in seconds"
    )
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the verdict (and the findings that differ); the exit status says the same",
    )
    p.add_argument(
        "--seeds",
        default=None,
        metavar="S1,S2",
        help="re-run with these analysis seeds instead and list every verdict that changes",
    )
    p.add_argument(
        "--seed-param",
        default="seed",
        metavar="NAME",
        help="the notebook parameter that seeds the resampling (default: seed)",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from scalinglab.runner.execute import sigterm_as_interrupt
    from scalinglab.runner.store import RunStatus, resolve_run
    from scalinglab.runner.verify import verify_run
    from scalinglab.textfmt import json_safe

    run_dir = resolve_run(args.run)
    if getattr(args, "seeds", None):
        with sigterm_as_interrupt():
            return _seeds(args, run_dir)
    with sigterm_as_interrupt():  # a scheduler's SIGTERM stops the re-run like Ctrl-C
        res = verify_run(
            run_dir,
            cell_timeout=args.timeout,
            command=shlex.join(getattr(args, "argv", None) or sys.argv),
        )
    if args.quiet:
        print(verdict_line(res))
    elif args.format == "json":
        print(json.dumps(json_safe(res.to_json()), indent=2))
    else:
        print(res.text())
    if res.rerun_status == RunStatus.INTERRUPTED:
        return 143 if "SIGTERM" in (res.rerun_error or "") else 130
    return 0 if res.reproduced else 1


def verdict_line(res) -> str:
    """One line: ``REPRODUCED: RUN`` or ``NOT REPRODUCED: RUN (...)`` saying why."""
    if res.reproduced:
        return f"REPRODUCED: {res.run} ({len(res.rows)} findings identical)"
    why = [] if res.rerun_status == "ok" else [f"re-run {res.rerun_status}: {res.rerun_error}"]
    differ = [r["name"] for r in res.rows if not r["same"]]
    if differ:
        shown = ", ".join(differ[:5]) + (f" and {len(differ) - 5} more" if len(differ) > 5 else "")
        why.append(f"{len(differ)} of {len(res.rows)} findings differ: {shown}")
    return f"NOT REPRODUCED: {res.run} ({'; '.join(why)})"


def _seeds(args: argparse.Namespace, run_dir: object) -> int:
    from pathlib import Path

    from scalinglab.runner.seeds import parse_seeds, seed_robustness
    from scalinglab.textfmt import json_safe

    res = seed_robustness(
        Path(str(run_dir)),
        parse_seeds(args.seeds),
        param=args.seed_param,
        cell_timeout=args.timeout,
        command=shlex.join(getattr(args, "argv", None) or sys.argv),
    )
    if args.format == "json":
        print(json.dumps(json_safe(res.to_json()), indent=2))
    else:
        print(res.text())
    return 0 if res.stable else 1
