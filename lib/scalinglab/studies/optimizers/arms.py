"""The optimizer sweep's control arms: hyperparameter transfer and a schedule control.

Both run beside the final runs (one batch of Dask tasks with them, so they share the
per-run cache and the progress bar) and come back as extra variables of the sweep's
Dataset, NaN (status ``"skipped"``) outside the cells where they ran.

- **Transfer** (``transfer_sizes``): at those sizes, every optimizer but AdamW is also run
  with AdamW's tuned ``transfer_coords`` (learning rate and weight decay) at the same cell,
  its own values for the rest, at every data multiple and seed. Against the optimizer's
  own tuned optimum this measures what tuning each optimizer on its own is worth: the
  paper's "unfair tuning" (hyperparameters carried over from another optimizer) claim.
  Variables ``transfer_final_loss`` and ``transfer_status`` ``(optimizer, model_size,
  data_multiple, seed)``; ``transfer_lr`` and ``transfer_weight_decay`` ``(optimizer,
  model_size, data_multiple)``.
- **Schedule control** (``control_schedule`` at ``control_sizes`` x
  ``control_multiples``): every optimizer with its tuned hyperparameters but a
  ``"constant"`` (or ``"wsd"``) learning rate, evaluated at the same points as the main
  (cosine) runs. If rankings flip mid-run *because* of the decay, the constant-LR runs'
  mid-run ranking agrees with their end better than the cosine runs' does.
  Variables ``control_loss`` ``(..., seed, step)``, ``control_final_loss`` and
  ``control_status`` ``(optimizer, model_size, data_multiple, seed)``; attr
  ``control_schedule``.

A run that is identical to a main run (an optimizer whose tuned learning rate and weight
decay equal AdamW's) is the same task and is not run twice.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from scalinglab.studies.optimizers.config import cell_hparams
from scalinglab.training.pretrain import PretrainConfig


def transfer_hparams(
    sweep: Any, tuned: dict, optimizer: str, size: Any, multiple: float
) -> dict[str, Any]:
    """``optimizer``'s tuned hyperparameters at a cell with AdamW's ``transfer_coords``."""
    own = cell_hparams(sweep, tuned, optimizer, size, multiple)
    base = cell_hparams(sweep, tuned, "adamw", size, multiple)
    return {**own, **{k: base[k] for k in sweep.transfer_coords}}


def arm_runs(sweep: Any, tuned: dict) -> list[tuple[str, str, Any, float, int, PretrainConfig]]:
    """Every control-arm run: ``(arm, optimizer, size, multiple, seed, config)``."""
    out = []
    for o in sweep.optimizers:
        for sz in sweep.sizes:
            for m in sweep.data_multiples:
                if not sweep.runs_cell(o, sz.name, m):
                    continue
                for s in sweep.seeds:
                    if o != "adamw" and sz.name in sweep.transfer_sizes:
                        hp = transfer_hparams(sweep, tuned, o, sz, m)
                        out.append(("transfer", o, sz, m, s, sweep.run_config(o, sz, m, hp)))
                    if sz.name in sweep.control_sizes and m in sweep.control_multiples:
                        hp = cell_hparams(sweep, tuned, o, sz, m)
                        cfg = sweep.run_config(o, sz, m, hp, schedule=sweep.control_schedule)
                        out.append(("control", o, sz, m, s, cfg))
    return out


def arm_dataset(sweep: Any, tuned: dict, runner: Any) -> xr.Dataset:
    """The arms' variables (see the module docstring); empty when the sweep has no arm.

    ``runner`` holds the finished runs (``runner.results`` / ``runner.errors`` by
    ``runner.key(cfg, seed)``).
    """
    runs = arm_runs(sweep, tuned)
    if not runs:
        return xr.Dataset()
    O_, S, M, R = sweep.optimizers, sweep.sizes, sweep.multiples, sweep.seeds
    shape = (len(O_), len(S), len(M), len(R))
    names = [s.name for s in S]
    v: dict[str, np.ndarray] = {
        "transfer_final_loss": np.full(shape, np.nan),
        "control_final_loss": np.full(shape, np.nan),
        "control_loss": np.full((*shape, sweep.n_evals), np.nan),
        "control_lr_factor": np.full((*shape, sweep.n_evals), np.nan),
    }
    status = {a: np.full(shape, "skipped", dtype=object) for a in ("transfer", "control")}
    hp = {k: np.full(shape[:3], np.nan) for k in ("lr", "weight_decay")}
    for arm, o, sz, m, s, cfg in runs:
        i, j, k, l_ = O_.index(o), names.index(sz.name), M.index(m), R.index(s)
        if arm == "transfer":
            for name in hp:
                hp[name][i, j, k] = float(cfg.hparams[name])
        key = runner.key(cfg, s)
        r = runner.results.get(key)
        if r is None:
            status[arm][i, j, k, l_] = "failed"
            continue
        status[arm][i, j, k, l_] = r.status
        v[f"{arm}_final_loss"][i, j, k, l_] = r.final_loss
        if arm == "control":
            v["control_loss"][i, j, k, l_, : len(r.eval_loss)] = r.eval_loss
            v["control_lr_factor"][i, j, k, l_, : len(r.eval_lr)] = r.eval_lr
    run_dims = ("optimizer", "model_size", "data_multiple", "seed")
    data: dict[str, Any] = {}
    if sweep.transfer_sizes:
        data["transfer_final_loss"] = (run_dims, v["transfer_final_loss"])
        data["transfer_status"] = (run_dims, status["transfer"].astype(str))
        data.update({f"transfer_{k}": (run_dims[:3], a) for k, a in hp.items()})
    if sweep.control_schedule:
        data["control_loss"] = ((*run_dims, "step"), v["control_loss"])
        data["control_lr_factor"] = ((*run_dims, "step"), v["control_lr_factor"])
        data["control_final_loss"] = (run_dims, v["control_final_loss"])
        data["control_status"] = (run_dims, status["control"].astype(str))
    return xr.Dataset(
        data,
        coords={
            "optimizer": list(O_),
            "model_size": names,
            "data_multiple": np.array(M, dtype=float),
            "seed": list(R),
            "step": np.arange(sweep.n_evals),
        },
        attrs={"control_schedule": sweep.control_schedule} if sweep.control_schedule else {},
    )
