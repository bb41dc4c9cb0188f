"""Integrity flags (grader/judging/integrity.py): what the static scan flags, what it never flags, how
it survives hostile files, and where flags show (staff) and do not (students, scores)."""

from __future__ import annotations

import base64
import gzip
import importlib.util
import json
import os
import time
import zlib
from dataclasses import replace
from pathlib import Path

import pytest
from test_reports_samples import failing_report
from test_reports_samples import passing_report as perfect_report

from grader.judging import integrity, scan_files
from grader.judging.integrity import RULES, integrity_flags, scan_source, scan_submission
from grader.judging.report_reading import ReportError, report_from_json
from grader.judging.report_writing import report_to_json
from grader.judging.results import REPORT_FORMAT, Flag
from reports import render_submission, render_summary, to_gradescope, to_junit_xml

REPO = Path(__file__).resolve().parents[1]
HONEST = [
    REPO / "reference" / "cudagraph.py",
    REPO / "reference" / "cuda.py",
    REPO / "student_template",
    REPO / "tests" / "hostile" / "_honest_core.py",
    *sorted((REPO / "tests" / "correct_variants").iterdir()),
]


def rules_of(source: str) -> set[str]:
    return {f.rule for f in scan_source(source.encode(), "cudagraph.py")}


@pytest.mark.parametrize("path", HONEST, ids=lambda p: str(p.relative_to(REPO)))
def test_honest_code_gets_no_flag(path):
    assert path.exists()
    assert scan_submission(path) == ()


def test_grading_the_installed_reference_records_no_flag():
    # The reference package imports itself (backend.py, mutants/): the grader's own trusted code.
    assert integrity_flags(REPO / "reference") == ()
    assert scan_submission(REPO / "reference")  # ...which the scan alone would flag


