"""Bulk downloads as each platform writes them, for the import tests; built from the platforms'
own naming (see each module of grader/commands/lms_import for where it is documented):

- Canvas, "Download Submissions": one flat zip, ``sortablename[_LATE]_userid_attachmentid_file``;
  a re-upload renamed ``cudagraph-1.py``; a text entry ``sortablename_userid_text.html``;
- Moodle, "Download all submissions" (in folders, the default since 3.1):
  ``Full Name_participantid_assignsubmission_file_/file``, online text under
  ``..._assignsubmission_onlinetext_/onlinetext.html``;
- Gradescope, "Export Submissions": ``assignment_<id>_export/submission_metadata.yml`` (Ruby
  symbol keys) and ``submission_<id>/`` folders;
- GitHub Classroom: ``<assignment>-submissions/<assignment>-<username>/`` clones with ``.git``.
"""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

GOOD = "class LaunchCounter:\n    n = 0\n"  # the file's text does not matter to an import


def zip_bytes(
    entries: dict[str, bytes | str], *, symlinks: dict[str, str] | None = None, modes: dict[str, int] | None = None
) -> bytes:
    """A zip of ``entries`` (name -> content), with ``symlinks`` (name -> target) and entries of
    other ``modes`` (name -> st_mode) as a hostile zip would carry them."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
        for name, mode in (modes or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            z.writestr(info, b"")
    return buf.getvalue()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def lab_zip(top: str = "my-lab/") -> bytes:
    """What a student uploads when asked for a zip: their folder, with a Mac's litter."""
    return zip_bytes(
        {
            f"{top}cudagraph.py": GOOD + "# zipped\n",
            f"{top}helpers.py": "X = 1\n",
            f"__MACOSX/{top}._cudagraph.py": b"\x00\x05\x16\x07",
            f"{top}.DS_Store": b"\x00\x00\x00\x01Bud1",
        }
    )


def canvas_download(tmp: Path) -> Path:
    """Five students: one plain, one late with a re-upload (cudagraph-1.py, a later attachment),
    one who uploaded a zip, one text entry, one with two files."""
    return write(
        tmp / "submissions.zip",
        zip_bytes(
            {
                "doejane_1001_50001_cudagraph.py": GOOD + "# jane\n",
                "obrienseán_LATE_1002_50002_cudagraph.py": GOOD + "# first try\n",
                "obrienseán_LATE_1002_50107_cudagraph-1.py": GOOD + "# second try\n",
                "nguyenbao_1003_50003_lab.zip": lab_zip(),
                "parkmin_1005_text.html": "<p>my answer</p>",
                "adamseve_1004_50004_cudagraph.py": GOOD + "# eve\n",
                "adamseve_1004_50005_notes.txt": "notes\n",
            }
        ),
    )


def moodle_download(tmp: Path) -> Path:
    return write(
        tmp / "CS240-Lab-12345.zip",
        zip_bytes(
            {
                "Jane Doe_1234567_assignsubmission_file_/cudagraph.py": GOOD + "# jane\n",
                "Seán O'Brien_1234568_assignsubmission_file_/lab.zip": lab_zip("lab/"),
                "Seán O'Brien_1234568_assignsubmission_onlinetext_/onlinetext.html": "<p>hi</p>",
                "Bao Nguyen_1234569_assignsubmission_onlinetext_/onlinetext.html": "<p>no file</p>",
                "Min Park_1234570_assignsubmission_file_cudagraph.py": GOOD + "# flat\n",  # without folders
            }
        ),
    )


GRADESCOPE_METADATA = """\
submission_201:
  :submitters:
  - :name: Jane Doe
    :sid: '1001'
    :email: jdoe@uni.edu
  :created_at: 2026-03-01 23:10:00.000000000 -08:00
  :score: !ruby/object:BigDecimal 18:0.45e2
  :status: processed
  :history:
  - :id: 188
    :created_at: 2026-02-28 10:00:00.000000000 -08:00
    :score: 30.0
    :active: false
submission_202:
  :submitters:
  - :name: Bao Nguyen
    :sid: '1003'
    :email: bnguyen@uni.edu
  - :name: Min Park
    :sid: ''
    :email: mpark@uni.edu
  :created_at: 2026-03-02 09:00:00.000000000 -08:00
  :history: []
submission_203:
  :submitters:
  - :name: Nobody Uploaded
    :sid: '1009'
  :history: []
"""


def gradescope_download(tmp: Path) -> Path:
    root = "assignment_777_export/"
    return write(
        tmp / "assignment_777_export.zip",
        zip_bytes(
            {
                f"{root}submission_metadata.yml": GRADESCOPE_METADATA,
                f"{root}submission_201/cudagraph.py": GOOD + "# jane\n",
                f"{root}submission_202/my-lab/cudagraph.py": GOOD + "# group\n",
                f"{root}submission_202/my-lab/README.md": "us\n",
                f"{root}submission_999/cudagraph.py": GOOD + "# stray\n",
                f"{root}.DS_Store": b"Bud1",
            }
        ),
    )


def github_classroom_download(tmp: Path, assignment: str = "cuda-graphs") -> Path:
    root = tmp / f"{assignment}-submissions"
    for user, text in (("janedoe", "# jane\n"), ("bao-nguyen", "# bao\n")):
        repo = root / f"{assignment}-{user}"
        (repo / ".git" / "objects").mkdir(parents=True)
        (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        (repo / "cudagraph.py").write_text(GOOD + text, encoding="utf-8")
        (repo / "__pycache__").mkdir()
        (repo / "__pycache__" / "cudagraph.cpython-311.pyc").write_bytes(b"\x00" * 16)
    return root
