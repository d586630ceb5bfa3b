"""A file aqgr replaces is the old one or the new one, never half of one, whatever fails midway."""

import os
import stat

import pytest

from aqgr.foundation.files import atomic_file, write_atomic


def test_a_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "links.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    write_atomic(path, '{"new": true}')
    assert path.read_text() == '{"new": true}'
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # the old file's permissions kept
    write_atomic(tmp_path / "blob", b"\x00\x01")
    assert (tmp_path / "blob").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blob", "links.json"]


def test_a_failure_midway_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "statutes.json"
    path.write_text("the good one")
    with pytest.raises(RuntimeError, match="disk full"), atomic_file(path) as stream:
        stream.write("half of the new")
        raise RuntimeError("disk full")
    assert path.read_text() == "the good one"
    assert [p.name for p in tmp_path.iterdir()] == ["statutes.json"]
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "a lone surrogate \udcff")
    assert path.read_text() == "the good one"
    assert [p.name for p in tmp_path.iterdir()] == ["statutes.json"]
