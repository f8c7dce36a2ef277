"""Is ScaleRL's asymptote identified? The fitted A of each size against its bound.

ScaleRL's sigmoid bounds the asymptote ``A`` by the pass rate's range ``[0, 1]``. A run
that ends before its curve bends, or that reaches 0.95-0.99 and stays there, puts the
pooled fit's ``A`` on its bound 1: the data then say only that the asymptote is high,
not where it is, and every claim that rests on that ``A`` (the half-compute prediction of
the asymptote, the spread of ``A``, an effect on ``A``) is not identified at that size.
The ``v3`` design aims at ``A`` off its bound for at least 3 of its 4 sizes (issue 31's
"done when"); :func:`bound_table` says size by size whether it is, from the pooled fit
(:func:`.analysis.fit_scalerl`: on the bound in the point fit or in at least
:data:`~scalinglab.estimate.BOUND_SHARE` of the refits) and from each run's own fit
(:func:`.analysis.per_seed_sigmoids`), and :func:`bound_findings` records the count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.fitting import identification
from scalinglab.studies.rl.named import Named

#: A per-run A within this of 1 sits on its bound (the fitting library's relative tolerance).
RUN_BOUND_TOL = 1e-3
#: Sizes with A off its bound that the v3 design aims at (of 4).
TARGET = 3


def bound_table(
    table: pd.DataFrame,
    fits: Mapping,
    per_seed: pd.DataFrame,
    *,
    base: str,
    scope: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Size by size: the pooled fit's A, whether it sits on its bound, and how many of the
    size's runs have their own A off the bound.

    Parameters
    ----------
    table, fits
        :func:`.analysis.fit_scalerl`'s table (one row per variant and size, with ``A``,
        ``A_lo``, ``A_hi``) and fits (``(variant, size) -> FitResult``).
    per_seed
        :func:`.analysis.per_seed_sigmoids` (one row per run, with ``A``).
    base
        The variant whose sizes are judged (the baseline, or the ``half_lr`` arm).
    scope
        :func:`.scope.run_scope` when ``table`` was fitted on the stable runs only: a
        size of ``base`` it did not fit (too few stable runs) gets a row with
        ``identified`` False and its reason, A NaN, and ``stable`` (the stable runs of
        every size) is added. None: every size of ``table`` is fitted.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``model_size`` in ``table``'s order: ``A``, ``A_lo``, ``A_hi``,
        ``share_refits_at_bound``, ``identified`` (bool), ``why`` (the reason when not),
        ``runs`` and ``runs_A_off_bound`` (finite per-run A below ``1 - RUN_BOUND_TOL``
        and above 0, over the runs of ``per_seed``), with ``scope`` also ``stable``;
        sizes in ``scope``'s order when given.

    Raises
    ------
    KeyError
        When ``fits`` lacks a (``base``, size) of ``table``.
    """
    rows = []
    mine = per_seed[per_seed["variant"] == base]
    fitted = {r["model_size"]: r for _, r in table[table["variant"] == base].iterrows()}
    sizes = list(fitted) if scope is None else list(scope.loc[base].index)
    for size in sizes:
        a_runs = mine.loc[mine["model_size"] == size, "A"].to_numpy(float)
        off = np.isfinite(a_runs) & (a_runs < 1 - RUN_BOUND_TOL) & (a_runs > 0)
        if size not in fitted:  # too few stable runs: no pooled fit
            rows.append(
                {
                    "model_size": size,
                    "A": np.nan,
                    "A_lo": np.nan,
                    "A_hi": np.nan,
                    "share_refits_at_bound": np.nan,
                    "identified": False,
                    "why": scope.loc[(base, size), "why"],  # type: ignore[union-attr]
                    "runs": int(a_runs.size),
                    "runs_A_off_bound": int(off.sum()),
                }
            )
            continue
        r = fitted[size]
        ident = identification(fits[(base, size)], "A")
        a_runs = mine.loc[mine["model_size"] == size, "A"].to_numpy(float)
        off = np.isfinite(a_runs) & (a_runs < 1 - RUN_BOUND_TOL) & (a_runs > 0)
        rows.append(
            {
                "model_size": size,
                "A": float(r["A"]),
                "A_lo": float(r["A_lo"]),
                "A_hi": float(r["A_hi"]),
                "share_refits_at_bound": float(ident.share_at_bound),
                "identified": bool(ident.identified),
                "why": ident.reason,
                "runs": int(a_runs.size),
                "runs_A_off_bound": int(off.sum()),
            }
        )
    cols = ["A", "A_lo", "A_hi", "share_refits_at_bound", "identified", "why", "runs"]
    out = pd.DataFrame(rows, columns=["model_size", *cols, "runs_A_off_bound"]).set_index(
        "model_size"
    )
    if scope is not None:
        out["stable"] = scope.loc[base, "stable"].reindex(out.index).astype(int)
    return out


def bound_findings(
    tab: pd.DataFrame,
    *,
    base: str,
    target: int = TARGET,
    prefix: str = "scalerl",
    what: str = "",
    per_size: bool = True,
) -> list[Named]:
    """The number of sizes whose pooled A is off its bound (a count, no interval: the
    sizes are the design's, not a sample), with each other size's reason in the note,
    and, with ``per_size``, per size the runs whose own A is off it. ``prefix`` names
    the findings (``scalerl`` for the primary arm; e.g. ``scalerl/half_lr`` for the
    secondary arm, ``scalerl/all_runs`` for the sensitivity on all runs) and ``what``
    says in the description which fits these are."""
    n_ok, n = int(tab["identified"].sum()), len(tab)
    on = [f"{s}: {r['why'] or 'A on its bound'}" for s, r in tab.iterrows() if not r["identified"]]
    out = [
        Named(
            f"{prefix}/A_identified_sizes",
            Estimate(float(n_ok), note=("not identified at " + "; ".join(on) if on else None)),
            f"sizes whose pooled {base} sigmoid{what} has A off its bound (identified), "
            f"of {n}; the design aims at >= {target} of 4",
            unit="sizes",
        )
    ]
    if not per_size:
        return out
    for size, r in tab.iterrows():
        out.append(
            Named(
                f"{prefix}/{size}/A_runs_off_bound",
                Estimate(float(r["runs_A_off_bound"])),
                f"{base} runs{what} at {size} whose own sigmoid has A off its bound, of "
                f"{r['runs']}",
                unit="runs",
            )
        )
    return out


def sizes_on_bound(tab: pd.DataFrame) -> Sequence[str]:
    """The sizes whose pooled A sits on its bound (``tab`` from :func:`bound_table`)."""
    return [str(s) for s, ok in tab["identified"].items() if not ok]
