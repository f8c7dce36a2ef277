"""Activation-sparsity laws (Luo et al. 2024, "Sparsing Law").

Reproduces ``docs/studies/sparsity_laws.md``.

- :mod:`.cett`: the PPL-p% activation ratio (CETT thresholds) and its baselines
- :mod:`.config`: the sweep's models and compute classes
- :mod:`.sweep`: ReLU/SiLU models trained with checkpoints, ratio per checkpoint, on Dask
- :mod:`.analysis`: the ratio laws over data, size and width-depth trends, the sparse kernel
- :mod:`.published`: the paper's released curves, refitted (block bootstrap over checkpoints)
- :mod:`.kernel_spread`: the sparse FFN benchmark over separate processes (re-run intervals)
- :mod:`.masks`: a trained ReLU model's FFN activation masks (per layer, per token), bit-packed
- :mod:`.mask_kernel`: the sparse FFN timed on those masks next to matched random masks
- :mod:`.stacked`: several seeds of a run trained as one vmapped model (a GPU's engine)
- :mod:`.long_runs`: the long design (two sizes to 2000 tokens per parameter), run and cached
- :mod:`.limits`: both ratios, trend sizes calibrated on half the paper's curves, limits by size
- :mod:`.time_kernel`: the sparse FFN timed offline into committed data (one launch, one file)

Shared rooms used: ``models`` (transformer with its FFN hook, corpus), ``training`` (the
pretraining loop), ``fitting``, ``stats``, ``kernels`` (sparse FFN), ``cost_model``, ``compute``.
"""