CASES = {
    "import-grader": [
        "import grader.run.runner",
        "from reference import cudagraph",
        "import importlib\nm = importlib.import_module('reference.cudagraph')",
        "__import__('grader')",
        "f(load, 'grader.judging.judge')",
        # a lab's pack, loaded under its private name (the CUDA-graph lab's op vocabulary among it)
        "import _graphgrade_pack_cudagraph.ops",
        "from _graphgrade_pack_cudagraph import ops",
        "import importlib\nm = importlib.import_module('_graphgrade_pack_cudagraph.ops')",
    ],
    "sys-modules": [
        "import sys\nx = sys.modules['grader']",
        "from sys import modules",
        "import sys as s\ns.modules.pop('x', None)",
    ],
    "gc": ["import gc\ngc.get_objects()", "from gc import get_objects", "g = __import__('gc')"],
    "ctypes": ["import ctypes", "from ctypes import CDLL", "import ctypes.util"],
    "frames": [
        "import sys\nf = sys._getframe(1)",
        "import inspect",
        "def f(g):\n    return g.__globals__",
        "x = tb.tb_frame.f_back",
        "import sys\nsys.settrace(None)",
        "getattr(sys, '_getframe')",
    ],
    "subclasses": ["object.__subclasses__()", "getattr(type, '__subclasses__')"],
    "patch-builtins": [
        "import builtins\nbuiltins.len = None",
        "__builtins__['len'] = None",
        "import builtins as b\nsetattr(b, 'isinstance', f)",
        "import builtins\ndel builtins.print",
        "__builtins__ = {}",
    ],
    "patch-numpy": [
        "import numpy as np\nnp.allclose = f",
        "import numpy\nnumpy.testing.assert_allclose = f",
        "import numpy as xp\nsetattr(xp, 'array_equal', f)",
        "import numpy as np\nnp.ndarray.__eq__ = f",
    ],
    "fork": [
        "import os\nos.fork()",
        "from os import fork",
        "import os\nos.register_at_fork(after_in_child=f)",
        "import pty\npty.fork()",
    ],
    "threads": [
        "import threading\nthreading.Thread(target=f).start()",
        "from threading import Timer",
        "import _thread",
        "import multiprocessing",
        "from concurrent.futures import ThreadPoolExecutor",
        "import threading\nclass T(threading.Thread): pass",
    ],
    "mmap": ["import mmap"],
    "ipc": [
        "import sysv_ipc",
        "libc.shmget(1, 2, 3)",
        "getattr(libc, 'msgget')",
        "open('/dev/shm/x', 'w')",
        "import os\nos.mkfifo('p')",
        "from multiprocessing import shared_memory",
    ],
    "dynamic-code": [
        "exec(code)",
        "eval('1')",
        "compile(src, 'f', 'exec')",
        "__import__(name)",
        "import importlib.util\nimportlib.util.spec_from_file_location('x', p)",
        "spec.loader.exec_module(m)",
        "import zipimport\nzipimport.zipimporter('x.zip')",
        "import sys\nsys.path_hooks.insert(0, hook)",
        "import sys\nsys.meta_path.append(finder)",
        "import marshal",
        "import runpy\nrunpy.run_path('x')",
        # reached by any path, whatever the spelling
        "f = exec\nf(code)",
        "run = eval",
        "import importlib",
        "import builtins\ngetattr(builtins, 'ex' + 'ec')(c)",
        "getattr(m, ''.join(['e', 'x', 'e', 'c']))",
        "getattr(m, '%s%s' % ('ex', 'ec'))",
        "getattr(m, '{}{}'.format('ex', 'ec'))",
        "a = 'ex'\nb = 'ec'\ngetattr(m, f'{a}{b}')",
        "getattr(m, 'cexe'[::-1])",
        "getattr(m, chr(101) + chr(120) + chr(101) + chr(99))",
        "getattr(m, b'exec'.decode())",
    ],
    "patch-class": [
        "def run_eager(ops, x):\n    cls = type(ops[0])\n    setattr(cls, '__call__', f)",
        "type(op).__call__ = f",
        "op.__class__.__call__ = f",
        "def f(op):\n    kind = op.__class__\n    kind.__call__ = g",
        "op.__class__ = Fake",
        "setattr(op, 'elementwise', True)",
        "delattr(op, 'spec')",
        "object.__setattr__(op, 'spec', s)",
        "type.__setattr__(GraderOp, '__call__', f)",
        "vars(op)['spec'] = s",
        "op.__dict__['spec'] = s",
        "vars(op).update(spec=s)",
        "op.__dict__.update(spec=s)",
        "setattr(type(self), '__call__', f)",
        # through a name bound to type itself, or any dunder of an object that is not its own
        "kind = type\nkind(op).__call__ = f",
        "t = type\ndef f(op, g):\n    cls = t(op)\n    cls.__call__ = g",
        "import builtins\nk = builtins.type\nsetattr(k(op), '__call__', f)",
        "def f(op, g):\n    holder = op.spec\n    holder.__class__.__eq__ = g",
        "def f(c, g):\n    c.__call__ = g",
    ],
    "unusual-import": [
        "import subprocess",
        "import pickle",
        "from socket import socket",
        "import base64",
        "x = __import__('zlib')",
    ],
    "computed-name": [
        "getattr(op, name)",
        "setattr(x, key, value)",
        "delattr(x, names[0])",
        "globals()[key]",
        "vars(op).get(key)",
        "object.__getattribute__(op, n)",
        "op.__getattribute__(n)",
        "import operator\noperator.attrgetter(n)(op)",
    ],
    "builtins-module": [
        "import builtins\nf = builtins.len",
        "b = __builtins__",
        "from builtins import print",
        "import builtins as b",
        "globals()['__built' + 'ins__']",
    ],
    "encoded-code": [  # long constants: base64 of zlib-compressed Python, hex of Python
        "BLOB = "
        + repr(
            base64.b64encode(
                zlib.compress(b"import os\nfor name in os.listdir('.'):\n    os.system('cat ' + name)\n")
            ).decode()
        ),
        "BLOB = " + repr(("import sys\nsys.modules['x'] = 1\n" * 3).encode().hex()),
    ],
    "grader-state": [
        "op._witness.calls[-1] = record",
        "log = getattr(op, '_witness')",
        "def f(self, x):\n    self._witness.calls.clear()",
        "log = getattr(op, '_wit' + 'ness')",
        "NAME = '_wit' + 'ness'\nlog = getattr(op, NAME, None)",
    ],
}


@pytest.mark.parametrize("rule,source", [(r, s) for r, sources in CASES.items() for s in sources])
def test_each_rule_flags_its_code(rule, source):
    assert rule in RULES
    assert rule in rules_of(source), f"{source!r} -> {rules_of(source)}"


def test_every_rule_is_exercised():
    assert set(CASES) | {"compiled-code", "unscanned"} == set(RULES)


