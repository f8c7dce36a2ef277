"""Interval estimates for aggregate performance (rliable's definitions, reproducible and fast).

Modules (import them directly; this package imports nothing eagerly):

- :mod:`~scalinglab.stats.metrics`: ``iqm``, ``median``, ``mean``, ``optimality_gap``,
  ``AGGREGATES`` on arrays ``(..., runs, tasks)`` with NaN = absent run.
- :mod:`~scalinglab.stats.bootstrap`: the one bootstrap engine (stratified index
  draws, batching, percentile and BCa intervals, name-keyed random streams).
- :mod:`~scalinglab.stats.intervals`: ``interval_estimates`` (CIs of the metrics), over
  :mod:`~scalinglab.stats.table_intervals`, the same on plain ``(run, task)`` tables
  (numpy only, algorithms on threads).
- :mod:`~scalinglab.stats.fused`, :mod:`~scalinglab.stats.draws`,
  :mod:`~scalinglab.stats.pairwise`: the compiled bootstrap pass of the four metrics, its
  run-index draws (numpy's PCG64 stream, bit for bit) and numpy's summation order.
- :mod:`~scalinglab.stats.replicates`: the replicates behind the intervals as ArviZ
  data; HDI beside the percentile interval.
- :mod:`~scalinglab.stats.profiles`: ``performance_profile`` (score distributions).
- :mod:`~scalinglab.stats.improvement`: ``probability_of_improvement``,
  ``pairwise_probability_of_improvement``.
- :mod:`~scalinglab.stats.normalize`: ``normalize`` with per-task reference scores.
- :mod:`~scalinglab.stats.variability`: few-run variability and CI width vs runs.
- :mod:`~scalinglab.stats.layout`: validation of labelled ``(algorithm, run, task)`` arrays.
"""
