"""Find a lab, read and check its ``lab.yaml``, and load the pack's own Python by path.

Which lab a command grades: ``--lab PATH`` when given, else ``$GRAPHGRADE_LAB``, else the
installed default (``labs/cudagraph/`` beside the ``grader`` package). ``PATH`` is the lab's
folder or its ``lab.yaml``. Every problem with a ``lab.yaml`` is one line naming the file, the
key and what is wrong (:class:`LabError`).

A pack's Python (``pack/``: its provided objects, its own check kinds) is imported from the
pack's folder only, by file path, under a private module name (``_graphgrade_pack_<id>``),
never through ``sys.path`` and never from the current folder: a submission's folder cannot
shadow it, and two labs of different ids never share a module. A pack is loaded once per id
and process: a second lab of the same id in one process would run the first one's code (no
command loads two labs; give each lab its own id).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from grader.lab.interface import (
    BINDS,
    ENTRY_KINDS,
    LAB_FORMAT,
    MAX_SNAPSHOT_FIELDS,
    PARTS,
    SNAPSHOT_KINDS,
    SNAPSHOT_RECORD_KEYS,
    VALUE_KINDS,
    Behaviour,
    EntryPoint,
    Lab,
    LabPaths,
    OwnCheck,
    ProvidedObject,
    Snapshot,
    SnapshotField,
)

LAB_FILE = "lab.yaml"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
LAB_ENV = "GRAPHGRADE_LAB"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TAG = re.compile(r"^[a-z][a-z0-9-]*$")
_REF = re.compile(r"^pack(\.[A-Za-z_][A-Za-z0-9_]*)+:[A-Za-z_][A-Za-z0-9_]*$")
_MODULE_REF = re.compile(r"^pack(\.[A-Za-z_][A-Za-z0-9_]*)+$")
_KEYS = (
    "format",
    "id",
    "title",
    "source",
    "student",
    "provided",
    "kwargs",
    "values",
    "checks",
    "step_modes",
    "launch_counter",
    "probe",
    "steps",
    "answers",
    "backends",
    "ops",
    "snapshot",
    "behaviours",
    "points",
    "report",
    "specs",
    "reference",
    "mutants",
    "mutants_import_root",
    "template",
    "template_files",
    "contract",
    "pack",
)
_REQUIRED = ("format", "id", "title", "student", "behaviours", "specs", "reference")


class LabError(Exception):
    """A lab cannot be found or its ``lab.yaml`` is wrong: one line, naming the file and the key."""


LABS = Path(__file__).resolve().parents[2] / "labs"  # the labs installed beside the engine
DEFAULT_FILE = "DEFAULT"  # in LABS: the folder name of the lab graded when none is named


def default_lab_root() -> Path:
    """The lab graded when none is named: the one ``labs/DEFAULT`` names, installed beside the engine."""
    try:
        name = (LABS / DEFAULT_FILE).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise LabError(f"{LABS / DEFAULT_FILE}: cannot be read ({exc.strerror}): give --lab PATH") from None
    if not name or "/" in name or name.startswith("."):
        raise LabError(f"{LABS / DEFAULT_FILE}: expected the name of a folder of {LABS}, got {name!r}")
    return LABS / name


def lab_root(given: str | os.PathLike | None = None) -> Path:
    """The lab folder a command uses: ``given`` (``--lab``), else ``$GRAPHGRADE_LAB``, else the default."""
    chosen = given if given not in (None, "") else os.environ.get(LAB_ENV) or None
    if chosen is None:
        return default_lab_root()
    path = Path(chosen).expanduser()
    if path.name == LAB_FILE:
        path = path.parent
    return path.resolve()


class _Reader:
    """Typed reads of ``lab.yaml``'s keys, each failing with one line naming the file and the key."""

    def __init__(self, file: Path) -> None:
        self.file = file

    def fail(self, key: str, problem: str) -> LabError:
        return LabError(f"{self.file}: {key}: {problem}")

    def mapping(self, value: Any, key: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping, got {type(value).__name__}")
        for name in value:
            if name not in allowed:
                raise self.fail(f"{key}.{name}" if key else str(name), f"unknown key (known: {', '.join(allowed)})")
        for name in required:
            if name not in value:
                raise self.fail(key or name, f"missing the required key {name!r}")
        return value

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty text, got {value!r}")
        return value

    def name(self, value: Any, key: str, pattern: re.Pattern = _NAME) -> str:
        if not isinstance(value, str) or not pattern.match(value):
            raise self.fail(key, f"expected a name ({pattern.pattern}), got {value!r}")
        return value

    def names(self, value: Any, key: str, pattern: re.Pattern = _NAME, allowed: tuple[str, ...] | None = None):
        if not isinstance(value, list):
            raise self.fail(key, f"expected a list of names, got {value!r}")
        out = tuple(self.name(v, f"{key}[{i}]", pattern) for i, v in enumerate(value))
        if len(set(out)) != len(out):
            raise self.fail(key, f"a name is listed twice: {list(out)}")
        for i, v in enumerate(out):
            if allowed is not None and v not in allowed:
                raise self.fail(f"{key}[{i}]", f"expected one of {', '.join(allowed)}, got {v!r}")
        return out

    def ref(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not _REF.match(value):
            raise self.fail(key, f"expected pack.MODULE:ATTRIBUTE (code in the pack's pack/ folder), got {value!r}")
        return value

    def number(self, value: Any, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise self.fail(key, f"expected a number >= 0, got {value!r}")
        return value

    def path(self, root: Path, value: Any, key: str, folder: bool | None) -> Path:
        text = self.text(value, key)
        path = (root / text).resolve()
        if folder is True and not path.is_dir():
            raise self.fail(key, f"{text} is not a folder (relative to {root})")
        if folder is False and not path.is_file():
            raise self.fail(key, f"{text} is not a file (relative to {root})")
        return path


def load_lab(given: str | os.PathLike | None = None) -> Lab:
    """The lab at ``given`` (see :func:`lab_root`), its ``lab.yaml`` read and checked."""
    root = lab_root(given)
    file = root / LAB_FILE
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabError(f"{file}: no such file (a lab is a folder holding {LAB_FILE})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LabError(f"{file}: cannot be read: {exc}") from None
    try:
        data = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (libyaml's, where built)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f":{mark.line + 1}" if mark is not None else ""
        raise LabError(f"{file}{at}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    return parse_lab(data, root, _Reader(file))


def parse_lab(data: Any, root: Path, r: _Reader) -> Lab:
    """The :class:`Lab` a ``lab.yaml``'s data declares (paths relative to ``root``)."""
    top = r.mapping(data, "", _KEYS)
    if top.get("format") != LAB_FORMAT or isinstance(top.get("format"), bool):
        raise r.fail("format", f"expected {LAB_FORMAT} (this engine's lab.yaml format), got {top.get('format')!r}")
    r.mapping(top, "", _KEYS, _REQUIRED)
    student = r.mapping(top["student"], "student", ("module", "handout_path", "entry_points"), ("module",))
    entry_points = tuple(
        _entry_point(r, e, f"student.entry_points[{i}]") for i, e in enumerate(student.get("entry_points", []))
    )
    if len({e.name for e in entry_points}) != len(entry_points):
        raise r.fail("student.entry_points", "an entry point is listed twice")
    provided = tuple(_provided(r, p, f"provided[{i}]") for i, p in enumerate(top.get("provided", []) or []))
    behaviours = tuple(
        _behaviour(r, b, f"behaviours[{i}]") for i, b in enumerate(r_list(r, top["behaviours"], "behaviours"))
    )
    if not behaviours or len({b.id for b in behaviours}) != len(behaviours):
        raise r.fail("behaviours", "expected one or more behaviours, each id once")
    checks = r.mapping(top.get("checks", {}) or {}, "checks", ("shared", "own", "modules"))
    shared = r.names(checks["shared"], "checks.shared") if "shared" in checks else None
    own = tuple(_own_check(r, c, f"checks.own[{i}]") for i, c in enumerate(checks.get("own", []) or []))
    for i, check in enumerate(own):
        if check.observes not in {p.name for p in provided}:
            raise r.fail(f"checks.own[{i}].observes", f"{check.observes!r} is not a provided object")
    launch_counter = top.get("launch_counter")
    if launch_counter is not None:
        r.name(launch_counter, "launch_counter")
        if launch_counter not in {e.name for e in entry_points}:
            raise r.fail("launch_counter", f"{launch_counter!r} is not an entry point")
    points = r.mapping(top.get("points", {}) or {}, "points", ("total", "core", "stricter", "stretch", "answers"))
    report = r.mapping(top.get("report", {}) or {}, "report", ("title", "all_pass"))
    answers = r.mapping(top.get("answers", {}) or {}, "answers", ("cited", "free"))
    lab = Lab(
        id=r.name(top["id"], "id", _TAG),
        title=r.text(top["title"], "title"),
        root=root,
        module=r.name(student["module"], "student.module"),
        handout_path=r.text(student["handout_path"], "student.handout_path") if "handout_path" in student else None,
        entry_points=entry_points,
        behaviours=behaviours,
        kwargs=r.names(top.get("kwargs", []) or [], "kwargs"),
        # not given: every kind the lab can use (ops only with an op vocabulary)
        values=r.names(
            top.get("values", [v for v in VALUE_KINDS if v != "ops" or "ops" in top]), "values", allowed=VALUE_KINDS
        ),
        shared_checks=shared,
        own_checks=own,
        provided=provided,
        step_modes=r.names(top.get("step_modes", []) or [], "step_modes"),
        launch_counter=launch_counter,
        backends=r.ref(top["backends"], "backends") if "backends" in top else None,
        ops=r.name(top["ops"], "ops", _MODULE_REF) if "ops" in top else None,
        paths=_paths(r, top, root),
        points=tuple((k, r.number(v, f"points.{k}")) for k, v in points.items()),
        report_title=r.text(report["title"], "report.title") if "title" in report else r.text(top["title"], "title"),
        all_pass_text=r.text(report["all_pass"], "report.all_pass") if "all_pass" in report else "",
        check_modules=r.names(checks.get("modules", []) or [], "checks.modules", _MODULE_REF),
        probe=r.names(top.get("probe", []) or [], "probe"),
        cited_slots=r.names(answers.get("cited", []) or [], "answers.cited", _TAG),
        free_slots=r.names(answers.get("free", []) or [], "answers.free", _TAG),
        step_kinds=r.names(top.get("steps", []) or [], "steps", _REF),
        snapshot=_snapshot(r, top["snapshot"]) if "snapshot" in top else None,
    )
    if set(lab.cited_slots) & set(lab.free_slots):
        raise r.fail("answers", "a slot is both cited and free")
    runners = {e.name for e in entry_points if e.binds == "runner"}
    for i, name in enumerate(lab.probe):
        if name not in runners:
            raise r.fail(f"probe[{i}]", f"{name!r} is not an entry point with binds: runner")
    if "ops" in lab.values and lab.ops is None:
        raise r.fail("ops", "missing: values has ops, so the lab needs an op vocabulary (pack.MODULE)")
    if lab.ops is not None and "ops" not in lab.values:
        raise r.fail("ops", "given, but values has no ops: no spec of this lab could use them")
    if lab.step_modes and lab.step_mode_enum is None:
        raise r.fail("step_modes", "no enum entry point has these members")
    return lab


def r_list(r: _Reader, value: Any, key: str) -> list:
    if not isinstance(value, list):
        raise r.fail(key, f"expected a list, got {type(value).__name__}")
    return value


def _entry_point(r: _Reader, value: Any, key: str) -> EntryPoint:
    f = r.mapping(value, key, ("name", "kind", "buildable", "members", "binds", "params", "at_least"), ("name", "kind"))
    if f["kind"] not in ENTRY_KINDS:
        raise r.fail(f"{key}.kind", f"expected one of {', '.join(ENTRY_KINDS)}, got {f['kind']!r}")
    buildable = f.get("buildable", False)
    if not isinstance(buildable, bool) or (buildable and f["kind"] != "class"):
        raise r.fail(f"{key}.buildable", "expected true or false (only a class is buildable)")
    binds = f.get("binds")
    params = r.names(f.get("params", []), f"{key}.params")
    if binds is not None:
        if binds not in BINDS:
            raise r.fail(f"{key}.binds", f"expected one of {', '.join(BINDS)}, got {binds!r}")
        if (binds == "runner") != buildable or (binds != "runner" and f["kind"] != "function"):
            raise r.fail(f"{key}.binds", f"{binds}: a runner is a buildable class, ops and result are functions")
        if "ops" not in params:
            raise r.fail(f"{key}.params", f"binds {binds}: expected the parameter 'ops' among {list(params)}")
    floors = f.get("at_least", {})
    if not isinstance(floors, dict) or any(
        p not in params or type(n) is not int or not -(2**31) < n < 2**31 for p, n in floors.items()
    ):
        raise r.fail(f"{key}.at_least", f"expected a mapping of its params ({', '.join(params)}) to ints")
    return EntryPoint(
        r.name(f["name"], f"{key}.name"),
        f["kind"],
        buildable,
        r.names(f.get("members", []), f"{key}.members"),
        binds,
        params,
        tuple(floors.items()),
    )


def _provided(r: _Reader, value: Any, key: str) -> ProvidedObject:
    f = r.mapping(
        value, key, ("name", "factory", "setup", "log", "kwargs", "errors"), ("name", "factory", "setup", "log")
    )
    return ProvidedObject(
        r.name(f["name"], f"{key}.name"),
        r.ref(f["factory"], f"{key}.factory"),
        r.ref(f["setup"], f"{key}.setup"),
        r.ref(f["log"], f"{key}.log"),
        r.names(f.get("kwargs", []), f"{key}.kwargs"),
        r.names(f.get("errors", []), f"{key}.errors"),
    )


def _behaviour(r: _Reader, value: Any, key: str) -> Behaviour:
    f = r.mapping(value, key, ("id", "title", "part", "points"), ("id", "title", "part"))
    if f["part"] not in PARTS:
        raise r.fail(f"{key}.part", f"expected one of {', '.join(PARTS)}, got {f['part']!r}")
    points = r.number(f["points"], f"{key}.points") if "points" in f else None
    return Behaviour(r.name(f["id"], f"{key}.id", _TAG), r.text(f["title"], f"{key}.title"), f["part"], points)


def _own_check(r: _Reader, value: Any, key: str) -> OwnCheck:
    f = r.mapping(value, key, ("kind", "parse", "judge", "observes", "keys"), ("kind", "parse", "judge", "observes"))
    return OwnCheck(
        r.name(f["kind"], f"{key}.kind"),
        r.ref(f["parse"], f"{key}.parse"),
        r.ref(f["judge"], f"{key}.judge"),
        r.name(f["observes"], f"{key}.observes"),
        r.names(f.get("keys", ["equals", "one_of"]), f"{key}.keys"),
    )


def _snapshot(r: _Reader, value: Any) -> Snapshot:
    f = r.mapping(value, "snapshot", ("of", "fields"), ("of", "fields"))
    fields = r.mapping(f["fields"], "snapshot.fields", tuple(f["fields"]) if isinstance(f["fields"], dict) else ())
    if not fields or len(fields) > MAX_SNAPSHOT_FIELDS:
        raise r.fail("snapshot.fields", f"expected 1 to {MAX_SNAPSHOT_FIELDS} fields, got {len(fields)}")
    out: list[SnapshotField] = []
    for name, kind in fields.items():
        key = f"snapshot.fields.{name}"
        r.name(name, key)
        if name == "fields" or name.startswith("__"):  # an entry's own attributes (grader.snapshots.EntryObservation)
            raise r.fail(key, "a field may not be named 'fields' or start with '__' (the entry's record's own names)")
        if kind not in SNAPSHOT_KINDS:
            raise r.fail(key, f"expected one of {', '.join(SNAPSHOT_KINDS)}, got {kind!r}")
        out.append(SnapshotField(name, kind))
    snapshot = Snapshot(r.name(f["of"], "snapshot.of"), tuple(out))
    keys = [k for field in out for k in field.wire_keys] + list(SNAPSHOT_RECORD_KEYS)
    if len(set(keys)) != len(keys):
        raise r.fail("snapshot.fields", f"two fields (or a field and key, entry_id) share a record key: {keys}")
    return snapshot


def _paths(r: _Reader, top: dict, root: Path) -> LabPaths:
    def optional(key: str, folder: bool | None) -> Path | None:
        return r.path(root, top[key], key, folder) if key in top else None

    files = top.get("template_files", []) or []
    if not isinstance(files, list):
        raise r.fail("template_files", f"expected a list of files, got {files!r}")
    # Only the pack's code must be there when the lab loads: a grading image leaves out the
    # reference and keeps its specs elsewhere, a student kit has no reference or mutants.
    return LabPaths(
        specs=r.path(root, top["specs"], "specs", None),
        reference=r.path(root, top["reference"], "reference", None),
        mutants=optional("mutants", None),
        mutants_import_root=optional("mutants_import_root", None),
        template=optional("template", None),
        template_files=tuple(r.path(root, f, f"template_files[{i}]", None) for i, f in enumerate(files)),
        contract=optional("contract", None),
        pack=optional("pack", True),
    )


# ---------------------------------------------------------------- the pack's Python
PACK_PREFIX = "_graphgrade_pack_"  # every pack's private package name starts so


def pack_package(lab: Lab) -> str:
    """The private name the pack's ``pack/`` folder is imported under."""
    return PACK_PREFIX + re.sub(r"[^A-Za-z0-9_]", "_", lab.id)


def pack_module(lab: Lab, dotted: str) -> ModuleType:
    """The pack's module ``pack.MODULE`` (a file, or a folder of them, inside ``pack/``), imported by
    path under the pack's private name (:func:`pack_package`)."""
    return _pack_module(lab, dotted)


def _pack_module(lab: Lab, dotted: str) -> ModuleType:
    if lab.paths.pack is None:
        raise LabError(f"{lab.root / LAB_FILE}: pack: not given, but {dotted} names the pack's code")
    package = pack_package(lab)
    if package not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            package, lab.paths.pack / "__init__.py", submodule_search_locations=[str(lab.paths.pack)]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        spec.loader.exec_module(module)
    name = package + dotted[len("pack") :]
    if name not in sys.modules:
        parts = dotted.split(".")[1:]
        file = lab.paths.pack.joinpath(*parts[:-1], parts[-1] + ".py")
        folder = lab.paths.pack.joinpath(*parts)
        if not file.is_file() and not (folder / "__init__.py").is_file():
            raise LabError(f"{lab.root / LAB_FILE}: {dotted}: no such file {file}")
        # the import system finds it beneath the private package's __path__ (the pack folder
        # only), so a module of a sub-folder may import its siblings relatively
        importlib.import_module(name)
    return sys.modules[name]


def preload_provided(lab: Lab) -> None:
    """Import the parts of the pack that build the lab's provided objects, and the step kinds it adds (see
    :func:`grader.lab.preload_pack`, which also loads its op vocabulary)."""
    for provided in lab.provided:
        for ref in (provided.factory, provided.setup, provided.log):
            pack_attribute(lab, ref)
    for ref in lab.step_kinds:  # the step kinds the pack adds: the worker runs them
        pack_attribute(lab, ref)


def pack_attribute(lab: Lab, ref: str) -> Any:
    """The object a ``pack.MODULE:ATTRIBUTE`` reference names, imported from the pack by path."""
    dotted, attribute = ref.split(":")
    module = _pack_module(lab, dotted)
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise LabError(f"{lab.root / LAB_FILE}: {ref}: {dotted} defines no {attribute}") from None
