"""`llm.v1` citation treatments over a fake OpenAI-compatible server on 127.0.0.1: the model's
label is kept only when valid, `phrases.v1` answers everything else, and the citation store
records which engine read its treatments (another one rebuilds it)."""

from __future__ import annotations

import json
import re
import time

import pytest

from aqgr.archive.home import Archive
from aqgr.foundation.errors import IndexMismatchError
from aqgr.llm.client import LLMClient
from aqgr.llm.config import ProviderConfig
from aqgr.pipeline.config import Settings
from aqgr.retrieval.citations import CitationStore
from aqgr.retrieval.citations.treatment import PhraseTreatments, create
from aqgr.retrieval.citations.treatment_llm import LLMTreatments, find_quote
from aqgr.retrieval.spec import IndexSpec
from tests.aqgr.helpers import OVERRULING_JUDGMENTS, write_judgments
from tests.llm.servers import FakeModelServer, Step, openai_text

OVERRULING = (
    "We hold that Ram Kumar v. State of Punjab does not lay down the correct law on the dying declaration "
    "as the sole basis of conviction, and to that extent it is overruled."
)
PLAIN = "In Ram Kumar v. State of Punjab this Court held that a dying declaration needs no corroboration."
MARK = " v. "


def _client(url: str, **config) -> LLMClient:
    settings = ProviderConfig(
        provider="openai.v1",
        model="local-model",
        base_url=url,
        **{"max_retries": 0, "backoff_initial_s": 0.01, "structured_output": "json_object", **config},
    )
    return LLMClient.from_config(settings)


def _answer(label: str, quote: str) -> Step:
    return Step(openai_text(json.dumps({"label": label, "quote": quote})))


def _prompt(body: dict) -> str:
    return body["messages"][-1]["content"]


def _classify(engine, sentence: str):
    at = sentence.index(MARK)
    return engine.classify(sentence, at, at + len(MARK), "Ram Kumar v. State of Punjab")


def test_a_valid_answer_gives_the_models_label_and_the_sentences_own_words():
    with FakeModelServer() as server:
        # the quote with its white space changed: kept as the sentence writes it
        server.add(_answer("followed", "this Court held  that a dying\ndeclaration"))
        found = _classify(LLMTreatments(_client(server.url)), PLAIN)
    assert found.label == "followed" and found.cue == "this Court held that a dying declaration"
    assert found.cue in PLAIN and (found.sentence, found.start, found.end) == (PLAIN, 0, len(PLAIN))
    prompt = _prompt(server.posts()[0]["body"])
    assert PLAIN in prompt and "The case: Ram Kumar v. State of Punjab" in prompt


@pytest.mark.parametrize(
    "step, why",
    [
        (_answer("reversed", "does not lay down the correct law"), "an unknown label"),
        (Step(openai_text("overruled, I think")), "not JSON"),
        (Step(openai_text(json.dumps({"label": "overruled"}))), "no quote"),
        (_answer("doubted", "Shyam v. Gopal (1990) 1 SCC 5 doubted it"), "a quote naming a case the sentence does not"),
        (_answer("overruled", ""), "an empty quote"),
        (Step({"error": {"message": "boom"}}, status=500), "a provider error"),
    ],
)
def test_an_invalid_answer_or_a_failed_call_gives_the_phrases_treatment(step, why):
    phrases = _classify(PhraseTreatments(), OVERRULING)
    assert phrases.label == "overruled"
    with FakeModelServer() as server:
        server.add(step)
        found = _classify(LLMTreatments(_client(server.url)), OVERRULING)
    assert found == phrases, why
    assert len(server.posts()) == 1  # asked once: no re-ask, no retry


def test_a_call_past_its_deadline_gives_the_phrases_treatment():
    with FakeModelServer(
        default=Step(openai_text(json.dumps({"label": "followed", "quote": "held"})), delay=3)
    ) as server:
        started = time.monotonic()
        found = _classify(LLMTreatments(_client(server.url, timeout_s=0.5)), PLAIN)
        took = time.monotonic() - started
    assert found == _classify(PhraseTreatments(), PLAIN) and found.label == "referred"
    assert took < 2.5, took


def test_a_garbled_or_foreign_sentence_is_referred_without_asking():
    sentence = "यह निर्णय Ram Kumar v. State of Punjab में दिया गया था और इसे खारिज किया गया।"
    with FakeModelServer(default=_answer("overruled", "खारिज")) as server:
        found = _classify(LLMTreatments(_client(server.url)), sentence)
    assert found.label == "referred" and server.posts() == []


