"""Interval estimates (Agarwal et al. 2021, rliable): the study's own benchmark.

Reproduces ``docs/studies/interval_estimates.md``. :mod:`.classifiers` trains small
networks with several optimizers on several tasks and seeds (the benchmark whose scores
the study analyses). The analysis itself is the shared :mod:`scalinglab.stats` room
(IQM, stratified bootstrap, profiles, P(X > Y), few-run variability).
"""
