"""Figure helpers for study notebooks: each takes xarray results and returns a matplotlib Figure.

Helpers never call ``matplotlib.use`` or ``plt.show``: a notebook displays the
returned figure (JupyterLab and papermill both capture it), a script saves it.
"""
