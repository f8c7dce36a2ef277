"""``scalinglab run``: run one study, or regenerate all of them.

Usage::

    scalinglab run STUDY [-p NAME VALUE ...] [--variant V] [--timeout S] [--force]
    scalinglab run --all [--variant V] [--scheduler ADDR] [--workers N] [--force] [-p ...]
    scalinglab run --list
    scalinglab run STUDY --help-params

Exit status: 0 success (or up to date), 1 a run failed, 2 bad study or
parameters (nothing ran) or a run that could not be written (a full disk: nothing
kept), 130 interrupted by Ctrl-C, 143 stopped by ``SIGTERM`` (handled like Ctrl-C:
the run is recorded ``interrupted``, kernels and temporary folders are cleaned up and
the index is rewritten).
"""

from __future__ import annotations

import argparse
import sys

from scalinglab.errors import StudyError

#: Exit status after SIGTERM (128 + 15, as a shell reports a process it terminated).
SIGTERM_EXIT = 143


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run",
        help="run a study notebook into a versioned report",
        description="Run a study (notebooks/STUDY.py) with papermill into "
        "reports/STUDY/VARIANT/RUN_ID/, or every study with --all.",
    )
    p.add_argument("study", nargs="?", help="study name (notebooks/STUDY.py)")
    p.add_argument(
        "-p",
        "--param",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override a parameter (repeatable)",
    )
    p.add_argument(
        "--variant",
        default=None,
        help="named parameter set from the study header (default, tiny, ...); "
        "with --all and no --variant: every variant each study lists under "
        "'reports' in its header (default, and the papers' own data)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="fail the run when one cell runs longer than S seconds",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="run even if the latest good run has the same cache key",
    )
    p.add_argument("--all", action="store_true", help="run every study (in parallel, Dask)")
    p.add_argument(
        "--include-drafts",
        action="store_true",
        help="with --all: also run studies marked draft (no committed small "
        "results yet: their sweep runs first, which can take long)",
    )
    p.add_argument(
        "--scheduler",
        default="",
        metavar="ADDR",
        help="with --all: Dask scheduler address (default $SCALINGLAB_SCHEDULER, "
        "else a LocalCluster; 'sync' = one after another in this process)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="with --all: LocalCluster worker processes",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress on stderr (shown by default in a terminal: cells done, "
        "the experiment's own bar with its ETA)",
    )
    p.add_argument("--list", action="store_true", help="list studies, variants and parameters")
    p.add_argument("--help-params", action="store_true", help="list STUDY's parameters")
    p.set_defaults(func=main)


def _command(args: argparse.Namespace) -> str:
    import shlex

    return shlex.join(getattr(args, "argv", None) or sys.argv)


def _list(names: list[str]) -> int:
    from scalinglab.runner.study import load_study

    if not names:
        print("no studies in notebooks/")
    for name in names:
        s = load_study(name)
        print(f"{name}: {s.title}")
        print(f"  variants: {', '.join(s.variants)}")
        print(s.parameters_help())
    return 0


def main(args: argparse.Namespace) -> int:
    from scalinglab.runner.execute import sigterm_as_interrupt

    with sigterm_as_interrupt():  # a scheduler's SIGTERM stops as cleanly as Ctrl-C
        return _main(args)


def _main(args: argparse.Namespace) -> int:
    from scalinglab.paths import reports_dir, require_checkout
    from scalinglab.runner import index
    from scalinglab.runner.study import cwd_paths_absolute, discover_studies

    require_checkout()
    if args.list:
        return _list([args.study] if args.study else discover_studies())
    if args.help_params:
        if not args.study:
            raise StudyError("--help-params needs a STUDY")
        return _list([args.study])
    overrides = [(name, cwd_paths_absolute(value)) for name, value in args.param]
    if args.timeout is not None and not args.timeout > 0:
        raise StudyError(f"--timeout must be > 0 seconds, got {args.timeout}")
    if args.all:
        if args.study:
            raise StudyError("give either STUDY or --all, not both")
        if args.variant is not None:
            _require_variant(args.variant, discover_studies())
        code = _run_all(args, overrides)
    else:
        if not args.study:
            raise StudyError("give a STUDY to run (or --all, or --list)")
        if args.scheduler or args.workers:
            raise StudyError("--scheduler and --workers apply to --all only")
        args.variant = args.variant or "default"
        code = _run_one(args, overrides)
    try:
        index.write_index()
    except OSError as exc:  # a full disk: the old index stays whole (atomic write)
        raise StudyError(
            f"could not rewrite the index under {reports_dir()}: {exc.strerror or exc}; "
            "the previous index is kept ('scalinglab reports' rewrites it)"
        ) from exc
    return code


