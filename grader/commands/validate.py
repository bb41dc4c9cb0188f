"""``graphgrade validate``: every spec file loads, and the reference passes every case.

A spec the reference cannot pass is a broken spec, not a hard one. Validation
runs the trusted reference in this process (no isolation needed), through the
same interpreter, protocol and judge that grade students.
"""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from pathlib import Path

from grader.judging.judge import judge_case
from grader.lab import active as active_lab
from grader.observe.interpreter import observe_in_process
from grader.suite.loader import SpecErrors, load_suite


def validate_suite(
    directory: Path, backend: str | None = None, notes: list[str] | None = None, on_loaded=None
) -> tuple[list[str], str]:
    """Returns (problems, one-line summary). Problems are one line each, naming file and line.

    On the cupy backend every key a runner did not capture is accounted for: a
    failed capture of ops all marked capturable is a problem (a quiet eager run
    would hide it); a key declined on purpose (an op marked ``capturable =
    False``) is appended to ``notes`` with its reason, when a list is given.
    """
    try:
        loaded = load_suite(directory)
    except SpecErrors as errors:
        return [str(e) for e in errors.errors], f"{len(errors.errors)} problem(s) in {directory}"
    if on_loaded is not None:  # the CLI's one line: which folder, and its counts
        on_loaded(loaded)
    from grader.lab.reference import ReferenceUnavailable, default_backend, load_reference

    lab = active_lab()
    backend = backend or default_backend(lab)
    try:
        chosen = load_reference(lab, backend)
    except ReferenceUnavailable as exc:
        return [f"backend {backend}: {exc}"], f"could not validate {directory} on {backend}"
    problems: list[str] = []
    cases = loaded.suite.cases
    answers = _reference_answers(chosen)
    skipped_witness = 0
    for spec in loaded.suite.specs:
        for case in spec.cases:
            checks = case.checks
            if backend not in ("numpy", "python"):
                # A real graph replays recorded kernels: the grader's Python ops are not called
                # again, so the simulation's op witness has nothing to observe on a GPU.
                kept = tuple(c for c in checks if not c.simulation_only)
                skipped_witness += len(checks) - len(kept)
                case = type(case)(**{**case.__dict__, "checks": kept})
            try:
                with _capture_records(chosen) as records:
                    observation = observe_in_process(
                        chosen, case.uid, case.steps, prepare_input=chosen.prepare_input, to_host=chosen.to_host
                    )
                verdict = judge_case(case, loaded.oracles[case.uid], observation, answers)
            except Exception as exc:  # noqa: BLE001 - report it against the case, keep validating
                problems.append(
                    f"{case.file}:{case.line}: {case.uid}: validating this case raised {type(exc).__name__}: {exc}"
                )
                continue
            for record in records:
                where = f"{case.file}:{case.line}: {case.uid}: {', '.join(record.ops)} for key {record.key}"
                if record.on_purpose:
                    if notes is not None:
                        notes.append(f"{where} runs eagerly on {backend}: {record.reason}")
                else:
                    problems.append(
                        f"{where}: the {backend} reference could not capture ops marked capturable: {record.reason}"
                    )
            if verdict.status != "passed":
                problems.append(
                    f"{case.file}:{verdict.line or case.line}: {case.uid}: the {backend} reference fails this case: "
                    + verdict.message.split("\n", 1)[0]  # one line: where in the reference is for a rerun to show
                )
    tags = Counter(s.tag for s in loaded.suite.specs)
    missing = [t for t in active_lab().tags if t not in tags]
    if missing:
        problems.append(f"{directory}: no spec covers the behaviour tag(s) {', '.join(missing)}")
    visibilities = Counter(s.visibility for s in loaded.suite.specs)
    note = f" ({skipped_witness} op-witness checks not applicable on {backend})" if skipped_witness else ""
    summary = (
        f"{len(loaded.suite.files)} files, {len(loaded.suite.specs)} specs, {len(cases)} cases, "
        f"{sum(s.points for s in loaded.suite.specs):g} points, "
        + ", ".join(f"{n} {v}" for v, n in sorted(visibilities.items()))
        + f" specs: {'OK' if not problems else f'{len(problems)} problem(s)'} on the {backend} reference{note}"
    )
    return problems, summary


