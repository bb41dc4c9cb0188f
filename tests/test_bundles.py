"""The archives graphgrade builds from itself (grader/commands/bundles.py, grader/commands/kit.py): the Gradescope
autograder zip and the student kit, from the installed packages. The installs themselves (a
plain ``pip install .``, the kit in a fresh venv) are in test_install.py."""

from __future__ import annotations

import io
import json
import shutil
import stat
import subprocess
import zipfile
from dataclasses import fields, is_dataclass
from pathlib import Path

import kit_secrets
import pytest
import tomllib
import yaml
from support.shipped import shipped_suite

import grader
from grader.commands import kit
from grader.commands.bundles import BundleError, build_bundle, bundle_entries
from grader.commands.cli import main
from grader.errors import UsageError
from grader.suite.loader import load_suite

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "specs"


# ------------------------------------------------------------------ the Gradescope autograder zip
def _fake_packages(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "proj"
    shutil.copytree(REPO / "reports", root / "reports", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "grader" / "run" / "worker").mkdir(parents=True)
    (root / "grader" / "__init__.py").write_text("")
    (root / "grader" / "run" / "worker" / "__init__.py").write_text("")
    (root / "grader" / "__pycache__").mkdir()
    (root / "grader" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (root / "reference" / "tests").mkdir(parents=True)
    (root / "reference" / "__init__.py").write_text("")
    (root / "reference" / "tests" / "test_x.py").write_text("")
    (root / "specs").mkdir()
    (root / "specs" / "__init__.py").write_text("")
    (root / "specs" / "schema.json").write_text("{}")
    (root / "specs" / "kit-own.yaml").write_text("expected: 987654321\n")
    (root / "student_template").mkdir()
    (root / "student_template" / "cudagraph.py").write_text("# stub\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: x\n")
    return {name: root / name for name in ("grader", "reference", "reports", "specs", "student_template")}


def test_build_bundle(tmp_path):
    packages = _fake_packages(tmp_path)
    specs = tmp_path / "course-specs"
    specs.mkdir()
    (specs / "padding.yaml").write_text("cases: [{id: hidden, visibility: hidden}]\n")
    zpath = build_bundle(tmp_path / "dist" / "autograder.zip", specs, packages)
    assert zpath == tmp_path / "dist" / "autograder.zip"
    with zipfile.ZipFile(zpath) as zf:
        names = zf.namelist()
        assert names[:2] == ["setup.sh", "run_autograder"]
        for script in ("setup.sh", "run_autograder"):
            mode = zf.getinfo(script).external_attr >> 16
            assert mode & stat.S_IXUSR and stat.S_ISREG(mode)
        assert "specs/padding.yaml" in names
        for want in (
            "kit/pyproject.toml",
            "kit/README.md",
            "kit/reports/html.py",
            "kit/reports/templates/submission.html.j2",
            "kit/grader/__init__.py",
            "kit/specs/schema.json",
            "kit/student_template/cudagraph.py",
            "kit/docs/contract.md",
        ):
            assert want in names, want
        for name in names:
            assert "__pycache__" not in name and ".git/" not in name and not name.endswith(".pyc")
            assert "/tests/" not in name and not name.startswith(("tests/", "kit/tests/"))
        # The kit's own spec cases stay out of what pip installs into site-packages.
        assert not any(n.startswith("kit/specs/") and n.endswith(".yaml") for n in names)
        run = zf.read("run_autograder").decode()
        setup = zf.read("setup.sh").decode()
        toml = tomllib.loads(zf.read("kit/pyproject.toml").decode())
    assert toml["project"]["name"] == "graphgrade" and toml["project"]["version"] == grader.__version__
    assert toml["project"]["scripts"] == {"graphgrade": "grader.commands.cli:main"}
    assert any(d.startswith("numpy") for d in toml["project"]["dependencies"])
    assert not any("pytest" in d for d in toml["project"]["dependencies"])  # no test extra
    assert set(toml["tool"]["setuptools"]["packages"]) == {
        "grader",
        "grader.run.worker",
        "grader.docs",
        "reference",
        "reports",
        "reports.view",
        "specs",
        "student_template",
        "labs",  # the default lab the install grades: labs/DEFAULT and its folder, no other lab
        "labs.cudagraph",
        "labs.cudagraph.pack",
        "labs.cudagraph.pack.checks",  # the lab's own check kinds
    }
    assert "kit/labs/cudagraph/pack/checks/launches.py" in names
    assert "kit/labs/DEFAULT" in names and "kit/labs/cudagraph/lab.yaml" in names
    assert not any(n.startswith("kit/labs/decode_step") for n in names)
    assert toml["tool"]["setuptools"]["package-data"]["labs.cudagraph"] == ["lab.yaml"]
    assert "*.yaml" not in toml["tool"]["setuptools"]["package-data"]["specs"]
    assert (
        'graphgrade grade "$ROOT/submission" --specs "$SRC/specs" --out "$OUT" --visibility all' in run
        and "ROOT=/autograder\n" in run
        and "SRC=$ROOT/source" in run
        and "OUT=$ROOT/graphgrade-out" in run
    )
    # started from the submission's folder, nothing it runs imports from there (issue 31)
    assert "\ncd /\n" in run and "python3 -c" not in run and "python3 -I -c" in run
    # the whole source folder (the specs' hidden cases) and the installed reference and specs
    # packages are root-only before any submission runs
    assert 'chmod -R go-rwx "$SRC"' in run and run.index('chmod -R go-rwx "$SRC"') < run.index(
        'graphgrade grade "$ROOT/submission"'
    )
    assert "for pkg in reference specs" in run and run.index("for pkg in reference specs") < run.index(
        'graphgrade grade "$ROOT/submission"'
    )
    assert '"$OUT/submission/results.json" "$ROOT/results/results.json"' in run
    assert "apt-get install" in setup and "pip install" in setup and '"$ROOT/source/kit"' in setup
    assert run.startswith("#!") and setup.startswith("#!")
    if shutil.which("bash"):
        for script in (run, setup):
            subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    # reproducible
    again = build_bundle(tmp_path / "again.zip", specs, packages)
    assert again.read_bytes() == zpath.read_bytes()


def test_build_bundle_errors(tmp_path):
    packages = _fake_packages(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BundleError, match="no \\*.yaml spec files"):
        build_bundle(tmp_path / "x.zip", empty, packages)
    with pytest.raises(BundleError, match="no such specs directory"):
        build_bundle(tmp_path / "x.zip", tmp_path / "missing", packages)
    assert not (tmp_path / "x.zip").exists()
    # specs_dir may be the kit's own specs folder: then its YAML is the graded set.
    entries = bundle_entries(packages["specs"], packages)
    assert "specs/kit-own.yaml" in entries and "kit/specs/kit-own.yaml" not in entries


def test_bundle_from_the_installed_packages_needs_no_source_tree(tmp_path, monkeypatch):
    """The bug of issue 11: the builder looked for pyproject.toml beside the packages."""
    monkeypatch.chdir(tmp_path)
    assert main(["gradescope-bundle", "--output", str(tmp_path / "b.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "b.zip") as zf:
        names = set(zf.namelist())
        assert {
            "kit/reference/cudagraph.py",
            "kit/grader/commands/cli.py",
            "kit/docs/contract.md",
            "specs/01_launch_counter.yaml",
        } <= names
        assert zf.read("kit/pyproject.toml") != (REPO / "pyproject.toml").read_bytes()  # written, not copied


# ------------------------------------------------------------------ the student kit
@pytest.fixture(scope="module")
def built_kit(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kit") / "graphgrade-kit.zip"
    counts = kit.build_student_kit(out, SPECS)
    suite = shipped_suite().suite
    shown = [s for s in suite.specs if s.visibility == "visible"]
    assert counts["public_specs"] == len(shown) and counts["hidden_specs"] == len(suite.specs) - len(shown) > 0
    return out


def _members(zip_path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(zip_path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_kit_holds_what_a_student_needs(built_kit):
    members = _members(built_kit)
    assert all(name.startswith("graphgrade-kit/") for name in members)
    names = {name.removeprefix("graphgrade-kit/") for name in members}
    for want in (
        "pyproject.toml",
        "README.md",
        "docs/contract.md",
        "grader/commands/cli.py",
        "grader/run/worker/sandbox.py",
        "grader/KIT.json",
        "reports/html.py",
        "reports/templates/submission.html.j2",
        "student_template/cudagraph.py",
        "student_template/README.md",
        "specs/__init__.py",
        "specs/schema.json",
        "specs/01_launch_counter.yaml",
    ):
        assert want in names, want
    assert not any(
        n.startswith(("reference/", "tests/"))
        or "mutants" in n
        or n.endswith((".pyc", ".md"))
        and n.startswith("specs/")
        for n in names
    )
    info = json.loads(members["graphgrade-kit/grader/KIT.json"])
    assert info["grader_version"] == grader.__version__ and info["hidden_specs"] > 0 and info["hidden_points"] > 0
    toml = tomllib.loads(members["graphgrade-kit/pyproject.toml"].decode())
    assert "reference" not in " ".join(toml["tool"]["setuptools"]["packages"])
    assert toml["tool"]["setuptools"]["package-data"]["grader"] == ["KIT.json"]
    # `pytest -q` in the student's folder works after `pip install kit.zip` (issue 34, point 4)
    assert [d for d in toml["project"]["dependencies"] if d.startswith("pytest")] == ["pytest>=7.4"]


def test_kit_specs_are_exactly_the_public_specs_with_the_same_meaning(built_kit, tmp_path):
    with zipfile.ZipFile(built_kit) as zf:
        zf.extractall(tmp_path)
    kit_suite = load_suite(tmp_path / "graphgrade-kit" / "specs").suite
    full = shipped_suite().suite

    def meaning(value):  # where a thing is written (file, line) is not what it means
        if is_dataclass(value):
            return {f.name: meaning(getattr(value, f.name)) for f in fields(value) if f.name not in ("file", "line")}
        if isinstance(value, (tuple, list)):
            return [meaning(v) for v in value]
        return value.tolist() if hasattr(value, "tolist") else value

    assert [s.id for s in kit_suite.specs] == [s.id for s in full.specs if s.visibility == "visible"]
    assert meaning(kit_suite.specs) == meaning(tuple(s for s in full.specs if s.visibility == "visible"))


def test_kit_holds_nothing_hidden_and_no_reference_code(built_kit):
    assert kit_secrets.scan_zip(built_kit, kit_secrets.needles()) == []


def test_the_kit_scanner_finds_what_it_looks_for(built_kit):
    """The scanner above can fail: each form of a planted secret is found."""
    n = kit_secrets.needles()
    hidden = next(
        s for s in yaml.safe_load((SPECS / "02_eager.yaml").read_text())["specs"] if s["visibility"] != "visible"
    )
    sid, desc = hidden["id"], " ".join(hidden["cases"][0]["description"].split())
    ref_line = next(needle for needle, what in n.texts.items() if what == "a line of reference/cudagraph.py")
    import base64
    import gzip
    import marshal
    import pickle

    planted = {
        "a.txt": f"see {sid}".encode(),
        "b.txt": desc.encode("utf-16-le"),
        "c.txt": base64.b64encode(b"xx" + desc.encode()),
        "d.txt": desc.encode().hex().encode(),
        "e.json": json.dumps({"k": desc}, ensure_ascii=True).encode(),
        "f.pyc": b"\0" * 16 + marshal.dumps(compile(f"X = {desc!r}", "f", "exec")),
        "g.bin": pickle.dumps({"x": 1}),
        "h.gz": gzip.compress(sid.encode()),
        "i.yaml": yaml.safe_dump(
            {"format": 1, "specs": [{**hidden, "id": "renamed", "visibility": "visible"}]}
        ).encode(),
        "j.py": ref_line.encode(),
        "k.py": (REPO / "reference" / "cudagraph.py").read_text().replace('"""', "'''").encode(),
    }
    for name, data in planted.items():
        assert kit_secrets.scan_bytes(name, data, n), f"{name}: the planted secret was not found"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("nested/x.md", sid)
    assert kit_secrets.scan_bytes("nested.zip", buf.getvalue(), n)


def _specs_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "specs"
    shutil.copytree(SPECS, dest)
    return dest


def _edit_visible(path: Path, edit) -> None:
    data = yaml.safe_load(path.read_text())
    spec = next(s for s in data["specs"] if s["visibility"] == "visible")
    edit(spec, next(s for s in data["specs"] if s["visibility"] != "visible"))
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.slow
@pytest.mark.parametrize(
    "plant, expect",
    [
        (lambda v, h: v.update(hint=v["hint"] + f" Also see {h['id']}."), "hidden spec id"),
        (
            lambda v, h: v.update(explanation=v["explanation"] + " " + h["cases"][0]["description"]),
            "description of hidden case",
        ),
        (
            lambda v, h: v["cases"].append(
                {**h["cases"][0], "id": "innocent-looking", "description": "A harmless case."}
            ),
            "steps and checks of hidden case",
        ),
    ],
    ids=["hidden-id-in-a-hint", "hidden-description", "hidden-case-renamed"],
)
def test_builder_refuses_a_kit_that_would_leak_a_hidden_spec(tmp_path, plant, expect):
    specs = _specs_copy(tmp_path)
    _edit_visible(specs / "03_shape_cache.yaml", plant)
    out = tmp_path / "kit.zip"
    with pytest.raises(BundleError, match=f"refusing to build a kit that leaks: .*{expect}"):
        kit.build_student_kit(out, specs)
    assert not out.exists()


def test_builder_refuses_reference_code_in_the_template(tmp_path):
    dirs = {name: REPO / name for name in kit.KIT_PACKAGES}
    template = tmp_path / "student_template"
    shutil.copytree(REPO / "student_template", template, ignore=shutil.ignore_patterns("__pycache__"))
    (template / "helpers.py").write_text((REPO / "reference" / "cudagraph.py").read_text())
    with pytest.raises(
        BundleError,
        match="refusing to build a kit that leaks: graphgrade-kit/student_template/helpers.py: holds .*reference/",
    ):
        kit.build_student_kit(tmp_path / "kit.zip", SPECS, {**dirs, "student_template": template})


def test_find_leaks_refuses_the_reference_and_unreadable_files():
    secrets = kit.collect_secrets(SPECS, REPO / "reference", REPO / "student_template")
    entries = {
        "graphgrade-kit/reference/__init__.py": (b"", 0o644),
        "graphgrade-kit/grader/x.cpython-311.pyc": (b"\0", 0o644),
        "graphgrade-kit/grader/blob.txt": (b"\xff\xfe", 0o644),
        "graphgrade-kit/grader/ok.py": (b"x = 1\n", 0o644),
    }
    leaks = kit.find_leaks(entries, secrets)
    assert len(leaks) == 3 and not any("ok.py" in leak for leak in leaks)


def _errors(err: str) -> str:
    """stderr without the line saying which specs were read."""
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith("graphgrade: specs: "))


@pytest.mark.slow
def test_cli_student_kit(tmp_path, capsys):
    out = tmp_path / "k.zip"
    assert main(["student-kit", "--output", str(out)]) == 0
    assert "public specs" in capsys.readouterr().out and out.is_file()
    with zipfile.ZipFile(out) as zf:  # the README names the lab's title and module file, from its lab.yaml
        readme = zf.read(next(n for n in zf.namelist() if n.endswith("graphgrade-kit/README.md"))).decode()
    assert 'The grader for the lab "CUDA-graph capture and replay (a CPU simulation)"' in readme
    assert "then edit cudagraph.py" in readme and "what your `cudagraph.py` must provide" in readme
    assert main(["student-kit", "--output", str(tmp_path / "k.tar")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--output" in err
    specs = _specs_copy(tmp_path)
    _edit_visible(specs / "01_launch_counter.yaml", lambda v, h: v.update(hint=h["id"]))
    assert main(["student-kit", "--specs", str(specs), "--output", str(tmp_path / "leak.zip")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"graphgrade: specs: {specs} (given with --specs): ")  # which folder, then the refusal
    err = _errors(err)
    assert err.count("\n") == 1 and "refusing to build a kit that leaks" in err and not (tmp_path / "leak.zip").exists()


@pytest.mark.slow
def test_unwritable_output_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    for command in ("student-kit", "gradescope-bundle"):
        assert main([command, "--output", str(blocker / "sub" / "x.zip")]) == 2
        err = _errors(capsys.readouterr().err)
        assert err.count("\n") == 1 and "--output" in err and "Traceback" not in err


def test_help_text_on_every_option():
    from grader.commands.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in ("student-kit", "gradescope-bundle"):
        for action in sub.choices[name]._actions:
            assert action.help, f"{name} {action.option_strings}: no help text"


def test_inside_a_kit_commands_that_need_the_reference_say_so(monkeypatch, capsys):
    monkeypatch.setattr(kit, "kit_info", lambda: {"format": 1, "hidden_specs": 10, "hidden_points": 51})
    for argv in (["validate"], ["audit"], ["bench"], ["gradescope-bundle"], ["student-kit"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "full package" in err and f"graphgrade {argv[0]}" in err
    assert "public specs bundled in this student kit" in kit.grading_note(SPECS)
    assert "10 hidden specs worth 51 points" in kit.grading_note(SPECS)
    assert kit.grading_note(REPO / "tests") == ""  # other specs: no claim about them
    monkeypatch.setattr(kit, "kit_info", lambda: None)
    with pytest.raises(UsageError):
        monkeypatch.setattr(kit, "kit_info", lambda: {"format": 1})
        kit.refuse_in_kit("validate")
    assert kit.refuse_in_kit("grade") is None


def test_a_kit_cannot_build_a_kit(monkeypatch, tmp_path):
    monkeypatch.setattr(kit, "kit_info", lambda: {"format": 1})
    with pytest.raises(BundleError, match="student kit"):
        kit.build_student_kit(tmp_path / "k.zip", SPECS)


def _reference_fails(specs: Path) -> int:
    """Make the first case of 02_eager.yaml expect a launch count the reference never gives; its line."""
    path = specs / "02_eager.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "launches: {step: out, equals: 3}" in line)
    lines[at] = lines[at].replace("equals: 3", "equals: 4")
    path.write_text("".join(lines), encoding="utf-8")
    return at + 1


@pytest.mark.parametrize("command", ["student-kit", "gradescope-bundle"])
@pytest.mark.parametrize("breakage", ["reference fails", "does not load"])
def test_bundles_validate_first_and_write_nothing(tmp_path, capsys, command, breakage):
    specs = _specs_copy(tmp_path)
    if breakage == "reference fails":
        line = _reference_fails(specs)
        expect = f"{specs / '02_eager.yaml'}:{line}: "
    else:
        path = specs / "03_shape_cache.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace("    tag: ", "    tags: ", 1), encoding="utf-8")
        expect = f"{path}:"
    out = tmp_path / "bundle.zip"
    assert main([command, "--specs", str(specs), "--output", str(out)]) == 2
    captured = capsys.readouterr()
    err = _errors(captured.err)
    assert err.count("\n") == 1, err
    assert err.startswith(f"graphgrade: {command}: nothing written, the specs do not validate: ") and expect in err
    assert "Traceback" not in err and "wrote" not in captured.out
    assert not out.exists() and not list(tmp_path.glob("*.zip")) and not list(tmp_path.glob(".graphgrade-*"))
