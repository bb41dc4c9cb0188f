"""Submissions that must score low, each with the most it may score (``MAX_PERCENT``)."""
