"""The RL study's results as named findings: each analysis result, turned into the
:class:`~scalinglab.estimate.Estimate` (with its level, method and resamples) and the
name, description and headline flag under which the report records it.

The analysis modules (:mod:`.analysis`, :mod:`.predict`, :mod:`.kn`, :mod:`.phases`,
:mod:`.ablations`, :mod:`.stopping`) keep returning the tables and dicts their figures
and tests use; each findings function takes one of those results and returns a list of
:class:`Named`, which the notebook records with one call (:func:`record_all`), so no
``level=..., method=..., resamples=...`` is re-typed in the notebook and the method a
report prints is written once.

The functions live by concept and are re-exported here, so ``findings.<name>`` is the
one name the notebook and tests use: :mod:`.named` (:class:`Named`, :func:`record_all`,
the interval methods), :mod:`.findings_runs` (how runs ended, the plateau, the
learning-rate stage), :mod:`.findings_fits` (ScaleRL's sigmoid, half compute, k(N)),
:mod:`.findings_phases` (the reward trajectory's phases), :mod:`.findings_ablations`
(ablations, data reuse) and :mod:`.scope` (the stable runs ScaleRL's fits use, the
unstable runs apart). This module keeps what the claims file needs
(:func:`claim_values`).
"""

from __future__ import annotations

from collections.abc import Sequence

from scalinglab.studies.rl import halfruns
from scalinglab.studies.rl.findings_ablations import (
    ABLATION_HEADLINES,
    ablation_findings,
    reuse_findings,
)
from scalinglab.studies.rl.findings_fits import (
    half_compute_findings,
    k_table,
    kn_findings,
    sigmoid_findings,
)
from scalinglab.studies.rl.findings_phases import (
    PHASES,
    phase_findings,
    phase_notes,
    phase_table,
    run_phase_findings,
)
from scalinglab.studies.rl.findings_runs import lr_findings, plateau_findings, run_outcome_findings
from scalinglab.studies.rl.named import (
    OVER_RUNS,
    OVER_SEEDS,
    PAIRED,
    RLIABLE,
    RUNS_WITHIN_SIZE,
    Named,
    checked,
    estimate_of,
    record_all,
    reinterval,
)

__all__ = [
    "ABLATION_HEADLINES",
    "DESIGN_CHOICES",
    "HALF_RUNS_SCOPE",
    "OVER_RUNS",
    "OVER_SEEDS",
    "PAIRED",
    "PHASES",
    "RLIABLE",
    "RUNS_WITHIN_SIZE",
    "Named",
    "checked",
    "estimate_of",
    "reinterval",
    "ablation_findings",
    "claim_values",
    "half_compute_findings",
    "k_table",
    "kn_findings",
    "lr_findings",
    "phase_findings",
    "phase_notes",
    "phase_table",
    "plateau_findings",
    "record_all",
    "reuse_findings",
    "run_outcome_findings",
    "run_phase_findings",
    "sigmoid_findings",
]

#: SCALERL-2's regime phrase without the runs' counts (the notebook passes
#: :func:`.halfruns.scope_text`, which gives them).
HALF_RUNS_SCOPE = (
    f"each run fitted alone, every variant of the design: the runs that are {halfruns.keep_text()}"
)

#: The design ablations of ScaleRL's kind (SCALERL-4 is decided on those the sweep ran).
DESIGN_CHOICES = ("sample_agg", "batch_norm")


def claim_values(
    sizes: Sequence[str],
    variants: Sequence[str],
    *,
    early_frac: float,
    user_data: bool = False,
    scalerl_scope: str = "stable runs (ScaleRL's scope)",
    half_runs_scope: str = HALF_RUNS_SCOPE,
    design_runs: str = "",
) -> dict:
    """What ``notebooks/claims/rl_scaling.toml``'s templates name, for
    :func:`scalinglab.record.claims_from`: the sizes, the design ablations the sweep ran
    (all of them, so that SCALERL-4 reads untested, when it ran none), the early window
    as a percentage, ``data="user"`` for a user's own logs (no claim of the file is
    about them: the ledger is then empty) and ``scalerl_scope``, the regime phrase of the
    claims decided on ScaleRL's pooled fits (:func:`.scope.regime_text`: the stable runs
    per size), ``half_runs_scope``, SCALERL-2's (the runs of every variant its mean error
    is taken over, :func:`.halfruns.scope_text` of :func:`.halfruns.population`: the
    counts come from the runs, the default states the rule alone), and ``design_runs``, the runs per size and seed block of a design read
    with later blocks (:func:`.blocks.design_runs_text`; empty without them)."""
    ran = [v for v in DESIGN_CHOICES if v in variants]
    return {
        "sizes": list(sizes),
        "design_choices": ran or list(DESIGN_CHOICES),
        "early_pct": f"{early_frac:.0%}",
        "data": "user" if user_data else "sweep",
        "scalerl_scope": scalerl_scope,
        "half_runs_scope": half_runs_scope,
        "design_runs": design_runs,
    }
