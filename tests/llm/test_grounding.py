"""One grounding rule for what a model writes: questions, summaries and explanations name only
what the archive's judgments show. Model replies come from the fake OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest

from aqgr.archive.home import Archive
from aqgr.foundation.errors import SummarizeError
from aqgr.pipeline.grounding import Locator, ground_summary
from aqgr.retrieval.spec import IndexSpec
from aqgr.schemas.summary import Parties, PrecedentRef, StatuteRef, SummarySlots
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, JUDGMENTS, write_judgments
from tests.llm.servers import FakeModelServer, Step, openai_text

PHANTOM = "Phantom Trust v. Imaginary Union (2031) 9 SCC 999"


def _model_archive(home, server, **engines) -> Archive:
    return Archive(
        home,
        provider="openai.v1",
        model="local-model",
        base_url=server.url + "/v1",
        index=IndexSpec(embedder="hashing.v1"),
        **engines,
    )


def _summary_reply(judgment_id: str, *, invent: bool) -> dict:
    """What a model answers for one of JUDGMENTS: its own header and reasoning, and, with `invent`, a court,
    a judge, a statute and a precedent the judgment never names (also cited in the reasoning)."""
    lines = JUDGMENTS[judgment_id].splitlines()
    appellant, respondent = lines[0].split(" v ")
    reasoning = next(line for line in lines if line.startswith("4. "))[3:]
    slots = {
        "court": "High Court of Atlantis" if invent else lines[1],
        "case_number": lines[4],
        "judgment_kind": "appeal",
        "parties": {"appellants": [appellant], "respondents": [respondent]},
        "date": "1 January 2031" if invent else lines[3],
        "bench": ["Justice Q. Phantasm"] if invent else [],
        "facts": lines[6][3:],
        "arguments": {"appellants": [], "respondents": []},
        "issues": [next(line for line in lines if line.startswith("3. "))[3:]],
        "reasoning": reasoning + (f" The court followed {PHANTOM}." if invent else ""),
        "disposed_in_favour_of": None,
        "final_judgment": lines[-1][3:],
        "statutes": [{"name": "Section 999 of the Phantom Act, 2031", "principle": "", "application": ""}]
        if invent
        else [],
        "precedents": [{"name": PHANTOM, "principle": "A dying declaration needs corroboration.", "application": ""}]
        if invent
        else [],
        "new_principles": [],
        "subjects": ["dying declaration"],
    }
    return slots


def _summaries_by_id(invent: bool):
    """A server answer: the slots for the judgment the request is about."""

    def respond(body) -> Step:
        prompt = " ".join(m["content"] for m in body["messages"])
        judgment_id = next(j for j, text in JUDGMENTS.items() if text.splitlines()[0] in prompt)
        return Step(openai_text(json.dumps(_summary_reply(judgment_id, invent=invent))))

    return respond


# ---------------------------------------------------------------- 1. model-written questions


def test_model_questions_citing_a_case_outside_the_archive_are_dropped_and_counted(archive_dir):
    questions = {
        "questions": [
            {
                "question": f"Whether {PHANTOM} makes corroboration of a dying declaration necessary?",
                "relevance": 10,
                "source": None,
            },
            {
                "question": "Whether In re Ghostly Estate governs a statement made to a doctor?",
                "relevance": 9,
                "source": None,
            },
            {
                "question": "Whether a dying declaration to a doctor can be the sole basis of conviction, as in Mohan Lal v. State of Rajasthan?",
                "relevance": 8,
                "source": "A3",
            },
            {"question": "Whether a dying declaration needs corroboration?", "relevance": 7, "source": None},
        ]
    }
    explanation = {
        "judgments": [
            {
                "id": "A3",
                "parties": "x",
                "score": 9,
                "legal_issue": "Dying declaration to a doctor.",
                "reason": "It needs no corroboration.",
            }
        ]
    }
    with FakeModelServer() as server:
        server.add(Step(openai_text(json.dumps(questions))), Step(openai_text(json.dumps(explanation))))
        result = _model_archive(
            archive_dir, server, summarizer="extractive.v1", question_generator="llm.v1", explainer="llm.v1"
        ).search(DYING_DECLARATION_FACTS)
    asked = [q.text for q in result.candidate_questions] + result.questions
    assert not any("Phantom" in q or "Ghostly" in q for q in asked)
    assert result.questions[0].endswith("as in Mohan Lal v. State of Rajasthan?")  # a candidate's own parties: kept
    assert result.dropped_citations == 2
    assert any("2 generated question(s) dropped" in note for note in result.notes)
    explained = server.posts()[1]["body"]["messages"][-1]["content"]
    assert "Phantom" not in explained and "Ghostly" not in explained  # nor handed on to the explainer


# ---------------------------------------------------------------- 2. model-written summaries


def test_a_model_summary_keeps_only_what_its_judgment_shows_and_records_the_rest(tmp_path):
    home = tmp_path / "home"
    with FakeModelServer(respond=_summaries_by_id(invent=True)) as server:
        archive = _model_archive(home, server, summarizer="llm.v1")
        report = archive.summarize([write_judgments(tmp_path / "in", {"A3": JUDGMENTS["A3"]})])
    assert report.summarised == ["A3"], report
    summary = archive.summary("A3")
    assert summary.parties.appellants == ["Mohan Lal"] and summary.parties.respondents == ["State of Rajasthan"]
    assert summary.court is None and summary.date is None and summary.bench == []
    assert summary.precedents == [] and summary.statutes == []
    assert "Phantom" not in summary.reasoning and summary.reasoning.startswith("We hold that")
    claimed = summary.provenance.ungrounded
    assert "court: High Court of Atlantis" in claimed and f"precedents: {PHANTOM}" in claimed
    assert "date: 1 January 2031" in claimed and "bench: Justice Q. Phantasm" in claimed
    assert "statutes: Section 999 of the Phantom Act, 2031" in claimed
    assert f"reasoning: The court followed {PHANTOM}." in claimed


def test_a_summary_whose_parties_are_all_invented_is_not_stored(tmp_path):
    reply = {
        **_summary_reply("A3", invent=True),
        "parties": {"appellants": ["Phantom Trust"], "respondents": ["Imaginary Union"]},
    }
    home = tmp_path / "home"
    with FakeModelServer(respond=lambda body: Step(openai_text(json.dumps(reply)))) as server:
        archive = _model_archive(home, server, summarizer="llm.v1")
        report = archive.summarize([write_judgments(tmp_path / "in", {"A3": JUDGMENTS["A3"]})])
    assert report.summarised == [] and [f.reason for f in report.failed] == ["ungrounded"]
    assert "Phantom Trust" in report.failed[0].message
    assert archive.summary("A3") is None


def test_an_invented_precedent_in_a_model_summary_is_no_licence_for_an_explanation(tmp_path):
    """The probe's chain: a model summary invents a precedent, the guard learnt it from that summary, and a
    hit's reason named it. Now the summary does not hold it, so the reason's sentence is cut and counted."""
    home = tmp_path / "home"
    with FakeModelServer(respond=_summaries_by_id(invent=True)) as server:
        archive = _model_archive(home, server, summarizer="llm.v1")
        assert archive.summarize([write_judgments(tmp_path / "in")]).summarised == sorted(JUDGMENTS)
        archive.build_index()
    reason = f"It needs no corroboration. It follows {PHANTOM}."
    explanation = {
        "judgments": [
            {"id": "A3", "parties": "x", "score": 9, "legal_issue": "Dying declaration to a doctor.", "reason": reason}
        ]
    }
    with FakeModelServer() as server:
        server.add(Step(openai_text(json.dumps(explanation))))
        result = _model_archive(home, server, summarizer="llm.v1", explainer="llm.v1").search(
            DYING_DECLARATION_FACTS, ["Whether a dying declaration needs corroboration?"]
        )
    assert [h.judgment_id for h in result.hits] == ["A3"]
    assert result.hits[0].reason == "It needs no corroboration." and result.dropped_citations == 1


def test_an_offline_summary_is_not_checked(tmp_path):
    """extractive.v1 copies the judgment's text: nothing to locate, nothing recorded."""
    archive = Archive(tmp_path / "home", index=IndexSpec(embedder="hashing.v1"))
    archive.summarize([write_judgments(tmp_path / "in", {"A1": JUDGMENTS["A1"]})])
    assert archive.summary("A1").provenance.ungrounded == []


