"""The worker's view hides every name it has no use for (grader.run.worker.mounts): what
``hidden_entries`` decides, apart from mounting it (the mounts need root; see
tests/test_isolation*.py for the view as a worker sees it)."""

from __future__ import annotations

import os
import stat

import pytest

from grader.run.worker import mounts


@pytest.fixture
def tree(tmp_path):
    top = tmp_path / "top"
    (top / "kept").mkdir(parents=True)
    (top / "kept" / "inside").write_text("x")
    (top / "other_folder").mkdir()
    (top / "other_file").write_text("secret")
    (top / "a_link").symlink_to(top / "other_file")
    os.mkfifo(top / "a_fifo")
    return top


def _views(keep):
    return {v.folder: v for v in mounts.hidden_entries(keep)}


def test_every_other_name_is_covered_as_its_type_and_links_are_shown(tree, monkeypatch):
    monkeypatch.setattr(mounts, "STABLE_REAL_PATHS", {})
    view = _views((str(tree / "kept"),))[str(tree)]
    covered = {name: mode for name, mode in view.covered}
    shown = {name: mode for name, mode in view.shown}
    assert set(covered) == {"other_folder", "other_file", "a_fifo"}
    assert stat.S_ISDIR(covered["other_folder"]) and not stat.S_ISDIR(covered["other_file"])
    assert not stat.S_ISDIR(covered["a_fifo"]) and not stat.S_ISLNK(covered["a_fifo"])
    assert set(shown) == {"kept", "a_link"} and stat.S_ISLNK(shown["a_link"]) and stat.S_ISDIR(shown["kept"])
    assert view.mode == os.lstat(tree).st_mode
    assert str(tree / "kept") not in _views((str(tree / "kept"),))  # nothing looked into beneath a kept path


def test_a_stable_path_is_resolved_once_and_a_submission_s_every_time(tree, monkeypatch):
    monkeypatch.setattr(mounts, "STABLE_REAL_PATHS", {})
    stable, fresh = str(tree / "kept"), str(tree / "other_folder")
    mounts.remember_real_paths((stable, str(tree / "missing")))
    assert mounts.STABLE_REAL_PATHS == {stable: os.path.realpath(stable)}  # what does not exist: not kept
    resolved = []
    real = os.path.realpath

    def counted(path, *args, **kwargs):
        resolved.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(mounts.os.path, "realpath", counted)
    view = _views((stable, fresh))[str(tree)]
    assert resolved == [fresh]
    assert {"kept", "other_folder"} <= {name for name, _ in view.shown}
