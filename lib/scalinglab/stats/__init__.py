"""Interval estimates for aggregate performance (rliable's definitions, reproducible and fast).

Modules (import them directly; this package imports nothing eagerly):

- :mod:`~scalinglab.stats.metrics`: ``iqm``, ``median``, ``mean``, ``optimality_gap``,
  ``AGGREGATES`` on arrays ``(..., runs, tasks)`` with NaN = absent run.
- :mod:`~scalinglab.stats.bootstrap`: the one bootstrap engine (stratified index
  draws, batching, percentile and BCa intervals, name-keyed random streams).
- :mod:`~scalinglab.stats.intervals`: ``interval_estimates`` (CIs of the metrics).
- :mod:`~scalinglab.stats.fused`, :mod:`~scalinglab.stats.draws`: the compiled bootstrap
  pass of the four metrics and its run-index draws (numpy's stream, bit for bit).
- :mod:`~scalinglab.stats.replicates`: the replicates behind the intervals as ArviZ
  data; HDI beside the percentile interval.
- :mod:`~scalinglab.stats.profiles`: ``performance_profile`` (score distributions).
- :mod:`~scalinglab.stats.improvement`: ``probability_of_improvement``,
  ``pairwise_probability_of_improvement``.
- :mod:`~scalinglab.stats.normalize`: ``normalize`` with per-task reference scores.
- :mod:`~scalinglab.stats.variability`: few-run variability and CI width vs runs.
- :mod:`~scalinglab.stats.layout`: validation of labelled ``(algorithm, run, task)`` arrays.
"""
