"""One room per study: each subpackage holds one study's experiment engine and analysis.

A study room may import the shared rooms (``stats``, ``fitting``, ``cost_model``,
``kernels``, ``models``, ``training``, ``data``, ``compute``, ``record``) but never the
runner, the CLI or another study's room; the shared rooms never import a study
(``tests/test_architecture.py`` checks these rules, ``docs/architecture.md`` draws them).

- :mod:`scalinglab.studies.intervals`: rliable-style interval estimates (Agarwal et al. 2021)
- :mod:`scalinglab.studies.rl`: RL post-training scaling (ScaleRL, Tan et al., Nimmaturi et al.)
- :mod:`scalinglab.studies.optimizers`: pretraining optimizer comparison (Wen et al. 2025)
- :mod:`scalinglab.studies.sparsity`: activation-sparsity laws (Luo et al. 2024)
- :mod:`scalinglab.studies.gemm`: GEMM kernels and cost models (Liu & Halim 2024)
"""
