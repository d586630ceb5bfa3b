"""Question-guided search on tiny archives (fast: the hashing embedder, no torch)."""

import pytest

from aqgr import Archive, FactsTooShortError, IndexMismatchError, IndexSpec, NoIndexError
from aqgr.foundation.errors import EmptyArchiveError
from aqgr.pipeline.explain import Explanation, explainers
from tests.aqgr.helpers import CITING_JUDGMENTS, DYING_DECLARATION_FACTS, JUDGMENTS, indexed_archive, write_judgments

FAST = IndexSpec(embedder="hashing.v1")


@pytest.fixture
def archive(home, tmp_path):
    return indexed_archive(home, tmp_path / "in")


def test_search_before_any_index_says_to_build_one(home, tmp_path):
    archive = Archive(home)
    archive.summarize([write_judgments(tmp_path / "in")])
    with pytest.raises(NoIndexError, match="aqgr index"):
        archive.search(DYING_DECLARATION_FACTS)


def test_index_of_an_empty_archive_is_refused(home):
    with pytest.raises(EmptyArchiveError, match="aqgr summarize"):
        Archive(home).build_index()


def test_index_built_with_another_embedder_is_refused(archive):
    other = Archive(settings=archive.settings.model_copy(update={"index": IndexSpec()}))
    with pytest.raises(IndexMismatchError, match="rebuild"):
        other.search(DYING_DECLARATION_FACTS)


def test_short_facts_get_a_clear_answer(archive):
    with pytest.raises(FactsTooShortError, match="content word"):
        archive.search("my neighbour hit me")


def test_questions_are_generated_and_hits_explained(archive):
    result = archive.search(DYING_DECLARATION_FACTS)
    assert 1 <= len(result.questions) <= 3 and not result.questions_chosen_by_user
    assert result.candidate_questions and result.candidate_questions[0].text == result.questions[0]
    assert "dying declaration" in result.questions[0].lower()
    top = [h.judgment_id for h in result.hits[:2]]
    assert set(top) == {"A1", "A3"}
    hit = result.hits[0]
    assert 1 <= hit.score <= 10 and hit.parties and hit.case_number
    assert "dying declaration" in hit.legal_issue.lower()
    summary = archive.summary(hit.judgment_id)
    assert hit.legal_issue.rstrip(" .?") in " ".join(summary.issues)  # quoted, not invented
    assert {e.slot for e in hit.evidence} <= {
        "issues",
        "reasoning",
        "new_principles",
        "statutes",
        "facts",
        "final_judgment",
    }
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)


def test_user_chosen_questions_replace_generated_ones(archive):
    question = "Whether a licence can be cancelled without a show cause notice and hearing the licensee?"
    result = archive.search(DYING_DECLARATION_FACTS, [question])
    assert result.questions == [question] and result.questions_chosen_by_user
    assert "A4" in [h.judgment_id for h in result.hits[:3]]


def test_every_hit_exists_in_the_archive_even_if_the_explainer_invents_one(archive, monkeypatch):
    real = explainers.get("evidence.v1")()

    class Inventive:
        name = "inventive.test"

        def explain(self, facts, questions, candidates, scorer):
            made_up = Explanation("C999999", 10, "Whether anything goes?", "Because.", ())
            return [made_up, *real.explain(facts, questions, candidates, scorer)]

    searcher = archive._searcher()
    monkeypatch.setattr(searcher, "explainer", Inventive())
    result = archive.search(DYING_DECLARATION_FACTS)
    assert result.dropped_not_in_archive == 1
    ids = archive._store.judgment_ids()
    assert result.hits and all(h.judgment_id in ids for h in result.hits)


def test_threshold_and_k_bound_the_returned_set(archive):
    strict = archive._searcher().options.model_copy(update={"min_score": 10})
    result = archive.search(DYING_DECLARATION_FACTS, options=strict)
    assert all(h.score == 10 for h in result.hits)
    assert result.below_threshold >= 1
    assert len(archive.search(DYING_DECLARATION_FACTS, k=1).hits) == 1


def test_restrict_and_exclude(archive):
    result = archive.search(DYING_DECLARATION_FACTS, restrict={"A2", "A3", "A4"}, exclude={"A3"})
    assert {h.judgment_id for h in result.hits} <= {"A2", "A4"}


def test_an_index_searches_the_summaries_it_was_built_from(archive):
    """A provider configured after indexing (another summarizer) does not orphan the index."""
    assert archive.status()["index"]["summarizer"] == "extractive.v1"
    later = Archive(settings=archive.settings.model_copy(update={"summarizer": "llm.v1"}))
    result = later.search(DYING_DECLARATION_FACTS)
    assert {h.judgment_id for h in result.hits[:2]} == {"A1", "A3"}
    assert result.engines.summarizer == "extractive.v1"


@pytest.fixture
def citing_archive(home, tmp_path):
    return indexed_archive(home, tmp_path / "in", CITING_JUDGMENTS)


