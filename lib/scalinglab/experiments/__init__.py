"""Experiment engines: each study's own runs, made here, returned as xarray Datasets."""
