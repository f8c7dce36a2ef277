"""``scalinglab speedup DATA --baseline adamw``: data-efficiency speedup over a baseline.

DATA is a table (CSV, TSV, Parquet or netCDF) of final losses with columns
``optimizer, model_size, data_multiple, loss`` and optionally ``seed``. Per model
size the baseline's ``L(D) = A D^-alpha + E`` is fitted; each optimizer's loss is
inverted to the data the baseline would need, ``D_eff``; speedup = ``D_eff / D``.
Prints JSON::

    {"baseline": "adamw",
     "baseline_fits": {SIZE: {"A": a, "alpha": al, "E": e, "status": "ok", ...}},
     "speedup": {OPTIMIZER: {SIZE: {MULTIPLE: s}}},
     "ci": {OPTIMIZER: {SIZE: {MULTIPLE: [lo, hi]}}},
     "status": {OPTIMIZER: {SIZE: {MULTIPLE: "ok" | "below_asymptote" | "no_baseline_fit"}}},
     "d_eff": ..., "loss": ..., "n_seeds": ..., "level": 0.95, "bootstrap": N,
     "seed": 0, "warnings": [...]}

DATA may also be the paper's released ``final_losses.csv`` (Wen et al. 2025; columns
``chinchilla, final_c4en_loss``, ``data/published/fantastic_optimizers/``): its 1-8x
Chinchilla runs are read as that table, so ``scalinglab speedup
data/published/fantastic_optimizers/final_losses.csv --bootstrap 0 --format table``
prints the paper's speedups (Muon at 130m: 1.42, 1.33, 1.32, 1.38).

CIs (bootstrap over seeds) need a ``seed`` column with >= 2 seeds; otherwise
``ci`` entries are null. A speedup is null, never inf or NaN, where the loss is at
or below the baseline's asymptote or the size's baseline could not be fitted; the
status and ``warnings`` say which and why. See :mod:`scalinglab.fitting.speedup`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from scalinglab.errors import InputError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``speedup`` verb."""
    p = subparsers.add_parser(
        "speedup",
        help="speedup of optimizers over a baseline from a table of final losses",
        description=__doc__.split("\n\n")[0] + "\n\n" + __doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "data", metavar="DATA", help="table: optimizer, model_size, data_multiple, loss [, seed]"
    )
    p.add_argument(
        "--baseline",
        default="adamw",
        help="baseline optimizer whose L(D) is fitted (default: %(default)s)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="bootstrap replicates over seeds for CIs (default %(default)s; 0: none)",
    )
    p.add_argument("--level", type=float, default=0.95, help="CI level (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default %(default)s)")
    p.add_argument(
        "--min-points",
        type=int,
        default=3,
        metavar="K",
        help="distinct baseline multiples a size needs (default %(default)s)",
    )
    p.add_argument(
        "--objective",
        choices=("ls", "huber"),
        default="ls",
        help="baseline fit objective (default: %(default)s)",
    )
    p.add_argument("--format", choices=("json", "table"), default="json")
    p.set_defaults(func=run)
    return p


def _dumps(obj: dict) -> str:
    text = json.dumps(obj, indent=2)
    return re.sub(
        r"\[\s+([^\[\]{}]*?)\s+\]",
        lambda m: "[" + ", ".join(s.strip() for s in m.group(1).split(",")) + "]",
        text,
    )


def _require_some_speedup(out: dict, args: argparse.Namespace) -> None:
    """Fail (exit 2) when no speedup could be computed at all, saying why; a partly null
    result still prints, with its reasons in ``warnings``."""
    values = [
        v
        for opt, per_size in out["speedup"].items()
        if opt != args.baseline
        for per_mult in per_size.values()
        for v in per_mult.values()
    ]
    if any(v is not None for v in values):
        return
    fits = out.get("baseline_fits", {})
    failed = {
        size: f.get("reason") or f.get("status")
        for size, f in fits.items()
        if f.get("status") != "ok"
    }
    if fits and len(failed) == len(fits):
        why = "; ".join(f"size {k}: {v}" for k, v in failed.items())
        few = any(f.get("status") == "insufficient_points" for f in fits.values())
        raise InputError(
            f"no speedup computed: the baseline {args.baseline!r} could not be "
            f"fitted at any model size ({f'--min-points {args.min_points}: ' if few else ''}"
            f"{why})",
            file=args.data,
        )
    reason = (
        out.get("warnings")
        or [
            "every optimizer's loss is at or below the baseline's "
            "asymptote, or no optimizer other than the baseline"
        ]
    )[0]
    raise InputError(f"no speedup computed: {reason}", file=args.data)


def run(args: argparse.Namespace) -> int:
    """Compute and print."""
    from scalinglab.data.loss_tables import read_loss_table
    from scalinglab.fitting.speedup import compute_speedups

    if args.bootstrap < 0:
        raise InputError(f"--bootstrap must be >= 0, got {args.bootstrap}")
    if not 0 < args.level < 1:
        raise InputError(f"--level must be in (0, 1), got {args.level}")
    if args.min_points < 3:
        raise InputError(
            f"--min-points must be >= 3 (the law has 3 parameters), got {args.min_points}"
        )
    if args.seed < 0:
        raise InputError(f"--seed must be >= 0, got {args.seed}")
    table = read_loss_table(args.data)  # a loss table, or the paper's released file
    result = compute_speedups(
        table,
        baseline=args.baseline,
        bootstrap=args.bootstrap,
        level=args.level,
        seed=args.seed,
        min_points=args.min_points,
        objective=args.objective,
        source=args.data,
    )
    out = result.to_dict()
    _require_some_speedup(out, args)
    for w in out.get("warnings") or []:
        print(f"scalinglab speedup: warning: {w}", file=sys.stderr)
    print(_dumps(result.to_dict()) if args.format == "json" else result.table())
    return 0
