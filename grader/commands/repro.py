"""``graphgrade repro SPEC/CASE [SUBMISSION]``: one case as a short Python script a student runs.

The script builds the case's inputs exactly as the grader does (:func:`grader.arrays.build_array`:
``numpy.random.default_rng(seed).standard_normal(shape).astype(dtype)``, or the literal
values), hands the submission the grader's own ops (the lab's op vocabulary's ``make_ops``, the same
callables, witness included), runs the steps against the student's module (the lab's
``MODULE.py``, lab.yaml's ``student.module``) in the student's own
interpreter (so ``breakpoint()`` and a debugger work), and prints after each step what it
returned and cost next to what the grader expects: the launches a ``launches`` check pins,
the value a ``value`` check wants, the exception a ``raises`` check wants, and the output the
trusted oracle computes (the vocabulary's ``apply_chain``, never the reference solution).

In the student kit a case the kit does not hold in full (every hidden case) is refused in one
line (exit 2); the full package writes any case, for staff.

Where the script goes: never inside the submission, whose every ``.py`` the integrity scan reads
(the script imports the grader's ops, which is the ``import-grader`` flag). With a submission
(the SUBMISSION argument, or the current folder when it holds ``MODULE.py`` or the handout's
layout, ``student.handout_path`` such as ``package/MODULE.py``, which the script then imports as
``package.MODULE``) the default is
``<submission>-repro/<spec>--<case>.py`` beside it; ``-o FILE`` anywhere but inside it (a FILE
inside is refused in one line); ``-o -`` standard output. Without one, standard output.
"""

from __future__ import annotations

import argparse
import keyword
import sys
from pathlib import Path

from grader.commands.cli_common import Subcommand
from grader.errors import UsageError
from grader.lab import active as active_lab
from grader.spec_model import ArrayValue, MaskValue, OpsValue, PlainValue, RefValue, Value, contract_names
from grader.step_kinds import step_kind


def module_name() -> str:
    """The student's module, as the script imports it (the lab's ``student.module``)."""
    return active_lab().module


def submission_file() -> str:
    return active_lab().module_file


def handout_package() -> str | None:
    """The package folder of the handout's layout (``student.handout_path``'s folder, where
    relative imports are allowed), None when the lab has no such layout."""
    path = active_lab().handout_path
    parent = Path(path).parent.as_posix() if path else "."
    return None if parent == "." else parent


def launch_count() -> str:
    """The script's expression for the launches counted so far (0 without a launch counter)."""
    lab = active_lab()
    return f"{lab.module}.{lab.launch_counter}.n" if lab.launch_counter else "0"


HEADER = '''"""Reproduce {uid}: {title}

{description}Written by `graphgrade repro {uid}`. Run it where your {module_file} is: python {name}
Put breakpoint() in your {module_file} (or below) to step through a failure.
"""

import sys
from pathlib import Path

import numpy as np

from grader.arrays import data_address
from grader.lab import load_lab, op_vocabulary
from grader.spec_model import OpSpec
from grader.suite.describing import compare_arrays

{imports}

OPS = op_vocabulary(load_lab())  # the lab's op vocabulary: the grader's own ops and its oracle
Witness, apply_chain, make_ops = OPS.new_witness, OPS.apply_chain, OPS.make_ops
WITNESS = Witness()  # the grader's ops record each call here (which array each was handed)
'''

