"""TEMPORARY: runs the decode-step pack's specs in-process, without the engine.

Until the engine loads lab packs (issue 32, point 1), nothing else executes
``labs/decode_step/specs/*.yaml``. This runner reads them with the safe YAML loader, runs
each case's steps against a module (the reference, the template, a mutant) and judges the
checks the specs use, so the pack's tests can show that the reference passes every case,
the template none, and each mutant fails a case of its behaviour. It is deliberately small
and is not the grader: no isolation, no strict loader, no reports. Delete it once
``graphgrade validate --lab labs/decode_step`` and ``graphgrade audit --lab`` run the pack.

Semantics follow specs/README.md: a case passes when every check passes and no step raised
unless a ``raises`` check expects it; ``attribute`` and ``step_mode`` read the object right
after the step named by ``after`` (or after the last step); a spec's points are split equally
over its cases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from labs.decode_step.pack.checks import judge_engine_calls, parse_accepted
from labs.decode_step.pack.engine import CallLog, FakeDecodeEngine, engine_setup

PACK = Path(__file__).resolve().parents[1]
SPECS = PACK / "specs"
PROVIDED = "FakeDecodeEngine"
READ_CHECKS = ("attribute", "step_mode")  # read by an implicit step (after one, or at the end)
STEP_ACTIONS = ("build", "call", "method", "read", "set")


@dataclass(frozen=True)
class CaseResult:
    """One case's outcome: passed, and the failed claims in words when not."""

    uid: str
    spec_id: str
    tag: str
    points: float
    passed: bool
    reasons: tuple[str, ...]


def load_specs(folder: Path = SPECS) -> list[dict]:
    """Every spec of every ``*.yaml`` in ``folder``, in file-name order, each with its file."""
    specs = []
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for spec in data["specs"]:
            specs.append({**spec, "file": path.name})
    return specs


def same(expected: Any, actual: Any) -> bool:
    """The ``value`` check's strict equality: true is not 1, 2 is not 2.0, None only None."""
    if expected is None or isinstance(expected, bool):
        return actual is expected
    if isinstance(expected, int):
        return type(actual) is int and actual == expected
    if isinstance(expected, float):
        return (
            isinstance(actual, (int, float))
            and not isinstance(actual, bool)
            and math.isclose(actual, expected, rel_tol=0, abs_tol=1e-9 * max(1.0, abs(expected)))
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(same(e, a) for e, a in zip(expected, actual))
        )
    return type(actual) is type(expected) and actual == expected


class _NotReached(Exception):
    pass


