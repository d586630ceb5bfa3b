"""`llm.v1` questions and explanations inside a question-guided search, with the scripted fake."""

from __future__ import annotations

import json

from aqgr.archive.home import Archive
from aqgr.foundation.errors import ProviderError
from aqgr.llm.client import LLMClient
from aqgr.llm.config import ProviderConfig
from aqgr.llm.fake import FakeProvider
from aqgr.retrieval.spec import IndexSpec
from tests.aqgr.helpers import DYING_DECLARATION_FACTS

QUESTIONS = {
    "questions": [
        {
            "question": "Whether a dying declaration made to a doctor can be the sole basis of conviction?",
            "relevance": 9,
            "source": "A3",
        },
        {"question": "Whether a dying declaration needs corroboration?", "relevance": 10, "source": "NOT-AN-EXAMPLE"},
        {"question": "Whether the boundary dispute is relevant to motive?", "relevance": 3, "source": None},
    ]
}


def _explanation(ids_scores, extra_reason=""):
    return {
        "judgments": [
            {
                "id": jid,
                "parties": "x",
                "score": score,
                "legal_issue": "Sole basis of conviction on a dying declaration.",
                "reason": "It holds that a dying declaration needs no corroboration." + extra_reason,
            }
            for jid, score in ids_scores
        ]
    }


def _archive(home, script, **config):
    provider = FakeProvider(script)
    client = LLMClient(
        provider, config=ProviderConfig(provider="fake.v1", model="scripted", **config), sleep=lambda s: None
    )
    archive = Archive(
        home,
        llm=client,
        summarizer="extractive.v1",
        question_generator="llm.v1",
        explainer="llm.v1",
        index=IndexSpec(embedder="hashing.v1"),
    )
    return archive, provider


def test_search_makes_two_model_calls_and_drops_an_invented_judgment(archive_dir):
    archive, provider = _archive(archive_dir, [QUESTIONS, _explanation([("A3", 9), ("C999", 10), ("A1", 8)])])
    result = archive.search(DYING_DECLARATION_FACTS)
    assert provider.calls == 2  # questions, explanation
    assert [r.stage for r in provider.requests] == ["questions", "explanations"]
    assert result.questions[0] == "Whether a dying declaration needs corroboration?"
    assert result.candidate_questions[1].source_judgment_id == "A3"
    assert result.candidate_questions[0].source_judgment_id is None  # not one of the examples
    assert [h.judgment_id for h in result.hits] == ["A3", "A1"]
    assert result.dropped_not_in_archive == 1  # C999: not in the candidate list
    assert result.engines.questions == "llm.v1" and result.engines.explainer == "llm.v1"
    assert result.hits[0].parties.startswith("Mohan Lal")  # from the archive, not the model
    assert result.hits[0].evidence  # quoted from the summary
    assert result.model_usage["questions"]["calls"] == 1 and result.model_usage["explanations"]["calls"] == 1
    listed = provider.requests[1].prompt
    assert "[id: A1]" in listed and "Candidate judgments (a closed list" in listed


def test_questions_chosen_by_the_user_cost_no_question_call(archive_dir):
    archive, provider = _archive(archive_dir, [_explanation([("A3", 9)])])
    result = archive.search(DYING_DECLARATION_FACTS, ["Whether a dying declaration needs corroboration?"])
    assert [r.stage for r in provider.requests] == ["explanations"]  # no candidates generated
    assert "questions" not in result.model_usage and result.questions_chosen_by_user
    assert [h.judgment_id for h in result.hits] == ["A3"]


def test_a_reason_citing_an_unknown_case_is_cut_and_counted(archive_dir):
    archive, _ = _archive(
        archive_dir,
        [QUESTIONS, _explanation([("A3", 9)], " It follows Imaginary Person v. Fictional State of Nowhere.")],
    )
    result = archive.search(DYING_DECLARATION_FACTS)
    assert "Imaginary" not in result.hits[0].reason and result.dropped_citations == 1


def test_malformed_explanations_are_reasked_then_the_offline_explainer_answers_and_says_so(archive_dir):
    bad = {"judgments": [{"id": "A3", "score": 42}]}
    archive, provider = _archive(archive_dir, [QUESTIONS, bad, "no json", bad])
    result = archive.search(DYING_DECLARATION_FACTS)
    assert provider.calls == 4  # questions + 3 attempts at the explanation
    assert result.hits and any("explained by evidence.v1" in note for note in result.notes)


def test_question_generator_falls_back_to_harvesting_when_the_model_fails(archive_dir):
    down = ProviderError("fake.v1", "server_error", "unavailable", status=503, retryable=True)
    archive, provider = _archive(archive_dir, [down, down, _explanation([("A3", 9)])], max_retries=1)
    result = archive.search(DYING_DECLARATION_FACTS)
    assert result.candidate_questions and all(q.generated_by == "harvest.v1" for q in result.candidate_questions)
    assert any("questions harvested by harvest.v1" in n for n in result.notes)
    assert [h.judgment_id for h in result.hits] == ["A3"]


