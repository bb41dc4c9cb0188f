"""The line a wrong value came from (issue 34, point 3): the worker follows the submission's own
frames while a step reads its state or calls its methods (grader.observe.origins), and the judge
names the likeliest line: the test that chose a plain return, the return that computed the
value, or the line that last set the attribute read."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from support.shipped import shipped_suite

from grader.judging.judge import judge_case
from grader.observe.interpreter import observe_in_process
from grader.observe.origins import line_facts
from reference.mutants._base import REFERENCE_SOURCE, apply_edits

LOADED = shipped_suite()
CASES = {case.uid: case for case in LOADED.suite.cases}


def _submission(tmp_path: Path, source: str):
    path = tmp_path / "cudagraph.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"origins_{abs(hash(str(tmp_path)))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _judged(tmp_path: Path, edits, uid: str):
    source = apply_edits(REFERENCE_SOURCE.read_text(encoding="utf-8"), edits, "test")
    module = _submission(tmp_path, source)
    case = CASES[uid]
    verdict = judge_case(case, LOADED.oracles[uid], observe_in_process(module, uid, case.steps))
    return source.splitlines(), verdict


def test_line_facts_know_assignments_tests_and_plain_returns(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "class A:\n"
        "    def f(self, k):\n"
        "        self.n, self.m = k, 0\n"
        "        if k > 1:\n"
        "            return self.n\n"
        "        while k:\n"
        "            k -= 1\n"
        "        return k + 1\n"
        "    def g(self, x, key):\n"
        "        self.buf[x.shape[0] :] = 0\n"
        "        self.graphs[key] = x\n",
        encoding="utf-8",
    )
    facts = line_facts(str(path))
    assert facts[3][0] == ("n", "m")
    assert facts[10][0] == ("buf",)  # not shape: a subscript only reads it
    assert facts[11][0] == ("graphs",)
    assert facts[4][1] and facts[6][1]  # if and while tests
    assert facts[5][2:] == (True, "n")  # return self.n: plain, hands back n
    assert facts[8][2:] == (False, "")  # return k + 1 computes its value


def test_a_wrong_enum_from_a_plain_return_names_the_test_that_chose_it(tmp_path):
    late = (
        "        if self._step_count == self.warmup_steps and",
        "        if self._step_count == self.warmup_steps + 1 and",
    )
    lines, verdict = _judged(tmp_path, (late,), "state-machine-basics/warmup-then-capture")
    assert verdict.status == "failed"
    test_line = next(i for i, text in enumerate(lines, 1) if "self.warmup_steps + 1 and" in text)
    assert verdict.origin == f"cudagraph.py:{test_line}"
    assert f"decided at cudagraph.py:{test_line} in step_mode" in verdict.message
    assert "then returned at cudagraph.py:" in verdict.message


def test_a_test_not_taken_that_guards_the_expected_value_is_named(tmp_path):
    # disabled, step_mode() should answer WARMUP: the test that guards WARMUP let it through
    disabled = (
        "if not self._enabled or self._step_count < self.warmup_steps:",
        "if self._step_count < self.warmup_steps:",
    )
    lines, verdict = _judged(tmp_path, (disabled,), "state-machine-basics/disabled-by-default")
    assert verdict.status == "failed", verdict.message
    line = next(i for i, text in enumerate(lines, 1) if text == "        if self._step_count < self.warmup_steps:")
    assert verdict.origin == f"cudagraph.py:{line}", verdict.message
    assert f"decided at cudagraph.py:{line} in step_mode" in verdict.message and "(not taken)" in verdict.message


def test_a_computed_return_names_the_return(tmp_path):
    ignores_batch = (
        "        return self._captured_shape == (batch_size, seq_step)",
        "        return self._captured_shape is not None and self._captured_shape[1] == seq_step",
    )
    lines, verdict = _judged(tmp_path, (ignores_batch,), "state-machine-basics/static-shape-check")
    assert verdict.status == "failed", verdict.message
    line = next(i for i, text in enumerate(lines, 1) if "self._captured_shape[1] == seq_step" in text)
    assert verdict.origin == f"cudagraph.py:{line}"
    assert f"returned at cudagraph.py:{line} in check_static_shape" in verdict.message


def test_a_plain_return_of_state_set_elsewhere_names_where_it_was_set(tmp_path):
    only_in_warmup = (
        "    def advance(self) -> None:\n        self._step_count += 1\n",
        "    def advance(self) -> None:\n        if self._step_count < self.warmup_steps:\n"
        "            self._step_count += 1\n",
    )
    lines, verdict = _judged(tmp_path, (only_in_warmup,), "state-machine-edge/advance-in-every-mode")
    assert verdict.status == "failed", verdict.message
    line = next(i for i, text in enumerate(lines, 1) if text == "            self._step_count += 1")
    assert verdict.origin == f"cudagraph.py:{line}"
    assert f"last set at cudagraph.py:{line} in advance" in verdict.message


def test_a_wrong_buffer_names_the_line_that_made_it_not_where_the_entry_is_built(tmp_path):
    float64 = ("        static_input = np.zeros(key, dtype=x.dtype)\n", "        static_input = np.zeros(key)\n")
    lines, verdict = _judged(tmp_path, (float64,), "static-buffer-basics/same-buffer-three-calls")
    assert verdict.status == "failed" and "float64" in verdict.message
    line = next(i for i, text in enumerate(lines, 1) if text == "        static_input = np.zeros(key)")
    assert (verdict.origin, verdict.origin_function) == (f"cudagraph.py:{line}", "_capture")
    assert f"last set at cudagraph.py:{line} in _capture" in verdict.message


def test_a_buffer_assigned_to_the_entry_later_names_that_assignment(tmp_path):
    rebind = ("        self._load(entry.static_input, x)\n", "        entry.static_input = x.copy()\n")
    lines, verdict = _judged(tmp_path, (rebind,), "static-buffer-basics/same-buffer-three-calls")
    assert verdict.status == "failed" and "new buffer" in verdict.message
    line = next(i for i, text in enumerate(lines, 1) if text == "        entry.static_input = x.copy()")
    assert verdict.origin == f"cudagraph.py:{line}"


def test_the_wrong_array_handed_to_the_first_op_names_where_it_came_from(tmp_path):
    # a parameter of run_eager: the line that called it with the caller's array
    callers = ("output = run_eager(self.ops, static_input)", "output = run_eager(self.ops, x)")
    lines, verdict = _judged(tmp_path, (callers,), "static-buffer-basics/first-op-sees-static-buffer")
    assert verdict.status == "failed" and "caller's array" in verdict.message
    line = next(i for i, text in enumerate(lines, 1) if text.strip() == "output = run_eager(self.ops, x)")
    assert verdict.origin == f"cudagraph.py:{line}"
    # a local bound two lines above the op call: that binding, not the call
    source = REFERENCE_SOURCE.read_text(encoding="utf-8")
    assert "    for op in ops:\n        x = op(x)\n" in source
    above = ("    for op in ops:\n        x = op(x)\n", "    y = x\n    for op in ops:\n        x = op(y)\n")
    (tmp_path / "second").mkdir()  # another file: the worker's caches are per file
    lines, verdict = _judged(tmp_path / "second", (callers, above), "static-buffer-basics/first-op-sees-static-buffer")
    line = next(i for i, text in enumerate(lines, 1) if text == "    y = x")
    assert verdict.origin == f"cudagraph.py:{line}", verdict.message


NO_MERGE = (
    "            if self.segments and self.segments[-1][0] == capturable:\n"
    "                self.segments[-1][1].append(op)\n"
    "            else:\n"
    "                self.segments.append((capturable, [op]))\n",
    "            self.segments.append((capturable, [op]))\n",
)


def test_a_value_computed_from_state_built_wrong_names_where_the_state_changed(tmp_path):
    # num_graphs is wrong and so are the object's launches: the segments, not the count, are wrong
    lines, verdict = _judged(tmp_path, (NO_MERGE,), "piecewise-basics/longer-segments")
    assert verdict.status == "failed" and "num_graphs" in verdict.message, verdict.message
    line = next(i for i, text in enumerate(lines, 1) if text == "            self.segments.append((capturable, [op]))")
    assert verdict.origin == f"cudagraph.py:{line}", verdict.message
    assert f"last set at cudagraph.py:{line} in __init__" in verdict.message


def test_a_wrong_count_over_right_state_names_the_return(tmp_path):
    # the object's calls are right: the return that counts is what is wrong
    every = ("return sum(capturable for capturable, _ in self.segments)", "return len(self.segments)")
    lines, verdict = _judged(tmp_path, (every,), "piecewise-basics/longer-segments")
    assert verdict.status == "failed" and "num_graphs" in verdict.message, verdict.message
    line = next(i for i, text in enumerate(lines, 1) if text.strip() == "return len(self.segments)")
    assert verdict.origin == f"cudagraph.py:{line}", verdict.message


@pytest.mark.slow
def test_first_causes_name_the_bugs_own_line_more_often_than_before():
    """benchmarks/first_cause.py on every mutant: 3 of 49 before the tracer, 15 with it, 22 once
    it follows a captured graph's fields, the first op's argument, state built wrong and the
    test not taken that guards the expected value, 24 once a failed case's re-run traces every call,
    27 once that re-run follows a returned value to the line that made it or handed it on, 28
    once a call that cannot bind its arguments names its def, 29 once too few launches name an op
    run where none was counted, 30 once a replay that captured instead names where a helper made
    the value its path was chosen by (or the key of a lookup that missed)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import tempfile

    from first_cause import measure

    with tempfile.TemporaryDirectory() as work:
        rows = measure(Path(work))
    hits = sum(hit for *_, hit in rows)
    assert hits >= 30, [name for name, _, hit in rows if not hit]


