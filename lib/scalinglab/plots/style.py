"""One look for every study's figures and tables: :func:`use_style`.

A notebook calls ``use_style()`` once, in its setup cell. It

- sets matplotlib's rcParams (sizes, grid, no top/right spines, a colour-blind
  safe cycle) so figures from different studies read alike;
- replaces the ``"log"`` axis scale by one whose tick labels are short plain
  numbers ("3", "30", "0.03"; powers of ten beyond 1e-3..1e4 as "10^k") and
  which labels minor ticks only where the axis spans too little to show a
  decade, so a narrow log axis no longer prints overlapping "3x10^0 4x10^0";
  every ``ax.set_xscale("log")``, ``loglog`` or ``semilogx`` picks it up;
- in IPython, shows a pandas DataFrame with NaN cells as a dash, a footnote
  under the table saying what the dash means, inside a block that scrolls
  horizontally instead of running off the page (:func:`table_html`; pass
  ``notes`` there to say *why* a column has no value).

Units belong in axis labels: :func:`axis_label` writes ``"step time [ms]"``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib import scale as mscale
from matplotlib import ticker

#: Okabe-Ito colours (distinguishable with the common colour-vision deficiencies).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")

RC = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": mpl.cycler(color=list(PALETTE)),
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "errorbar.capsize": 2,
    "image.cmap": "viridis",
    "svg.hashsalt": "scalinglab",
}


def axis_label(quantity: str, unit: str | None = None) -> str:
    """``"quantity [unit]"`` (or the quantity alone for a dimensionless one)."""
    return f"{quantity} [{unit}]" if unit else quantity


def plain_number(x: float) -> str:
    """A short tick label: ``"3"``, ``"0.03"``, ``"2.5k"``, ``"30M"``, ``"$10^{-5}$"``, ``"3e-5"``."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    a = abs(x)
    if 1e-3 <= a < 1e3:
        return np.format_float_positional(x, precision=3, unique=True, fractional=False, trim="-")
    if 1e3 <= a < 1e15:
        k = min(int(math.log10(a) + 1e-9) // 3, 4)
        return plain_number(x / 1000.0**k) + " kMGT"[k]
    k = math.floor(math.log10(a) + 1e-9)
    m = x / 10.0**k
    if abs(m - round(m)) < 1e-6 and round(abs(m)) == 1:
        return f"$10^{{{k}}}$" if x > 0 else f"$-10^{{{k}}}$"
    return f"{m:.2g}e{k}"


class ReadableLogFormatter(ticker.LogFormatter):
    """Log-axis tick labels as short plain numbers (see :func:`plain_number`).

    Minor ticks are labelled only when the axis spans less than one decade: a
    subset (2, 4, 6) from half a decade, all of them below that.
    """

    def __init__(self, base: float = 10.0, *, labelOnlyBase: bool = False) -> None:  # noqa: N803
        super().__init__(base=base, labelOnlyBase=labelOnlyBase, minor_thresholds=(1.0, 0.5))

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return plain_number(x)


class ReadableLogScale(mscale.LogScale):
    """matplotlib's log scale with :class:`ReadableLogFormatter` labels (registered as "log")."""

    name = "log"

    def __init__(self, *, base: float = 10, subs: Any = None, nonpositive: str = "clip") -> None:
        super().__init__(base=base, subs=subs, nonpositive=nonpositive)

    def set_default_locators_and_formatters(self, axis: Any) -> None:
        axis.set_major_locator(ticker.LogLocator(self.base))
        axis.set_major_formatter(ReadableLogFormatter(self.base))
        axis.set_minor_locator(ticker.LogLocator(self.base, self.subs))
        axis.set_minor_formatter(
            ReadableLogFormatter(self.base, labelOnlyBase=self.subs is not None)
        )


def use_style(*, dataframes: bool = True) -> None:
    """Apply the shared style (rcParams, readable log axes, DataFrame display); idempotent.

    Parameters
    ----------
    dataframes
        Also show pandas DataFrames in IPython through :func:`table_html`.
    """
    mpl.rcParams.update(RC)
    mscale.register_scale(ReadableLogScale)
    if dataframes:
        _register_dataframe_html()


def table_html(
    df: Any,
    *,
    notes: Mapping[str, str] | None = None,
    digits: int = 4,
    index: bool | None = None,
    max_rows: int = 60,
) -> str:
    """A DataFrame as HTML: NaN cells as a dash with a footnote, scrolling when wide.

    Parameters
    ----------
    df
        A ``pandas.DataFrame`` (any shape ``(rows, columns)``).
    notes
        Column -> why a value is missing there (e.g. ``{"naive_gflops": "not run
        above 512: the naive kernel would take minutes"}``); columns with NaN
        cells and no note get a generic footnote.
    digits
        Significant digits of floats.
    index
        Show the index (default: unless it is a plain ``RangeIndex``).
    max_rows
        Longer tables show their first and last ``max_rows // 2`` rows.
    """
    import pandas as pd

    notes = dict(notes or {})
    if index is None:
        index = not isinstance(df.index, pd.RangeIndex)
    nan_cols = [
        str(c)
        for c in df.columns
        if df[c].dtype.kind in "fc"
        and bool(np.isnan(df[c].to_numpy(float)).any())
        or df[c].dtype == object
        and bool(df[c].isna().any())
    ]
    marks = {c: i + 1 for i, c in enumerate(nan_cols)}

    def cell(v: Any, col: str) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
            return f"—<sup>{marks[col]}</sup>" if col in marks else "—"
        if isinstance(v, float | np.floating):
            return html.escape(f"{float(v):.{digits}g}")
        return html.escape(str(v))

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    if index:
        head = f"<th>{html.escape(str(df.index.name or ''))}</th>" + head
    rows = []
    shown = df
    if len(df) > max_rows:
        shown = pd.concat([df.iloc[: max_rows // 2], df.iloc[-(max_rows // 2) :]])
    for i, (idx, row) in enumerate(zip(shown.index, shown.itertuples(index=False), strict=True)):
        if len(df) > max_rows and i == max_rows // 2:
            rows.append(
                f'<tr><td colspan="{len(df.columns) + int(index)}">… '
                f"{len(df) - 2 * (max_rows // 2)} more rows …</td></tr>"
            )
        cells = "".join(f"<td>{cell(v, str(c))}</td>" for v, c in zip(row, df.columns, strict=True))
        if index:
            cells = f"<th>{html.escape(str(idx))}</th>" + cells
        rows.append(f"<tr>{cells}</tr>")
    foot = "".join(
        f'<p class="sl-foot" style="font-size:.85em;margin:.1em 0"><sup>{marks[c]}</sup> — in '
        f"<code>{html.escape(c)}</code>: "
        f"{html.escape(notes.get(c, 'no value: the quantity is undefined for this row'))}</p>"
        for c in nan_cols
    )
    return (
        '<div class="sl-scroll" style="overflow-x:auto;max-width:100%">'
        '<table class="dataframe sl-table"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + foot
    )


class Table:
    """A DataFrame displayed through :func:`table_html` (``display(Table(df, notes=...))``)."""

    def __init__(self, df: Any, *, notes: Mapping[str, str] | None = None, digits: int = 4) -> None:
        self.df, self.notes, self.digits = df, notes, digits

    def _repr_html_(self) -> str:
        return table_html(self.df, notes=self.notes, digits=self.digits)

    def __repr__(self) -> str:
        return self.df.to_string(na_rep="—")


def _register_dataframe_html() -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the lab extra
        return
    ip = get_ipython()
    if ip is None:
        return
    import pandas as pd

    ip.display_formatter.formatters["text/html"].for_type(pd.DataFrame, table_html)