@pytest.mark.parametrize(
    "source",
    [
        "import numpy as np\nx = np.zeros(3)\nx[0] = 1\nnp.add(x, 1, out=x)",
        "import threading\nLOCK = threading.Lock()",  # a lock starts nothing
        "import re\nPATTERN = re.compile('a+')",
        "model.eval()\nself.modules = []",
        "import os\nos.environ.get('HOME')",
        "'''The grader imports this module; see the reference in the docs.'''",
        "class A:\n    def __init__(self):\n        self.f_back_count = 0",
        # its own objects: self and cls, through a setter or its namespace
        "class A:\n    def __init__(self, **kw):\n        setattr(self, 'n', 1)\n        self.__dict__.update(kw)",
        "from dataclasses import dataclass\n@dataclass(frozen=True)\nclass B:\n    n: int\n"
        "    def __post_init__(self):\n        object.__setattr__(self, 'n', 2)",
        "def f(x):\n    kind = type(x)\n    return kind.__name__, isinstance(x, kind), vars(x).get('n')",
        "x.flags.writeable = False\nout.shape = (2, 3)",
        # constant names, strings that merely spell a built-in, its own function's name
        "def f(op):\n    return getattr(op, 'elementwise', False), hasattr(op, 'cap' + 'turable')",
        "mode = 'eval' if training else 'train'\nlabel = 'compile' + 'd'",
        "def fused(x):\n    return x\nfused.__name__ = 'fused_' + '_'.join(['a', 'b'])",
        "class A:\n    def __init__(self):\n        self.__call__ = None",
        '"""A long docstring that is prose, not code: it explains what the runner does on replay."""',
    ],
)
def test_ordinary_code_is_not_flagged(source):
    assert rules_of(source) == set()


def test_flags_name_the_file_and_line(tmp_path):
    (tmp_path / "cudagraph.py").write_text("import numpy as np\n\n\nimport gc\n")
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "more.py").write_text("x = 1\nimport ctypes\n")
    flags = scan_submission(tmp_path)
    assert {(f.rule, f.file, f.line) for f in flags} == {("gc", "cudagraph.py", 4), ("ctypes", "helpers/more.py", 2)}
    assert all(f.message.startswith(RULES[f.rule]) for f in flags)


def test_the_scan_never_runs_the_submission(tmp_path):
    canary = tmp_path / "ran"
    (tmp_path / "cudagraph.py").write_text(f"open({str(canary)!r}, 'w').write('x')\nimport gc\n")
    assert [f.rule for f in scan_submission(tmp_path)] == ["gc"]
    assert not canary.exists()


