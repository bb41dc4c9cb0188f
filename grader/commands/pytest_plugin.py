"""``pytest`` in a student's folder: the public spec cases against its module file, one item per case.

Registered as the ``graphgrade`` pytest11 entry point, so installing graphgrade (the student kit
or the full package) is enough. It is active only where pytest is started in a folder holding
the lab's module file (``MODULE.py``, lab.yaml's ``student.module``; ``--graphgrade-lab`` or
``$GRAPHGRADE_LAB`` name another lab than the default), or is given that one folder (any other
pytest run collects nothing from it; this project's own suite turns it off with
``-p no:graphgrade``). Items are named ``MODULE.py::SPEC::CASE``, so ``-k``,
``-x``, ``--lf``, ``-v``, ``--junitxml`` and an IDE's test explorer work as for any test.

The cases selected run through the same engine as ``graphgrade grade`` (an isolated worker and
the same judge), all in one run when the first item runs. A failing item shows the case's plain
text (:func:`reports.view.plain.case_text`: the message, the submission's line, each step and
each check's expected against observed), as report.html does. A submission-wide problem (an
import error) is shown once, at the first item, and stops the run there, as ``-x`` would: no
later case could run either. Only visible specs are collected:
a hidden case never reaches pytest's output.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import pytest

from grader.lab import active as active_lab


class CaseFailed(Exception):
    """A case that did not pass; its text is the whole failure report."""


class _Grading:
    """One pytest run's grading: the zygote (started before any spec is read), the visible specs
    and, once the first item runs, every selected case's result."""

    def __init__(self, config: pytest.Config, folder: Path) -> None:
        self.config = config
        self.folder = folder
        self.zygote = None  # started when the module file is collected (a run that never does pays nothing)
        self._loaded = None
        self.results: dict[tuple[str, str], object] | None = None
        self.problem = ""
        self.problem_shown_at = ""  # the item whose failure showed the submission-wide problem in full

    def failure_text(self, item: CaseItem, view, hint: str) -> str:
        """A failed item's text. A submission-wide problem (an import error, a missing file) is
        shown in full once, at the first item that fails; a case it kept from running then says
        so in one line, rather than repeating it (and an unrelated hint) in every item."""
        from reports.view.plain import case_text

        not_run = bool(self.problem) and view.message == self.problem
        if self.problem and self.problem_shown_at:
            if not_run:
                return f"not run: the problem shown in full at {self.problem_shown_at} kept this case from running"
            return case_text(view, hint)
        if not self.problem:
            return case_text(view, hint)
        self.problem_shown_at = f"{item.spec.id}/{item.case.id}"
        if not_run:  # no later case can run either: stop here, as -x would, so the problem is shown once
            item.session.shouldfail = "stopping: the problem above kept the remaining cases from running"
        return self.problem if not_run else f"{self.problem}\n\n{case_text(view, hint)}"

    def loaded(self):
        if self._loaded is None:
            from grader.run.runner import Zygote

            self.zygote = Zygote()
            self.zygote.__enter__()  # before any spec is read: workers fork from a process that holds none
            from grader.commands.cli_common import default_specs_dir
            from grader.suite.loader import SpecErrors, load_suite

            given = self.config.getoption("graphgrade_specs")
            specs = given or (active_lab().paths.specs if self.config.stash[_LAB_GIVEN] else default_specs_dir())
            try:
                self._loaded = load_suite(Path(specs))
            except SpecErrors as errors:
                raise pytest.UsageError("\n".join(f"graphgrade: {e}" for e in errors.errors)) from None
        return self._loaded

    def visible_specs(self):
        return self.loaded().suite.only_visible().specs

    def result(self, item: CaseItem):
        if self.results is None:
            self.results = {}
            chosen = {(i.spec.id, i.case.id) for i in item.session.items if isinstance(i, CaseItem)}
            self._grade(chosen)
        return self.results.get((item.spec.id, item.case.id))

    def _grade(self, chosen: set[tuple[str, str]]) -> None:
        from grader.commands.grade import grade_submissions
        from grader.run.runner import RunSettings

        specs = tuple(
            dataclasses.replace(s, cases=tuple(c for c in s.cases if (s.id, c.id) in chosen))
            for s in self.visible_specs()
        )
        specs = tuple(s for s in specs if s.cases)
        settings = RunSettings(isolation=self.config.getoption("graphgrade_isolation"))
        with tempfile.TemporaryDirectory(prefix="graphgrade-pytest-") as out:
            (graded,) = grade_submissions(self.zygote, self.loaded(), specs, [self.folder], Path(out), settings, jobs=1)
        from reports.view.cases import case_views

        report = graded.report
        self.problem = report.problem
        hints = {s.id: s.hint for s in report.specs}
        for view, case in zip(case_views(report), report.cases):
            self.results[(case.spec, case.case)] = (view, hints.get(case.spec, ""))

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.__exit__(None, None, None)


