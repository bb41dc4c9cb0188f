"""graphgrade's grader: load specs, run submissions in isolation, judge, score.

Data flows one way, and each stage is a folder: ``suite/`` (spec files -> the typed model)
-> case -> ``run/`` (isolated, sandboxed workers: ``run/worker/``) -> ``observe/`` (the
interpreter, inside the worker) -> observations -> ``judging/`` (verdicts, scores, the
typed report) -> ``reports/`` (the renderers, a package of its own). ``commands/`` holds
the entry points (``graphgrade``, also ``python -m grader``, and each subcommand).

The modules at this level are what every stage shares, and import only each other:
``spec_model`` (the typed, frozen model of a spec: spec -> case -> steps + checks);
``ops`` (the closed vocabulary of ops a spec may use: the grader's own callables);
``framing`` (the bytes on the pipes between grader and worker: frames, case messages,
control frames, the observation frame's layout; versioned);
``observations`` (a case's observations: encoded in the worker, validated and decoded
into typed values in the grader);
``validation`` (the validation toolkit shared by the loader, the observation decoder and report.json);
``safetext`` (text a submission controls, made safe once where it enters the grader);
``errors`` (the error classes that cross module boundaries).
tests/test_architecture.py checks which stage may import which.
"""

__version__ = "0.1.0"
