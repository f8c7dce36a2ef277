"""Scaling-law fitting with honest uncertainty: laws, objectives, multi-start fits, bootstrap.

Public API::

    from scalinglab.fitting import fit, get_law, list_laws, register_law, Law, Param
    res = fit("chinchilla", np.column_stack([N, D]), loss, groups=run, bootstrap=1000, seed=0)
    res.params, res.ci, res.to_dict(), res.to_xarray(), res.predict_interval(x_new)

See ``docs/studies/fitting.md`` for the laws and the procedure (Epoch's Chinchilla
replication: log-sum-exp form, Huber 1e-3 summed, 4,500-start grid, L-BFGS-B).
"""

from scalinglab.fitting.diagnostics import cross_check, loglog_ols
from scalinglab.fitting.extrapolate import ExtrapolationResult, extrapolation_check
from scalinglab.fitting.group_bootstrap import bootstrap, derive
from scalinglab.fitting.identify import Identification, identification, param_estimate
from scalinglab.fitting.laws import Law, Param, product_grid
from scalinglab.fitting.loader import FitData, check_data, from_arrays, load_table
from scalinglab.fitting.multistart import fit, make_problem
from scalinglab.fitting.objectives import DEFAULT_DELTA, Objective
from scalinglab.fitting.registry import get_law, list_laws, register_law
from scalinglab.fitting.result import Derived, FitResult

__all__ = [
    "DEFAULT_DELTA",
    "Derived",
    "ExtrapolationResult",
    "FitData",
    "FitResult",
    "Identification",
    "Law",
    "Objective",
    "Param",
    "bootstrap",
    "check_data",
    "cross_check",
    "derive",
    "extrapolation_check",
    "fit",
    "from_arrays",
    "get_law",
    "identification",
    "list_laws",
    "load_table",
    "loglog_ols",
    "make_problem",
    "product_grid",
    "param_estimate",
    "register_law",
]