# ---------------------------------------------------------------- the locator


TEXT = """Ram Kumar and Others v State of U.P.
Supreme Court of India

12 March 1998
The Judgment was delivered by : K. Singh, J.
1. The appellant was convicted under Section 302 read with Section 34 I.P.C. and relies on
Maneka Gandhi vs. Union of India, (1978) 1 SCC 248. The Raj. High Court held otherwise.
"""


@pytest.mark.parametrize(
    "value",
    [
        "Ram Kumar",
        "RAM KUMAR & ORS.",
        "State of Uttar Pradesh",
        "Supreme Court of India",
        "The Supreme Court",
        "Hon'ble Mr. Justice K. Singh",
        "Singh, J.",
        "Rajasthan High Court",
    ],
)
def test_a_name_written_differently_is_located(value):
    assert Locator(TEXT).name(value)


@pytest.mark.parametrize(
    "value", ["Ram Singh Kumar Yadav", "State of Bihar", "High Court of Delhi", "Justice A. Phantasm"]
)
def test_a_name_the_text_does_not_hold_is_not(value):
    assert not Locator(TEXT).name(value)


@pytest.mark.parametrize(
    "value, located",
    [
        ("12 March 1998", True),
        ("March 12, 1998", True),
        ("12.03.1998", True),
        ("1998-03-12", True),
        ("12th March, 1998", True),
        ("13 March 1998", False),
        ("12 March 1999", False),
        ("1 January 2031", False),
    ],
)
def test_a_date_is_the_same_day_in_any_writing(value, located):
    assert Locator(TEXT).date(value) is located


