"""The sweep a report reads: a long design's stored Dataset, never hours of training.

The designs that take minutes (``tiny``, ``tiny_v3``, ``small``) run inside the report
when their Dataset is not stored yet. The long ones (:data:`LONG`: ``v3`` about 4 hours,
the ``medium`` designs 2.5-6, ``large`` a GPU's) are run by their own resumable command
(``python -m scalinglab.studies.rl.sweep <class>``, see ``docs/studies/rl_scaling.md``);
a report of one whose Dataset is missing stops with that command, rather than starting
the sweep inside a notebook cell (where an interrupted run loses its place in the
report and a regeneration of every stale report would start hours of training).

``v3`` is read together with its extension (:mod:`.extension`, :mod:`.second_stage`,
:mod:`.third_stage`): every finished run of the extension's blocks joins the ``v3`` runs
along ``seed`` (:func:`.blocks.read_design`; with none finished, the ``v3`` Dataset is
returned as it is stored).
"""

from __future__ import annotations

import dataclasses

import xarray as xr

from scalinglab.compute import dataset_path, resolve_device
from scalinglab.errors import StudyError
from scalinglab.studies.rl.blocks import read_design
from scalinglab.studies.rl.config import STUDY, RLSweepConfig
from scalinglab.studies.rl.extension import BASE
from scalinglab.studies.rl.sweep import rl_runs_folder, run_sweep
from scalinglab.studies.rl.third_stage import design_blocks

#: Compute classes whose sweep takes hours: a report reads their stored Dataset only.
LONG = frozenset({"v3", "medium", "medium_v1", "large"})


def load_sweep(sweep: RLSweepConfig, *, scheduler: str = "", rerun: bool = False) -> xr.Dataset:
    """The sweep's Dataset (:func:`.sweep.run_sweep`), or a clear stop for a long design
    whose Dataset is not stored.

    Parameters
    ----------
    sweep
        The design (:func:`.config.sweep_config`).
    scheduler, rerun
        As for :func:`.sweep.run_sweep`; a long design refuses ``rerun`` (its runs are
        re-made by its own command).

    Returns
    -------
    xarray.Dataset
        See :func:`.sweep.to_dataset`.

    Raises
    ------
    scalinglab.errors.StudyError
        For a :data:`LONG` design without its stored Dataset (naming the file, the runs
        already finished and the command that makes it), or with ``rerun``.
    """
    cc = sweep.compute_class
    if cc in LONG:
        resolved = dataclasses.replace(sweep, device=resolve_device(sweep.device))
        path = dataset_path(STUDY, f"grpo-{cc}", resolved.to_dict())
        command = f"python -m scalinglab.studies.rl.sweep {cc}"
        if rerun:
            raise StudyError(
                f"rl_scaling: the {cc} sweep takes hours; it is not re-run inside a report "
                f"(rerun=True). Re-make its runs with `{command}` (resumable)"
            )
        if not path.exists():
            folder = rl_runs_folder(sweep)
            done = len(list(folder.glob("*.pkl"))) if folder.is_dir() else 0
            raise StudyError(
                f"rl_scaling: no stored Dataset for the {cc} sweep ({path}; {done} finished "
                f"warm-ups and runs stored in {folder}). Its runs take hours, so the report "
                f"does not start them: run `{command}` (resumable; it writes the Dataset "
                "when every run is done), then render the report"
            )
    ds = run_sweep(sweep, scheduler=scheduler, rerun=rerun)
    if cc == BASE:  # v3 with its seed extension's finished runs (none: v3 unchanged)
        ds = read_design(ds, design_blocks(sweep))
    return ds
