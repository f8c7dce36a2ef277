"""A design read with its later seed blocks as one Dataset (``v3`` + :mod:`.extension`).

A later seed block (:func:`.extension.extension_blocks`) runs some cells of a design
again with new RL seeds from the same warm starts. :func:`read_design` reads the base
design's Dataset together with every block's finished runs (its stored Dataset when the
block is complete, else the runs stored so far in its run folder, the rest of its cells
``status`` "pending") and :func:`join_blocks` concatenates them along ``seed``, as
:func:`scalinglab.studies.sparsity.long_runs.join_seed_blocks` does for the sparsity
study's seed blocks, at the level of cells: a block's (size, variant) cells outside it
are "skipped", seeds may not repeat (overlap refused), and a block must share the base
design's recipe (parameters, learning rate, evaluation schedule) and warm starts (the
warm-up's steps and check pass rate per warm start). Each seed's block is the coordinate
``block(seed)``; the attr ``seed_blocks`` (JSON) keeps every block's seeds, cells, runs
finished, config hash, commit and training machine. Without a finished run in any block
the base Dataset is returned unchanged, so the report reads exactly what it read before.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.studies.rl.config import RLSweepConfig
from scalinglab.sweeps import join_seed_blocks

#: The name of the base design's block in ``block(seed)``.
BASE_BLOCK = "v3"


def block_dataset(name: str, block: RLSweepConfig) -> xr.Dataset | None:
    """Block ``name``'s finished runs as a Dataset (:func:`.sweep.to_dataset` layout), or
    None when none is finished. Runs not finished yet read ``status`` "pending"."""
    from scalinglab.compute import load_dataset
    from scalinglab.studies.rl.extension_run import DEVICE_INFO, block_path, runs_folder
    from scalinglab.studies.rl.sweep import to_dataset
    from scalinglab.sweeps import RunCache

    path = block_path(name, block)
    if path.exists():
        return load_dataset(path, block.to_dict())
    folder = runs_folder(name, block)
    if not folder.is_dir():
        return None
    cache, size = RunCache(folder), block.sizes[0].name
    warms = {}
    for w in block.warm_seeds():
        hit, value = cache.load(["warm-up", size, w])
        if hit:
            warms[(0, w)] = value
    results = {}
    for v in block.variants:
        for s in block.seeds:
            hit, value = cache.load(["grpo", size, v, s])
            if hit:
                results[(0, v, s)] = value
    if not results:
        return None
    ds = to_dataset(block, results, {}, warms)
    ds["status"] = ds.status.where(ds.status == "ok", "pending")
    ds.attrs["n_failed"] = 0
    prov = folder / "provenance.json"
    if prov.exists():
        ds.attrs.update({k: str(v) for k, v in json.loads(prov.read_text()).items()})
    if (folder / DEVICE_INFO).exists():
        ds.attrs["train_machine"] = (folder / DEVICE_INFO).read_text()
    return ds


def _block_info(name: str, ds: xr.Dataset) -> dict:
    ok = ds.status == "ok"
    return {
        "block": name,
        "seeds": [int(s) for s in ds.seed.values],
        "sizes": [str(s) for s in ds.model_size.values],
        "variants": [str(v) for v in ds.variant.values],
        "runs_finished": int(ok.sum()),
        "config_hash": ds.attrs.get("config_hash"),
        "git_commit": ds.attrs.get("git_commit"),
        "train_machine": ds.attrs.get("train_machine"),
    }


def _check_same_design(first: xr.Dataset, name: str, b: xr.Dataset) -> None:
    """Raise ``ValueError`` unless block ``b`` fits ``first``'s cells, recipe and warm starts
    (a warm start ``first`` never made is a new base model, with nothing to match)."""
    extra = set(b.model_size.values) - set(first.model_size.values)
    extra |= set(b.variant.values) - set(first.variant.values)
    if extra:
        raise ValueError(f"seed block {name}: cells {sorted(extra)} are not in the base design")
    if not np.array_equal(b.eval_step.values, first.eval_step.values):
        raise ValueError(f"seed block {name}: its evaluation steps differ from the base design's")
    for size in b.model_size.values:
        for var in ("n_params", "lr", "d_model", "n_layer"):
            if b[var].sel(model_size=size).item() != first[var].sel(model_size=size).item():
                raise ValueError(f"seed block {name}: {var} at {size} differs from the base design")
        for s in b.seed.values:
            w = int(b.warm_start.sel(seed=s))
            got = b.sel(model_size=size, seed=s)
            if not np.isfinite(float(got.warmup_steps)):
                continue  # its warm-up not stored yet (no run of it either)
            same = first.seed.values[first.warm_start.values == w]
            if same.size == 0:
                continue  # a new base model (:mod:`.third_stage`): none to match
            ref = first.sel(model_size=size, seed=same[0])
            pair = [(float(got[k]), float(ref[k])) for k in ("warmup_steps", "warmup_check")]
            if any(a != r for a, r in pair):
                raise ValueError(
                    f"seed block {name}: warm start {w} at {size} is not the base design's "
                    f"(warm-up steps, check: {[a for a, _ in pair]} vs {[r for _, r in pair]})"
                )


def join_blocks(first: xr.Dataset, later: dict[str, xr.Dataset]) -> xr.Dataset:
    """``first`` (the base design) and its later seed ``blocks`` as one Dataset along ``seed``.

    Parameters
    ----------
    first
        The base design (dims ``model_size, variant, seed, eval, step``; coordinates
        ``warm_start(seed)``, ``rl_seed(seed)``).
    later
        ``{block name: Dataset}`` of the same layout over some of ``first``'s sizes and
        variants.

    Returns
    -------
    xarray.Dataset
        ``first``'s variables over ``seed`` = ``first``'s seeds then each block's; a
        block's cells outside it read ``status`` "skipped"; coordinate ``block(seed)``;
        attrs of ``first`` with ``seed_blocks`` (JSON list: each block's ``block``,
        ``seeds``, ``sizes``, ``variants``, ``runs_finished``, ``config_hash``,
        ``git_commit``, ``train_machine``) and ``n_failed`` summed.

    Raises
    ------
    ValueError
        When a block's seeds overlap another's, or its cells, recipe or warm starts are
        not the base design's.
    """
    parts, names = {BASE_BLOCK: first}, [BASE_BLOCK] * first.sizes["seed"]
    for name, b in later.items():
        _check_same_design(first, name, b)
        r = b.reindex(model_size=first.model_size.values, variant=first.variant.values)
        for var, fill in (("status", "skipped"), ("error", "")):
            vals = r[var].values
            r[var] = (r[var].dims, np.where(pd.isnull(vals), fill, vals).astype(str))
        parts[name] = r
        names += [name] * b.sizes["seed"]
    infos = {BASE_BLOCK: first, **later}  # each block's own cells, not the reindexed ones
    out = join_seed_blocks(
        parts,
        info=lambda n, _: _block_info(n, infos[n]),
        data_vars="minimal",
        coords="minimal",
        compat="override",
        join="override",
    )
    out = out.assign_coords(block=("seed", names))
    return out


def read_design(base: xr.Dataset, blocks: dict[str, RLSweepConfig]) -> xr.Dataset:
    """``base`` joined with every block of ``blocks`` that has a finished run
    (:func:`block_dataset`, :func:`join_blocks`); ``base`` itself when none has."""
    later = {n: d for n, b in blocks.items() if (d := block_dataset(n, b)) is not None}
    return join_blocks(base, later) if later else base


def runs_by_block(outcomes: pd.DataFrame, block_of: pd.Series) -> pd.DataFrame:
    """Runs and stable runs per (variant, size, block).

    Parameters
    ----------
    outcomes
        :func:`.stopping.run_outcomes` (columns ``model_size, variant, seed, unstable``).
    block_of
        The block of each seed (``Dataset.block.to_series()``).

    Returns
    -------
    pandas.DataFrame
        Indexed by (``variant``, ``model_size``, ``block``): ``runs``, ``stable``.
    """
    o = outcomes.assign(
        block=block_of.reindex(outcomes["seed"].to_numpy()).to_numpy(),
        stable=~outcomes["unstable"].astype(bool),
    )
    g = o.groupby(["variant", "model_size", "block"], sort=False)
    return pd.DataFrame({"runs": g.size(), "stable": g["stable"].sum().astype(int)})


def design_runs_text(
    curves: pd.DataFrame, block_of: pd.Series | None, *, variant: str, sizes: list[str]
) -> str:
    """The claims' phrase for runs per size and block of ``variant``, e.g. ``"; runs
    per size and block (baseline): s 4, l 16 [v3 4, ext-l 12]"``; empty for a design
    read without later blocks (its claims read as before)."""
    if block_of is None or block_of.nunique() < 2:
        return ""
    runs = curves.loc[curves["variant"] == variant, ["model_size", "seed"]].drop_duplicates()
    runs = runs.assign(block=block_of.reindex(runs["seed"].to_numpy()).to_numpy())
    parts = []
    for s in sizes:
        r = runs[runs["model_size"] == s]
        if r.empty:
            continue
        each = r.groupby("block", sort=False).size()
        part = f"{s} {len(r)}"
        if len(each) > 1:
            part += " [" + ", ".join(f"{b} {n}" for b, n in each.items()) + "]"
        parts.append(part)
    return f"; runs per size and block ({variant}): " + ", ".join(parts)