def test_hostile_files_cannot_break_or_dodge_the_scan(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "cudagraph.py").write_text("def broken(:\n")  # Python cannot import it either
    (sub / "nul.py").write_bytes(b"x = 1\x00\n")
    (sub / "deep.py").write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    (sub / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\nimport gc\n")  # decoded as Python would
    (sub / "big.py").write_text("x = 1\n" * (integrity.MAX_FILE_BYTES // 6 + 10))
    (sub / "evil\u202ename\x1b[2J.py").write_text("import mmap\n")
    (sub / "cudagraph.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (sub / "helpers.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip
    (sub / "data.bin").write_bytes(b"#!padding\n" * 100 + b"PK\x05\x06" + bytes(18))  # a zip by content
    (sub / "old.dat").write_bytes(importlib.util.MAGIC_NUMBER + bytes(12))  # a .pyc by content
    (sub / "notes.txt").write_text("plain data, not code\n")
    code = b"import builtins\ngetattr(builtins, 'exec')('x = 1')\n"
    (sub / "encoded.txt").write_bytes(base64.b64encode(zlib.compress(code)) + b"\n")
    (sub / "hexed.dat").write_text(code.hex())
    (sub / "gzipped.bin").write_bytes(gzip.compress(code))
    (sub / "readme.md").write_text("# Notes\n\nThe runner copies x into the static buffer, then replays.\n")
    (sub / "link.py").symlink_to("/etc/passwd")  # not followed
    (sub / "fifo.py").unlink(missing_ok=True)
    os.mkfifo(sub / "fifo.py")  # never opened: not a regular file
    flags = scan_submission(sub)
    by_file = {}
    for f in flags:
        by_file.setdefault(f.file, set()).add(f.rule)
    assert by_file["cudagraph.py"] == {"unscanned"} and by_file["nul.py"] == {"unscanned"}
    assert by_file["deep.py"] == {"unscanned"}
    assert by_file["latin.py"] == {"gc"}
    assert by_file["big.py"] == {"unscanned"}
    for shipped in ("cudagraph.cpython-311-x86_64-linux-gnu.so", "helpers.zip", "data.bin", "old.dat"):
        assert by_file[shipped] == {"compiled-code"}, shipped
    assert "notes.txt" not in by_file
    for hidden in ("encoded.txt", "hexed.dat", "gzipped.bin"):
        assert by_file[hidden] == {"encoded-code"}, hidden
    assert "readme.md" not in by_file
    evil = [name for name in by_file if name.startswith("evil")]
    assert evil and by_file[evil[0]] == {"mmap"}
    assert all(ch.isprintable() and ch not in "\u202e\x1b" for name in by_file for ch in name)
    assert "link.py" not in by_file and "fifo.py" not in by_file


def test_the_walk_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_files, "MAX_ENTRIES", 50)
    monkeypatch.setattr(scan_files, "MAX_FILES", 5)
    many = tmp_path / "many"
    many.mkdir()
    for i in range(20):
        (many / f"m{i:02}.py").write_text("x = 1\n")
    flags = scan_submission(many)
    assert [f.rule for f in flags] == ["unscanned"] and "more than 5 Python files" in flags[0].message
    wide = tmp_path / "wide"
    wide.mkdir()
    for i in range(60):
        (wide / f"d{i:02}").mkdir()
    assert "more than 50 entries" in scan_submission(wide)[0].message
    deep = tmp_path / "deep"
    path = deep
    for _ in range(integrity.MAX_DEPTH + 3):
        path = path / "d"
    path.mkdir(parents=True)
    assert any("nested more than" in f.message for f in scan_submission(deep))
    noisy = tmp_path / "noisy"
    noisy.mkdir()
    (noisy / "cudagraph.py").write_text("import gc\n" * 200)
    (noisy / "other.py").write_text("\n".join(f"import ctypes as c{i}" for i in range(200)))
    assert len(scan_submission(noisy)) == integrity.MAX_FLAGS


# ------------------------------------------------------------------ the report and its readers
FLAGS = (
    Flag("gc", "cudagraph.py", 4, "uses the garbage collector (gc): import gc"),
    Flag("compiled-code", "x.so", 0, "ships compiled code"),
)


def test_flags_round_trip_through_report_json_and_are_validated():
    report = replace(perfect_report(), flags=FLAGS)
    data = json.loads(json.dumps(report_to_json(report)))
    assert data["format"] == REPORT_FORMAT and data["flags"][0] == {
        "rule": "gc",
        "file": "cudagraph.py",
        "line": 4,
        "message": FLAGS[0].message,
    }
    assert report_from_json(data) == report
    for bad, where in [
        ({"rule": "gc", "file": "a.py", "line": 1}, "missing key 'message'"),
        ({"rule": "gc", "file": "a.py", "line": -1, "message": "m"}, "line"),
        ({"rule": "gc", "file": "a.py", "line": "1", "message": "m"}, "line"),
        ({"rule": "gc", "file": "a.py", "line": 1, "message": "m", "extra": 1}, "unknown key"),
    ]:
        with pytest.raises(ReportError, match=where):
            report_from_json({**data, "flags": [bad]})
    old = {k: v for k, v in data.items() if k != "flags"} | {"format": 1}
    assert report_from_json(old).flags == ()  # format 1 (before flags) is still read
    with pytest.raises(ReportError, match="format 1 has no flags"):
        report_from_json({**data, "format": 1})


def test_flags_show_for_staff_and_never_for_students():
    flagged = replace(failing_report(), flags=FLAGS)
    clean = perfect_report()
    summary = render_summary([flagged, clean], ["a/report.html", "b/report.html"])
    block = summary[summary.index('id="needs-review"') :]
    block = block[: block.index("</table>")]
    assert flagged.submission in block and "needs review" in block and "cudagraph.py:4" in block
    assert clean.submission not in block
    assert 'id="needs-review"' not in render_summary([clean], ["b/report.html"])
    for text in (render_submission(flagged), json.dumps(to_gradescope(flagged)), to_junit_xml(flagged)):
        assert "needs review" not in text and "garbage collector" not in text and "compiled-code" not in text
    # A flag changes no score and no student-facing byte.
    assert render_submission(flagged) == render_submission(replace(flagged, flags=()))
    assert to_gradescope(flagged) == to_gradescope(replace(flagged, flags=()))


def test_a_scan_that_fails_costs_neither_the_grade_nor_the_batch(tmp_path, monkeypatch):
    def broken(self, path):
        raise RuntimeError("bug")

    monkeypatch.setattr(integrity.ScanService, "submit", broken)
    (flag,) = integrity_flags(tmp_path)
    assert flag.rule == "unscanned" and "scan failed" in flag.message


def test_a_spurious_parser_system_error_is_retried_not_flagged(monkeypatch):
    """CPython 3.11 can raise "AST constructor recursion depth mismatch" when threads parse at once
    (gh-106905); the scan retries, so a batch's reports do not depend on which threads overlapped."""
    import ast

    real, calls = ast.parse, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=3, after=5)")
        return real(*args, **kwargs)

    monkeypatch.setattr(scan_files.ast, "parse", flaky)
    flags = integrity.scan_source(b"import threading\nthreading.Thread(target=print).start()\n", "cudagraph.py")
    assert len(calls) == 2
    assert [f.rule for f in flags] == ["threads"]


def test_grading_scans_in_a_process_of_its_own(tmp_path):
    """The scan runs in a child of a server process, one per submission: its answer is the
    in-process scan's; closing the service ends the server."""
    (tmp_path / "cudagraph.py").write_text("import gc\nx = getattr(op, '_wit' + 'ness')\n")
    service = integrity.ScanService()
    try:
        first, second = service.submit(tmp_path), service.submit(tmp_path)
        server = service._process
        assert server is not None and server.pid != os.getpid()
        for pending in (first, second):
            flags = pending.flags()
            assert flags == scan_submission(tmp_path) and {f.rule for f in flags} == {"gc", "grader-state"}
    finally:
        service.close()
    assert server.poll() is not None


def _chains(folder: Path, files: int, lines: int, links: int) -> Path:
    folder.mkdir()
    (folder / "cudagraph.py").write_text("import numpy as np\n")
    for i in range(files):
        (folder / f"chain{i}.py").write_text(("x = np" + ".a" * links + "\n") * lines)
    return folder


@pytest.mark.parametrize(
    "budget,says",
    [
        ({"cpu_s": 1}, "past its CPU budget (1 s)"),
        ({"wall_s": 0.3}, "past its time budget"),
        ({"memory": 64 << 20}, "past its memory budget (64 MiB)"),
    ],
)
def test_a_scan_over_its_budget_is_flagged_unscanned_with_the_reason(tmp_path, monkeypatch, budget, says):
    sub = _chains(tmp_path / "sub", files=7, lines=2000, links=250)
    (tmp_path / "honest").mkdir()
    (tmp_path / "honest" / "cudagraph.py").write_text("import numpy as np\n")
    if "memory" in budget:
        monkeypatch.setattr(integrity, "SCAN_MEMORY_BYTES", budget.pop("memory"))
    service = integrity.ScanService()
    try:
        flags = service.submit(sub, **budget).flags()
        assert service.submit(sub.parent / "honest").flags() == ()  # the server lives on
    finally:
        service.close()
    assert [f.rule for f in flags] == ["unscanned"] and says in flags[0].message, flags


def test_the_attribute_visitor_is_linear_in_the_chain(monkeypatch):
    """Each link of a chain is looked at once (it was once per link above it: quadratic)."""
    from grader.judging.scan_rules import Scanner

    seen = []
    real = Scanner.attribute_name

    def counting(self, name, node):
        seen.append(name)
        return real(self, name, node)

    monkeypatch.setattr(Scanner, "attribute_name", counting)
    for links in (200, 800):
        seen.clear()
        scan_source(("x = np" + ".a" * links + "\n").encode(), "chain.py")
        assert len(seen) == links


def test_a_submission_imports_its_own_modules_by_name_without_a_flag(tmp_path):
    (tmp_path / "cudagraph.py").write_text("import _helpers\nfrom tools.pad import pad\nimport elsewhere\n")
    (tmp_path / "_helpers.py").write_text("import numpy as np\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "pad.py").write_text("from . import other\n")
    flags = scan_submission(tmp_path)
    assert [(f.rule, f.file, f.line) for f in flags] == [("unusual-import", "cudagraph.py", 3)]
    assert "import elsewhere" in flags[0].message


def test_a_scan_server_that_dies_fails_its_scans_and_the_next_one_starts_afresh(tmp_path):
    sub = _chains(tmp_path / "sub", files=3, lines=2000, links=250)
    (tmp_path / "honest").mkdir()
    (tmp_path / "honest" / "cudagraph.py").write_text("import gc\n")
    service = integrity.ScanService()
    try:
        pending = service.submit(sub)
        service._process.kill()
        flags = pending.flags()
        assert [f.rule for f in flags] == ["unscanned"] and "the scan failed" in flags[0].message
        assert [f.rule for f in service.submit(tmp_path / "honest").flags()] == ["gc"]
    finally:
        service.close()


def test_a_scan_does_not_outlive_its_server(tmp_path):
    sub = _chains(tmp_path / "sub", files=3, lines=2000, links=250)
    service = integrity.ScanService()
    try:
        service.submit(sub)
        server = service._process
        time.sleep(0.5)  # the child is forked and scanning
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        assert children
        server.kill()
        server.wait()
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() for pid in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(
            Path(f"/proc/{pid}/stat").exists() and " Z " not in Path(f"/proc/{pid}/stat").read_text()
            for pid in children
        )
    finally:
        service.close()
