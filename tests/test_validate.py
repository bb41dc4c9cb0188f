"""grader.commands.validate's warning for cases that catch no known mistake (``graphgrade validate``)."""

from __future__ import annotations

from grader.commands.validate import cases_no_mutant_kills

SPEC = """\
format: 1
specs:
  - id: few
    title: Few
    tag: eager
    points: 1
    visibility: visible
    explanation: E.
    hint: H.
    cases:
      - id: nothing-happens
        description: A runner just built has captured nothing.
        steps:
          - build: GraphRunner
            as: runner
            args: [{ops: [relu]}]
        checks:
          - num_captured: {of: runner, equals: 0}
      - id: three-ops
        description: An eager run of three ops costs three launches.
        steps:
          - call: run_eager
            as: out
            args: [{ops: [relu, tanh, {add: 1.0}]}, {array: {shape: [2, 3], seed: 1}}]
        checks:
          - launches: {step: out, equals: 3}
"""


def test_a_case_no_mutant_fails_is_named_with_file_and_line(tmp_path):
    (tmp_path / "few.yaml").write_text(SPEC, encoding="utf-8")
    warnings = cases_no_mutant_kills(tmp_path)
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{tmp_path / 'few.yaml'}:11: few/nothing-happens: no named mutant fails this case")


def test_the_reference_copy_is_private(tmp_path):
    import reference.cudagraph as reference

    (tmp_path / "few.yaml").write_text(SPEC, encoding="utf-8")
    before = reference.LaunchCounter.n
    cases_no_mutant_kills(tmp_path)
    assert reference.LaunchCounter.n == before, "validating must not run cases on the shared reference module"


def test_a_mutant_whose_edit_is_gone_is_one_line_and_the_rest_still_count(tmp_path, monkeypatch):
    import grader.commands.audit as audit

    (tmp_path / "few.yaml").write_text(SPEC, encoding="utf-8")
    stale = tmp_path / "stale_edit.py"
    stale.write_text(
        '"""A made-up mistake."""\n\nfrom reference.mutants._base import run_edited_reference\n\nTAG = "eager"\n\n'
        'EDITS = (("def no_such_helper(self):", "def f(self):"),)\n\nrun_edited_reference(globals(), EDITS)\n',
        encoding="utf-8",
    )
    real = audit.discover_mutants()
    monkeypatch.setattr(
        audit, "discover_mutants", lambda: [audit.Subject("stale_edit", stale, "A made-up mistake."), *real]
    )
    warnings = cases_no_mutant_kills(tmp_path)
    assert warnings[0].startswith(f"{stale}: this mutant could not be loaded (MutantEditError: ")
    assert "\n" not in warnings[0]
    assert [w.split(": ")[1] for w in warnings[1:]] == ["few/nothing-happens"]
