"""GEMM kernels and cost models (Liu & Halim 2024, GPPerf).

Reproduces ``docs/studies/kernels_cost_models.md``.

- :mod:`.sweep`: times the tiled and naive kernels over shapes x tiles (the study's data)
- :mod:`.analysis`: tile effects and speed ratios with bootstrap intervals
- :mod:`.estimates`: the study's findings as estimates (method, level, resamples stated once)
- :mod:`.predictor`: roofline, the calibrated kernel-work model and learned runtime predictors
- :mod:`.machine`: the committed hardware record and sweep config the study reuses on any
  CPU, and the spread of timings across separate processes (re-run intervals)
- :mod:`.gpperf`: the paper's own published tables (runtime, power): tile effect, power saving
- :mod:`.gpperf_predictor`: the paper's random-split protocol against unseen shapes on them
- :mod:`.plots`: the study's figures (tile heatmap and effects, roofline, predictor accuracy,
  GPPerf's tiles and predictions)

Shared rooms used: ``kernels`` (the GEMM kernels, timing harness, hardware measurement),
``cost_model`` (FLOPs, bytes, roofline, the hardware record), ``stats``, ``compute``.
"""
