"""A fit's report in the manner of lmfit's ``fit_report``: standard errors, correlations,
fit statistics (n, k, chi-square, AIC, BIC) and a residual summary.

**Where the standard errors come from.** The Jacobian of the model at the optimum,
in the objective's residual space (``log y`` for the Huber objective, ``y`` for least
squares), as lmfit and ``scipy.optimize.curve_fit`` take it. The fit is linearized
there, ``r ~ J delta`` (``r``: residuals ``(n,)``, ``J``: ``(n, q)`` over the ``q``
free parameters not on a bound), and the linear model is handed to statsmodels:

- least squares: ``statsmodels.api.OLS``, covariance ``s^2 (J^T J)^-1`` with
  ``s^2 = chi-square / (n - k)`` (lmfit's ``redchi``; ``k`` free parameters);
- Huber: ``statsmodels.api.RLM`` with the Huber norm at the fit's threshold
  (``HuberT(t=delta)``) and the scale held at 1, so its estimating equation is the
  fit's own; covariance ``H1`` (Huber 1981's sandwich with a small-sample factor).

Parameters optimized on the log scale get the delta method (``se(A) = A se(log A)``);
correlations are the internal parameters' (the same up to sign). A parameter on a
bound is held where it is (an active constraint: no standard error). When ``J`` is
rank-deficient no standard error is reported and a warning names the parameters that
move together without changing the fit. These are local, asymptotic errors: next to
them the report gives the bootstrap's standard deviation of each parameter when the
fit was bootstrapped (``stderr_bootstrap``), the number to trust when the two differ.

**Statistics** follow lmfit: ``chisqr = sum w r^2`` in residual space,
``redchi = chisqr / (n - k)``, ``aic = n log(chisqr / n) + 2 k``,
``bic = n log(chisqr / n) + k log n`` (a Gaussian likelihood of the residuals, also for
the Huber fit, whose objective is not ``chisqr``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scalinglab.fitting.result import FitResult
from scalinglab.textfmt import format_table, json_number

#: Relative singular value below which the Jacobian counts as rank-deficient.
RANK_RTOL = 1e-8
#: Correlations below this are left out of the text report (lmfit's default).
MIN_CORREL = 0.1


@dataclass
class FitReport:
    """Standard errors, correlations, statistics and residuals of one fit.

    Attributes
    ----------
    stderr
        ``name -> standard error`` (reported units) of every parameter; None where
        fixed, on a bound or not identified.
    stderr_method
        Where the standard errors come from (one sentence).
    stderr_bootstrap
        ``name -> standard deviation of the bootstrap draws``; None without bootstrap.
    correlation
        ``name -> {name -> correlation}`` over the parameters with a standard error.
    n, k, dof
        Points, free parameters, ``n - k``.
    chisqr, redchi, aic, bic
        As in lmfit (see the module docstring).
    residual_space
        ``"log(y) - log(model)"`` or ``"y - model"``.
    residuals, fitted
        Residuals (residual space) and fitted values (``y`` units), each ``(n,)``.
    rows, groups
        Source row (1-based) and group label of each point, each ``(n,)``.
    warnings
        Why a standard error is missing (rank, weights).
    """

    stderr: dict[str, float | None]
    stderr_method: str
    stderr_bootstrap: dict[str, float | None] | None
    correlation: dict[str, dict[str, float]]
    n: int
    k: int
    dof: int
    chisqr: float
    redchi: float
    aic: float
    bic: float
    residual_space: str
    residuals: np.ndarray = field(repr=False)
    fitted: np.ndarray = field(repr=False)
    rows: np.ndarray = field(repr=False)
    groups: list[str] = field(repr=False)
    warnings: list[str] = field(default_factory=list)

    def residual_summary(self) -> dict[str, Any]:
        """Quartiles, RMS and the largest residual (its row and group)."""
        r = self.residuals
        q = np.quantile(r, [0.0, 0.25, 0.5, 0.75, 1.0])
        i = int(np.argmax(np.abs(r)))
        return {
            "space": self.residual_space,
            "min": json_number(q[0]),
            "q1": json_number(q[1]),
            "median": json_number(q[2]),
            "q3": json_number(q[3]),
            "max": json_number(q[4]),
            "rms": json_number(np.sqrt(np.mean(r**2))),
            "largest": {
                "row": int(self.rows[i]),
                "group": self.groups[i],
                "residual": json_number(r[i]),
            },
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``stderr, stderr_method, stderr_bootstrap, correlation, statistics,
        residuals``."""
        return {
            "stderr": {k: json_number(v) for k, v in self.stderr.items()},
            "stderr_method": self.stderr_method,
            "stderr_bootstrap": None
            if self.stderr_bootstrap is None
            else {k: json_number(v) for k, v in self.stderr_bootstrap.items()},
            "correlation": {
                a: {b: json_number(c) for b, c in row.items()}
                for a, row in self.correlation.items()
            },
            "statistics": {
                "n": self.n,
                "k": self.k,
                "dof": self.dof,
                "chisqr": json_number(self.chisqr),
                "redchi": json_number(self.redchi),
                "aic": json_number(self.aic),
                "bic": json_number(self.bic),
            },
            "residuals": self.residual_summary(),
        }

    def table(self, result: FitResult) -> str:
        """lmfit-style text: parameters with standard errors, statistics, correlations."""
        fmt = lambda z: "-" if z is None or not np.isfinite(z) else f"{z:.6g}"  # noqa: E731
        pct = f"{100 * result.level:g}%"
        head = ["param", "value", "stderr", "(rel)"]
        head += [f"{pct} lo", f"{pct} hi"] + (["boot sd"] if self.stderr_bootstrap else [])
        rows = []
        for name, v in result.params.items():
            se = self.stderr.get(name)
            rel = "-" if se is None or v == 0 else f"{100 * abs(se / v):.2f}%"
            lo, hi = (None, None) if result.ci is None else result.ci[name]
            row = [name + (" (fixed)" if name in result.fixed else ""), fmt(v), fmt(se), rel]
            row += [fmt(lo), fmt(hi)]
            if self.stderr_bootstrap:
                row.append(fmt(self.stderr_bootstrap.get(name)))
            rows.append(row)
        s = self.residual_summary()
        lines = [
            "[[Fit statistics]]",
            f"    law              {result.law}",
            f"    objective        {result.objective:.6g} ({result.objective_desc})",
            f"    data points      {self.n} in {result.n_groups} groups",
            f"    variables        {self.k}",
            f"    chi-square       {fmt(self.chisqr)} (residuals {self.residual_space})",
            f"    reduced chi-sq   {fmt(self.redchi)}",
            f"    Akaike info      {fmt(self.aic)}",
            f"    Bayesian info    {fmt(self.bic)}",
            f"    converged        {result.converged}",
            "[[Variables]]",
            format_table(head, rows),
            f"    standard errors: {self.stderr_method}",
            "[[Residuals]] " + self.residual_space,
            "    min {min}  q1 {q1}  median {median}  q3 {q3}  max {max}  rms {rms}".format(
                **{k: fmt(s[k]) for k in ("min", "q1", "median", "q3", "max", "rms")}
            ),
            f"    largest: row {s['largest']['row']} (group {s['largest']['group']}), "
            f"{fmt(s['largest']['residual'])}",
        ]
        pairs = sorted(
            (
                (a, b, c)
                for i, (a, row) in enumerate(self.correlation.items())
                for j, (b, c) in enumerate(row.items())
                if j > i and abs(c) >= MIN_CORREL
            ),
            key=lambda t: -abs(t[2]),
        )
        lines.append(f"[[Correlations]] (unreported correlations are < {MIN_CORREL:.3f})")
        lines += [f"    {f'C({a}, {b})':<28} = {c:+.4f}" for a, b, c in pairs]
        if not self.correlation:
            lines.append("    (none: no standard errors)")
        lines += [f"[[Warnings]] {w}" for w in result.warnings + self.warnings]
        return "\n".join(lines)


