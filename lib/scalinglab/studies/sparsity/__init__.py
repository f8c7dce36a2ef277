"""Activation-sparsity laws (Luo et al. 2024, "Sparsing Law").

Reproduces ``docs/studies/sparsity_laws.md``.

- :mod:`.cett`: the PPL-p% activation ratio (CETT thresholds) and its baselines
- :mod:`.config`: the sweep's models and compute classes
- :mod:`.sweep`: ReLU/SiLU models trained with checkpoints, ratio per checkpoint, on Dask
- :mod:`.analysis`: the ratio laws over data, size and width-depth trends, the sparse kernel
- :mod:`.published`: the paper's released curves, refitted (block bootstrap over checkpoints)
- :mod:`.kernel_spread`: the sparse FFN benchmark over separate processes (re-run intervals)

Shared rooms used: ``models`` (transformer with its FFN hook, corpus), ``training`` (the
pretraining loop), ``fitting``, ``stats``, ``kernels`` (sparse FFN), ``cost_model``, ``compute``.
"""
