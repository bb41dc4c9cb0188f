"""Realistic student mistakes, one module each, used by `graphgrade audit`."""
