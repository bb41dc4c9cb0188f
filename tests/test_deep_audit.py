"""`graphgrade audit --deep`: systematic mutants of the reference, graded like students.

The fast tests check the mutant generator (every operator family, one change
per mutant, stable keys), the committed list of equivalent mutants, and the
score arithmetic. The slow ones grade a few functions' mutants through the
real isolated path, on the shipped suite and on a suite with a gap.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.commands.audit import AuditSetupError
from grader.commands.deep_audit import (
    EQUIVALENTS,
    DeepMutant,
    DeepResult,
    load_equivalents,
    target_file,
    target_name,
)
from grader.commands.mutation import generate_mutants
from reports.audit_text import format_deep_text

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
TARGET, TARGET_NAME = target_file(), target_name()  # the default lab's reference, reference/cudagraph.py
SOURCE = TARGET.read_text(encoding="utf-8")
MUTANTS = generate_mutants(TARGET, TARGET_NAME)
BY_SCOPE: dict[str, list] = {}
for _m in MUTANTS:
    BY_SCOPE.setdefault(_m.scope, []).append(_m)


def deep(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "audit", "--deep", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


# ------------------------------------------------------------------ the generator
def test_every_operator_family_is_applied_to_the_reference():
    families = {m.operator for m in MUTANTS}
    assert {
        "operator_swap_op",  # comparison and arithmetic operators, and/or (mutmut)
        "operator_number",  # n -> n + 1 (mutmut)
        "number_minus_one",  # n -> n - 1
        "operator_name",  # True <-> False (mutmut)
        "operator_arg_removal",  # f(a, b) -> f(b), f(None, b) (mutmut)
        "remove_statement",
        "return_none",
        "swap_arguments",
        "negate_condition",
    } <= families
    assert len(MUTANTS) > 200


@pytest.mark.parametrize(
    ("scope", "change"),
    [
        ("GraphRunner._padded_batch", "if size >= n: -> if size > n:"),
        ("GraphRunner._padded_batch", "if size >= n: -> if not (size >= n):"),
        ("fuse_elementwise.close_run", "if len(run) >= 2: -> if len(run) > 2:"),
        ("fuse_elementwise.close_run", "if len(run) >= 2: -> if len(run) >= 3:"),
        ("fuse_elementwise.close_run", "if len(run) >= 2: -> if len(run) >= 1:"),
        ("fuse_elementwise.close_run", "remove: run.clear()"),
        (
            "InferenceGraphCapture.__init__",
            "self.warmup_steps = max(1, warmup_steps) -> self.warmup_steps = max(warmup_steps, 1)",
        ),
        ("LaunchCounter.bump", "cls.n += k -> cls.n -= k"),
        ("GraphRunner._replay", "LaunchCounter.bump(1) -> LaunchCounter.bump(2)"),
        ("InferenceGraphCapture.is_captured", "return self.graph_id is not None -> return None"),
        (
            "InferenceGraphCapture.step_mode",
            "if not self._enabled or self._step_count < self.warmup_steps: -> if not self._enabled and self._step_count < self.warmup_steps:",
        ),
    ],
)
def test_expected_mutants_are_made(scope, change):
    changes = [m.change for m in BY_SCOPE[scope]]
    assert change in changes, f"{scope}: {changes}"


@pytest.mark.slow
def test_each_mutant_is_one_change_that_compiles_and_has_a_unique_stable_key():
    keys = [m.key for m in MUTANTS]
    assert len(keys) == len(set(keys))
    sources = [m.source for m in MUTANTS]
    assert len(sources) == len(set(sources)) and SOURCE not in sources
    original = SOURCE.splitlines()
    for m in MUTANTS:
        ast.parse(m.source)
        assert m.file == TARGET_NAME
        assert original[m.line - 1].strip() == m.line_text
        # the lines before the change are untouched
        assert m.source.splitlines()[: m.line - 1] == original[: m.line - 1]


@pytest.mark.slow
def test_docstrings_annotations_and_imports_are_not_mutated():
    protected = set()
    for node in ast.walk(ast.parse(SOURCE)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            protected.update(range(node.lineno, node.end_lineno + 1))
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node) is not None:
            doc = node.body[0]
            protected.update(range(doc.lineno, doc.end_lineno + 1))
    assert protected
    original_annotations = _annotations(SOURCE)
    for m in MUTANTS:
        assert m.line not in protected, m
        if m.operator != "remove_statement":  # removing `n: int = 0` removes its annotation too
            assert _annotations(m.source) == original_annotations, m
    assert all(m.scope != "<module>" for m in MUTANTS)


def _annotations(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg) and node.annotation is not None:
            found.append(ast.unparse(node.annotation))
        elif isinstance(node, ast.FunctionDef) and node.returns is not None:
            found.append(ast.unparse(node.returns))
        elif isinstance(node, ast.AnnAssign):
            found.append(ast.unparse(node.annotation))
    return sorted(found)


def test_only_restricts_to_matching_functions():
    picked = generate_mutants(TARGET, TARGET_NAME, only=lambda scope: scope == "GraphRunner._load")
    assert picked and {m.scope for m in picked} == {"GraphRunner._load"}
    assert [m.key for m in picked] == [m.key for m in BY_SCOPE["GraphRunner._load"]]


# ------------------------------------------------------------------ the equivalent mutants
def test_every_listed_equivalent_names_a_mutant_that_is_made_and_gives_a_reason():
    listed = load_equivalents()
    assert listed, f"{EQUIVALENTS} is empty"
    keys = {m.key for m in MUTANTS}
    stale = [e for e in listed if e.key not in keys]
    assert not stale, f"entries matching no mutant: {stale}"
    assert len({e.key for e in listed}) == len(listed)
    assert all(len(e.reason.split()) >= 4 for e in listed)


@pytest.mark.parametrize(
    "text",
    [
        "equivalent: 3\n",
        "equivalent:\n  - {file: a, scope: b, line: c, change: d}\n",
        "equivalent:\n  - {file: a, scope: b, line: c, change: d, reason: e, extra: f}\n",
        "equivalent:\n  - {file: a, scope: b, line: c, change: d, reason: ''}\n",
        "[unclosed\n",
    ],
)
def test_a_malformed_equivalents_file_is_a_setup_error(tmp_path, text):
    path = tmp_path / "equivalent.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AuditSetupError, match="equivalent"):
        load_equivalents(path)


# ------------------------------------------------------------------ the score
def _m(change: str, killed: tuple[str, ...] = (), equivalent: str = "") -> DeepMutant:
    return DeepMutant(TARGET_NAME, 10, "f", "x = 1", change, killed, equivalent)


def test_score_counts_killed_over_non_equivalent_and_names_survivors():
    result = DeepResult(
        (_m("a", ("s/c",)), _m("b"), _m("c", (), "no observable effect"), _m("d", ("s/c",), "wrongly listed")),
        (),
        (),
        1.0,
        0,
        ("s/c", "s/d"),
    )
    assert len(result.killed) == 2 and len(result.equivalent) == 1 and [m.change for m in result.survived] == ["b"]
    assert result.score == pytest.approx(100 * 2 / 3)
    assert not result.ok
    data = result.to_json()["deep"]
    assert (data["mutants"], data["killed"], data["equivalent"]) == (4, 2, 1)
    assert data["survived"] == [{"file": TARGET_NAME, "line": 10, "change": "b", "scope": "f", "line_text": "x = 1"}]
    assert [m["change"] for m in data["listed_equivalent_but_killed"]] == ["d"]
    assert result.kills_per_case() == {"s/c": 2, "s/d": 0}


def test_all_killed_or_equivalent_is_ok():
    result = DeepResult((_m("a", ("s/c",)), _m("c", (), "no observable effect")), ())
    assert result.ok and result.score == 100.0


def _outside(change: str, killed: tuple[str, ...] = ()) -> DeepMutant:
    return DeepMutant(TARGET_NAME, 12, "g", "y = 2", change, killed, "", "the contract leaves this to the student")


def test_a_mutant_outside_the_contract_is_left_out_of_the_score_and_recorded_with_its_reason():
    result = DeepResult((_m("a", ("s/c",)), _m("b"), _outside("o")), ())
    assert [m.change for m in result.outside_contract] == ["o"] and [m.change for m in result.survived] == ["b"]
    assert result.score == pytest.approx(50.0)  # 1 killed of 2: the outside one counts neither way
    data = result.to_json()["deep"]
    assert data["outside_contract"] == [
        {
            "file": TARGET_NAME,
            "line": 12,
            "change": "o",
            "scope": "g",
            "line_text": "y = 2",
            "reason": "the contract leaves this to the student",
        }
    ]
    text = format_deep_text(result)
    assert "Outside the contract" in text and "the contract leaves this to the student" in text
    assert "1 outside the contract" in text


def test_a_case_that_kills_a_mutant_outside_the_contract_fails_the_deep_audit():
    """Such a case grades what the contract leaves open: the suite is stricter than its contract."""
    result = DeepResult((_m("a", ("s/c",)), _outside("o", ("s/d",))), ())
    assert not result.ok and result.score == 100.0
    assert [m["change"] for m in result.to_json()["deep"]["outside_contract_but_killed"]] == ["o"]
    assert "grades what the contract leaves open" in format_deep_text(result)


def test_the_outside_list_is_read_with_the_equivalent_one(tmp_path):
    entry = "{file: a, scope: b, line: c, change: d, reason: left to the student here}"
    path = tmp_path / "equivalent.yaml"
    path.write_text(f"equivalent: []\noutside_contract:\n  - {entry}\n", encoding="utf-8")
    (listed,) = load_equivalents(path)
    assert listed.outside and listed.key == ("a", "b", "c", "d")
    path.write_text("outside_contract:\n  - {file: a}\n", encoding="utf-8")
    with pytest.raises(AuditSetupError, match="outside_contract"):
        load_equivalents(path)


# ------------------------------------------------------------------ the real thing, on a few functions
@pytest.mark.slow
def test_deep_audit_of_a_few_functions_kills_everything_through_the_student_path():
    proc = deep("--only", "LaunchCounter.bump", "--only", "GraphRunner._padded_batch", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)["deep"]
    expected = len(BY_SCOPE["LaunchCounter.bump"]) + len(BY_SCOPE["GraphRunner._padded_batch"])
    assert data["mutants"] == expected
    assert data["killed"] + data["equivalent"] == expected
    assert data["survived"] == [] and data["ok"] is True and data["reference_failures"] == []


@pytest.mark.slow
def test_a_gap_in_the_suite_shows_as_survivors_with_file_line_and_change(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(SPECS, specs)
    (specs / "01_launch_counter.yaml").unlink()  # nothing else calls LaunchCounter.reset
    proc = deep("--specs", str(specs), "--only", "LaunchCounter.reset")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Survivors" in proc.stdout and f"{TARGET_NAME}:" in proc.stdout
    assert "remove: cls.n = 0" in proc.stdout
    assert proc.stdout.rstrip().splitlines()[-1].startswith("FAILED: mutation score")


def test_deep_refuses_html_and_bad_jobs_with_one_line():
    proc = deep("--html", "x.html")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--deep" in proc.stderr
    proc = deep("--jobs", "0")
    assert proc.returncode == 2 and "--jobs" in proc.stderr


def test_the_deep_audit_mutates_the_active_labs_reference_and_names_it_by_folder_and_file():
    assert TARGET == ROOT / "reference" / "cudagraph.py" and TARGET_NAME == "reference/cudagraph.py"
