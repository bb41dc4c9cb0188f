"""A failed case's traced re-run (grader.run.relocating) names where a value a right test compared
was stored (issue 34, point 3), on a small state machine written as a student might, not the
suite's mutants:

* a test (one not taken that guards the value due, else the last taken) that compared an
  attribute stored, in the constructor, from one of its parameters and still holding the
  argument as given, where the lab says what the contract makes of it (lab.yaml: ``at_least``,
  ``warmup_steps`` below 1 raised to 1), names the line that stored it (``stored:N``), whatever
  the attribute is called; an attribute equal to the argument by chance (a count that starts at
  0) is not stored from a parameter and is not named;
* a test that compared the value due (the argument raised as the contract says) is named itself:
  the test is the bug there; a first run, which notes no stored values, names the test too;
* the attributes are read from the object's own dict, through its class's slot: a ``__dict__``
  the submission defines is never called.
"""

from __future__ import annotations

from support.traced_judging import judged, line_of

from grader.observe.stored_values import instance_dict

ZERO = "state-machine-basics/zero-warmup-means-one"  # built with warmup_steps=0
NEGATIVE = "state-machine-basics/negative-warmup-means-one"  # built with warmup_steps=-1

MACHINE = """
import enum


class StepMode(enum.Enum):
    WARMUP = "w"
    CAPTURE = "c"
    REPLAY = "r"


class InferenceGraphCapture:
    def __init__(self, warmup_steps, enabled=False):
        self.done = 0
        self.warm = warmup_steps
        self.on = enabled
        self.graph_id = None
        self.capture_attempted = False

    @property
    def step_count(self):
        return self.done

    def step_mode(self):
        if not self.on or self.done < self.warm:
            return StepMode.WARMUP
        if self.done == self.warm and not self.capture_attempted:
            return StepMode.CAPTURE
        return StepMode.REPLAY

    def advance(self):
        self.done += 1
"""


def test_a_test_comparing_an_argument_kept_as_given_names_the_line_that_stored_it(tmp_path):
    # warmup_steps=0 kept as 0: step 0 captures; the test is right, the value it compared is not
    verdict, lines = judged(tmp_path, MACHINE, ZERO)
    stored, test = line_of(lines, "self.warm = warmup_steps"), line_of(lines, "if not self.on or")
    assert verdict.status == "failed" and "should be StepMode.WARMUP, was StepMode.CAPTURE" in verdict.message
    assert verdict.origin == f"cudagraph.py:{stored}", verdict.message
    assert "(it holds the argument 0 as given; the contract makes it 1)" in verdict.message
    assert f"then decided at cudagraph.py:{test} in step_mode" in verdict.message
    # self.done is 0 too, as the argument, but was not stored from it: never named
    assert f"cudagraph.py:{line_of(lines, 'self.done = 0')}" not in verdict.message
    first, _ = judged(tmp_path / "first", MACHINE, ZERO, trace=False)
    assert first.origin == f"cudagraph.py:{test}", first.message  # a first run notes no stored values
    assert first.message.split("\n")[0] == verdict.message.split("\n")[0]  # the verdict is the first run's


def test_a_clamp_of_zero_alone_names_its_line_for_a_negative_argument(tmp_path):
    source = MACHINE.replace("self.warm = warmup_steps", "self.warm = 1 if warmup_steps == 0 else warmup_steps")
    verdict, lines = judged(tmp_path, source, NEGATIVE)
    assert "should be StepMode.WARMUP, was StepMode.REPLAY" in verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'self.warm = 1 if')}", verdict.message
    assert "(it holds the argument -1 as given; the contract makes it 1)" in verdict.message
    passed, _ = judged(tmp_path / "zero", source, ZERO)
    assert passed.status == "passed", passed.message


def test_a_taken_test_that_compared_an_argument_kept_as_given_names_the_line_that_stored_it(tmp_path):
    # nested tests: the one named is the last taken (no earlier test guards a plain return)
    nested = (
        "        if self.on and self.done >= self.warm:\n"
        "            if self.done == self.warm and not self.capture_attempted:\n"
        "                return StepMode.CAPTURE\n"
        "            return StepMode.REPLAY\n"
        "        return StepMode.WARMUP\n"
    )
    start = MACHINE.index("        if not self.on or")
    source = MACHINE[:start] + nested + MACHINE[MACHINE.index("    def advance") - 1 :]
    verdict, lines = judged(tmp_path, source, ZERO)
    assert "should be StepMode.WARMUP, was StepMode.CAPTURE" in verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'self.warm = warmup_steps')}", verdict.message
    assert f"then decided at cudagraph.py:{line_of(lines, 'if self.done == self.warm')}" in verdict.message


def test_a_wrong_test_of_the_value_due_names_the_test(tmp_path):
    # the argument is raised as the contract says; the test waits one step too long
    source = MACHINE.replace("self.warm = warmup_steps", "self.warm = max(1, warmup_steps)").replace(
        "self.done < self.warm:", "self.done <= self.warm:"
    )
    verdict, lines = judged(tmp_path, source, ZERO)
    assert "should be StepMode.CAPTURE, was StepMode.WARMUP" in verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'self.done <= self.warm:')}", verdict.message
    assert "as given" not in verdict.message


def test_an_object_s_attributes_are_read_without_calling_its_code():
    calls = []

    class Sneaky:
        @property
        def __dict__(self):  # a class's own __dict__: never called by the tracer
            calls.append(1)
            return {"warm": 0}

    class Plain:
        pass

    kept = Plain()
    kept.warm = -1
    assert instance_dict(kept) == {"warm": -1}
    assert instance_dict(Sneaky()) is None and calls == []
