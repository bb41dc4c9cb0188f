"""Similarity for staff: a renamed and re-commented copy is listed, honest independent work is not;
the outputs are self-contained, escaped, staff-only, and never touch a score."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("copydetect")

from grader.commands.similarity import DEFAULT_THRESHOLD, compare, submission_source  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ROOT / "tests" / "correct_variants"
TEMPLATE = (ROOT / "student_template" / "cudagraph.py").read_text(encoding="utf-8")
HONEST = sorted(p.name for p in VARIANTS.iterdir() if (p / "cudagraph.py").is_file())

# What a student who copies and "makes it their own" does: local names renamed, comments rewritten.
RENAMES = {
    "entry": "item",
    "result": "res",
    "groups": "buckets",
    "segments": "pieces",
    "sizes": "allowed",
    "fused": "merged",
    "members": "parts",
    "flags": "marks",
    "padded": "grown",
    "kind": "sort_of",
}


def disguised(source: str) -> str:
    for old, new in RENAMES.items():
        source = re.sub(rf"\b{old}\b", new, source)
    source = re.sub(r"#[^\n]*", "# my own approach, written from scratch", source)
    return re.sub(r'"""(.*?)"""', '"""Implemented independently."""', source, flags=re.S)


def class_of(tmp_path: Path) -> list[Path]:
    """The three correct variants written apart from each other, the reference, and a disguised copy of one."""
    subs = []
    for name in HONEST:
        shutil.copytree(VARIANTS / name, tmp_path / name)
        subs.append(tmp_path / name)
    (tmp_path / "ref").mkdir()
    shutil.copy(ROOT / "reference" / "cudagraph.py", tmp_path / "ref" / "cudagraph.py")
    subs.append(tmp_path / "ref")
    (tmp_path / "copycat").mkdir()
    original = (VARIANTS / "functional" / "cudagraph.py").read_text(encoding="utf-8")
    copy = disguised(original)
    assert sum(a != b for a, b in zip(original.splitlines(), copy.splitlines())) > 40  # really disguised
    (tmp_path / "copycat" / "cudagraph.py").write_text(copy, encoding="utf-8")
    subs.append(tmp_path / "copycat")
    return subs


def test_a_disguised_copy_is_listed_and_honest_pairs_are_not(tmp_path):
    subs = class_of(tmp_path)
    result = compare({p.name: submission_source(p) for p in subs}, TEMPLATE, DEFAULT_THRESHOLD)
    assert [(p.a, p.b) for p in result.pairs] == [("functional", "copycat")]
    assert result.pairs[0].score > 0.9
    # and the honest pairs are well below the threshold, not just under it
    loose = compare({p.name: submission_source(p) for p in subs if p.name != "copycat"}, TEMPLATE, 0.01)
    assert loose.pairs and max(p.score for p in loose.pairs) < DEFAULT_THRESHOLD - 0.1


def test_the_template_is_boilerplate(tmp_path):
    # two students who handed in the template with a few lines each: the shared starter code is not copying
    a = (
        TEMPLATE
        + "\n\ndef helper_a(values):\n    total = 0\n    for v in values:\n        total += v * 2\n    return total\n"
    )
    b = TEMPLATE + "\n\ndef helper_b(rows, k):\n    return [r[:k] for r in rows if len(r) > k]\n"
    assert compare({"a": a, "b": b}, TEMPLATE, DEFAULT_THRESHOLD).pairs == ()
    assert compare({"a": a, "b": b}, "", DEFAULT_THRESHOLD).pairs != ()  # without it they would be flagged


def _cli(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.slow
def test_grading_a_batch_writes_staff_only_similarity(tmp_path):
    subs = class_of(tmp_path / "class")
    hostile = tmp_path / "class" / "copycat" / "cudagraph.py"
    hostile.write_text(
        hostile.read_text(encoding="utf-8")
        + '\n# </pre><script>alert(1)</script>\nX = "<img src=x onerror=alert(2)>"\n',
        encoding="utf-8",
    )
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(ROOT / "specs" / "02_eager.yaml", specs)  # one spec file: the similarity is what is tested
    out = tmp_path / "out"
    proc = _cli("grade", *map(str, subs), "--specs", str(specs), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "similarity: 1 pair at or above 0.5 among 5 submissions" in proc.stderr
    data = json.loads((out / "similarity.json").read_text(encoding="utf-8"))
    assert data["format"] == 1 and data["threshold"] == 0.5 and data["submissions"] == 5
    assert [(p["a"], p["b"]) for p in data["pairs"]] == [("functional", "copycat")]
    assert set(data["pairs"][0]) >= {"a", "b", "score"} and data["pairs"][0]["score"] > 0.9
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert 'id="pair-1"' in page and '<mark class="shared">' in page
    assert "<script" not in page and "<img" not in page and "&lt;/pre&gt;&lt;script&gt;" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # self-contained
    summary = (out / "summary.html").read_text(encoding="utf-8")
    assert "Look at these pairs" in summary
    assert 'href="functional/report.html"' in summary and 'href="copycat/report.html"' in summary
    assert 'href="similarity.html#pair-1"' in summary
    # students' own files never mention it, and scores are what they were without it
    for sub in subs:
        for name in ("report.html", "results.json", "junit.xml", "report.json"):
            text = (out / sub.name / name).read_text(encoding="utf-8")
            assert "similar" not in text.lower()
            assert {"copycat", "functional"} - {sub.name} <= {w for w in ("copycat", "functional") if w not in text}
    again = tmp_path / "again"
    proc = _cli("grade", *map(str, subs), "--specs", str(specs), "--out", str(again), "--no-similarity")
    assert proc.returncode == 0 and not (again / "similarity.json").exists()
    assert "Look at these pairs" not in (again / "summary.html").read_text(encoding="utf-8")
    assert (again / "grades.csv").read_text() == (out / "grades.csv").read_text()
    # the same pairs later, on the graded folder: summary.html gets them
    proc = _cli("similarity", *map(str, subs), "--out", str(again))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [proc.stdout.split()[0], "functional", "copycat"]
    assert 'href="similarity.html#pair-1"' in (again / "summary.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_similarity_command_without_a_graded_batch(tmp_path):
    subs = class_of(tmp_path / "class")
    out = tmp_path / "out"
    proc = _cli("similarity", *map(str, subs), "--out", str(out), "--similarity-threshold", "0.2")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("functional  copycat") and len(lines) >= 2  # 0.2 also lists honest pairs
    data = json.loads((out / "similarity.json").read_text(encoding="utf-8"))
    assert data["threshold"] == 0.2 and all(p["score"] >= 0.2 for p in data["pairs"])
    assert not (out / "summary.html").exists()  # not a graded folder: nothing else is written


def test_one_line_when_copydetect_is_missing(tmp_path):
    fake = tmp_path / "fake" / "copydetect"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no copydetect here')\n", encoding="utf-8")
    import os

    env = {**os.environ, "PYTHONPATH": f"{fake.parent}:{ROOT}"}
    subs = class_of(tmp_path / "class")[:2]
    proc = _cli("similarity", *map(str, subs), "--out", str(tmp_path / "o"), env=env)
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == "graphgrade: similarity check skipped: copydetect is not installed (pip install 'graphgrade[similarity]')"
    )


def test_bad_threshold(tmp_path):
    subs = class_of(tmp_path / "class")[:2]
    proc = _cli("similarity", *map(str, subs), "--out", str(tmp_path / "o"), "--similarity-threshold", "1.5")
    assert (
        proc.returncode == 2
        and "--similarity-threshold: a share from 0 to 1 (0.5 = half the code), not '1.5'" in proc.stderr
    )


def test_pair_scores_are_exactly_copydetects(tmp_path):
    """covered_tokens (all pairs at once) counts what copydetect.compare_files counts, pair by pair."""
    import io
    import itertools

    import copydetect

    from grader.commands.similarity import NOISE_K, WINDOW, covered_tokens, prints_of

    sources = [submission_source(p) for p in class_of(tmp_path)] + [TEMPLATE, "", TEMPLATE + "\nX = 1\n"]
    fps = [copydetect.CodeFingerprint(f"s{i}.py", NOISE_K, WINDOW, fp=io.StringIO(s)) for i, s in enumerate(sources)]
    prints = [prints_of(fp) for fp in fps]
    covered = covered_tokens(prints)
    for i, j in itertools.combinations(range(len(fps)), 2):
        overlap, (share_i, share_j), _ = copydetect.compare_files(fps[i], fps[j])
        assert covered[i, j] == overlap
        if overlap:
            assert covered[i, j] / prints[i].coverage == pytest.approx(share_i, abs=1e-12)
            assert covered[j, i] / prints[j].coverage == pytest.approx(share_j, abs=1e-12)


@pytest.mark.slow
def test_scores_are_the_same_in_every_process(tmp_path):
    """copydetect hashes k-grams with Python's salted hash(); without a stable hash, winnowing
    keeps other fingerprints in each process and a regrade's summary would show other scores."""
    subs = class_of(tmp_path)
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from grader.commands.similarity import compare, submission_source\n"
        "paths = [Path(p) for p in sys.argv[2:]]\n"
        "result = compare({p.name: submission_source(p) for p in paths}, Path(sys.argv[1]).read_text(), 0.01)\n"
        "print(json.dumps([[p.a, p.b, p.score] for p in result.pairs]))\n"
    )
    template = tmp_path / "template.py"
    template.write_text(TEMPLATE, encoding="utf-8")
    runs = []
    for seed in ("1", "2"):
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed, "MPLBACKEND": "Agg"}
        done = subprocess.run(
            [sys.executable, "-c", script, str(template), *map(str, subs)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout))
    assert runs[0] and runs[0] == runs[1]


