"""Search filters and facets on a tiny archive (the hashing embedder, no torch), and the
normalisation of the values they match."""

import sqlite3
from datetime import date

import pytest
from pydantic import ValidationError

from aqgr import Filters, SearchOptions
from aqgr.foundation.errors import IndexMismatchError, InvalidFilterError
from aqgr.retrieval.embedded.facets import (
    disposal_of,
    judge_clause,
    judge_names,
    judge_terms,
    normalise_court,
    parse_decided,
    statute_terms,
)
from aqgr.schemas.filters import make_filters
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, JUDGMENTS, indexed_archive

EVERY = SearchOptions(min_score=1)  # hits are not cut by the explainer's score: what the filter admits shows

# One more judgment: a Bombay High Court one by a judge named in the long form.
MORE = {
    **JUDGMENTS,
    "B1": """Anil Shinde v State of Maharashtra
High Court of Judicature at Bombay

21 January 2015
Criminal Appeal No. 88 of 2014
The Judgment was delivered by : Hon'ble Mr. Justice Arjan Kumar Sikri
1. The appellant was convicted under Section 302 of the Indian Penal Code on a dying declaration made by the deceased to a police constable.
2. Learned counsel for the appellant contended that a dying declaration to a constable needs corroboration.
3. The question is whether a dying declaration recorded by a police officer can be the sole basis of conviction.
4. A dying declaration recorded by a police officer is to be scrutinised with care, but may be acted upon if it is true and voluntary.
5. The appeal is partly allowed and the sentence is reduced.
""",
}


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    base = tmp_path_factory.mktemp("filters")
    return indexed_archive(base / "home", base / "in", MORE)


def hits(archive, options=EVERY, **filters):
    return [
        h.judgment_id
        for h in archive.search(DYING_DECLARATION_FACTS, k=10, options=options, filters=Filters(**filters)).hits
    ]


# --- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written",
    ["Supreme Court of India", "SC", "Hon'ble Supreme Court", "IN THE SUPREME COURT OF INDIA", "The Supreme Court"],
)
def test_the_supreme_court_is_one_court_however_written(written):
    assert normalise_court(written) == ("Supreme Court of India", "supreme")


@pytest.mark.parametrize(
    "written", ["High Court of Judicature at Bombay", "Bombay High Court", "Bombay HC", "high court of bombay"]
)
def test_a_high_court_is_one_court_however_written(written):
    assert normalise_court(written) == ("Bombay High Court", "high")


@pytest.mark.parametrize(
    "written", ["Justice A.K. Sikri", "A. K. Sikri", "Hon'ble Mr. Justice Arjan Kumar Sikri", "A.K. SIKRI, J."]
)
def test_a_judge_with_initials_is_one_name(written):
    assert [n.full for n in judge_names(written)] == ["A. K. Sikri"]


def test_a_judge_named_by_surname_alone_matches_the_initialled_form_and_back():
    stored_full = {t for t in judge_terms(judge_names("A. K. Sikri")[0])}
    stored_bare = {t for t in judge_terms(judge_names("Sikri, J.")[0])}
    assert set(judge_clause("Sikri, J.")) & stored_full  # 'Sikri, J.' finds A. K. Sikri
    assert set(judge_clause("Justice A.K. Sikri")) & stored_bare  # and 'A.K. Sikri' finds a bench entry 'Sikri, J.'
    assert not set(judge_clause("Justice B. Sikri")) & stored_full  # other initials: another judge
    assert [n.full for n in judge_names("A.K. Sikri and Ashok Bhushan, JJ.")] == ["A. K. Sikri", "A. Bhushan"]


def test_statute_references_name_act_and_sections():
    assert ("section", "IPC s. 302") in statute_terms("u/s. 302 of the Indian Penal Code, 1860")
    assert {("section", "IPC s. 147"), ("section", "IPC s. 302")} <= set(statute_terms("Sections 147/302 IPC"))
    assert ("section", "Constitution art. 21") in statute_terms("Art. 21 of the Constitution")
    assert ("section", "CrPC s. 161") in statute_terms("Section 161(3) Cr.P.C.")
    assert ("statute", "Land Acquisition Act") in statute_terms("Section 6 of the Land Acquisition Act, 1894")


