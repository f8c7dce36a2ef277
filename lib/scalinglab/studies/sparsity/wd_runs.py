"""The long width-depth families (SPARSE-4 at the limit), run here on the CPU and cached.

Two families, both stated in :mod:`~scalinglab.studies.sparsity.config`:

- at 8000 tokens per parameter (:func:`~scalinglab.studies.sparsity.long_config.long_wd_configs`:
  u2 and u4, 5 seeds each, one Dataset per shape; xs comes from the long design);
- at 16000 (:func:`~scalinglab.studies.sparsity.long_config.long_wd16_blocks`: u4 and xs,
  15 and 12 seeds), every seed a block of its own (own cache key, Dataset and
  provenance), so the family, hours of 2-core compute, is committed run by run as it
  lands over several sessions.

.. code-block:: bash

    # the family at 8000 (resumable run by run)
    python -m scalinglab.studies.sparsity.long_runs run --design wd --scheduler sync
    # the family at 16000: every missing block, or some shapes and seeds, in the order
    # given (two processes on two cores: give each its own seeds)
    python -m scalinglab.studies.sparsity.long_runs run --design wd16 --scheduler sync \\
        --size wd16-u4 --seed 0 --seed 1

A bar over the blocks of a call shows their count and an ETA. A block already cached is
read, never retrained. The 16000 family is read (:func:`wd16_family`) only when
every block of both shapes is in: its seeds are fixed in advance, not grown until a test
passes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import xarray as xr
from tqdm import tqdm

from scalinglab.compute import resolve_device
from scalinglab.errors import ParameterError
from scalinglab.studies.sparsity import sweep
from scalinglab.studies.sparsity.config import SparsitySweepConfig
from scalinglab.studies.sparsity.long_blocks import cached_block, join_block_datasets
from scalinglab.studies.sparsity.long_config import (
    LONG_WD16_HORIZONS,
    long_wd16_blocks,
    long_wd_configs,
)


def _check_shapes(known: Sequence[str], shapes: Sequence[str], *, family: str) -> None:
    """Raise :class:`~scalinglab.errors.ParameterError` naming the shapes ``family`` has
    when one of ``shapes`` is not among ``known``."""
    unknown = [s for s in shapes if s not in known]
    if unknown:
        raise ParameterError(f"the {family} has no {unknown}: its shapes are {list(known)}")


def run_long_wd(
    compute_class: str = "small",
    *,
    scheduler: str = "",
    rerun: bool = False,
    progress: bool = True,
    shapes: tuple[str, ...] = (),
) -> dict[str, xr.Dataset]:
    """The width-depth family at 8000 (:func:`~scalinglab.studies.sparsity.long_config.long_wd_configs`),
    ``{"wd-<model>": Dataset}``, trained here on the CPU as tasks of
    :func:`~scalinglab.studies.sparsity.sweep.run_sweep` where not cached (resumable run
    by run). ``shapes`` (e.g. ``("wd-u4",)``) limits the call to those shapes.

    Raises
    ------
    ParameterError
        One of ``shapes`` is not a shape of the family (a ``ValueError``).
    """
    configs = long_wd_configs(compute_class)
    _check_shapes(list(configs), shapes, family=f"{compute_class} width-depth family")
    return {
        name: sweep.run_sweep(cfg, scheduler=scheduler, rerun=rerun, progress=progress)
        for name, cfg in configs.items()
        if not shapes or name in shapes
    }


def cached_long_wd(compute_class: str = "small") -> dict[str, xr.Dataset]:
    """The width-depth family at 8000's cached Datasets (:func:`.long_blocks.cached_block`,
    never trains; may be empty)."""
    found = {name: cached_block(cfg) for name, cfg in long_wd_configs(compute_class).items()}
    return {name: ds for name, ds in found.items() if ds is not None}


def wd16_todo(
    compute_class: str = "small", *, shapes: Sequence[str] = (), seeds: Sequence[int] = ()
) -> list[tuple[str, int, SparsitySweepConfig]]:
    """The 16000 family's blocks a call would train, ``(shape, seed, config)`` in order:
    ``shapes`` (default every shape), each its seeds in the order of ``seeds`` (default
    every seed of the shape; a seed a shape does not have is skipped for that shape).

    Raises
    ------
    ParameterError
        One of ``shapes`` is not a shape of the family, or one of ``seeds`` belongs to
        none of the chosen shapes (a ``ValueError``).
    """
    blocks = long_wd16_blocks(compute_class)
    family = f"{compute_class} width-depth family at 16000"
    _check_shapes(list(blocks), shapes, family=family)
    chosen = list(shapes) or list(blocks)
    have = {sd for s in chosen for sd in blocks[s]}
    stray = [sd for sd in seeds if sd not in have]
    if stray:
        raise ParameterError(
            f"the {family} has no seed {stray} in {chosen}: "
            + "; ".join(f"{s}: seeds {min(blocks[s])}-{max(blocks[s])}" for s in chosen)
        )
    return [
        (s, sd, blocks[s][sd]) for s in chosen for sd in (seeds or blocks[s]) if sd in blocks[s]
    ]


def run_long_wd16(
    compute_class: str = "small",
    *,
    scheduler: str = "",
    rerun: bool = False,
    progress: bool = True,
    shapes: Sequence[str] = (),
    seeds: Sequence[int] = (),
) -> dict[tuple[str, int], xr.Dataset]:
    """Train the 16000 family's missing blocks here on the CPU (:func:`wd16_todo`'s
    order), each saved as its own Dataset as soon as its run is done.

    A bar over the blocks shows how many are done and an ETA (a cached block is read,
    never retrained unless ``rerun``, and counts as done at once).

    Returns
    -------
    dict
        ``{(shape, seed): Dataset}`` of the blocks of this call.

    Raises
    ------
    ParameterError
        As :func:`wd16_todo`.
    """
    todo = wd16_todo(compute_class, shapes=shapes, seeds=seeds)
    out = {}
    bar = tqdm(todo, desc="width-depth at 16000", unit="run", disable=not progress)
    for shape, sd, cfg in bar:
        bar.set_postfix_str(f"{shape} seed {sd}")
        found = None if rerun else cached_block(cfg, devices=("cpu",))
        if found is None:
            cfg = dataclasses.replace(cfg, device=resolve_device(cfg.device))
            found = sweep.run_sweep(cfg, scheduler=scheduler, rerun=rerun, progress=False)
        out[(shape, sd)] = found
    return out


@dataclasses.dataclass(frozen=True)
class Wd16Family:
    """What is cached of the 16000 family, from one lookup of its blocks.

    Attributes
    ----------
    progress
        ``{"wd16-<model>": (blocks cached, blocks stated)}``.
    datasets
        ``{"wd16-<model>": Dataset}``, each shape's seed blocks joined along ``seed``
        (:func:`.long_blocks.join_block_datasets`, with ``plateau_looks`` from
        :data:`~scalinglab.studies.sparsity.long_config.LONG_WD16_HORIZONS`), only when
        every block of every shape is cached; else empty: the family is read complete or
        not at all (its deciding pair needs both shapes).
    """

    progress: dict[str, tuple[int, int]]
    datasets: dict[str, xr.Dataset]


def wd16_family(compute_class: str = "small") -> Wd16Family:
    """The 16000 family as cached here (:class:`Wd16Family`): every block is looked up
    once, and both the count of runs in and the joined family come from that lookup.
    Never trains."""
    found = {
        shape: {sd: cached_block(c, devices=("cpu",)) for sd, c in blocks.items()}
        for shape, blocks in long_wd16_blocks(compute_class).items()
    }
    progress = {
        shape: (sum(ds is not None for ds in f.values()), len(f)) for shape, f in found.items()
    }
    if any(done < stated for done, stated in progress.values()):
        return Wd16Family(progress, {})
    datasets = {}
    for shape, f in found.items():
        ds = join_block_datasets({f"seed-{sd}": d for sd, d in f.items() if d is not None})
        horizon = LONG_WD16_HORIZONS[shape.split("-", 1)[1]]
        ds.attrs["plateau_looks"] = horizon.looks
        ds.attrs["plateau_looks_why"] = horizon.looks_why
        datasets[shape] = ds
    return Wd16Family(progress, datasets)
