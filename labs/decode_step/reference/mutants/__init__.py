"""Realistic student mistakes in the decode-step lab, one module each (see ``_base.py``)."""
