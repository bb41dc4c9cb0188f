"""The named mutants are plain-text edits of the reference, so the reference stays refactorable.

Each mutant in ``reference/mutants/`` declares ``EDITS``, pairs of (text of
``reference/cudagraph.py``, replacement), and runs the edited source as itself
(``reference/mutants/_base.py``). These tests pin that down: no mutant or
baseline monkeypatches the reference or names one of its private attributes;
an edit whose text is gone fails loudly, in one line naming the mutant file and
the text, and the audit reports that mutant as broken; and renaming every
private name of the reference that no edit mentions leaves every mutant
applying.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import re
import shutil
import traceback
from pathlib import Path

import pytest

import reference
from grader.commands.audit import Subject
from grader.lab import active as active_lab
from reference.mutants._base import REFERENCE_SOURCE, MutantEditError, apply_edits
from reports.audit_text import format_text

MUTANTS_DIR = active_lab().paths.mutants
BASELINES_DIR = MUTANTS_DIR / "baselines"

ROOT = Path(__file__).resolve().parents[1]
MUTANT_FILES = sorted(p for p in MUTANTS_DIR.glob("*.py") if not p.name.startswith("_"))
BASELINE_FILES = sorted(p for p in BASELINES_DIR.glob("*.py") if not p.name.startswith("_"))
_serial = itertools.count()


def _edits(path: Path) -> tuple[tuple[str, str], ...] | None:
    """A module's ``EDITS``, read as data (never imported), or None when it has none."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EDITS" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


EDITS = {p: _edits(p) for p in MUTANT_FILES + BASELINE_FILES}
EDITED = {p: e for p, e in EDITS.items() if e is not None}