def _flat_directions(X: np.ndarray, names: list[str]) -> tuple[int, list[str]]:
    """Numerical rank of ``X`` ``(n, q)`` (columns scaled to unit norm) and the parameters
    that take part in its null space (a zero column, or |component| > 0.3 of a singular
    vector whose singular value is below ``RANK_RTOL`` of the largest)."""
    norms = np.linalg.norm(X, axis=0)
    zero = ~(norms > 0)
    flat = set(np.flatnonzero(zero).tolist())
    keep = np.flatnonzero(~zero)
    if keep.size == 0:
        return 0, [names[j] for j in sorted(flat)]
    _, sv, vt = np.linalg.svd(X[:, keep] / norms[keep], full_matrices=False)
    small = ~(sv > RANK_RTOL * sv[0])
    for v in vt[small]:
        flat |= set(keep[np.abs(v) > 0.3].tolist())
    return int((~small).sum()), [names[j] for j in sorted(flat)]


def fit_report(result: FitResult) -> FitReport:
    """Standard errors, correlations, statistics and residuals of ``result``.

    Parameters
    ----------
    result
        A fit with its problem attached (from :func:`scalinglab.fitting.fit`).

    Returns
    -------
    FitReport
        See the module docstring for the method; ``stderr_bootstrap`` is filled in
        when ``result`` carries bootstrap draws.
    """
    import statsmodels.api as sm

    from scalinglab.fitting.multistart import bound_sides

    problem = result.problem
    if problem is None or result.theta is None:
        raise ValueError("result has no problem attached (loaded from JSON?)")
    data, obj = problem.data, problem.objective
    theta = result.theta[None, :]
    m, J = problem.model(theta, jac=True)
    r = (problem.y_t - m)[0]
    fitted = problem.predict(theta, data.x, data.groups)[0]
    w = problem.weights
    n, k = data.n_points, problem.F
    dof = n - k
    chisqr = float(np.sum(w * r**2))
    redchi = chisqr / dof if dof > 0 else np.nan
    with np.errstate(divide="ignore"):
        neg2ll = n * np.log(chisqr / n)
    aic, bic = neg2ll + 2 * k, neg2ll + np.log(n) * k
    space = "log(y) - log(model)" if obj.log_space else "y - model"

    free_theta = result.theta[problem.free]
    sides = bound_sides(problem, free_theta)
    interior = [i for i, side in enumerate(sides) if side is None]
    names = [problem.names[problem.free[i]] for i in interior]
    X = J[0].T[:, interior]  # (n, q)
    stderr: dict[str, float | None] = {name: None for name in result.names}
    correlation: dict[str, dict[str, float]] = {}
    warns: list[str] = []
    if obj.log_space:
        method = (
            "Jacobian at the optimum (log residuals): statsmodels RLM, Huber norm "
            f"t={obj.delta:g}, scale fixed at 1, covariance H1"
        )
    else:
        method = "Jacobian at the optimum: statsmodels OLS, covariance s^2 (J^T J)^-1, s^2 = redchi"
    method += "; delta method for log-scale parameters; none for fixed or on-bound ones"
    rank, flat = _flat_directions(X, names)
    uniform = bool(np.all(w == w[0]))
    if names and (flat or rank < len(names)):
        warns.append(
            f"no standard errors: the Jacobian at the optimum is rank-deficient (rank {rank} "
            f"of {len(names)}): {', '.join(flat) or 'some parameters'} can move together "
            "without changing the fit (not identified by these data)"
        )
    elif obj.log_space and not uniform:
        warns.append("no standard errors: weighted Huber fits have none here; see the bootstrap")
    elif dof <= 0:
        warns.append(f"no standard errors: {n} points for {k} free parameters leave no residual")
    elif obj.log_space and int(np.sum(np.abs(r) <= obj.delta)) <= len(names):
        warns.append(
            f"no standard errors: only {int(np.sum(np.abs(r) <= obj.delta))} residuals lie "
            f"within the Huber threshold {obj.delta:g}, too few for the Huber covariance; "
            "see the bootstrap (or --objective ls)"
        )
    else:
        if obj.log_space:
            fitted_lin = sm.RLM(r, X, M=sm.robust.norms.HuberT(t=obj.delta)).fit(
                start_params=np.zeros(X.shape[1]), start_scale=1.0, update_scale=False, cov="H1"
            )
            cov = np.asarray(fitted_lin.bcov_scaled)
        else:
            sw = np.sqrt(w)
            fitted_lin = sm.OLS(sw * r, sw[:, None] * X).fit()
            cov = np.asarray(fitted_lin.cov_params(scale=redchi))
        se_int = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        with np.errstate(invalid="ignore", divide="ignore"):
            corr = cov / np.outer(se_int, se_int)
        for a, name in enumerate(names):
            p = problem.params[problem.free[interior[a]]]
            scale = float(p.to_reported(free_theta[interior[a]])) if p.transform == "log" else 1.0
            stderr[name] = float(se_int[a] * abs(scale))
            correlation[name] = {b: float(corr[a, j]) for j, b in enumerate(names)}
    boot = None
    if result.draws is not None:
        with np.errstate(invalid="ignore"):
            sd = np.nanstd(result.draws, axis=0, ddof=1)
        boot = {
            name: (None if name in result.fixed else float(v))
            for name, v in zip(result.names, sd, strict=True)
        }
    return FitReport(
        stderr=stderr,
        stderr_method=method,
        stderr_bootstrap=boot,
        correlation=correlation,
        n=n,
        k=k,
        dof=dof,
        chisqr=chisqr,
        redchi=float(redchi),
        aic=float(aic),
        bic=float(bic),
        residual_space=space,
        residuals=r,
        fitted=fitted,
        rows=np.array([data.row(i) for i in range(n)]),
        groups=[data.group_labels[g] for g in data.groups],
        warnings=warns,
    )
