"""Pretraining optimizer comparison (Wen et al. 2025, "Fantastic Pretraining Optimizers").

Reproduces ``docs/studies/optimizer_comparison.md``.

- :mod:`.tuning`: coordinate-descent hyperparameter tuning with growing grids
- :mod:`.sweep`: tuning then final runs over sizes x data budgets x seeds, on Dask
- :mod:`.analysis`: speedups per size, size slopes, rankings mid-run vs final

Shared rooms used: ``training`` (optimizers, the pretraining loop), ``models`` (transformer,
corpus), ``fitting`` (the speedup over AdamW, :mod:`scalinglab.fitting.speedup`), ``stats``,
``cost_model``, ``compute``.
"""
