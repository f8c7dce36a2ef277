"""Pretraining optimizer comparison (Wen et al. 2025, "Fantastic Pretraining Optimizers").

Reproduces ``docs/studies/optimizer_comparison.md``.

- :mod:`.tuning`: coordinate-descent hyperparameter tuning with growing grids
- :mod:`.config`: the sweep config, its sizes and compute classes (``tiny`` .. ``large``)
- :mod:`.sweep`: tuning then final runs over sizes x data budgets x seeds, on Dask
- :mod:`.arms`: the control arms (hyperparameter transfer, a constant-LR schedule)
- :mod:`.budget`: the sweep's wall clock from measured step times
- :mod:`.analysis`: speedups per size, size slopes, rankings mid-run vs final
- :mod:`.controls`: the arms' analyses and the noise floor (minimum detectable speedup)
- :mod:`.findings`: every analysis as record rows (estimates), the claims file's values
- :mod:`.seedwise`, :mod:`.seed_t`, :mod:`.seed_t_arms`: the deciding statistics computed
  per seed, Student t over the seeds, their coverage simulated on the data's deviations
- :mod:`.plots`: the notebook's figures

Shared rooms used: ``training`` (optimizers, the pretraining loop), ``models`` (transformer,
corpus), ``fitting`` (the speedup over AdamW, :mod:`scalinglab.fitting.speedup`), ``stats``,
``cost_model``, ``compute``.
"""
