"""graphgrade's grader: load specs, run submissions in isolation, judge, score.

Data flows one way: spec (``loader``) -> case -> isolated run (``runner`` and
``worker/``) -> observations (``interpreter``, ``protocol``) -> verdicts
(``judge``) -> scores and report (``scoring``, ``results``).
"""

__version__ = "0.1.0"
