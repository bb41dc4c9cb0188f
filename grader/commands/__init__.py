"""The entry points: ``graphgrade`` (also ``python -m grader``) and its subcommands, on top of the stages.

``cli`` is the command line: one table of subcommands, each a module's ``COMMAND`` (a
``cli_common.Subcommand``: its ``add_arguments(parser)`` and its ``run(args)`` returning the exit
code); ``cli_common`` what they share, ``spec_source`` which specs they read; ``grade_command``,
``validate_command``, ``schema_command``, ``bench`` and ``audit_command`` the command lines whose
engine is a module of its own. ``grade`` grades a batch (``progress`` its terminal lines,
``shard`` grading on many machines and merging, ``similarity`` pairs for staff);
``validate`` checks specs against the reference; ``audit`` and ``deep_audit`` (mutants from
``mutation``) measure the suite; ``bundles`` and ``kit`` build the Gradescope zip and the
student kit; ``prairielearn`` and ``lms_export`` connect to PrairieLearn and to an LMS.

May import: every stage and ``reports``. Nothing outside this package imports it (the audit's
result types live in grader/judging/audit_results.py, below the renderers).
"""
