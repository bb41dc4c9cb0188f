"""Baselines for `graphgrade audit`: submissions that must score low.

Each module's docstring says what it is, and ``MAX_PERCENT`` is the most it may
score on the full suite before the audit flags the suite as too lenient.
"""