class _CaseRun:
    """One case's live objects and what its steps did."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.env: dict[str, Any] = {}
        self.logs: dict[str, CallLog] = {}  # engine name -> its calls
        self.outcome: dict[str, tuple[str, Any]] = {}  # step name -> ("returned", value) / ("raised", type)
        self.calls: dict[tuple[str, str], list] = {}  # (engine, step) -> calls made during the step
        self.reads: dict[int, tuple[bool, str]] = {}  # check index -> (passed, claim)
        self.unexpected: list[str] = []

    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"ref"}:
            if value["ref"] not in self.env:
                raise _NotReached(f"{value['ref']} was not produced by its step")
            return self.env[value["ref"]]
        return value

    def obj(self, name: str) -> Any:
        if name not in self.env:
            raise _NotReached(f"{name} was not produced by its step")
        return self.env[name]

    def perform(self, step: dict, name: str | None) -> Any:
        args = [self.resolve(a) for a in step.get("args", [])]
        kwargs = {k: self.resolve(v) for k, v in step.get("kwargs", {}).items()}
        if "build" in step and step["build"] == PROVIDED:
            log = self.logs[name] = CallLog()
            return FakeDecodeEngine(engine_setup(*args, **kwargs), log)
        if "build" in step:
            return getattr(self.module, step["build"])(*args, **kwargs)
        if "call" in step:
            target = self.env.get(step["call"]) or getattr(self.module, step["call"])
            return target(*args, **kwargs)
        if "method" in step:
            return getattr(self.obj(step["of"]), step["method"])(*args, **kwargs)
        if "read" in step:
            return getattr(self.obj(step["of"]), step["read"])
        setattr(self.obj(step["of"]), step["set"], self.resolve(step["value"]))
        return None

    def run_step(self, index: int, step: dict) -> None:
        name = step.get("as") or f"#{index}"
        marks = {engine: log.mark() for engine, log in self.logs.items()}
        try:
            result = self.perform(step, step.get("as"))
        except _NotReached as why:
            self.outcome[name] = ("not_reached", str(why))
        except Exception as exc:  # noqa: BLE001 - a step that raises is that case's failure
            self.outcome[name] = ("raised", type(exc).__name__)
        else:
            self.outcome[name] = ("returned", result)
            if step.get("as"):
                self.env[step["as"]] = result
        for engine, mark in marks.items():
            self.calls[(engine, name)] = self.logs[engine].since(mark)

    def read_check(self, index: int, kind: str, body: dict) -> None:
        try:
            target = self.obj(body["of"])
            if kind == "step_mode":
                got = getattr(target.step_mode(), "name", None)
                passed = got == body["equals"]
            else:
                got = getattr(target, body["name"])
                passed = same(body["equals"], got)
        except Exception as exc:  # noqa: BLE001
            got, passed = f"raised {type(exc).__name__}", False
        where = f" after {body['after']}" if "after" in body else ""
        self.reads[index] = (
            passed,
            f"{kind} {body.get('name', '')} of {body['of']}{where}: expected {body['equals']!r}, got {got!r}",
        )


def _judge(run: _CaseRun, index: int, kind: str, body: dict) -> tuple[bool, str]:
    if kind in READ_CHECKS:
        return run.reads[index]
    step = body.get("step") or body.get("during")
    state, value = run.outcome.get(step, ("not_reached", "no such step"))
    if kind == "value":
        return state == "returned" and same(
            body["equals"], value
        ), f"{step} returned {body['equals']!r}: got {state} {value!r}"
    if kind == "raises":
        ok = state == "raised" and body.get("type") in (None, value)
        return ok, f"{step} raised {body.get('type', 'an exception')}: got {state} {value!r}"
    if kind == "engine_calls":
        accepted = parse_accepted(body.get("equals"), body.get("one_of"))
        observed = run.calls.get((body["of"], step)) if state != "not_reached" else None
        verdict = judge_engine_calls(step, accepted, observed)
        return verdict.passed, f"{verdict.claim}; got {verdict.actual}"
    raise ValueError(f"the temporary runner does not know the check kind {kind!r}")


def run_case(module: ModuleType, spec: dict, case: dict) -> CaseResult:
    """Run one case's steps against ``module`` and judge its checks."""
    run = _CaseRun(module)
    checks = [next(iter(c.items())) for c in case["checks"]]
    anchored: dict[str, list[int]] = {}
    for i, (kind, body) in enumerate(checks):
        if kind in READ_CHECKS:
            anchored.setdefault(body.get("after", "<end>"), []).append(i)
    expected_to_raise = {body["step"] for kind, body in checks if kind == "raises"}
    for index, step in enumerate(case["steps"]):
        run.run_step(index, step)
        name = step.get("as") or f"#{index}"
        state, value = run.outcome[name]
        if state != "returned" and name not in expected_to_raise:
            run.unexpected.append(f"step {name} ({next(iter(step))}) {state}: {value}")
        for i in anchored.get(step.get("as"), []) if step.get("as") else []:
            run.read_check(i, *checks[i])
    for i in anchored.get("<end>", []):
        run.read_check(i, *checks[i])
    verdicts = [_judge(run, i, kind, body) for i, (kind, body) in enumerate(checks)]
    reasons = tuple(run.unexpected) + tuple(claim for passed, claim in verdicts if not passed)
    share = spec["points"] / len(spec["cases"])
    return CaseResult(f"{spec['id']}/{case['id']}", spec["id"], spec["tag"], share, not reasons, reasons)


def run_suite(module: ModuleType, specs: list[dict] | None = None) -> list[CaseResult]:
    """Every case of every spec against ``module``."""
    specs = load_specs() if specs is None else specs
    return [run_case(module, spec, case) for spec in specs for case in spec["cases"]]


def score(results: list[CaseResult]) -> float:
    """Points earned: each passing case's share of its spec's points."""
    return sum(r.points for r in results if r.passed)


def load_submission(path: Path, name: str) -> ModuleType:
    """Import the file at ``path`` as a fresh module named ``name`` (a reference, template or
    mutant; never a module cached under ``decode_step``)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module
