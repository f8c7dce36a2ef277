"""``scalinglab verify RUN``: re-run a report's study and check every finding is reproduced.

Usage::

    scalinglab verify RUN [--timeout S] [--format table|json]
    scalinglab verify RUN --seeds 1,2 [--seed-param seed]

The re-run uses the manifest's parameters and goes into a temporary reports
folder (the real ``reports/`` and ``latest`` are untouched). Exit status 0 when
every finding (point and interval) is identical, 1 otherwise.

With ``--seeds``, the analysis is re-run once per seed (the parameter ``seed``, or
``--seed-param``), everything else as recorded, and every claim whose verdict changes is
listed (:mod:`scalinglab.runner.seeds`); exit status 0 when none changes.
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
    from scalinglab.runner.store import resolve_run
    from scalinglab.runner.verify import verify_run
    from scalinglab.textfmt import json_safe

    run_dir = resolve_run(args.run)
    if getattr(args, "seeds", None):
        return _seeds(args, run_dir)
    res = verify_run(
        run_dir,
        cell_timeout=args.timeout,
        command=shlex.join(getattr(args, "argv", None) or sys.argv),
    )
    if args.format == "json":
        print(json.dumps(json_safe(res.to_json()), indent=2))
    else:
        print(res.text())
    return 0 if res.reproduced else 1


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
