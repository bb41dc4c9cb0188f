"""The labs graphgrade grades: one folder per lab pack (see docs/labs.md); labs/DEFAULT names the default."""
