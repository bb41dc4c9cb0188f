"""The entry points: ``graphgrade`` (also ``python -m grader``) and its subcommands, on top of the stages.

``cli`` is the command line (each subcommand a ``cmd_<name>``/``add_<name>_parser`` pair;
``cli_common`` what they share, ``spec_source`` which specs they read; ``audit_command`` the
audit's command line). ``grade`` grades a batch (``progress`` its terminal lines,
``shard`` grading on many machines and merging, ``similarity`` pairs for staff);
``validate`` checks specs against the reference; ``audit`` and ``deep_audit`` (mutants from
``mutation``) measure the suite; ``bundles`` and ``kit`` build the Gradescope zip and the
student kit; ``prairielearn`` and ``lms_export`` connect to PrairieLearn and to an LMS.

May import: every stage and ``reports``. Nothing outside this package imports it (the audit's
result types live in grader/judging/audit_results.py, below the renderers).
"""
