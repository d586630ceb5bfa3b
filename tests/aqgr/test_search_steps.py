"""Search as explicit steps (plan, retrieve, fuse and refer, explain): no step runs twice for
one request, and the Searcher touches no process-wide state (the hashing embedder, no torch)."""

from __future__ import annotations

import pytest

from aqgr import Archive, IndexSpec
from aqgr.pipeline.statutes import StatuteCollection, statutes_for
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, JUDGMENTS, indexed_archive

FAST = IndexSpec(embedder="hashing.v1")
QUESTION = "Whether a dying declaration can be the sole basis of conviction without corroboration?"


@pytest.fixture
def archive(home, tmp_path):
    return indexed_archive(home, tmp_path / "in", JUDGMENTS)


class Calls:
    """Counts the calls of one method of an object, passing them through."""

    def __init__(self, monkeypatch, target, name):
        self.count = 0
        real = getattr(target, name)

        def counting(*args, **kwargs):
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(target, name, counting)


class Reads:
    """Records each (query text, retriever) that an index's `retrieve` reads, passing the calls through."""

    def __init__(self, monkeypatch, index):
        self.pairs: list[tuple[str, str]] = []
        real = index.retrieve

        def recording(text, k, *, retrievers, **kwargs):
            self.pairs.extend((text, name) for name in retrievers)
            return real(text, k, retrievers=retrievers, **kwargs)

        monkeypatch.setattr(index, "retrieve", recording)

    @property
    def queries(self) -> int:
        """Distinct query texts read, after checking that no retriever read one twice."""
        assert len(set(self.pairs)) == len(self.pairs), "a retriever read a query twice"
        return len({text for text, _ in self.pairs})

    def by(self, name: str) -> int:
        return sum(read == name for _, read in self.pairs)


def test_questions_given_by_the_user_are_not_generated(archive, monkeypatch):
    searcher = archive._searcher()
    generate = Calls(monkeypatch, searcher.questions, "generate")
    reads = Reads(monkeypatch, searcher.index)
    result = searcher.search(DYING_DECLARATION_FACTS, [QUESTION])
    assert generate.count == 0
    assert reads.queries == 2  # the facts alone, the question with the facts
    assert result.questions == [QUESTION] and result.questions_chosen_by_user and result.candidate_questions == []
    alone = searcher.options.model_copy(update={"include_facts_query": False})
    reads.pairs.clear()
    searcher.search(DYING_DECLARATION_FACTS, [QUESTION], options=alone)
    assert generate.count == 0 and reads.queries == 1  # the question only: no facts-alone query at all


def test_a_search_generates_and_retrieves_each_query_once(archive, monkeypatch):
    searcher = archive._searcher()
    generate = Calls(monkeypatch, searcher.questions, "generate")
    reads = Reads(monkeypatch, searcher.index)
    result = searcher.search(DYING_DECLARATION_FACTS)
    assert generate.count == 1 and result.questions
    assert reads.queries == 1 + len(result.questions)  # the facts (also the examples), then each question
    assert all(reads.by(name) == 1 + len(result.questions) for name in searcher.index.retrievers)


def test_rank_plans_retrieves_and_explains_once(archive, monkeypatch):
    searcher = archive._searcher()
    generate = Calls(monkeypatch, searcher.questions, "generate")
    reads = Reads(monkeypatch, searcher.index)
    explain = Calls(monkeypatch, searcher.explainer, "explain")
    result, ranking = searcher.rank(DYING_DECLARATION_FACTS, depth=50)
    assert (generate.count, explain.count) == (1, 1)
    assert reads.queries == 1 + len(result.questions)
    # the deep ranking is the explained head, then the same fusion's other judgments
    head = [
        h.judgment_id
        for h in searcher.rank(
            DYING_DECLARATION_FACTS, depth=50, options=searcher.options.model_copy(update={"min_score": 1})
        )[0].hits
    ]
    assert [d.doc_id for d in ranking][: len(head)] == head
    assert sorted(d.doc_id for d in ranking) == sorted(JUDGMENTS)