def test_the_background_comparison_gives_what_compare_gives(tmp_path):
    """Started before the grading, in a process of its own: the same pairs as compare() here."""
    from grader.commands.similarity import BackgroundComparison

    subs = class_of(tmp_path)
    template = tmp_path / "template.py"
    template.write_text(TEMPLATE, encoding="utf-8")
    background = BackgroundComparison({p.name: p for p in subs}, template, 0.2)
    here = compare({p.name: submission_source(p) for p in subs}, TEMPLATE, 0.2)
    there = background.result()
    assert there.pairs == here.pairs and len(here.pairs) >= 2
    assert [d.a_spans for d in there.details] == [d.a_spans for d in here.details]


def test_a_background_comparison_that_dies_or_is_cancelled_says_so_in_one_line(tmp_path):
    import os
    import signal

    from grader.commands.similarity import BackgroundComparison, ComparisonFailed

    subs = class_of(tmp_path)
    background = BackgroundComparison({p.name: p for p in subs}, None, 0.5)
    os.kill(background.pid, signal.SIGKILL)
    with pytest.raises(ComparisonFailed, match=r"^the comparing process ended without a result \(exit status -9\)$"):
        background.result()
    # cancelled (the grading was interrupted): the process is gone at once
    background = BackgroundComparison({p.name: p for p in subs}, None, 0.5)
    background.cancel()
    with pytest.raises(ProcessLookupError):
        os.kill(background.pid, 0)