def test_the_quote_is_found_word_by_word_or_not_at_all():
    assert find_quote(' "does not  lay down" ', OVERRULING) == (OVERRULING.index("does"), OVERRULING.index("down") + 4)
    assert find_quote("does not lay down the law", OVERRULING) is None
    assert find_quote("  ", OVERRULING) is None


def test_the_engine_is_versioned_by_provider_model_prompt_and_rule():
    engine = LLMTreatments(_client("http://127.0.0.1:9"))
    assert engine.name == "llm.v1"
    assert re.fullmatch(
        r"llm\.v1;openai\.v1:local-model;system\.v1@\w{12}\+treatment\.v1@\w{12};severity\.v1", engine.version
    )
    assert create("phrases.v1").version == "phrases.v1"


def test_a_configured_provider_selects_llm_v1_unless_an_engine_is_named(tmp_path):
    configured = dict(provider="openai.v1", model="local-model", base_url="http://127.0.0.1:9")
    assert Settings.resolve(tmp_path, **configured).treatment == "llm.v1"
    assert Settings.resolve(tmp_path, treatment="phrases.v1", **configured).treatment == "phrases.v1"
    assert Settings.resolve(tmp_path).treatment == "phrases.v1"


def _responder(body: dict) -> Step:
    """The model's part: every sentence saying "distinguishable" is called doubted (a label phrases.v1
    would not give, more severe than its "distinguished"), the overruling one overruled, the rest referred."""
    sentence = re.search(r"<<<\n(.*?)\n>>>", _prompt(body), re.S).group(1)
    if "distinguishable" in sentence:
        return _answer("doubted", "The decision in")
    if "does not lay down" in sentence:
        return _answer("overruled", "does not lay down the correct law")
    return _answer("referred", "")


def _archive(home, url: str | None, folder) -> Archive:
    engines = dict(
        summarizer="extractive.v1",
        question_generator="harvest.v1",
        explainer="evidence.v2",
        index=IndexSpec(embedder="hashing.v1"),
    )
    if url is None:
        return Archive(home, treatment="phrases.v1", **engines)
    return Archive(home, llm=_client(url), treatment="llm.v1", **engines)


def _treatments(archive: Archive, judgment_id: str) -> dict[str, str]:
    return {c.judgment_id: c.treatment.label for c in archive.citations_of(judgment_id).cites}


def test_the_archive_reads_treatments_with_the_model_and_rebuilds_for_another_engine(tmp_path):
    folder = write_judgments(tmp_path / "in", OVERRULING_JUDGMENTS)
    home = tmp_path / "home"
    with FakeModelServer(respond=_responder) as server:
        archive = _archive(home, server.url, folder)
        archive.summarize([folder])
        archive.build_index()
        asked = len(server.posts())
    assert asked >= 2 and all(p["body"]["messages"] for p in server.posts())
    assert _treatments(archive, "A6") == {"A1": "overruled", "A2": "doubted"}  # the model's labels
    [cited] = [c for c in archive.citations_of("A6").cites if c.judgment_id == "A2"]
    assert (
        cited.treatment.quote in OVERRULING_JUDGMENTS["A6"] and cited.treatment.dissent == "phrases.v1: distinguished"
    )
    with CitationStore(home / "citations.sqlite") as store:  # read as it is, whatever engine made it
        assert store.treatment.startswith("llm.v1;openai.v1:local-model;")
        with pytest.raises(IndexMismatchError):
            store.add([], text_of=lambda _: "")  # an update needs the engine that made it
    with pytest.raises(IndexMismatchError, match="treatment"):
        CitationStore(home / "citations.sqlite", PhraseTreatments())
    # a search reads the store it finds; the next `aqgr index` with phrases.v1 rebuilds it
    offline = _archive(home, None, folder)
    assert _treatments(offline, "A6") == {"A1": "overruled", "A2": "doubted"}
    offline.build_index()
    assert _treatments(offline, "A6") == {"A1": "overruled", "A2": "distinguished"}


