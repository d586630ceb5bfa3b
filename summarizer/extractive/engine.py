"""`extractive.v1`: the deterministic offline summarizer (the default engine).

Every slot is text cut out of the judgment (extract, don't paraphrase: SPEC.md, stage
1), except two labels: `judgment_kind` comes from a fixed vocabulary ("criminal appeal",
"writ petition", ...), and `disposed_in_favour_of` names the winning side as the
judgment names it (a party, else its role word). Multi-passage slots (facts, reasoning)
join verbatim passages with a newline. Same input, same output; no network, no model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aqgr.foundation.errors import SummarizeError
from aqgr.schemas.summary import Arguments, NewPrinciple, Parties, PrecedentRef, StatuteRef, SummarySlots
from aqgr.summarizer.base import JudgmentText, summarizers
from aqgr.summarizer.extractive import citations, issues, keyphrases, principles, sections
from aqgr.summarizer.extractive.document import Document
from aqgr.summarizer.extractive.header import parse_header


@dataclass(frozen=True)
class Limits:
    """Size bounds per slot, in characters (and items per list).

    Chosen so the retrieval slots (parties, case number, facts, issues, reasoning) stay
    near 2,000-4,000 characters, the size the study indexed per judgment (SPEC.md, stage 2).
    """

    facts: int = 1000
    reasoning: int = 1000
    issue: int = 350
    issues: int = 3
    final_judgment: int = 500
    argument: int = 300
    arguments_per_side: int = 2
    reference_text: int = 200  # each statute/precedent principle and application
    statutes: int = 6
    precedents: int = 6
    principle: int = 300
    principles: int = 3
    subjects: int = 10


@summarizers.register("extractive.v1")
@dataclass(frozen=True)
class ExtractiveSummarizer:
    """Cue-phrase and pattern extraction of every slot; see the package docstring."""

    limits: Limits = field(default_factory=Limits)
    name: str = field(default="extractive.v1", init=False)
    version: str = field(default="1.0.0", init=False)
    model: str | None = field(default=None, init=False)

    def summarize(self, judgment: JudgmentText) -> SummarySlots:
        text = judgment.text
        if not any(ch.isalnum() for ch in text):
            raise SummarizeError(
                judgment.judgment_id, "empty", "the judgment has no text to summarise; check the source file"
            )
        return summarize_text(text, self.limits)


def summarize_text(text: str, limits: Limits = Limits()) -> SummarySlots:
    """All slots of one judgment's text."""
    header = parse_header(text)
    doc = Document(text, header.body_start)
    if not doc.sentences:  # everything looked like header: read it all as body
        doc = Document(text, 0)
    own_title = (
        " ".join(header.appellants) + " v " + " ".join(header.respondents)
        if header.appellants and header.respondents
        else ""
    )

    argued, argument_sentences = sections.arguments(doc, cap=limits.arguments_per_side, limit=limits.argument)
    order, order_sentences = sections.final_order(doc, limit=limits.final_judgment)
    issue_list, issue_sentences = issues.issues(doc, cap=limits.issues, limit=limits.issue, exclude=order_sentences)
    used = argument_sentences | order_sentences | issue_sentences
    reasoning = sections.reasoning(doc, limit=limits.reasoning, exclude=used)
    first_argument = min(argument_sentences | issue_sentences, default=None)
    stop = {first_argument} if first_argument is not None else set()
    facts = sections.facts(doc, limit=limits.facts, exclude=used, stop=stop)

    names = {w.lower() for name in header.appellants + header.respondents + header.bench for w in name.split()}
    return SummarySlots(
        court=header.court,
        case_number=header.case_number,
        judgment_kind=header.judgment_kind,
        parties=Parties(appellants=header.appellants, respondents=header.respondents),
        date=header.date,
        bench=header.bench,
        facts=facts,
        arguments=Arguments(appellants=argued.appellants, respondents=argued.respondents),
        issues=issue_list,
        reasoning=reasoning,
        disposed_in_favour_of=sections.disposed_in_favour_of(order, header.appellants, header.respondents, text),
        final_judgment=order,
        statutes=[
            StatuteRef(name=c.name, principle=c.principle, application=c.application)
            for c in citations.statutes(doc, cap=limits.statutes, limit=limits.reference_text)
        ],
        precedents=[
            PrecedentRef(name=c.name, principle=c.principle, application=c.application)
            for c in citations.precedents(doc, own_title=own_title, cap=limits.precedents, limit=limits.reference_text)
        ],
        new_principles=[
            NewPrinciple(principle=p, application=a)
            for p, a in principles.new_principles(doc, cap=limits.principles, limit=limits.principle)
        ],
        subjects=keyphrases.subjects(text[doc.body_start :], cap=limits.subjects, exclude_words=names),
    )