def _require_variant(variant: str, names: list[str]) -> None:
    """``--all --variant V`` needs V to be declared by at least one study."""
    from scalinglab.runner.study import load_study

    declared = {v: None for n in names for v in load_study(n).variants}
    if names and variant not in declared:
        raise StudyError(f"no study has variant {variant!r} (variants: {', '.join(declared)})")


def _run_one(args: argparse.Namespace, overrides: list) -> int:
    from scalinglab.runner.pipeline import run_study
    from scalinglab.runner.store import RunStatus
    from scalinglab.runner.text import findings_text

    res = run_study(
        args.study,
        variant=args.variant,
        overrides=overrides,
        cell_timeout=args.timeout,
        force=args.force,
        command=_command(args),
        progress=not args.quiet and sys.stderr.isatty(),
    )
    if res.status == RunStatus.UP_TO_DATE:
        print(f"up to date: {res.run_dir} (same cache key; --force to run again)")
    elif res.rendered_from:
        print(
            f"{res.status}: {res.run_dir} (prose changed: re-rendered from {res.rendered_from}'s "
            "executed notebook and findings, nothing re-run; --force to run again)"
        )
    else:
        print(f"{res.status}: {res.run_dir}")
    if res.variant != args.variant:
        print(
            f"note: not variant {args.variant!r}'s parameters, so this report is kept apart in "
            f"{res.variant}/ (git-ignored, left out of the index); {args.variant}/latest is "
            "unchanged",
            file=sys.stderr,
        )
    print(findings_text(res.findings))
    if res.status in (RunStatus.OK, RunStatus.UP_TO_DATE):
        return 0
    print(f"scalinglab run: {args.study} {res.status}: {res.error}", file=sys.stderr)
    if res.status == RunStatus.INTERRUPTED:
        return SIGTERM_EXIT if "SIGTERM" in (res.error or "") else 130
    return 1


def _report_batches(include_drafts: bool) -> list[tuple[str, list[str] | None]]:
    """``(variant, studies)`` for ``run --all`` without ``--variant``: the default variant of
    every study first (drafts left out as usual), then each further variant a study lists
    under ``reports`` in its header, for the studies that list it."""
    from scalinglab.runner.study import discover_studies, load_study

    studies = {n: load_study(n) for n in discover_studies()}
    extra: dict[str, list[str]] = {}
    for n, s in studies.items():
        if s.draft and not include_drafts:
            continue
        for v in s.reports:
            if v != "default":
                extra.setdefault(v, []).append(n)
    return [("default", None), *extra.items()]


def _run_all(args: argparse.Namespace, overrides: list) -> int:
    from scalinglab.runner.batch import run_all
    from scalinglab.runner.store import RunStatus

    batches = (
        [(args.variant, None)] if args.variant is not None else _report_batches(args.include_drafts)
    )
    ok = True
    for variant, studies in batches:
        batch = run_all(
            studies=studies,
            variant=variant,
            overrides=overrides,
            scheduler=args.scheduler,
            force=args.force,
            cell_timeout=args.timeout,
            command=_command(args),
            n_workers=args.workers,
            include_drafts=args.include_drafts,
        )
        for r in batch.results:
            if r.status == RunStatus.UP_TO_DATE:
                print(f"{r.study}/{r.variant}: up to date ({r.run_id})")
        print(batch.summary())
        ok = ok and batch.ok
        if batch.interrupted:
            print(
                f"scalinglab run: interrupted ({batch.stopped_by}); unfinished studies are "
                "recorded as 'interrupted'",
                file=sys.stderr,
            )
            return SIGTERM_EXIT if batch.stopped_by == "SIGTERM" else 130
    return 0 if ok else 1