def _traced_module(tmp_path, source: str):
    """``source`` as a submission's module under ``tmp_path``, and a tracer for its files."""
    import importlib.util

    from grader.observe.locations import Locator
    from grader.observe.origins import OriginTracer

    path = tmp_path / "sub.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("_traced_sub", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, OriginTracer(Locator(str(tmp_path)))


def test_the_tracer_never_keeps_a_finished_frames_values_alive(tmp_path):
    """A helper's locals are freed when it returns, as without the tracer: the tracer follows
    names, it never holds the frames that bound them."""
    module, tracer = _traced_module(
        tmp_path,
        "import weakref\n"
        "class Big:\n    pass\n"
        "def helper(refs):\n    big = Big()\n    refs.append(weakref.ref(big))\n    return 1\n"
        "def call(refs):\n    total = 0\n    for _ in range(3):\n        total += helper(refs)\n"
        "    return [r() is None for r in refs]\n",
    )
    assert tracer.run(module.call, [], fields=True) == [True, True, True]


def test_the_tracer_never_compares_a_name_the_submission_made(tmp_path):
    """A record class whose __name__ is a str subclass: its __eq__ is never run by the tracer."""
    module, tracer = _traced_module(
        tmp_path,
        "calls = []\n"
        "class S(str):\n    def __eq__(self, other):\n        calls.append(other)\n        return str.__eq__(self, other)\n"
        "    __hash__ = str.__hash__\n"
        "import dataclasses\n"
        "@dataclasses.dataclass\nclass GraphEntry:\n    shape: object\n    static_input: object\n"
        "GraphEntry.__name__ = S('GraphEntry')\n"
        "def call():\n    x = 1\n    return GraphEntry(shape=x, static_input=x)\n",
    )
    tracer.run(module.call, fields=True)
    assert module.calls == []


