"""Figure helpers for study notebooks: each takes xarray results and returns a matplotlib Figure.

Helpers never call ``matplotlib.use`` or ``plt.show``: a notebook displays the
returned figure (JupyterLab and papermill both capture it), a script saves it.

Shared by every study: :func:`use_style` (one look: rcParams, readable log-axis
ticks, DataFrames with dashes for NaN and horizontal scrolling),
:func:`axis_label` (units in labels), :func:`table_html`/:class:`Table` and
:func:`forest_plot` (headline findings with their intervals).
"""

from scalinglab.plots.forest import forest_plot
from scalinglab.plots.style import Table, axis_label, plain_number, table_html, use_style

__all__ = ["Table", "axis_label", "forest_plot", "plain_number", "table_html", "use_style"]