def test_the_steps_compose_to_the_search(archive):
    searcher = archive._searcher()
    plan = searcher.plan(DYING_DECLARATION_FACTS)
    retrieval = searcher.retrieve(plan)
    fused = searcher.fuse(plan, retrieval)
    stepwise = searcher.pin(searcher.explain(plan, fused, retrieval))
    whole = searcher.search(DYING_DECLARATION_FACTS)
    assert all(e.located for h in whole.hits for e in h.evidence)
    assert stepwise.model_dump(exclude={"timings_ms"}) == whole.model_dump(exclude={"timings_ms"})
    assert list(plan.questions) == whole.questions and plan.candidates


def test_statute_search_generates_the_questions_once(archive, tmp_path, monkeypatch):
    folder = tmp_path / "statutes"
    folder.mkdir()
    (folder / "S1.txt").write_text(
        "Title: Dying declarations\nDesc: A statement of a person who is dead as to the cause of his death.",
        encoding="utf-8",
    )
    collection = StatuteCollection(archive.settings)
    collection.add([folder], judgments=archive.texts())
    searcher = archive._searcher()
    generate = Calls(monkeypatch, searcher.questions, "generate")
    explain = Calls(monkeypatch, searcher.explainer, "explain")
    result = statutes_for(searcher, collection, DYING_DECLARATION_FACTS)
    assert (generate.count, explain.count) == (1, 1) and result.questions and result.hits
    statutes_for(searcher, collection, DYING_DECLARATION_FACTS, [QUESTION])
    assert generate.count == 1  # the user's questions: none generated


def test_making_a_searcher_leaves_the_garbage_collector_alone(archive, monkeypatch):
    import gc

    frozen = Calls(monkeypatch, gc, "freeze")
    archive._searcher().search(DYING_DECLARATION_FACTS)
    Archive(settings=archive.settings)._searcher().search(DYING_DECLARATION_FACTS)
    assert frozen.count == 0


def test_fulltext_once_makes_one_full_text_query_a_search(archive, monkeypatch):
    """`fulltext_questions` off: the facts' full-text run stands in for each question's, so a search
    reads the full text once; the other retrievers still read each question."""
    searcher = archive._searcher()
    assert "fulltext" in searcher.index.retrievers
    reads = Reads(monkeypatch, searcher.index)
    once = searcher.options.model_copy(update={"fulltext_questions": False})
    plan = searcher.plan(DYING_DECLARATION_FACTS, options=once)
    retrieval = searcher.retrieve(plan)
    assert plan.questions and reads.queries == 1 + len(plan.questions)
    assert reads.by("fulltext") == 1 and reads.by("bm25") == reads.by("dense") == 1 + len(plan.questions)
    facts_run = dict(plan.facts_runs)["fulltext"]
    full_text_runs = [run for name, run in retrieval.runs if name == "fulltext"]
    assert len(full_text_runs) == 1 + len(plan.questions) and all(run == facts_run for run in full_text_runs)
    assert sum(name == "bm25" for name, _ in retrieval.runs) == 1 + len(plan.questions)
    # the user's questions without the facts-alone query: the facts' full text is still read, once
    reads.pairs.clear()
    alone = once.model_copy(update={"include_facts_query": False})
    result = searcher.search(DYING_DECLARATION_FACTS, [QUESTION, "Whether the accused had a motive?"], options=alone)
    assert reads.queries == 3 and reads.by("fulltext") == 1 and reads.by("bm25") == reads.by("dense") == 2
    assert result.hits
    # the full text alone: a question reads nothing, its run is the facts'
    reads.pairs.clear()
    result = searcher.search(DYING_DECLARATION_FACTS, options=once.model_copy(update={"retrievers": ("fulltext",)}))
    assert result.questions and reads.pairs == [(reads.pairs[0][0], "fulltext")] and result.hits


def _recorded(monkeypatch, searcher, profile: str) -> None:
    """The index as if built with `profile` recorded in its manifest (as a build over 100,000 judgments records "large")."""
    monkeypatch.setitem(searcher.index._manifest, "search_profile", profile)


def test_the_index_records_its_search_profile_and_every_result_names_the_one_that_ran(archive, monkeypatch):
    from aqgr.pipeline.config import SEARCH_PROFILES
    from aqgr.retrieval.spec import SEARCH_PROFILES as NAMES

    assert tuple(SEARCH_PROFILES) == NAMES  # what each sets, for every name an index may record
    searcher = archive._searcher()
    assert searcher.index.manifest["search_profile"] == "standard" == searcher.index.profile  # 17 judgments
    assert searcher.search(DYING_DECLARATION_FACTS).profile == "standard"
    assert archive.status()["index"]["search_profile"] == "standard"  # what `aqgr status` shows
    _recorded(monkeypatch, searcher, "large")
    assert searcher.search(DYING_DECLARATION_FACTS).profile == "large"
    chosen = searcher.options.model_copy(update={"profile": "standard"})
    assert searcher.search(DYING_DECLARATION_FACTS, options=chosen).profile == "standard"  # a search may name another