def test_a_call_that_cannot_bind_its_arguments_names_the_def(tmp_path):
    """LaunchCounter.bump() where ``bump(cls, k)`` has no default: the TypeError is raised before
    any line of the submission runs (no frame of it in the traceback); the ``def`` it could not be
    bound to is named, not its decorator's line, through the grader's wrapper of the counter."""
    import importlib

    edits = importlib.import_module("reference.mutants.counter_bump_no_default").EDITS
    lines, verdict = _judged(tmp_path, edits, "launch-counter-basics/bump-default-is-one")
    line = next(i for i, text in enumerate(lines, 1) if text.strip().startswith("def bump(cls, k"))
    assert lines[line - 2].strip() == "@classmethod"
    assert verdict.status == "failed" and "TypeError" in verdict.message, verdict.message
    assert verdict.origin == f"cudagraph.py:{line}", verdict.message


def test_a_call_that_cost_fewer_launches_names_an_op_run_where_none_was_counted(tmp_path):
    """A piecewise call that runs its eager segment's ops directly (not through run_eager) costs
    one launch less per op: the op call from a function that counted no launch is named, not the
    run_eager bump that did count."""
    import importlib

    edits = importlib.import_module("reference.mutants.piecewise_eager_ops_free").EDITS
    lines, verdict = _judged(tmp_path, edits, "piecewise-basics/attention-in-the-middle")
    line = 1 + next(i for i, text in enumerate(lines, 1) if "for op in seg_ops:  # called directly" in text)
    assert lines[line - 1].strip() == "x = op(x)"
    launches = next(c for c in verdict.checks if not c.passed and c.cause == "launches")
    assert launches.line == line, verdict.message
    assert "from a function that counted no launch" in verdict.message


