"""The ``scalinglab`` command: thin verbs that parse, call the library and print.

Each verb lives in its own module ``scalinglab.cli.<verb>`` exposing
``add_parser(subparsers)`` (which sets ``func`` on its parser) and a function
``func(args) -> int``. Errors derived from :class:`scalinglab.errors.ScalingLabError`
are printed as one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from scalinglab.errors import ScalingLabError

#: Verb modules, in the order ``--help`` lists them.
VERBS = ("run", "reports", "verify", "intervals", "fit", "speedup")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scalinglab",
        description="Scaling Lab: run studies, browse versioned reports, fit scaling laws.",
    )
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for verb in VERBS:
        module = importlib.import_module(f"scalinglab.cli.{verb}")
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``scalinglab`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
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
