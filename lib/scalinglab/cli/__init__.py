"""The ``scalinglab`` command: thin verbs that parse, call the library and print.

Each verb lives in its own module ``scalinglab.cli.<verb>`` exposing
``add_parser(subparsers)`` (which sets ``func`` on its parser) and a function
``func(args) -> int``. Errors derived from :class:`scalinglab.errors.ScalingLabError`
are printed as one line on stderr with exit status 2.

A closed pipe (``scalinglab run --help-params | head -1``) ends the command quietly
with the shell's status for it, 141 (128 + SIGPIPE), as ``yes | head`` does. A
verb's description that ends in a reST literal block (``Prints JSON::`` and the JSON
below it in the module docstring) is shown with that block.

Start-up is kept instant: :func:`main` imports only the module of the verb on
the command line (``scalinglab --help`` imports none of them), and each verb
imports the heavy scientific stack (scipy, pandas, xarray, papermill) only when
it needs it. :data:`VERBS` holds the one-line help shown by ``scalinglab --help``;
a test checks it against each module's own.
"""

from __future__ import annotations

import argparse
import importlib
import os
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
            module = importlib.import_module(f"scalinglab.cli.{verb}")
            module.add_parser(sub)
            finish_description(sub.choices[verb], module.__doc__ or "")
        else:
            sub.add_parser(verb, help=help_line, add_help=False)
    return parser


def finish_description(parser: argparse.ArgumentParser, doc: str) -> None:
    """Complete a description cut from a docstring just before its literal block.

    A description ending in ``::`` (reST: "a literal block follows") gets that block
    from ``doc`` (the verb module's docstring), shown as written, after a single colon.
    """
    text = (parser.description or "").rstrip()
    if not text.endswith("::"):
        return
    block: list[str] = []
    at = doc.find(text)
    if at >= 0:
        for para in doc[at + len(text) :].split("\n\n"):
            lines = [ln for ln in para.split("\n") if ln.strip()]
            if not lines or not all(ln.startswith((" ", "\t")) for ln in lines):
                if block or lines:
                    break
                continue
            block.append("\n".join(lines))
    parser.description = text[:-1] + ("\n\n" + "\n\n".join(block) if block else "")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def _verb_of(argv: Sequence[str]) -> str | None:
    """The verb on the command line: its first argument that does not start with ``-``."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in VERBS else None
    return None


#: Exit status of a command whose reader went away (128 + SIGPIPE, as the shell reports).
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``scalinglab`` console script (and ``python -m scalinglab``)."""
    try:
        status = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except BrokenPipeError:
        # the reader is gone: say nothing more, and keep Python's exit-time flush of
        # stdout from printing "Exception ignored ... BrokenPipeError"
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
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