HELPERS = '''

def array(dtype, shape, seed):
    """An input as the grader builds it: standard normal values from numpy's default_rng(seed)."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


BUFFERS = {}  # data address -> the name this script gives the buffer (the grader compares addresses)


def ops_called(number, mark, given=None):
    """Which array the first op of each list was handed during this step (what the grader's
    checks on buffers look at: on replay, the buffer it was handed at capture, never the caller's)."""
    mine = data_address(given) if given is not None else None
    for list_id, position, address, shape, dtype, _, _ in WITNESS.since(mark):
        if position != 0:
            continue
        if address == mine:
            what = "the array passed in to this step"
        else:
            what = BUFFERS.setdefault(address, f"buffer {len(BUFFERS) + 1} (first seen in step {number})")
        print(f"    op {position} of list {list_id} was handed {dtype}{list(shape)}: {what}")


def show(number, label, value, launches, expected_launches=None, expected=None, expected_output=None):
    print(f"step {number}: {label}")
    print(f"    returned: {value!r}" if not isinstance(value, np.ndarray) else f"    returned: {value.dtype}{list(value.shape)}")
    if isinstance(value, np.ndarray):
        print("        " + np.array2string(value, precision=4, threshold=16).replace("\\n", "\\n        "))
    cost = f"    launches: {launches}"
    if expected_launches is not None:
        cost += f"   (expected {expected_launches}{'' if launches == expected_launches else '  <-- differs'})"
    print(cost)
    if expected is not None:
        print(f"    expected value: {expected!r}{'' if same(value, expected) else '  <-- differs'}")
    if expected_output is not None:
        problem = compare_arrays(expected_output, value, str(expected_output.dtype))  # as the grader compares
        print(f"    expected output: {expected_output.dtype}{list(expected_output.shape)}{'' if problem is None else '  <-- differs: ' + problem}")
        if problem is not None:
            print("        " + np.array2string(expected_output, precision=4, threshold=16).replace("\\n", "\\n        "))


def same(value, expected):
    """As the grader compares a plain value: lists and tuples alike, an enum member by its name."""
    if isinstance(value, (list, tuple)) and isinstance(expected, list):
        return len(value) == len(expected) and all(same(v, e) for v, e in zip(value, expected))
    return value == expected or getattr(value, "name", None) == expected


def raised(number, label, exc, expected_raise=None):
    print(f"step {number}: {label}")
    print(f"    raised {type(exc).__name__}: {exc}")
    if expected_raise is not None:
        print(f"    (expected: raises {expected_raise})")
    else:
        import traceback

        traceback.print_exception(exc, limit=-8)
'''


RESERVED = ("array", "show", "same", "raised", "np", "sys", "Path", "WITNESS", "expected", "want")
RESERVED += ("before", "result", "exc", "OpSpec", "Witness", "apply_chain", "make_ops", "data_address", "x", "mark")
RESERVED += ("OPS", "load_lab", "op_vocabulary")
RESERVED += ("BUFFERS", "ops_called", "compare_arrays")


class ScriptWriter:
    """The script of one case: its lines, the names it binds, the expected outputs it tracks."""

    def __init__(self, case, oracles) -> None:
        self.case = case
        self.lines: list[str] = []
        self.names: dict[str, str] = {}  # spec name -> Python name
        self.oracle_by_step = {o.step: o for o in oracles}
        self.shadow: set[str] = set()  # spec names whose expected output the script holds
        self.list_id = 0
        self.launches = {}
        self.values = {}
        self.raises = {}
        for check in case.checks:
            pinned = check.expected_launches()
            if pinned is not None:
                self.launches[pinned[0]] = pinned[1]
            if check.kind == "value":
                self.values[check.step] = check.equals
            if check.kind == "raises":
                self.raises[check.step] = check.type or "an exception"

    def py_name(self, name: str) -> str:
        if name not in self.names:
            safe = (
                name
                if name.isidentifier() and not keyword.iskeyword(name)
                else "v_" + "".join(c if c.isalnum() else "_" for c in name)
            )
            while safe in RESERVED or safe == module_name() or (safe in self.names.values()):
                safe += "_"
            self.names[name] = safe
        return self.names[name]

    def value(self, value: Value) -> str:
        if isinstance(value, ArrayValue):
            if value.values is not None:
                return f"np.array({_plain(value.values)!r}, dtype={value.dtype!r})"
            return f"array({value.dtype!r}, {tuple(value.shape)!r}, {value.seed!r})"
        if isinstance(value, OpsValue):
            chain = ", ".join(_op(op) for op in value.chain)
            code = f"make_ops(({chain}{',' if len(value.chain) == 1 else ''}), {self.list_id}, WITNESS)"
            self.list_id += 1
            return code
        if isinstance(value, MaskValue):
            return f"{list(value.mask)!r}.__getitem__"
        if isinstance(value, RefValue):
            return self.py_name(value.name)
        assert isinstance(value, PlainValue)
        return repr(_plain(value.value))

    def target(self, name: str) -> str:
        in_module = name in contract_names() and name not in self.names
        return f"{module_name()}.{name}" if in_module else self.py_name(name)

    @property
    def module(self) -> str:
        return module_name()

    @property
    def launch_count(self) -> str:
        return launch_count()

    @staticmethod
    def quoted(text: str) -> str:
        """``text`` inside a single-quoted string literal."""
        return _quote(text)

    def arguments(self, step, given: str = "None") -> str:
        """The step's arguments as the script passes them; ``given`` replaces the last (the
        input, bound to x above) unless it is "None"."""
        values = [self.value(a) for a in step.args]
        if given != "None":
            values[-1] = given
        return ", ".join(values + [f"{k}={self.value(v)}" for k, v in step.kwargs])

    def expected_output(self, step) -> str | None:
        call = self.oracle_by_step.get(step.index)
        if call is None:
            return None
        if isinstance(call.input, ArrayValue):
            source = self.value(call.input)
        elif isinstance(call.input, RefValue) and call.input.name in self.shadow:
            source = f"expected[{call.input.name!r}].copy()"
        else:
            return None
        chain = ", ".join(_op(op) for op in call.chain)
        self.lines.append(f"want = apply_chain(({chain}{',' if len(call.chain) == 1 else ''}), {source})")
        if step.name:
            self.lines.append(f"expected[{step.name!r}] = want.copy()")
            self.shadow.add(step.name)
        return "want"

    def step(self, step) -> None:
        number, label = step.index + 1, step.label
        self.lines += ["", f"# step {number}: {label}"]
        step_kind(step.action).repro(self, step, number, label)

    def shown_step(self, step, number: int, label: str, kind) -> None:
        """A step run in a ``try``, then what it returned and cost beside what the grader expects:
        the launches pinned, the value wanted, the exception wanted, the oracle's output."""
        want = self.expected_output(step)
        given = "None"
        if kind.passes_input and step.args and isinstance(step.args[-1], (ArrayValue, RefValue)):
            self.lines.append(f"x = {self.value(step.args[-1])}")
            given = "x"
        self.lines.append(f"before, mark = {launch_count()}, WITNESS.mark()")
        self.lines.append("try:")
        statement, result = kind.repro_statement(self, step, given)
        self.lines.append(f"    {statement}")
        self.lines.append("except Exception as exc:")
        expected_raise = self.raises.get(step.index)
        self.lines.append(f"    raised({number}, {_quote(label)!r}, exc, {expected_raise!r})")
        self.lines.append("else:")
        extras = []
        if step.index in self.launches:
            extras.append(f"expected_launches={self.launches[step.index]!r}")
        if step.index in self.values:
            extras.append(f"expected={_plain(self.values[step.index])!r}")
        if want:
            extras.append(f"expected_output={want}")
        if expected_raise:
            self.lines.append(
                f"    print('step {number}: returned, but the grader expects it to raise {expected_raise}')"
            )
        call = f"show({number}, {_quote(label)!r}, {result}, {launch_count()} - before"
        self.lines.append(f"    {call}{''.join(', ' + e for e in extras)})")
        self.lines.append(f"ops_called({number}, mark, {given})")