def test_by_default_the_questions_read_the_full_text_in_the_standard_profile(archive, monkeypatch):
    """`fulltext_questions` unset: each question reads the full text in the standard profile; in the
    large one (an index built with over 100,000 judgments) the facts' full-text run stands in."""
    searcher = archive._searcher()
    assert searcher.options.fulltext_questions is None
    reads = Reads(monkeypatch, searcher.index)
    result = searcher.search(DYING_DECLARATION_FACTS)
    assert result.questions and reads.by("fulltext") == 1 + len(result.questions)
    reads.pairs.clear()
    _recorded(monkeypatch, searcher, "large")
    result = searcher.search(DYING_DECLARATION_FACTS)
    assert result.questions and reads.by("fulltext") == 1


def test_the_command_line_and_the_server_choose_how_often_the_full_text_is_read(archive, monkeypatch):
    import json

    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app

    searcher = archive._searcher()
    once = searcher.search(
        DYING_DECLARATION_FACTS, options=searcher.options.model_copy(update={"fulltext_questions": False})
    )
    every = searcher.search(DYING_DECLARATION_FACTS)
    assert [h.judgment_id for h in once.hits] != [h.judgment_id for h in every.hits]  # so the flag is seen to act
    args = ["search", DYING_DECLARATION_FACTS, "--home", str(archive.home), "--json"]
    for flag, expected in (("--fulltext-once", once), ("--fulltext-questions", every), (None, every)):
        result = CliRunner().invoke(app, args + ([flag] if flag else []))
        assert result.exit_code == 0, result.output
        hits = json.loads(result.stdout)["hits"]
        assert [(h["judgment_id"], h["score"]) for h in hits] == [(h.judgment_id, h.score) for h in expected.hits], flag
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    with TestClient(create_app(archive=archive)) as client:
        for value, expected in ((False, once), (True, every)):
            response = client.post(
                "/api/search", json={"facts": DYING_DECLARATION_FACTS, "options": {"fulltext_questions": value}}
            )
            assert response.status_code == 200, response.text
            assert [(h["judgment_id"], h["score"]) for h in response.json()["hits"]] == [
                (h.judgment_id, h.score) for h in expected.hits
            ]


def test_the_command_line_and_the_server_choose_the_profile(archive):
    import json

    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app

    searcher = archive._searcher()
    large = searcher.search(DYING_DECLARATION_FACTS, options=searcher.options.model_copy(update={"profile": "large"}))
    assert large.profile == "large"
    args = ["search", DYING_DECLARATION_FACTS, "--home", str(archive.home), "--json"]
    result = CliRunner().invoke(app, [*args, "--profile", "large"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["profile"] == "large"
    assert [(h["judgment_id"], h["score"]) for h in found["hits"]] == [(h.judgment_id, h.score) for h in large.hits]
    refused = CliRunner().invoke(app, [*args, "--profile", "huge"])
    assert refused.exit_code == 2 and "one of standard, large" in refused.output
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    with TestClient(create_app(archive=archive)) as client:
        response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS, "options": {"profile": "large"}})
        assert response.status_code == 200 and response.json()["profile"] == "large", response.text
        bad = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS, "options": {"profile": "huge"}})
        assert bad.status_code == 422


