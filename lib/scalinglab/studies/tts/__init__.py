"""Test-time scaling study: repeated sampling, coverage laws, and what inference costs.

Modules: :mod:`~scalinglab.studies.tts.policies` (trained policies saved with
provenance), :mod:`~scalinglab.studies.tts.sampling` (the sample dataset),
:mod:`~scalinglab.studies.tts.cost` (FLOPs and Kinetics eFLOPs per (size, k)) and
:mod:`~scalinglab.studies.tts.analysis` (the notebook's steps). The estimator, the
majority vote and the prompt bootstrap are shared (:mod:`scalinglab.stats.passk`,
:mod:`scalinglab.stats.samples`, used by ``scalinglab coverage`` too), as is the law
(:mod:`scalinglab.fitting.coverage_law`, ``exp_power``). The facts are in
``docs/studies/test_time_scaling.md``.
"""
