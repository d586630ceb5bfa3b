"""extractive.v1: golden slots on tiny judgments, limits, speed, determinism, verbatim text."""

from __future__ import annotations

import time

import pytest

from aqgr.foundation.errors import SummarizeError
from aqgr.schemas.summary import Provenance, StructuredSummary
from aqgr.schemas.validation import validate_summary
from aqgr.summarizer.base import JudgmentText, summarizers

JUDGMENT = """Ram Kumar and Others v State of Rajasthan
Supreme Court of India

12 March 2004
Criminal Appeal No. 615 of 2001
The Judgment was delivered by : A. B. Sharma, J.
1. The appellants were convicted by the Sessions Judge under Section 302 of the Indian Penal Code, 1860 for the murder of one Mohan Lal. The High Court confirmed the conviction and the sentence of imprisonment for life. Hence this appeal by special leave.
2. The prosecution case is that on 4 June 1998 the deceased was attacked with lathis near the village well over a dispute about land. Two eye witnesses, PW 2 and PW 3, deposed about the occurrence.
3. Learned counsel for the appellants contended that the two eye witnesses are related to the deceased and their evidence could not be relied upon without corroboration.
4. Learned counsel for the State submitted that the evidence of the eye witnesses is consistent and is corroborated by the medical evidence.
5. The question for consideration is whether the evidence of related witnesses can be the sole basis of a conviction under Section 302 of the Indian Penal Code.
6. It is well settled that the evidence of a related witness cannot be discarded merely on the ground of relationship. This Court in Dalip Singh v. State of Punjab, AIR 1953 SC 364 held that a close relative would be the last person to screen the real culprit. The principle in Dalip Singh v. State of Punjab applies squarely to the present case.
7. The right to life under Art. 14 of the Constitution was also invoked, and Sections 3 and 4 of the Evidence Amendment Act, 1950 were referred to.
8. In our view, the evidence of PW 2 and PW 3 is reliable and the High Court rightly confirmed the conviction. We hold that the prosecution has proved its case beyond reasonable doubt.
9. The appeal is accordingly dismissed. No order as to costs.
"""


def _summarize(text: str, judgment_id: str = "J1"):
    engine = summarizers.create("extractive.v1")
    return engine.summarize(JudgmentText(judgment_id, text, f"{judgment_id}.txt", "0" * 64))


def _normal(text: str) -> str:
    return " ".join(text.split())


def _slot_strings(slots) -> list[str]:
    """Every text that must be verbatim (judgment_kind is a label; see engine docstring)."""
    strings = [slots.court, slots.case_number, slots.date, slots.final_judgment, slots.disposed_in_favour_of]
    strings += slots.parties.appellants + slots.parties.respondents + slots.bench + slots.issues + slots.subjects
    strings += slots.arguments.appellants + slots.arguments.respondents
    strings += slots.facts.split("\n") + slots.reasoning.split("\n")
    for ref in slots.statutes + slots.precedents:
        strings += [ref.name, ref.principle, ref.application]
    for principle in slots.new_principles:
        strings += [principle.principle, principle.application]
    return [s for s in strings if s]


def test_engine_is_registered_with_its_identity():
    engine = summarizers.create("extractive.v1")
    assert (engine.name, engine.model) == ("extractive.v1", None) and engine.version
    assert "extractive.v1" in summarizers.names()


def test_header_slots():
    s = _summarize(JUDGMENT)
    assert s.court == "Supreme Court of India"
    assert s.parties.appellants == ["Ram Kumar and Others"]
    assert s.parties.respondents == ["State of Rajasthan"]
    assert s.date == "12 March 2004"
    assert s.case_number == "Criminal Appeal No. 615 of 2001"
    assert s.judgment_kind == "criminal appeal"
    assert s.bench == ["A. B. Sharma"]


def test_body_slots():
    s = _summarize(JUDGMENT)
    assert s.facts.startswith("1. The appellants were convicted by the Sessions Judge")
    assert "attacked with lathis" in s.facts
    assert "Learned counsel" not in s.facts
    assert s.arguments.appellants == [
        "3. Learned counsel for the appellants contended that the two eye witnesses are related to the deceased and their evidence could not be relied upon without corroboration."
    ]
    assert s.arguments.respondents[0].startswith("4. Learned counsel for the State submitted")
    assert s.issues == [
        "5. The question for consideration is whether the evidence of related witnesses can be the sole basis of a conviction under Section 302 of the Indian Penal Code."
    ]
    assert "In our view, the evidence of PW 2 and PW 3 is reliable" in s.reasoning
    assert s.final_judgment == "9. The appeal is accordingly dismissed. No order as to costs."
    assert s.disposed_in_favour_of == "State of Rajasthan"