@pytest.mark.parametrize(
    "value, located",
    [
        ("Section 302 of the Indian Penal Code", True),
        ("Section 34 IPC", True),
        ("s. 302 of the Penal Code", True),
        ("Section 304B of the Indian Penal Code", False),
        ("Section 302 of the Code of Criminal Procedure", False),
    ],
)
def test_a_statute_is_its_numbers_and_its_act(value, located):
    assert Locator(TEXT).statute(value) is located


@pytest.mark.parametrize(
    "value, located",
    [
        ("Maneka Gandhi v. Union of India (1978) 1 SCC 248", True),
        ("Maneka Gandhi v. UOI, 1978 (1) SCC 248", True),
        ("Maneka Gandhi", True),
        ("Maneka Gandhi v. Union of India (1979) 2 SCC 999", False),
        ("Indira Gandhi v. Raj Narain", False),
    ],
)
def test_a_precedent_is_its_title_and_its_citation(value, located):
    assert Locator(TEXT).precedent(value) is located


def test_ground_summary_drops_a_party_but_keeps_the_located_ones():
    slots = SummarySlots(
        parties=Parties(appellants=["Ram Kumar", "Phantom Trust"], respondents=["State of U.P."]),
        facts="The appellant was convicted. As held in Ghostly Estate, the sentence stands.",
        final_judgment="Dismissed.",
        statutes=[StatuteRef(name="Section 302 IPC")],
        precedents=[PrecedentRef(name="Maneka Gandhi v. Union of India")],
    )
    grounded, notes = ground_summary("X1", slots, TEXT)
    assert grounded.parties.appellants == ["Ram Kumar"] and grounded.facts == "The appellant was convicted."
    assert [s.name for s in grounded.statutes] == ["Section 302 IPC"] and len(grounded.precedents) == 1
    assert notes == ["parties.appellants: Phantom Trust", "facts: As held in Ghostly Estate, the sentence stands."]
    with pytest.raises(SummarizeError, match="ungrounded"):
        ground_summary("X1", slots.model_copy(update={"facts": "It follows Ghostly Estate, In re."}), TEXT)
