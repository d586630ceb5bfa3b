"""`llm.v1` summaries driven by the scripted fake provider."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from aqgr.archive.home import Archive
from aqgr.foundation.errors import ProviderError, SafetyBlockError, SummarizeError
from aqgr.llm.client import LLMClient
from aqgr.llm.config import ProviderConfig
from aqgr.llm.fake import FakeProvider, FakeReply
from aqgr.retrieval.spec import IndexSpec
from aqgr.summarizer.base import JudgmentText, summarizers
from aqgr.summarizer.llm.chunks import DenseIndex, split_chunks
from aqgr.summarizer.llm.engine import LLMSummarizer, LLMSummaryParams
from tests.aqgr.helpers import JUDGMENTS, write_judgments

SLOTS = {
    "court": "Supreme Court of India",
    "case_number": "Criminal Appeal No. 12 of 1997",
    "judgment_kind": "appeal",
    "parties": {"appellants": ["Ram Kumar"], "respondents": ["State of Punjab"]},
    "date": "12 March 1998",
    "bench": ["K. Singh"],
    "facts": "The appellant was convicted under Section 302 of the Indian Penal Code.",
    "arguments": {"appellants": ["The dying declaration was not corroborated."], "respondents": []},
    "issues": ["Whether a dying declaration recorded by a magistrate can form the sole basis of conviction."],
    "reasoning": "A dying declaration which is true and voluntary can be the sole basis of conviction.",
    "disposed_in_favour_of": "respondents",
    "final_judgment": "The appeal is accordingly dismissed.",
    "statutes": [{"name": "Section 302 of the Indian Penal Code", "principle": "", "application": ""}],
    "precedents": [],
    "new_principles": [],
    "subjects": ["dying declaration"],
}


def _judgment(jid="A1", text=None):
    return JudgmentText(jid, text or JUDGMENTS["A1"], f"/tmp/{jid}.txt", "0" * 64)


def _engine(script, params=None, **config):
    provider = FakeProvider(script)
    client = LLMClient(
        provider, config=ProviderConfig(provider="fake.v1", model="scripted", **config), sleep=lambda s: None
    )
    return LLMSummarizer(client, params or LLMSummaryParams(embedder="hashing.v1")), provider


def test_short_judgment_is_one_zero_shot_json_request():
    engine, provider = _engine([FakeReply(json.dumps(SLOTS), 900, 300)])
    slots = engine.summarize(_judgment())
    assert slots.parties.appellants == ["Ram Kumar"] and slots.bench == ["K. Singh"]
    assert provider.calls == 1
    request = provider.requests[0]
    schema = (
        request.json_schema
    )  # structured output: every slot, required, lists and strings bounded to the reply budget
    assert schema["required"] == list(SLOTS) and 3 <= schema["properties"]["bench"]["maxItems"] <= 9
    assert schema["properties"]["facts"]["minLength"] == 1 and schema["properties"]["facts"]["maxLength"] > 500
    assert (request.temperature, request.top_p, request.top_k, request.max_output_tokens) == (0.9, 1.0, 1, 2048)
    assert "Ram Kumar v State of Punjab" in request.prompt and "Extract, do not paraphrase" in request.system
    assert engine.take_usage() == {"input_tokens": 900.0, "output_tokens": 300.0, "model_calls": 1.0}
    assert engine.take_usage() is None


def test_invalid_json_is_repaired_and_a_schema_violation_is_reasked():
    engine, provider = _engine(["Sure! ```json\n" + json.dumps(SLOTS) + "\n```"])
    assert engine.summarize(_judgment()).court == "Supreme Court of India" and provider.calls == 1
    bad = dict(SLOTS, statutes=[{"principle": "no name"}])
    engine, provider = _engine([json.dumps(bad), "{not json", json.dumps(SLOTS)])
    assert engine.summarize(_judgment()).statutes[0].name.startswith("Section 302")
    assert provider.calls == 3
    assert "'name' is a required property" in provider.requests[1].prompt
    assert "not valid JSON" in provider.requests[2].prompt


def test_mechanical_repairs_keep_the_content():
    loose = dict(SLOTS, bench="K. Singh", issues=None, unknown_key="x", precedents=["Kushal Rao v. State of Bombay"])
    engine, provider = _engine([json.dumps(loose)])
    slots = engine.summarize(_judgment())
    assert (
        slots.bench == ["K. Singh"]
        and slots.issues == []
        and slots.precedents[0].name == "Kushal Rao v. State of Bombay"
    )


def test_output_still_invalid_after_the_reasks_is_an_error_never_a_summary():
    engine, provider = _engine([json.dumps({"bench": 5})] * 3)
    with pytest.raises(SummarizeError) as info:
        engine.summarize(_judgment())
    assert info.value.reason == "invalid_output" and provider.calls == 3


def test_safety_block_and_timeout_are_per_judgment_errors():
    engine, _ = _engine([SafetyBlockError("fake.v1", "reply withheld: finish reason SAFETY")])
    with pytest.raises(SummarizeError) as info:
        engine.summarize(_judgment())
    assert info.value.reason == "safety_block"
    timeout = ProviderError("fake.v1", "timeout", "no reply within 1 s", retryable=True)
    engine, provider = _engine([timeout] * 5, max_retries=2)
    with pytest.raises(SummarizeError) as info:
        engine.summarize(_judgment())
    assert info.value.reason == "timeout" and "no reply within" in str(info.value) and provider.calls == 3


def _long_text(n_paragraphs=130):
    words = (
        "the appellant contended that the dying declaration was recorded by the magistrate and the court held".split()
    )
    paras = [f"{i}. " + " ".join(words[(i + j) % len(words)] for j in range(160)) for i in range(1, n_paragraphs + 1)]
    paras[0] = "IN THE SUPREME COURT OF INDIA\nCriminal Appeal No. 9 of 2001\nRam Kumar v State of Punjab"
    paras[-1] = "Judgment delivered on 12 March 1998 by K. Singh, J. and A. Rao, J."
    return "\n\n".join(paras)


def test_chunks_are_paragraph_aligned_with_half_overlap():
    text = _long_text()
    chunks = split_chunks(text)
    assert len(chunks) > 2 and all(len(c.text) <= 20_000 for c in chunks)
    starts = {m.start() for m in re.finditer(r"(?:^|\n\n)", text)} | {0}
    for a, b in zip(chunks, chunks[1:]):
        assert b.start in {s + 2 if s else 0 for s in starts} or text[b.start - 2 : b.start] == "\n\n"
        overlap = a.end - b.start
        assert 0.4 * len(a.text) <= overlap <= 0.6 * len(a.text)  # ~50% (paragraph-aligned)
    assert chunks[0].start == 0 and chunks[-1].end == len(text)


def test_the_chunk_index_scores_a_chunk_by_its_best_window(tmp_path):
    from aqgr.retrieval.dense.embedders import embedders
    from aqgr.retrieval.dense.windows import embed_query

    emb = embedders.create("hashing.v1")
    docs = [["land acquisition compensation", "dowry death of the bride"], ["income tax deduction"], []]
    dense, n = DenseIndex.build(docs, emb)
    assert n == 3 and dense.index.ntotal == 3
    q = embed_query("dowry death of the bride", emb)
    scores = dense.scores(q)
    assert scores[0] == pytest.approx(1.0, abs=1e-5) and scores[1] < 0.5 and scores[2] == -np.inf
    dense.save(tmp_path)
    np.testing.assert_array_equal(DenseIndex.load(tmp_path).scores(q), scores)
    assert embed_query("   ", emb) is None


def test_long_judgment_takes_the_chain_of_thought_path_over_k4_chunks():
    def responder(request):
        keys = request.json_schema["required"]
        return {k: SLOTS[k] for k in keys}

    provider = FakeProvider(responder=responder)
    client = LLMClient(provider, config=ProviderConfig(provider="fake.v1", model="scripted"))
    engine = LLMSummarizer(client, LLMSummaryParams(embedder="hashing.v1"))
    text = _long_text()
    assert not engine.fits(text)
    n_chunks = len(engine.chunks(text))
    slots = engine.summarize(_judgment("L1", text))
    assert slots.final_judgment == SLOTS["final_judgment"] and slots.bench == ["K. Singh"]
    groups = [tuple(r.json_schema["required"]) for r in provider.requests]
    assert groups == [
        ("court", "case_number", "judgment_kind", "parties", "date", "bench"),
        ("facts", "arguments"),
        ("issues", "reasoning", "disposed_in_favour_of", "final_judgment"),
        ("statutes", "precedents"),
        ("new_principles", "subjects"),
    ]
    header = provider.requests[0].prompt
    assert f"part 1 of {n_chunks}" in header and f"part {n_chunks} of {n_chunks}" in header
    for request in provider.requests[1:]:
        assert request.prompt.count("Excerpt (part ") == 4  # k = 4
    assert "Already extracted" in provider.requests[2].prompt  # the chain: earlier answers as context
    usage = engine.take_usage()
    assert usage["model_calls"] == 5 and usage["input_tokens"] > 0


def test_batch_records_a_safety_block_and_goes_on(tmp_path):
    folder = write_judgments(tmp_path / "in", {k: JUDGMENTS[k] for k in ("A1", "A2", "A3")})

    def responder(request):
        if "Sunita Devi" in request.prompt:
            return SafetyBlockError("fake.v1", "prompt blocked: SAFETY")
        if "Mohan Lal" in request.prompt:  # each judgment's own parties: a summary naming none of them is not stored
            return FakeReply(
                json.dumps({**SLOTS, "parties": {"appellants": ["Mohan Lal"], "respondents": ["State of Rajasthan"]}}),
                1000,
                200,
            )
        return FakeReply(json.dumps(SLOTS), 1000, 200)

    provider = FakeProvider(responder=responder)
    client = LLMClient(provider, config=ProviderConfig(provider="fake.v1", model="scripted"))
    archive = Archive(tmp_path / "home", llm=client, summarizer="llm.v1", index=IndexSpec(embedder="hashing.v1"))
    report = archive.summarize([folder])
    assert sorted(report.summarised) == ["A1", "A3"]
    assert [(f.judgment_id, f.reason) for f in report.failed] == [("A2", "safety_block")]
    assert archive.status()["failures_by_reason"] == {"safety_block": 1}
    summary = archive.summary("A1")
    assert summary.provenance.engine == "llm.v1" and summary.provenance.model == "fake.v1:scripted"
    assert (summary.provenance.input_tokens, summary.provenance.output_tokens) == (1000, 200)
    assert archive.model_usage()["summaries"]["calls"] == 2


def test_llm_engine_without_a_provider_says_how_to_configure(monkeypatch):
    monkeypatch.delenv("AQGR_PROVIDER", raising=False)
    from aqgr.foundation.errors import ConfigError

    with pytest.raises(ConfigError, match="AQGR_PROVIDER"):
        summarizers.create("llm.v1")
