"""A forest plot of headline findings: one row per finding, its point and interval.

Headline findings have unrelated units and scales (a speedup near 1, an
exponent near 0.3, a throughput in GFLOP/s), so each row has its own x axis; the
row names the finding on the left and prints ``point [lo, hi] unit`` on the
right. Where a declared claim decides the finding, the claimed region is shaded
(the ``greater``/``less`` side of its value, or the ``equal``/``between`` band)
and the interval is coloured by the verdict that finding gives, so a reader
sees at a glance whether the interval clears the claim.

The report header (:mod:`scalinglab.runner.html`) embeds it; a notebook may show
it too (``forest_plot(findings_table().items)``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib as mpl
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from scalinglab.plots.style import RC, plain_number

#: Interval colour per verdict of the deciding finding (grey: no claim rests on it).
VERDICT_COLORS = {
    "reproduces": "#009E73",
    "contradicts": "#D55E00",
    "inconclusive": "#E69F00",
    "not identified": "#999999",
    "inconclusive (Monte Carlo)": "#E69F00",
    "holds at our scale": "#56B4E9",
    "differs at our scale": "#CC79A7",
    "untested: proxy": "#999999",
    None: "#0072B2",
}


def _as_dict(f: Any) -> dict:
    return f.to_json() if hasattr(f, "to_json") else dict(f)


def _claim_for(name: str, claims: Sequence[Mapping[str, Any]]) -> tuple[dict | None, str | None]:
    """The first claim decided by finding ``name`` and that finding's own verdict."""
    for c in claims:
        if name in (c.get("findings") or []) and c.get("expect"):
            ev = {e["name"]: e.get("verdict") for e in c.get("evidence") or []}
            return dict(c), ev.get(name, c.get("verdict"))
    return None, None


def _fmt(d: dict) -> str:
    ci = d.get("ci")
    txt = plain_value(d["point"])
    if ci and not any(c is None or math.isnan(float(c)) for c in ci):
        txt += f" [{plain_value(ci[0])}, {plain_value(ci[1])}]"
    return txt + (f" {d['unit']}" if d.get("unit") else "")


def plain_value(x: Any) -> str:
    """A number in 4 significant digits for the row labels (``"—"`` for None/NaN)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    v = float(x)
    return f"{v:.4g}" if 1e-3 <= abs(v) < 1e5 or v == 0 else plain_number(v)


def forest_plot(
    findings: Sequence[Any], *, claims: Sequence[Mapping[str, Any]] = (), width: float = 9.0
) -> Figure:
    """Point and interval of each finding, one row (own x axis) per finding.

    Parameters
    ----------
    findings
        Findings (:class:`scalinglab.finding.Finding` or ``results.json`` dicts),
        at most a dozen or so; NaN points are skipped.
    claims
        The ledger (``results.json`` ``"claims"``); shades each claimed region.
    width
        Figure width in inches (height: 0.42 in per row).

    Returns
    -------
    matplotlib.figure.Figure
        Made without pyplot (no global figure state).
    """
    rows = [
        d
        for d in map(_as_dict, findings)
        if d.get("point") is not None and not math.isnan(float(d["point"]))
    ]
    if not rows:
        raise ValueError("forest_plot: no finding with a point estimate")
    with mpl.rc_context({**RC, "axes.grid": False}):
        fig = Figure(figsize=(width, 0.42 * len(rows) + 0.5), layout="constrained")
        axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
        for ax, d in zip(axes, rows, strict=True):
            _row(ax, d, claims)
        axes[0].set_title(
            "Headline findings: point and interval (each row on its own scale)",
            fontsize=10,
            loc="left",
        )
    return fig


def _row(ax: Any, d: dict, claims: Sequence[Mapping[str, Any]]) -> None:
    p = float(d["point"])
    ci = d.get("ci")
    has_ci = bool(ci) and not any(c is None or math.isnan(float(c)) for c in ci)
    lo, hi = (float(ci[0]), float(ci[1])) if has_ci else (p, p)
    claim, verdict = _claim_for(d["name"], claims)
    color = VERDICT_COLORS.get(verdict, VERDICT_COLORS[None])
    span = [lo, hi, p]
    if claim is not None:
        val = claim.get("value")
        if claim["expect"] in ("greater", "less"):
            span.append(float(val))
        elif claim["expect"] == "equal":
            tol = float(claim.get("tolerance") or 0)
            span += [float(val) - tol, float(val) + tol]
        else:
            span += [float(val[0]), float(val[1])]
    a, b = min(span), max(span)
    pad = 0.08 * (b - a) if b > a else 0.05 * max(abs(a), 1e-12)
    x0, x1 = a - pad, b + pad
    if claim is not None:
        val = claim.get("value")
        if claim["expect"] == "greater":
            ra, rb = float(val), x1
        elif claim["expect"] == "less":
            ra, rb = x0, float(val)
        elif claim["expect"] == "equal":
            tol = float(claim.get("tolerance") or 0)
            ra, rb = float(val) - tol, float(val) + tol
        else:
            ra, rb = float(val[0]), float(val[1])
        ax.axvspan(ra, rb, color="#009E73", alpha=0.12, lw=0)
        for edge in {ra, rb} - {x0, x1}:
            ax.axvline(edge, color="#009E73", lw=0.8, ls="--")
    if has_ci:
        ax.hlines(0, lo, hi, color=color, lw=3, alpha=0.9)
    ax.plot(
        [p],
        [0],
        "o",
        color=color if d.get("identified", True) else "white",
        mec=color,
        ms=6,
        zorder=3,
    )
    ax.set_xlim(x0, x1)
    ax.set_ylim(-1, 1)
    ax.set_yticks([0], [d["name"]], fontsize=8.5)
    ax.tick_params(axis="y", length=0)
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.xaxis.set_major_formatter(lambda v, _pos: plain_number(v))
    ax.tick_params(axis="x", labelsize=7.5, length=2, pad=1)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    sec = ax.secondary_yaxis("right")
    label = _fmt(d) + (f"  ({verdict})" if verdict else "")
    sec.set_yticks([0], [label], fontsize=8.5)
    sec.tick_params(length=0)
    sec.spines["right"].set_visible(False)
