"""graphgrade's grader: load specs, run submissions in isolation, judge, score.

Data flows one way: spec (``loader``) -> case -> isolated run (``runner`` and
``worker/``) -> observations (``interpreter``, ``protocol``) -> verdicts
(``judge``) -> scores and report (``scoring``, ``results``). What crosses a process
boundary as bytes is defined in ``codec``; untrusted JSON is read with ``validation``.
"""

__version__ = "0.1.0"