def test_a_fused_op_s_parts_are_never_blamed_for_launches_they_share(tmp_path):
    """Fusing a matmul with its neighbours costs fewer launches, but the parts a fused op runs are
    inside an op run_eager counted: they are not named as ops run where no launch was counted."""
    import importlib

    edits = importlib.import_module("reference.mutants.fuse_non_elementwise").EDITS
    lines, verdict = _judged(tmp_path, edits, "fusion-basics/matmul-splits-runs")
    launches = next(c for c in verdict.checks if not c.passed and c.cause == "launches")
    assert launches.function == "run_eager", verdict.message
    assert "counted no launch" not in verdict.message


_COMPARED = (
    "class Runner:\n"
    "    def __init__(self):\n"
    "        self.graphs = {(4,): 'entry'}\n"
    "        self.seen = {}\n"
    "    def key(self, x):\n"
    "        return (len(x),)  # the key helper\n"
    "    def size(self, n):\n"
    "        for s in (2, 4):\n"
    "            if s > n:  # the size's test\n"
    "                return s\n"
    "        return None\n"
    "    def load(self, x):\n"
    "        if len(x) > 0:  # load's own test\n"
    "            raise ValueError('does not fit')\n"
    "    def by_key(self, x):\n"
    "        key = self.key(x)\n"
    "        entry = self.graphs.get(key)\n"
    "        if entry is not None:  # the lookup's test\n"
    "            self.load(x)\n"
    "    def by_size(self, x):\n"
    "        n = self.size(len(x))\n"
    "        if n is not None:  # the size's use\n"
    "            self.load(x)\n"
    "    def by_count(self, x):\n"
    "        done = self.seen.get(len(x), 0)\n"
    "        if done < 1:  # the count's test\n"
    "            self.load(x)\n"
    "    def warm(self, key):\n"
    "        if self.seen.get(key, 0) < 0:  # the warm-up's test\n"
    "            return True\n"
    "        return False\n"
    "    def by_lookup(self, x):\n"
    "        key = self.key(x)\n"
    "        entry = self.graphs.get(key)\n"
    "        if entry is not None:  # the lookup\n"
    "            return entry\n"
    "        if self.warm(key):  # asks the warm-up\n"
    "            return None\n"
    "        self.load(x)\n"
)


def _line_of(source: str, marker: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if marker in text)


def test_a_decision_on_a_helper_s_value_notes_where_the_helper_made_it(tmp_path):
    """A re-run's call that raised before any op: the test that chose its path is its callers'
    (never the raising function's own), and when that test reads a local holding what a function
    of the submission returned (directly, or through a line that computed from it), where that
    value was made: the helper's ``return``, or the taken test of a plain ``return`` in its
    branch. A value no function of the submission returned (a dict's ``get``) notes none."""
    module, tracer = _traced_module(tmp_path, _COMPARED)
    runner = module.Runner()
    expected = {
        "by_key": ("the lookup's test", "the key helper"),
        "by_size": ("the size's use", "the size's test"),
        "by_count": ("the count's test", None),
    }
    for method, (decided, compared) in expected.items():
        with pytest.raises(ValueError):
            tracer.run(getattr(runner, method), [1, 2, 3, 4][: 4 if method == "by_key" else 3], decisions=True)
        assert tracer.decided is not None and tracer.decided[1] == _line_of(_COMPARED, decided), method
        got = tracer.compared[1] if tracer.compared is not None else None
        assert got == (_line_of(_COMPARED, compared) if compared else None), method
        kinds = [f[0] for f in tracer.origin(None) if f[0] in ("decided", "compared")]
        assert kinds == ["decided"] + (["compared"] if compared else []), kinds
    # a miss: the path was chosen last by the warm-up's test (it compared no helper's value), past
    # a lookup by the key helper's value that was not taken: where that value was made is kept
    with pytest.raises(ValueError):
        tracer.run(runner.by_lookup, [1, 2, 3], decisions=True)
    assert tracer.decided[1] == _line_of(_COMPARED, "the warm-up's test") and tracer.compared is None
    assert tracer.looked_up is not None and tracer.looked_up[1] == _line_of(_COMPARED, "the key helper")
    assert [f[0] for f in tracer.origin(None) if f[0] != "produced"] == ["decided", "looked-up"]
    # untraced decisions (a first run's call): nothing noted at the raise
    with pytest.raises(ValueError):
        tracer.run(runner.by_key, [1, 2, 3, 4], fields=True)
    assert tracer.decided is None and tracer.compared is None
