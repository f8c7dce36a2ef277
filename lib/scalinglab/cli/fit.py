"""``scalinglab fit LAW DATA --x COL[,COL] --y COL ...``: fit a scaling law to a table.

Prints JSON ``{"law", "params", "ci", "objective", "n_points", "n_groups",
"converged", "warnings"}`` (or a table with ``--format table``). Thin: parsing
here, everything else in :mod:`scalinglab.fitting`.
"""

from __future__ import annotations

import argparse
import sys

from scalinglab.errors import InputError

#: Points above which ``fit`` says on stderr that the fit will take a while.
BIG_TABLE = 1_000_000


def _laws_epilog() -> str:
    from scalinglab.fitting import list_laws

    lines = ["laws (inputs in --x order; parameters):"]
    for name, law in sorted(list_laws().items()):
        lines.append(
            f"  {name:<18} --x {','.join(law.x_names):<5} "
            f"{', '.join(p.name + ('[<group>]' if p.per_group else '') for p in law.params)}"
        )
        lines.append(f"  {'':<18} {law.formula}")
    return "\n".join(lines)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``fit`` verb."""
    p = subparsers.add_parser(
        "fit",
        help="fit a scaling law to a CSV/Parquet/netCDF table, with bootstrap CIs",
        description="Fit a scaling law (multi-start, Huber on log residuals or least squares) "
        "and report parameters with group-bootstrap percentile CIs.",
        epilog=_laws_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("law", metavar="LAW", help="law name (see below)")
    p.add_argument("data", metavar="DATA", help="table: .csv, .tsv, .parquet or .nc")
    p.add_argument(
        "--x",
        required=True,
        metavar="COL[,COL]",
        help="input column(s), comma-separated, in the law's order (chinchilla: N,D)",
    )
    p.add_argument("--y", required=True, metavar="COL", help="observed column")
    p.add_argument(
        "--group",
        metavar="COL",
        help="run/seed/curve column: the bootstrap resamples these (default: points)",
    )
    p.add_argument(
        "--fix",
        action="append",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="hold a parameter fixed, e.g. --fix R0=0.12 (repeatable)",
    )
    p.add_argument(
        "--bound",
        action="append",
        nargs="+",
        default=[],
        metavar="NAME=LO:HI",
        help="override a bound, e.g. --bound A=0:1 (empty side: unbounded)",
    )
    p.add_argument(
        "--objective",
        choices=("huber", "ls"),
        default=None,
        help="huber: Huber on log residuals, summed; ls: least squares (default: the law's)",
    )
    p.add_argument("--delta", type=float, default=1e-3, help="Huber threshold (default 1e-3)")
    p.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="bootstrap replicates for CIs (default 1000; 0: none)",
    )
    p.add_argument("--level", type=float, default=0.95, help="CI level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="worker processes (default 1; -1: all CPUs)",
    )
    p.add_argument("--format", choices=("json", "table"), default="json")
    p.set_defaults(func=run)
    return p


def _pairs(values: list[list[str]], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in (v for group in values for v in group):
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise InputError(f"--{what} expects NAME=VALUE, got {item!r}")
        out[name.strip()] = value.strip()
    return out


def _float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{what}: {text!r} is not a number") from None


def run(args: argparse.Namespace) -> int:
    """Fit and print."""
    from scalinglab.fitting import fit, get_law, list_laws, load_table

    try:
        law = get_law(args.law)
    except KeyError:
        raise InputError(
            f"unknown law {args.law!r}; known laws: {', '.join(sorted(list_laws()))}"
        ) from None
    xcols = [c.strip() for c in args.x.split(",") if c.strip()]
    if len(xcols) != len(law.x_names):
        raise InputError(
            f"law {law.name!r} takes {len(law.x_names)} input column(s) "
            f"({','.join(law.x_names)}, in that order); --x gave {len(xcols)}: "
            f"{args.x!r}"
        )
    fixed = {k: _float(v, f"--fix {k}") for k, v in _pairs(args.fix, "fix").items()}
    bounds = {}
    for name, text in _pairs(args.bound, "bound").items():
        lo, sep, hi = text.partition(":")
        if not sep:
            raise InputError(f"--bound expects NAME=LO:HI, got {name}={text}")
        bounds[name] = (
            _float(lo, f"--bound {name}") if lo.strip() else None,
            _float(hi, f"--bound {name}") if hi.strip() else None,
        )
        if None not in bounds[name] and not bounds[name][0] < bounds[name][1]:
            raise InputError(
                f"--bound {name}={text}: the lower bound must be below the upper "
                f"(use --fix {name}=VALUE to hold it)"
            )
    if args.bootstrap < 0:
        raise InputError(f"--bootstrap must be >= 0, got {args.bootstrap}")
    if not 0 < args.level < 1:
        raise InputError(f"--level must be in (0, 1), got {args.level}")
    if args.seed < 0:
        raise InputError(f"--seed must be >= 0, got {args.seed}")
    if not args.delta > 0:
        raise InputError(f"--delta (the Huber threshold) must be > 0, got {args.delta}")
    if args.jobs < 1 and args.jobs != -1:
        raise InputError(f"--jobs must be >= 1 (or -1: all CPUs), got {args.jobs}")
    data = load_table(args.data, x=xcols, y=args.y, group=args.group)
    if data.y.shape[0] > BIG_TABLE:  # the fit itself has no bar: say what is coming
        print(
            f"scalinglab fit: {data.y.shape[0]:,} points: every start of the multi-start fit "
            f"and each of the {args.bootstrap} bootstrap refits passes over all of them; "
            "this can take minutes",
            file=sys.stderr,
            flush=True,
        )
    result = fit(
        law,
        data,
        objective=args.objective,
        delta=args.delta,
        fixed=fixed,
        bounds=bounds,
        bootstrap=args.bootstrap,
        level=args.level,
        seed=args.seed,
        n_jobs=args.jobs,
        progress=sys.stderr.isatty(),
    )
    if args.format == "json":
        print(result.to_json())
    else:
        print(result.table())
    return 0
