"""Test-time scaling study: repeated sampling, coverage laws, and what inference costs.

Modules: :mod:`~scalinglab.studies.tts.coverage` (pass@k, majority vote, bootstrap
over problems), :mod:`~scalinglab.studies.tts.law` (the exponentiated power law,
registered as ``exp_power``), :mod:`~scalinglab.studies.tts.policies` (trained
policies saved with provenance), :mod:`~scalinglab.studies.tts.sampling` (the sample
dataset), :mod:`~scalinglab.studies.tts.cost` (FLOPs and Kinetics eFLOPs per (size, k))
and :mod:`~scalinglab.studies.tts.table` (a user's own samples). The facts are in
``docs/studies/test_time_scaling.md``.
"""
