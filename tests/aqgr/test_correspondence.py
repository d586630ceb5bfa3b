"""Old and new codes as one: correspondence tables, section references, query expansion."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from aqgr import Archive, IndexSpec, Settings
from aqgr.foundation.errors import ReadError
from aqgr.interfaces.cli import app
from aqgr.pipeline.correspondence import SAMPLE_TABLE, CorrespondenceStore, load_tables, parse_table

from .helpers import write_judgments

runner = CliRunner()

TABLE = """old_act,old_section,new_act,new_section,subject,note
IPC,302,BNS,103(1),Punishment for murder.,
IPC,498A,BNS,85,Cruelty by husband.,split
IPC,498A,BNS,86,Cruelty defined.,split
IPC,302,BNS,103(1),Punishment for murder.,repeated
IPC,abc,BNS,4,Punishments.,
IPC,420,BNS
IEA,32,BSA,26,"Dying declaration, and the rest.",
,,BNS,5,,
OLD,12,NEW,7(2),,
"""


@pytest.fixture(scope="module")
def sample():
    return load_tables([SAMPLE_TABLE])


def test_a_bad_line_is_reported_with_its_number_and_the_rest_loaded(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TABLE, encoding="utf-8")
    table = load_tables([path])
    assert [(p.line, p.reason.split(" ")[0]) for p in table.problems] == [
        (5, "repeats"),
        (6, "not"),
        (7, "3"),
        (9, "old_act"),
    ]
    assert "line 6" in str(table.problems[1]) and "'abc'" in str(table.problems[1])
    assert len(table) == 5  # 302, 498A twice, 32, OLD 12
    # a section mapped to two sections keeps both, and both are shown
    assert [s for _, s, _ in table.counterparts("IPC", "498A")] == ["85", "86"]
    assert table.describe("under Section 498A IPC") == ["Section 498A IPC, now Sections 85 and 86 BNS"]
    # codes are whatever the table names: not tied to the Indian codes
    assert table.describe("Section 12 OLD applies") == ["Section 12 OLD, now Section 7(2) NEW"]
    assert table.expand("see s. 7 NEW").endswith("Section 12 OLD")


def test_a_table_without_the_columns_is_refused(tmp_path):
    with pytest.raises(ReadError, match="old_section"):
        parse_table("act,section\nIPC,302\n", "x.csv")
    with pytest.raises(ReadError, match="not_found"):
        load_tables([tmp_path / "absent.csv"])


@pytest.mark.parametrize(
    "text, code, sections",
    [
        ("convicted under s. 302 IPC and", "IPC", ("302",)),
        ("Section 302 of the Indian Penal Code, 1860", "IPC", ("302",)),
        ("charged under Sections 302/34 I.P.C.", "IPC", ("302", "34")),
        ("Sections 302, 307 and 34 IPC", "IPC", ("302", "307", "34")),
        ("Section 304-B IPC", "IPC", ("304B",)),
        ("Section 304 B I.P.C.", "IPC", ("304B",)),
        ("Sec. 103(1) BNS", "BNS", ("103(1)",)),
        ("Section 103 of the Bharatiya Nyaya Sanhita, 2023", "BNS", ("103",)),
        ("bail u/s 438 Cr.P.C.", "CrPC", ("438",)),
        ("Section 161 of the Code of Criminal Procedure", "CrPC", ("161",)),
        ("Section 482 BNSS", "BNSS", ("482",)),
        ("Section 32 of the Evidence Act", "IEA", ("32",)),
        ("Section 26 of the Bharatiya Sakshya Adhiniyam", "BSA", ("26",)),
    ],
)
def test_references_in_both_codes_forms_are_recognised(sample, text, code, sections):
    (found,) = sample.find(text)
    assert (found.code, found.sections) == (code, sections)


def test_what_is_not_a_reference_is_not_one(sample):
    assert sample.find("Act 45 of 1860 and the Arms Act, Section 25") == []
    assert sample.find("a penalty of 302 rupees") == []


def test_describe_says_both_and_rewrite_keeps_the_form(sample):
    assert sample.describe("Section 302 IPC") == ["Section 302 IPC, now Section 103(1) BNS"]
    assert sample.describe("Section 103 BNS") == ["Section 103 BNS, formerly Section 302 IPC"]
    assert sample.describe("Section 377 IPC") == [
        "Section 377 IPC: no counterpart in BNS (the correspondence table has none)"
    ]
    # the facts' sections come first
    assert sample.describe("Section 34 IPC and Section 302 IPC", facts="Section 103 BNS")[0].startswith(
        "Section 302 IPC"
    )
    text, done, left = sample.rewrite("convicted under Section 302 of the Indian Penal Code and Section 377 IPC")
    assert text == "convicted under Section 103(1) of the Bharatiya Nyaya Sanhita, 2023 and Section 377 IPC" and (
        done,
        left,
    ) == (1, 1)
    assert sample.rewrite("Sections 302/34 IPC")[0] == "Sections 103(1) and 3(5) BNS"
    # the codes' names outside a reference move too; a reference left as it was keeps its code
    assert (
        sample.rewrite("Section 304 Part II IPC (in short 'IPC'), Section 377 IPC and the Evidence Act")[0]
        == "Section 105 BNS (in short 'BNS'), Section 377 IPC and the Bharatiya Sakshya Adhiniyam, 2023"
    )


def test_expansion_writes_each_counterpart_as_the_reference_was_written(sample):
    assert sample.expand("charged under Section 103 BNS") == "charged under Section 103 BNS\nSection 302 IPC"
    assert sample.expand("Section 103 of the Bharatiya Nyaya Sanhita").endswith(
        "\nSection 302 of the Indian Penal Code"
    )
    assert sample.expand("Section 26 BSA", both_forms=True).endswith(
        "Section 32 IEA; Section 32 of the Indian Evidence Act"
    )
    assert sample.expand("no section named here") == "no section named here"


def test_the_archive_keeps_its_tables_and_replaces_a_pair(tmp_path):
    store = CorrespondenceStore(tmp_path / "home")
    assert store.load() is None
    report = store.add([SAMPLE_TABLE])
    assert report.pairs["IPC -> BNS"] > 5 and not report.problems
    assert store.load().counterparts("IPC", "302")[0][1] == "103(1)"
    other = tmp_path / "ipc.csv"
    other.write_text("old_act,old_section,new_act,new_section\nIPC,302,BNS,999\n", encoding="utf-8")
    store.add([other])  # replaces IPC -> BNS, keeps CrPC -> BNSS and IEA -> BSA
    loaded = store.load()
    assert [s for _, s, _ in loaded.counterparts("IPC", "302")] == ["999"]
    assert loaded.counterparts("IEA", "32")[0][1] == "26"


# A tiny archive: three murder appeals alike in their other words, each under its own IPC section;
# M2 and M3 share more of the facts' other words than M1.
MURDER = """{title}
Supreme Court of India

