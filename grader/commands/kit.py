"""The student kit: a zip a student installs with ``pip install kit.zip`` to grade their own work.

It is an sdist in a zip (``graphgrade-kit/pyproject.toml`` and the sources), which pip builds
and installs like any source archive; the same file also unzips to the template and the
contract document. It holds the grader, the reports, the student template, the contract
document and the *public* specs only, rewritten from the instructor's spec files with every
spec that is not ``visible`` removed (comments go too: they are not data). It never holds the
reference solution, the mutants, the spec authoring guide (it quotes mutant code) or any hidden
spec: not its id, title, hint, cases, inputs or expectations. :func:`find_leaks` checks the
finished entries for all of that, and the builder refuses to write a kit it finds anything in.

At run time ``grader/KIT.json`` marks a kit: ``graphgrade grade`` says what it graded against,
and the commands that need the reference (validate, audit, bench, gradescope-bundle,
student-kit) say so in one line and exit 2.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import grader
from grader.commands import kit_marker
from grader.commands.bundles import (
    CONTRACT_NAME,
    DOCS_PACKAGE,
    PACKAGE_DATA,
    SPEC_SUFFIXES,
    BundleError,
    Entries,
    contract_path,
    default_lab_files,
    extra_requirement,
    installed_package_dirs,
    pyproject_toml,
    subpackages,
    walk,
    write_zip,
)
from grader.commands.cli_common import Subcommand
from grader.commands.kit_marker import KIT_FORMAT, KIT_MARKER
from grader.errors import UsageError
from grader.lab.loading import default_lab_root, load_lab

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: the same values, faster
ROOT = "graphgrade-kit/"  # pip strips a zip's single top-level folder; `unzip` keeps things tidy
KIT_PACKAGES = ("grader", "reports", "specs", "student_template")
FULL_PACKAGE_COMMANDS = ("validate", "audit", "bench", "gradescope-bundle", "student-kit")
# Files that cannot be scanned as text have no place in a kit.
BINARY_SUFFIXES = (
    ".pyc",
    ".pyo",
    ".so",
    ".pyd",
    ".pkl",
    ".pickle",
    ".npy",
    ".npz",
    ".zip",
    ".whl",
    ".gz",
    ".bz2",
    ".xz",
    ".db",
    ".sqlite",
)
MIN_REFERENCE_LINE = 30  # characters: shorter reference lines are too common to call distinctive
MIN_HIDDEN_TEXT = 20  # characters of a hidden title, hint, explanation or description


# ------------------------------------------------------------------ at run time
kit_info = kit_marker.kit_info  # grader/KIT.json (in a module of its own: see kit_marker)


def student_outputs_only() -> bool:
    """Grading with the student kit writes the student's own files only: report.html,
    report.json, results.json and junit.xml, never the staff's page (staff.html), and for a
    single submission no class summary (summary.html, grades.csv)."""
    return kit_info() is not None


def refuse_in_kit(command: str | None) -> None:
    """In a student kit, the commands that need the reference solution stop here, in one line."""
    if command in FULL_PACKAGE_COMMANDS and kit_info() is not None:
        raise UsageError(
            f"'graphgrade {command}' needs the instructor's full package (it uses the reference solution); "
            "this is the student kit, which grades your work with 'graphgrade grade'"
        )


def _bundled_specs_dir() -> Path | None:
    spec = importlib.util.find_spec("specs")
    return (
        Path(list(spec.submodule_search_locations)[0]).resolve() if spec and spec.submodule_search_locations else None
    )


def withheld_points(specs_dir) -> float:
    """Points of the hidden specs a kit left out, when grading against its bundled specs (else 0)."""
    info = kit_info()
    if info is None or _bundled_specs_dir() != Path(specs_dir).resolve():
        return 0.0
    points = info.get("hidden_points", 0)
    return float(points) if isinstance(points, (int, float)) and points > 0 else 0.0


def grading_note(specs_dir) -> str:
    """One line saying what a kit graded against ("" outside a kit, or for other specs)."""
    info = kit_info()
    if info is None or _bundled_specs_dir() != Path(specs_dir).resolve():
        return ""
    note = "graded against the public specs bundled in this student kit"
    if info.get("hidden_specs"):
        note += f"; {info['hidden_specs']} hidden specs worth {info.get('hidden_points', 0):g} points are graded by the autograder only"
    return note


# ------------------------------------------------------------------ what must never be in a kit
@dataclass(frozen=True)
class Secrets:
    """Fingerprints of what a kit must not hold: hidden specs and the reference's code."""

    texts: tuple[tuple[str, str], ...]  # (needle, what it is), needles whitespace-collapsed
    hidden_cases: tuple[tuple[str, str], ...]  # (canonical steps+checks JSON, "spec/case")
    hidden_spec_ids: frozenset[str]
    reference_lines: tuple[tuple[str, str], ...]  # (distinctive stripped line, file)
    reference_bodies: dict[str, str]  # ast.dump of a function body -> "file:function"


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _raw_specs(path: Path) -> list[dict]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    specs = data.get("specs") if isinstance(data, dict) else None
    return [s for s in specs if isinstance(s, dict)] if isinstance(specs, list) else []


