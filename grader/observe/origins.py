"""Where a value the grader reads came from in the submission's code: the worker's half of
"the line that produced it" (issue 34, point 3).

While a step runs, :class:`OriginTracer` follows the submission's own frames and nothing else
(every other frame, the grader's ops and numpy included, is given no trace function, so it runs
without line events). It notes, for the step:

* ``returned``: the line of the ``return`` that ended the first of the submission's functions
  the step called (a method, a property's getter, ``__call__``), with whether that statement
  only hands back a constant or a name (``return Mode.IDLE``, ``return self.n``), when the
  choice was made by a test above it;
* ``tested``: the last ``if``/``elif``/``while`` test that function ran before it returned;
* ``state``: for a ``return`` that computes its value from the object's own state
  (``return sum(1 for s in self.segments if s.capturable)``), the last line that changed the
  first attribute it reads (``self.segments.append(...)``): the judge names it instead of the
  return when the object's other results are wrong too;
* ``passed`` and ``guards``: with a plain return, each earlier test of that function that guards a
  plain return of its own and was not taken (``if not self.enabled or ...:`` above ``return
  Mode.IDLE``), and that return: the judge names the test when its return is the value
  that was expected;
* ``assigned``: for a step that reads an attribute, or calls a function that only returns one
  (``return self._count``), the last line of the case so far that assigned an attribute of that
  name (``self.graph_id = ...``, ``cls.n += k``).

While a runner is called (a ``call`` step) it notes one more thing, the value-flow of the
record a capture stores (the fields of the lab's snapshot entry it follows, ``lab.yaml: snapshot``,
given by the interpreter: every field but an ``int``):

* ``field:<name>``: the line a field of the record got its value from during the step. When the
  submission builds the record (``Entry(key, static, out, n)``), that is the line that last
  assigned the local name handed to the field (``static = np.zeros(key)``: the float64 buffer is
  made there, not where the entry is built), else the constructor's own line; when it assigns the
  field later (``entry.static_input = np.zeros(...)``), that line.

* ``argument``: where the array the step's first op call was handed came from: the line that
  last bound the name handed to the op (``out = padded`` two lines above ``out = op(out)``), or,
  when that name is the calling function's own parameter (``run_all(ops, x)``), the line that
  called it with it (``run_all(self.ops, x)`` where the static buffer was meant).

In a failed case's re-run (:mod:`grader.run.relocating`), where every runner's call is traced,
one more:

* ``decided``: the test that chose the path the call took (warm up, capture, replay): of the
  ``if``/``elif``/``while`` tests the submission ran before the step's first op call, the last
  one either of a function still running then (``if done < self.warmup_steps:`` in
  ``__call__``) or of a predicate that had returned a bool (``_warming_up(key)``); a test of a
  helper that returned anything else (``_load``'s shape test) chose no path.
* ``compared``: when the test that chose the path (``decided``) reads a local name that holds
  what a function of the submission returned (``key = self._graph_key(x)``), directly or through
  a line that computed it from such a name (``entry = self.graphs.get(key)`` above ``if entry is
  not None:``): where that function's value was made (its ``return`` line, as ``produced``
  follows it). A step that raises before any op call notes its ``decided`` (and ``compared``) at
  the raise, from the functions that called the one that raised (that function's own tests chose
  how it failed, not the path); the judge names a raise's own line all the same (a raise does
  not tell whether the path was the one due: benchmarks/README.md).
* ``looked-up``: with no ``compared``, where a function of the submission made the value an
  earlier test on the path compared through a line computed from it (``if entry is not None:``,
  not taken, after ``entry = self.graphs.get(key)``): a lookup the call missed by it.
* ``produced``: where the value the call returned was made: its ``return`` line, followed into
  the function that ``return`` called when it hands back that function's value
  (``return self._real_rows(y, x)``: the line of ``_real_rows`` that made it), unless it handed
  that function a stored value (``return self._real_rows(entry.output, x)``: handed on there).

* ``called``: where the name the step's first op call called was bound (``for op in
  reversed(self.parts):`` above ``x = op(x)``): the op that ran first was chosen there.
* ``emptied``: where a list a loop of the step walked empty was last changed by a line of the
  case (``run.clear()`` in an earlier step's fusion loop, the list a fused op's ``for op in
  group:`` then walks): :mod:`grader.observe.list_changes`.
* ``stored:N`` (or ``stored``): in a re-run's build, method, read or set (only in a case whose
  build hands an argument the contract makes another value of), after the ``tested`` frame and
  after each ``passed``/``guards`` pair: each attribute of ``self`` that test read, its value
  then, at the line that last assigned it, and N when that line ran in the constructor and read
  its positional parameter N (``self.limit = limit``): :mod:`grader.observe.stored_values`.
* ``op:N``: per op of the list the step was handed (N its position in its list; the interpreter
  names them, at most :data:`MAX_OP_TESTS`), the last ``if``/``elif``/``while`` test a function
  ran while a local name of it held that op (``for op in ops:`` ... ``if hasattr(op,
  "elementwise"):``): the path that op took through the call.

Each is a frame ``[kind, file, line, function, source]`` in the step's ``origin`` list. Nothing
here judges: which of them names the cause of a failure is the judge's choice
(:mod:`grader.suite.locating`).
"""

