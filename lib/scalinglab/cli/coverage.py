"""``scalinglab coverage DATA``: coverage (pass@k) with intervals and the fitted law.

DATA is a table (CSV, TSV or Parquet) of repeated samples with columns
``problem, sample, correct`` and optionally ``model``, ``tokens`` and ``answer``, or a
sample Dataset of the test-time scaling study (``.nc``). Per model, coverage(k) is
the unbiased pass@k (Chen et al. 2021) averaged over problems, with percentile
intervals from resampling problems, and the exponentiated power law
``coverage = exp(a k^b)`` (Brown et al. 2024) is fitted on k = 1, 2, 4, ... up to
the smallest number of samples per problem. Prints JSON::

    {"models": {MODEL: {"n_problems": P, "n_min": n,
                        "coverage": {K: c}, "ci": {K: [lo, hi]},
                        "law": {"a": a, "b": b, "ci": {"a": [lo, hi], "b": [lo, hi]}}}},
     "level": 0.95, "bootstrap": N, "seed": 0, "warnings": [...]}

A law that cannot be fitted (fewer than three k with 0 < coverage < 1) is null, with
the reason in ``warnings``. See :mod:`scalinglab.stats.passk`, :mod:`scalinglab.stats.samples` and
:mod:`scalinglab.fitting.coverage_law`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from scalinglab.errors import InputError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``coverage`` verb."""
    p = subparsers.add_parser(
        "coverage",
        help="coverage (pass@k) with bootstrap CIs and the exponentiated power law",
        description=__doc__.split("\n\n")[0] + "\n\n" + __doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "data",
        metavar="DATA",
        help="table: problem, sample, correct [, model, tokens, answer]; or .nc",
    )
    p.add_argument(
        "--k",
        default="",
        metavar="LIST",
        help="comma-separated k to report (default: 1, 2, 4, ... up to the smallest n)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="resamples of problems for CIs (default %(default)s; 0: none)",
    )
    p.add_argument("--level", type=float, default=0.95, help="CI level (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default %(default)s)")
    p.add_argument("--format", choices=("json", "table"), default="json")
    p.set_defaults(func=run)
    return p


def _dumps(obj: dict) -> str:
    text = json.dumps(obj, indent=2)
    return re.sub(
        r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text
    )


def _num(x: float) -> float | None:
    x = float(x)
    return None if x != x else round(x, 6)


def _parse_k(text: str, n_min: int) -> list[int]:
    try:
        ks = sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        raise InputError(f"--k must be comma-separated integers, got {text!r}") from None
    if not ks:
        raise InputError(f"--k is empty: {text!r}")
    bad = [k for k in ks if not 1 <= k <= n_min]
    if bad:
        raise InputError(
            f"--k values must be in [1, {n_min}] (the smallest number of samples "
            f"per problem), got {bad}"
        )
    return ks


def compute(args: argparse.Namespace) -> dict:
    """The JSON object ``run`` prints."""
    import numpy as np

    from scalinglab.fitting import coverage_law as law
    from scalinglab.stats import samples as analysis
    from scalinglab.stats.passk import k_grid
    from scalinglab.stats.samples import load_samples

    ds = load_samples(args.data)
    n_min = analysis.max_k(ds)
    ks = _parse_k(args.k, n_min) if args.k else [int(k) for k in k_grid(n_min)]
    reps = max(args.bootstrap, 1)
    curves = analysis.coverage_curves(
        ds, k_max=max(ks), reps=reps, seed=args.seed, level=args.level
    )
    grid = k_grid(n_min)
    full = (
        analysis.coverage_curves(ds, k_max=n_min, reps=reps, seed=args.seed, level=args.level)
        if max(ks) < n_min
        else curves
    )
    out: dict = {
        "models": {},
        "level": args.level,
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "warnings": [],
    }
    for s in curves.sizes:
        lo, hi = curves.ci(curves.cov_draws[s])
        m = {
            "n_problems": int(ds.sizes["prompt"]),
            "n_min": n_min,
            "coverage": {str(k): _num(curves.cov[s][k - 1]) for k in ks},
            "ci": {
                str(k): None if not args.bootstrap else [_num(lo[k - 1]), _num(hi[k - 1])]
                for k in ks
            },
        }
        try:
            draws = full.draws if args.bootstrap else full.draws[:0]
            f = law.fit_bootstrap(grid, full.per_problem[s][:, grid - 1], draws)
            m["law"] = {
                "a": _num(f.point.params["a"]),
                "b": _num(f.point.params["b"]),
                "ci": {
                    p: None
                    if not args.bootstrap or not np.isfinite(f.draws).any()
                    else [_num(v) for v in f.ci(p, args.level)]
                    for p in ("a", "b")
                },
            }
            for w in f.point.warnings:
                out["warnings"].append(f"{s}: {w}")
        except ValueError as exc:
            m["law"] = None
            out["warnings"].append(f"{s}: no law fitted: {exc}")
        out["models"][s] = m
    return out


def _table(out: dict) -> str:
    lines = [f"{'model':<12} {'k':>6} {'coverage':>9}  interval"]
    for s, m in out["models"].items():
        for k, c in m["coverage"].items():
            ci = m["ci"][k]
            lines.append(
                f"{s:<12} {k:>6} {c:>9.4f}  "
                + ("" if ci is None else f"[{ci[0]:.4f}, {ci[1]:.4f}]")
            )
        law = m["law"]
        if law is not None:
            iv = {
                p: ""
                if law["ci"][p] is None
                else f" [{law['ci'][p][0]:.4g}, {law['ci'][p][1]:.4g}]"
                for p in ("a", "b")
            }
            lines.append(
                f"{s:<12} law: coverage = exp(a k^b), a = {law['a']:.4g}{iv['a']}, "
                f"b = {law['b']:.4g}{iv['b']}"
            )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Compute and print."""
    if args.bootstrap < 0:
        raise InputError(f"--bootstrap must be >= 0, got {args.bootstrap}")
    if not 0 < args.level < 1:
        raise InputError(f"--level must be in (0, 1), got {args.level}")
    if args.seed < 0:
        raise InputError(f"--seed must be >= 0, got {args.seed}")
    out = compute(args)
    for w in out["warnings"]:
        print(f"scalinglab coverage: warning: {w}", file=sys.stderr)
    print(_dumps(out) if args.format == "json" else _table(out))
    return 0
