"""Load spec files: YAML (safe) -> validated, frozen :mod:`grader.spec_model` objects.

Strict by design: unknown keys, duplicate keys, duplicate ids, unknown tags,
ops, steps or checks are errors, and every error names ``file:line``, the
path of the bad key and what was expected, in one line.

A case is read in two passes. *Parse*: each step by its kind (:mod:`grader.suite.steps`),
then each check by its kind (:mod:`grader.suite.checks`), into a :class:`~grader.suite.case_draft.CaseDraft`
that knows statically which op chain a call runs (for the oracle), which buffer
shape a padded input lands in, and which reads a check such as ``num_captured``
needs the worker to make. *Link*: lay out the final step order and turn the
checks' step references into indices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node

from grader.lab import active as active_lab
from grader.spec_model import OWN_CAUSES, READINGS, SCORINGS, SPEC_FORMAT, VISIBILITIES, Case, Spec, SpecFile, Suite
from grader.suite.case_draft import CaseDraft, OracleCall
from grader.suite.checks import check_class, lab_check_kinds
from grader.suite.spec_reading import NodeReader, SpecError, node_line, refuse_tags
from grader.suite.steps import parse_step

__all__ = ["LoadedSuite", "OracleCall", "SpecError", "SpecErrors", "load_spec_text", "load_suite", "spec_files"]

MAX_SPEC_FILE_BYTES = 2 * 1024 * 1024


class SpecErrors(ValueError):
    """Every problem found while loading a directory of spec files."""

    def __init__(self, errors: list[SpecError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors


# ------------------------------------------------------------ node helpers


def _parse_case(reader: NodeReader, node: Node, where: str, spec_id: str) -> tuple[Case, tuple[OracleCall, ...]]:
    fields = reader.mapping(
        node, where, ("id", "description", "steps", "checks"), ("id", "description", "steps", "checks")
    )
    case_id = reader.ident(fields["id"][1], f"{where}.id")
    description = reader.text(fields["description"][1], f"{where}.description")
    draft = CaseDraft(reader)
    for i, step_node in enumerate(reader.sequence(fields["steps"][1], f"{where}.steps", 1)):
        parse_step(draft, step_node, f"{where}.steps[{i}]", i)
    drafted = []
    for i, check_node in enumerate(reader.sequence(fields["checks"][1], f"{where}.checks", 1)):
        at = f"{where}.checks[{i}]"
        if not isinstance(check_node, MappingNode) or len(check_node.value) != 1:
            raise reader.fail(check_node, at, f"a check is a mapping with one key: {', '.join(lab_check_kinds())}")
        kind = reader.choice(check_node.value[0][0], at, lab_check_kinds(), "check kind")
        drafted.append(check_class(kind).parse(draft, check_node.value[0][1], f"{at}.{kind}", node_line(check_node)))
    steps, index_of = draft.layout()
    checks = tuple(check.linked(index_of) for check in drafted)
    case = Case(
        spec=spec_id,
        id=case_id,
        description=description,
        steps=steps,
        checks=checks,
        file=reader.path,
        line=node_line(node),
    )
    return case, draft.oracle_calls(index_of)


# ------------------------------------------------------------ specs and files
_SPEC_KEYS = ("id", "title", "tag", "points", "visibility", "explanation", "hint", "cases")
_SPEC_OPTIONAL = ("reading", "hints", "scoring")  # "handout" when left out; no hint per cause; "whole-case"


def _parse_spec(reader: NodeReader, node: Node, where: str, oracles: dict[str, tuple[OracleCall, ...]]) -> Spec:
    fields = reader.mapping(node, where, _SPEC_KEYS + _SPEC_OPTIONAL, _SPEC_KEYS)
    spec_id = reader.ident(fields["id"][1], f"{where}.id")
    points = reader.number(fields["points"][1], f"{where}.points")
    if points <= 0:
        raise reader.fail(fields["points"][1], f"{where}.points", f"expected a positive number, got {points}")
    cases = []
    seen: dict[str, int] = {}
    for i, case_node in enumerate(reader.sequence(fields["cases"][1], f"{where}.cases", 1)):
        case, case_oracles = _parse_case(reader, case_node, f"{where}.cases[{i}]", spec_id)
        if case.id in seen:
            raise reader.fail(
                case_node, f"{where}.cases[{i}].id", f"duplicate case id {case.id!r} (first at line {seen[case.id]})"
            )
        seen[case.id] = case.line
        oracles[case.uid] = case_oracles
        cases.append(case)
    return Spec(
        id=spec_id,
        title=reader.text(fields["title"][1], f"{where}.title"),
        tag=reader.choice(fields["tag"][1], f"{where}.tag", active_lab().tags, "behaviour tag"),
        points=float(points),
        visibility=reader.choice(fields["visibility"][1], f"{where}.visibility", VISIBILITIES, "visibility"),
        explanation=reader.text(fields["explanation"][1], f"{where}.explanation"),
        hint=reader.text(fields["hint"][1], f"{where}.hint"),
        cases=tuple(cases),
        file=reader.path,
        line=node_line(node),
        reading=reader.choice(fields["reading"][1], f"{where}.reading", READINGS, "reading")
        if "reading" in fields
        else "handout",
        cause_hints=_cause_hints(reader, fields["hints"][1], f"{where}.hints") if "hints" in fields else (),
        scoring=_scoring(reader, fields, where),
    )


def _scoring(reader: NodeReader, fields: dict, where: str) -> str:
    """``scoring: whole-case | per-check``. Per-check scoring only for a visible spec: a case that
    is one bit to its students (passed or not) cannot earn a share that says how many checks passed."""
    if "scoring" not in fields:
        return "whole-case"
    node = fields["scoring"][1]
    scoring = reader.choice(node, f"{where}.scoring", SCORINGS, "scoring")
    visibility = fields["visibility"][1]
    if scoring == "per-check" and getattr(visibility, "value", "visible") != "visible":
        raise reader.fail(
            node,
            f"{where}.scoring",
            f"per-check scoring needs a visible spec (this one is {visibility.value}): a share per check"
            " would tell students how many checks of a hidden case passed",
        )
    return scoring


def _cause_hints(reader: NodeReader, node: Node, where: str) -> tuple[tuple[str, str], ...]:
    """``hints: {CAUSE: text}``: each key a check kind or a step's own cause (OWN_CAUSES)."""
    fields = reader.mapping(node, where, (*lab_check_kinds(), *OWN_CAUSES))
    return tuple((cause, reader.text(value, f"{where}.{cause}")) for cause, (_, value) in fields.items())