from __future__ import annotations

import ast
import sys
from types import CodeType, FrameType, FunctionType, MethodType

from grader.observe.list_changes import ListChanges
from grader.observe.source_facts import (
    call_returns,
    calls_on,
    def_lines,
    empty_starts,
    guarded_returns,
    guarding_tests,
    line_facts,
    line_reads,
    local_names,
    loop_sources,
    return_names,
    return_reads,
)
from grader.observe.stored_values import StoredValues

__all__ = ["OriginTracer", "definition", "line_facts"]
Where = tuple[str, int, str]  # file, line, function
Test = tuple[int, Where, "Where | None"]  # order, the test, where what it compared was made


MAX_ORIGIN_FRAMES = 16  # framing.MAX_ORIGIN_FRAMES: a step's origin frames
MAX_PLAIN_ITEMS = 8  # items of a tuple sent as plain data
MAX_RETURNED = 64  # places whose last returned value is kept during a step
NOT_PLAIN = object()  # a value that is not plain data (:func:`plain`)
MAX_OP_TESTS = 8  # ops of the step's list whose path is noted (``op:N``)
OP_TEST = "op:"  # framing.ORIGIN_OP
MAX_PASSED_FRAMES = 6  # frames before a passed test's pair is left out


def plain(value: object) -> object:
    """``value`` as plain data when it is None, an int or a short tuple of ints (a key, a batch
    size), exactly those types (nothing of a submission's class is asked); else :data:`NOT_PLAIN`."""
    if value is None or (type(value) is int and -(2**62) < value < 2**62):
        return value
    if type(value) is tuple and len(value) <= MAX_PLAIN_ITEMS:
        items = tuple.__iter__(value)
        found = [v for v in items if type(v) is int and -(2**62) < v < 2**62]
        if len(found) == tuple.__len__(value):
            return found
    return NOT_PLAIN


def _valued(value: object) -> list:
    """The wire's optional 6th item of an origin frame: ``[value]`` (None as "None"), or nothing."""
    return [] if value is NOT_PLAIN else ["None" if value is None else value]


def definition(callee: object, locator) -> list | None:
    """The ``def`` line of the submission's function or bound method ``callee``, as a frame
    ``[file, line, function, source]``; None for anything else. Only an exact function or method
    is looked into (by its own slots: no attribute of the submission's objects is asked for)."""
    if type(callee) is MethodType:
        callee = callee.__func__
    if type(callee) is not FunctionType:
        return None
    code = callee.__code__
    if locator.relative(code.co_filename) is None:  # the grader's wrapper of it (a counter's recorded bump)
        callee = callee.__dict__.get("__wrapped__")
        if type(callee) is not FunctionType or locator.relative(callee.__code__.co_filename) is None:
            return None
        code = callee.__code__
    return locator.frame_wire(
        code.co_filename, def_lines(code.co_filename).get(code.co_firstlineno, code.co_firstlineno), code.co_name
    )


def _callee_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


