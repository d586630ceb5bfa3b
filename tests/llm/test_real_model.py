"""The whole model-backed pipeline on a real model (SmolLM2-135M-Instruct), in-process (llamacpp.v1) and
over HTTP (openai.v1 against llama-cpp-python's server): what must hold for any model.

- every stored summary is valid and has every required slot; a judgment that fails is recorded
  with a reason, never stored half-made;
- no prompt exceeds its budget; no reply cut at its budget is used, cached or sent again as it was;
- a long judgment goes through chunks + chain-of-thought inside the 8k window;
- search: the model's questions and explanations, grounded in the archive.
"""

from __future__ import annotations

import sqlite3

import pytest

from aqgr.archive.home import Archive
from aqgr.eval.bench.llama_server import LlamaServer
from aqgr.foundation.errors import ProviderError
from aqgr.llm.base import LLMRequest
from aqgr.llm.cache import ResponseCache
from aqgr.llm.client import LLMClient
from aqgr.llm.config import ProviderConfig
from aqgr.pipeline.config import SearchOptions
from aqgr.retrieval.spec import IndexSpec
from aqgr.schemas.summary import missing_required
from aqgr.schemas.validation import schema_errors
from tests.aqgr.helpers import DYING_DECLARATION_FACTS
from tests.llm.real_model import MODEL, SAMPLE, TEST_SETTINGS, long_judgment, require_real_model

pytestmark = pytest.mark.timeout(900)
SPEC = IndexSpec(embedder="hashing.v1")


@pytest.fixture(scope="module")
def gguf():
    return require_real_model()


@pytest.fixture(scope="module")
def server(gguf):
    served = LlamaServer(gguf).wait()
    yield served
    served.stop()


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The sample archive summarised offline and indexed (the search tests' archive)."""
    home = tmp_path_factory.mktemp("indexed")
    archive = Archive(home, index=SPEC)
    archive.summarize([SAMPLE])
    archive.build_index(spec=SPEC)
    return home


def _stored_summaries_hold(archive: Archive, report) -> None:
    assert len(report.summarised) + len(report.failed) == report.files
    for failure in report.failed:  # a failure is recorded with a reason and a message, nothing stored
        assert failure.reason and failure.message
        assert archive.summary(failure.judgment_id) is None  # Archive.summary answers None, it does not raise
    for judgment_id in report.summarised:
        summary = archive.summary(judgment_id)
        document = summary.model_dump(mode="json")
        assert schema_errors(document) == [] and missing_required(document) == [], judgment_id
        assert summary.provenance.engine == "llm.v1" and summary.provenance.output_tokens > 0


def _cached_replies_were_whole(home) -> None:
    """The reply cache holds only replies that ended by themselves (none cut at the budget)."""
    with sqlite3.connect(home / "cache" / "llm-replies.sqlite") as db:
        finishes = [row[0] for row in db.execute("SELECT finish_reason FROM replies")]
    assert finishes and all(f in ("stop", "eos") for f in finishes), finishes


def test_in_process_summaries_are_valid_with_every_required_slot_inside_the_budget(gguf, tmp_path):
    archive = Archive(
        tmp_path / "home", provider="llamacpp.v1", model=MODEL, summarizer="llm.v1", index=SPEC, **TEST_SETTINGS
    )
    report = archive.summarize([SAMPLE / "SC001.txt", SAMPLE / "SC004.txt"])
    _stored_summaries_hold(archive, report)
    assert report.summarised, [f.message for f in report.failed]  # the grammar makes a valid reply reachable
    client = archive._llm_client()
    budget = client.budget("summaries")
    usage = archive.model_usage()["summaries"]
    assert client.context_window() == 8192 and budget.output_tokens == 384  # read from the model file; the setting
    assert usage["largest_prompt"] <= budget.input_tokens and usage["largest_prompt"] + budget.output_tokens <= 8192
    assert archive.summary(report.summarised[0]).provenance.model == "llamacpp.v1:SmolLM2-135M-Instruct.Q4_1.gguf"
    _cached_replies_were_whole(archive.home)


def test_a_long_judgment_goes_through_chunks_and_chain_of_thought_inside_the_window(gguf, tmp_path):
    text = long_judgment(100_000)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "LONG1.txt").write_text(text, encoding="utf-8")
    archive = Archive(
        tmp_path / "home", provider="llamacpp.v1", model=MODEL, summarizer="llm.v1", index=SPEC, **TEST_SETTINGS
    )
    engine = archive._summarizer()
    budget = engine.budget()
    assert not engine.fits(text, budget)
    chunk_chars = engine.chunk_chars(text, budget)
    assert 1000 <= chunk_chars < 20_000  # the study's 20,000 would not fit 4 to a prompt of an 8k window
    report = archive.summarize([folder])
    _stored_summaries_hold(archive, report)
    usage = archive.model_usage()["summaries"]
    assert usage["calls"] >= 5  # one request per slot group (header, facts, issues, statutes, principles)
    assert usage["largest_prompt"] <= budget.input_tokens
    if report.failed:  # a small model may still fail a group: then it says why, and nothing is stored
        assert report.failed[0].reason in ("invalid_output", "truncated", "ungrounded"), report.failed[0].message
    else:
        assert report.summarised == ["LONG1"]


