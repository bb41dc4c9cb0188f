"""The suite: YAML spec files -> the typed, frozen model of :mod:`grader.spec_model`.

(Named suite, not spec: tools that follow the common "spec/ holds tests" convention would skip
a folder named spec/ as tests.)

``loader`` reads a file in two passes: *parse* each step by its kind (``steps``) and each
check by its kind (one class per kind in ``checks/``) into a ``case_draft``, then *link*
step names to indices. ``spec_reading`` reads YAML nodes into typed values with ``file:line``
errors, ``yaml_errors`` words YAML syntax errors, ``schema`` builds ``specs/schema.json``
from the same registries (``schema_parts``), and ``describing`` is the wording every check
kind judges with (a check kind owns its parsing, its schema and its judging).

May import: the shared modules at grader/'s top level (``spec_model``, ``ops``,
``observations``, ...). Never a later stage (observe, run, judging, commands): a spec is read
before anything runs, and the worker side never needs this package.
"""