class OriginTracer:
    """One case's tracer: :meth:`run` runs one step under it; :meth:`origin` is what it saw."""

    def __init__(self, locator, op_code: CodeType | None = None, followed: tuple[str, ...] = ()) -> None:
        self.locator = locator
        self.followed = followed  # the record's fields whose value-flow a runner's call follows
        self.op_code = op_code  # the code of the grader's op's __call__: its first call's argument is followed
        self.argument: Where | None = None
        self._mine: dict[int, tuple[CodeType, str | None]] = {}  # id(code) -> (code, its file when the submission's)
        self.assigned: dict[str, tuple[str, int, str]] = {}  # attribute name -> its last assignment
        self._top: FrameType | None = None
        self.returned: tuple[str, int, str, bool] | None = None
        self.returned_attribute = ""  # the attribute a plain return handed back
        self.tested: tuple[str, int, str] | None = None
        self.passed: list[Where] = []  # the top function's earlier tests, in the order they ran
        self.fields = False  # whether this step follows the value-flow of ``followed`` (a runner's call)
        # frame -> local name -> the line that last bound it and the one before (a line event comes
        # before its line runs: ``out = op(out)`` reads the ``out`` an earlier line bound)
        self._locals: dict[FrameType, dict[str, tuple[Where, Where | None]]] = {}
        self.field_origins: dict[str, Where] = {}  # field -> where its value came from during this step
        self.decisions = False  # whether this step notes the test that chose its path (a re-run's call)
        # a running frame -> its last test (in order) and where the value it compared was made
        self._tests: dict[FrameType, Test] = {}
        # a running frame -> its last test that compared a value computed from a helper's (a
        # lookup by it: ``entry = self.graphs.get(key)``), in order, and where the helper made it
        self._lookups: dict[FrameType, tuple[int, Where]] = {}
        self._predicate: Test | None = None  # the last predicate's last test
        self._previous: dict[FrameType, int] = {}  # a running frame -> the line it ran last
        # a running frame -> its local names that hold what a function of the submission returned -> where made
        self._held: dict[FrameType, dict[str, Where]] = {}
        self._derived: dict[FrameType, set[str]] = {}  # those of them computed from such a name (a lookup)
        # an exception, its decision, and what the value that decision compared was then
        self._raised: tuple[object, tuple[Test | None, Where | None], object] | None = None
        self._order = 0  # tests seen in this step
        self.decided: Where | None = None  # the last test it ran before the step's first op call
        self.compared: Where | None = None  # where the value that test compared was made (a function's return)
        self.looked_up: Where | None = None  # a lookup by such a value an earlier test on the path chose by
        # a running frame -> (its line, where the value a function it called there returned was made)
        # (and where what it returned was chosen: a plain return's taken test, else the same place)
        self._made: dict[FrameType, tuple[int, Where, Where]] = {}
        # where a value a function returned was chosen -> that value (plain) and its operand
        # (and for a value a test in a loop over an attribute chose, where that attribute was set
        # and the values the loop took: ``walked``)
        self._returned: dict[Where, tuple[object, tuple | None, tuple | None]] = {}
        self.compared_value: tuple[object, tuple | None, tuple | None] | None = None  # at the decision
        # a running frame -> the int values its loop over an attribute took, where that attribute was set
        self._loops: dict[FrameType, tuple[list[int], Where | None]] = {}
        self.lists = ListChanges()  # lists the case's lines changed, and a loop of this step that found one empty
        self.produced: Where | None = None  # where the value the step's call returned was made
        self.called: Where | None = None  # where the name the step's first op call called was bound
        # the ops of the list the step was handed (id -> the op, its position; the interpreter sets
        # it for a re-run's call), a running frame's local name holding one of them (and its
        # position), and per position the last test a frame ran while its name held that op
        self.given: dict[int, tuple[object, int]] = {}
        self._holding: dict[FrameType, tuple[str, int]] = {}
        self.op_tests: dict[int, Where] = {}
        self.stores = False  # whether this step notes what its tests compared (a re-run's step)
        self.stored = StoredValues()  # attributes stored from a constructor's parameter; the tests' values

    def _file(self, code: CodeType) -> str | None:
        # keyed by the code object's id, never by the object: hashing a code object hashes its
        # constants, which a submission may build to run its own __hash__ inside the tracer; the
        # entry holds the object, so the id is not reused while it is here
        held = self._mine.get(id(code))
        if held is not None and held[0] is code:
            return held[1]
        mine = code.co_filename if self.locator.relative(code.co_filename) is not None else None
        self._mine[id(code)] = (code, mine)
        return mine

    def _call(self, frame: FrameType, event: str, arg) -> object:
        if event != "call":
            return None
        if self._file(frame.f_code) is None:
            if self.decisions and self.decided is None and frame.f_code is self.op_code:
                self._decide(frame.f_back)
            if self.fields:
                try:
                    if frame.f_code.co_name == "__init__":
                        self._built(frame)
                    elif self.argument is None and frame.f_code is self.op_code:
                        self._handed(frame.f_back)
                except Exception:  # noqa: BLE001 - an odd object of the submission's: nothing noted, the step runs on
                    pass
            return None
        if self._top is None and self.returned is None:
            self._top = frame
        return self._line

    def _line(self, frame: FrameType, event: str, arg) -> object:
        code = frame.f_code
        if event == "line":
            if self.decisions:
                self._carry(frame, code)
                self.lists.on_line(frame, code.co_filename, frame.f_lineno, code.co_name)
            facts = line_facts(code.co_filename).get(frame.f_lineno)
            if facts is not None:
                names, test = facts[0], facts[1]
                for name in names:
                    self.assigned[name] = (code.co_filename, frame.f_lineno, code.co_name)
                    if self.fields and name in self.followed:
                        self.field_origins[name] = self.assigned[name]
                if names and self.stores:
                    self.stored.on_assign(frame, code, names, frame is self._top)
                if test and self.decisions:
                    self._order += 1
                    held = self._held.get(frame, {})
                    reads = line_reads(code.co_filename).get(frame.f_lineno, ((), False))[0]
                    compared = next((held[name] for name in reads if name in held), None)
                    derived = self._derived.get(frame, ())
                    looked = next((held[name] for name in reads if name in held and name in derived), None)
                    if looked is not None:
                        self._lookups[frame] = (self._order, looked)
                    self._tests[frame] = (self._order, (code.co_filename, frame.f_lineno, code.co_name), compared)
                    holding = self._holding.get(frame)
                    if holding is not None and (holding[1] in self.op_tests or len(self.op_tests) < MAX_OP_TESTS):
                        self.op_tests[holding[1]] = self._tests[frame][1]
                if test and frame is self._top:
                    if self.tested is not None and self.tested[1] != frame.f_lineno and len(self.passed) < 4:
                        self.passed.append(self.tested)  # an earlier test whose branch was not taken
                    self.tested = (code.co_filename, frame.f_lineno, code.co_name)
                    if self.stores:
                        self.stored.on_test(frame, code, self.tested)
            if self.fields:
                bound = local_names(code.co_filename).get(frame.f_lineno)
                if bound:
                    mine = self._locals.setdefault(frame, {})
                    here = (code.co_filename, frame.f_lineno, code.co_name)
                    for name in bound:
                        mine[name] = (here, mine[name][0] if name in mine else None)
        elif event == "exception":
            if self.decisions and self.decided is None and (self._raised is None or self._raised[0] is not arg[1]):
                # the first of the submission's frames an exception reaches: where it was raised
                decision = self._decision(frame.f_back)
                made = (decision[0][2] if decision[0] is not None else None) or decision[1]
                self._raised = (arg[1], decision, self._returned.get(made) if made is not None else None)
        elif event == "return":
            self._locals.pop(frame, None)  # a finished frame's names are no one's now: not kept alive
            if self.decisions:
                self._previous.pop(frame, None)
                held = self._held.pop(frame, None) or {}
                self._derived.pop(frame, None)
                self._holding.pop(frame, None)
                self._lookups.pop(frame, None)
                last = self._tests.pop(frame, None)
                if last is not None and type(arg) is bool:  # a predicate: its last test chose what it answered
                    self._predicate = last  # (no __class__ asked)
                self._producer(frame, code, last, arg, held)
                self._loops.pop(frame, None)
            if frame is not self._top:
                return self._line
            facts = line_facts(code.co_filename).get(frame.f_lineno)
            self.returned = (code.co_filename, frame.f_lineno, code.co_name, bool(facts and facts[2]))
            self.returned_attribute = facts[3] if facts else ""
            self._top = None
        return self._line

    def _producer(self, frame: FrameType, code: CodeType, last: Test | None, value, held: dict[str, Where]) -> None:
        """At a return: where the value it hands back was made. Its own ``return`` line, unless
        that line hands back what a function of the submission it called there returned
        (``return self._real_rows(y, x)``): then where that function's value was made. And where
        it was chosen: for a plain return inside the branch of the function's last test, taken
        (``if size >= n: return size``), that test; else where it was made. Noted there: the
        value as plain data (:func:`plain`), and for a return that computes it from a local name
        holding what a function of the submission returned (``return (batch, *x.shape[1:])``),
        where that was made and its value (the operand)."""
        here = (code.co_filename, frame.f_lineno, code.co_name)
        chose = here
        inner = self._made.pop(frame, None)
        if inner is not None and inner[0] == frame.f_lineno and frame.f_lineno in call_returns(code.co_filename):
            here, chose = inner[1], inner[2]
        else:
            if last is not None and last[1][1] in guarding_tests(code.co_filename).get(frame.f_lineno, ()):
                chose = last[1]
            operand = None
            name = next((n for n in return_names(code.co_filename).get(frame.f_lineno, ()) if n in held), None)
            if name is not None:
                try:
                    walked = self._returned.get(held[name], (None, None, None))[2]
                    operand = (held[name], plain(frame.f_locals.get(name)), walked)
                except Exception:  # noqa: BLE001 - an odd frame: no operand noted
                    operand = None
            loop = self._loops.get(frame) if chose is not here else None  # a test in a loop chose it
            if len(self._returned) < MAX_RETURNED or chose in self._returned:
                self._returned[chose] = (plain(value), operand, (loop[1], tuple(loop[0])) if loop else None)
        if frame is self._top:
            self.produced = here
        elif frame.f_back is not None:
            self._made[frame.f_back] = (frame.f_back.f_lineno, here, chose)

    def _carry(self, frame: FrameType, code: CodeType) -> None:
        """At a line of ``frame``: the local names the line it ran before bound now hold what a
        function of the submission returned there (``key = self._graph_key(x)``), or what was
        computed from a name that holds one (``entry = self.graphs.get(key)``); else nothing."""
        before = self._previous.get(frame)
        self._previous[frame] = frame.f_lineno
        bound = local_names(code.co_filename).get(before) if before is not None else None
        if not bound:
            return
        if self.given:
            self._hold(frame, bound)
        loop = loop_sources(code.co_filename).get(before)
        if loop is not None:  # a loop over an attribute of self: the value it took, where that attribute was set
            seen, _ = self._loops.setdefault(frame, ([], self.assigned.get(loop[1])))
            try:
                taken = plain(frame.f_locals.get(loop[0]))
            except Exception:  # noqa: BLE001
                taken = NOT_PLAIN
            if type(taken) is int and len(seen) < MAX_PLAIN_ITEMS:
                seen.append(taken)
        reads, one_call = line_reads(code.co_filename).get(before, ((), False))
        held = self._held.setdefault(frame, {})
        derived = self._derived.setdefault(frame, set())
        made = self._made.get(frame)
        computed = False
        if one_call and made is not None and made[0] == before:
            source: Where | None = made[2]
        else:
            source = next((held[name] for name in reads if name in held), None)
            computed = True
        for name in bound:
            if source is None:
                held.pop(name, None)
            else:
                held[name] = source
            (derived.add if source is not None and computed else derived.discard)(name)

    def _hold(self, frame: FrameType, bound: tuple[str, ...]) -> None:
        """After a line that bound ``bound`` (``for op in ops:``): whether one of them now holds
        an op of the list the step was handed; the frame's tests are then that op's path."""
        try:
            local = frame.f_locals
        except Exception:  # noqa: BLE001 - an odd frame: nothing held
            return
        for name in bound:
            value = local.get(name)
            given = self.given.get(id(value))
            if given is not None and given[0] is value:
                self._holding[frame] = (name, given[1])
            elif self._holding.get(frame, ("",))[0] == name:
                del self._holding[frame]

    def _decision(self, caller: FrameType | None) -> tuple[Test | None, Where | None]:
        """The last test of a frame still running (``caller`` and its callers) or of the last
        predicate, whichever ran later; and the last test of a frame still running that compared
        a value computed from a helper's (``if entry is not None:`` after ``entry =
        self.graphs.get(key)``): where the helper made that value."""
        found, looked = self._predicate, None
        while caller is not None:
            mine, lookup = self._tests.get(caller), self._lookups.get(caller)
            if mine is not None and (found is None or mine[0] > found[0]):
                found = mine
            if lookup is not None and (looked is None or lookup[0] > looked[0]):
                looked = lookup
            caller = caller.f_back
        return found, looked[1] if looked is not None else None

    def _decide(self, caller: FrameType | None) -> None:
        """At the step's first op call, made from ``caller``: the test that chose its path."""
        found, self.looked_up = self._decision(caller)
        self.decided, self.compared = (found[1], found[2]) if found is not None else (None, None)
        made = self.compared or self.looked_up  # what the value it compared was, when the decision was made
        self.compared_value = self._returned.get(made) if made is not None else None

    def _built(self, frame: FrameType) -> None:
        """A record built by the submission's code (its ``__init__`` is not the submission's, as a
        dataclass's is not): for each field it follows, where the value handed to it came from."""
        code, caller = frame.f_code, frame.f_back
        if caller is None or self._file(caller.f_code) is None:
            return
        params = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
        if not set(params) & set(self.followed):
            return
        record = type.__dict__["__name__"].__get__(type(frame.f_locals.get("self")))  # never the class's own __name__
        if type(record) is not str:  # a str subclass's __eq__ would be the submission's code
            return
        caller_code = caller.f_code
        here = (caller_code.co_filename, caller.f_lineno, caller_code.co_name)
        call = next(
            (c for c in calls_on(caller_code.co_filename).get(caller.f_lineno, ()) if _callee_name(c) == record), None
        )
        if call is None:
            return
        handed = dict(zip(params, call.args))
        handed.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
        for field in self.followed:
            value = handed.get(field)
            if value is not None:
                bound = self._bound_before(caller, value.id) if isinstance(value, ast.Name) else None
                self.field_origins[field] = bound or here

    def _bound_before(self, frame: FrameType, name: str) -> Where | None:
        """The line that bound local ``name`` of ``frame`` as the frame's current line reads it."""
        last, before = self._locals.get(frame, {}).get(name, (None, None))
        return before if last is not None and last[1] == frame.f_lineno else last

    def _handed(self, caller: FrameType | None) -> None:
        """The first op call of the step, made from ``caller``: where the array it was handed came
        from; in a re-run, also where the name it called was bound (``for op in reversed(...)``
        above ``x = op(x)``: the op that ran first was chosen there)."""
        if caller is None or self._file(caller.f_code) is None:
            return
        code = caller.f_code
        here = (code.co_filename, caller.f_lineno, code.co_name)
        call = next(iter(calls_on(code.co_filename).get(caller.f_lineno, ())), None)
        if self.decisions and call is not None and isinstance(call.func, ast.Name):
            self.called = self._bound_before(caller, call.func.id)
        value = call.args[0] if call is not None and len(call.args) == 1 else None
        if not isinstance(value, ast.Name):
            self.argument = here
            return
        bound = self._bound_before(caller, value.id)
        if bound is not None:
            self.argument = bound
            return
        outer = caller.f_back
        parameter = value.id in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if parameter and outer is not None and self._file(outer.f_code) is not None:
            self.argument = (outer.f_code.co_filename, outer.f_lineno, outer.f_code.co_name)
        else:
            self.argument = here

    def run(self, perform, *args, fields: bool = False, decisions: bool = False, stores: bool = False):
        """``perform(*args)`` under the tracer; what it returns or raises passes through.
        ``fields``: follow the value-flow of a captured graph's record (a runner's call).
        ``decisions``: note the test that chose the call's path (a failed case's re-run).
        ``stores``: note what the tests compared and where it was stored (a failed case's re-run)."""
        self._top, self.returned, self.tested, self.returned_attribute = None, None, None, ""
        self.stores = stores
        self.stored.new_step()
        self.passed = []
        self.decisions, self.decided, self._predicate, self._order = decisions, None, None, 0
        self.compared, self._raised, self.looked_up, self.compared_value = None, None, None, None
        self.produced, self.called, self.op_tests = None, None, {}
        self.lists.new_step()
        self.fields, self.field_origins, self.argument = fields, {}, None
        previous = sys.gettrace()
        sys.settrace(self._call)
        try:
            return perform(*args)
        except BaseException as exc:
            raised = self._raised
            found = raised[1][0] if raised is not None and raised[0] is exc else None
            if self.decisions and self.decided is None and found is not None:  # a step that raised before any op
                self.decided, self.compared, self.looked_up = found[1], found[2], raised[1][1]
                self.compared_value = raised[2]  # as it was at the raise, before the frames unwound
            raise
        finally:
            sys.settrace(previous)
            self._top = None
            self._raised = None
            self._locals.clear()
            self._tests.clear()
            self._made.clear()
            self._returned.clear()
            self._previous.clear()
            self._held.clear()
            self._derived.clear()
            self._lookups.clear()
            self._holding.clear()
            self._loops.clear()
            self.given = {}

    def origin(self, read_attribute: str | None) -> list:
        """This step's origin frames, ``[kind, file, line, function, source]`` each."""
        if self.fields or self.decisions:  # a runner's call: where its record's fields and its ops' input came from
            frames = [
                [f"field:{field}", *self.locator.frame_wire(*self.field_origins[field])]
                for field in self.followed
                if field in self.field_origins
            ]
            if self.argument is not None:
                frames.append(["argument", *self.locator.frame_wire(*self.argument)])
            if self.decided is not None:
                frames.append(["decided", *self.locator.frame_wire(*self.decided)])
                made = self.compared or self.looked_up
                if made is not None:
                    kind = "compared" if self.compared is not None else "looked-up"
                    valued = self.compared_value
                    frames.append([kind, *self.locator.frame_wire(*made), *_valued(valued[0] if valued else NOT_PLAIN)])
                    walked = valued[2] if valued is not None else None
                    if valued is not None and valued[1] is not None:
                        operand, value, walked = valued[1]
                        frames.append(["operand", *self.locator.frame_wire(*operand), *_valued(value)])
                    if (
                        walked is not None and walked[0] is not None
                    ):  # the values a loop walked, its attribute's setting
                        frames.append(["iterated", *self.locator.frame_wire(*walked[0]), list(walked[1])])
            if self.produced is not None:
                frames.append(["produced", *self.locator.frame_wire(*self.produced)])
            if self.called is not None:
                frames.append(["called", *self.locator.frame_wire(*self.called)])
            if self.lists.emptied is not None:
                frames.append(["emptied", *self.locator.frame_wire(*self.lists.emptied)])
            for position, test in sorted(self.op_tests.items()):
                frames.append([f"{OP_TEST}{position}", *self.locator.frame_wire(*test)])
            return frames[:MAX_ORIGIN_FRAMES]
        frames = []
        if self.returned is not None:
            filename, line, function, plain = self.returned
            kind = "returned-plain" if plain else "returned"
            frames.append([kind, *self.locator.frame_wire(filename, line, function)])
            state = next((self.assigned[a] for a in return_reads(filename).get(line, ()) if a in self.assigned), None)
            if state is not None and state[1] in empty_starts(state[0]):
                state = None  # still at its empty start: nothing to trace it to
            if not plain and state is not None:  # computed from the object's state: where that last changed
                frames.append(["state", *self.locator.frame_wire(*state)])
            if self.tested is not None:
                frames.append(["tested", *self.locator.frame_wire(*self.tested)])
                noted = len(frames)  # each test's stored values follow it (a re-run's), not counted here
                frames.extend(self.stored.frames(self.tested, self.assigned, self.locator))
                if plain:  # each earlier test that guards a plain return of its own, and that return
                    for test in self.passed:
                        guarded = guarded_returns(test[0]).get(test[1])
                        if guarded is not None and noted <= MAX_PASSED_FRAMES:
                            frames.append(["passed", *self.locator.frame_wire(*test)])
                            frames.append(["guards", *self.locator.frame_wire(test[0], guarded, test[2])])
                            frames.extend(self.stored.frames(test, self.assigned, self.locator))
                            noted += 2
            elif plain and self.returned_attribute in self.assigned:  # return self._count: where it was set
                frames.append(["assigned", *self.locator.frame_wire(*self.assigned[self.returned_attribute])])
        elif read_attribute is not None and read_attribute in self.assigned:
            frames.append(["assigned", *self.locator.frame_wire(*self.assigned[read_attribute])])
        return frames[:MAX_ORIGIN_FRAMES]
