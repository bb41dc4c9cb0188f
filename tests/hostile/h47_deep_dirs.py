"""Hostile: an honest cudagraph.py in a folder that also holds 1,500 nested directories
(materialize.py makes them), to break a recursive copy (RecursionError) or clean-up.

Must get: zero, with a message saying the submission's folders are nested too deep; the
batch goes on."""
from _honest_core import *  # noqa: F401,F403
