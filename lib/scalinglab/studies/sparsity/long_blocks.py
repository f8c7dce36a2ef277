"""A long design's blocks: their cache keys, run folders and cached Datasets, and seed
blocks joined along ``seed``.

A block is one config of a long design (a size, a later seed block of a size, a shape of
a width-depth family, or one seed of the family at 16000), cached as its own Dataset
under ``data/sparsity_laws/`` with its per-run cache beside it. Read by
:mod:`~scalinglab.studies.sparsity.long_runs` (the size design),
:mod:`~scalinglab.studies.sparsity.wd_runs` (the width-depth families) and
:mod:`~scalinglab.studies.sparsity.device_runs` (a lent machine).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import xarray as xr

from scalinglab.compute import dataset_path
from scalinglab.errors import ParameterError
from scalinglab.studies.sparsity import sweep
from scalinglab.studies.sparsity.config import STUDY, SparsitySweepConfig
from scalinglab.studies.sparsity.long_config import long_configs, long_extra_configs
from scalinglab.sweeps import RUNS_DIR
from scalinglab.sweeps import join_seed_blocks as join_blocks

#: File beside a run folder's pickles describing the machine that trained them.
DEVICE_INFO = "device.json"


def sweep_key(cfg: SparsitySweepConfig) -> dict:
    """The cache key of ``cfg`` (as :func:`~scalinglab.studies.sparsity.sweep.run_sweep`)."""
    return {**cfg.to_dict(), "corpus_hash": sweep.build_corpus(cfg.corpus).content_hash}


def runs_folder(cfg: SparsitySweepConfig) -> Path:
    """The per-run cache folder of ``cfg``'s sweep."""
    path = dataset_path(STUDY, f"sweep-{cfg.compute_class}", sweep_key(cfg))
    return path.parent / RUNS_DIR / path.stem


def cached_block(
    cfg: SparsitySweepConfig, *, devices: tuple[str, ...] = ("cpu", "cuda")
) -> xr.Dataset | None:
    """The cached Dataset of one block of the design trained on any of ``devices`` (in
    order; ``cfg`` with its ``device`` replaced by each), or None. Never trains."""
    from scalinglab.compute import load_dataset

    for device in devices:
        c = dataclasses.replace(cfg, device=device)
        key = sweep_key(c)
        ds = load_dataset(dataset_path(STUDY, f"sweep-{c.compute_class}", key), key)
        if ds is not None:
            return ds
    return None


def join_seed_blocks(first: xr.Dataset, later: xr.Dataset) -> xr.Dataset:
    """One size's seed blocks as one Dataset (concatenated along ``seed``,
    :func:`scalinglab.sweeps.join_seed_blocks`).

    The first block's attrs are kept; ``seed_blocks`` records every block's seeds,
    config hash and training machine (JSON), so each seed's provenance stays readable.
    """
    return join_block_datasets({"first": first, "later": later})


def join_block_datasets(blocks: dict[str, xr.Dataset]) -> xr.Dataset:
    """Seed blocks ``{block name: Dataset}``, in order, as one Dataset
    (:func:`scalinglab.sweeps.join_seed_blocks`; ``seed_blocks`` records every block's
    seeds, config hash, training machine and commit)."""
    return join_blocks(blocks, info=_block_info)


def _block_info(name: str, ds: xr.Dataset) -> dict:
    return {
        "seeds": [int(v) for v in ds["seed"].values],
        "config_hash": ds.attrs.get("config_hash"),
        "train_machine": ds.attrs.get("train_machine"),
        "git_commit": ds.attrs.get("git_commit"),
    }


def design_blocks(
    compute_class: str, *, device: str = "cuda", sizes: tuple[str, ...] = (), later: bool = False
) -> dict[str, SparsitySweepConfig]:
    """The design's configs by size (``sizes`` only, when given), first or later blocks.

    Raises :class:`~scalinglab.errors.ParameterError` (a ``ValueError``) naming the sizes the block has when one of ``sizes`` is not
    among them.
    """
    configs = (long_extra_configs if later else long_configs)(compute_class, device=device)
    unknown = [s for s in sizes if s not in configs]
    if unknown:
        block = "later seed blocks" if later else "sizes"
        raise ParameterError(
            f"the {compute_class} long design has no {unknown}: its {block} are {list(configs)}"
        )
    return {n: c for n, c in configs.items() if not sizes or n in sizes}


__all__ = [
    "DEVICE_INFO",
    "cached_block",
    "design_blocks",
    "join_block_datasets",
    "join_seed_blocks",
    "runs_folder",
    "sweep_key",
]