def test_dense_once_makes_one_dense_search_a_search_and_embeds_no_question(archive, monkeypatch):
    """`dense_questions` off: the facts' dense run stands in for each question's, so a search reads
    the dense retriever once and embeds no question; the lexical retrievers still read each one."""
    searcher = archive._searcher()
    reads = Reads(monkeypatch, searcher.index)
    once = searcher.options.model_copy(update={"dense_questions": False})
    plan = searcher.plan(DYING_DECLARATION_FACTS, options=once)
    embedded: list[str] = []
    real = searcher.index.embed_queries
    monkeypatch.setattr(searcher.index, "embed_queries", lambda texts: (embedded.extend(texts), real(texts))[1])
    retrieval = searcher.retrieve(plan)
    assert (
        plan.questions
        and reads.by("dense") == 1
        and reads.by("bm25") == reads.by("fulltext") == 1 + len(plan.questions)
    )
    assert not embedded
    facts_run = dict(plan.facts_runs)["dense"]
    dense_runs = [run for name, run in retrieval.runs if name == "dense"]
    assert len(dense_runs) == 1 + len(plan.questions) and all(run == facts_run for run in dense_runs)
    # both once: the questions read only the summary BM25
    reads.pairs.clear()
    both = once.model_copy(update={"fulltext_questions": False})
    result = searcher.search(DYING_DECLARATION_FACTS, options=both)
    assert result.questions and result.hits
    assert reads.by("dense") == reads.by("fulltext") == 1 and reads.by("bm25") == 1 + len(result.questions)
    # the user's questions without the facts-alone query: the facts' dense run is still read, once
    reads.pairs.clear()
    alone = once.model_copy(update={"include_facts_query": False})
    result = searcher.search(DYING_DECLARATION_FACTS, [QUESTION, "Whether the accused had a motive?"], options=alone)
    assert reads.by("dense") == 1 and reads.by("bm25") == 2 and result.hits


def test_by_default_the_questions_read_the_dense_retriever_in_the_standard_profile(archive, monkeypatch):
    """`dense_questions` unset: each question reads the dense retriever in the standard profile; in
    the large one the facts' dense run stands in."""
    searcher = archive._searcher()
    assert searcher.options.dense_questions is None
    reads = Reads(monkeypatch, searcher.index)
    result = searcher.search(DYING_DECLARATION_FACTS)
    assert result.questions and reads.by("dense") == 1 + len(result.questions)
    reads.pairs.clear()
    _recorded(monkeypatch, searcher, "large")
    result = searcher.search(DYING_DECLARATION_FACTS)
    assert result.questions and reads.by("dense") == 1


def test_the_command_line_and_the_server_choose_how_often_the_dense_retriever_is_read(archive, monkeypatch):
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app
    from aqgr.interfaces.server import create_app
    from aqgr.retrieval.embedded.index import SummaryIndex
    from tests.server.conftest import TestClient

    dense: list[int] = []  # the dense reads of every index the command line or the server opens
    real = SummaryIndex.retrieve
    monkeypatch.setattr(
        SummaryIndex,
        "retrieve",
        lambda index, text, k, *, retrievers, **kwargs: (
            dense.extend(1 for name in retrievers if name == "dense"),
            real(index, text, k, retrievers=retrievers, **kwargs),
        )[1],
    )
    args = ["search", DYING_DECLARATION_FACTS, "--home", str(archive.home), "--json"]
    for flag, once in (("--dense-once", True), ("--dense-questions", False), (None, False)):
        dense.clear()
        result = CliRunner().invoke(app, args + ([flag] if flag else []))
        assert result.exit_code == 0, result.output
        assert (len(dense) == 1) == once and dense, flag
    with TestClient(create_app(archive=archive)) as client:
        for value in (False, True):
            dense.clear()
            response = client.post(
                "/api/search", json={"facts": DYING_DECLARATION_FACTS, "options": {"dense_questions": value}}
            )
            assert response.status_code == 200, response.text
            assert (len(dense) == 1) == (not value)


