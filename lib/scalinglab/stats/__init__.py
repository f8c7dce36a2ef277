"""Interval estimates for aggregate performance (rliable's definitions, reproducible and fast)."""