def test_precedents_cited_by_the_best_ranked_judgments_rise(citing_archive):
    archive = citing_archive
    assert archive.citations().pairs() == [("A5", "A1"), ("A5", "A2")]
    off = archive._searcher().options.model_copy(update={"citation_weight": 0.0, "min_score": 1})
    on = off.model_copy(update={"citation_weight": 1.0})
    _, plain = archive._searcher().rank(DYING_DECLARATION_FACTS, options=off)
    _, lifted = archive._searcher().rank(DYING_DECLARATION_FACTS, options=on)

    def position(ranking, doc_id):
        return [d.doc_id for d in ranking].index(doc_id)

    # A2 (natural justice) says nothing of dying declarations; A5, a dying-declaration case, cites it
    assert position(lifted, "A2") < position(plain, "A2")
    hits = {h.judgment_id: h for h in archive.search(DYING_DECLARATION_FACTS, options=on).hits}
    assert hits["A1"].cited_by == ["A5"] and hits["A5"].cited_by == []
    assert not any(h.cited_by for h in archive.search(DYING_DECLARATION_FACTS, options=off).hits)


def test_citations_of_a_judgment_summarised_after_indexing_ask_for_a_new_index(citing_archive, tmp_path):
    from aqgr.foundation.errors import NoCitationGraphError

    assert [c.judgment_id for c in citing_archive.citations_of("A1").cited_by] == ["A5"]
    citing_archive.summarize(
        [write_judgments(tmp_path / "more", {"B1": JUDGMENTS["A4"].replace("Hari Prasad", "Gopal Das")})]
    )
    with pytest.raises(NoCitationGraphError, match="'B1' was summarised after the index was built: run `aqgr index`"):
        citing_archive.citations_of("B1")


def test_an_excluded_judgment_refers_to_no_precedent(citing_archive):
    on = citing_archive._searcher().options.model_copy(update={"citation_weight": 1.0, "min_score": 1})
    hits = citing_archive.search(DYING_DECLARATION_FACTS, options=on, exclude={"A5"}).hits
    assert "A5" not in {h.judgment_id for h in hits} and not any(h.cited_by for h in hits)


def test_an_index_without_citation_graph_still_searches_and_says_so(citing_archive):
    """An archive indexed before citation graphs existed (or with the file removed)."""
    from aqgr.pipeline.search import NO_CITATIONS_NOTE

    (citing_archive.home / "citations.sqlite").unlink()
    fresh = Archive(settings=citing_archive.settings)
    result = fresh.search(DYING_DECLARATION_FACTS)
    assert result.hits and not any(h.cited_by for h in result.hits)
    assert NO_CITATIONS_NOTE in result.notes
    off = fresh._searcher().options.model_copy(update={"citation_weight": 0.0})
    assert NO_CITATIONS_NOTE not in fresh.search(DYING_DECLARATION_FACTS, options=off).notes


def test_a_stale_citation_graph_is_not_used(citing_archive, tmp_path):
    """Judgments summarised after `aqgr index`: the saved citations no longer describe the archive."""
    citing_archive.summarize(
        [write_judgments(tmp_path / "more", {"B1": JUDGMENTS["A4"].replace("Hari Prasad", "Gopal Das")})]
    )
    assert citing_archive.citations() is None
    citing_archive.build_index()
    assert citing_archive.citations() is not None


def test_renumbering_the_judgments_changes_no_score(citing_archive):
    """Ids carry no information: a permutation of the ids (and of the input order) moves no score,
    the precedents-referred lift included."""
    archive = citing_archive
    from aqgr.pipeline.config import SearchOptions
    from aqgr.pipeline.questions import question_generators
    from aqgr.pipeline.search import Searcher
    from aqgr.retrieval.citations import CitationGraph
    from aqgr.retrieval.embedded.index import SummaryIndex

    summaries = archive.summaries()
    texts = {s.judgment_id: archive.text(s.judgment_id) or "" for s in summaries}
    ids = [s.judgment_id for s in summaries]
    renamed = dict(zip(ids, [*ids[1:], ids[0]]))  # every id moves to another judgment
    back = {new: old for old, new in renamed.items()}

    def rank(summ, full_texts):
        index = SummaryIndex.build(summ, FAST, full_texts=full_texts)
        searcher = Searcher(
            index,
            {s.judgment_id: s for s in summ},
            question_generators.create("harvest.v1"),
            explainers.create("evidence.v1"),
            SearchOptions(),
            "extractive.v1",
            citations=CitationGraph.from_texts(full_texts.items()),
        )
        return searcher.rank(DYING_DECLARATION_FACTS, depth=50)

    result, ranking = rank(summaries, texts)
    moved = [s.model_copy(update={"judgment_id": renamed[s.judgment_id]}) for s in reversed(summaries)]
    result2, ranking2 = rank(moved, {renamed[d]: t for d, t in texts.items()})
    assert len(ranking) >= 3 and result.questions and result.questions == result2.questions
    assert any(h.cited_by for h in result.hits)  # the lift took part
    assert {h.judgment_id: h.cited_by for h in result.hits} == {
        back[h.judgment_id]: [back[d] for d in h.cited_by] for h in result2.hits
    }
    assert {d.doc_id: d.score for d in ranking} == {back[d.doc_id]: d.score for d in ranking2}
    assert {h.judgment_id: (h.score, h.retrieval_score) for h in result.hits} == {
        back[h.judgment_id]: (h.score, h.retrieval_score) for h in result2.hits
    }
