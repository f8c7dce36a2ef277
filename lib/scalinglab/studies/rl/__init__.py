"""RL post-training scaling: ScaleRL's sigmoid, Tan et al.'s k(N), GRPO's reward phases.

Reproduces ``docs/studies/rl_scaling.md``.

- :mod:`.tasks`: verifiable arithmetic prompts and their scoring
- :mod:`.grpo`: sampling and the GRPO update
- :mod:`.run`: one warm-up and one GRPO run, with FLOPs counted by :mod:`scalinglab.cost_model`
- :mod:`.stopping`: the plateau rule that ends a run once its pass rate stops rising
- :mod:`.sweep`: sizes x seeds x variants on Dask, cached under ``data/rl_scaling/``
- :mod:`.lr_stage`: the per-size GRPO learning-rate stage and its selection rule
- :mod:`.budget`: measured cost per size, extrapolated to a whole sweep
- :mod:`.sweep_tracker`: a long sweep's progress bar and ETA, weighted by each run's estimated cost
- :mod:`.analysis`: sigmoid and k(N) fits, phases, ablation deltas (uses :mod:`scalinglab.fitting`,
  :mod:`scalinglab.stats`)
- :mod:`.predict`: the papers' predictions with intervals over seeds (half compute -> A and the
  final pass rate, early plateau, data reuse at equal compute, run-to-run spread of A)
- :mod:`.halfruns`: ScaleRL's half-compute test run by run, its error against the C_mid multiple
- :mod:`.tanlaw`: Tan et al.'s line run by run, held out against the sigmoid
- :mod:`.spread`: base-model (warm start) against RL-seed spread, a nested ANOVA within sizes
- :mod:`.report_data`: the Dataset a report reads (a long design's stored one only, never hours of training)
- :mod:`.cost_table`: the medium sweep's cost per size and the runs it has finished, as the report shows them
- :mod:`.sound_findings`: Student t findings over runs and seeds (ablations, Tan's k, coverage)
- :mod:`.findings`: each analysis result as named :class:`~scalinglab.estimate.Estimate` findings
  (the notebook records them with one call) and the values ``notebooks/claims/rl_scaling.toml`` names
- :mod:`.plots`: the study's figures

Shared rooms used: ``models`` (transformer, tokenizer), ``cost_model``, ``fitting``, ``stats``,
``compute``.
"""