def _import_file(path: Path):
    spec = importlib.util.spec_from_file_location(f"_test_mutant_{next(_serial)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mutant_file(directory: Path, edits, name: str = "made_up_mistake.py") -> Path:
    path = directory / name
    path.write_text(
        '"""A made-up mistake."""\n\n'
        "from reference.mutants._base import run_edited_reference\n\n"
        'TAG = "launch-counter"\n\n'
        f"EDITS = {edits!r}\n\n"
        "run_edited_reference(globals(), EDITS)\n",
        encoding="utf-8",
    )
    return path


# ------------------------------------------------------------------ what a mutant file may hold
@pytest.mark.parametrize("path", MUTANT_FILES, ids=lambda p: p.stem)
def test_a_mutant_is_its_docstring_tag_and_plain_text_edits(path: Path):
    """Docstring, the one import, TAG, EDITS as literal (before, after) strings, and the call that
    runs the edited reference: nothing else, so nothing is patched by name."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    kinds = []
    for node in body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            kinds.append("docstring")
        elif isinstance(node, ast.ImportFrom) and node.module == "reference.mutants._base":
            if [a.name for a in node.names] != ["run_edited_reference"]:
                names = [a.name for a in node.names]
                pytest.fail(f"{path.name}:{node.lineno}: a mutant imports run_edited_reference alone, not {names}")
            kinds.append("import")
        elif isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] in (["TAG"], ["EDITS"]):
            kinds.append(node.targets[0].id)
        elif isinstance(node, ast.Expr) and ast.unparse(node) == "run_edited_reference(globals(), EDITS)":
            kinds.append("run")
        else:
            statement = ast.unparse(node)
            pytest.fail(f"{path.name}:{node.lineno}: a mutant holds only its docstring, TAG and EDITS: {statement}")
    assert kinds == ["docstring", "import", "TAG", "EDITS", "run"], f"{path.name}: {kinds}"
    edits = EDITS[path]
    assert edits and all(isinstance(e, tuple) and len(e) == 2 and all(isinstance(s, str) for s in e) for e in edits)
    assert all(before and before != after for before, after in edits), f"{path.name}: an edit that changes nothing"


@pytest.mark.parametrize("path", MUTANT_FILES + BASELINE_FILES, ids=lambda p: p.stem)
def test_no_mutant_or_baseline_patches_the_reference_or_names_its_private_attributes(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    copies = set()  # names bound to fresh_reference(...): a private copy of the reference
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            pytest.fail(f"{path.name}:{node.lineno}: names the attribute {node.attr} (an edit is plain text instead)")
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("setattr", "delattr"):
            pytest.fail(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
        is_call = isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        if is_call and getattr(node.value.func, "id", None) == "fresh_reference":
            copies.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if isinstance(node, (ast.ImportFrom, ast.Import)):
            modules = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            assert "reference.cudagraph" not in modules, f"{path.name}:{node.lineno}: imports the reference itself"
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            targets = []
        for target in targets:
            root = target
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if target is not root and isinstance(root, ast.Name) and root.id in copies:
                pytest.fail(f"{path.name}:{node.lineno}: monkeypatches the reference: {ast.unparse(target)}")


def test_the_checks_above_catch_the_old_way_of_writing_a_mutant(tmp_path):
    """The scan fails on a mutant written as before: a copy of the reference with a method replaced."""
    old = tmp_path / "old_style.py"
    old.write_text(
        '"""Old style."""\n\nfrom reference.mutants._base import export, fresh_reference\n\nTAG = "padding"\n\n'
        "ref = fresh_reference(__name__)\n"
        "ref.GraphRunner._real_rows = lambda self, output, x: output\n"
        "export(ref, globals())\n",
        encoding="utf-8",
    )
    with pytest.raises(pytest.fail.Exception, match="names the attribute _real_rows"):
        test_no_mutant_or_baseline_patches_the_reference_or_names_its_private_attributes(old)
    old_import = r"imports run_edited_reference alone, not \['export', 'fresh_reference'\]"
    with pytest.raises(pytest.fail.Exception, match=old_import):
        test_a_mutant_is_its_docstring_tag_and_plain_text_edits(old)


def test_every_mutant_and_the_always_eager_baseline_are_edits():
    assert set(EDITED) == set(MUTANT_FILES) | {BASELINES_DIR / "always_eager.py"}


# ------------------------------------------------------------------ an edit that no longer applies
def test_an_edit_whose_text_is_gone_fails_in_one_line_naming_the_mutant_and_the_text(tmp_path):
    path = _mutant_file(tmp_path, (("cls.n += k", "cls.n += 1"), ("def no_such_helper(self):", "def f(self):")))
    with pytest.raises(MutantEditError) as caught:
        _import_file(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("made_up_mistake.py: edit 2 of 2: ")
    assert "'def no_such_helper(self):' is not in reference/cudagraph.py" in message


def test_an_edit_whose_text_occurs_twice_fails_too(tmp_path):
    path = _mutant_file(tmp_path, (("        return x\n", "        return -x\n"),))
    twice = r"made_up_mistake\.py: edit 1 of 1: ' +return x' occurs 2 times in reference/cudagraph\.py"
    with pytest.raises(MutantEditError, match=twice):
        _import_file(path)


@pytest.mark.parametrize(
    "edits",
    [(), (("cls.n += k",),), ("cls.n += k", "cls.n += 1"), (("", "x"),)],
    ids=["none", "no-after", "not-pairs", "empty-before"],
)
def test_malformed_edits_fail_with_the_file_named(tmp_path, edits):
    path = _mutant_file(tmp_path, edits)
    with pytest.raises(MutantEditError, match=r"^made_up_mistake\.py: "):
        _import_file(path)


def test_a_long_missing_text_is_cut_but_the_line_stays_one_line():
    with pytest.raises(MutantEditError) as caught:
        apply_edits("x = 1\n", (("a line\nthat spans " + "many words " * 20, "y"),), "reference/mutants/m.py")
    message = str(caught.value)
    assert "\n" not in message and len(message) < 250 and "'a line\\nthat spans many words" in message


def test_a_traceback_through_an_edited_line_shows_the_edited_text(tmp_path):
    module = _import_file(_mutant_file(tmp_path, (("cls.n += k", "cls.n += k // 0"),)))
    with pytest.raises(ZeroDivisionError) as caught:
        module.LaunchCounter.bump(3)
    text = "".join(traceback.format_exception(caught.value))
    assert "cls.n += k // 0" in text and "edited by" in text
    assert module.__doc__ == "A made-up mistake."  # its own docstring, not the reference's
    assert module.LaunchCounter is not reference.LaunchCounter


def test_the_audit_reports_a_mutant_whose_edit_is_gone_as_broken(tmp_path, monkeypatch):
    """Through the isolated path that grades students: broken (named, with the missing text), not killed."""
    import grader.commands.audit as audit

    edits = (("cls.n = 0\n", "pass\n"), ("def no_such_helper(self):", "def f(self):"))
    broken = _mutant_file(tmp_path, edits, "stale_edit.py")
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(ROOT / "specs" / "01_launch_counter.yaml", specs)
    monkeypatch.setattr(audit, "discover_mutants", lambda: [Subject("stale_edit", broken, "A made-up mistake.")])
    monkeypatch.setattr(audit, "discover_baselines", lambda: [])
    result = audit.run_audit(specs, jobs=1)
    assert [m.name for m in result.broken] == ["stale_edit"] and not result.ok
    problem = result.mutants[0].problem
    assert "MutantEditError" in problem and "edit 2 of 2" in problem
    assert "'def no_such_helper(self):' is not in reference/cudagraph.py" in problem
    assert "\n" not in problem
    assert "BROKEN   stale_edit" in format_text(result)


# ------------------------------------------------------------------ the point: the reference can be refactored
def _private_names(source: str) -> set[str]:
    return set(re.findall(r"\b_[A-Za-z]\w*\b", source)) - {n for n in re.findall(r"\b__\w+__\b", source)}


def test_renaming_the_private_names_no_edit_mentions_leaves_every_mutant_applying():
    """A refactor of a temporary copy of the reference: rename every private name (helper methods,
    attributes, classes) that no edit's text mentions. The old mutants replaced GraphRunner._capture,
    GraphRunner._graph_key and _FusedElementwise by name and broke on such a rename; every mutant now
    still applies, compiles and exposes the contract."""
    source = REFERENCE_SOURCE.read_text(encoding="utf-8")
    all_text = "\n".join(part for edits in EDITED.values() for edit in edits for part in edit)
    free = sorted(n for n in _private_names(source) if not re.search(rf"\b{n}\b", all_text))
    assert {"_capture", "_graph_key", "_FusedElementwise"} <= set(free), free
    refactored = source
    for name in free:
        refactored = re.sub(rf"\b{name}\b", f"_renamed{name}", refactored)
    assert refactored != source and not set(free) & _private_names(refactored)
    for path, edits in EDITED.items():
        edited = apply_edits(refactored, edits, str(path))
        namespace = {"__name__": f"_test_refactored_{path.stem}"}
        code = compile(edited, f"{path.stem} on the refactored reference", "exec", dont_inherit=True)
        exec(code, namespace)  # noqa: S102 - our own sources
        assert all(name in namespace for name in reference.CONTRACT_NAMES), path.name
    # and the refactored reference is still the reference: capture, then a one-launch replay
    namespace = {"__name__": "_test_refactored_reference"}
    exec(compile(refactored, "refactored reference", "exec", dont_inherit=True), namespace)  # noqa: S102
    import numpy as np

    runner = namespace["GraphRunner"]([lambda x: x + 1, lambda x: x * 2], capture_sizes=[4])
    counter = namespace["LaunchCounter"]
    counter.reset()
    first, second = runner(np.ones((3, 2))), runner(np.zeros((2, 2)))
    assert counter.n == 3 and runner.num_captured == 1
    assert np.array_equal(first, np.full((3, 2), 4.0)) and np.array_equal(second, np.full((2, 2), 2.0))


def test_an_edit_on_text_the_refactor_did_change_is_what_stops_applying():
    """The flip side, so the test above can fail: renaming a name an edit mentions breaks that mutant."""
    source = REFERENCE_SOURCE.read_text(encoding="utf-8").replace("_eager_calls", "_warmups_done")
    stale = [p.stem for p, edits in EDITED.items() if _applies(source, edits, p) is not None]
    assert stale == ["warmup_counted_globally", "warmup_off_by_one"]


def _applies(source: str, edits, path: Path) -> str | None:
    try:
        apply_edits(source, edits, str(path))
    except MutantEditError as exc:
        return str(exc)
    return None
