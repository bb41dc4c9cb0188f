"""Hostile: an honest cudagraph.py in a folder that also holds 100,000 empty directories
(materialize.py makes them), to stall the copy, chown and clean-up of the submission (379 s
outside every time limit, once).

Must get: zero, with a message saying the submission has too many entries, within seconds;
the batch goes on."""
from _honest_core import *  # noqa: F401,F403
