"""``scalinglab fit LAW DATA --x COL[,COL] --y COL ...``: fit a scaling law to a table.

Prints JSON (or an lmfit-style text report with ``--format table``): ``law, params,
ci`` (group-bootstrap percentile intervals), ``objective, n_points, n_groups,
converged, warnings``, then the report of :func:`scalinglab.fitting.report.fit_report`:
``stderr`` (from the Jacobian at the optimum, through statsmodels: OLS for least
squares, RLM with the Huber norm for the Huber objective; ``stderr_method`` says which),
``stderr_bootstrap`` (the bootstrap draws' standard deviation), ``correlation``,
``statistics`` (n, k, dof, chisqr, redchi, aic, bic) and ``residuals`` (quartiles, rms,
the largest with its row). ``--predict N=...,D=...`` adds ``predictions`` (the law at
those inputs with its bootstrap interval), ``--compute-optimal C=...`` adds
``compute_optimal`` (N, D, D/N and the loss at budget C = 6 N D, intervals from the
bootstrap draws), ``--plot PATH`` writes the residual plot (PNG or SVG). Warnings also
go to stderr. Thin: parsing here, everything else in :mod:`scalinglab.fitting`.
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
        "and report parameters with group-bootstrap percentile CIs, standard errors from the "
        "Jacobian at the optimum (statsmodels), correlations, AIC/BIC and residuals, in the "
        "manner of lmfit's fit report.",
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
    p.add_argument(
        "--predict",
        action="append",
        default=[],
        metavar="X=V[,X=V]",
        help="the law at these inputs, with its bootstrap interval, e.g. "
        "--predict N=7e10,D=1.4e12 (repeatable; group=LABEL for per-group laws)",
    )
    p.add_argument(
        "--compute-optimal",
        action="append",
        default=[],
        metavar="C=FLOPS",
        help="compute-optimal N and D (and the loss) at a budget of C = 6 N D FLOPs for a "
        "Chinchilla-style law, intervals from the bootstrap draws (repeatable)",
    )
    p.add_argument(
        "--plot",
        metavar="PATH",
        help="write the residual plot (residuals vs fitted and each input, normal Q-Q) "
        "to PATH (.png or .svg)",
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


def _predict_points(texts: list[str], law, xcols: list[str]) -> list[dict[str, str | float]]:
    """``["N=1e9,D=2e10", ...]`` -> one ``{input: value[, "group": label]}`` per text, keyed
    by the ``--x`` columns in the law's order (the law's own input names work too)."""
    alias = {**dict(zip(law.x_names, xcols, strict=True)), **{c: c for c in xcols}}
    out = []
    for text in texts:
        point: dict[str, str | float] = {}
        for item in text.split(","):
            name, sep, value = item.partition("=")
            name, value = name.strip(), value.strip()
            if not sep or not name or not value:
                raise InputError(f"--predict expects X=V[,X=V], got {text!r}")
            if name == "group":
                point[name] = value
                continue
            if name not in alias:
                raise InputError(
                    f"--predict {text}: no input {name!r}; the inputs are the --x columns "
                    f"{', '.join(xcols)}"
                )
            point[alias[name]] = _float(value, f"--predict {name}")
        missing = [c for c in xcols if c not in point]
        if missing:
            raise InputError(
                f"--predict {text}: give every --x input ({', '.join(xcols)}); "
                f"missing {', '.join(missing)}"
            )
        if law.has_groups and "group" not in point:
            raise InputError(
                f"--predict {text}: law {law.name!r} has per-group parameters; add group=LABEL"
            )
        out.append(point)
    return out


def _budgets(values: list[str], law) -> list[float]:
    from scalinglab.fitting.compute_optimal import CHINCHILLA_PARAMS

    if not values:
        return []
    names = [p.name for p in law.params]
    if not set(CHINCHILLA_PARAMS) <= set(names):
        raise InputError(
            f"--compute-optimal needs a Chinchilla-style law L = E + A N^-alpha + B D^-beta "
            f"(parameters {', '.join(CHINCHILLA_PARAMS)}); law {law.name!r} has "
            f"{', '.join(names)}"
        )
    out = []
    for text in values:
        name, sep, value = text.partition("=")
        v = _float(value if sep else name, "--compute-optimal C")
        if (sep and name.strip() != "C") or not (v > 0 and v < float("inf")):
            raise InputError(f"--compute-optimal expects C=FLOPS with FLOPS > 0, got {text!r}")
        out.append(v)
    return out


def _interval(d) -> list | None:
    from scalinglab.textfmt import json_number

    if d.ci is None:
        return None
    return [json_number(float(d.ci[0])), json_number(float(d.ci[1]))]


def _extras(result, points, budgets) -> dict:
    """``predictions`` and ``compute_optimal`` entries of the JSON."""
    import numpy as np

    from scalinglab.fitting.compute_optimal import FLOPS_PER_PARAM_TOKEN, compute_optimal
    from scalinglab.textfmt import json_number

    out: dict = {}
    how = (
        f"bootstrap percentile ({result.bootstrap_info.get('reps')} draws, {result.level:g})"
        if result.draws is not None
        else None
    )
    if points:
        rows = []
        for pt in points:
            x = np.array([[pt[n] for n in result.problem.data.x_names]], dtype=float)
            groups = None if "group" not in pt else [pt["group"]]
            try:
                if result.draws is None:
                    d = None
                    point = float(result.predict(x, groups=groups)[0])
                else:
                    d = result.predict_interval(x, groups=groups)
                    point = float(d.point[0])
            except ValueError as exc:  # an unknown group label
                raise InputError(f"--predict: {exc}") from None
            rows.append(
                {
                    "x": dict(pt),
                    "point": json_number(point),
                    "ci": None
                    if d is None
                    else [json_number(float(d.ci[0][0])), json_number(float(d.ci[1][0]))],
                }
            )
        out["predictions"] = {"interval": how, "points": rows}
    if budgets:
        rows = []
        for c in budgets:
            q = compute_optimal(result, c)
            rows.append(
                {
                    "C": c,
                    **{
                        k: {"point": json_number(float(d.point)), "ci": _interval(d)}
                        for k, d in q.items()
                    },
                }
            )
        out["compute_optimal"] = {
            "flops": f"C = {FLOPS_PER_PARAM_TOKEN:g} N D",
            "interval": how,
            "budgets": rows,
        }
    return out


def _extras_table(extra: dict, y_name: str) -> list[str]:
    fmt = lambda z: "-" if z is None else f"{z:.6g}"  # noqa: E731
    lines = []
    if "predictions" in extra:
        lines.append(f"[[Predictions]] interval: {extra['predictions']['interval'] or 'none'}")
        for r in extra["predictions"]["points"]:
            at = ", ".join(
                f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in r["x"].items()
            )
            ci = "" if r["ci"] is None else f"  [{fmt(r['ci'][0])}, {fmt(r['ci'][1])}]"
            lines.append(f"    {y_name}({at}) = {fmt(r['point'])}{ci}")
    if "compute_optimal" in extra:
        co = extra["compute_optimal"]
        lines.append(f"[[Compute-optimal]] {co['flops']}; interval: {co['interval'] or 'none'}")
        for r in co["budgets"]:
            parts = []
            for k in ("N", "D", "tokens_per_param", "loss"):
                ci = "" if r[k]["ci"] is None else f" [{fmt(r[k]['ci'][0])}, {fmt(r[k]['ci'][1])}]"
                parts.append(f"{k} {fmt(r[k]['point'])}{ci}")
            lines.append(f"    C={r['C']:g}: " + "; ".join(parts))
    return lines


def run(args: argparse.Namespace) -> int:
    """Fit and print."""
    from scalinglab.fitting import fit, get_law, list_laws, load_table
    from scalinglab.fitting.report import fit_report
    from scalinglab.fitting.residual_plot import check_plot_path, save_residual_plot

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
    points = _predict_points(args.predict, law, xcols)
    budgets = _budgets(args.compute_optimal, law)
    if args.plot:
        check_plot_path(args.plot)
    data = load_table(args.data, x=xcols, y=args.y, group=args.group)
    if law.has_groups:  # a --predict group must be one the fit will have, before fitting
        from scalinglab.fitting.loader import default_groups

        labels = default_groups(law, data).group_labels
        unknown = sorted({str(p["group"]) for p in points} - set(labels))
        if unknown:
            raise InputError(
                f"--predict: unknown group(s) {unknown}; the groups are {list(labels)}"
            )
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
    report = fit_report(result)
    extra = _extras(result, points, budgets)
    if args.plot:
        save_residual_plot(result, report, args.plot)
    warnings = list(result.warnings) + report.warnings
    for w in warnings:
        print(f"scalinglab fit: warning: {w}", file=sys.stderr)
    if args.format == "json":
        out = result.to_dict()
        out["warnings"] = warnings
        out.update(report.to_dict())
        out.update(extra)
        if args.plot:
            out["plot"] = str(args.plot)
        print(_dumps(out))
    else:
        lines = [report.table(result)] + _extras_table(extra, data.y_name)
        if args.plot:
            lines.append(f"[[Plot]] {args.plot}")
        print("\n".join(lines))
    return 0


def _dumps(obj: dict) -> str:
    """JSON with ``[lo, hi]`` pairs on one line (as :meth:`FitResult.to_json`)."""
    import json
    import re

    text = json.dumps(obj, indent=2)
    return re.sub(
        r"\[\s+([^\[\]{}]*?)\s+\]",
        lambda m: "[" + ", ".join(s.strip() for s in m.group(1).split(",")) + "]",
        text,
    )