def _check_text(check) -> str:
    """A check in one line: its kind and fields, steps by their numbers."""
    parts = []
    for name, value in vars(check).items():
        if name in ("line", "list_id") or value is None:
            continue
        if isinstance(value, tuple) and value and all(hasattr(v, "label") for v in value):
            value = "[" + ", ".join(v.label for v in value) + "]"
        if name in check.step_fields:
            value = [v + 1 for v in value] if isinstance(value, tuple) else value + 1
            name = "step" if name == "step" else f"{name} step"
        parts.append(f"{name}: {value}")
    return f"{check.kind} ({', '.join(parts)})"


def _plain(value):
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def _op(op) -> str:
    return f"OpSpec({op.name!r})" if op.param is None else f"OpSpec({op.name!r}, {op.param!r})"


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def script(spec, case, oracles, folder: Path | None, name: str = "repro.py") -> str:
    """The script of one case. ``folder``: where it imports the student's module from (None: its own folder)."""
    writer = ScriptWriter(case, oracles)
    writer.lines.append("expected = {}  # the oracle's outputs, by step name (a later step may use one)")
    for step in case.steps:
        writer.step(step)
    writer.lines += ["", "print()", "print('What the grader checks in this case:')"]
    writer.lines += [f"print({'  ' + _check_text(c)!r})" for c in case.checks]
    description = f"{case.description.strip()}\n\n" if case.description.strip() else ""
    where = repr(str(folder)) if folder is not None else "str(Path(__file__).resolve().parent)"
    module = module_name()
    imports = f"sys.path.insert(0, {where})\nimport {module}  # noqa: E402"
    if folder is not None and is_handout_layout(folder):
        package = repr(str(folder / handout_package()))
        imports = (
            f"sys.path.insert(0, {where})\nsys.path.insert(1, {package})  # its modules by their bare names too\n"
            f"from {handout_package().replace('/', '.')} import {module}  # noqa: E402"
        )
    header = HEADER.format(
        uid=case.uid,
        title=spec.title.replace('"""', "'''"),
        description=description.replace('"""', "'''"),
        name=name,
        imports=imports,
        module_file=submission_file(),
    )
    return header + HELPERS + "\n\n" + "\n".join(writer.lines) + "\n"