def test_rescored_question_runs_score_as_a_search_over_the_facts_candidates(archive, monkeypatch):
    """`rescore_questions` on: a question's BM25 runs (summary and full text) are the facts' runs
    re-ranked, with each judgment's score what a search for the question + facts gives it; they
    keep the facts' candidates and read nothing from the archive; the dense runs still search."""
    searcher = archive._searcher()
    rescore = searcher.options.model_copy(update={"rescore_questions": True, "fulltext_questions": True})
    plan = searcher.plan(DYING_DECLARATION_FACTS, options=rescore)
    reads = Reads(monkeypatch, searcher.index)
    retrieval = searcher.retrieve(plan)
    assert plan.questions and reads.by("bm25") == reads.by("fulltext") == 0 and reads.by("dense") == len(plan.questions)
    facts = dict(plan.facts_runs)
    for name in ("bm25", "fulltext"):
        question_runs = [run for n, run in retrieval.runs if n == name][1:]  # after the facts' own
        assert len(question_runs) == len(plan.questions)
        for question, run in zip(plan.questions, question_runs):
            assert {d.doc_id for d in run} == {d.doc_id for d in facts[name]}
            searched = dict(
                searcher.index.retrieve(
                    f"{question}\n{searcher._query(plan.facts, rescore)}", plan.depth, retrievers=[name]
                )[name]
            )
            assert all(d.score == pytest.approx(searched[d.doc_id], rel=1e-5) for d in run if d.doc_id in searched)
            assert [d.score for d in run] == sorted((d.score for d in run), reverse=True)
            assert run != facts[name]  # the question's terms moved some judgment
    # off: every question searches the archive
    reads.pairs.clear()
    searcher.retrieve(
        searcher.plan(DYING_DECLARATION_FACTS, options=rescore.model_copy(update={"rescore_questions": False}))
    )
    assert reads.by("bm25") == reads.by("fulltext") == 1 + len(plan.questions)


def test_by_default_the_questions_are_rescored_in_the_large_profile(archive, monkeypatch):
    """`rescore_questions` unset: a question's BM25 runs search the archive in the standard profile,
    and re-rank the facts' runs in the large one."""
    searcher = archive._searcher()
    assert searcher.options.rescore_questions is None
    reads = Reads(monkeypatch, searcher.index)
    every = searcher.options.model_copy(update={"fulltext_questions": True})
    result = searcher.search(DYING_DECLARATION_FACTS, options=every)
    assert result.questions and reads.by("bm25") == 1 + len(result.questions)
    reads.pairs.clear()
    _recorded(monkeypatch, searcher, "large")
    result = searcher.search(DYING_DECLARATION_FACTS, options=every)
    assert result.questions and result.hits and reads.by("bm25") == reads.by("fulltext") == 1


def test_the_command_line_and_the_server_choose_whether_questions_are_rescored(archive, monkeypatch):
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app
    from aqgr.retrieval.embedded.index import SummaryIndex

    rescores = Calls(monkeypatch, SummaryIndex, "rescore")
    args = ["search", DYING_DECLARATION_FACTS, "--home", str(archive.home), "--json"]
    for flag, used in (("--rescore-questions", True), ("--search-questions", False), (None, False)):
        before = rescores.count
        result = CliRunner().invoke(app, args + ([flag] if flag else []))
        assert result.exit_code == 0, result.output
        assert (rescores.count > before) == used, flag
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    with TestClient(create_app(archive=archive)) as client:
        for value in (True, False):
            before = rescores.count
            response = client.post(
                "/api/search", json={"facts": DYING_DECLARATION_FACTS, "options": {"rescore_questions": value}}
            )
            assert response.status_code == 200, response.text
            assert (rescores.count > before) == value


class MaxDf:
    """Records, for the full-text and summary BM25 parts, the share each query they search gives
    them (`Query.max_df`) and the terms they ask their engine for; passes the calls through."""

    def __init__(self, monkeypatch):
        from aqgr.retrieval.embedded.retrievers import FullTextBM25, SummaryBM25

        self.seen: dict[str, list] = {"fulltext": [], "bm25": []}
        self.terms: dict[str, list[list[str]]] = {"fulltext": [], "bm25": []}
        for kind in (FullTextBM25, SummaryBM25):
            real = kind.search

            def search(part, query, k, *, real=real, name=kind.name, **kwargs):
                self.seen[name].append(query.max_df.get(name))
                self.terms[name].append(part._terms(query))
                return real(part, query, k, **kwargs)

            monkeypatch.setattr(kind, "search", search)


