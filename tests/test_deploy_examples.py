"""What deploy/ hands a course besides the image (issue 34, point 5): the example PrairieLearn
question, checked against PrairieLearn's documented fields and run as its job runs it; and the
build context's .dockerignore, checked against the Dockerfile's COPY lines."""

from __future__ import annotations

import fnmatch
import json
import shlex
import shutil
import subprocess
import sys
import uuid
from html.parser import HTMLParser
from pathlib import Path

from test_deploy import copied_sources, dockerfile_stages

from grader.commands.prairielearn import SPEC_PLACES

ROOT = Path(__file__).resolve().parents[1]
QUESTION = ROOT / "deploy" / "prairielearn-question"
GRAPHGRADE = Path(sys.executable).parent / "graphgrade"

# PrairieLearn's documentation: the question's info.json properties (docs/question/overview.md,
# "Metadata"), the required ones, and externalGradingOptions' (docs/externalGrading.md).
QUESTION_PROPERTIES = {
    "uuid",
    "type",
    "title",
    "topic",
    "tags",
    "authors",
    "gradingMethod",
    "singleVariant",
    "showCorrectAnswer",
    "partialCredit",
    "externalGradingOptions",
    "dependencies",
    "sharePublicly",
    "shareSourcePublicly",
    "sharingSets",
    "comment",
}
REQUIRED = {"uuid", "type", "title", "topic"}
GRADING_METHODS = {"Internal", "External", "Manual"}
EXTERNAL_OPTIONS = {"enabled", "image", "entrypoint", "serverFilesCourse", "timeout", "enableNetworking", "environment"}
MAX_TIMEOUT_S = 600
DEFAULT_BUDGET_S = 60.0  # graphgrade prairielearn --budget's default: the job must outlast it


def _info() -> dict:
    return json.loads((QUESTION / "info.json").read_text(encoding="utf-8"))


def test_example_info_json_uses_prairielearns_documented_fields():
    info = _info()
    assert set(info) <= QUESTION_PROPERTIES, set(info) - QUESTION_PROPERTIES
    assert REQUIRED <= set(info)
    assert str(uuid.UUID(info["uuid"])) == info["uuid"] and info["type"] == "v3"
    assert info["gradingMethod"] in GRADING_METHODS and info["gradingMethod"] == "External"
    options = info["externalGradingOptions"]
    assert set(options) <= EXTERNAL_OPTIONS, set(options) - EXTERNAL_OPTIONS
    assert options["enabled"] is True and isinstance(options["image"], str) and options["image"]
    assert not options.get("enableNetworking", False)  # grading needs no network
    assert isinstance(options["timeout"], int) and DEFAULT_BUDGET_S < options["timeout"] <= MAX_TIMEOUT_S
    # the entrypoint is the image's console script (deploy/Dockerfile links it there)
    command = shlex.split(options["entrypoint"])
    assert command == ["/usr/local/bin/graphgrade", "prairielearn"]
    assert any(
        "ln -s /opt/graphgrade/bin/graphgrade /usr/local/bin/graphgrade" in line
        for line in dockerfile_stages()["grader"]
    )
    # what serverFilesCourse brings is a place graphgrade prairielearn looks for specs
    for folder in options["serverFilesCourse"]:
        assert any(place.startswith(f"serverFilesCourse/{folder.rstrip('/')}/") for place in SPEC_PLACES), folder


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None], tuple[str, ...]]] = []
        self._open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs), tuple(self._open)))
        self._open.append(tag)

    def handle_endtag(self, tag):
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]


def test_example_question_html_uploads_cudagraph_and_shows_the_results():
    parser = _Elements()
    parser.feed((QUESTION / "question.html").read_text(encoding="utf-8"))
    uploads = [attrs for tag, attrs, _ in parser.found if tag == "pl-file-upload"]
    assert [a.get("file-names") for a in uploads] == ["cudagraph.py"]  # the file graphgrade grades
    results = [inside for tag, _, inside in parser.found if tag == "pl-external-grader-results"]
    assert results and all("pl-submission-panel" in inside for inside in results)


def test_example_question_grades_as_its_job_runs_it(tmp_path):
    """The job PrairieLearn lays out from the example (its tests/ with the course's specs in it),
    graded by the info.json's entrypoint."""
    job = tmp_path / "grade"
    shutil.copytree(QUESTION / "tests", job / "tests")
    shutil.copy(ROOT / "specs" / "02_eager.yaml", job / "tests")
    (job / "student").mkdir()
    shutil.copy(ROOT / "reference" / "cudagraph.py", job / "student")
    program, *args = shlex.split(_info()["externalGradingOptions"]["entrypoint"])
    assert Path(program).name == GRAPHGRADE.name
    done = subprocess.run(
        [str(GRAPHGRADE), *args, "--root", str(job)], capture_output=True, text=True, timeout=600, cwd="/"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((job / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["gradable"] is True and results["score"] == 1.0 and len(results["tests"]) == 10


# ------------------------------------------------------------------ .dockerignore
def _ignore_patterns() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert not any(p.startswith("!") for p in patterns)  # no exception to follow below
    return patterns


def _matches(pattern: str, parts: tuple[str, ...]) -> bool:
    """Docker's rule: a pattern (``**`` for any number of folders) matches the path or a folder
    above it (then all beneath it is left out)."""
    words = pattern.strip("/").split("/")

    def match(w: int, p: int) -> bool:
        if w == len(words):
            return True  # the pattern named a folder above the rest of the path
        if p == len(parts):
            return all(x == "**" for x in words[w:])
        if words[w] == "**":
            return match(w + 1, p) or match(w, p + 1)
        return fnmatch.fnmatchcase(parts[p], words[w]) and match(w + 1, p + 1)

    return match(0, 0)


def _ignored(path: str) -> bool:
    return any(_matches(p, tuple(Path(path).parts)) for p in _ignore_patterns())


def test_dockerignore_keeps_what_the_dockerfile_copies_and_leaves_out_the_rest():
    sources = {src for stage in dockerfile_stages().values() for src, _ in copied_sources(stage)}
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    copied = [f for f in tracked if any(f == s or f.startswith(s.rstrip("/") + "/") for s in sources)]
    assert len(copied) > 50 and "grader/commands/cli.py" in copied and "reports/html.py" in copied
    assert [f for f in copied if _ignored(f)] == []
    for left_out in (
        ".git/HEAD",
        ".venv/bin/python",
        "grader/__pycache__/cli.cpython-311.pyc",
        "reports/view/__pycache__/x.pyc",
        "out/student/report.json",
        "graphgrade-out/student/staff.html",
        ".pytest_cache/v/cache/lastfailed",
        "graphgrade.egg-info/PKG-INFO",
        "tests/test_deploy.py",
        "graphgrade-autograder.zip",
    ):
        assert _ignored(left_out), left_out
