"""The citation guard: every common form of Indian case citation, known or not, in any case
and spelling; words that only sound legal are left alone; the counts reach the search result."""

from __future__ import annotations

import pytest

from aqgr.archive.home import Archive
from aqgr.llm.client import LLMClient
from aqgr.llm.config import ProviderConfig
from aqgr.llm.fake import FakeProvider
from aqgr.pipeline.citation_guard import CitationGuard, mentions
from aqgr.retrieval.spec import IndexSpec
from aqgr.schemas.summary import Parties, PrecedentRef, Provenance, StructuredSummary, SummarySlots
from tests.aqgr.helpers import DYING_DECLARATION_FACTS


def _summary(
    judgment_id: str, appellants, respondents, *, precedents=(), reasoning="", case_number=None
) -> StructuredSummary:
    slots = SummarySlots(
        case_number=case_number,
        parties=Parties(appellants=list(appellants), respondents=list(respondents)),
        facts="The appellant was convicted of murder on a dying declaration recorded by the doctor.",
        reasoning=reasoning,
        precedents=[PrecedentRef(name=name) for name in precedents],
    )
    return StructuredSummary.from_slots(
        judgment_id, slots, Provenance(engine="test.v1", engine_version="1", source_sha256="0" * 64)
    )


CANDIDATES = [
    _summary(
        "C1",
        ["Ram Kumar"],
        ["State of U.P."],
        case_number="Criminal Appeal No. 12 of 1997",
        precedents=[
            "Maneka Gandhi v. Union of India (1978) 1 SCC 248",
            "In re Arundhati Roy",
            "Vishaka",
            "AIR 1980 SC 898",
        ],
        reasoning="As held in 1995 Supp (2) SCR 10, (2004) 5 SCALE 123 and JT 2003 (2) SC 45, and in 1999 Cri LJ 3456, "
        "2004 Indlaw SC 123, 2021 SCC OnLine SC 5 and 2023 INSC 45, a dying declaration needs no corroboration. "
        "So do ILR 1990 Kar 123, (1990) 2 MLJ 123, [1932] AC 562 and [1990] 1 All ER 123.",
    ),
    _summary("C2", ["Sunita Devi"], ["Union of India"]),
]

# (form, a mention the candidates show, one they do not)
FORMS = [
    ("X v. Y", "Ram Kumar v. State of U.P.", "Gurmeet Singh v. State of Haryana"),
    ("X vs. Y", "Sunita Devi vs. Union of India", "Anita Rani vs. Union of India"),
    ("X vs Y", "Sunita Devi vs Union of India", "Anita Rani vs Union of India"),
    ("X versus Y", "Ram Kumar versus State of Uttar Pradesh", "Mohan Lal versus State of Rajasthan"),
    ("X v/s Y", "Ram Kumar v/s State of UP", "Ram Kumar v/s State of Bihar"),
    ("parties either way round", "State of U.P. v. Ram Kumar", "State of Bihar v. Ram Kumar"),
    ("short and abbreviated parties", "Ram Kumar v. State", "Ram Singh v. State"),
    ("a cited precedent by name", "Maneka Gandhi v. UOI", "Indira Gandhi v. Raj Narain"),
    ("In re", "In re Arundhati Roy", "In re Special Courts Bill"),
    ("In re:", "In Re: Arundhati Roy", "In Re: Presidential Reference"),
    ("the X case", "the Maneka Gandhi case", "the Kesavananda Bharati case"),
    ("X's case", "Vishaka's case", "Bachan Singh's case"),
    ("in the case of X", "the law in the case of Sunita Devi", "the law in the case of Nandini Satpathy"),
    ("SCC", "(1978) 1 SCC 248", "(2020) 1 SCC 1"),
    ("SCC, volume in brackets", "1978 (1) SCC 248", "2020 (1) SCC 1"),
    ("AIR", "AIR 1980 SC 898", "AIR 2020 SC 999"),
    ("SCR supplement", "1995 Supp (2) SCR 10", "1996 Supp (3) SCR 20"),
    ("SCALE", "(2004) 5 SCALE 123", "(2005) 6 SCALE 77"),
    ("JT", "JT 2003 (2) SC 45", "JT 2001 (4) SC 12"),
    ("Cri LJ", "1999 Cri LJ 3456", "2000 Cri LJ 1"),
    ("Indlaw", "2004 Indlaw SC 123", "2010 Indlaw SC 9"),
    ("SCC OnLine", "2021 SCC OnLine SC 5", "2022 SCC OnLine SC 77"),
    ("INSC", "2023 INSC 45", "2023 INSC 46"),
    ("X v.Y, no space", "Ram Kumar v.State of U.P.", "Phantom Trust v.Imaginary Union"),
    ("X vs.Y, no space", "Sunita Devi vs.Union of India", "Phantom Trust vs.Imaginary Union"),
    ("AIR, the court spelt out", "AIR 1980 Supreme Court 898", "AIR 2031 Supreme Court 4242"),
    ("X, In re", "Arundhati Roy, In re", "Ghostly Estate, In re"),
    ("Re X", "Re Arundhati Roy", "Re Ghostly Estate"),
    ("X (supra)", "Maneka Gandhi (supra)", "Phantom Trust (supra)"),
    ("X, supra", "Vishaka, supra", "Phantom Trust, supra"),
    ("as held in X", "the rule as held in Maneka Gandhi", "the rule as held in Phantom Trust"),
    (
        "as ... observed in X",
        "the rule, as this Court observed in Vishaka",
        "the rule, as this Court observed in Phantom Trust",
    ),
    (
        "held in X that",
        "what was held in Vishaka that bail is the rule",
        "what was held in Phantom Trust that bail is the rule",
    ),
    ("ILR", "ILR 1990 Kar 123", "ILR 2031 Kar 999"),
    ("ILR, year in brackets", "I.L.R. (1990) Kar 123", "I.L.R. (2031) 9 Mad 999"),
    ("MLJ", "(1990) 2 MLJ 123", "(2031) 9 MLJ 999"),
    ("AC", "[1932] AC 562", "[2031] AC 999"),
    ("All ER", "[1990] 1 All ER 123", "[2031] 9 All ER 999"),
]


