"""Errors that cross module boundaries, in a module of their own so that there is
one class of each, also under ``python -m grader.commands.cli`` (where cli.py is ``__main__``)."""


class UsageError(Exception):
    """A problem with what the user asked for; the CLI prints it as one line and exits 2."""
