"""Batch summarisation: bad input is recorded per file, and nothing stored is lost."""

import time

from aqgr import Archive
from aqgr.archive.store import Store
from tests.aqgr.helpers import JUDGMENTS, write_judgments

# `archive` (tests/aqgr/conftest.py) runs every test here on SQLite and on PostgreSQL.


def test_summarises_a_folder_and_stores_valid_summaries(archive, tmp_path):
    report = archive.summarize([write_judgments(tmp_path / "in")])
    assert sorted(report.summarised) == sorted(JUDGMENTS)
    assert not report.failed
    summary = archive.summary("A2")
    assert summary.provenance.engine == "extractive.v1"
    assert summary.parties.appellants and summary.facts
    assert archive.text("A2").startswith("Sunita Devi")


def test_unchanged_is_a_no_op_and_a_changed_file_is_redone(archive, tmp_path):
    folder = write_judgments(tmp_path / "in")
    archive.summarize([folder])
    first = archive.summary("A1").provenance.created_at
    again = archive.summarize([folder])
    assert sorted(again.unchanged) == sorted(JUDGMENTS) and not again.summarised
    assert archive.summary("A1").provenance.created_at == first
    (folder / "A1.txt").write_text(JUDGMENTS["A1"].replace("kitchen", "courtyard"), encoding="utf-8")
    third = archive.summarize([folder])
    assert third.summarised == ["A1"]
    assert "courtyard" in archive.text("A1")


def test_bad_files_are_recorded_and_the_batch_goes_on(archive, tmp_path):
    folder = write_judgments(tmp_path / "in", {"good": JUDGMENTS["A1"]})
    (folder / "empty.txt").write_bytes(b"")
    (folder / "blank.txt").write_text("   \n\n  ", encoding="utf-8")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 40)
    (folder / "notes.xyz").write_text("not a judgment", encoding="utf-8")
    report = archive.summarize([folder, tmp_path / "does-not-exist"])
    assert report.summarised == ["good"]
    reasons = {f.path.rsplit("/", 1)[-1]: f.reason for f in report.failed}
    assert reasons["empty.txt"] == "empty" and reasons["blank.txt"] == "empty" and reasons["binary.txt"] == "binary"
    assert reasons["does-not-exist"] == "missing"
    assert any(p.endswith("notes.xyz") for p in report.skipped_unsupported)
    recorded = {f.source_path.rsplit("/", 1)[-1]: f.reason for f in archive._store.failures()}
    assert recorded["binary.txt"] == "binary" and recorded["empty.txt"] == "empty"
    assert archive.status()["failures_by_reason"]["empty"] == 2


def test_non_utf8_text_is_decoded(archive, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    text = JUDGMENTS["A2"].replace("Sunita Devi", "Sunita D\u00e9vi \u2013 widow")
    (folder / "cp.txt").write_bytes(text.encode("cp1252"))
    (folder / "u16.txt").write_bytes(text.encode("utf-16"))
    report = archive.summarize([folder])
    assert sorted(report.summarised) == ["cp", "u16"]
    assert "D\u00e9vi \u2013 widow" in archive.text("cp") and "D\u00e9vi \u2013 widow" in archive.text("u16")


def test_huge_judgment_is_summarised(archive, tmp_path):
    body = JUDGMENTS["A1"]
    filler = "\n".join(
        f"{n}. The witness deposed about the events of that night and the conduct of the accused in the village."
        for n in range(6, 6000)
    )
    text = (body + filler)[:600_000].ljust(600_000, " ")
    folder = write_judgments(tmp_path / "in", {"huge": text})
    started = time.perf_counter()
    report = archive.summarize([folder])
    assert report.summarised == ["huge"], report.failed
    assert time.perf_counter() - started < 60
    assert len(archive.summary("huge").model_dump_json()) < 20_000


def test_judgment_without_header_still_gets_a_summary(archive, tmp_path):
    text = (
        "The appellant challenged the order. " * 5
        + "\nThe question is whether the order was valid.\nThe appeal is dismissed.\n"
    )
    report = archive.summarize([write_judgments(tmp_path / "in", {"nohead": text})])
    assert report.summarised == ["nohead"]


def test_duplicate_ids_are_failures_and_nothing_stored_is_lost(archive, tmp_path):
    first = write_judgments(tmp_path / "one", {"A1": JUDGMENTS["A1"]})
    second = write_judgments(tmp_path / "two", {"A1": JUDGMENTS["A2"]})
    report = archive.summarize([first, second])
    assert report.summarised == ["A1"] and [f.reason for f in report.failed] == ["duplicate_id"]
    later = archive.summarize([second])  # another batch: the id already belongs to a file that still exists
    assert [f.reason for f in later.failed] == ["duplicate_id"]
    assert archive.text("A1") == JUDGMENTS["A1"].strip("\n")


def test_an_engine_crash_on_one_judgment_is_recorded(archive, tmp_path, monkeypatch):
    from aqgr.summarizer.extractive.engine import ExtractiveSummarizer as ExtractiveEngine

    real = ExtractiveEngine.summarize

    def flaky(self, judgment):
        if judgment.judgment_id == "A3":
            raise RuntimeError("boom")
        return real(self, judgment)

    monkeypatch.setattr(ExtractiveEngine, "summarize", flaky)
    report = archive.summarize([write_judgments(tmp_path / "in")])
    assert [(f.judgment_id, f.reason) for f in report.failed] == [("A3", "engine_error")]
    assert len(report.summarised) == 3


def test_store_survives_reopening(database_url, home, tmp_path):
    Archive(home).summarize([write_judgments(tmp_path / "in")])
    store = Store(database_url)
    assert store.count_judgments() == len(JUDGMENTS)
    assert len(store.summaries("extractive.v1")) == len(JUDGMENTS)