def test_a_reply_cut_at_its_budget_is_an_error_never_cached_nor_resent(gguf):
    config = ProviderConfig(provider="llamacpp.v1", model=MODEL, max_output_tokens=16, timeout_s=120)
    cache = ResponseCache(":memory:")
    client = LLMClient.from_config(config)
    client.cache = cache
    schema = {"type": "object", "properties": {"facts": {"type": "string"}}, "required": ["facts"]}
    request = LLMRequest(
        prompt="Summarise the facts of a murder appeal in detail.",
        stage="summaries",
        prompt_version="t",
        json_schema=schema,
        max_output_tokens=16,
    )
    with pytest.raises(ProviderError) as info:
        client.complete(request)
    assert info.value.kind == "truncated" and "--max-output-tokens" in str(info.value)
    usage = client.ledger.snapshot()["summaries"]
    assert (
        usage["truncated"] == 1 and usage["calls"] == 1 and len(cache) == 0
    )  # the ceiling (16) allows no larger retry


def _model_search(home, **provider) -> tuple:
    archive = Archive(
        home,
        question_generator="llm.v1",
        explainer="llm.v1",
        summarizer="extractive.v1",
        index=SPEC,
        **provider,
        **{**TEST_SETTINGS, "max_output_tokens": 512},
    )
    options = SearchOptions(explain_top=4, k=4, question_min_ratio=0.0, min_score=1)
    return archive, archive.search(DYING_DECLARATION_FACTS, options=options)


def _search_holds(archive: Archive, result) -> None:
    assert 1 <= len(result.questions) <= 3
    assert result.engines.questions == "llm.v1" and result.engines.explainer == "llm.v1"
    assert not any("failed" in note for note in result.notes), result.notes  # the model answered every stage
    for hit in result.hits:
        assert archive.summary(hit.judgment_id).judgment_id == hit.judgment_id  # grounded: in the archive
        assert 1 <= hit.score <= 10 and hit.legal_issue and hit.reason
    usage = archive.model_usage()
    assert (
        usage["questions"]["calls"] >= 1 and usage["explanations"]["calls"] >= 2
    )  # 4 candidates, 2 per 512-token reply
    assert result.dropped_citations >= 0 and result.dropped_not_in_archive >= 0


def test_in_process_search_questions_and_explanations(gguf, indexed):
    archive, result = _model_search(indexed, provider="llamacpp.v1", model=MODEL)
    _search_holds(archive, result)


def test_over_http_structured_output_is_negotiated_and_the_pipeline_runs(server, tmp_path, indexed):
    http = dict(provider="openai.v1", model="smollm2", base_url=server.url, context_window=8192)
    archive = Archive(tmp_path / "home", summarizer="llm.v1", index=SPEC, **http, **TEST_SETTINGS)
    report = archive.summarize([SAMPLE / "SC002.txt"])
    _stored_summaries_hold(archive, report)
    assert report.summarised == ["SC002"], [f.message for f in report.failed]
    provider = archive._llm_client().provider
    assert provider.structured_form == "json_object_schema"  # json_schema refused (HTTP 500), remembered for the run
    assert archive.model_usage()["summaries"]["retries"] == 0  # the refusal is not retried as a server error
    _cached_replies_were_whole(archive.home)
    searched, result = _model_search(indexed, **http)
    _search_holds(searched, result)