def test_cache_hit_on_rerun_pays_nothing(archive_dir, tmp_path):
    from aqgr.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path / "replies.sqlite")
    provider = FakeProvider([QUESTIONS, _explanation([("A3", 9)])])
    client = LLMClient(provider, config=ProviderConfig(provider="fake.v1", model="scripted"), cache=cache)
    archive = Archive(
        archive_dir,
        llm=client,
        summarizer="extractive.v1",
        question_generator="llm.v1",
        explainer="llm.v1",
        index=IndexSpec(embedder="hashing.v1"),
    )
    first = archive.search(DYING_DECLARATION_FACTS)
    second = archive.search(DYING_DECLARATION_FACTS)
    assert provider.calls == 2
    assert [h.judgment_id for h in first.hits] == [h.judgment_id for h in second.hits]
    assert second.model_usage["questions"]["cache_hits"] == 1 and second.model_usage["explanations"]["cache_hits"] == 1


def test_provider_configured_by_settings_selects_the_model_engines(archive_dir, monkeypatch):
    from aqgr.llm.fake import install_script
    from aqgr.pipeline.config import Settings

    monkeypatch.setenv("AQGR_PROVIDER", "fake.v1")
    monkeypatch.setenv("AQGR_MODEL", "search-script")
    monkeypatch.setenv("AQGR_SUMMARIZER", "extractive.v1")
    install_script("search-script", [QUESTIONS, _explanation([("A1", 7)])])
    settings = Settings.resolve(archive_dir, index=IndexSpec(embedder="hashing.v1"))
    assert (settings.summarizer, settings.question_generator, settings.explainer) == (
        "extractive.v1",
        "llm.v1",
        "llm.v1",
    )
    result = Archive(settings=settings).search(DYING_DECLARATION_FACTS)
    assert [h.judgment_id for h in result.hits] == ["A1"]
    assert (archive_dir / "cache" / "llm-replies.sqlite").exists()
    monkeypatch.delenv("AQGR_PROVIDER")
    plain = Settings.resolve(archive_dir)
    assert (plain.question_generator, plain.explainer) == ("harvest.v1", "evidence.v2")
    assert json.loads(plain.model_dump_json())["llm"]["provider"] is None


def test_an_explanation_of_a_judgment_outside_its_calls_candidates_is_dropped_and_counted(archive_dir):
    """Issue 50, item 1: the candidates split over two calls (three, then one); in the first call the model
    also explains the judgment of the second, citing one real case and one invented: that explanation
    never reaches the user (the model was not shown that judgment), is counted, and its citing sentences
    are counted too; each judgment is a hit once, with the explanation of its own call."""
    from aqgr.pipeline.config import SearchOptions

    outside = {
        "parties": "x",
        "score": 10,
        "legal_issue": "Whether Kesavananda Bharati v. State of Kerala (1973) 4 SCC 225 governs it.",
        "reason": "It applies Pramod Kumar v. State of Bihar, AIR 1999 SC 1234.",
    }
    calls: list[list[str]] = []

    def responder(request):
        if request.stage == "questions":
            return QUESTIONS
        ids = [line.split("]")[0][5:] for line in request.prompt.splitlines() if line.startswith("[id: ")]
        calls.append(ids)
        answer = _explanation([(i, 8) for i in ids])
        if len(calls) == 1:  # the first call also writes about a judgment it was not shown
            [other] = sorted({"A1", "A2", "A3", "A4"} - set(ids))
            answer["judgments"].append({"id": f"[{other}]", **outside})
        return answer

    provider = FakeProvider(responder=responder)
    client = LLMClient(
        provider,
        config=ProviderConfig(provider="fake.v1", model="scripted", context_window=4096, max_output_tokens=600),
    )
    archive = Archive(
        archive_dir,
        llm=client,
        summarizer="extractive.v1",
        question_generator="llm.v1",
        explainer="llm.v1",
        index=IndexSpec(embedder="hashing.v1"),
    )
    result = archive.search(DYING_DECLARATION_FACTS, options=SearchOptions(explain_top=6, min_score=1))
    assert [len(ids) for ids in calls] == [3, 1]
    ids = [h.judgment_id for h in result.hits]
    assert sorted(ids) == ["A1", "A2", "A3", "A4"]  # each judgment once
    shown = json.dumps(result.model_dump())
    assert "Kesavananda" not in shown and "1999" not in shown and "Pramod" not in shown
    [own] = [h for h in result.hits if h.judgment_id == calls[1][0]]
    assert own.score == 8 and own.reason == "It holds that a dying declaration needs no corroboration."
    assert result.dropped_not_in_archive == 1  # the explanation written outside its call's closed list
    assert result.dropped_citations == 2  # its legal issue's sentence and its reason's
