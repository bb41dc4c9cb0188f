"""Unit tests of ``grader.run.copying``: a submission copied into its scratch folder within bounds
(entries, depth, files, bytes, time; regular files only; hidden folders never looked into), and
scratch folders removed without recursion and without following links."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from grader.run.copying import (
    MAX_SUBMISSION_DEPTH,
    MAX_SUBMISSION_ENTRIES,
    MAX_SUBMISSION_FILES,
    SubmissionProblem,
    copy_submission,
    remove_tree,
    walk_submission,
)


def _submission(tmp_path: Path) -> Path:
    sub = tmp_path / "alice"
    sub.mkdir()
    (sub / "cudagraph.py").write_text("x = 1\n")
    return sub


def test_copy_refuses_too_many_entries_fast(tmp_path):
    sub = _submission(tmp_path)
    for i in range(MAX_SUBMISSION_ENTRIES + 5):
        (sub / f"d{i}").mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(SubmissionProblem, match=f"more than {MAX_SUBMISSION_ENTRIES} entries"):
        copy_submission(sub, dest)


def test_copy_refuses_deep_folders_without_recursion(tmp_path):
    sub = _submission(tmp_path)
    fd = os.open(sub, os.O_RDONLY)
    for _ in range(1500):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(SubmissionProblem, match=f"nested more than {MAX_SUBMISSION_DEPTH} deep"):
        copy_submission(sub, dest)
    remove_tree(sub)
    assert not sub.exists()


def test_copy_takes_regular_files_only_and_skips_hidden_folders(tmp_path):
    sub = _submission(tmp_path)
    (sub / "pkg").mkdir()
    (sub / "pkg" / "helpers.py").write_text("y = 2\n")
    (sub / ".git").mkdir()
    for i in range(MAX_SUBMISSION_ENTRIES * 2):  # not even looked into
        (sub / ".git" / f"o{i}").write_text("")
    os.symlink("/etc/passwd", sub / "link.py")
    os.mkfifo(sub / "fifo")
    dest = tmp_path / "dest"
    dest.mkdir()
    made = copy_submission(sub, dest)
    assert sorted(str(p.relative_to(dest)) for p in made) == ["cudagraph.py", "pkg", "pkg/helpers.py"]
    assert not (dest / "link.py").exists() and not (dest / "fifo").exists() and not (dest / ".git").exists()


def test_copy_counts_against_its_deadline(tmp_path):
    sub = _submission(tmp_path)
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(SubmissionProblem, match="time budget"):
        copy_submission(sub, dest, deadline=time.monotonic() - 1)


@pytest.mark.slow
def test_remove_tree_handles_deep_wide_and_unreadable_trees(tmp_path):
    root = tmp_path / "scratch"
    root.mkdir()
    deep = root
    fd = os.open(root, os.O_RDONLY)
    for _ in range(3000):  # paths longer than PATH_MAX, deeper than the recursion limit
        os.mkdir("dd", dir_fd=fd)
        inner = os.open("dd", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    with open(os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as f:
        f.write("x")
    os.close(fd)
    wide = root / "wide"
    wide.mkdir()
    for i in range(2000):
        (wide / f"f{i}").write_text("")
    locked = root / "locked"
    locked.mkdir()
    (locked / "inside").write_text("x")
    locked.chmod(0)
    remove_tree(root)
    assert not root.exists(), deep


def test_the_walk_skips_reports_written_inside_the_submission(tmp_path):
    from grader.run.copying import walk_submission

    (tmp_path / "cudagraph.py").write_text("x = 1\n")
    report = tmp_path / "report"
    (report / "me").mkdir(parents=True)
    for name in ("summary.html", "grades.csv", "me/report.json"):
        (report / name).write_text("{}")
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "util.py").write_text("y = 2\n")
    folders, files = walk_submission(tmp_path)
    assert sorted(files) == ["cudagraph.py", "helpers/util.py"] and folders == ["helpers"]


def test_copy_refuses_more_regular_files_than_the_bound(tmp_path):
    sub = _submission(tmp_path)
    for i in range(MAX_SUBMISSION_FILES):  # with cudagraph.py, one more than the bound
        (sub / f"m{i}.py").write_text("")
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(SubmissionProblem, match=f"more than {MAX_SUBMISSION_FILES} files"):
        copy_submission(sub, dest)


def test_copy_of_a_single_file_is_named_cudagraph_py(tmp_path):
    """A file given on the command line is the module, whatever its name."""
    single = tmp_path / "alice_v2.py"
    single.write_text("x = 1\n")
    dest = tmp_path / "dest"
    dest.mkdir()
    assert copy_submission(single, dest) == [dest / "cudagraph.py"]
    assert (dest / "cudagraph.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("layout", ["missing", "link", "folder"])
def test_copy_refuses_a_folder_without_a_real_cudagraph_py(tmp_path, layout):
    """No cudagraph.py, a link named cudagraph.py (it could point anywhere) or a folder of that name."""
    sub = tmp_path / "bob"
    sub.mkdir()
    (tmp_path / "elsewhere.py").write_text("x = 1\n")
    if layout == "link":
        os.symlink(tmp_path / "elsewhere.py", sub / "cudagraph.py")
    elif layout == "folder":
        (sub / "cudagraph.py").mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(SubmissionProblem, match="no cudagraph.py in bob/"):
        copy_submission(sub, dest)
    assert list(dest.iterdir()) == []


def test_copy_of_a_missing_path_says_so(tmp_path):
    with pytest.raises(SubmissionProblem, match="no such file or directory"):
        copy_submission(tmp_path / "nobody", tmp_path)


def test_walk_skips_pycache_and_lists_parents_before_children(tmp_path):
    sub = _submission(tmp_path)
    (sub / "__pycache__").mkdir()
    (sub / "__pycache__" / "cudagraph.cpython-311.pyc").write_bytes(b"\0")
    (sub / "a" / "b").mkdir(parents=True)
    (sub / "a" / "b" / "deep.py").write_text("")
    folders, files = walk_submission(sub)
    assert folders == ["a", "a/b"]
    assert sorted(files) == ["a/b/deep.py", "cudagraph.py"]


def test_remove_tree_never_follows_a_link_out_of_the_tree(tmp_path):
    """A worker may leave a link to a folder outside its scratch: the link goes, the target stays."""
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("x")
    scratch = tmp_path / "scratch"
    (scratch / "inner").mkdir(parents=True)
    os.symlink(outside, scratch / "inner" / "to-precious")
    os.symlink(outside / "keep.txt", scratch / "file-link")
    remove_tree(scratch)
    assert not scratch.exists()
    assert (outside / "keep.txt").read_text() == "x"


def test_remove_tree_of_a_file_or_of_nothing(tmp_path):
    """A path that is a file is removed; a path that is not there is not an error."""
    f = tmp_path / "f"
    f.write_text("x")
    remove_tree(f)
    assert not f.exists()
    remove_tree(tmp_path / "never-made")