{date}
Criminal Appeal No. {no} of 2001
The Judgment was delivered by : K. Singh, J.
1. The appellant was convicted {section}for the murder of a neighbour with an axe after a dispute over a boundary wall between their fields in the village.
2. Learned counsel for the appellant contended that the eye witnesses were relatives of the deceased and interested witnesses whose evidence required corroboration.
3. The question that arises for consideration is whether the testimony of related eye witnesses can sustain a conviction for murder without independent corroboration.
4. It is well settled that the evidence of a related witness is not to be discarded for that reason alone but must be scrutinised with care. {extra}
5. The appeal is dismissed.
"""
TINY = {
    "M1": MURDER.format(
        title="Ram Kumar v State of Punjab", date="12 March 2002", no=12, section="under Section 302 IPC ", extra=""
    ),
    "M2": MURDER.format(
        title="Shyam Lal v State of Haryana",
        date="3 April 2003",
        no=77,
        section="under Section 304 IPC ",
        extra="The eye witnesses, relatives of the deceased neighbour, saw the axe blow in the dispute over the boundary wall of the fields.",
    ),
    "M3": MURDER.format(
        title="Gopal Das v State of Bihar",
        date="9 July 2004",
        no=31,
        section="under Section 307 IPC ",
        extra="The relatives of the deceased saw the accused strike the neighbour with an axe at the boundary wall of the fields.",
    ),
}
NEW_FACTS = (
    "The accused is charged under Section 103 BNS for the murder of a neighbour with an axe in a dispute over a boundary "
    "wall of the fields; the only eye witnesses are relatives of the deceased."
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("corr")
    archive = Archive(settings=Settings.resolve(root / "home", index=IndexSpec(embedder="hashing.v1")))
    archive.summarize([write_judgments(root / "in", TINY)])
    archive.build_index()
    return archive


def test_facts_in_the_new_code_find_the_judgment_in_the_old_one_only_with_the_table(tiny):
    options = tiny.settings.search.model_copy(
        update={"retrievers": ["bm25", "fulltext"], "citation_weight": 0.0, "min_score": 1}
    )
    searcher = tiny.open_searcher()
    before = searcher.search(NEW_FACTS, k=3, options=options)
    assert before.hits[0].judgment_id != "M1" and not any(h.sections for h in before.hits)
    report = tiny.add_correspondence([SAMPLE_TABLE])
    assert "IPC -> BNS" in report.pairs
    after = searcher.search(NEW_FACTS, k=3, options=options)  # an open searcher (the server's) reads the new table
    top = after.hits[0]
    assert top.judgment_id == "M1"
    assert top.sections == ["Section 302 IPC, now Section 103(1) BNS"]
    assert {h.judgment_id: h.sections for h in after.hits[1:]} == {
        "M2": ["Section 304 IPC, now Section 105 BNS"],
        "M3": ["Section 307 IPC, now Section 109 BNS"],
    }


def test_the_cli_loads_a_table_reports_bad_lines_and_shows_both_codes(tiny, tmp_path):
    home = str(tiny.settings.home)
    bad = tmp_path / "bad.csv"
    bad.write_text(TABLE, encoding="utf-8")
    result = runner.invoke(app, ["statutes", "--correspondence", str(bad), "--home", home])
    assert result.exit_code == 0, result.output
    assert "bad.csv, line 6: not a section number" in result.output and "4 line(s) skipped" in result.output
    result = runner.invoke(app, ["statutes", "--correspondence", str(SAMPLE_TABLE), "--home", home])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["search", NEW_FACTS, "--home", home, "-k", "3"])
    assert result.exit_code == 0, result.output
    assert "Sections: Section 302 IPC, now Section 103(1) BNS" in result.output
    result = runner.invoke(app, ["search", NEW_FACTS, "--home", home, "-k", "3", "--json"])
    hits = json.loads(result.stdout)["hits"]
    assert ["Section 302 IPC, now Section 103(1) BNS"] in [h["sections"] for h in hits]
    assert runner.invoke(app, ["statutes", "--home", home]).exit_code == 2


def test_statute_hits_show_their_sections_in_both_codes(tiny, tmp_path):
    from aqgr.pipeline.statutes import StatuteCollection

    folder = tmp_path / "statutes"
    folder.mkdir()
    (folder / "IPC_302.txt").write_text(
        "Title: Section 302 of the Indian Penal Code: punishment for murder\n"
        "Desc: Whoever commits murder shall be punished with death, or imprisonment for life.",
        encoding="utf-8",
    )
    (folder / "IPC_379.txt").write_text(
        "Title: Section 379 IPC: punishment for theft\n"
        "Desc: Whoever commits theft shall be punished with imprisonment.",
        encoding="utf-8",
    )
    collection = StatuteCollection(tiny.settings)
    collection.add([folder])
    result = collection.search(
        "punishment for murder under Section 103 BNS", [], k=2, correspondence=load_tables([SAMPLE_TABLE])
    )
    shown = {h.statute_id: h.sections for h in result.hits}
    assert shown == {
        "IPC_302": ["Section 302 IPC, now Section 103(1) BNS"],
        "IPC_379": ["Section 379 IPC: no counterpart in BNS (the correspondence table has none)"],
    }
    assert all(not h.sections for h in collection.search("punishment for murder under Section 103 BNS", [], k=2).hits)
