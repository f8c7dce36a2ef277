"""Where a run's report goes: the variant's folder, or its own for anything else.

A declared variant's folder ``reports/<study>/<variant>/`` (and so its ``latest``,
which the committed index lists) holds only runs with exactly that variant's
parameters. Any other run gets a folder of its own (all git-ignored):

- a run given a ``[file]`` parameter (see :mod:`scalinglab.runner.param_rules`)
  reads the user's own data: ``reports/<study>/user/`` (``<variant>-user/`` for
  another variant);
- a run with a ``compute_class`` other than its variant's: ``<variant>-<compute_class>/``;
- any other parameter changed with ``-p`` (``-p reps 10``, ``-p method bca``):
  ``<variant>-custom/``. Parameters that only say where or how afresh a study runs
  (:data:`EXECUTION_PARAMETERS`) do not count.

:func:`declared_variant` maps such a folder back to its variant (``verify`` re-runs a
run from its manifest's folder name and full parameters).
"""

from __future__ import annotations

from typing import Any

from scalinglab.errors import ParameterError
from scalinglab.runner.study import DEFAULT_VARIANT, Study, resolve_parameters

#: Report folder of runs on the user's own data (see :func:`run_folder`).
USER_VARIANT = "user"
#: Suffix of the report folder of runs with custom parameters (see :func:`run_folder`).
CUSTOM_SUFFIX = "custom"
#: Parameters that change where a study runs (or that it recomputes its cached
#: experiment), not what it computes: a run that sets them stays in its variant's folder.
EXECUTION_PARAMETERS = frozenset({"scheduler", "rerun"})


def user_data(study: Study, values: dict[str, Any]) -> list[str]:
    """Names of the ``[file]`` parameters given a value (the run reads the user's own data)."""
    return [n for n, p in study.parameters.items() if p.file and values.get(n)]


def run_folder(study: Study, variant: str, values: dict[str, Any]) -> str:
    """The folder under ``reports/<study>/`` a run of ``variant`` with ``values`` goes to.

    A run on the user's own data (a ``[file]`` parameter given) goes to ``user``
    (``<variant>-user`` for another variant), and one with a ``compute_class``
    other than the variant's gets ``-<compute_class>`` appended; a run that is
    neither but differs from the variant in any other parameter (outside
    :data:`EXECUTION_PARAMETERS`) goes to ``<variant>-custom``. So no run with
    parameters other than its variant's ever replaces the ``latest`` of the
    committed reproduction.

    Examples: ``default`` + ``-p scores mine.csv`` -> ``user``; ``tiny`` + ``-p scores
    mine.csv`` -> ``tiny-user``; ``default`` + ``-p compute_class tiny`` -> ``default-tiny``;
    ``default`` + ``-p reps 10`` -> ``default-custom``; ``default`` + ``-p scheduler sync``
    -> ``default``.
    """
    base = resolve_parameters(study, variant=variant)
    name = variant
    if any(values.get(n) != base.get(n) for n in user_data(study, values)):
        name = USER_VARIANT if variant == DEFAULT_VARIANT else f"{variant}-{USER_VARIANT}"
    if values.get("compute_class", base.get("compute_class")) != base.get("compute_class"):
        name = f"{name}-{values['compute_class']}"
    if name == variant and any(
        values.get(n, base[n]) != base[n] for n in base if n not in EXECUTION_PARAMETERS
    ):
        name = f"{variant}-{CUSTOM_SUFFIX}"
    return name


def declared_variant(study: Study, folder: str, values: dict[str, Any]) -> str:
    """The declared variant whose run with ``values`` goes to ``folder`` (see :func:`run_folder`).

    ``verify`` re-runs a recorded run from its folder name and full parameters;
    a declared variant is returned as is.

    Raises
    ------
    ParameterError
        No declared variant leads there with these values.
    """
    if folder in study.variants:
        return folder
    for name in study.variants:
        if folder == USER_VARIANT or folder.startswith(f"{name}-"):
            try:
                merged = resolve_parameters(study, variant=name, overrides=values)
            except ParameterError:
                continue
            if run_folder(study, name, merged) == folder:
                return name
    resolve_parameters(study, variant=folder)  # raises: unknown variant
    return folder
