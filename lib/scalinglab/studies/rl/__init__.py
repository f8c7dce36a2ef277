"""RL post-training scaling: ScaleRL's sigmoid, Tan et al.'s k(N), GRPO's reward phases.

Reproduces ``docs/studies/rl_scaling.md``.

- :mod:`.tasks`: verifiable arithmetic prompts and their scoring
- :mod:`.grpo`: sampling and the GRPO update
- :mod:`.run`: one warm-up and one GRPO run, with FLOPs counted by :mod:`scalinglab.cost_model`
- :mod:`.sweep`: sizes x seeds x variants on Dask, cached under ``data/rl_scaling/``
- :mod:`.analysis`: sigmoid and k(N) fits, phases, ablation deltas (uses :mod:`scalinglab.fitting`,
  :mod:`scalinglab.stats`)

Shared rooms used: ``models`` (transformer, tokenizer), ``cost_model``, ``fitting``, ``stats``,
``compute``.
"""