def test_by_default_the_bm25_queries_leave_out_common_terms_in_the_large_profile(archive, monkeypatch):
    """`fulltext_max_df` and `summary_max_df` unset: every term of the BM25 queries is searched in the
    standard profile; in the large one the full text leaves out those in more than FULLTEXT_MAX_DF of
    the judgments, the summaries those in more than SUMMARY_MAX_DF."""
    from aqgr.pipeline.config import FULLTEXT_MAX_DF, SUMMARY_MAX_DF

    searcher = archive._searcher()
    assert searcher.options.fulltext_max_df is None and searcher.options.summary_max_df is None
    seen = MaxDf(monkeypatch)
    assert searcher.search(DYING_DECLARATION_FACTS).hits
    assert set(seen.seen["fulltext"]) == {None} and set(seen.seen["bm25"]) == {None}
    seen.seen = {"fulltext": [], "bm25": []}
    _recorded(monkeypatch, searcher, "large")
    assert searcher.search(DYING_DECLARATION_FACTS).hits
    assert set(seen.seen["fulltext"]) == {FULLTEXT_MAX_DF} and set(seen.seen["bm25"]) == {SUMMARY_MAX_DF}
    seen.seen = {"fulltext": [], "bm25": []}
    every = searcher.options.model_copy(update={"fulltext_max_df": 1.0, "summary_max_df": 1.0})
    assert searcher.search(DYING_DECLARATION_FACTS, options=every).hits
    assert set(seen.seen["fulltext"]) == {None} and set(seen.seen["bm25"]) == {None}


@pytest.mark.parametrize("name, option", [("fulltext", "fulltext_max_df"), ("bm25", "summary_max_df")])
def test_a_bm25_run_without_common_terms_is_a_search_for_the_others(archive, monkeypatch, name, option):
    """With the share set, the facts' run is the search for the query's terms held by at most that
    share of the judgments (the other BM25 part reads every term); the question runs re-scored
    from it leave out the same."""
    from aqgr.retrieval.embedded.retrievers import with_pairs

    searcher = archive._searcher()
    index = searcher.index
    options = searcher.options.model_copy(update={option: 0.25, "fulltext_questions": True, "rescore_questions": True})
    seen = MaxDf(monkeypatch)
    plan = searcher.plan(DYING_DECLARATION_FACTS, options=options)
    facts = searcher._query(plan.facts, options)
    part = index._parts[name]
    every = with_pairs(index.tokenizer(facts), part.ngrams)
    kept = seen.terms[name][0]
    limit = 0.25 * len(index)
    assert set(every) - set(kept) and [t for t in every if part.doc_freq(t) <= limit] == kept
    other = "bm25" if name == "fulltext" else "fulltext"
    assert seen.terms[other][0] == with_pairs(index.tokenizer(facts), index._parts[other].ngrams)
    run = dict(plan.facts_runs)[name]
    assert run == index.retrieve(facts, plan.depth, retrievers=[name], max_df={name: 0.25})[name]
    assert run != index.retrieve(facts, plan.depth, retrievers=[name])[name]
    retrieval = searcher.retrieve(plan)
    question_runs = [r for n, r in retrieval.runs if n == name][1:]
    assert len(question_runs) == len(plan.questions) > 0
    for question, rescored in zip(plan.questions, question_runs):
        searched = dict(
            index.retrieve(f"{question}\n{facts}", plan.depth, retrievers=[name], max_df={name: 0.25})[name]
        )
        assert all(d.score == pytest.approx(searched[d.doc_id], rel=1e-5) for d in rescored if d.doc_id in searched)


def test_the_command_line_and_the_server_set_how_common_a_bm25_term_may_be(archive, monkeypatch):
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    seen = MaxDf(monkeypatch)
    args = ["search", DYING_DECLARATION_FACTS, "--home", str(archive.home), "--json"]
    result = CliRunner().invoke(app, args + ["--fulltext-max-df", "0.5", "--summary-max-df", "0.75"])
    assert result.exit_code == 0, result.output
    assert set(seen.seen["fulltext"]) == {0.5} and set(seen.seen["bm25"]) == {0.75}
    for flag in ("--fulltext-max-df", "--summary-max-df"):
        for bad in ("0", "1.5"):
            result = CliRunner().invoke(app, args + [flag, bad])
            assert result.exit_code == 2 and "a share of the judgments" in result.output
    seen.seen = {"fulltext": [], "bm25": []}
    with TestClient(create_app(archive=archive)) as client:
        response = client.post(
            "/api/search",
            json={"facts": DYING_DECLARATION_FACTS, "options": {"fulltext_max_df": 0.25, "summary_max_df": 0.5}},
        )
        assert response.status_code == 200, response.text
        assert set(seen.seen["fulltext"]) == {0.25} and set(seen.seen["bm25"]) == {0.5}
        for option in ("fulltext_max_df", "summary_max_df"):
            response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS, "options": {option: 0}})
            assert response.status_code == 422