_GRADING = pytest.StashKey[_Grading]()
_LAB_GIVEN = pytest.StashKey[bool]()  # a lab was named (--graphgrade-lab, $GRAPHGRADE_LAB): its specs are the default


def module_path(folder: Path) -> Path | None:
    """The student's module file (the lab's) in ``folder``: at its top, or where the handout puts
    it (lab.yaml's ``student.handout_path``); None when neither is there."""
    lab = active_lab()
    for rel in (lab.module_file, lab.handout_path):
        if rel and (folder / rel).is_file():
            return folder / rel
    return None


def _folder(config: pytest.Config) -> Path | None:
    """The student's folder: where pytest was started, when it holds the module file (at its top
    or where the handout puts it); else the one folder (or module file) named on the command line,
    when it does."""
    started = Path(config.invocation_params.dir)
    if module_path(started) is not None:
        return started
    named = [started / a.split("::")[0] for a in config.args]  # the positional arguments, options parsed off
    folders = {p.resolve() if p.is_dir() else p.resolve().parent for p in named if p.exists()}
    if len(folders) == 1:
        (folder,) = folders
        if module_path(folder) is not None:
            return folder
        handout = active_lab().handout_path
        package = Path(handout).parent.name if handout else ""
        if package and folder.name == package and module_path(folder.parent) is not None:
            return folder.parent  # pytest pkg/module.py, from the repository's top
    return None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("graphgrade", "graphgrade: the lab's spec cases against the student's module file")
    from grader.commands.cli_common import LAB_HELP
    from grader.commands.spec_source import SPECS_HELP

    group.addoption("--graphgrade-specs", default=None, help=SPECS_HELP)  # the default: default_specs_dir()
    group.addoption("--graphgrade-lab", default=None, help=LAB_HELP)
    group.addoption(
        "--graphgrade-isolation",
        default="module",
        choices=("module", "process"),
        help="how each case is isolated, as `graphgrade grade --isolation` (default: module)",
    )


def pytest_configure(config: pytest.Config) -> None:
    from grader.commands.cli_common import use_lab
    from grader.errors import UsageError

    try:
        config.stash[_LAB_GIVEN] = use_lab(config.getoption("graphgrade_lab", None))
    except UsageError as exc:
        raise pytest.UsageError(f"graphgrade: {exc}") from None
    folder = _folder(config)
    if folder is not None:
        config.addinivalue_line(
            "markers", "graphgrade: a case of the lab's specs, run against the student's module file"
        )
        config.stash[_GRADING] = _Grading(config, folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    grading = config.stash.get(_GRADING, None)
    if grading is not None:
        grading.close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    grading = parent.config.stash.get(_GRADING, None)
    if grading is not None and file_path == module_path(grading.folder):
        return SubmissionFile.from_parent(parent, path=file_path)
    return None


class SubmissionFile(pytest.File):
    """The module file: one collector per visible spec."""

    def collect(self):
        for spec in self.config.stash[_GRADING].visible_specs():
            yield SpecCases.from_parent(self, name=spec.id, spec=spec)


class SpecCases(pytest.Collector):
    def __init__(self, *, spec, **kwargs) -> None:
        super().__init__(**kwargs)
        self.spec = spec

    def collect(self):
        for case in self.spec.cases:
            yield CaseItem.from_parent(self, name=case.id, spec=self.spec, case=case)


class CaseItem(pytest.Item):
    """One case of a visible spec."""

    def __init__(self, *, spec, case, **kwargs) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.case = case
        self.add_marker(pytest.mark.graphgrade)
        if spec.tag:
            self.extra_keyword_matches.add(spec.tag)

    def runtest(self) -> None:
        grading = self.config.stash[_GRADING]
        found = grading.result(self)
        if found is None:
            raise CaseFailed(grading.problem or "this case was not graded")
        view, hint = found
        if view.status != "passed":
            raise CaseFailed(grading.failure_text(self, view, hint))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailed):
            return f"{self.spec.id}/{self.case.id}: {self.spec.title}\n\n{excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{self.spec.id}/{self.case.id}"
