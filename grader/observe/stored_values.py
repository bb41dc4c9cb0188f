"""The values a test compared, read from the object's attributes, and where each was stored
(issue 34, point 3): the worker's half of "the test is right, the value it compared is not".

In a failed case's re-run (grader.run.relocating), the origin tracer (grader.observe.origins)
tells :class:`StoredValues` two things:

* each line that assigns attributes (``self.limit = limit``): when it runs in the constructor a
  step called and its value reads one of the constructor's positional parameters, which one (0
  for ``limit`` above: the first after ``self``), for the rest of the case; any other
  assignment of that attribute forgets it;
* each ``if``/``elif``/``while`` test of the function a step called: the attributes of ``self``
  the test reads (``if self.on and self.count < self.limit:``) and their values as the test
  ran, kept when plain data (None or an int: :func:`plain`).

:meth:`StoredValues.frames` turns a test's into origin frames, one per attribute with a plain
value and a known assignment: ``stored:N`` (the constructor's parameter N was read there) or
``stored``, at the line that last assigned it, with its value. Nothing is asked of the
submission's objects: the instance's dict is read through its class's own slot descriptor.
Nothing here judges: whether a value is the one the handout makes of the argument is the
judge's (grader.suite.locating), from what the lab declares (lab.yaml: ``at_least``).
"""

from __future__ import annotations

from types import CodeType, FrameType, GetSetDescriptorType

from grader.observe.source_facts import line_reads, test_reads

Where = tuple[str, int, str]
STORED = "stored"  # framing.ORIGIN_KINDS; with a parameter: framing.ORIGIN_STORED + N
MAX_COMPARED = 4  # attributes of one test noted
MAX_TESTS = 64  # tests whose compared values a step keeps


NOT_PLAIN = object()  # a value that is not plain data


def plain(value: object) -> object:
    """``value`` when it is None or an int (exactly those types), else :data:`NOT_PLAIN`."""
    return value if value is None or (type(value) is int and -(2**62) < value < 2**62) else NOT_PLAIN


def instance_dict(obj: object) -> dict | None:
    """``obj``'s own attribute dict, read through the ``__dict__`` slot its class was given (a
    class attribute or property of the submission named ``__dict__`` is never called); None when
    it has none."""
    try:
        for klass in type.__dict__["__mro__"].__get__(type(obj)):
            slot = type.__dict__["__dict__"].__get__(klass).get("__dict__")
            if slot is not None:
                held = slot.__get__(obj) if type(slot) is GetSetDescriptorType else None
                return held if type(held) is dict else None
    except Exception:  # noqa: BLE001 - an odd object: nothing read
        return None
    return None


class StoredValues:
    """One case's attributes stored from a constructor's parameter, and one step's tests' values."""

    def __init__(self) -> None:
        self.parameter: dict[str, int] = {}  # attribute -> the constructor's parameter its last assignment read
        self.compared: dict[Where, list[tuple[str, object]]] = {}  # a test -> (attribute, its value then)

    def new_step(self) -> None:
        self.compared = {}

    def on_assign(self, frame: FrameType, code: CodeType, names: tuple[str, ...], constructor: bool) -> None:
        """At a line assigning the attributes ``names``; ``constructor``: it runs in the function the
        step called, a constructor (``__init__``)."""
        position = None
        if constructor and code.co_name == "__init__":
            parameters = code.co_varnames[1 : code.co_argcount]
            reads = line_reads(code.co_filename).get(frame.f_lineno, ((), False))[0]
            position = next((parameters.index(n) for n in reads if n in parameters), None)
        for name in names:
            if position is None:
                self.parameter.pop(name, None)
            else:
                self.parameter[name] = position

    def on_test(self, frame: FrameType, code: CodeType, where: Where) -> None:
        """At a test of the function the step called: the attributes of ``self`` it reads, as they are."""
        attributes = test_reads(code.co_filename).get(frame.f_lineno)
        if not attributes or (where not in self.compared and len(self.compared) >= MAX_TESTS):
            return
        try:
            held = instance_dict(frame.f_locals.get("self"))
            if held is not None:  # (a key of the submission's own str subclass may compare itself)
                self.compared[where] = [(a, plain(dict.get(held, a, NOT_PLAIN))) for a in attributes[:MAX_COMPARED]]
        except Exception:  # noqa: BLE001 - an odd frame or dict: nothing noted
            return

    def frames(self, test: Where, assigned: dict[str, Where], locator) -> list:
        """Origin frames of what ``test`` compared: ``[stored[:N], file, line, function, source, value]``."""
        found = []
        for attribute, value in self.compared.get(test, ()):
            at = assigned.get(attribute)
            if at is not None and value is not NOT_PLAIN:
                position = self.parameter.get(attribute)
                kind = STORED if position is None else f"{STORED}:{position}"
                found.append([kind, *locator.frame_wire(*at), "None" if value is None else value])
        return found
