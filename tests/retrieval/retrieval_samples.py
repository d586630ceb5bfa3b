"""Tiny structured summaries for the retrieval tests (written here, not read from data)."""

from __future__ import annotations

from aqgr.schemas.summary import (
    NewPrinciple,
    Parties,
    PrecedentRef,
    Provenance,
    StatuteRef,
    StructuredSummary,
    SummarySlots,
)

PROVENANCE = Provenance(engine="test.v1", engine_version="1", source_sha256="0" * 64)


def summary(judgment_id: str, **slots) -> StructuredSummary:
    return StructuredSummary.from_slots(judgment_id, SummarySlots(**slots), PROVENANCE)


CORPUS = [
    summary(
        "C1",
        parties=Parties(appellants=["Ram Singh"], respondents=["State of Punjab"]),
        case_number="Criminal Appeal No. 12 of 1998",
        facts="The wife died of burns within seven years of marriage; the husband demanded dowry and harassed her.",
        issues=["Whether the presumption under Section 113-B of the Evidence Act applies to a dowry death."],
        reasoning="Cruelty soon before death for dowry was proved; Section 304-B IPC is attracted.",
        statutes=[StatuteRef(name="Section 304B IPC", principle="dowry death", application="conviction upheld")],
        precedents=[PrecedentRef(name="Kans Raj v. State of Punjab", principle="soon before death")],
    ),
    summary(
        "C2",
        parties=Parties(appellants=["Union of India"], respondents=["Mohan Lal"]),
        case_number="Civil Appeal No. 3 of 2001",
        facts="Land was acquired for a public purpose and the owner claimed higher compensation.",
        issues=["Whether market value is to be assessed on the date of the notification."],
        reasoning="Compensation under the Land Acquisition Act is fixed on the market value at notification.",
        new_principles=[NewPrinciple(principle="Sale deeds of small plots need a deduction", application="40% cut")],
    ),
    summary(
        "C3",
        parties=Parties(appellants=["Abdul Rashid"], respondents=["State of Kerala"]),
        facts="The accused stabbed the deceased during a sudden quarrel; eye witnesses saw the incident.",
        issues=["Whether the offence falls under Section 302 or Section 304 Part II IPC."],
        reasoning="There was no premeditation; sudden fight exception applies; conviction altered to 304 Part II.",
    ),
    summary(
        "C4",
        parties=Parties(appellants=["Commissioner of Income Tax"], respondents=["Tata Steel"]),
        facts="The assessee claimed a deduction for interest paid on borrowed capital.",
        issues=["Whether interest on borrowed capital is deductible as a revenue expense."],
        reasoning="Interest on capital borrowed for business is an allowable deduction.",
    ),
    summary(
        "C5",
        parties=Parties(appellants=["Sunita"], respondents=["State of Haryana"]),
        facts="The bride was found dead in the matrimonial home; her parents alleged dowry harassment by the in-laws.",
        issues=["Whether the in-laws can be convicted of dowry death without evidence of cruelty."],
        reasoning="Harassment for dowry soon before her death was not proved against the in-laws; acquitted.",
    ),
]


class Counting:
    """Wraps an embedder and counts the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.calls = inner, inner.name, inner.dim, []

    @property
    def fingerprint(self):
        return self.inner.fingerprint

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed(texts)


# A tokenised corpus for the BM25 tests (one empty document: rank-bm25 handles it too).
TOKEN_CORPUS = [
    "dowry death wife burns husband cruelty dowry".split(),
    "land acquisition compensation market value".split(),
    "murder sudden quarrel 302 304 knife".split(),
    "dowry harassment in-laws acquitted".split(),
    "income tax deduction interest borrowed capital".split(),
    "husband wife divorce cruelty maintenance".split(),
    [],
]
