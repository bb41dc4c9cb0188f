"""`graphgrade import PLATFORM EXPORT --into FOLDER`: each platform's bulk download, as the
platform names it (tests/support/lms_downloads.py), becomes one folder per student."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import lms_downloads as dl

from grader.commands import cli


def run_import(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["import", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_canvas_folders_are_named_by_user_id_with_the_latest_upload_unsuffixed_and_late_marked(tmp_path, capsys):
    code, out, err = run_import(capsys, "canvas", str(dl.canvas_download(tmp_path)), "--into", str(tmp_path / "subs"))
    assert code == 0, err
    files = tree(tmp_path / "subs")
    assert set(files) == {
        "1001/cudagraph.py",
        "1002/cudagraph.py",  # cudagraph-1.py, the later attachment, under its own name
        "1003/cudagraph.py",  # the uploaded zip, unpacked and re-rooted at my-lab/
        "1003/helpers.py",
        "1004/cudagraph.py",
        "1004/notes.txt",
    }
    assert files["1002/cudagraph.py"].endswith("# second try\n")
    assert "kept 1002 obrienseán [late]" in out
    assert "earlier upload of cudagraph.py not kept (attachment 50002, cudagraph.py)" in out
    assert "skipped parkmin_1005_text.html: a text entry, not an uploaded file" in out
    assert "4 submission(s) found, 4 folder(s) written" in out and "(1 late)" in out


def test_moodle_folders_are_named_by_participant_id_in_folder_and_flat_layouts(tmp_path, capsys):
    code, out, err = run_import(capsys, "moodle", str(dl.moodle_download(tmp_path)), "--into", str(tmp_path / "subs"))
    assert code == 0, err
    assert set(tree(tmp_path / "subs")) == {
        "1234567/cudagraph.py",
        "1234568/cudagraph.py",
        "1234568/helpers.py",
        "1234570/cudagraph.py",  # "download submissions in folders" off: the file name follows the prefix
    }
    assert "kept 1234568 Seán O'Brien" in out and "onlinetext submission not kept" in out
    assert "skipped participant 1234569 (Bao Nguyen): only onlinetext (no file uploaded)" in out


def test_gradescope_folders_are_named_by_each_submitter_and_history_is_listed(tmp_path, capsys):
    code, out, err = run_import(
        capsys, "gradescope", str(dl.gradescope_download(tmp_path)), "--into", str(tmp_path / "subs")
    )
    assert code == 0, err
    assert set(tree(tmp_path / "subs")) == {
        "1001/cudagraph.py",
        "1003/cudagraph.py",
        "1003/README.md",
        "mpark_uni.edu/cudagraph.py",  # no :sid: -> the email, in graphgrade's folder-name rule
        "mpark_uni.edu/README.md",
    }
    assert "1 earlier submission(s) not in the export (ids 188)" in out
    assert "group submission submission_202 with Min Park" in out
    assert "skipped submission_203: in assignment_777_export/submission_metadata.yml but no files" in out
    assert "skipped submission_999/: not in assignment_777_export/submission_metadata.yml" in out


def test_github_classroom_folders_are_named_by_username_without_git(tmp_path, capsys):
    code, out, err = run_import(
        capsys, "github-classroom", str(dl.github_classroom_download(tmp_path)), "--into", str(tmp_path / "subs")
    )
    assert code == 0, err
    assert set(tree(tmp_path / "subs")) == {"janedoe/cudagraph.py", "bao-nguyen/cudagraph.py"}
    assert "4 OS or tool file(s) dropped" in out  # each clone's .git/ and __pycache__/


def test_github_classroom_needs_the_assignment_when_one_repository_cannot_tell_it(tmp_path, capsys):
    root = dl.github_classroom_download(tmp_path)
    lone = tmp_path / "clones"  # one repository, in a folder whose name says nothing
    lone.mkdir()
    (root / "cuda-graphs-janedoe").rename(lone / "cuda-graphs-janedoe")
    code, _, err = run_import(capsys, "github-classroom", str(lone), "--into", str(tmp_path / "a"))
    assert code == 2 and "give --assignment NAME" in err and "Traceback" not in err
    code, out, err = run_import(
        capsys, "github-classroom", str(lone), "--into", str(tmp_path / "b"), "--assignment", "cuda-graphs"
    )
    assert code == 0, err
    assert (tmp_path / "b" / "janedoe" / "cudagraph.py").is_file()


def test_an_unzipped_download_reads_the_same(tmp_path, capsys):
    import zipfile

    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(dl.canvas_download(tmp_path)) as z:
        z.extractall(unpacked)
    code, _, err = run_import(capsys, "canvas", str(unpacked), "--into", str(tmp_path / "subs"))
    assert code == 0, err
    assert (tmp_path / "subs" / "1003" / "helpers.py").is_file()


@pytest.mark.parametrize("platform", ["canvas", "moodle", "gradescope"])
def test_a_download_of_another_platform_keeps_nothing_and_says_why(tmp_path, capsys, platform):
    other = {"canvas": dl.moodle_download, "moodle": dl.canvas_download, "gradescope": dl.canvas_download}[platform]
    code, out, err = run_import(capsys, platform, str(other(tmp_path)), "--into", str(tmp_path / "subs"))
    assert "Traceback" not in err
    if platform == "gradescope":
        assert code == 2 and "no submission_metadata.yml" in err
    else:
        assert code == 0 and "0 submission(s) found, 0 folder(s) written" in out and "skipped" in out


def test_into_must_be_new_or_empty(tmp_path, capsys):
    into = tmp_path / "subs"
    (into / "1001").mkdir(parents=True)
    (into / "1001" / "cudagraph.py").write_text("mine\n", encoding="utf-8")
    code, _, err = run_import(capsys, "canvas", str(dl.canvas_download(tmp_path)), "--into", str(into))
    assert code == 2 and "not empty" in err
    assert (into / "1001" / "cudagraph.py").read_text(encoding="utf-8") == "mine\n"


def test_a_missing_or_unreadable_download_is_one_line(tmp_path, capsys):
    code, _, err = run_import(capsys, "canvas", str(tmp_path / "nope.zip"), "--into", str(tmp_path / "s"))
    assert code == 2 and err.count("\n") == 1 and "no such file" in err
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04 not really")
    code, _, err = run_import(capsys, "canvas", str(tmp_path / "bad.zip"), "--into", str(tmp_path / "s"))
    assert code == 2 and err.count("\n") == 1 and "not a readable zip" in err


PACKAGE = {"cudagraph.py": "from .counter import LaunchCounter\n", "counter.py": "class LaunchCounter:\n    n = 0\n"}


@pytest.mark.parametrize(
    "uploaded, written",
    [
        # a zip of the student's folder: the wrapper goes, cudagraph.py is at the top
        ({"my-lab/cudagraph.py": dl.GOOD, "my-lab/helpers.py": "X = 1\n"}, {"cudagraph.py", "helpers.py"}),
        # the handout's package (relative imports, no __init__.py) stays one folder down
        ({f"mini_vllm/{k}": v for k, v in PACKAGE.items()}, {"mini_vllm/cudagraph.py", "mini_vllm/counter.py"}),
        # ... and so does one with __init__.py, while the repository's wrapper goes
        (
            {
                "repo-main/README.md": "hi\n",
                "repo-main/mini_vllm/__init__.py": "",
                "repo-main/mini_vllm/cudagraph.py": dl.GOOD,
            },
            {"README.md", "mini_vllm/__init__.py", "mini_vllm/cudagraph.py"},
        ),
        # a repository at the top: nothing is taken away, nothing dropped
        ({"README.md": "hi\n", "mini_vllm/cudagraph.py": dl.GOOD}, {"README.md", "mini_vllm/cudagraph.py"}),
        # wrappers two deep go; no cudagraph.py at all: the folder is written as uploaded
        ({"a/b/c/cudagraph.py": dl.GOOD}, {"cudagraph.py"}),
        ({"a/notes.txt": "no code\n"}, {"a/notes.txt"}),
    ],
)
def test_wrapping_folders_go_and_the_handouts_package_stays(tmp_path, capsys, uploaded, written):
    download = dl.write(
        tmp_path / "submissions.zip", dl.zip_bytes({"doejane_1001_50001_lab.zip": dl.zip_bytes(uploaded)})
    )
    code, out, err = run_import(capsys, "canvas", str(download), "--into", str(tmp_path / "subs"))
    assert code == 0, err
    assert set(tree(tmp_path / "subs" / "1001")) == written
    assert ("it will score 0" in out) == (written == {"a/notes.txt"})


def test_the_summary_says_when_the_grader_will_find_no_cudagraph(tmp_path, capsys):
    two = dl.zip_bytes({"a/cudagraph.py": dl.GOOD, "b/cudagraph.py": dl.GOOD})
    download = dl.write(
        tmp_path / "submissions.zip",
        dl.zip_bytes({"doejane_1001_50001_lab.zip": two, "parkmin_1005_50005_cudagraph.py": dl.GOOD}),
    )
    code, out, err = run_import(capsys, "canvas", str(download), "--into", str(tmp_path / "subs"))
    assert code == 0, err
    assert "kept 1001 doejane: 2 file(s)  (no cudagraph.py at its top, and not exactly one deeper" in out
    assert "kept 1005 parkmin: 1 file(s)\n" in out
