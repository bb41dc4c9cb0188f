"""Run one case's steps against a module exposing the student contract; record what happened.

This is the *observing* half of grading and it runs inside the untrusted
worker, next to the submission. It knows the steps of a case and nothing of
its checks: it never decides whether anything was right. What it records is
plain data (numbers, text, arrays copied at the moment of the step,
exceptions as type and message), as :mod:`grader.framing`'s records, values encoded by
:mod:`grader.observations`.

Per step it records: the outcome (returned, raised, missing contract name,
not reached), the returned value, the launch-counter delta, the lab's ops'
witness log (which buffer each op was handed), the address of the caller's
input array, and, when a check asked for it, a snapshot of the step's object (the entries of
the mapping attribute the lab declares, ``lab.yaml: snapshot``); and where in the submission's
own files each op call, each bump of the lab's launch counter and each exception came from
(:mod:`grader.observe.locations`).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from grader import framing, observations, snapshots
from grader.arrays import build_array, data_address
from grader.lab import active as active_lab
from grader.lab import op_vocabulary
from grader.observe.line_trace import run_probe
from grader.observe.locations import Locator, observe_bumps
from grader.observe.origins import OriginTracer, definition
from grader.observe.provided import ProvidedObjects
from grader.spec_model import ArrayValue, MaskValue, OpsValue, PlainValue, RefValue, Step, Value
from grader.step_kinds import as_python, step_kind


class _NotReached(Exception):
    """A step could not run because an earlier step did not produce what it needs."""


class _Missing(Exception):
    """The submission does not define a contract name this step needs."""


def _identity(value: Any) -> Any:
    return value


def _launch_count(module: ModuleType, counter: str | None) -> int | None:
    if counter is None:  # the lab has no launch counter
        return None
    try:
        n = getattr(module, counter).n
    except BaseException:  # noqa: BLE001 - anything a submission does here only costs its own case
        return None
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def _describe_error(exc: BaseException, locator: Locator, callee: object = None) -> dict:
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001
        message = "<the exception's message could not be shown>"
    frames = locator.traceback(exc.__traceback__)
    if not frames and type(exc) is TypeError:  # the step's function of the submission could not be called
        made = definition(callee, locator)  # as its arguments are bound: its def is where it is wrong
        frames = [made] if made is not None else []
    return framing.ErrorRecord(
        type=observations.shorten(type(exc).__name__),
        message=observations.shorten(message),
        frames=frames,
    ).wire()


class CaseInterpreter:
    """Holds one case's live objects (the only state a case has) while its steps run."""

    def __init__(self, module: ModuleType, prepare_input: Callable = _identity, to_host: Callable = _identity) -> None:
        self.module = module
        self.called: object = None  # the submission's function the running step calls (grader.step_kinds)
        self.prepare_input = prepare_input
        self.to_host = to_host
        self.lab = active_lab()
        self.contract_names = self.lab.contract_names
        # the functions whose returned op list is listed (lab.yaml: binds: ops)
        self.lists_ops = frozenset(e.name for e in self.lab.entry_points if e.binds == "ops")
        self.locator = Locator.of_module(module)
        self.ops = op_vocabulary(self.lab)  # the lab's op vocabulary (None: the lab has no ops)
        self.witness = self.ops.new_witness(self.locator) if self.ops is not None else None
        self.bumps: list = []  # this step's launch-counter bump calls (grader.observe.locations)
        self.stop_observing_bumps = observe_bumps(module, self.locator, self.bumps, self.lab.launch_counter)
        self.provided = ProvidedObjects(self.lab, self.locator)
        self.env: dict[str, Any] = {}
        self.next_list_id = 0
        self.encoder = observations.new_encoder()
        self.trace: dict | None = None  # the running probe step's line trace
        self.kept_alive: list = []  # every graph entry and buffer a snapshot named: their ids stay theirs
        op_code = self.ops.op_call_code if self.ops is not None else None
        # the snapshot's fields whose value-flow a runner's call follows: every one but a count
        followed = tuple(f.name for f in self.lab.snapshot.fields if f.kind != "int") if self.lab.snapshot else ()
        self.origins = OriginTracer(self.locator, op_code, followed)  # the lines a step's values came from

    # ----------------------------------------------------------- values
    def contract(self, name: str) -> Any:
        try:
            return getattr(self.module, name)
        except AttributeError:
            raise _Missing(name) from None

    def resolve(self, value: Value) -> Any:
        if isinstance(value, ArrayValue):
            return self.prepare_input(build_array(value))
        if isinstance(value, OpsValue):
            if self.ops is None:
                raise _NotReached("the lab has no ops")
            ops = self.ops.make_ops(value.chain, self.next_list_id, self.witness)
            self.next_list_id += 1
            return ops
        if isinstance(value, MaskValue):
            mask = value.mask
            return lambda i: mask[i]
        if isinstance(value, RefValue):
            if value.name not in self.env:
                raise _NotReached(f"{value.name} was not produced by its step")
            return self.env[value.name]
        if isinstance(value, PlainValue):
            return as_python(value.value)
        raise TypeError(f"unknown value {value!r}")

    def target_object(self, name: str) -> Any:
        if name in self.env:
            return self.env[name]
        if name in self.contract_names:
            return self.contract(name)
        raise _NotReached(f"{name} was not produced by its step")

    # ----------------------------------------------------------- steps
    def perform(self, step: Step, args: list, kwargs: dict) -> Any:
        """Do the step, as its kind does it (:mod:`grader.step_kinds`)."""
        return step_kind(step.action).run(self, step, args, kwargs)

    def trace_probe(self, runner: Any, capture: Any, replay: Any) -> None:
        """A probe step's capture and replay of ``runner``, under the line tracer: its trace."""
        counter = self.lab.launch_counter
        self.trace = run_probe(self.module, self.locator, runner, capture, replay, counter, self.origins.op_code)

    def snapshot(self, target: Any) -> list[dict]:
        """The entries of ``target``'s mapping attribute the lab declares (``lab.yaml: snapshot``),
        each its key's text, its identity and its declared fields (grader.snapshots reads them)."""
        declared = self.lab.snapshot
        if declared is None:
            return []
        snapshot = []
        mapping = getattr(target, declared.of, None)
        items = list(mapping.items())[: snapshots.MAX_GRAPHS] if isinstance(mapping, dict) else []
        for key, entry in items:
            values = [getattr(entry, field.name, None) for field in declared.fields]
            # so no later object of the case takes the ids of the entry and its buffers
            self.kept_alive.append((entry, *(v for f, v in zip(declared.fields, values) if f.kind == "buffer")))
            host = [
                self.to_host(v) if f.kind in ("array", "buffer") and v is not None else None
                for f, v in zip(declared.fields, values)
            ]
            record: dict = {"key": observations.shorten(repr(key)), "entry_id": id(entry)}
            for field, value, on_host in zip(declared.fields, values, host):
                name = field.name
                if field.kind == "buffer":
                    record[f"{name}_id"] = id(value)
                    record[f"{name}_address"] = data_address(value)
                    record[name] = self.encoder.value(on_host) if on_host is not None else None
                elif field.kind == "array":
                    record[name] = self.encoder.value(on_host) if isinstance(on_host, np.ndarray) else None
                elif field.kind == "shape":
                    shaped = isinstance(value, tuple) and all(isinstance(d, int) for d in value)
                    record[name] = [int(d) for d in value] if shaped else None
                else:
                    record[name] = value if isinstance(value, int) and not isinstance(value, bool) else None
            snapshot.append(record)
        return snapshot

    def encode_result(self, result: Any) -> Any:
        """A step's returned value as plain data; an object that cannot be copied out
        (``to_host`` or ``__array_interface__`` raises) is reported by its type name."""
        blobs, size = len(self.encoder.blobs), self.encoder.size
        try:
            return self.encoder.value(self.to_host(result))
        except BaseException:  # noqa: BLE001 - the step still returned; only its value is unreadable
            del self.encoder.blobs[blobs:]  # arrays copied before the failure are not reported
            self.encoder.size = size
            try:
                name = type(result).__name__
            except BaseException:  # noqa: BLE001
                name = "object"
            return {"object": {"type": observations.shorten(name if isinstance(name, str) else "object")}}

    def listed_ops(self, result: Any) -> list | None:
        """Each entry of a returned op list: one of this case's own ops (by list and position) or
        a new callable, and whether it is marked elementwise. None if it is not a list."""
        try:
            if self.ops is None or not isinstance(result, (list, tuple)):
                return None
            listed = []
            for op in list(result)[: observations.MAX_WITNESS]:
                place = self.ops.op_place(op, self.witness)
                given = place is not None
                try:
                    elementwise = bool(getattr(op, "elementwise", False))
                except BaseException:  # noqa: BLE001 - a submission's odd object only costs its own case
                    elementwise = False
                listed.append([given, *(place if place is not None else (-1, -1)), elementwise])
            return listed
        except BaseException:  # noqa: BLE001
            return None

    def given_ops(self, args: list) -> dict[int, tuple[object, int]]:
        """The case's own ops of the first argument that is a list holding some (one list's: id ->
        the op and its position in that list), for the origin tracer; {} when none."""
        if self.ops is None:
            return {}
        for arg in args:
            if type(arg) not in (list, tuple):  # exactly: no method of a submission's subclass runs
                continue
            found: dict[int, tuple[object, int]] = {}
            lists = set()
            for op in arg[: observations.MAX_WITNESS]:
                place = self.ops.op_place(op, self.witness)
                if place is not None and (not lists or place[0] in lists):
                    lists.add(place[0])
                    found[id(op)] = (op, place[1])
            if found:
                return found
        return {}

    def run_step(self, step: Step) -> framing.StepRecord:
        record = framing.StepRecord(step.index)
        kind = step_kind(step.action)
        try:
            args = [self.resolve(a) for a in step.args]
            kwargs = {k: self.resolve(v) for k, v in step.kwargs}
            if kind.passes_input and args and hasattr(args[-1], "shape"):
                record.input_address = data_address(args[-1])
            if kind.needs_callee(step, self):
                self.target_object(kind.callee(step))  # a missing contract name is reported before anything runs
        except _Missing as missing:
            record.outcome, record.note = "missing", str(missing)
            return record
        except _NotReached as why:
            record.outcome, record.note = "not_reached", str(why)
            return record
        before = _launch_count(self.module, self.lab.launch_counter)
        mark = self.witness.mark() if self.witness is not None else 0
        marks = self.provided.marks()
        self.called = None  # the submission's function the step calls, once its kind resolved it
        self.locator.new_step()
        self.bumps.clear()
        self.trace = None
        tracing = kind.tracing(step)  # where the step's values came from, when its kind follows them
        try:
            if tracing is not None:
                if tracing.get("decisions"):  # a re-run's call: each op of its list's path is noted
                    self.origins.given = self.given_ops(args)
                result = self.origins.run(self.perform, step, args, kwargs, **tracing)
            else:  # a call of a runner or of a function: its ops and bumps are located as they happen
                result = self.perform(step, args, kwargs)
        except _Missing as missing:
            record.outcome, record.note = "missing", str(missing)
            return record
        except _NotReached as why:  # a read/set/method on a name an earlier step did not produce
            record.outcome, record.note = "not_reached", str(why)
            return record
        except BaseException as exc:  # noqa: BLE001 - sys.exit() in a step is that step's failure, not ours
            record.outcome, record.error = "raised", _describe_error(exc, self.locator, self.called)
        else:
            if step.name:
                self.env[step.name] = result
            record.value = self.encode_result(result)
            if kind.lists_returned_ops and step.target in self.lists_ops:
                record.ops = self.listed_ops(result)
        after = _launch_count(self.module, self.lab.launch_counter)
        record.launches = after - before if before is not None and after is not None else None
        record.witness = [
            [lid, pos, addr, list(shape), dtype, zeros, site]
            for lid, pos, addr, shape, dtype, zeros, site in (
                self.witness.since(mark)[: observations.MAX_WITNESS] if self.witness is not None else ()
            )
        ]
        record.bumps = list(self.bumps)
        record.calls = self.provided.since(marks)
        record.trace = self.trace
        record.sites = self.locator.sites_wire()
        if tracing is not None:
            record.origin = self.origins.origin(kind.origin_field(step))
        if step.observe_graphs:
            blobs, size = len(self.encoder.blobs), self.encoder.size
            try:
                record.graphs = self.snapshot(self.target_object(step.target))
            except BaseException as exc:  # noqa: BLE001
                del self.encoder.blobs[blobs:]  # arrays of a snapshot not reported are not sent
                self.encoder.size = size
                what = self.lab.snapshot.of if self.lab.snapshot is not None else "the snapshot"
                record.note = observations.shorten(f"could not read {what}: {type(exc).__name__}")
        return record


def run_case(
    module: ModuleType,
    uid: str,
    steps: tuple[Step, ...],
    prepare_input: Callable = _identity,
    to_host: Callable = _identity,
) -> bytes:
    """Run every step in order and return the encoded observation frame."""
    interpreter = CaseInterpreter(module, prepare_input, to_host)
    try:
        records = [interpreter.run_step(step).wire() for step in steps]
    finally:
        interpreter.stop_observing_bumps()
        if interpreter.witness is not None:
            interpreter.witness.close()
    return observations.encode_observations(uid, records, interpreter.encoder.blobs)


def observe_in_process(
    module: ModuleType, uid: str, steps: tuple[Step, ...], **hooks: Callable
) -> observations.CaseObservation:
    """Run a case here and decode it as the grader would (for the trusted reference only)."""
    frame = run_case(module, uid, steps, **hooks)
    body, rest = framing.split_frame(frame)
    assert body is not None and not rest
    return observations.decode_observations(body, uid, len(steps))