MAX_NESTING = 40


# libyaml, where PyYAML was built with it: the same events and nodes as the pure-Python parser,
# about ten times faster (parsing is nearly all of the time it takes to load the suite).
_LIBYAML_LOADER = getattr(yaml, "CSafeLoader", None)
# ...but only for text of printable ASCII lines without a question mark, and without a "#"
# right after a block scalar's indicators. Elsewhere the two parsers can disagree (libyaml
# takes a tab after a value, "a: 1 <TAB>", a "?" inside a plain scalar of a flow collection,
# "{step: n?x}", and a comment with no space before it in a block scalar's header, "hint: >-#",
# all of which the pure-Python parser refuses), and a spec file must load, or fail, the same
# wherever it is read.
_OUTSIDE_PLAIN_ASCII = re.compile(r"[^\n\x20-\x3e\x40-\x7e]|[|>][-+0-9]*#")


def _refuse_deep_nesting(text: str, path: str, loader: type = yaml.SafeLoader) -> None:
    """Spec files nest a few levels deep; a pathological nest would make YAML's recursive parser
    slow or overflow the stack, so it is refused up front, in one pass over the events."""
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            line = event.start_mark.line + 1
            raise SpecError(
                f"{path}:{line}: YAML anchors and aliases (&name, *name) are not supported in spec files; write the value out"
            )
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_NESTING:
                raise SpecError(f"{path}:{event.start_mark.line + 1}: nested more than {MAX_NESTING} levels deep")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _compose(text: str, path: str) -> Node | None:
    """The file's node tree. libyaml first; anything it refuses (or anything else going wrong
    there) is parsed again by the pure-Python parser, whose errors :mod:`grader.suite.yaml_errors`
    knows how to explain, so that a broken file reads the same with or without libyaml. Text
    with a tab, a carriage return, a question mark or any character outside printable ASCII goes
    to the pure-Python parser directly."""
    if _LIBYAML_LOADER is not None and not _OUTSIDE_PLAIN_ASCII.search(text):
        try:
            _refuse_deep_nesting(text, path, _LIBYAML_LOADER)
            return yaml.compose(text, Loader=_LIBYAML_LOADER)
        except Exception:  # noqa: BLE001 - every failure is decided, and worded, by the pure-Python parse
            pass
    _refuse_deep_nesting(text, path)
    return yaml.compose(text, Loader=yaml.SafeLoader)


