"""The result of a fit: parameters, CIs, objective, sizes, convergence, warnings.

:class:`FitResult` converts to the CLI's JSON (:meth:`FitResult.to_dict`), to an
xarray Dataset of bootstrap draws with dims ``draw`` and ``param``
(:meth:`FitResult.to_xarray`) and to an ArviZ ``InferenceData`` with one chain
(:meth:`FitResult.to_inference_data`) so ``arviz.summary``/``plot_posterior``
work on it. It also predicts at new inputs, with bootstrap intervals.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scalinglab.estimate import Estimate
from scalinglab.fitting.problem import Problem
from scalinglab.stats.bootstrap import percentile_interval
from scalinglab.textfmt import format_table, json_number


@dataclass
class Derived:
    """A derived quantity: point estimate, percentile CI and its bootstrap draws ``(R, ...)``."""

    point: Any
    ci: tuple[Any, Any] | None
    draws: np.ndarray | None

    def __repr__(self) -> str:
        """Point and interval; the draws by their shape only (they may be thousands)."""

        def short(v: Any) -> str:
            a = np.asarray(v, dtype=float)
            if a.ndim == 0:
                return f"{float(a):.6g}"
            body = ", ".join(f"{float(z):.6g}" for z in a.ravel()[:6])
            return f"[{body}{', ...' if a.size > 6 else ''}]"

        ci = "None" if self.ci is None else f"({short(self.ci[0])}, {short(self.ci[1])})"
        shape = "x".join(map(str, np.shape(self.draws)))
        draws = "None" if self.draws is None else f"<{shape} draws>"
        return f"Derived(point={short(self.point)}, ci={ci}, draws={draws})"

    def to_dict(self) -> dict[str, Any]:
        p = np.asarray(self.point, dtype=float)
        if p.ndim == 0:
            return {
                "point": json_number(p),
                "ci": None
                if self.ci is None
                else [json_number(self.ci[0]), json_number(self.ci[1])],
            }
        return {
            "point": [json_number(v) for v in p.ravel()],
            "ci": None
            if self.ci is None
            else [
                [json_number(v) for v in np.ravel(self.ci[0])],
                [json_number(v) for v in np.ravel(self.ci[1])],
            ],
        }


@dataclass
class FitResult:
    """A fitted law.

    Attributes
    ----------
    law
        Law name.
    params
        Reported parameter values by name (fixed ones included).
    ci
        ``name -> (lo, hi)`` percentile interval at ``level``; None without bootstrap.
    objective
        Best objective value (see ``objective_desc``).
    n_points, n_groups
        Data size; groups are the bootstrap's resampling units.
    converged
        Whether the optimizer met its convergence test at the reported optimum.
    warnings
        Human-readable warnings (parameter on a bound, no convergence, failed refits).
    draws
        Bootstrap draws of the reported parameters, shape ``(R, P)``; NaN where
        a refit failed or a per-group parameter's group was not drawn.
    fixed
        Names of parameters held fixed.
    """

    law: str
    params: dict[str, float]
    objective: float
    n_points: int
    n_groups: int
    converged: bool
    warnings: list[str] = field(default_factory=list)
    ci: dict[str, tuple[float, float]] | None = None
    level: float = 0.95
    draws: np.ndarray | None = field(default=None, repr=False)
    fixed: tuple[str, ...] = ()
    derived: dict[str, Derived] = field(default_factory=dict)
    objective_desc: str = ""
    bootstrap_info: dict[str, Any] = field(default_factory=dict)
    problem: Problem | None = field(default=None, repr=False)
    theta: np.ndarray | None = field(default=None, repr=False)
    local_optima: np.ndarray | None = field(default=None, repr=False)

    @property
    def names(self) -> list[str]:
        """Parameter names in law order."""
        return list(self.params)

    # ------------------------------------------------------------------ conversions
    def to_dict(self, *, full: bool = False) -> dict[str, Any]:
        """The CLI's JSON object (``full=True`` adds level, bootstrap info, derived)."""
        out: dict[str, Any] = {
            "law": self.law,
            "params": {k: json_number(v) for k, v in self.params.items()},
            "ci": {
                k: None
                if self.ci is None
                else [json_number(self.ci[k][0]), json_number(self.ci[k][1])]
                for k in self.params
            },
            "objective": json_number(self.objective),
            "n_points": int(self.n_points),
            "n_groups": int(self.n_groups),
            "converged": bool(self.converged),
            "warnings": list(self.warnings),
        }
        if full:
            out["level"] = self.level
            out["objective_kind"] = self.objective_desc
            out["fixed"] = list(self.fixed)
            out["bootstrap"] = dict(self.bootstrap_info)
            out["derived"] = {k: d.to_dict() for k, d in self.derived.items()}
        return out

    def to_json(self, *, full: bool = False, indent: int | None = 2) -> str:
        """:meth:`to_dict` as a JSON string (``[lo, hi]`` pairs kept on one line)."""
        text = json.dumps(self.to_dict(full=full), indent=indent)
        if indent is None:
            return text
        return re.sub(
            r"\[\s+([^\[\]{}]*?)\s+\]",
            lambda m: "[" + ", ".join(s.strip() for s in m.group(1).split(",")) + "]",
            text,
        )

    def to_xarray(self):
        """Bootstrap draws as an ``xarray.Dataset``: variable ``params`` with dims ``(draw, param)``.

        The point estimates are in variable ``estimate`` (dim ``param``); the
        CI level, law and objective are attributes.
        """
        import xarray as xr

        if self.draws is None:
            raise ValueError("no bootstrap draws; fit with bootstrap=N first")
        names = self.names
        ds = xr.Dataset(
            {
                "params": (("draw", "param"), np.asarray(self.draws, dtype=float)),
                "estimate": (("param",), np.array([self.params[k] for k in names], dtype=float)),
            },
            coords={"draw": np.arange(self.draws.shape[0]), "param": names},
        )
        ds.attrs.update(
            {
                "law": self.law,
                "level": self.level,
                "objective": self.objective,
                "objective_kind": self.objective_desc,
                "n_points": self.n_points,
                "n_groups": self.n_groups,
                "fixed": ",".join(self.fixed),
                **{
                    f"bootstrap_{k}": v
                    for k, v in self.bootstrap_info.items()
                    if isinstance(v, int | float | str)
                },
            }
        )
        return ds

    def to_inference_data(self):
        """The draws as ``arviz.InferenceData`` (posterior group, one chain) for ArviZ tools."""
        import arviz as az

        ds = self.to_xarray()[["params"]].expand_dims(chain=1)
        return az.InferenceData(posterior=ds)

    def table(self) -> str:
        """A plain-text table of parameters and CIs."""
        pct = f"{100 * self.level:g}%"
        rows = [("param", "value", f"{pct} lo", f"{pct} hi")]
        for k, v in self.params.items():
            lo, hi = (None, None) if self.ci is None else self.ci[k]
            fmt = lambda z: "-" if z is None or not np.isfinite(z) else f"{z:.6g}"  # noqa: E731
            rows.append((k + (" (fixed)" if k in self.fixed else ""), fmt(v), fmt(lo), fmt(hi)))
        lines = [format_table(rows[0], rows[1:])]
        lines += [
            "",
            f"law        {self.law}",
            f"objective  {self.objective:.6g} ({self.objective_desc})",
            f"points     {self.n_points} in {self.n_groups} groups",
            f"converged  {self.converged}",
        ]
        lines += [f"warning    {w}" for w in self.warnings]
        return "\n".join(lines)

    # ------------------------------------------------------------------ predictions
    def _theta_draws(self) -> np.ndarray:
        assert self.problem is not None and self.draws is not None
        th = np.empty_like(self.draws)
        for j, p in enumerate(self.problem.params):
            th[:, j] = p.to_internal(self.draws[:, j])
        return th

    def predict(self, x: np.ndarray, *, groups: Any = None) -> np.ndarray:
        """Model prediction at inputs ``x`` (``(m,)`` or ``(m, k)``); shape ``(m,)``.

        ``groups`` (labels, ``(m,)``) selects per-group parameters where the law has them.
        """
        x2, codes = self._inputs(x, groups)
        return self.problem.predict(self.theta[None, :], x2, codes)[0]

    def predict_draws(self, x: np.ndarray, *, groups: Any = None) -> np.ndarray:
        """Predictions for every bootstrap draw, shape ``(R, m)``."""
        if self.draws is None:
            raise ValueError("no bootstrap draws; fit with bootstrap=N first")
        x2, codes = self._inputs(x, groups)
        return self.problem.predict(self._theta_draws(), x2, codes)

    def predict_interval(self, x: np.ndarray, *, groups: Any = None) -> Derived:
        """Prediction at ``x`` with its percentile CI over bootstrap draws."""
        draws = self.predict_draws(x, groups=groups)
        lo, hi = percentile_interval(draws, level=self.level, axis=0)
        return Derived(self.predict(x, groups=groups), (lo, hi), draws)

    def _inputs(self, x: np.ndarray, groups: Any) -> tuple[np.ndarray, np.ndarray]:
        if self.problem is None or self.theta is None:
            raise ValueError("this result has no problem attached (loaded from JSON?)")
        x2 = np.asarray(x, dtype=float)
        if x2.ndim == 1:
            x2 = x2[:, None] if len(self.problem.law.x_names) == 1 else x2[None, :]
        labels = self.problem.data.group_labels
        if groups is None:
            if self.problem.law.has_groups:
                raise ValueError(f"law {self.law!r} has per-group parameters: pass groups=")
            codes = np.zeros(x2.shape[0], dtype=np.int64)
        else:
            lookup = {lab: i for i, lab in enumerate(labels)}
            glist = np.broadcast_to(np.asarray(groups, dtype=object), (x2.shape[0],))
            missing = [g for g in glist if str(g) not in lookup]
            if missing:
                raise ValueError(
                    f"unknown group(s) {sorted(set(map(str, missing)))}; "
                    f"fitted groups: {list(labels)}"
                )
            codes = np.array([lookup[str(g)] for g in glist], dtype=np.int64)
        return x2, codes

    # ------------------------------------------------------------------ findings
    def method_text(self) -> str:
        """How this fit's intervals were made, in words (a finding's ``method``)."""
        reps = self.bootstrap_info.get("reps")
        if self.ci is not None:
            return f"group bootstrap, percentile ({reps} refits); {self.objective_desc}"
        return f"point estimate; {self.objective_desc}"

    def estimates(
        self, prefix: str | None = None, *, names: list[str] | None = None, derived: bool = True
    ) -> dict[str, Estimate]:
        """Parameters (and scalar derived quantities) as estimates, keyed ``<prefix>.<name>``.

        Each carries its percentile CI, level, method and number of refits; record
        them with ``for n, e in res.estimates().items(): record(n, e)``. Default
        prefix: the law's name. (Identification is not judged here: see
        :func:`scalinglab.fitting.identify.param_estimate`.)
        """
        prefix = prefix or self.law
        reps = self.bootstrap_info.get("reps")
        method = self.method_text()

        def one(point: float, ci: Any) -> Estimate:
            lo, hi = (None, None) if ci is None else (float(ci[0]), float(ci[1]))
            return Estimate(
                float(point),
                lo,
                hi,
                level=self.level if ci is not None else None,
                method=method,
                resamples=reps if ci is not None else None,
            )

        out = {}
        for k in names or self.names:
            out[f"{prefix}.{k}"] = one(self.params[k], None if self.ci is None else self.ci[k])
        for k, d in self.derived.items() if derived else ():
            if np.ndim(d.point) == 0:
                out[f"{prefix}.{k}"] = one(float(d.point), d.ci)
        return out

    # ------------------------------------------------------------------ derived quantities
    def derive(self, name: str, fn: Callable[[Mapping[str, float]], Any]) -> Derived:
        """Point estimate and percentile CI of ``fn(params)`` over the bootstrap draws.

        ``fn`` receives a mapping of reported parameter values (one draw at a
        time) and returns a float or an array. The result is stored in
        ``self.derived[name]``.
        """
        point = np.asarray(fn(dict(self.params)), dtype=float)
        if self.draws is None:
            d = Derived(point, None, None)
        else:
            vals = np.array(
                [
                    np.asarray(fn(dict(zip(self.names, row, strict=True))), dtype=float)
                    if np.all(np.isfinite(row[self.core_mask()]))
                    else np.full(point.shape, np.nan)
                    for row in self.draws
                ]
            )
            lo, hi = percentile_interval(vals, level=self.level, axis=0)
            d = Derived(point, (lo, hi), vals)
        self.derived[name] = d
        return d

    def core_mask(self) -> np.ndarray:
        """Columns of ``draws`` that are not per-group, shape ``(P,)`` of bool.

        A NaN in one of them means the refit failed; a NaN in a per-group column only
        means the replicate did not draw that group.
        """
        if self.problem is None:
            return np.ones(len(self.params), dtype=bool)
        return np.array([not p.per_group for p in self.problem.params])
