"""The correspondence benchmark's passages: real-judgment paragraphs rewritten into the new code."""

from __future__ import annotations

from aqgr.eval.bench.correspondence import build_passages, passage_of, passages_of
from aqgr.pipeline.correspondence import SAMPLE_TABLE, load_tables

TABLE = load_tables([SAMPLE_TABLE])


def test_the_passage_starts_near_the_first_section_and_is_rewritten_whole():
    paragraphs = [
        "The appeal arises out of a dispute over land between two brothers.",
        "The respondent lodged a report. The appellant was tried for offences under Sections 302/34 of the Indian Penal Code "
        "and convicted. The High Court confirmed the conviction relying on Section 32 of the Evidence Act.",
    ]
    passage, rewritten = passage_of(paragraphs, TABLE)
    assert passage.startswith("The respondent lodged a report.") and "Section 32 of the Evidence Act" in passage
    assert "Sections 103(1) and 3(5) of the Bharatiya Nyaya Sanhita, 2023" in rewritten
    assert "Section 26 of the Bharatiya Sakshya Adhiniyam, 2023" in rewritten
    assert not [r for r in TABLE.find(rewritten) if TABLE.is_old(r.code)]


def test_a_passage_with_a_section_the_table_lacks_is_not_taken():
    assert passage_of(["He was convicted under Section 377 IPC and Section 302 IPC."], TABLE) is None
    texts = {
        "J1": "Title\nconvicted under Section 377 IPC.",
        "J2": "Title\nconvicted under Section 302 IPC.",
        "J3": "Title\nno sections",
    }
    assert set(build_passages(texts, TABLE, 5)) == {"J2"}


def test_every_naming_paragraph_gives_a_passage_when_it_maps():
    paragraphs = [
        "Title of the case",
        "He was convicted under Section 377 IPC.",  # names a section without a counterpart: skipped
        "The appellant was tried under Section 302 IPC.",
        "Nothing about sections here.",
        "The High Court relied on Section 32 of the Evidence Act.",
    ]
    found = passages_of(paragraphs, TABLE)
    assert [p for p, _ in found] == [
        "The appellant was tried under Section 302 IPC.",
        "The High Court relied on Section 32 of the Evidence Act.",
    ]
    assert len(passages_of(paragraphs, TABLE, 2)) == 1  # the first two naming paragraphs, one of them maps
    assert passage_of(paragraphs, TABLE) is None  # the first setting: the first naming paragraph or none


def test_passages_are_counted_across_judgments_and_the_last_judgment_is_cut():
    texts = {
        f"J{i}": "Title\nconvicted under Section 302 IPC.\nand under Section 32 of the Evidence Act." for i in range(4)
    }
    all_of = build_passages(texts, TABLE, 0, 0)
    assert len(all_of) == 4 and all(len(v) == 2 for v in all_of.values())
    five = build_passages(texts, TABLE, 5, 0)
    assert sorted(len(v) for v in five.values()) == [1, 2, 2] and list(five) == list(all_of)[:3]
    assert all(len(v) == 1 for v in build_passages(texts, TABLE, 0, 1).values())