def load_spec_text(text: str, path: str, oracles: dict[str, tuple[OracleCall, ...]] | None = None) -> SpecFile:
    """Parse one spec file's text; raises :class:`SpecError` on the first problem."""
    reader = NodeReader(path)
    oracles = {} if oracles is None else oracles
    try:
        root = _compose(text, path)
    except yaml.MarkedYAMLError as exc:
        from grader.suite.yaml_errors import explain

        line, message = explain(exc, text)
        raise SpecError(f"{path}:{line}: {message}") from None
    except yaml.reader.ReaderError as exc:  # unmarked: find the line from the position
        line = text.count("\n", 0, exc.position) + 1
        raise SpecError(f"{path}:{line}: YAML error: character {exc.character!r} is not allowed in YAML text") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}:1: YAML error: " + " ".join(str(exc).split())) from None
    except RecursionError:
        raise SpecError(f"{path}:1: nested too deeply") from None
    if root is None:
        raise SpecError(f"{path}:1: the file is empty (expected 'format: {SPEC_FORMAT}' and 'specs:')")
    refuse_tags(reader, root)
    fields = reader.mapping(root, "", ("format", "specs"), ("format", "specs"))
    fmt = reader.integer(fields["format"][1], "format")
    if fmt != SPEC_FORMAT:
        raise reader.fail(fields["format"][1], "format", f"this grader reads format {SPEC_FORMAT}, the file says {fmt}")
    specs = []
    seen: dict[str, int] = {}
    for i, node in enumerate(reader.sequence(fields["specs"][1], "specs", 1)):
        spec = _parse_spec(reader, node, f"specs[{i}]", oracles)
        if spec.id in seen:
            raise reader.fail(node, f"specs[{i}].id", f"duplicate spec id {spec.id!r} (first at line {seen[spec.id]})")
        seen[spec.id] = spec.line
        specs.append(spec)
    return SpecFile(path=path, format=fmt, specs=tuple(specs))


@dataclass(frozen=True)
class LoadedSuite:
    """A suite plus what the judge derives statically from it (oracle calls per case)."""

    suite: Suite
    oracles: dict[str, tuple[OracleCall, ...]]


def spec_files(directory: str | Path) -> list[Path]:
    return sorted(p for p in Path(directory).glob("*.yaml") if p.is_file())


def load_suite(directory: str | Path) -> LoadedSuite:
    """Load every ``*.yaml`` in a directory; raises :class:`SpecErrors` listing every problem."""
    directory = Path(directory)
    if not directory.is_dir():
        raise SpecErrors([SpecError(f"{directory}: not a directory of spec files")])
    paths = spec_files(directory)
    if not paths:
        raise SpecErrors([SpecError(f"{directory}: no *.yaml spec files here")])
    errors: list[SpecError] = []
    files: list[SpecFile] = []
    oracles: dict[str, tuple[OracleCall, ...]] = {}
    first_seen: dict[str, str] = {}
    for path in paths:
        shown = str(path)
        try:
            if path.stat().st_size > MAX_SPEC_FILE_BYTES:
                raise SpecError(f"{shown}:1: larger than {MAX_SPEC_FILE_BYTES} bytes")
            text = path.read_text(encoding="utf-8")
            spec_file = load_spec_text(text, shown, oracles)
        except SpecError as exc:
            errors.append(exc)
            continue
        except UnicodeDecodeError:
            errors.append(SpecError(f"{shown}:1: not UTF-8 text"))
            continue
        except RecursionError:
            errors.append(SpecError(f"{shown}:1: nested too deeply"))
            continue
        except OSError as exc:
            errors.append(SpecError(f"{shown}:1: cannot read ({exc.strerror})"))
            continue
        for i, spec in enumerate(spec_file.specs):
            if spec.id in first_seen:
                errors.append(
                    SpecError(
                        f"{shown}:{spec.line}: specs[{i}].id: duplicate spec id {spec.id!r} (also in {first_seen[spec.id]})"
                    )
                )
            first_seen.setdefault(spec.id, f"{shown}:{spec.line}")
        files.append(spec_file)
    if errors:
        raise SpecErrors(errors)
    return LoadedSuite(Suite(tuple(files)), oracles)