def test_dates_and_disposal_as_judgments_write_them():
    assert (
        parse_decided("26th September, 1973")
        == parse_decided("September 26, 1973")
        == parse_decided("26.09.1973")
        == date(1973, 9, 26)
    )
    assert parse_decided("some day") is None
    assert disposal_of("For these reasons the appeal fails. Appeal dismissed.") == "dismissed"
    assert disposal_of("The appeal is allowed in part.") == "partly"
    assert disposal_of("The writ petition is allowed and the order quashed.") == "allowed"


def test_a_reversed_or_unreadable_date_range_is_refused():
    with pytest.raises(ValidationError, match="before it starts"):
        Filters(decided_from="2010", decided_to="2005")
    with pytest.raises(InvalidFilterError, match="not a date"):
        make_filters(decided_from="last year")
    whole = Filters(decided_from="2001", decided_to="2004-02")
    assert (whole.decided_from, whole.decided_to) == (date(2001, 1, 1), date(2004, 2, 29))
    assert make_filters(court=None, judge=None) is None


# --- filtered search ------------------------------------------------------------------------


def test_unfiltered_search_reports_facets_counted_over_its_candidates(archive):
    result = archive.search(DYING_DECLARATION_FACTS, options=EVERY)
    searcher = archive._searcher()
    plan = searcher.plan(DYING_DECLARATION_FACTS, options=EVERY)
    ranked = [d.doc_id for d in searcher.fuse(plan, searcher.retrieve(plan)).ranking]
    summaries = {i: archive.summary(i) for i in ranked}
    facets = result.facets
    assert facets.candidates == len(ranked) == 5
    expected_courts = {}
    for s in summaries.values():
        court = normalise_court(s.court)[0]
        expected_courts[court] = expected_courts.get(court, 0) + 1
    assert (
        {c.value: c.count for c in facets.court}
        == expected_courts
        == {"Supreme Court of India": 3, "Delhi High Court": 1, "Bombay High Court": 1}
    )
    years = {}
    for s in summaries.values():
        years[str(parse_decided(s.date).year)] = years.get(str(parse_decided(s.date).year), 0) + 1
    assert {c.value: c.count for c in facets.year} == years
    assert {c.value: c.count for c in facets.section}.get("IPC s. 302") == 2  # A1 and B1
    assert result.filters is None


@pytest.mark.parametrize(
    "filters, expected",
    [
        ({"court": "SC"}, {"A1", "A2", "A3"}),
        ({"court": "Delhi HC"}, {"A4"}),
        ({"court_level": "high"}, {"A4", "B1"}),
        ({"decided_from": "2000", "decided_to": "2005-12-31"}, {"A2", "A3"}),
        ({"judge": "Sikri, J."}, {"B1"}),
        ({"judge": "Justice A.K. Sikri"}, {"B1"}),
        ({"judge": "K. Singh"}, {"A1"}),
        ({"kind": "writ petition"}, {"A4"}),
        ({"kind": "appeal"}, {"A1", "A2", "A3", "B1"}),
        ({"statute": "Section 302 IPC"}, {"A1", "B1"}),
        ({"statute": "Article 311 of the Constitution"}, {"A2"}),
        ({"disposal": "dismissed"}, {"A1", "A3"}),
        ({"disposal": "partly"}, {"B1"}),
        ({"court": "Supreme Court of India", "disposal": "allowed"}, {"A2"}),
    ],
)
@pytest.mark.parametrize("rescore", [False, True])
def test_every_hit_satisfies_the_filter_and_every_match_is_returned(archive, filters, expected, rescore):
    """Also with the questions' BM25 runs re-scored from the facts' runs (as above 100,000 judgments)."""
    options = EVERY.model_copy(update={"rescore_questions": rescore, "fulltext_questions": True})
    assert set(hits(archive, options, **filters)) == expected


