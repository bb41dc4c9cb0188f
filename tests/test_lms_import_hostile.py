"""`graphgrade import` reads downloads as hostile input (grader/commands/lms_import/safe_archive.py):
an entry whose name climbs out or is absolute, a link, a device, a bomb (size, ratio, entry count,
nesting) and two names equal once made safe are each refused with one line; nothing is written
outside --into; every other student's submission is still written."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest
from support import lms_downloads as dl

from grader.commands import cli
from grader.commands.lms_import.safe_archive import ArchiveError, Budget, Limits, read_zip

GOOD = dl.GOOD


def run_import(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["import", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def everything(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def canvas_with(tmp_path: Path, hostile: dict[str, bytes | str], **kw) -> Path:
    """A Canvas download: one honest student (1001) beside the hostile entries."""
    entries = {"doejane_1001_50001_cudagraph.py": GOOD, **hostile}
    return dl.write(tmp_path / "dl" / "submissions.zip", dl.zip_bytes(entries, **kw))


def import_canvas(tmp_path: Path, capsys, download: Path) -> tuple[int, str, str, Path]:
    into = tmp_path / "work" / "subs"
    before = everything(tmp_path)
    code, out, err = run_import(capsys, "canvas", str(download), "--into", str(into))
    after = everything(tmp_path)
    outside = {p for p in after - before if not p.startswith("work/subs")} - {"work"}
    assert not outside, f"written outside --into: {sorted(outside)}"
    assert "Traceback" not in err
    assert (into / "1001" / "cudagraph.py").read_text(encoding="utf-8") == GOOD  # nothing else lost
    return code, out, err, into


def refusals(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("graphgrade: refused ")]


@pytest.mark.parametrize(
    "name, why",
    [
        ("../../escaped.py", "climbs out"),
        ("evil_1002_50002_../../../escaped.py", "climbs out"),
        ("..\\..\\escaped.py", "climbs out"),  # a Windows zip's separator
        ("/tmp/escaped.py", "an absolute name"),
        ("C:/escaped.py", "an absolute name"),
        ("evil_1002_50002_bad\x07name.py", "a control character"),
    ],
)
def test_a_name_that_climbs_out_or_is_absolute_is_refused_in_one_line(tmp_path, capsys, name, why):
    code, _, err, into = import_canvas(tmp_path, capsys, canvas_with(tmp_path, {name: "pwned = 1\n"}))
    assert code == 1
    (line,) = refusals(err)
    assert why in line and "submissions.zip" in line
    assert not any("escaped" in p for p in everything(tmp_path))


def test_a_link_in_a_zip_is_refused_and_never_followed(tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("the answer key\n", encoding="utf-8")
    download = canvas_with(tmp_path, {}, symlinks={"evil_1002_50002_cudagraph.py": str(secret)})
    code, _, err, into = import_canvas(tmp_path, capsys, download)
    assert code == 1 and "a link (never followed or written)" in refusals(err)[0]
    assert not any(p.is_symlink() for p in into.rglob("*"))
    assert "the answer key" not in "".join(p.read_text(encoding="utf-8") for p in into.rglob("*") if p.is_file())


@pytest.mark.parametrize("mode", [stat.S_IFCHR | 0o666, stat.S_IFBLK | 0o666, stat.S_IFIFO | 0o666])
def test_a_device_or_fifo_in_a_zip_is_refused(tmp_path, capsys, mode):
    download = canvas_with(tmp_path, {}, modes={"evil_1002_50002_cudagraph.py": mode})
    code, _, err, _ = import_canvas(tmp_path, capsys, download)
    assert code == 1 and "a device, FIFO or socket" in refusals(err)[0]


def test_links_and_fifos_in_a_folder_download_are_refused(tmp_path, capsys):
    root = dl.github_classroom_download(tmp_path)
    evil = root / "cuda-graphs-mallory"
    evil.mkdir()
    (evil / "cudagraph.py").symlink_to("/etc/passwd")
    (evil / "secrets").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(evil / "pipe")
    code, out, err = run_import(capsys, "github-classroom", str(root), "--into", str(tmp_path / "subs"))
    assert code == 1, err
    lines = refusals(err)
    assert len(lines) == 3 and sum("a link" in x for x in lines) == 2 and sum("FIFO" in x for x in lines) == 1
    assert (tmp_path / "subs" / "janedoe" / "cudagraph.py").is_file()  # the others are all written
    assert not any(p.is_symlink() for p in (tmp_path / "subs").rglob("*"))


def test_a_ratio_bomb_is_refused_before_it_is_inflated(tmp_path, capsys):
    download = canvas_with(tmp_path, {"evil_1002_50002_cudagraph.py": b"\0" * (8 << 20)})
    code, _, err, into = import_canvas(tmp_path, capsys, download)
    assert code == 1 and "compressed more than 200 to 1" in refusals(err)[0]
    assert not (into / "1002" / "cudagraph.py").exists()


def test_a_bomb_inside_a_students_zip_is_refused_too(tmp_path, capsys):
    inner = dl.zip_bytes({"cudagraph.py": GOOD, "big.bin": b"\0" * (8 << 20), "../../up.py": "x"})
    code, _, err, into = import_canvas(tmp_path, capsys, canvas_with(tmp_path, {"evil_1002_50002_lab.zip": inner}))
    lines = refusals(err)
    assert code == 1 and len(lines) == 2
    assert any("1002/lab.zip: big.bin: compressed more than" in x for x in lines)
    assert any("1002/lab.zip: ../../up.py: a name that climbs out" in x for x in lines)
    assert (into / "1002" / "cudagraph.py").is_file()  # what was safe in that zip is kept


def test_the_size_entry_count_and_nesting_budgets_hold(tmp_path):
    small = Limits(max_entries=5, max_total_bytes=900, max_entry_bytes=600, max_depth=2)
    many = dl.zip_bytes({f"f{i}.py": "x" for i in range(6)})
    with pytest.raises(ArchiveError, match="more than 5 entries"):
        read_zip(many, "many.zip", Budget(small))
    # the count the end record declares is read before zipfile parses the central directory
    forged = bytearray(dl.zip_bytes({"a.py": "x"}))
    end = forged.rindex(b"PK\x05\x06")
    forged[end + 10 : end + 12] = (0xFFFF).to_bytes(2, "little")  # "ZIP64: look elsewhere for the count"
    with pytest.raises(ArchiveError, match="more than 5 entries"):
        read_zip(bytes(forged), "forged.zip", Budget(small))
    sized = dl.zip_bytes({"a.py": os.urandom(500), "b.py": os.urandom(500), "c.py": os.urandom(700)})
    got = read_zip(sized, "sized.zip", Budget(small))
    assert [e.name for e in got.entries] == ["a.py"]
    assert [r.why for r in got.refused] == [
        "the download would pass 900 bytes in all (a bomb?)",
        "700 bytes, more than the 600 one file may hold",
    ]
    nested = dl.zip_bytes({"a.zip": dl.zip_bytes({"b.zip": dl.zip_bytes({"c.py": "x"})})})
    with pytest.raises(ArchiveError, match="nested more than 2 deep"):
        read_zip(nested, "n.zip", Budget(small), depth=2)


def test_a_size_that_lies_in_the_header_is_refused_not_trusted(tmp_path, capsys):
    data = bytearray(canvas_with(tmp_path, {"evil_1002_50002_cudagraph.py": "A" * 4000}).read_bytes())
    with zipfile.ZipFile(tmp_path / "dl" / "submissions.zip") as z:
        info = z.getinfo("evil_1002_50002_cudagraph.py")
    # the central directory's uncompressed size says 10 bytes; the data inflates to 4000
    central = data.rindex(b"PK\x01\x02")
    assert data[central + 46 : central + 46 + len(info.filename)] == info.filename.encode()
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    download = tmp_path / "dl" / "submissions.zip"
    download.write_bytes(bytes(data))
    code, _, err, into = import_canvas(tmp_path, capsys, download)
    assert code == 1 and "cannot be read" in refusals(err)[0]
    assert not (into / "1002").exists() or not (into / "1002" / "cudagraph.py").exists()


def test_names_equal_once_made_safe_are_refused_the_second_time(tmp_path, capsys):
    inner = dl.zip_bytes(
        {
            "Cudagraph.py": "a\n",
            "cudagraph.py": "b\n",
            "x?.py": "c\n",
            "x_.py": "d\n",
            "pkg/m.py": "e\n",
            "pkg/n.py": "f\n",  # the same folder: no clash
            "PKG/o.py": "g\n",  # a folder spelt otherwise
            "pkg/m.py/p.py": "h\n",  # a folder where a file is
        }
    )
    code, _, err, into = import_canvas(tmp_path, capsys, canvas_with(tmp_path, {"evil_1002_50002_lab.zip": inner}))
    lines = refusals(err)
    assert code == 1 and len(lines) == 4 and all("once made safe; not written" in x for x in lines)
    assert sorted(p.name for p in (into / "1002").iterdir()) == ["Cudagraph.py", "pkg", "x_.py"]
    assert sorted(p.name for p in (into / "1002" / "pkg").iterdir()) == ["m.py", "n.py"]
    assert (into / "1002" / "x_.py").read_text(encoding="utf-8") == "c\n"  # the first one, never replaced


def test_two_students_whose_folders_would_be_the_same_are_not_merged(tmp_path, capsys):
    root = dl.github_classroom_download(tmp_path)
    (root / "cuda-graphs-JaneDoe").mkdir()
    (root / "cuda-graphs-JaneDoe" / "cudagraph.py").write_text("other\n", encoding="utf-8")
    code, _, err = run_import(capsys, "github-classroom", str(root), "--into", str(tmp_path / "subs"))
    assert code == 1 and "the same folder name as" in refusals(err)[0]
    assert [p.name for p in (tmp_path / "subs").iterdir() if p.name.casefold() == "janedoe"] == ["JaneDoe"]
    assert (tmp_path / "subs" / "JaneDoe" / "cudagraph.py").read_text(encoding="utf-8") == "other\n"


def test_malformed_gradescope_metadata_is_one_line(tmp_path, capsys):
    bad = dl.write(
        tmp_path / "export.zip",
        dl.zip_bytes({"x/submission_metadata.yml": "a: [\n", "x/submission_1/cudagraph.py": GOOD}),
    )
    code, _, err = run_import(capsys, "gradescope", str(bad), "--into", str(tmp_path / "subs"))
    assert code == 2 and err.count("\n") == 1 and "not readable YAML" in err
    evil = dl.write(
        tmp_path / "export2.zip",
        dl.zip_bytes({"submission_metadata.yml": "!!python/object/apply:os.system ['touch pwned']\n"}),
    )
    code, _, err = run_import(capsys, "gradescope", str(evil), "--into", str(tmp_path / "subs2"))
    assert code == 2 and "Traceback" not in err and not (Path.cwd() / "pwned").exists()


def test_a_gradescope_submitter_id_is_one_folder_name_never_a_path(tmp_path, capsys):
    meta = (
        "submission_1:\n  :submitters:\n  - :name: Mallory\n    :sid: ../../escaped\n"
        "submission_2:\n  :submitters:\n  - :name: Dot\n    :sid: '..'\n"
    )
    download = dl.write(
        tmp_path / "dl" / "export.zip",
        dl.zip_bytes(
            {
                "x/submission_metadata.yml": meta,
                "x/submission_1/cudagraph.py": GOOD,
                "x/submission_2/cudagraph.py": GOOD,
            }
        ),
    )
    into = tmp_path / "work" / "subs"
    code, out, err = run_import(capsys, "gradescope", str(download), "--into", str(into))
    assert code == 0, err
    assert sorted(p.name for p in into.iterdir()) == ["_", "_.._escaped"]  # graphgrade's folder-name rule
    assert not any("escaped" in p for p in everything(tmp_path) if not p.startswith("work/subs"))
