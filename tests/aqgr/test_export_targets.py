"""`aqgr export`: --out is written only as a regular file, atomically; whatever else is there (a link,
a FIFO, a device, a folder) is refused without --force; and export then import gives back every summary."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqgr import Archive
from aqgr.archive.store import Store
from aqgr.archive.transfer import export_summaries, file_name_for, import_summaries, judgment_id_of_file
from aqgr.foundation.targets import kind_of
from aqgr.interfaces.cli import app
from aqgr.schemas.validation import validate_summary
from tests.aqgr.helpers import write_judgments

runner = CliRunner()


@pytest.fixture
def source(tmp_path):
    """A home with the four test judgments summarised."""
    home = tmp_path / "source"
    Archive(home).summarize([write_judgments(tmp_path / "in")])
    return home


def _export(home, out, *more):
    return runner.invoke(app, ["export", "--home", str(home), "--out", str(out), *more])


def test_a_symbolic_link_is_refused_and_left_alone(source, tmp_path):
    victim = tmp_path / "someone-elses.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "out.jsonl"
    link.symlink_to(victim)
    result = _export(source, link)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "symbolic link" in result.stderr and "--force" in result.stderr
    assert link.is_symlink() and victim.read_text() == "keep me\n"

    result = _export(source, link, "--force")  # the user means it: written where the link leads
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and len(victim.read_text().splitlines()) == 4


def test_a_fifo_is_refused_and_with_force_its_reader_gets_every_line(source, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = _export(source, fifo)
    assert result.exit_code == 2 and "FIFO" in result.stderr
    assert Path(fifo).is_fifo()

    got: list[str] = []
    reader = threading.Thread(target=lambda: got.extend(open(fifo, encoding="utf-8").read().splitlines()))
    reader.start()
    result = _export(source, fifo, "--force")
    reader.join(timeout=60)
    assert result.exit_code == 0, result.output
    assert len(got) == 4 and {json.loads(line)["judgment_id"] for line in got} == {"A1", "A2", "A3", "A4"}


def test_a_device_a_socket_or_a_folder_is_refused(source, tmp_path):
    assert (
        kind_of(Path("/dev/null")) == "a character device"
    )  # looked at only: a broken export run as root would replace it
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))  # a special file a test may make anywhere
    result = _export(source, tmp_path / "sock")
    sock.close()
    assert result.exit_code == 2 and "a socket" in result.stderr and (tmp_path / "sock").is_socket()
    folder = tmp_path / "a-folder"
    folder.mkdir()
    for extra in ((), ("--force",)):
        result = _export(source, folder, *extra)
        assert result.exit_code == 2 and "is a folder" in result.stderr and "Traceback" not in result.output
    result = _export(source, tmp_path / "plain-file", "--format", "json-dir")
    assert result.exit_code == 0
    result = _export(source, tmp_path / "plain-file" / "A1.json", "--format", "json-dir")
    assert result.exit_code == 2 and "not a folder" in result.stderr


def test_a_regular_file_is_replaced_atomically_keeping_its_permissions(source, tmp_path):
    out = tmp_path / "all.jsonl"
    out.write_text("old\n")
    out.chmod(0o640)
    result = _export(source, out)
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 4 and (out.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary file left


def _store_with(tmp_path, documents: list[dict]) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'odd.db'}")
    for document in documents:
        store.save_imported(validate_summary(document), source="test")
    return store


ODD_TEXT = ["line\u2028separator", "para\u2029graph", "next\x85line", "form\x0cfeed", "carriage\rreturn", "\ufeffbom"]
ODD_IDS = ["x" * 300, "देवनागरी" * 12, "C1", "c1", "a~b", ".hidden", "sc/2001/C12", "%2F", "~" * 10, "漢" * 300]


def test_export_then_import_gives_back_every_summary(source, tmp_path):
    base = next(Store(f"sqlite:///{source / 'aqgr.db'}", create=False).iter_summaries())
    documents = [{**base, "judgment_id": f"T{i}", "facts": text} for i, text in enumerate(ODD_TEXT)]
    documents += [{**base, "judgment_id": judgment_id} for judgment_id in ODD_IDS]
    store = _store_with(tmp_path, documents)
    stored = {d["judgment_id"]: d for d in store.iter_summaries()}
    assert len(stored) == len(documents)
    for fmt, out in (("jsonl", tmp_path / "all.jsonl"), ("json-dir", tmp_path / "dir")):
        assert export_summaries(store, out, format=fmt) == len(documents)
        fresh = Store(f"sqlite:///{tmp_path / (fmt + '.db')}")
        report = import_summaries(fresh, [out])
        assert report.invalid == [] and report.refused == []
        assert {d["judgment_id"]: d for d in fresh.iter_summaries()} == stored, fmt
    names = [p.name for p in (tmp_path / "dir").iterdir()]
    assert len(names) == len(documents) and max(len(n.encode()) for n in names) <= 200
    assert len({n.casefold() for n in names}) == len(names)  # C1 and c1 apart on a case-insensitive disk too


def test_file_names_read_back_as_their_ids():
    for judgment_id in ("C1", "sc/2001/C12", ".hidden", "a~b", "%7E", "Ram Kumar (1998) [SC]", "é/漢"):
        assert judgment_id_of_file(file_name_for(judgment_id)) == judgment_id
    assert judgment_id_of_file(file_name_for("x" * 300)) is None  # hashed: the id is in the file


def test_a_json_dir_export_that_fails_part_way_says_what_it_wrote(source, tmp_path):
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "A3.json").mkdir()  # os.replace cannot put a file over a folder: the third file fails
    (folder / "A3.json" / "inside").write_text("x")
    result = _export(source, folder, "--format", "json-dir")
    assert result.exit_code == 2 and "Traceback" not in result.output
    flat = " ".join(result.stderr.split())
    assert "2 file(s) were written before it" in flat and "unchanged" not in flat
