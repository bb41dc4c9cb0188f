"""The decode-step lab's own Python: the fake engine handed to student code and its check.

- :mod:`.engine`: :class:`FakeDecodeEngine` (records every call in a :class:`CallLog` the
  grader holds, can be told to fail a capture, a run or a replay), its errors and
  :func:`engine_setup`, the value builder for a spec's ``build: FakeDecodeEngine`` step.
- :mod:`.checks`: the ``engine_calls`` check, as plain parse and judge functions.

Nothing here imports the grader (``tests/test_decode_step_pack.py`` checks it).
"""