def test_a_filter_narrows_the_retrieval_not_the_top_k(archive):
    top = [h.judgment_id for h in archive.search(DYING_DECLARATION_FACTS, k=1, options=EVERY).hits]
    assert top != ["A4"]
    narrowed = archive.search(DYING_DECLARATION_FACTS, k=1, options=EVERY, filters=Filters(court="Delhi High Court"))
    assert [h.judgment_id for h in narrowed.hits] == ["A4"]
    assert narrowed.facets.candidates == 1 and [c.value for c in narrowed.facets.court] == ["Delhi High Court"]
    assert narrowed.filters == Filters(court="Delhi High Court")


def test_an_unknown_court_or_judge_gives_no_hits_and_names_the_closest(archive):
    result = archive.search(DYING_DECLARATION_FACTS, options=EVERY, filters=Filters(court="Supreme Cort of Indai"))
    assert result.hits == []
    assert any("court 'Supreme Cort of Indai'" in n and "'Supreme Court of India'" in n for n in result.notes)
    result = archive.search(DYING_DECLARATION_FACTS, options=EVERY, filters=Filters(judge="Justice Sikry"))
    assert result.hits == [] and any("'A. K. Sikri'" in n for n in result.notes)


def test_candidate_questions_come_from_the_filtered_judgments(archive):
    found = archive.candidate_questions(DYING_DECLARATION_FACTS, filters=Filters(court="Bombay High Court"))
    assert found and {c.source_judgment_id for c in found} == {"B1"}


def test_a_correspondence_table_widens_a_section_filter_to_the_other_code(tmp_path):
    """Facts written today name Section 103 BNS; the judgments say Section 302 IPC: with the
    archive's table loaded, a filter on either form admits them, without re-indexing."""
    archive = indexed_archive(tmp_path / "home", tmp_path / "in", MORE)
    assert hits(archive, statute="Section 103 BNS") == []
    table = tmp_path / "ipc-bns.csv"
    table.write_text("old_act,old_section,new_act,new_section\nIPC,302,BNS,103(1)\n", encoding="utf-8")
    archive.add_correspondence([table])
    assert set(hits(archive, statute="Section 103 BNS")) == {"A1", "B1"}
    assert set(hits(archive, statute="Section 302 IPC")) == {"A1", "B1"}


def test_facets_follow_updates_and_removals(tmp_path):
    archive = indexed_archive(tmp_path / "home", tmp_path / "in", MORE)
    archive.remove(["B1"])
    result = archive.search(DYING_DECLARATION_FACTS, options=EVERY, filters=Filters(court="Bombay High Court"))
    assert result.hits == [] and result.notes
    assert "Bombay High Court" not in {
        c.value for c in archive.search(DYING_DECLARATION_FACTS, options=EVERY).facets.court
    }
    with sqlite3.connect(archive.settings.index_dir / "docs.sqlite") as db:
        assert db.execute("SELECT COUNT(DISTINCT n) FROM facet_terms").fetchone()[0] == 4  # B1's rows purged with it
        assert db.execute("SELECT COUNT(*) FROM facet_shown").fetchone()[0] == 4