def _find(loaded, uid: str):
    spec_id, _, case_id = uid.partition("/")
    for spec in loaded.suite.specs:
        if spec.id == spec_id:
            for case in spec.cases:
                if case.id == case_id:
                    return spec, case
    return None, None


def run(args: argparse.Namespace) -> int:
    from grader.commands.cli_common import EXIT_OK, load_specs
    from grader.commands.kit import kit_info

    in_kit = kit_info() is not None
    if "/" not in args.case:
        raise UsageError(f"{args.case}: expected SPEC/CASE (for instance replay-basics/long-graph-one-launch)")
    loaded = load_specs(args.specs)
    spec, case = _find(loaded, args.case)
    if in_kit and (spec is None or spec.visibility != "visible"):
        raise UsageError(
            f"{args.case}: not a public case of this kit (a hidden case is run by the autograder only, never reproduced)"
        )
    if spec is None:
        raise UsageError(f"{args.case}: no such case in {args.specs}")
    folder = None
    if args.submission is not None:
        path = Path(args.submission)
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
        folder = submission_root((path.parent if path.is_file() else path).resolve())
    elif Path(submission_file()).is_file() or is_handout_layout(Path.cwd()):
        folder = submission_root(Path.cwd().resolve())
    text = script(spec, case, loaded.oracles[case.uid], folder)
    target = output_path(args.output, folder, case.uid)
    if target is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{target}: cannot write the script ({exc.strerror or exc})") from None
    print(f"wrote {target}: run it with `python {target}`", file=sys.stderr)
    return EXIT_OK


def is_handout_layout(folder: Path) -> bool:
    """Whether ``folder`` holds the student's module where the handout keeps it, and not at its top."""
    package = handout_package()
    return (
        package is not None
        and not (folder / submission_file()).is_file()
        and (folder / package / submission_file()).is_file()
    )


def submission_root(folder: Path) -> Path:
    """The submission a folder belongs to: the handout's package folder is inside it."""
    package = handout_package()
    if package is not None and "/" not in package and folder.name == package and is_handout_layout(folder.parent):
        return folder.parent
    return folder


def default_output(folder: Path, uid: str) -> Path:
    """``<submission>-repro/<spec>--<case>.py``, beside the submission (never inside it)."""
    spec_id, _, case_id = uid.partition("/")
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in f"{spec_id}--{case_id}")
    return folder.parent / f"{folder.name}-repro" / f"{name}.py"


def output_path(output: Path | None, folder: Path | None, uid: str) -> Path | None:
    """Where the script goes (None: standard output); a path inside the submission is refused."""
    if output is not None and str(output) == "-":
        return None
    if output is None:
        return default_output(folder, uid) if folder is not None else None
    if folder is not None and output.resolve().is_relative_to(folder):
        raise UsageError(
            f"{output}: inside the submission {folder}, where the grader would scan it and flag its "
            f"`import grader` (import-grader); write it outside (the default: {default_output(folder, uid)})"
        )
    return output


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", metavar="SPEC/CASE", help="the case, as report.html names it (spec id / case id)")
    p.add_argument(
        "submission",
        nargs="?",
        default=None,
        help="your folder or module file (default: the current folder when it holds the lab's MODULE.py, or holds it where the handout keeps it)",
    )
    from grader.commands.spec_source import SPECS_HELP

    p.add_argument("--specs", type=Path, default=None, help=SPECS_HELP)
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="write the script here, outside the submission; '-' prints it (default: SUBMISSION-repro/SPEC--CASE.py "
        "beside your folder, or standard output when there is no submission)",
    )


COMMAND = Subcommand(
    "repro",
    help="print a short Python script that reruns one case against your module (to debug it)",
    description=(
        "Write a runnable Python script for one case, beside your submission (never inside it, where the grader "
        "would flag it): the same inputs (dtype, shape, seed and generator), "
        "the grader's own ops, the case's steps against your module (the lab's MODULE.py) in your own interpreter (so "
        "breakpoint() works), and after each step what it returned and cost next to what the grader expects. "
        "In the student kit a hidden case is refused."
    ),
    add_arguments=add_arguments,
    run=run,
)