def _case_key(case: Mapping) -> str:
    """A case's behaviour (steps and checks), independent of its id, description and layout."""
    return json.dumps({"steps": case.get("steps"), "checks": case.get("checks")}, sort_keys=True, default=str)


def _function_bodies(source: str) -> dict[str, str]:
    """``ast.dump`` of every function body with more than one statement, docstring left out."""
    bodies = {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return bodies
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = list(node.body)
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                body = body[1:]
            if len(body) > 1:
                bodies[ast.dump(ast.Module(body=body, type_ignores=[]))] = node.name
    return bodies


def _code_line(line: str) -> bool:
    s = line.strip()
    return (
        len(s) >= MIN_REFERENCE_LINE
        and not s.startswith(("import ", "from ", "#", "def ", "class ", "@", '"""', "'''", "return self."))
        and not set(s) <= set("#-=_ ")
    )


def collect_secrets(specs_dir, reference_dir: Path, template_dir: Path) -> Secrets:
    """What a kit built from ``specs_dir`` must not contain. Lines the reference shares with the
    student template (signatures, docstrings: the public contract) are not secret."""
    specs_dir = Path(specs_dir)
    texts: list[tuple[str, str]] = []
    cases: list[tuple[str, str]] = []
    ids: set[str] = set()
    visible_case_ids: set[str] = set()
    hidden: list[dict] = []
    for path in sorted(p for p in specs_dir.glob("*") if p.suffix in SPEC_SUFFIXES and p.is_file()):
        for spec in _raw_specs(path):
            if spec.get("visibility") == "visible":
                visible_case_ids.update(str(c.get("id")) for c in spec.get("cases") or [] if isinstance(c, dict))
            else:
                hidden.append(spec)
    for spec in hidden:
        sid = str(spec.get("id"))
        ids.add(sid)
        texts.append((sid, f"the hidden spec id {sid!r}"))
        for key in ("title", "explanation", "hint"):
            value = _collapse(str(spec.get(key) or ""))
            if len(value) >= MIN_HIDDEN_TEXT:
                texts.append((value, f"the {key} of hidden spec {sid!r}"))
        for case in spec.get("cases") or []:
            if not isinstance(case, dict):
                continue
            cid = str(case.get("id"))
            texts.append((f"{sid}/{cid}", f"the hidden case {sid}/{cid}"))
            if cid not in visible_case_ids and "-" in cid and len(cid) >= 10:
                texts.append((cid, f"the id of hidden case {sid}/{cid}"))
            desc = _collapse(str(case.get("description") or ""))
            if len(desc) >= MIN_HIDDEN_TEXT:
                texts.append((desc, f"the description of hidden case {sid}/{cid}"))
            cases.append((_case_key(case), f"{sid}/{cid}"))
    public = {
        line.strip()
        for p in walk(template_dir)
        if p.suffix == ".py"
        for line in p.read_text(encoding="utf-8").splitlines()
    }
    lines: dict[str, str] = {}
    bodies: dict[str, str] = {}
    for path in walk(reference_dir):
        if path.suffix != ".py":
            continue
        source = path.read_text(encoding="utf-8")
        where = f"reference/{path.relative_to(reference_dir).as_posix()}"
        for line in source.splitlines():
            if _code_line(line) and line.strip() not in public:
                lines.setdefault(line.strip(), where)
        for dump, name in _function_bodies(source).items():
            bodies.setdefault(dump, f"{where}:{name}")
    return Secrets(tuple(texts), tuple(cases), frozenset(ids), tuple(lines.items()), bodies)


def find_leaks(entries: Entries, secrets: Secrets) -> list[str]:
    """Every way ``entries`` would leak a secret, one line each (empty: the kit is clean)."""
    leaks: list[str] = []
    for name, (data, _mode) in sorted(entries.items()):
        parts = name.split("/")
        if "reference" in parts or "mutants" in parts:
            leaks.append(f"{name}: the reference solution and its mutants stay out of a kit")
            continue
        if name.lower().endswith(BINARY_SUFFIXES):
            leaks.append(f"{name}: a compiled or binary file cannot be checked for hidden content")
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            leaks.append(f"{name}: not UTF-8 text, so it cannot be checked for hidden content")
            continue
        flat = _collapse(text)
        leaks += [f"{name}: holds {what}" for needle, what in secrets.texts if needle in flat]
        leaks += [
            f"{name}: holds a line of {where}: {line[:60]!r}" for line, where in secrets.reference_lines if line in text
        ]
        if name.endswith(".py"):
            leaks += [
                f"{name}: holds the code of {secrets.reference_bodies[d]}"
                for d in _function_bodies(text)
                if d in secrets.reference_bodies
            ]
        if name.endswith(SPEC_SUFFIXES):
            leaks += _yaml_leaks(name, text, secrets)
    return leaks


def _yaml_leaks(name: str, text: str, secrets: Secrets) -> list[str]:
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError:
        return [f"{name}: not YAML that can be checked"]
    specs = data.get("specs") if isinstance(data, dict) else None
    hidden_keys = dict(secrets.hidden_cases)
    leaks = []
    for spec in specs if isinstance(specs, list) else []:
        if (
            not isinstance(spec, dict)
            or spec.get("visibility") != "visible"
            or spec.get("id") in secrets.hidden_spec_ids
        ):
            leaks.append(
                f"{name}: holds a spec that is not visible ({spec.get('id') if isinstance(spec, dict) else spec!r})"
            )
            continue
        for case in spec.get("cases") or []:
            if isinstance(case, dict) and _case_key(case) in hidden_keys:
                leaks.append(
                    f"{name}: case {case.get('id')!r} has the steps and checks of hidden case {hidden_keys[_case_key(case)]}"
                )
    return leaks


# ------------------------------------------------------------------ building
class _PlainDumper(yaml.SafeDumper):
    """Safe YAML without anchors (the loader refuses them)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def public_spec_files(specs_dir) -> tuple[dict[str, str], dict[str, float]]:
    """``{file name: YAML text}`` of the visible specs of each spec file (files with none are
    left out), and counts: public and hidden specs and points. Each file written is loaded
    back with the grader's own loader, so a kit never ships specs it cannot read."""
    from grader.suite.loader import SpecError, load_spec_text, spec_files

    paths = spec_files(specs_dir)
    if not paths:
        raise BundleError(f"{specs_dir}: no *.yaml spec files here")
    files: dict[str, str] = {}
    counts = {"public_specs": 0, "public_cases": 0, "public_points": 0.0, "hidden_specs": 0, "hidden_points": 0.0}
    for path in paths:
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
            specs = list(data["specs"])
            public = [s for s in specs if s["visibility"] == "visible"]
            counts["hidden_specs"] += len(specs) - len(public)
            counts["hidden_points"] += sum(float(s["points"]) for s in specs if s["visibility"] != "visible")
        except (OSError, ValueError, yaml.YAMLError, KeyError, TypeError) as exc:
            raise BundleError(
                f"{path}: not a spec file that loads ({type(exc).__name__}); run 'graphgrade validate'"
            ) from None
        if not public:
            continue
        body = yaml.dump(
            {"format": data["format"], "specs": public},
            Dumper=_PlainDumper,
            sort_keys=False,
            allow_unicode=True,
            width=100,
            default_flow_style=None,
        )
        text = f"# yaml-language-server: $schema=./schema.json\n# The public specs of {path.name}, as bundled in the graphgrade student kit.\n{body}"
        try:
            loaded = load_spec_text(text, f"kit:specs/{path.name}")
        except SpecError as exc:  # a round trip that changed meaning: a grader bug, never shipped
            raise BundleError(f"the public specs of {path} do not load back: {exc}") from None
        counts["public_specs"] += len(loaded.specs)
        counts["public_cases"] += sum(len(s.cases) for s in loaded.specs)
        counts["public_points"] += sum(s.points for s in loaded.specs)
        files[path.name] = text
    if not files:
        raise BundleError(f"{specs_dir}: no visible specs to put in a student kit")
    return files, counts


KIT_README = """\
# graphgrade student kit

The grader for the lab "{lab_title}", with the public specs ({public_specs}
specs, {public_cases} cases, {public_points:g} points). {hidden_line}

```bash
pip install graphgrade-kit.zip        # this file, from your course: installs `graphgrade`
unzip graphgrade-kit.zip              # graphgrade-kit/: the template and docs/contract.md
cp -r graphgrade-kit/student_template my-lab && cd my-lab    # then edit {module_file}
pytest -q                             # each public case as a test (the kit installs pytest)
graphgrade grade . --out report       # open report/my-lab/report.html
graphgrade repro SPEC/CASE            # one case as a script, to debug: ../my-lab-repro/SPEC--CASE.py
```

`docs/contract.md` says what your `{module_file}` must provide; `student_template/README.md`
says where to start. The kit holds no reference solution and no hidden case.
"""


def kit_entries(
    specs_dir, package_dirs: Mapping[str, Path] | None = None, contract: Path | None = None
) -> tuple[Entries, dict[str, float]]:
    """Every file of the kit (``{arcname: (bytes, mode)}``) and its counts; not checked for leaks."""
    from grader.suite.schema import build_schema

    dirs = dict(package_dirs) if package_dirs is not None else installed_package_dirs(KIT_PACKAGES)
    files, counts = public_spec_files(specs_dir)
    entries: Entries = {}
    packages: list[str] = [DOCS_PACKAGE]
    for name in KIT_PACKAGES:
        packages += subpackages(name, dirs[name])
        for path in walk(dirs[name]):
            if name == "specs" and path.name != "__init__.py":
                continue  # the instructor's specs, schema and authoring guide: replaced below
            entries[f"{ROOT}{name}/{path.relative_to(dirs[name]).as_posix()}"] = (path.read_bytes(), 0o644)
    lab_entries, lab_packages, lab_data = default_lab_files(ROOT)
    entries.update(lab_entries)
    packages += lab_packages
    for file_name, text in files.items():
        entries[f"{ROOT}specs/{file_name}"] = (text.encode(), 0o644)
    entries[f"{ROOT}specs/schema.json"] = ((json.dumps(build_schema(), indent=2) + "\n").encode(), 0o644)
    info = {"format": KIT_FORMAT, "grader_version": grader.__version__, **counts}
    entries[f"{ROOT}grader/{KIT_MARKER}"] = ((json.dumps(info, indent=1, sort_keys=True) + "\n").encode(), 0o644)
    entries[f"{ROOT}docs/{CONTRACT_NAME}"] = ((contract or contract_path()).read_bytes(), 0o644)
    hidden_line = (
        f"{counts['hidden_specs']} hidden specs worth {counts['hidden_points']:g} points are graded by the autograder only."
        if counts["hidden_specs"]
        else ""
    )
    lab = load_lab(default_lab_root())  # the lab the kit ships (default_lab_files): its title, the module file
    readme = KIT_README.format(hidden_line=hidden_line, lab_title=lab.title, module_file=lab.module_file, **counts)
    entries[f"{ROOT}README.md"] = (readme.encode(), 0o644)
    data = {k: [g for g in v if g != "*.md"] if k == "specs" else v for k, v in PACKAGE_DATA.items()}
    data["grader"] = [KIT_MARKER]
    data.update(lab_data)
    toml = pyproject_toml(
        sorted(packages),
        data,
        description="graphgrade student kit: the grader and the public specs",
        package_dir={DOCS_PACKAGE: "docs"},
        also_requires=(extra_requirement("pytest"),),  # `pytest -q` in the student's folder runs the public cases
    )
    entries[f"{ROOT}pyproject.toml"] = (toml.encode(), 0o644)
    return entries, counts


def build_student_kit(
    output, specs_dir, package_dirs: Mapping[str, Path] | None = None, reference_dir: Path | None = None
) -> dict[str, float]:
    """Write the student kit to ``output``; raises :class:`BundleError` (and writes nothing)
    when the kit would hold anything of a hidden spec or of the reference."""
    if kit_info() is not None:
        raise BundleError("this is a student kit; build kits with the instructor's full package")
    dirs = dict(package_dirs) if package_dirs is not None else installed_package_dirs(KIT_PACKAGES)
    reference = reference_dir or installed_package_dirs(("reference",))["reference"]
    entries, counts = kit_entries(specs_dir, dirs)
    leaks = find_leaks(entries, collect_secrets(specs_dir, reference, dirs["student_template"]))
    if leaks:
        more = f" (and {len(leaks) - 1} more)" if len(leaks) > 1 else ""
        raise BundleError(f"refusing to build a kit that leaks: {leaks[0]}{more}")
    write_zip(output, entries)
    return counts


# ------------------------------------------------------------------ the command
def run(args: argparse.Namespace) -> int:
    from grader.commands.cli_common import specs_how
    from grader.commands.validate import refuse_unless_valid

    if args.output.suffix != ".zip":
        raise UsageError(f"--output {args.output}: the kit is a zip that pip installs; name it *.zip")
    refuse_unless_valid(
        args.specs, specs_how(args), "student-kit"
    )  # the checks of validate, before anything is written
    try:
        counts = build_student_kit(args.output, args.specs)
    except BundleError as exc:
        raise UsageError(f"student-kit: {exc}") from None
    except OSError as exc:
        raise UsageError(f"--output {args.output}: cannot write the kit ({exc.strerror or exc})") from None
    print(
        f"wrote {args.output}: {counts['public_specs']:g} public specs ({counts['public_cases']:g} cases, {counts['public_points']:g} points); "
        f"{counts['hidden_specs']:g} hidden specs left out. Students install it with: pip install {args.output.name}",
        file=sys.stdout,
    )
    return 0


def add_arguments(k: argparse.ArgumentParser) -> None:
    k.add_argument(
        "--specs",
        type=Path,
        default=None,
        help="spec directory whose visible specs go into the kit (default: this checkout's specs/ when run inside one, else the installed suite)",
    )
    k.add_argument(
        "--output", type=Path, default=Path("graphgrade-kit.zip"), help="zip to write (default: graphgrade-kit.zip)"
    )


COMMAND = Subcommand(
    "student-kit",
    help="build the student kit: a zip students pip-install (grader, template, contract, public specs only)",
    description=(
        "Build the zip students install with 'pip install KIT.zip': the grader, the reports, the student "
        "template, the contract document and the visible specs. Hidden specs and the reference solution never go in; "
        "the build stops if anything of them would. The specs are checked first as `graphgrade validate` checks them."
    ),
    add_arguments=add_arguments,
    run=run,
)