def test_a_judgment_whose_model_calls_run_out_of_time_keeps_the_phrases_treatments(tmp_path):
    """A server slower than the judgment's whole time: the first call is cut at the deadline, the rest
    are not made, and indexing completes with the offline treatments."""
    folder = write_judgments(tmp_path / "in", OVERRULING_JUDGMENTS)
    slow = Step(openai_text(json.dumps({"label": "followed", "quote": "The decision in"})), delay=5)
    with FakeModelServer(default=slow) as server:
        client = _client(server.url, timeout_s=30, judgment_timeout_s=1.0)
        archive = Archive(
            tmp_path / "home",
            llm=client,
            summarizer="extractive.v1",
            question_generator="harvest.v1",
            explainer="evidence.v2",
            treatment="llm.v1",
            index=IndexSpec(embedder="hashing.v1"),
        )
        archive.summarize([folder])
        started = time.monotonic()
        archive.build_index()
        took = time.monotonic() - started
        asked = len(server.posts())
    assert _treatments(archive, "A6") == {"A1": "overruled", "A2": "distinguished"}
    assert asked >= 1 and took < 20, (asked, took)


def test_a_set_up_failure_stops_the_engine_asking():
    """A refused key fails every call alike: after the first, the mentions get phrases.v1 without a call."""
    with FakeModelServer(default=_answer("followed", "held")) as server:
        server.add(Step({"error": {"message": "invalid api key"}}, status=401))
        engine = LLMTreatments(_client(server.url))
        first, second = _classify(engine, PLAIN), _classify(engine, OVERRULING)
    assert (first.label, second.label) == ("referred", "overruled")  # phrases.v1's, not the model's "followed"
    assert len(server.posts()) == 1 and "invalid api key" in engine.stopped


# ---------------------------------------------------------------- severity wins (issue 50, item 4)


@pytest.mark.parametrize(
    "step",
    [_answer("referred", ""), _answer("followed", "Ram Kumar v. State of Punjab does not lay down the correct law")],
)
def test_a_models_milder_label_never_replaces_the_phrases_overruling_and_the_disagreement_is_kept(step):
    phrases = _classify(PhraseTreatments(), OVERRULING)
    with FakeModelServer() as server:
        server.add(step)
        found = _classify(LLMTreatments(_client(server.url)), OVERRULING)
    said = json.loads(step.body["choices"][0]["message"]["content"])["label"]
    assert (found.label, found.sentence, found.cue) == ("overruled", phrases.sentence, phrases.cue)
    assert found.dissent == f"llm.v1: {said}"


def test_a_models_more_severe_label_stands_with_the_phrases_reading_recorded():
    with FakeModelServer() as server:
        server.add(_answer("doubted", "this Court held that a dying declaration needs no corroboration"))
        found = _classify(LLMTreatments(_client(server.url)), PLAIN)
    assert found.label == "doubted" and found.dissent == "phrases.v1: referred"


def test_engines_that_agree_record_no_disagreement():
    with FakeModelServer() as server:
        server.add(_answer("overruled", "does not lay down the correct law"))
        found = _classify(LLMTreatments(_client(server.url)), OVERRULING)
    assert found.label == "overruled" and found.dissent == ""


def _mild(body: dict) -> Step:
    """A model that reads every sentence as a mere reference, the overruling one included."""
    return _answer("referred", "")


def test_the_overruling_a_model_missed_stands_and_the_disagreement_is_shown_on_every_door(tmp_path):
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app
    from tests.aqgr.helpers import DYING_DECLARATION_FACTS

    folder = write_judgments(tmp_path / "in", OVERRULING_JUDGMENTS)
    home = tmp_path / "home"
    with FakeModelServer(respond=_mild) as server:
        archive = _archive(home, server.url, folder)
        archive.summarize([folder])
        archive.build_index()
    [cited] = [c for c in archive.citations_of("A6").cites if c.judgment_id == "A1"]
    assert cited.treatment.label == "overruled" and cited.treatment.dissent == "llm.v1: referred"
    question = "Whether a dying declaration recorded by a magistrate can form the sole basis of conviction?"
    offline = _archive(home, None, folder)  # a search reads the store as it is
    [hit] = [h for h in offline.search(DYING_DECLARATION_FACTS, [question], k=10).hits if h.judgment_id == "A1"]
    [warning] = hit.treatment_warnings
    assert (warning.judgment_id, warning.treatment, warning.dissent) == ("A6", "overruled", "llm.v1: referred")
    runner = CliRunner()
    for command in (["citations", "A1"], ["search", DYING_DECLARATION_FACTS, "-q", question]):
        shown = runner.invoke(app, [*command, "--home", str(home)])
        assert shown.exit_code == 0, shown.output
        assert "llm.v1: referred" in " ".join(shown.stdout.split()), command