def refuse_unless_valid(specs_dir: Path, how: str, command: str) -> None:
    """Before a bundle packs ``specs_dir``: the checks of ``graphgrade validate`` (every spec
    loads, the reference passes every case); the first problem (file:line) in one line otherwise."""
    from grader.commands.spec_source import say_specs
    from grader.errors import UsageError

    problems, _ = validate_suite(Path(specs_dir), on_loaded=lambda loaded: say_specs(specs_dir, how, loaded))
    if problems:
        more = f" (and {len(problems) - 1} more; graphgrade validate lists them)" if len(problems) > 1 else ""
        raise UsageError(f"{command}: nothing written, the specs do not validate: {problems[0]}{more}")


def _capture_records(backend):
    """The cupy backend's capture decisions during a block (an empty list elsewhere)."""
    recording = getattr(backend.module, "recording_captures", None)
    return recording() if backend.name != "numpy" and recording is not None else contextlib.nullcontext([])


def cases_no_mutant_kills(directory: Path) -> list[str]:
    """One warning line per case that no named mutant (the lab's ``mutants``) fails.

    Such a case may be good teaching, but it catches none of the known mistakes: the
    instructor should know (and perhaps write the mutant it was meant for). The mutants
    are the project's own trusted code, so they run here, in this process, through the
    same interpreter and judge as validation. Each mutant is loaded once, and its launch
    counter is set back to 0 before each case, as a fresh worker would find it; a case
    stops at the first mutant it kills. Loading problems are
    validate_suite's to report, so this returns nothing for a suite that does not load.
    """
    import importlib.util
    import itertools

    from grader.commands.audit import discover_mutants

    try:
        loaded = load_suite(directory)
    except SpecErrors:
        return []
    lab = active_lab()
    if lab.paths.mutants is None:
        return []
    mutants = discover_mutants()
    serial = itertools.count()
    import_root = lab.paths.mutants_import_root

    def fresh(path: Path):
        name = f"_graphgrade_validate_mutant_{next(serial)}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while a class is built
        if import_root is not None and str(import_root) not in sys.path:
            sys.path.append(str(import_root))  # trusted: where the lab's mutants import their helpers from
        spec.loader.exec_module(module)
        return module

    modules = []
    warnings = []
    for mutant in mutants:
        try:
            modules.append(fresh(mutant.path))
        except Exception as exc:  # noqa: BLE001 - a stale edit, say: one line, and validate the rest
            detail = " ".join(str(exc).split())
            warnings.append(
                f"{mutant.path}: this mutant could not be loaded ({type(exc).__name__}: {detail}); graphgrade audit reports it as broken"
            )
    from grader.lab.reference import fresh_module

    control_module = fresh_module(lab.paths.reference, "_graphgrade_validate_reference")

    def observe(module, case):
        if lab.launch_counter is not None:
            getattr(module, lab.launch_counter).n = 0
        return observe_in_process(module, case.uid, case.steps)

    for spec in loaded.suite.specs:
        for case in spec.cases:
            oracles = loaded.oracles[case.uid]
            control = judge_case(case, oracles, observe(control_module, case))
            if control.status != "passed":
                continue  # validate_suite reports it
            killed = False
            for module in modules:
                try:
                    verdict = judge_case(case, oracles, observe(module, case))
                except Exception:  # noqa: BLE001 - a mutant that breaks the observer fails the case
                    killed = True
                    break
                if verdict.status != "passed":
                    killed = True
                    break
            if not killed:
                warnings.append(
                    f"{case.file}:{case.line}: {case.uid}: no named mutant fails this case ({lab.paths.mutants}); it may teach, but it catches none of the known mistakes"
                )
    return warnings


def _reference_answers(module):
    """The reference's answers.md, its files named as the tracer names them (from the folder above
    the reference's package)."""
    from grader.judging.answers import read_answers
    from grader.observe.locations import Locator

    lab = active_lab()
    folder = lab.paths.reference.parent
    named = Locator.of_module(module).relative(str(folder / lab.module_file)) or lab.module_file
    return read_answers(folder).under(str(Path(named).parent) if "/" in named else "")