def test_the_facts_windows_are_embedded_one_a_call_once_each_and_make_the_same_dense_run(archive, monkeypatch):
    """The facts' read embeds each window of the facts in a model call of its own (the calls run
    side by side with the lexical reads), once; the dense run is the one the facts' vector makes."""
    from aqgr.retrieval.dense.embedders import embedders
    from aqgr.retrieval.dense.windows import embed_query, split_windows

    searcher = archive._searcher()
    facts = "\n\n".join([DYING_DECLARATION_FACTS] * 4)
    windows = split_windows(facts, searcher.index.spec.window_chars)
    assert len(windows) >= 2
    embedder = searcher.index._queries._embedder  # the index's model (private: what it is asked)
    asked: list[list[str]] = []
    real = embedder.embed
    monkeypatch.setattr(embedder, "embed", lambda texts: (asked.append(list(texts)), real(texts))[1])
    plan = searcher.plan(facts)
    assert sorted(w for texts in asked for w in texts if w in windows) == sorted(windows)
    assert all(len(texts) == 1 for texts in asked if set(texts) & set(windows))
    vector = embed_query(facts, embedders.create("hashing.v1"), searcher.index.spec.window_chars)
    expected = searcher.index.retrieve(facts, plan.depth, retrievers=["dense"], vector=vector)["dense"]
    assert dict(plan.facts_runs)["dense"] == expected


class _QuotingAll:
    """An explainer without `score_of` that explains as the one it wraps: every candidate quoted."""

    def __init__(self, inner):
        self.name, self._inner = inner.name, inner

    def explain(self, *args):
        return self._inner.explain(*args)


def test_an_explainer_that_scores_first_quotes_only_the_hits_shown(archive, monkeypatch):
    """evidence.v2 scores a candidate by its retrieval strength before quoting it: a search quotes the
    hits it returns and no other candidate, and returns what quoting every candidate returns (the
    same hits in the same order, the same count below the threshold)."""
    searcher = archive._searcher()
    assert searcher.explainer.name == "evidence.v2" and hasattr(searcher.explainer, "score_of")
    quoted: list[list[str]] = []
    real = searcher.explainer.explain

    def recording(facts, questions, candidates, scorer):
        quoted.append([c.summary.judgment_id for c in candidates])
        return real(facts, questions, candidates, scorer)

    monkeypatch.setattr(searcher.explainer, "explain", recording)
    seen_below = False
    for k, min_score in ((1, 1), (2, 1), (10, 1), (10, 9)):
        options = searcher.options.model_copy(update={"min_score": min_score})
        result = searcher.search(DYING_DECLARATION_FACTS, [QUESTION], k=k, options=options)
        assert quoted[-1] == [hit.judgment_id for hit in result.hits]
        monkeypatch.setattr(searcher, "explainer", _QuotingAll(searcher.explainer))
        every = searcher.search(DYING_DECLARATION_FACTS, [QUESTION], k=k, options=options)
        monkeypatch.setattr(searcher, "explainer", searcher.explainer._inner)
        assert len(quoted[-1]) >= len(every.hits) + every.below_threshold  # every candidate quoted
        assert every.hits == result.hits and every.below_threshold == result.below_threshold
        seen_below |= result.below_threshold > 0
        assert len(result.hits) <= k
    assert seen_below and len(quoted[0]) == 1 < len(quoted[-1])


def test_every_questions_reads_share_one_side_by_side_each_retriever_a_call(archive, monkeypatch):
    """The questions' reads go to the cores together, one call per question and retriever taken
    question by question, so no core idles while the last question is read alone; the runs are
    those each question's own reads give."""
    import aqgr.pipeline.search as search_module

    searcher = archive._searcher()
    second = "Whether the accused can rely on the right of private defence of property?"
    plan = searcher.plan(DYING_DECLARATION_FACTS, [QUESTION, second])
    batches: list[int] = []
    real = search_module.side_by_side
    monkeypatch.setattr(search_module, "side_by_side", lambda calls: (batches.append(len(calls)), real(calls))[1])
    retrieval = searcher.retrieve(plan)
    names = searcher._retrievers(plan.options)
    assert batches == [2 * len(names)]
    alone = [run for question in plan.questions for run in searcher._retrieve(plan, question)]
    assert list(retrieval.runs[len(names) :]) == alone
