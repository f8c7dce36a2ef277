"""Scaling-law fitting with honest uncertainty: laws, objectives, multi-start fits, bootstrap."""
