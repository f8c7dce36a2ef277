"""``scalinglab status``: which reports are up to date or stale, and why; runs nothing.

Usage::

    scalinglab status [STUDY ...] [--variant V ...] [--format table|json]

For each study and each of its variants (``default``, ``tiny`` and the declared
ones), compares what ``scalinglab run`` would run now (cells, merged parameters,
inputs, library, lock) with the variant's latest good report and says which
part changed; a study that reads ``data/hardware/`` also says when this machine
has no hardware record (stale if running it would measure this machine; a note if
another machine's committed record would be reused). Unfinished run folders (``running``, ``killed``) are
listed after. A latest report whose ``manifest.json`` or ``results.json`` is unreadable,
or whose ``results.json`` differs from the SHA-256 its manifest recorded, is ``corrupt``
(the reason names the file). Exit status 0 (whatever the states), 2 for an unknown study.
"""

from __future__ import annotations

import argparse
import json


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "status",
        help="which studies are up to date or stale, and why (runs nothing)",
        description="Compare every study/variant with its latest good report (cache key: "
        "cells, parameters, inputs, library, lock) and say why the stale ones are stale.",
    )
    p.add_argument("studies", nargs="*", metavar="STUDY", help="studies (default: all)")
    p.add_argument(
        "--variant",
        action="append",
        default=None,
        metavar="V",
        help="only this variant (repeatable; default: every variant)",
    )
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from scalinglab.paths import require_checkout
    from scalinglab.runner.status import status_all, unfinished_runs
    from scalinglab.textfmt import format_table

    require_checkout()
    states = status_all(studies=args.studies or None, variants=args.variant)
    leftovers = unfinished_runs()
    if args.format == "json":
        print(
            json.dumps(
                {
                    "studies": [s.to_json() for s in states],
                    "unfinished": [{"run": ref.key, "state": state} for ref, state in leftovers],
                },
                indent=2,
            )
        )
        return 0
    rows, footnotes = table_rows(states)
    print(format_table(["study", "variant", "state", "latest", "why"], rows))
    for i, text in enumerate(footnotes, 1):
        print(f"[{i}] {text}")
    if leftovers:
        print("\nunfinished run folders ('scalinglab reports prune' removes killed ones):")
        for ref, state in leftovers:
            print(f"  {ref.key}: {state}")
    return 0


#: A reason or note longer than this that several rows share is printed once, below.
_FOOTNOTE_AFTER = 60


def table_rows(states: list) -> tuple[list[list[str]], list[str]]:
    """Table rows (one per reason or note) and the long lines they share, printed once.

    A line that several studies repeat word for word (this machine's missing hardware
    record, on every study that reads ``data/hardware/``) would fill the table; each
    row says ``[n]`` instead and the text follows the table once.
    """
    per_state = [[*s.reasons, *(f"note: {n}" for n in s.notes)] for s in states]
    seen: dict[str, int] = {}
    for lines in per_state:
        for line in dict.fromkeys(lines):
            seen[line] = seen.get(line, 0) + 1
    shared = [line for line, n in seen.items() if n > 1 and len(line) > _FOOTNOTE_AFTER]
    mark = {line: f"[{i}]" for i, line in enumerate(shared, 1)}
    rows: list[list[str]] = []
    for s, lines in zip(states, per_state, strict=True):
        refs = " ".join(mark[line] for line in lines if line in mark)
        shown = [line for line in lines if line not in mark] + ([refs] if refs else [])
        shown = shown or [""]
        rows.append([s.study, s.variant, s.state, s.run_id or "", shown[0]])
        rows += [["", "", "", "", line] for line in shown[1:]]
    return rows, shared