def test_citations_and_principles():
    s = _summarize(JUDGMENT)
    statutes = {ref.name: ref for ref in s.statutes}
    assert "Section 302 of the Indian Penal Code, 1860" in statutes
    assert "Art. 14 of the Constitution" in statutes
    assert "Sections 3 and 4 of the Evidence Amendment Act, 1950" in statutes
    assert "Sessions Judge under Section 302" in statutes["Section 302 of the Indian Penal Code, 1860"].principle
    precedents = {ref.name: ref for ref in s.precedents}
    assert "Dalip Singh v. State of Punjab, AIR 1953 SC 364" in precedents
    dalip = precedents["Dalip Singh v. State of Punjab, AIR 1953 SC 364"]
    assert "last person to screen the real culprit" in dalip.principle
    assert "applies squarely to the present case" in dalip.application
    assert any("It is well settled that the evidence of a related witness" in p.principle for p in s.new_principles)
    assert s.subjects and len(s.subjects) <= 10


def test_other_citation_forms():
    text = (
        "The accused was charged u/s. 23 of the Foreign Exchange Act. Reliance was placed on Kesavananda "
        "Bharati vs. State of Kerala, (1973) 4 SCC 225 and on [1955] 1 SCR 1045, and on 1999 Cri LJ 1234.\n"
        "The appeal is allowed."
    )
    s = _summarize(text)
    assert "u/s. 23 of the Foreign Exchange Act" in [r.name for r in s.statutes]
    names = [r.name for r in s.precedents]
    assert "Kesavananda Bharati vs. State of Kerala, (1973) 4 SCC 225" in names
    assert "[1955] 1 SCR 1045" in names and "1999 Cri LJ 1234" in names
    assert s.disposed_in_favour_of == "appellant" or s.disposed_in_favour_of is None


def test_every_slot_is_verbatim_text_of_the_judgment():
    source = _normal(JUDGMENT)
    for text in _slot_strings(_summarize(JUDGMENT)):
        assert _normal(text) in source, text


def test_summary_validates_against_the_json_schema():
    engine = summarizers.create("extractive.v1")
    slots = _summarize(JUDGMENT)
    provenance = Provenance(engine=engine.name, engine_version=engine.version, source_sha256="0" * 64)
    stored = validate_summary(StructuredSummary.from_slots("J1", slots, provenance))
    assert stored.slots() == slots


def test_deterministic():
    assert _summarize(JUDGMENT).model_dump_json() == _summarize(JUDGMENT).model_dump_json()


def test_text_without_header_still_summarised():
    body = JUDGMENT.split("The Judgment was delivered by : A. B. Sharma, J.\n", 1)[1]
    s = _summarize(body)
    assert s.court is None and s.case_number is None and s.date is None
    assert s.parties.appellants == [] and s.bench == []
    assert s.facts and s.issues and s.final_judgment
    validate_summary(
        StructuredSummary.from_slots(
            "J2", s, Provenance(engine="extractive.v1", engine_version="x", source_sha256="0" * 64)
        )
    )


@pytest.mark.parametrize("text", ["", "   \n\t\n  ", "\n\n...\n--"])
def test_text_without_content_is_an_empty_error(text):
    with pytest.raises(SummarizeError) as caught:
        _summarize(text, "E1")
    assert caught.value.reason == "empty" and caught.value.judgment_id == "E1"


def test_odd_texts_never_raise():
    for text in ["x", "v", "1.", "Appeal dismissed.", "A v B", "\n".join(["word"] * 50), "(a" * 5000, "a." * 3000]:
        _summarize(text)


def test_slot_sizes_are_bounded():
    paragraph = (
        "{n}. The learned counsel for the appellant contended that the question for consideration is whether "
        "Section {n} of the Indian Penal Code applies, and in our view it is well settled that it does, as held "
        "in Ram v. State of Bihar, (1990) {n} SCC {n}. "
    )
    text = "A v B\nHigh Court of Testing\n\n" + "\n".join(paragraph.format(n=i) * 3 for i in range(1, 400))
    s = _summarize(text)
    assert len(s.facts) <= 1000 and len(s.reasoning) <= 1000 and len(s.final_judgment) <= 500
    assert len(s.issues) <= 3 and len(s.statutes) <= 6 and len(s.precedents) <= 6 and len(s.new_principles) <= 3
    assert len(s.model_dump_json()) < 12000


def test_600k_character_judgment_is_fast():
    body = JUDGMENT.split("\n", 6)[6]
    text = JUDGMENT.split("1. The appellants", 1)[0] + (body * (600_000 // len(body) + 1))[:600_000]
    started = time.perf_counter()
    s = _summarize(text)
    elapsed = time.perf_counter() - started
    assert s.parties.appellants == ["Ram Kumar and Others"]
    assert elapsed < 20.0, (
        f"{elapsed:.2f}s for 600,000 characters (about 1 s expected; far more means a regex backtracks)"
    )


def test_pathological_input_is_fast():
    text = "Whereas " + "A. " * 50_000 + "v. " + "Section 1, " * 20_000 + "(" * 20_000
    started = time.perf_counter()
    _summarize(text)
    assert time.perf_counter() - started < 20.0  # about 1 s expected: a backtracking regex takes minutes