@pytest.fixture(scope="module")
def guard() -> CitationGuard:
    return CitationGuard(CANDIDATES)


@pytest.mark.parametrize("form, known, unknown", FORMS, ids=[f[0] for f in FORMS])
def test_each_form_is_read_kept_when_known_and_dropped_when_not(guard, form, known, unknown):
    for mention in (known, unknown):
        assert mentions(f"It follows {mention}."), f"{form}: {mention!r} not read as a citation"
    assert guard.clean(f"It follows {known}.") == (f"It follows {known}.", 0)
    assert guard.clean(f"It follows {unknown}. It needs no corroboration.") == ("It needs no corroboration.", 1)


@pytest.mark.parametrize(
    "known, unknown",
    [
        ("ram kumar v. state of up", "gurmeet singh v. state of haryana"),
        ("ram v. state of up", "ram v. state of haryana"),
        ("RAM KUMAR V. STATE OF U.P.", "GURMEET SINGH V. STATE OF HARYANA"),
        ("in re arundhati roy", "in re special courts bill"),
        ("the maneka gandhi case", "the kesavananda bharati case"),
        ("air 1980 sc 898", "air 2020 sc 999"),
        ("(1978) 1 scc 248", "(2020) 1 scc 1"),
        ("1999 cri lj 3456", "2000 cri. l.j. 1"),
    ],
)
def test_lower_and_upper_case(guard, known, unknown):
    assert guard.clean(f"the court relied on {known} here.")[1] == 0
    assert guard.clean(f"the court relied on {unknown} here.")[1] == 1


@pytest.mark.parametrize(
    "known, unknown",
    [
        (
            "Ｒａｍ Ｋｕｍａｒ ｖ． Ｓｔａｔｅ ｏｆ Ｕ．Ｐ．",
            "Ｇｕｒｍｅｅｔ Ｓｉｎｇｈ ｖ． Ｓｔａｔｅ ｏｆ Ｈａｒｙａｎａ",
        ),  # full width
        ("Ram Kumar \u0475. State of U.P.", "Gurmeet Singh \u0475. State of Haryana"),  # Cyrillic izhitsa for v
        (
            "R\u0430m Kum\u0430r v. St\u0430te of U.P.",
            "Gurm\u0435\u0435t Singh v. St\u0430te of H\u0430ry\u0430n\u0430",
        ),  # Cyrillic a, e
        ("Ram\u00a0Kumar v.\u00a0State of U.P.", "Gurmeet\u00a0Singh v.\u00a0State of Haryana"),  # non-breaking spaces
        ("Ram Kumar v\u200b. State of U.P.", "Gurmeet Singh v\u200b. State of Haryana"),  # zero-width space
        ("R\u0101m Kum\u0101r v. State of U.P.", "Gurm\u012bt Singh v. State of Hary\u0101na"),  # accents
        ("Vishaka\u2019s case", "Bachan Singh\u2019s case"),  # curly apostrophe
        (
            "\uff081978\uff09 \uff11 \uff33\uff23\uff23 \uff12\uff14\uff18",
            "\uff082020\uff09 \uff11 \uff33\uff23\uff23 \uff11",
        ),  # full-width citation
        (
            "\U0001d411am Kumar v. State of U.P.",
            "\U0001d406urmeet Singh v. State of Haryana",
        ),  # mathematical bold capitals
    ],
)
def test_unicode_look_alikes(guard, known, unknown):
    assert guard.clean(f"It follows {known}.")[1] == 0
    assert guard.clean(f"It follows {unknown}.")[1] == 1