def test_a_regrade_reads_the_comparison_from_the_cache_and_a_damaged_entry_is_compared_again(tmp_path):
    """The comparison depends on the sources, not on the specs: a regrade with the same cache
    reads it back (the same pairs, spans and codes); a damaged entry is ignored and rewritten."""
    from grader.commands.similarity import _compare_paths, comparison_from_json, comparison_to_json
    from grader.validation import Invalid

    subs = class_of(tmp_path / "class")
    sources = {p.name: p for p in subs}
    cache = tmp_path / "cache"
    first = _compare_paths(sources, None, 0.2, cache)
    assert not first.from_cache and first.pairs and first.tool.startswith("copydetect ")
    entries = [p for p in cache.rglob("*.json")]
    assert len(entries) == 1
    again = _compare_paths(sources, None, 0.2, cache)
    assert again.from_cache
    assert again.details == first.details and again.skipped == first.skipped and again.tool == first.tool
    assert comparison_from_json(json.dumps(comparison_to_json(first))).details == first.details
    # another threshold, or one source changed: another entry
    _compare_paths(sources, None, 0.3, cache)
    (tmp_path / "class" / "ref" / "cudagraph.py").write_text(TEMPLATE, encoding="utf-8")
    changed = _compare_paths(sources, None, 0.2, cache)
    assert not changed.from_cache and len(list(cache.rglob("*.json"))) == 3
    # damaged entries are compared again
    entry = json.loads(entries[0].read_text())
    for damage in ('{"format": 1', json.dumps({**json.loads(entry["text"]), "n": "five"})):
        entries[0].write_text(json.dumps({**entry, "text": damage}))
        with pytest.raises((Invalid, ValueError)):
            comparison_from_json(damage)
    (tmp_path / "class" / "ref" / "cudagraph.py").write_text(
        (ROOT / "reference" / "cudagraph.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    redone = _compare_paths(sources, None, 0.2, cache)
    assert not redone.from_cache and redone.details == first.details
    assert _compare_paths(sources, None, 0.2, cache).from_cache  # written anew


# ---------------------------------------------------------------- what is read (issue 25, point 3)
def data_table(chars: int) -> str:
    """A generated table: nothing but number literals, ``chars`` characters or more."""
    rows, size = [], 0
    i = 0
    while size < chars:
        row = "    (" + ", ".join(str((i * 7919 + j) % 100003) for j in range(12)) + "),\n"
        rows.append(row)
        size += len(row)
        i += 1
    return "TABLE = [\n" + "".join(rows) + "]\n"


def code_flood(chars: int) -> str:
    """Real-looking code, all different: functions that a table of data would not be."""
    parts, size, i = [], 0, 0
    while size < chars:
        part = f"def helper_{i}(a, b):\n    c = a * {i} + b\n    if c > {i % 97}:\n        return c - a\n    return [c, a, b, {i}]\n\n\n"
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts)


@pytest.mark.parametrize("padding", ["data", "code"])
def test_a_verbatim_copy_is_listed_whatever_sorts_before_its_code(tmp_path, padding):
    """The reproduction: a copy with a 530,000-character ``a_table.py`` (sorting before
    cudagraph.py) was not listed: the pass read 512 KiB of *.py in name order. cudagraph.py and
    what it imports are read first; a file of data is named, not compared."""
    subs = class_of(tmp_path)
    thief = tmp_path / "thief"
    thief.mkdir()
    shutil.copy(VARIANTS / "functional" / "cudagraph.py", thief / "cudagraph.py")
    pad = data_table(530_000) if padding == "data" else code_flood(530_000)
    assert len(pad) >= 530_000
    (thief / "a_table.py").write_text(pad)
    source = submission_source(thief)
    assert source.startswith("# file: cudagraph.py\n")
    if padding == "data":
        assert "# file: a_table.py (not compared: mostly data" in source and "TABLE" not in source
    result = compare({p.name: submission_source(p) for p in [*subs, thief]}, TEMPLATE, DEFAULT_THRESHOLD)
    pairs = {(p.a, p.b) for p in result.pairs}
    assert ("functional", "thief") in pairs or ("thief", "functional") in pairs, pairs


def test_the_modules_cudagraph_imports_are_read_before_the_rest(tmp_path):
    from grader.commands.similarity_sources import reading_order

    texts = {
        "a_first.py": "X = 1\n",
        "cudagraph.py": "import zz_helpers\nfrom pkg import tools\n",
        "zz_helpers.py": "from . import deep\nimport m_late\n",
        "m_late.py": "",
        "pkg/__init__.py": "",
        "pkg/tools.py": "",
        "deep.py": "",
    }
    order = reading_order(texts)
    assert order[:5] == ["cudagraph.py", "zz_helpers.py", "pkg/__init__.py", "pkg/tools.py", "deep.py"]
    assert order[5:] == ["m_late.py", "a_first.py"] or order[5:] == ["a_first.py"] and "m_late.py" in order
    assert sorted(order) == sorted(texts)


def test_covered_tokens_in_blocks_equals_the_whole_matrix(tmp_path):
    """The bounded-memory pass gives exactly what the one-matrix pass gives."""
    import io

    from grader.commands.similarity import NOISE_K, WINDOW, covered_tokens, prints_of
    from grader.commands.similarity_compare import _copydetect

    cd = _copydetect()
    subs = class_of(tmp_path)
    prints = [
        prints_of(cd.CodeFingerprint(f"{p.name}.py", NOISE_K, WINDOW, fp=io.StringIO(submission_source(p))))
        for p in subs
    ]
    whole = covered_tokens(prints, block=1 << 40)
    assert whole.sum() > 0
    for block in (1, 7, 64, 1000):
        assert (covered_tokens(prints, block=block) == whole).all()
