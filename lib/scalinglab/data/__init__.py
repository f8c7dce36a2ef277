"""Reading and validating user files (CSV, Parquet, JSON, netCDF) into tables and xarray.

Errors name the file, column and row (:class:`scalinglab.errors.InputError`).
"""