@pytest.mark.parametrize("row_width", [16, 1])  # 1: most terms held beyond a document's row
@pytest.mark.parametrize("read_all_up_to", [20_000, 0])  # 0: each document read when first a candidate
def test_facets_counted_from_memory_equal_those_counted_from_the_terms(
    archive, tmp_path, monkeypatch, row_width, read_all_up_to
):
    import shutil

    from aqgr.retrieval.embedded import facets
    from aqgr.retrieval.embedded.docstore import DocStore

    monkeypatch.setattr(facets, "ROW_WIDTH", row_width)
    monkeypatch.setattr(facets, "READ_ALL_UP_TO", read_all_up_to)
    copy = tmp_path / "index"
    shutil.copytree(archive.settings.index_dir, copy)
    registry = DocStore(copy)
    ns = [n for (n,) in registry._db.execute("SELECT n FROM docs")]
    size = max(ns) + 1

    def from_terms(some: list[int]) -> dict[str, dict[str, int]]:  # counted from facet_terms, one row a term
        counted: dict[str, dict[str, int]] = {}
        for field, value, count in registry._db.execute(
            f"SELECT field, value, COUNT(DISTINCT n) FROM facet_terms WHERE n IN ({','.join('?' * len(some))}) "
            f"AND field IN ({','.join('?' * len(facets.FACET_FIELDS))}) GROUP BY field, value",
            (*some, *facets.FACET_FIELDS),
        ):
            counted.setdefault(field, {})[value] = count
        return counted

    counted = from_terms(ns)
    assert counted["court"] == {"Supreme Court of India": 3, "Delhi High Court": 1, "Bombay High Court": 1}
    assert sum(counted["section"].values()) >= 2
    shown = facets.ShownTerms(registry, size)
    reads = []
    real = registry.shown_terms
    monkeypatch.setattr(registry, "shown_terms", lambda some: (reads.append(list(some)), real(some))[1])
    assert shown.counts(ns[:2]) == from_terms(ns[:2])
    assert shown.counts(ns + ns[:2]) == counted  # a candidate listed twice counts once
    assert shown.counts(ns) == shown.counts(list(reversed(ns))) and shown.counts([]) == {}
    assert sorted(n for some in reads for n in some) == list(range(size))  # each document read from the store once
    assert len(reads) == (1 if read_all_up_to else 2)  # all at the first count, or the first two then the others


def test_an_index_made_before_facet_shown_is_refused(archive, tmp_path):
    import shutil

    from aqgr.retrieval.embedded.index import SummaryIndex

    copy = tmp_path / "index"
    shutil.copytree(archive.settings.index_dir, copy)
    with sqlite3.connect(copy / "docs.sqlite") as db:  # as an index of an earlier aqgr, counted from facet_terms
        db.execute("DELETE FROM meta WHERE key = 'facet_shown'")
    with pytest.raises(IndexMismatchError, match=r"before the facets a result counts.*`aqgr index --rebuild`"):
        SummaryIndex.load(copy)


def test_an_index_made_before_filters_is_refused_and_aqgr_index_rebuilds_it(tmp_path):
    """An index of an older aqgr, its documents without filter fields, is not searched: the refusal says
    to run `aqgr index --rebuild`, and `aqgr index` rebuilds it with the fields."""
    archive = indexed_archive(tmp_path / "home", tmp_path / "in")
    with sqlite3.connect(archive.settings.index_dir / "docs.sqlite") as db:  # as an index of an earlier aqgr
        db.execute("DELETE FROM meta WHERE key = 'facets'")
        db.execute("DELETE FROM facet_terms")
    from aqgr import Archive

    old = Archive(settings=archive.settings)
    for filters in (Filters(court="SC"), None):
        with pytest.raises(IndexMismatchError, match=r"before search filters: `aqgr index --rebuild` makes it anew"):
            old.search(DYING_DECLARATION_FACTS, filters=filters)
    assert old.build_index()["update"]["mode"] == "rebuild"
    fresh = Archive(settings=archive.settings)
    assert {
        h.judgment_id for h in fresh.search(DYING_DECLARATION_FACTS, options=EVERY, filters=Filters(court="SC")).hits
    } == {"A1", "A2", "A3"}


def _narrowing(facet: str, value: str) -> dict:
    """A facet value as the filter the page sends back for it (filters.js `narrowing`)."""
    if facet == "year":
        return {"decided_from": value, "decided_to": value}
    if facet == "decade":
        return {"decided_from": value[:4], "decided_to": str(int(value[:4]) + 9)}
    return {"statute" if facet == "section" else facet: value}


def test_every_facet_value_narrows_to_as_many_judgments_as_it_counts(archive):
    facets = archive.search(DYING_DECLARATION_FACTS, options=EVERY).facets
    assert facets.candidates == 5  # the whole archive: a filtered search then ranks exactly the counted ones
    checked = 0
    for facet in ("court", "year", "decade", "statute", "section", "judge", "kind", "disposal"):
        for c in getattr(facets, facet):
            narrowed = archive.search(
                DYING_DECLARATION_FACTS, options=EVERY, filters=Filters(**_narrowing(facet, c.value))
            )
            assert narrowed.facets.candidates == c.count, (facet, c.value)
            checked += 1
    assert checked >= 20
