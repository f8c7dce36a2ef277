"""The ``scalinglab`` command: thin verbs that parse, call the library and print.

Each verb lives in its own module ``scalinglab.cli.<verb>`` exposing
``add_parser(subparsers)`` (which sets ``func`` on its parser) and a function
``func(args) -> int``. Errors derived from :class:`scalinglab.errors.ScalingLabError`
are printed as one line on stderr with exit status 2.

Start-up is kept instant: :func:`main` imports only the module of the verb on
the command line (``scalinglab --help`` imports none of them), and each verb
imports the heavy scientific stack (scipy, pandas, xarray, papermill) only when
it needs it. :data:`VERBS` holds the one-line help shown by ``scalinglab --help``;
a test checks it against each module's own.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterable, Sequence

from scalinglab.errors import ScalingLabError

#: Verbs in the order ``--help`` lists them, with their one-line help.
VERBS: dict[str, str] = {
    "run": "run a study notebook into a versioned report",
    "status": "which studies are up to date or stale, and why (runs nothing)",
    "reports": "list report versions (read only), write the index, diff two versions",
    "verify": "re-run a report and check its findings are reproduced exactly",
    "intervals": "stratified bootstrap CIs of IQM, median, mean, optimality gap; P(X > Y)",
    "fit": "fit a scaling law to a CSV/Parquet/netCDF table, with bootstrap CIs",
    "speedup": "speedup of optimizers over a baseline from a table of final losses",
    "coverage": "coverage (pass@k) with bootstrap CIs and the exponentiated power law",
}


def build_parser(verbs: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The full parser; with ``verbs``, only those verbs' modules are imported.

    Parameters
    ----------
    verbs
        Verbs whose modules are imported to build their sub-parsers (default:
        all). The others get a placeholder that only carries their help line,
        enough for ``scalinglab --help``.
    """
    wanted = set(VERBS if verbs is None else verbs)
    parser = argparse.ArgumentParser(
        prog="scalinglab",
        description="Scaling Lab: run studies, browse versioned reports, fit scaling laws.",
    )
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for verb, help_line in VERBS.items():
        if verb in wanted:
            importlib.import_module(f"scalinglab.cli.{verb}").add_parser(sub)
        else:
            sub.add_parser(verb, help=help_line, add_help=False)
    return parser


def _verb_of(argv: Sequence[str]) -> str | None:
    """The verb on the command line: its first argument that does not start with ``-``."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in VERBS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``scalinglab`` console script (and ``python -m scalinglab``)."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    verb = _verb_of(args_in)
    parser = build_parser([] if verb is None else [verb])
    args = parser.parse_args(args_in)
    args.argv = list(sys.argv if argv is None else ["scalinglab", *argv])
    try:
        return int(args.func(args) or 0)
    except ScalingLabError as exc:
        print(f"scalinglab {args.verb}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"scalinglab {args.verb}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