FALSE_POSITIVES = [
    "The appellant was convicted under Section 302 of the Indian Penal Code.",
    "Article 21 of the Constitution guarantees personal liberty.",
    "The State failed to prove the motive, and the respondent did not appear.",
    "In the present case the dying declaration was recorded by a doctor.",
    "This case turns on the instant case's facts and the prosecution case.",
    "The Prosecution case rests on the statement to the doctor.",
    "The appellant's case is that the declaration was tutored.",
    "The murder case was tried by the Sessions Court.",
    "Sessions Case No. 5 of 2001 was committed to the Court of Session.",
    "Criminal Appeal No. 12 of 1997 was heard with Civil Appeal No. 77 of 2000.",
    "Chapter V of the Code of Criminal Procedure and Schedule V to the Act apply.",
    "Part V. The appellant relies on it.",
    "The statement was recorded by Dr. K. V. Rao at the hospital.",
    "It weighs the dying declaration versus the medical evidence.",
    "Section 302 vs. Section 304 of the IPC was argued.",
    "Union of India and the State of Punjab were both heard.",
    "In re-examination PW2 said the deceased could speak.",
    "In respect of the Supreme Court's earlier view, see the same case.",
    "the appellant was convicted under section 302 and the state did not appeal.",
    "in the present case the prosecution case rests on the murder weapon.",
    "The court rejected the appellant v. the State's argument on delay.",
    "In re-examination the doctor said the deceased was conscious.",
    "The AIR conditioning of the ward was not working in 2001.",
    "The hospital had AIR 2 units and a ventilator.",
    "See supra note 4 and the authorities cited supra.",
    "The judgment (supra) and the Land Acquisition Act (supra) do not help the appellant.",
    "Section 302 IPC (supra) and Article 21 (supra) were argued.",
    "Re: the bail application of the second accused.",
    "The Re-trial was ordered by the High Court.",
    "The accused was held in Tihar Jail for two years.",
    "This is as held in the present case by the Sessions Court.",
    "As laid down in the Constitution and as held in Section 302 of the Code, life is protected.",
    "As this Court held in its earlier judgment, the declaration suffices.",
    "The witness was held in custody that night.",
    "As held in the Kerala High Court, the delay was condoned.",
    "The English rule in AC circuits does not apply; the 1990 AC unit failed.",
    "All ER staff and the MLJ editor were examined.",
]


@pytest.mark.parametrize("sentence", FALSE_POSITIVES)
def test_ordinary_legal_words_are_not_citations(guard, sentence):
    assert mentions(sentence, guard.vocabulary) == []
    assert guard.clean(sentence) == (sentence, 0)


def test_each_sentence_citing_an_unknown_case_is_removed_and_counted_once(guard):
    text = (
        "Ram Kumar v. State of U.P. applies. It follows Gurmeet Singh v. State of Haryana, AIR 2020 SC 999. "
        "The Kesavananda Bharati case agrees. A dying declaration needs no corroboration."
    )
    assert guard.clean(text) == ("Ram Kumar v. State of U.P. applies. A dying declaration needs no corroboration.", 2)
    assert [m.form for m in guard.unknown("It follows Gurmeet Singh v. State of Haryana, AIR 2020 SC 999.")] == [
        "report",
        "name",
    ]


def test_a_known_name_with_an_invented_citation_is_dropped(guard):
    assert guard.clean("It follows Maneka Gandhi v. Union of India (1978) 1 SCC 248.")[1] == 0
    assert guard.clean("It follows Maneka Gandhi v. Union of India (1979) 2 SCC 999.")[1] == 1


# ---------------------------------------------------------------- through a search


def test_dropped_citations_reach_the_search_result(archive_dir):
    questions = {
        "questions": [{"question": "Whether a dying declaration needs corroboration?", "relevance": 9, "source": None}]
    }
    reason = (
        "It holds that a dying declaration needs no corroboration. It follows Ram Kumar v. State of Punjab. "
        "It relies on (2020) 1 SCC 1. So does in re special courts bill. The Kesavananda Bharati case is cited. "
        "It applies ram v. state of haryana. It follows Ｇｕｒｍｅｅｔ Ｓｉｎｇｈ ｖ． Ｓｔａｔｅ."
    )
    explanation = {
        "judgments": [
            {
                "id": "A3",
                "parties": "x",
                "score": 9,
                "legal_issue": "Sole basis of conviction; see AIR 2020 SC 999.",
                "reason": reason,
            },
            {
                "id": "A1",
                "parties": "x",
                "score": 8,
                "legal_issue": "Dying declaration to a magistrate.",
                "reason": "It relies on Mohan Lal v. State of Rajasthan.",
            },
        ]
    }
    provider = FakeProvider([questions, explanation])
    client = LLMClient(provider, config=ProviderConfig(provider="fake.v1", model="scripted"), sleep=lambda s: None)
    archive = Archive(
        archive_dir,
        llm=client,
        summarizer="extractive.v1",
        question_generator="llm.v1",
        explainer="llm.v1",
        index=IndexSpec(embedder="hashing.v1"),
    )
    result = archive.search(DYING_DECLARATION_FACTS)
    assert [h.judgment_id for h in result.hits] == ["A3", "A1"]
    a3, a1 = result.hits
    assert (
        a3.reason
        == "It holds that a dying declaration needs no corroboration. It follows Ram Kumar v. State of Punjab."
    )
    assert a3.legal_issue.startswith("(removed")
    assert a1.reason == "It relies on Mohan Lal v. State of Rajasthan."  # another candidate of the closed list
    assert result.dropped_citations == 6  # five sentences of A3's reason, its legal issue
    assert result.dropped_not_in_archive == 0
